package kmeansbeam

import (
	"context"
	"reflect"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/internal/testkitbeam"
)

// The steps whose bundles run for seconds — the one step of Lloyd's
// iterations, the seeding of a sample drawn in parts, the reading of the
// features parts — take what they need as their main input, grouped or
// paired (onekeybeam), and no side input: Prism spins about a core while a
// bundle of a stage with side inputs runs (see loopFn).
func TestLongStepsHaveNoSideInputs(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"loopFn", (*loopFn).ProcessElement, func(*loopFn, context.Context, int, func(*state) bool, func(*chunk) bool) (Codebook, error) {
			return Codebook{}, nil
		}},
		{"initPartsFn", (*initPartsFn).ProcessElement, func(*initPartsFn, context.Context, int, func(*sample) bool, func(*threshold) bool, func(state)) error {
			return nil
		}},
		{"partPriosFn", (*partPriosFn).ProcessElement, func(*partPriosFn, context.Context, formats.Part, int64) (prios, error) { return prios{}, nil }},
		{"partChunksFn", (*partChunksFn).ProcessElement, func(*partChunksFn, context.Context, formats.Part, threshold, func(chunk), func(sample)) error {
			return nil
		}},
		{"samplePartFn", (*samplePartFn).ProcessElement, func(*samplePartFn, context.Context, formats.Part, int64) (sample, error) { return sample{}, nil }},
	} {
		if got, want := reflect.TypeOf(tc.got), reflect.TypeOf(tc.want); got != want {
			t.Errorf("%s.ProcessElement is %v, want %v", tc.name, got, want)
		}
	}
}

// Lloyd's iterations as the graph's stages assign each chunk paired with
// its iteration's state, whose centroids are in a file (writeStateFn): no
// assigning step takes a side input, for the same reason.
func TestAssignTakesNoSideInputs(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	VocabularyOfParts(s, beam.Create(s, formats.Part{}), Options{K: 30, Sample: 1000, MaxIter: 3, Chunks: 4, OneStepWork: -1, Approx: true})
	got := testkitbeam.SideInputs(t, p, (*assignFn)(nil))
	if len(got) != 4 {
		t.Errorf("%d assigning steps, want 4 (iterations 0 to MaxIter)", len(got))
	}
	for i, n := range got {
		if n != 0 {
			t.Errorf("the assigning of iteration %d takes %d side inputs, want none", i, n)
		}
	}
}
