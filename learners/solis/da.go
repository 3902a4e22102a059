package solis

import (
	"errors"
	"fmt"
	"math"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
)

// DAParams are SOLIS-DA's hyper-parameters (paper §4.3; Xiao's regularized
// dual averaging).
type DAParams struct {
	// Lambda (λ ≥ 0) is the constant part of the truncation threshold
	// λ_t = λ + γρ/√t: a weight is exactly zero while the average
	// subgradient of its coordinate is at most λ_t in magnitude.
	Lambda float64
	// Gamma (γ > 0) scales the proximal term (γ/2√t)‖w‖²; the weights are
	// proportional to √t/γ.
	Gamma float64
	// Rho (ρ ≥ 0) adds the decaying part γρ/√t to the threshold, which
	// keeps early weights sparse while ḡ is still noisy.
	Rho float64
	// NonNeg keeps every weight ≥ 0: the weights minimise the DA objective
	// over w ≥ 0, w_i = (√t/γ)·max(0, −ḡ_i − λ_t), the positive part of
	// (16) (package doc, "Non-negative weights"). Hyper-parameter "nonneg",
	// 0 or 1.
	NonNeg bool
}

// DefaultDAParams returns a starting point for tuning: λ = 0, ρ = 0 (no
// truncation; weights are zero only where the average subgradient is) and
// γ = 0.01. Unlike ADA's and AFB's, DA's weights scale with the data,
// w_i ≈ −s_i/(γ√t): with L2-normalised bags of a few hundred words, |u_i|
// is 1e-3 to 1e-2, and γ must be of that order for w·u to reach the margin
// 1. On the synthetic corpus of package learners' BenchmarkUpdate, γ = 1
// leaves every triplet of a sixth pass violated, and γ = 0.01 about half,
// as ADA with η = 1 does. Weights of either sign.
func DefaultDAParams() DAParams { return DAParams{Lambda: 0, Gamma: 0.01, Rho: 0} }

// Validate reports every parameter out of range: Gamma must be finite and
// > 0; Lambda and Rho must be finite and ≥ 0. NaN is always an error.
func (p DAParams) Validate() error {
	return errors.Join(
		nonNegative("DA", "regularisation Lambda", p.Lambda),
		positive("DA", "proximal scale Gamma", p.Gamma),
		nonNegative("DA", "sparsity Rho", p.Rho),
	)
}

// DA is SOLIS-DA, the sparse online learner by regularized dual averaging
// (package doc). It stores only the running subgradient sums s and the step
// count t and materialises weights on demand. It implements
// learners.Stateful; it is not safe for concurrent use.
type DA struct {
	p     DAParams
	t     int64     // steps taken, zero-loss steps included
	s     []float64 // s_i = Σ_τ g_τ,i
	touch uint64    // sink for Update's prefetching loads
}

var _ learners.Stateful = (*DA)(nil)

