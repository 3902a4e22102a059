package tunebeam

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/evaluate/evaluatebeam"
	"github.com/bowline/bowline/transforms/internal/testkitbeam"
	"github.com/bowline/bowline/transforms/split"
	"github.com/bowline/bowline/transforms/train"
	"github.com/bowline/bowline/transforms/triplets"
	"github.com/bowline/bowline/transforms/tune"
)

// A validation shard ranks for seconds: its step, the baseline's and each
// grid point's, takes what it reads paired with it, and no side input
// (testkitbeam.SideInputs).
func TestValidationTakesNoSideInputs(t *testing.T) {
	opt := train.ShardOptions{Learner: "solis-ada", Dim: 4, Shards: 1, Rounds: 1}
	grid := []tune.Point{{Learner: "solis-ada", Name: "solis-ada/a", Opt: opt}, {Learner: "solis-ada", Name: "solis-ada/b", Opt: opt}}
	p, s := beam.NewPipelineWithRoot()
	var final, states []beam.PCollection
	for range grid {
		final = append(final, beam.Create(s, learners.Model{}))
		states = append(states, beam.Create(s, train.RoundState{}))
	}
	Tune(s, beam.Create(s, formats.Part{}), beam.Create(s, evaluatebeam.Labels{}), beam.Create(s, split.Cut{}), beam.Impulse(s), 4,
		Options{}, triplets.Options{PerQuery: 1}, grid, final, states)
	got := testkitbeam.SideInputs(t, p, (*validateFn)(nil))
	if len(got) != len(grid)+1 {
		t.Fatalf("%d validation steps, want %d: the grid's and the baseline's", len(got), len(grid)+1)
	}
	for i, n := range got {
		if n != 0 {
			t.Errorf("validation step %d takes %d side inputs, want none", i, n)
		}
	}
}
