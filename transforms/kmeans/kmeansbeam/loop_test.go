package kmeansbeam

import (
	"context"
	"reflect"
	"testing"
)

// The one step takes the state and the chunks as its main input, grouped
// under one key, and no side input: Prism spins about a core while a
// bundle of a stage with side inputs runs (see loopFn).
func TestLoopStepHasNoSideInputs(t *testing.T) {
	got := reflect.TypeOf((*loopFn).ProcessElement)
	want := reflect.TypeOf(func(*loopFn, context.Context, int, func(*state) bool, func(*chunk) bool) (Codebook, error) {
		return Codebook{}, nil
	})
	if got != want {
		t.Errorf("loopFn.ProcessElement is %v, want %v: a keyed group of the state's parts and the chunks", got, want)
	}
}
