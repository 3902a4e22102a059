package learners

import (
	"math"
	"testing"
)

func TestSparsity(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	for _, tc := range []struct {
		w    []float32
		want float64
	}{
		{nil, 0},
		{[]float32{}, 0},
		{[]float32{0, 0, 0, 0}, 1},
		{[]float32{1, -2, 3}, 0},
		{[]float32{0, 1, 0, -1}, 0.5},
		{[]float32{negZero, 1, 1, 1}, 0.25},
		{[]float32{1e-45, 0}, 0.5}, // the smallest subnormal is not zero
	} {
		if got := Sparsity(tc.w); got != tc.want {
			t.Errorf("Sparsity(%v) = %v, want %v", tc.w, got, tc.want)
		}
	}
}
