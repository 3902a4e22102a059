package solis

import (
	"math"

	"github.com/bowline/bowline/learners/sparse"
)

// This file holds the naive dense references for TG, DA and AFB (ADA's is
// in ada_test.go): the paper's Algorithms 1–3 with dense vectors, as
// corrected in the package doc's departures 1 and 2 (true subgradient
// g = −u when L > 0, else 0; ḡ over all steps), updating every coordinate
// on every step they say. With NonNeg each writes the constrained form the
// package doc derives under "Non-negative weights" — for DA and ADA the
// formula itself, not a clip of the unconstrained one — so that the lazy
// learners' max(w, 0) is checked against it.

// dense returns u as a dense vector of length dim.
func dense(u sparse.Vector, dim int) []float64 {
	d := make([]float64, dim)
	for k, i := range u.Idx {
		d[i] = float64(u.Val[k])
	}
	return d
}

// hinge returns max(0, 1 − w·u) summed over every coordinate in order.
func hinge(w, u []float64) float64 {
	var dot float64
	for i := range w {
		dot += float64(w[i] * u[i])
	}
	return math.Max(0, 1-dot)
}

// subgradient returns g = −u if loss > 0, else 0 (package doc, departure 1).
func subgradient(u []float64, loss float64) []float64 {
	g := make([]float64, len(u))
	if loss > 0 {
		for i := range g {
			g[i] = -u[i]
		}
	}
	return g
}

// naiveTG is Algorithm 1: on a step with L > 0, for j = 1..m,
// v = w − ηg; w_j = max(0, v_j − α) if v_j ≥ 0, else min(0, v_j + α),
// α = ηλ; with NonNeg w_j = max(0, v_j − α) whatever the sign of v_j.
type naiveTG struct {
	p TGParams
	w []float64
}

func newNaiveTG(dim int, p TGParams) *naiveTG { return &naiveTG{p: p, w: make([]float64, dim)} }

func (n *naiveTG) update(u sparse.Vector) float64 {
	ud := dense(u, len(n.w))
	loss := hinge(n.w, ud)
	if loss > 0 {
		g := subgradient(ud, loss)
		alpha := n.p.Eta * n.p.Lambda
		for j := range n.w {
			v := n.w[j] - float64(n.p.Eta*g[j])
			if v >= 0 || n.p.NonNeg {
				n.w[j] = math.Max(0, v-alpha)
			} else {
				n.w[j] = math.Min(0, v+alpha)
			}
		}
	}
	return loss
}

func (n *naiveTG) weights() []float64 { return n.w }

// naiveDA is Algorithm 2 with the closed form (16) applied after every
// step (package doc, departures 3 and 4: w is a function of the running
// sums and t):
//
//	ḡ_t = (1/t) Σ_τ g_τ,  λ_t = λ + γρ/√t,
//	w_i = 0 if |ḡ_i| ≤ λ_t, else −(√t/γ)(ḡ_i − λ_t sgn(ḡ_i)),
//
// and with NonNeg w_i = (√t/γ)·max(0, −ḡ_i − λ_t).
type naiveDA struct {
	p    DAParams
	t    int64
	s, w []float64
}

func newNaiveDA(dim int, p DAParams) *naiveDA {
	return &naiveDA{p: p, s: make([]float64, dim), w: make([]float64, dim)}
}

func (n *naiveDA) update(u sparse.Vector) float64 {
	ud := dense(u, len(n.w))
	loss := hinge(n.w, ud)
	g := subgradient(ud, loss)
	for i := range n.s {
		n.s[i] += g[i]
	}
	n.t++
	t := float64(n.t)
	lt := n.p.Lambda + n.p.Gamma*n.p.Rho/math.Sqrt(t)
	for i := range n.w {
		gbar := n.s[i] / t
		if n.p.NonNeg {
			n.w[i] = (math.Sqrt(t) / n.p.Gamma) * math.Max(0, -gbar-lt)
			continue
		}
		if math.Abs(gbar) <= lt {
			n.w[i] = 0
		} else {
			n.w[i] = -(math.Sqrt(t) / n.p.Gamma) * (gbar - lt*sgn(gbar))
		}
	}
	return loss
}

func (n *naiveDA) weights() []float64 { return n.w }

// naiveAFB is Algorithm 3: on a step with L > 0, for j = 1..m,
// G_j += g_j², H_jj = δ + √G_j, v = w_j − (η/H_jj)g_j,
// w_j = sgn(v)[|v| − λη/H_jj]₊, with λη/H_jj evaluated as λ·(η/H_jj); with
// NonNeg w_j = [v − λη/H_jj]₊.
// Where H_jj = 0 (δ = 0 and G_j = 0, so g_j has always been 0 and w_j = 0)
// the formula is 0/0 and w_j stays 0.
type naiveAFB struct {
	p    AFBParams
	w, G []float64
}

func newNaiveAFB(dim int, p AFBParams) *naiveAFB {
	return &naiveAFB{p: p, w: make([]float64, dim), G: make([]float64, dim)}
}

func (n *naiveAFB) update(u sparse.Vector) float64 {
	ud := dense(u, len(n.w))
	loss := hinge(n.w, ud)
	if loss > 0 {
		g := subgradient(ud, loss)
		for j := range n.w {
			n.G[j] += float64(g[j] * g[j])
			H := n.p.Delta + math.Sqrt(n.G[j])
			if H == 0 {
				continue
			}
			r := n.p.Eta / H
			v := n.w[j] - float64(r*g[j])
			if v >= 0 || n.p.NonNeg {
				n.w[j] = math.Max(0, v-float64(n.p.Lambda*r))
			} else {
				n.w[j] = math.Min(0, v+float64(n.p.Lambda*r))
			}
		}
	}
	return loss
}

func (n *naiveAFB) weights() []float64 { return n.w }
