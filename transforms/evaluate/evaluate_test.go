package evaluate

import (
	"math"
	"slices"
	"testing"

	"github.com/bowline/bowline/transforms/internal/testkit"
)

// bools turns a 0/1 pattern into relevance flags.
func bools(p ...int) []bool {
	b := make([]bool, len(p))
	for i, x := range p {
		b[i] = x != 0
	}
	return b
}

const eps = 1e-12

func TestAveragePrecision(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rel   []bool
		total int
		want  float64
	}{
		{"brief example", bools(1, 0, 1, 0, 0, 1), 3, (1 + 2.0/3 + 1.0/2) / 3},
		{"one relevant never retrieved", bools(1, 0, 1, 0, 0, 1), 4, (1 + 2.0/3 + 1.0/2) / 4},
		{"perfect", bools(1, 1, 1, 0, 0), 3, 1},
		{"perfect, nothing irrelevant", bools(1, 1), 2, 1},
		{"last place", bools(0, 0, 0, 1), 1, 0.25},
		{"nothing retrieved", bools(0, 0, 0), 2, 0},
		{"empty ranking", nil, 5, 0},
		{"no relevant items", bools(0, 0), 0, 0},
		{"empty and none relevant", nil, 0, 0},
	} {
		if got := AveragePrecision(tc.rel, tc.total); math.Abs(got-tc.want) > eps {
			t.Errorf("%s: AP = %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := AveragePrecision(bools(1, 0, 1, 0, 0, 1), 3); math.Abs(got-0.7222222222222222) > eps {
		t.Errorf("AP = %v, want 0.72222…", got)
	}
}

func TestPanics(t *testing.T) {
	testkit.MustPanic(t, "AP more found than total", "3 relevant results ranked but totalRelevant = 2", func() {
		AveragePrecision(bools(1, 1, 1), 2)
	})
	testkit.MustPanic(t, "AP negative total", "totalRelevant = -1", func() { AveragePrecision(nil, -1) })
	testkit.MustPanic(t, "P@0", "k = 0", func() { PrecisionAt(bools(1), 0) })
	testkit.MustPanic(t, "NDCG@0", "k = 0", func() { NDCGAt([]float64{1}, []float64{1}, 0) })
	testkit.MustPanic(t, "NDCG negative gain", "gain -1 at position 1", func() {
		NDCGAt([]float64{1, -1}, []float64{1, 1}, 2)
	})
	testkit.MustPanic(t, "NDCG NaN ideal", "gain NaN", func() {
		NDCGAt([]float64{1}, []float64{math.NaN(), 1}, 2)
	})
}

func TestPrecisionAt(t *testing.T) {
	rel := bools(1, 0, 1, 0, 0, 1)
	for _, tc := range []struct {
		k    int
		want float64
	}{
		{1, 1}, {2, 0.5}, {3, 2.0 / 3}, {5, 0.4}, {6, 0.5},
		{10, 0.3}, // only 6 results: still divided by 10
	} {
		if got := PrecisionAt(rel, tc.k); math.Abs(got-tc.want) > eps {
			t.Errorf("P@%d = %v, want %v", tc.k, got, tc.want)
		}
	}
	if got := PrecisionAt(nil, 10); got != 0 {
		t.Errorf("P@10 of an empty ranking = %v, want 0", got)
	}
}

func TestNDCGAt(t *testing.T) {
	l3, l6, l7 := math.Log2(3), math.Log2(6), math.Log2(7)
	gains := []float64{3, 2, 3, 0, 1, 2}
	// The collection holds these items plus two irrelevant ones, unsorted.
	ideal := []float64{0, 3, 2, 0, 3, 0, 1, 2}
	// Sorted ideal: 3, 3, 2, 2, 1, 0, 0, 0; gains 2^g − 1: 7, 7, 3, 3, 1, 0.
	dcg6 := 7 + 3/l3 + 7.0/2 + 0 + 1/l6 + 3/l7
	idcg6 := 7 + 7/l3 + 3.0/2 + 3/math.Log2(5) + 1/l6
	for _, tc := range []struct {
		name   string
		gains  []float64
		ideal  []float64
		k      int
		want   float64
		approx float64 // the value as a literal, from the formula by hand
	}{
		{"k=1", gains, ideal, 1, 1, 1},
		{"k=3", gains, ideal, 3, (7 + 3/l3 + 3.5) / (7 + 7/l3 + 1.5), 0.9594535146},
		{"k=6", gains, ideal, 6, dcg6 / idcg6, 0.9488107486},
		{"k beyond ranking", gains, ideal, 10, dcg6 / idcg6, 0.9488107486},
		{"binary, relevant at rank 3", []float64{0, 0, 1}, []float64{1, 0, 0, 0}, 3, 0.5, 0.5},
		{"perfect", []float64{3, 2, 2, 1, 0}, []float64{2, 0, 3, 1, 2}, 10, 1, 1},
		{"nothing relevant", []float64{0, 0}, []float64{0, 0, 0}, 5, 0, 0},
		{"relevant beyond k", []float64{0, 0, 2}, []float64{2, 0, 0}, 2, 0, 0},
	} {
		in := slices.Clone(tc.ideal)
		got := NDCGAt(tc.gains, tc.ideal, tc.k)
		if math.Abs(got-tc.want) > eps || math.Abs(got-tc.approx) > 1e-9 {
			t.Errorf("%s: NDCG@%d = %v, want %v", tc.name, tc.k, got, tc.want)
		}
		if !slices.Equal(in, tc.ideal) {
			t.Errorf("%s: NDCGAt reordered the caller's ideal gains", tc.name)
		}
	}
}

func TestSummary(t *testing.T) {
	var s Summary
	if m := s.Mean(); m != (Means{}) {
		t.Errorf("empty Mean = %+v, want zero", m)
	}
	s.Add(1, 0.5, 0.8)
	s.Add(0.5, 0.1, 0.4)
	var o Summary
	o.Add(0, 0, 0)
	s.Merge(o)
	want := Means{Queries: 3, MAP: 0.5, PrecisionAt10: 0.2, NDCGAt10: 0.4}
	got := s.Mean()
	if got.Queries != want.Queries || math.Abs(got.MAP-want.MAP) > eps ||
		math.Abs(got.PrecisionAt10-want.PrecisionAt10) > eps || math.Abs(got.NDCGAt10-want.NDCGAt10) > eps {
		t.Errorf("Mean = %+v, want %+v", got, want)
	}
	if str := got.String(); str != "queries=3 mAP=0.5000 P@10=0.2000 NDCG@10=0.4000" {
		t.Errorf("String = %q", str)
	}
}
