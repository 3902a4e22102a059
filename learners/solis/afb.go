package solis

import (
	"errors"
	"fmt"
	"math"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
)

// AFBParams are SOLIS-AFB's hyper-parameters (paper §4.4; Duchi, Hazan and
// Singer's adaptive FOBOS, i.e. composite mirror descent).
type AFBParams struct {
	// Eta (η > 0) is the learning rate; coordinate i steps by η/H_ii.
	Eta float64
	// Lambda (λ ≥ 0) is the ℓ1 strength: every step with a positive loss
	// shrinks every weight by λη/H_ii towards 0, clipped at 0. Larger λ
	// gives a sparser model.
	Lambda float64
	// Delta (δ ≥ 0) is added to √G_ii in H_ii = δ + √G_ii; it damps the
	// first steps of a coordinate.
	Delta float64
	// NonNeg keeps every weight ≥ 0: each step is clipped at 0,
	// w_i ← max(0, v − λη/H_ii) (package doc, "Non-negative weights").
	// Hyper-parameter "nonneg", 0 or 1.
	NonNeg bool
}

// DefaultAFBParams returns a starting point for tuning: η = 1 (a
// coordinate's first step moves it by about η), λ = 0 (no truncation),
// δ = 1e-8 (only keeps H positive), weights of either sign.
func DefaultAFBParams() AFBParams { return AFBParams{Eta: 1, Lambda: 0, Delta: 1e-8} }

// Validate reports every parameter out of range: Eta must be finite and
// > 0; Lambda and Delta must be finite and ≥ 0. NaN is always an error.
func (p AFBParams) Validate() error {
	return errors.Join(
		positive("AFB", "learning rate Eta", p.Eta),
		nonNegative("AFB", "regularisation Lambda", p.Lambda),
		nonNegative("AFB", "Delta", p.Delta),
	)
}

// afbCell is the state of one coordinate: w_i as it was after the k-th step
// with a positive loss, G_ii, and r = η/H_ii cached from G_ii (so that
// reading a weight needs neither a square root nor a division). 32 bytes,
// so a cell never straddles two cache lines.
type afbCell struct {
	w, g, r float64
	k       int64
}

// AFB is SOLIS-AFB, the sparse online learner by adaptive FOBOS (package
// doc). Like TG it stores each weight with the count of violated steps it
// has been brought up to and applies the missed shrinks in closed form when
// the weight is next read; the shrink size λη/H_ii is constant between two
// steps that touch the coordinate, because only those change G_ii. It
// implements learners.Stateful; it is not safe for concurrent use.
type AFB struct {
	p     AFBParams
	t     int64 // steps taken, zero-loss steps included
	k     int64 // steps with L > 0
	cells []afbCell
	touch uint64 // sink for Update's prefetching loads
}

var _ learners.Stateful = (*AFB)(nil)

