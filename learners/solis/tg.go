package solis

import (
	"errors"
	"fmt"
	"math"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
)

// TGParams are SOLIS-TG's hyper-parameters.
type TGParams struct {
	// Eta (η > 0) is the learning rate of the gradient step w ← w − ηg.
	Eta float64
	// Lambda (λ ≥ 0) is the ℓ1 strength: every step with a positive loss
	// shrinks every weight by ηλ towards 0, clipped at 0. Larger λ gives a
	// sparser model.
	Lambda float64
	// NonNeg keeps every weight ≥ 0: each truncated step is clipped at 0,
	// w_i ← max(0, v_i − ηλ) (package doc, "Non-negative weights").
	// Hyper-parameter "nonneg", 0 or 1.
	NonNeg bool
}

// DefaultTGParams returns a starting point for tuning: η = 1, λ = 0 (no
// truncation; weights are zero only where no violated triplet reached them),
// weights of either sign.
func DefaultTGParams() TGParams { return TGParams{Eta: 1, Lambda: 0} }

// Validate reports every parameter out of range: Eta must be finite and
// > 0; Lambda must be finite and ≥ 0. NaN is always an error.
func (p TGParams) Validate() error {
	return errors.Join(
		positive("TG", "learning rate Eta", p.Eta),
		nonNegative("TG", "regularisation Lambda", p.Lambda),
	)
}

// tgCell is the state of one coordinate: w_i as it was after the k-th step
// with a positive loss. The shrinks of later such steps are owed to it.
type tgCell struct {
	w float64
	k int64
}

// TG is SOLIS-TG, the sparse online learner by truncated gradient (package
// doc). It stores each weight with the count of violated steps it has been
// brought up to, and applies the shrinks it missed in closed form when it is
// next read. It implements learners.Stateful; it is not safe for concurrent
// use.
type TG struct {
	p     TGParams
	alpha float64  // ηλ, the shrink of one violated step
	t     int64    // steps taken, zero-loss steps included
	k     int64    // steps with L > 0
	cells []tgCell // per-coordinate w_i and the k it is up to date with
	touch uint64   // sink for Update's prefetching loads
}

var _ learners.Stateful = (*TG)(nil)