// NewDA returns a SOLIS-DA learner over dim coordinates with w = 0.
func NewDA(dim int, p DAParams) (*DA, error) {
	if dim <= 0 {
		return nil, fmt.Errorf("solis: DA dimension must be > 0, got %d", dim)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &DA{p: p, s: make([]float64, dim)}, nil
}

// Name returns "solis-da".
func (a *DA) Name() string { return "solis-da" }

// Dim returns the number of weights.
func (a *DA) Dim() int { return len(a.s) }

// Steps returns t, the number of Updates so far (zero-loss steps included).
func (a *DA) Steps() int64 { return a.t }

// Params returns "lambda", "gamma", "rho" and "nonneg" (0 or 1).
func (a *DA) Params() map[string]float64 {
	return map[string]float64{"lambda": a.p.Lambda, "gamma": a.p.Gamma, "rho": a.p.Rho, "nonneg": learners.SwitchValue(a.p.NonNeg)}
}

// daConsts returns, for t ≥ 1 steps, the two per-step constants of
// daWeight: c = √t/γ and the threshold λ_t = λ + γρ/√t.
func (a *DA) daConsts(t float64) (c, lt float64) {
	sq := math.Sqrt(t)
	return sq / a.p.Gamma, a.p.Lambda + a.p.Gamma*a.p.Rho/sq
}

// daWeight is the closed form (16) for one coordinate after t ≥ 1 steps,
// from its running sum s = t·ḡ_i, with c = √t/γ and lt = λ_t:
//
//	w_i = 0                               if |ḡ_i| ≤ λ_t,
//	w_i = −(√t/γ)·(ḡ_i − λ_t·sign(ḡ_i))   otherwise,   ḡ_i = s/t,
//
// evaluated as sign(−ḡ_i)·c·max(0, |ḡ_i| − λ_t), which is the same float64
// (negation is exact) without a branch. Package doc, departure 2, not the
// paper's Algorithm 2: s sums the true subgradient g = −u of steps with a
// positive loss only, and ḡ divides by the number of all steps t. The result
// may be −0. With nonneg it is then projected, max(w_i, 0): the minimiser
// of the DA objective over w ≥ 0, (√t/γ)·max(0, −ḡ_i − λ_t), as the same
// float64 (package doc, "Non-negative weights").
func daWeight(s, t, c, lt float64, nonneg bool) float64 {
	gbar := s / t
	return project(math.Copysign(c*max(math.Abs(gbar)-lt, 0), -gbar), nonneg)
}

// weight returns w_i at the current step in float64.
func (a *DA) weight(i int) float64 {
	if a.t == 0 {
		return 0
	}
	t := float64(a.t)
	c, lt := a.daConsts(t)
	return daWeight(a.s[i], t, c, lt, a.p.NonNeg)
}

// Update performs one SOLIS-DA step on the triplet feature u and returns the
// hinge loss max(0, 1 − w·u) suffered before it. It costs O(nnz(u)) and does
// not allocate; it panics on malformed u as ADA.Update does.
//
// w_t is materialised on supp(u) only; then, if the loss is positive, s is
// updated there, and t advances in every case, which redefines w everywhere
// (package doc).
func (a *DA) Update(u sparse.Vector) float64 {
	s := a.s
	idx, val := updateInput("DA", u, len(s))
	// Load the state of supp(u) so that its cache misses overlap
	// (updateInput says why).
	var touch uint64
	for _, i := range idx {
		touch ^= math.Float64bits(s[i])
	}
	a.touch = touch

	var dot float64
	if a.t > 0 { // w_1 = 0
		t := float64(a.t)
		c, lt := a.daConsts(t)
		// daWeight, inlined by hand; two copies of the loop, as in
		// ADA.Update.
		if a.p.NonNeg {
			for j, i := range idx {
				gbar := s[i] / t
				w := max(math.Copysign(c*max(math.Abs(gbar)-lt, 0), -gbar), 0)
				dot += float64(w * float64(val[j]))
			}
		} else {
			for j, i := range idx {
				gbar := s[i] / t
				w := math.Copysign(c*max(math.Abs(gbar)-lt, 0), -gbar)
				dot += float64(w * float64(val[j]))
			}
		}
	}
	loss := max(0, 1-dot)
	// Package doc, departures 1 and 2, not the paper's Algorithm 2 line 7,
	// which adds u on every step: g = −u when L > 0, else g = 0, which
	// still counts as a step.
	if loss > 0 {
		for j, i := range idx {
			s[i] -= float64(val[j])
		}
	}
	a.t++
	return loss
}

// Weights writes the current weights, rounded to float32, into dst (grown if
// its capacity is short) and returns dst[:Dim()]. Zero weights are written as
// +0. It costs O(Dim()).
func (a *DA) Weights(dst []float32) []float32 {
	dst = grow(dst, len(a.s))
	if a.t == 0 {
		clear(dst)
		return dst
	}
	t := float64(a.t)
	c, lt := a.daConsts(t)
	for i, s := range a.s {
		dst[i] = float32(daWeight(s, t, c, lt, a.p.NonNeg)) + 0 // −0 + 0 = +0
	}
	return dst
}

// State returns the model (learners.State) with Steps = t and Vectors[0] =
// s, the running subgradient sum; the weights are a function of the two.
// It does not change the learner.
func (a *DA) State() learners.State {
	return learners.State{Learner: a.Name(), Steps: a.t, Vectors: [][]float64{append([]float64(nil), a.s...)}}
}

// SetState replaces the model by st, laid out as State describes; the
// hyper-parameters stay. It returns an error, leaving the learner as it was,
// if st is not of "solis-da", Vectors is not one vector of length Dim(), a
// value is not finite, or some s_i ≠ 0 while Steps = 0 (ḡ = s/t would be
// undefined).
func (a *DA) SetState(st learners.State) error {
	if err := learners.CheckState(st, a.Name(), len(a.s)); err != nil {
		return err
	}
	if st.Steps == 0 {
		for i, s := range st.Vectors[0] {
			if s != 0 {
				return fmt.Errorf("solis-da: SetState: s[%d] = %v with step count 0", i, s)
			}
		}
	}
	a.t = st.Steps
	copy(a.s, st.Vectors[0])
	return nil
}
