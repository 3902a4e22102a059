package kmeansbeam

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/bowline/bowline/formats"
)

func features(n int, r *rand.Rand) []formats.Features {
	var out []formats.Features
	for i := 0; i < n; i++ {
		f := formats.Features{ImageID: fmt.Sprintf("img%03d", i)}
		for k := r.IntN(40); k > 0; k-- {
			d := make([]byte, formats.DescriptorSize)
			for j := range d {
				d[j] = byte(r.IntN(256))
			}
			f.Descriptors = append(f.Descriptors, d)
		}
		out = append(out, f)
	}
	return out
}

// The bottom-k sample must not depend on how the runner splits and merges
// the input, or the vocabulary would change with the number of workers.
func TestSampleIndependentOfGrouping(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	feats := features(60, r)
	fn := &sampleFn{Max: 300, Seed: 5}

	one := fn.CreateAccumulator()
	for _, f := range feats {
		one = fn.AddInput(one, f)
	}
	want := fn.ExtractOutput(one)
	if len(want.Prio) != 300 {
		t.Fatalf("sample has %d descriptors, want 300", len(want.Prio))
	}
	for trial := 0; trial < 5; trial++ {
		perm := r.Perm(len(feats))
		parts := make([]sample, 1+r.IntN(7))
		for i := range parts {
			parts[i] = fn.CreateAccumulator()
		}
		for _, i := range perm {
			p := r.IntN(len(parts))
			parts[p] = fn.AddInput(parts[p], feats[i])
		}
		merged := parts[0]
		for _, p := range parts[1:] {
			merged = fn.MergeAccumulators(p, merged)
		}
		if got := fn.ExtractOutput(merged); !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d: %d parts merged in another order gave another sample", trial, len(parts))
		}
	}
	fn6 := &sampleFn{Max: 300, Seed: 6}
	acc := fn6.CreateAccumulator()
	for _, f := range feats {
		acc = fn6.AddInput(acc, f)
	}
	other := fn6.ExtractOutput(acc)
	if reflect.DeepEqual(other.Prio, want.Prio) {
		t.Fatal("seed does not change the priorities")
	}
}