// NewAFB returns a SOLIS-AFB learner over dim coordinates with w = 0 and
// G = 0.
func NewAFB(dim int, p AFBParams) (*AFB, error) {
	if dim <= 0 {
		return nil, fmt.Errorf("solis: AFB dimension must be > 0, got %d", dim)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	a := &AFB{p: p, cells: make([]afbCell, dim)}
	r := a.rate(0)
	for i := range a.cells {
		a.cells[i].r = r
	}
	return a, nil
}

// rate returns r = η/H_ii for G_ii = g, with H_ii = δ + √G_ii. Where g = 0
// (the coordinate never had a non-zero subgradient, so w_i = 0) it returns
// η/(δ + 1) instead, which keeps r finite when δ = 0 and, multiplying a
// zero subgradient or a shrink of w_i = 0, changes nothing (hZero).
func (a *AFB) rate(g float64) float64 {
	return a.p.Eta / (a.p.Delta + math.Sqrt(g+hZero(g)))
}

// Name returns "solis-afb".
func (a *AFB) Name() string { return "solis-afb" }

// Dim returns the number of weights.
func (a *AFB) Dim() int { return len(a.cells) }

// Steps returns the number of Updates so far (zero-loss steps included).
func (a *AFB) Steps() int64 { return a.t }

// Params returns "eta", "lambda", "delta" and "nonneg" (0 or 1).
func (a *AFB) Params() map[string]float64 {
	return map[string]float64{"eta": a.p.Eta, "lambda": a.p.Lambda, "delta": a.p.Delta, "nonneg": learners.SwitchValue(a.p.NonNeg)}
}

// weight returns the current w_i in float64: the stored w_i after the
// owed shrinks of λ·r each (shrink, as in TG).
func (a *AFB) weight(i int) float64 {
	c := a.cells[i]
	return shrink(c.w, float64(a.k-c.k), a.p.Lambda*c.r)
}

// Update performs one SOLIS-AFB step on the triplet feature u and returns
// the hinge loss max(0, 1 − w·u) suffered before it. It costs O(nnz(u)) and
// does not allocate; it panics on malformed u as ADA.Update does.
//
// A step with a positive loss changes every weight (Algorithm 3, lines
// 8–13): on supp(u) G grows and the weight takes the adaptive gradient step
// and the shrink; elsewhere g_i = 0 leaves G_ii and so H_ii as they were,
// and the weight only shrinks by λη/H_ii, which is owed and paid when the
// coordinate is next updated, or computed in closed form whenever it is
// read (package doc). A zero-loss step changes nothing and writes nothing.
func (a *AFB) Update(u sparse.Vector) float64 {
	cells := a.cells
	idx, val := updateInput("AFB", u, len(cells))
	// Load the state of supp(u) so that its cache misses overlap
	// (updateInput says why).
	var touch uint64
	for _, i := range idx {
		touch ^= uint64(cells[i].k)
	}
	a.touch = touch

	// w_t·u with w_t materialised on supp(u); read-only, as in TG.Update.
	k, lambda := a.k, a.p.Lambda
	var dot float64
	for j, i := range idx {
		c := cells[i]
		w := shrink(c.w, float64(k-c.k), lambda*c.r)
		dot += float64(w * float64(val[j]))
	}
	loss := max(0, 1-dot)
	if loss > 0 {
		// Package doc, departures 1 and 3, not the paper's Eq. (19b): g = −u.
		// First the owed shrinks, with the old H_ii; then
		// G_ii += g_i²; H_ii = δ + √G_ii; v = w − (η/H_ii)g_i;
		// w_i ← sign(v)·max(0, |v| − λη/H_ii), with λη/H_ii evaluated
		// as λ·(η/H_ii) = λr, the same product the owed shrinks use;
		// with NonNeg clipped at 0, as TG.Update does.
		nonneg := a.p.NonNeg
		for j, i := range idx {
			c := &cells[i]
			w := shrink(c.w, float64(k-c.k), lambda*c.r)
			g := -float64(val[j])
			c.g += float64(g * g)
			c.r = a.rate(c.g)
			v := w - float64(c.r*g)
			c.w, c.k = project(shrink(v, 1, lambda*c.r), nonneg), k+1
		}
		a.k = k + 1
	}
	a.t++
	return loss
}

// Weights writes the current weights, rounded to float32, into dst (grown if
// its capacity is short) and returns dst[:Dim()]. Zero weights are written as
// +0. It costs O(Dim()) and changes nothing.
func (a *AFB) Weights(dst []float32) []float32 {
	dst = grow(dst, len(a.cells))
	for i, c := range a.cells {
		dst[i] = float32(shrink(c.w, float64(a.k-c.k), a.p.Lambda*c.r)) + 0 // −0 + 0 = +0
	}
	return dst
}

// State returns the model (learners.State) with Steps = t and
//
//	Vectors[0] = w, up to date (every owed shrink applied),
//	Vectors[1] = G, the running squared-subgradient sums,
//	Vectors[2] = the stored w_i, before the owed shrinks,
//	Vectors[3] = the number of shrinks owed to each w_i.
//
// Vectors[0] and [1] are the model; [2] and [3] serve as TG.State's. State
// does not change the learner.
func (a *AFB) State() learners.State {
	n := len(a.cells)
	w, g, raw, owed := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i, c := range a.cells {
		o := float64(a.k - c.k)
		w[i], g[i], raw[i], owed[i] = shrink(c.w, o, a.p.Lambda*c.r), c.g, c.w, o
	}
	return learners.State{Learner: a.Name(), Steps: a.t, Vectors: [][]float64{w, g, raw, owed}}
}

// SetState replaces the model by st, laid out as State describes; the
// hyper-parameters stay. Where Vectors[2] and [3] reproduce Vectors[0] (an
// exported, unaveraged state) the coordinate is restored in that form, as in
// TG.SetState. It returns an error, leaving the learner as it was, if st is
// not of "solis-afb", the vectors are not four of length Dim(), a value is
// not finite, a G_ii is negative, some w_i ≠ 0 while G_ii = 0 (no state
// reached by Updates, or by averaging such states, has that: a weight moves
// only after a non-zero subgradient), or, with NonNeg, some w_i < 0.
func (a *AFB) SetState(st learners.State) error {
	n := len(a.cells)
	if err := learners.CheckState(st, a.Name(), n, n, n, n); err != nil {
		return err
	}
	w, g, raw, owed := st.Vectors[0], st.Vectors[1], st.Vectors[2], st.Vectors[3]
	if a.p.NonNeg {
		if err := checkNonNeg(a.Name(), w); err != nil {
			return err
		}
	}
	for i := range n {
		if g[i] < 0 {
			return fmt.Errorf("solis-afb: SetState: G[%d] = %v is negative", i, g[i])
		}
		if g[i] == 0 && w[i] != 0 {
			return fmt.Errorf("solis-afb: SetState: w[%d] = %v with G[%d] = 0", i, w[i], i)
		}
	}
	a.t, a.k = st.Steps, 0
	for i := range a.cells {
		gi := g[i] + 0 // −0 + 0 = +0, which hZero recognises
		c := afbCell{w: w[i], g: gi, r: a.rate(gi)}
		if o := owed[i]; exactOwed(o) && shrink(raw[i], o, a.p.Lambda*c.r) == w[i] {
			c.w, c.k = raw[i], -int64(o)
		}
		a.cells[i] = c
	}
	return nil
}
