// Package oasis implements OASIS, the Online Algorithm for Scalable Image
// Similarity (Chechik, Sharma, Shalit and Bengio; equation numbers are
// those of their abstract "OASIS: Online Algorithm for Scalable Image
// Similarity learning", the full paper is "Large scale online learning of
// image similarity through ranking", JMLR 11, 2010), which learns a
// bilinear similarity S_W(a, b) = aᵀWb from triplets (x, x⁺, x⁻) by
// passive-aggressive steps.
//
// With the hinge loss L = max(0, 1 − S_W(x, x⁺) + S_W(x, x⁻)), a step solves
// Eq. (3),
//
//	W ← argmin ½‖W′ − W‖²_F + Cξ  s.t.  L_W′ ≤ ξ, ξ ≥ 0,
//
// whose solution is the passive-aggressive step (Crammer et al., JMLR 2006)
//
//	V = x(x⁺ − x⁻)ᵀ,   τ = min(C, L/‖V‖²_F),   W ← W + τV,
//
// from W₀ = I, and a step with L = 0 changes nothing.
//
// The package has two learners. [Diagonal] restricts W to diag(w) for
// bag-of-words vectors of any dimension: V becomes diag(u) with
// u = x ⊙ (x⁺ − x⁻), as the SOLIS paper compares against; it implements
// learners.Stateful and registers with learners.New as "oasis-diag". [Full]
// learns the whole d×d matrix for dense features of up to a few thousand
// dimensions, with ‖V‖²_F = ‖x‖²‖x⁺ − x⁻‖², so that V is never formed;
// [DenseFull] wraps it as a learners.DenseOnline over concatenated modality
// vectors and registers with learners.NewDense as "oasis-full".
//
// # Non-negative diagonal weights (an option, not the paper)
//
// With Params.NonNeg ("nonneg" = 1 for "oasis-diag") [Diagonal] keeps
// w ≥ 0, for the reason package solis gives under "Non-negative weights": a
// negative w_i scores images lower for sharing word i, which an inverted
// index cannot use, and mined hard negatives turned 97–98% of OASIS-diag's
// weights negative on ETH-80 at 1K words (36–40% at 10K). Each step is
// the passive-aggressive step projected onto the non-negative orthant,
//
//	w ← max(0, w + τu),   τ = min(C, L/‖u‖²),
//
// the Euclidean projection of the step Eq. (3) solves. It is not the
// minimiser of Eq. (3) with w ≥ 0 added, which has no closed form (the
// clipped coordinates would call for a larger τ on the rest); the projected
// step is what projected subgradient methods take, and it costs O(nnz(u))
// like the step itself. w₀ = 1 is already non-negative.
package oasis

import (
	"fmt"
	"math"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
)

// Params are OASIS's hyper-parameters.
type Params struct {
	// C (> 0) is the aggressiveness: it caps the step τ = min(C, L/‖V‖²_F),
	// which binds when ‖V‖_F is small and the uncapped step would fit one
	// triplet at any cost.
	C float64
	// NonNeg keeps Diagonal's weights ≥ 0 (package doc, "Non-negative
	// diagonal weights"). Full has no such option and refuses it.
	NonNeg bool
}

// DefaultParams returns C = 0.1, a usual passive-aggressive cap (the paper
// picks C by cross-validation), and weights of either sign.
func DefaultParams() Params { return Params{C: 0.1} }

// Validate reports whether C is finite and > 0. NaN is an error.
func (p Params) Validate() error {
	if math.IsNaN(p.C) || math.IsInf(p.C, 0) || p.C <= 0 {
		return fmt.Errorf("oasis: aggressiveness C must be finite and > 0, got %v", p.C)
	}
	return nil
}

// Diagonal is OASIS restricted to a diagonal W = diag(w), for sparse
// bag-of-words vectors: with u = x ⊙ (x⁺ − x⁻),
//
//	L = max(0, 1 − w·u),   τ = min(C, L/‖u‖²),   w ← w + τu,   w₀ = 1.
//
// An Update costs O(nnz(u)); w is stored dense and is not sparse (w₀ = 1).
// With Params.NonNeg every step is clipped at 0. It implements
// learners.Stateful; it is not safe for concurrent use.
type Diagonal struct {
	p Params
	t int64
	w []float64
}

var _ learners.Stateful = (*Diagonal)(nil)

