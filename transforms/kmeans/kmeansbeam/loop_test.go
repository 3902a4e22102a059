package kmeansbeam

import (
	"context"
	"reflect"
	"testing"

	"github.com/bowline/bowline/formats"
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
