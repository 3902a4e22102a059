package solis

import (
	"fmt"
	"math"
)

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// positive returns an error unless v is finite and > 0; algo and what name
// the parameter in the message.
func positive(algo, what string, v float64) error {
	if !finite(v) || v <= 0 {
		return fmt.Errorf("solis: %s %s must be finite and > 0, got %v", algo, what, v)
	}
	return nil
}

// nonNegative returns an error unless v is finite and ≥ 0.
func nonNegative(algo, what string, v float64) error {
	if !finite(v) || v < 0 {
		return fmt.Errorf("solis: %s %s must be finite and >= 0, got %v", algo, what, v)
	}
	return nil
}

// project returns w, or with nonneg its projection max(w, 0) onto the
// non-negative orthant (package doc, "Non-negative weights"). The hottest
// loops, ADA's and DA's w·u in Update, are written twice instead, one copy
// per setting: there even this predicted branch cost the default about 5%
// (BenchmarkADAUpdate), and max(w, −∞) on every weight 7–10%.
func project(w float64, nonneg bool) float64 {
	if nonneg {
		return max(w, 0)
	}
	return w
}

// checkNonNeg returns an error naming the first negative w_i, which no
// learner with non-negative weights reaches by Updates or by averaging
// such states; −0 is not negative.
func checkNonNeg(algo string, w []float64) error {
	for i, x := range w {
		if x < 0 {
			return fmt.Errorf("%s: SetState: w[%d] = %v is negative, and this learner keeps w >= 0 (nonneg)", algo, i, x)
		}
	}
	return nil
}

// grow returns dst[:n], reallocated if its capacity is short.
func grow(dst []float32, n int) []float32 {
	if cap(dst) < n {
		return make([]float32, n)
	}
	return dst[:n]
}

// hZero returns 1 if g == 0 and 0 otherwise, without a branch. Adding it to
// G_ii under the square root of H_ii = δ + √G_ii keeps H_ii > 0, and every
// quotient by it finite, for coordinates that never had a non-zero
// subgradient; those have w_i = 0 and s_i = 0, which the quotient then
// multiplies, so the result is unchanged (see adaWeight). A branch would be
// as unpredictable as the data in the inner loops.
func hZero(g float64) float64 {
	gb := math.Float64bits(g)
	return float64(1 - (gb|-gb)>>63)
}
