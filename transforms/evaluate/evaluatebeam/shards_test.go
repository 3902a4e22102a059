package evaluatebeam

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/global"
	"github.com/bowline/bowline/transforms/internal/onekeybeam"
	"github.com/bowline/bowline/transforms/split"
)

// A query shard ranks for seconds: its step takes what it reads paired
// with it, and no side input (onekeybeam.SideInputs).
func TestShardsTakeNoSideInputs(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	parts, model := beam.Create(s, formats.Part{}), beam.Create(s, learners.Model{})
	EvaluateParts(s, parts, beam.Create(s, Queries{}), beam.Create(s, Labels{}), model, 8, evaluate.Options{}, 1)
	EvaluateDenseParts(s, parts, beam.Create(s, global.Moments{}), beam.Create(s, split.Cut{}), model, evaluate.Options{}, 1)
	for _, fn := range []any{(*shardFn)(nil), (*denseShardFn)(nil)} {
		for _, n := range onekeybeam.SideInputs(t, p, fn) {
			if n != 0 {
				t.Errorf("%T takes %d side inputs, want none", fn, n)
			}
		}
	}
}
