package formats

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// A codebook's rows come in any order; Centroids lays them out by id and
// refuses a gap, a repeated id, a centroid of another length and a
// non-finite value.
func TestCentroids(t *testing.T) {
	got, err := Centroids([]Word{{WordID: 1, Centroid: []float32{3, 4}}, {WordID: 0, Centroid: []float32{1, 2}}}, 2)
	if err != nil || !slices.Equal(got, []float32{1, 2, 3, 4}) {
		t.Errorf("Centroids = %v, %v; want [1 2 3 4]", got, err)
	}
	for _, tc := range []struct {
		name  string
		words []Word
		want  string
	}{
		{"none", nil, "no words"},
		{"gap", []Word{{WordID: 0, Centroid: []float32{1, 2}}, {WordID: 2, Centroid: []float32{1, 2}}}, "has id 2"},
		{"twice", []Word{{WordID: 0, Centroid: []float32{1, 2}}, {WordID: 0, Centroid: []float32{1, 2}}}, "word 1 of 2 has id 0"},
		{"length", []Word{{WordID: 0, Centroid: []float32{1}}}, "1 values"},
		{"NaN", []Word{{WordID: 0, Centroid: []float32{1, float32(math.NaN())}}}, "non-finite"},
	} {
		if _, err := Centroids(tc.words, 2); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}
