package solis

import (
	"errors"
	"fmt"
	"math"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
)

// ADAParams are SOLIS-ADA's hyper-parameters.
type ADAParams struct {
	// Eta (η > 0) is the learning rate; it scales every weight.
	Eta float64
	// Lambda (λ ≥ 0) is the ℓ1 strength: a weight is exactly zero unless the
	// average subgradient of its coordinate, over all steps, exceeds λ in
	// magnitude. Larger λ gives a sparser model.
	Lambda float64
	// Delta (δ ≥ 0) is added to √G_ii in the adaptive proximal term
	// H_ii = δ + √G_ii; it damps coordinates that have seen little gradient.
	Delta float64
	// NonNeg keeps every weight ≥ 0: the weights minimise the ADA objective
	// over w ≥ 0, w_i = (η t/H_ii)·max(0, −ḡ_i − λ), the positive part of
	// (22a) (package doc, "Non-negative weights"). Hyper-parameter
	// "nonneg", 0 or 1.
	NonNeg bool
}

// DefaultADAParams returns a starting point for tuning; the paper picks the
// parameters per dataset on a validation set of triplets. η = 1 lets a word
// seen in k agreeing violated triplets reach a weight of about √k, the scale
// a margin of 1 needs with L2-normalised bag-of-words vectors; λ = 0 means no
// ℓ1 truncation beyond the words that never appear in a violated triplet;
// δ = 1e-8 only keeps H positive; weights of either sign.
func DefaultADAParams() ADAParams {
	return ADAParams{Eta: 1, Lambda: 0, Delta: 1e-8}
}

// Validate reports every parameter out of range: Eta must be finite and
// > 0; Lambda and Delta must be finite and ≥ 0. NaN is always an error.
func (p ADAParams) Validate() error {
	return errors.Join(
		positive("ADA", "learning rate Eta", p.Eta),
		nonNegative("ADA", "regularisation Lambda", p.Lambda),
		nonNegative("ADA", "Delta", p.Delta),
	)
}

// adaCell is the state of one coordinate. s and G sit side by side so that
// reading a coordinate touches one cache line, not two.
type adaCell struct {
	s, g float64 // s_i = Σ g_τ,i and G_i = Σ g_τ,i²
}

// ADA is SOLIS-ADA, the sparse online learner by adaptive regularized dual
// averaging (package doc). It stores only (s, G, t) and materialises weights
// on demand. It implements learners.Stateful; it is not safe for concurrent
// use.
type ADA struct {
	p     ADAParams
	t     int64     // steps taken so far, zero-loss steps included
	cells []adaCell // per-coordinate s_i, G_i
	touch uint64    // sink for Update's prefetching loads
}

var _ learners.Stateful = (*ADA)(nil)

