package index

import (
	"testing"

	"github.com/bowline/bowline/learners/sparse"
)

// Matched counts the documents of positive score, whatever k, the query's
// own left out.
func TestMatched(t *testing.T) {
	vecs := []sparse.Vector{
		{Idx: []uint32{0}, Val: []float32{1}},
		{Idx: []uint32{0, 1}, Val: []float32{1, 1}},
		{Idx: []uint32{1}, Val: []float32{1}},
		{Idx: []uint32{2}, Val: []float32{1}},
		{Idx: []uint32{3}, Val: []float32{1}},
	}
	ix, err := Build([]string{"a", "b", "c", "d", "e"}, vecs, []float32{1, 1, 1, -1}, 4)
	if err != nil {
		t.Fatal(err)
	}
	s := ix.NewSearcher()
	q := sparse.Vector{Idx: []uint32{0, 1, 3}, Val: []float32{1, 1, 1}}
	for _, tc := range []struct{ k, exclude, want int }{{1, -1, 3}, {10, -1, 3}, {0, -1, 3}, {2, 1, 2}, {2, 4, 3}} {
		if s.Search(q, tc.k, tc.exclude); s.Matched() != tc.want {
			t.Errorf("k %d, exclude %d: %d matched, want %d", tc.k, tc.exclude, s.Matched(), tc.want)
		}
	}
}
