package bowline

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bowline/bowline/transforms/ingest"
	"github.com/bowline/bowline/transforms/setting"
	"github.com/bowline/bowline/transforms/tune"
)

// TestOutputMayNotHoldThePrevious: an output directory that holds the
// previous run is refused however it is spelt, before anything is
// created (ingestbeam.CheckInput checks the input itself).
func TestOutputMayNotHoldThePrevious(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	for previous, refused := range map[string]bool{filepath.Join(out, "."): true, out + "/": true, filepath.Join(out, "runs", "a"): true, filepath.Join(dir, "prev"): false} {
		c := DefaultConfig()
		c.Input, c.Output, c.Previous = shapes, out, previous
		err := c.Validate()
		var inOut *ingest.InputInOutputError
		if got := errors.As(err, &inOut); got != refused || refused && !strings.Contains(err.Error(), "holds the previous run (--previous)") {
			t.Errorf("previous %s: error %v, want refused %v", previous, err, refused)
		}
	}
}

// TestValidateUsesTheOptions: Config.Validate refuses each setting out of
// its bounds with the error of the options that own the bound, which the
// command line turns into its flag's one line (cmdline.Option).
func TestValidateUsesTheOptions(t *testing.T) {
	for name, set := range map[string]func(*Config){
		"kmeansbeam.K":           func(c *Config) { c.Vocab.K = 1 },
		"kmeansbeam.Sample":      func(c *Config) { c.Vocab.Sample = c.Vocab.K - 1 },
		"kmeans.Drift.Max":       func(c *Config) { c.MaxDrift = -0.5 },
		"ingest.Columns.Label":   func(c *Config) { c.Columns.Label = "" },
		"evaluate.Depth":         func(c *Config) { c.Learning.Eval.Depth = -1 },
		"evaluate.Rerank":        func(c *Config) { c.Learning.Eval.Rerank = -1 },
		"evaluate.QueryFraction": func(c *Config) { c.Learning.Eval.QueryFraction = 1 },
		"tune.Share":             func(c *Config) { c.Learning.Tune = tune.Options{Tune: true, Share: 1} },
	} {
		c := DefaultConfig()
		c.Input, c.Output = shapes, t.TempDir()
		set(&c)
		var e *setting.Error
		if err := c.Validate(); !errors.As(err, &e) || e.Name() != name {
			t.Errorf("%s out of bounds: %v, want the options' setting error", name, err)
		}
	}
}
