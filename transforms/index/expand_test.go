package index

import (
	"math"
	"slices"
	"testing"

	"github.com/bowline/bowline/learners/sparse"
)

// TestExpandQuery: without bags the query is returned as it is; with
// bags it is the sum of the query and the bags, scaled to unit length.
func TestExpandQuery(t *testing.T) {
	q := sparse.Vector{Idx: []uint32{1, 4}, Val: []float32{3, 1}}
	if got := ExpandQuery(q, nil); !slices.Equal(got.Idx, q.Idx) || !slices.Equal(got.Val, q.Val) {
		t.Fatalf("no bags: %+v, want the query %+v", got, q)
	}
	bags := []sparse.Vector{
		{Idx: []uint32{0, 4}, Val: []float32{1, 1}},
		{Idx: []uint32{4, 9}, Val: []float32{2, 4}},
	}
	got := ExpandQuery(q, bags)
	// Sum: word 0: 1, word 1: 3, word 4: 1+1+2 = 4, word 9: 4; ‖·‖ = √42.
	wantIdx := []uint32{0, 1, 4, 9}
	wantSum := []float64{1, 3, 4, 4}
	if !slices.Equal(got.Idx, wantIdx) {
		t.Fatalf("words %v, want %v", got.Idx, wantIdx)
	}
	for k, s := range wantSum {
		if want := s / math.Sqrt(42); math.Abs(float64(got.Val[k])-want) > 1e-6 {
			t.Errorf("word %d: %v, want %v", got.Idx[k], got.Val[k], want)
		}
	}
	if q.Val[0] != 3 || bags[1].Val[0] != 2 {
		t.Errorf("the query or a bag changed: %+v, %+v", q, bags)
	}
}