// NewADA returns a SOLIS-ADA learner over dim coordinates with w = 0.
func NewADA(dim int, p ADAParams) (*ADA, error) {
	if dim <= 0 {
		return nil, fmt.Errorf("solis: ADA dimension must be > 0, got %d", dim)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &ADA{p: p, cells: make([]adaCell, dim)}, nil
}

// Name returns "solis-ada".
func (a *ADA) Name() string { return "solis-ada" }

// Dim returns the number of weights.
func (a *ADA) Dim() int { return len(a.cells) }

// Steps returns t, the number of Updates so far (zero-loss steps included).
func (a *ADA) Steps() int64 { return a.t }

// Params returns "eta", "lambda", "delta" and "nonneg" (0 or 1).
func (a *ADA) Params() map[string]float64 {
	return map[string]float64{"eta": a.p.Eta, "lambda": a.p.Lambda, "delta": a.p.Delta, "nonneg": learners.SwitchValue(a.p.NonNeg)}
}

// adaWeight is the closed form (22a) for one coordinate after t ≥ 1 steps,
// from its running sums s = t·ḡ_i and g = G_ii, with etaT = η·t:
//
//	w_i = sign(−ḡ_i) · (η t / H_ii) · max(0, |ḡ_i| − λ),  ḡ_i = s/t,  H_ii = δ + √G_ii.
//
// Package doc, departure 2, and not the paper: ḡ divides by the number of
// all steps t, zero-loss steps included, and s sums the true subgradient
// g = −u (departure 1), so sign(−ḡ_i) is the sign of the accumulated u_i.
//
// w_i = 0 when s = 0 (coordinate never, or evenly, pushed) or H_ii = 0
// (δ = 0 and G = 0), where the formula would give 0·∞. Both cases are
// handled without a branch, because in Update's inner loop they are as
// unpredictable as the data and a mispredicted branch costs more than the
// arithmetic: s = 0 makes the max(0, ·) factor 0; and G = 0 implies s = 0
// (every g_τ is a float32 value, whose square does not underflow in
// float64, and SetState refuses G_i = 0 with S_i ≠ 0), so there H_ii is
// computed as δ + √1 instead, which keeps the quotient finite and changes
// nothing else. The result may be −0 where the formula gives +0 and vice
// versa. With nonneg it is then projected, max(w_i, 0): the minimiser of
// the ADA objective over w ≥ 0, (η t/H_ii)·max(0, −ḡ_i − λ), as the same
// float64 (package doc, "Non-negative weights").
//
// Update inlines this body by hand (the compiler will not); keep the two,
// and the naive dense reference in the tests, evaluating the same float64
// expressions in the same order, or the bit-for-bit comparison fails.
func adaWeight(s, g, t, etaT, lambda, delta float64, nonneg bool) float64 {
	gbar := s / t
	gb := math.Float64bits(g)
	h := delta + math.Sqrt(g+float64(1-(gb|-gb)>>63)) // g + (1 if g == 0 else 0)
	return project(math.Copysign(etaT/h*max(math.Abs(gbar)-lambda, 0), -gbar), nonneg)
}

// weight returns w_i at the current step in float64.
func (a *ADA) weight(i int) float64 {
	if a.t == 0 {
		return 0
	}
	c := a.cells[i]
	t := float64(a.t)
	return adaWeight(c.s, c.g, t, a.p.Eta*t, a.p.Lambda, a.p.Delta, a.p.NonNeg)
}

// Update performs one SOLIS-ADA step on the triplet feature u and returns
// the hinge loss max(0, 1 − w·u) suffered before it. It costs O(nnz(u)) and
// does not allocate: w_i is materialised from (s_i, G_i, t) only for
// i ∈ supp(u), then s_i and G_i are updated there if the loss is positive,
// and t advances in every case (which redefines w everywhere; package doc).
//
// u must satisfy u.Validate(Dim()); validating belongs at the input
// boundary, once per vector, not in the inner loop. Update checks only what
// would corrupt memory or the model silently: it panics, as for a programmer
// error, if len(u.Idx) ≠ len(u.Val) or an index is ≥ Dim(), and it does so
// before changing any state. Unsorted or repeated indices and non-finite
// values are not detected.
func (a *ADA) Update(u sparse.Vector) float64 {
	cells := a.cells
	idx, val := updateInput("ADA", u, len(cells))
	// Load the state of supp(u) so that its cache misses overlap
	// (updateInput says why).
	var touch uint64
	for _, i := range idx {
		touch ^= math.Float64bits(cells[i].g)
	}
	a.touch = touch

	// w·u with w_t materialised on supp(u) by adaWeight, inlined. The
	// conversion float64(w*v) forbids fusing into an FMA, so every platform
	// (and the dense reference in the tests) rounds alike. w_1 = 0.
	var dot float64
	if a.t > 0 {
		t := float64(a.t)
		etaT, lambda, delta := a.p.Eta*t, a.p.Lambda, a.p.Delta
		// Two copies of the loop, so that the default's has nothing of
		// the option in it (see project).
		if a.p.NonNeg {
			for k, i := range idx {
				c := cells[i]
				gbar := c.s / t
				gb := math.Float64bits(c.g)
				h := delta + math.Sqrt(c.g+float64(1-(gb|-gb)>>63))
				w := max(math.Copysign(etaT/h*max(math.Abs(gbar)-lambda, 0), -gbar), 0)
				dot += float64(w * float64(val[k]))
			}
		} else {
			for k, i := range idx {
				c := cells[i]
				gbar := c.s / t
				gb := math.Float64bits(c.g)
				h := delta + math.Sqrt(c.g+float64(1-(gb|-gb)>>63))
				w := math.Copysign(etaT/h*max(math.Abs(gbar)-lambda, 0), -gbar)
				dot += float64(w * float64(val[k]))
			}
		}
	}
	loss := max(0, 1-dot)

	// Package doc, departures 1 and 2, not the paper: g = −u only when L > 0,
	// else g = 0, which leaves s and G as they are but still counts as a
	// step. Algorithm 4 instead writes w only when L > 0 (package doc).
	if loss > 0 {
		for k, i := range idx {
			g := -float64(val[k])
			c := &cells[i]
			c.s += g
			c.g += float64(g * g)
		}
	}
	a.t++
	return loss
}

// Weights writes the current weights, rounded to float32, into dst (grown if
// its capacity is short) and returns dst[:Dim()]. Zero weights are written as
// +0, never −0. It costs O(Dim()).
func (a *ADA) Weights(dst []float32) []float32 {
	n := len(a.cells)
	if cap(dst) < n {
		dst = make([]float32, n)
	}
	dst = dst[:n]
	if a.t == 0 {
		clear(dst)
		return dst
	}
	t := float64(a.t)
	etaT := a.p.Eta * t
	for i, c := range a.cells {
		dst[i] = float32(adaWeight(c.s, c.g, t, etaT, a.p.Lambda, a.p.Delta, a.p.NonNeg)) + 0 // −0 + 0 = +0
	}
	return dst
}

// State returns the model (learners.State) with Steps = t and
//
//	Vectors[0] = s, the running subgradient sums s_i = Σ g_τ,i,
//	Vectors[1] = G, the running squared sums G_i = Σ g_τ,i²;
//
// the weights are a function of the three. It does not change the learner.
// (The learner stores s and G interleaved, so the vectors are copies.)
func (a *ADA) State() learners.State {
	s, g := make([]float64, len(a.cells)), make([]float64, len(a.cells))
	for i, c := range a.cells {
		s[i], g[i] = c.s, c.g
	}
	return learners.State{Learner: a.Name(), Steps: a.t, Vectors: [][]float64{s, g}}
}

// SetState replaces the model by st, laid out as State describes; the
// hyper-parameters stay. It returns an error, leaving the learner as it was,
// if st is not of "solis-ada", the vectors are not two of length Dim(), a
// value is not finite, a G_i is negative, or some s_i ≠ 0 while Steps = 0
// (ḡ = s/t would be undefined) or G_i = 0 (no state reached by Updates, or
// by averaging such states, has that).
func (a *ADA) SetState(st learners.State) error {
	n := len(a.cells)
	if err := learners.CheckState(st, a.Name(), n, n); err != nil {
		return err
	}
	ss, gs := st.Vectors[0], st.Vectors[1]
	for i := range n {
		s, g := ss[i], gs[i]
		if g < 0 {
			return fmt.Errorf("solis-ada: SetState: G[%d] = %v is negative", i, g)
		}
		if st.Steps == 0 && s != 0 {
			return fmt.Errorf("solis-ada: SetState: s[%d] = %v with step count 0", i, s)
		}
		if g == 0 && s != 0 {
			return fmt.Errorf("solis-ada: SetState: s[%d] = %v with G[%d] = 0", i, s, i)
		}
	}
	a.t = st.Steps
	for i := range a.cells {
		a.cells[i] = adaCell{s: ss[i], g: gs[i] + 0} // −0 + 0 = +0, which adaWeight's G = 0 test needs
	}
	return nil
}
