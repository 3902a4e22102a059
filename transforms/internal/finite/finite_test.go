package finite

import (
	"math"
	"testing"
)

func TestIndex(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	for _, tc := range []struct {
		x    []float32
		want int
	}{
		{nil, -1},
		{[]float32{0, -1, math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32}, -1},
		{[]float32{1, nan, inf}, 1},
		{[]float32{1, 2, -inf}, 2},
		{[]float32{inf}, 0},
	} {
		if got := Index(tc.x); got != tc.want {
			t.Errorf("Index(%v) = %d, want %d", tc.x, got, tc.want)
		}
	}
}
