package solis

import (
	"fmt"
	"math"

	"github.com/bowline/bowline/learners/sparse"
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
// per setting, so that the default's loop holds neither this predicted
// branch nor a max(w, −∞) on every weight (BenchmarkADAUpdate).
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

// updateInput is the prologue every learner's Update shares: it returns u's
// indices and values after checking that they fit a model of dim weights.
// u must satisfy u.Validate(dim); validating belongs at the input boundary,
// once per vector, not in the inner loop. updateInput checks only what
// would corrupt memory or the model silently, before the learner changes
// any state: it panics, as for a programmer error, naming algo's Update,
// if len(u.Idx) ≠ len(u.Val) or an index is ≥ dim. Unsorted or repeated
// indices and non-finite values are not detected.
//
// Each Update then loads the state of every coordinate of supp(u) in a loop
// that only loads, xor-ing a word of each into its touch field to keep the
// loads alive: the CPU overlaps the cache misses of a whole triplet (a
// 1M-word ADA model is 16 MB of state) instead of the few that fit between
// the square roots and divisions of the update.
func updateInput(algo string, u sparse.Vector, dim int) (idx []uint32, val []float32) {
	idx = u.Idx
	if len(u.Val) != len(idx) {
		panic(fmt.Sprintf("solis: %s.Update: %d indices but %d values", algo, len(idx), len(u.Val)))
	}
	n := uint64(dim)
	for _, i := range idx {
		if uint64(i) >= n {
			panic(fmt.Sprintf("solis: %s.Update: index %d out of range [0,%d)", algo, i, n))
		}
	}
	return idx, u.Val[:len(idx)]
}