// NewDiagonal returns a diagonal OASIS learner over dim coordinates with
// w = 1, i.e. W₀ = I.
func NewDiagonal(dim int, p Params) (*Diagonal, error) {
	if dim <= 0 {
		return nil, fmt.Errorf("oasis: dimension must be > 0, got %d", dim)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	w := make([]float64, dim)
	for i := range w {
		w[i] = 1
	}
	return &Diagonal{p: p, w: w}, nil
}

// Name returns "oasis-diag".
func (d *Diagonal) Name() string { return "oasis-diag" }

// Dim returns the number of weights.
func (d *Diagonal) Dim() int { return len(d.w) }

// Steps returns the number of Updates so far (zero-loss steps included).
func (d *Diagonal) Steps() int64 { return d.t }

// Params returns "c" and "nonneg" (0 or 1).
func (d *Diagonal) Params() map[string]float64 {
	return map[string]float64{"c": d.p.C, "nonneg": learners.SwitchValue(d.p.NonNeg)}
}

// Update performs one passive-aggressive step on the triplet feature u and
// returns the hinge loss max(0, 1 − w·u) suffered before it. It costs
// O(nnz(u)) and does not allocate.
//
// u must satisfy u.Validate(Dim()); Update panics, as for a programmer
// error, if len(u.Idx) ≠ len(u.Val) or an index is ≥ Dim(), before changing
// any state. A u with ‖u‖ = 0 has loss 1 and changes nothing.
func (d *Diagonal) Update(u sparse.Vector) float64 {
	idx := u.Idx
	if len(u.Val) != len(idx) {
		panic(fmt.Sprintf("oasis: Diagonal.Update: %d indices but %d values", len(idx), len(u.Val)))
	}
	val := u.Val[:len(idx)]
	w := d.w
	n := uint64(len(w))
	for _, i := range idx {
		if uint64(i) >= n {
			panic(fmt.Sprintf("oasis: Diagonal.Update: index %d out of range [0,%d)", i, n))
		}
	}
	var dot, uu float64
	for k, i := range idx {
		v := float64(val[k])
		dot += w[i] * v
		uu += v * v
	}
	d.t++
	loss := max(0, 1-dot)
	if loss > 0 {
		// ‖V‖²_F = ‖diag(u)‖²_F = ‖u‖². uu = 0 gives τ = C and a zero step.
		// With NonNeg the step is projected onto w ≥ 0 (package doc).
		tau := min(d.p.C, loss/uu)
		if d.p.NonNeg {
			for k, i := range idx {
				w[i] = max(w[i]+tau*float64(val[k]), 0)
			}
		} else {
			for k, i := range idx {
				w[i] += tau * float64(val[k])
			}
		}
	}
	return loss
}

// Weights writes w, rounded to float32, into dst (grown if its capacity is
// short) and returns dst[:Dim()]. It costs O(Dim()).
func (d *Diagonal) Weights(dst []float32) []float32 {
	if cap(dst) < len(d.w) {
		dst = make([]float32, len(d.w))
	}
	dst = dst[:len(d.w)]
	for i, x := range d.w {
		dst[i] = float32(x) + 0 // −0 + 0 = +0
	}
	return dst
}

// State returns the model (learners.State) with Steps = t and Vectors[0] =
// w. It does not change the learner.
func (d *Diagonal) State() learners.State {
	return learners.State{Learner: d.Name(), Steps: d.t, Vectors: [][]float64{append([]float64(nil), d.w...)}}
}

// SetState replaces the model by st, laid out as State describes; C stays.
// It returns an error, leaving the learner as it was, if st is not of
// "oasis-diag", Vectors is not one vector of length Dim(), a value is not
// finite, or, with NonNeg, a weight is negative (no Update reaches one).
func (d *Diagonal) SetState(st learners.State) error {
	if err := learners.CheckState(st, d.Name(), len(d.w)); err != nil {
		return err
	}
	if d.p.NonNeg {
		for i, x := range st.Vectors[0] {
			if x < 0 {
				return fmt.Errorf("oasis-diag: SetState: w[%d] = %v is negative, and this learner keeps w >= 0 (nonneg)", i, x)
			}
		}
	}
	d.t = st.Steps
	copy(d.w, st.Vectors[0])
	return nil
}

func init() {
	learners.Register("oasis-diag", func(dim int, params map[string]float64) (learners.Stateful, error) {
		p := DefaultParams()
		if err := learners.AssignSwitched("oasis-diag", map[string]*float64{"c": &p.C}, map[string]*bool{"nonneg": &p.NonNeg}, params); err != nil {
			return nil, err
		}
		d, err := NewDiagonal(dim, p)
		if err != nil {
			return nil, err
		}
		return d, nil
	})
}