// NewTG returns a SOLIS-TG learner over dim coordinates with w = 0.
func NewTG(dim int, p TGParams) (*TG, error) {
	if dim <= 0 {
		return nil, fmt.Errorf("solis: TG dimension must be > 0, got %d", dim)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &TG{p: p, alpha: p.Eta * p.Lambda, cells: make([]tgCell, dim)}, nil
}

// Name returns "solis-tg".
func (a *TG) Name() string { return "solis-tg" }

// Dim returns the number of weights.
func (a *TG) Dim() int { return len(a.cells) }

// Steps returns the number of Updates so far (zero-loss steps included).
func (a *TG) Steps() int64 { return a.t }

// Params returns "eta", "lambda" and "nonneg" (0 or 1).
func (a *TG) Params() map[string]float64 {
	return map[string]float64{"eta": a.p.Eta, "lambda": a.p.Lambda, "nonneg": learners.SwitchValue(a.p.NonNeg)}
}

// shrink applies n truncations of size alpha at once:
//
//	T₁ⁿ(w, α) = sign(w)·max(0, |w| − nα),
//
// equal in exact arithmetic to n successive truncations, since each moves
// |w| by α towards 0 and 0 is a fixed point. n = 0 returns w itself. The
// result has the sign of w, so it may be −0. The conversion float64(n·α)
// forbids fusing into an FMA, so that every platform, and every call site,
// rounds alike.
func shrink(w, n, alpha float64) float64 {
	return math.Copysign(max(math.Abs(w)-float64(n*alpha), 0), w)
}

// weight returns the current w_i in float64.
func (a *TG) weight(i int) float64 {
	c := a.cells[i]
	return shrink(c.w, float64(a.k-c.k), a.alpha)
}

// Update performs one SOLIS-TG step on the triplet feature u and returns the
// hinge loss max(0, 1 − w·u) suffered before it. It costs O(nnz(u)) and does
// not allocate; it panics on malformed u as ADA.Update does.
//
// A step with a positive loss changes every weight (Algorithm 1, lines 6–13):
// the coordinates of supp(u) take the gradient step and the truncation, and
// every other one only the truncation. Update writes the first kind and
// counts the step; the second kind is owed and paid when the coordinate is
// next updated, or computed in closed form whenever it is read (package
// doc). A zero-loss step changes nothing and writes nothing.
func (a *TG) Update(u sparse.Vector) float64 {
	cells := a.cells
	idx, val := updateInput("TG", u, len(cells))
	// Load the state of supp(u) so that its cache misses overlap
	// (updateInput says why).
	var touch uint64
	for _, i := range idx {
		touch ^= uint64(cells[i].k)
	}
	a.touch = touch

	// w_t·u with w_t materialised on supp(u). This pass only reads: most
	// steps of a trained model have zero loss, and writing the paid-up
	// weights back would dirty a cache line per coordinate for nothing.
	k, alpha := a.k, a.alpha
	var dot float64
	for j, i := range idx {
		c := cells[i]
		w := shrink(c.w, float64(k-c.k), alpha)
		dot += float64(w * float64(val[j]))
	}
	loss := max(0, 1-dot)
	if loss > 0 {
		// Package doc, departures 1 and 3, not the paper's Eq. (12): the
		// subgradient is g = −u, so v = w − ηg = w + ηu; then
		// w ← sign(v)·max(0, |v| − ηλ), which is Algorithm 1's two
		// branches in one expression. The owed shrinks are paid first,
		// by the same expression as above (the cell is in cache now).
		// With NonNeg the result is clipped at 0 (package doc,
		// "Non-negative weights"); the owed shrinks of a weight ≥ 0 keep
		// it ≥ 0, so untouched coordinates need no clip.
		eta, nonneg := a.p.Eta, a.p.NonNeg
		for j, i := range idx {
			c := &cells[i]
			v := shrink(c.w, float64(k-c.k), alpha) + float64(eta*float64(val[j]))
			c.w, c.k = project(shrink(v, 1, alpha), nonneg), k+1
		}
		a.k = k + 1
	}
	a.t++
	return loss
}

// Weights writes the current weights, rounded to float32, into dst (grown if
// its capacity is short) and returns dst[:Dim()]. Zero weights are written as
// +0. It costs O(Dim()) and changes nothing.
func (a *TG) Weights(dst []float32) []float32 {
	dst = grow(dst, len(a.cells))
	for i, c := range a.cells {
		dst[i] = float32(shrink(c.w, float64(a.k-c.k), a.alpha)) + 0 // −0 + 0 = +0
	}
	return dst
}

// State returns the model (learners.State) with Steps = t and
//
//	Vectors[0] = w, up to date (every owed truncation applied),
//	Vectors[1] = the stored w_i, before the owed truncations,
//	Vectors[2] = the number of truncations owed to each w_i.
//
// Vectors[0] is the model; Vectors[1] and [2] let SetState restore the
// learner's exact representation when it is handed back a state that
// Average did not mix with others, so that State followed by SetState, and
// sharded training with one shard, continue bit for bit as the learner
// would have (package doc, "Sharded training"). State does not change the
// learner.
func (a *TG) State() learners.State {
	n := len(a.cells)
	w, raw, owed := make([]float64, n), make([]float64, n), make([]float64, n)
	for i, c := range a.cells {
		o := float64(a.k - c.k)
		w[i], raw[i], owed[i] = shrink(c.w, o, a.alpha), c.w, o
	}
	return learners.State{Learner: a.Name(), Steps: a.t, Vectors: [][]float64{w, raw, owed}}
}

// SetState replaces the model by st, laid out as State describes; the
// hyper-parameters stay. Where Vectors[1] and [2] reproduce Vectors[0] under
// this learner's truncation size ηλ (an exported, unaveraged state) the
// coordinate is restored in that form, elsewhere as Vectors[0] with nothing
// owed. It returns an error, leaving the learner as it was, if st is not of
// "solis-tg", the vectors are not three of length Dim(), a value is not
// finite, or, with NonNeg, a weight of Vectors[0] is negative.
func (a *TG) SetState(st learners.State) error {
	n := len(a.cells)
	if err := learners.CheckState(st, a.Name(), n, n, n); err != nil {
		return err
	}
	w, raw, owed := st.Vectors[0], st.Vectors[1], st.Vectors[2]
	if a.p.NonNeg {
		if err := checkNonNeg(a.Name(), w); err != nil {
			return err
		}
	}
	a.t, a.k = st.Steps, 0
	for i := range a.cells {
		if o := owed[i]; exactOwed(o) && shrink(raw[i], o, a.alpha) == w[i] {
			a.cells[i] = tgCell{w: raw[i], k: -int64(o)}
		} else {
			a.cells[i] = tgCell{w: w[i]}
		}
	}
	return nil
}

// exactOwed reports whether o is a count of owed truncations: a whole number
// in [0, 2⁵³], the range where float64 holds integers exactly.
func exactOwed(o float64) bool { return o >= 0 && o <= 1<<53 && o == math.Trunc(o) }
