package main

import (
	"math"
	"testing"
)

func TestRateAt(t *testing.T) {
	curve := []curvePoint{{recall: 0.9, rate: 1000}, {recall: 0.5, rate: 8000}, {recall: 0.7, rate: 4000}, {recall: 0.7, rate: 2000}}
	for _, c := range []struct {
		r, want float64
		ok      bool
	}{
		{0.5, 8000, true},
		{0.6, math.Sqrt(8000 * 4000), true}, // half-way: the geometric mean
		{0.7, 4000, true},                   // the fastest of equal recalls
		{0.85, 1000 * math.Pow(4, 0.25), true},
		{0.9, 1000, true},
		{0.4, 0, false},
		{0.95, 0, false},
	} {
		got, ok := rateAt(curve, c.r)
		if ok != c.ok || math.Abs(got-c.want) > 1e-6*c.want {
			t.Errorf("rateAt(%g) = %g, %v; want %g, %v", c.r, got, ok, c.want, c.ok)
		}
	}
}
