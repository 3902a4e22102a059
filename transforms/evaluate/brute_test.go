package evaluate

import (
	"slices"
	"testing"

	"github.com/bowline/bowline/learners"
)

func TestBruteRank(t *testing.T) {
	items := [][]float64{{0, 0}, {3, 0}, {1, 1}, {-1, 0.5}, {1, 1}}
	for _, tc := range []struct {
		metric  learners.Metric
		q       []float64
		exclude int
		want    []int
	}{
		// Squared distances from (1,0): 1, 4, 1, 4.25, 1; ties by index.
		{learners.Euclidean, []float64{1, 0}, -1, []int{0, 2, 4, 1, 3}},
		{learners.Euclidean, []float64{1, 0}, 2, []int{0, 4, 1, 3}},
		// Dot products with (1,0): 0, 3, 1, −1, 1.
		{learners.Dot, []float64{1, 0}, -1, []int{1, 2, 4, 0, 3}},
		// Codes (bit j set when coordinate j ≥ 0): item 3 and the query
		// (−1, 2) have bit 0 clear and bit 1 set; the other items have both
		// set. So item 3 is at distance 0 and the rest, in index order, at 1.
		{learners.Hamming, []float64{-1, 2}, -1, []int{3, 0, 1, 2, 4}},
		{learners.Hamming, []float64{-1, 2}, 3, []int{0, 1, 2, 4}},
	} {
		b, err := NewBrute(tc.metric, items)
		if err != nil {
			t.Fatal(err)
		}
		var sc BruteScratch
		got := b.Rank(nil, tc.q, tc.exclude, &sc)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v q=%v exclude %d: ranking %v, want %v", tc.metric, tc.q, tc.exclude, got, tc.want)
		}
	}
	if _, err := NewBrute(learners.Euclidean, [][]float64{{1, 2}, {1}}); err == nil {
		t.Error("NewBrute accepted embeddings of different lengths")
	}
}
