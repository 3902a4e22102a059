package report

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/run"
)

// LoadEarlier takes a missing manifest for a run without per-query
// scores, lists the query-scores files of one that has them, and returns
// any other error reading the manifest: a run whose manifest cannot be
// read is not one without scores.
func TestLoadEarlierManifest(t *testing.T) {
	ctx := context.Background()
	js, err := Report{Methods: []formats.ReportRow{{Method: "tfidf", Split: "held-out", MAP: 0.5}}}.JSON()
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"query-scores-00001-of-00002.parquet", run.ReportName, "query-scores-00000-of-00002.parquet"}
	sizes := map[string]int64{}
	for _, n := range names {
		sizes[n] = 1
	}
	manifest, err := run.NewManifest("job", time.Unix(0, 0), sizes, &run.Settings{}).Encode()
	if err != nil {
		t.Fatal(err)
	}
	hiccup := errors.New("503 service unavailable")
	dir := func(manifestErr error) run.Dir {
		return run.Dir{Path: "gs://b/runs/1", Read: func(_ context.Context, name string) ([]byte, error) {
			switch {
			case name == run.ReportName:
				return js, nil
			case name == run.ManifestName && manifestErr == nil:
				return manifest, nil
			case name == run.ManifestName:
				return nil, fmt.Errorf("read %s: %w", name, manifestErr)
			}
			return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
		}}
	}

	e, err := LoadEarlier(ctx, dir(nil))
	if err != nil || !reflect.DeepEqual(e.QueryScores, []string{names[2], names[0]}) || e.Unpaired != "" || len(e.Methods) != 1 {
		t.Errorf("a run with per-query scores: %+v, %v; want its two files in order", e, err)
	}
	e, err = LoadEarlier(ctx, dir(fs.ErrNotExist))
	if err != nil || len(e.QueryScores) != 0 || !strings.Contains(e.Unpaired, "no per-query scores") || len(e.Methods) != 1 {
		t.Errorf("a run made before manifests: %+v, %v; want its rows, no files, and why", e, err)
	}
	if e, err = LoadEarlier(ctx, dir(hiccup)); !errors.Is(err, hiccup) || !strings.Contains(err.Error(), "gs://b/runs/1") {
		t.Errorf("a manifest that cannot be read: %+v, %v; want the error, naming the run", e, err)
	}
}
