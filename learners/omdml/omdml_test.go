package omdml

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestOMDMLHandComputed checks single steps on 2-d modalities against values
// worked out by hand (see each case).
func TestOMDMLHandComputed(t *testing.T) {
	// Case "clip non-diagonal": a = (−1,−1), b = (−1,0): d⁺ = 2, d⁻ = 1,
	// ℓ = 2, ‖V‖² = 4 + 1 − 2·1 = 3, τ = 2/3, V = [[0,1],[1,1]], so
	// M − τV = [[1, −2/3], [−2/3, 1/3]] with eigenvalues (2 ± √5)/3. The
	// projection keeps λ₊ = (2 + √5)/3 with eigenvector ∝ (2/3, 1 − λ₊).
	lp := (2 + math.Sqrt(5)) / 3
	v := []float64{2. / 3, 1 - lp}
	nv := math.Hypot(v[0], v[1])
	v[0], v[1] = v[0]/nv, v[1]/nv
	clipped := [][]float64{{lp * v[0] * v[0], lp * v[0] * v[1]}, {lp * v[0] * v[1], lp * v[1] * v[1]}}

	id := [][]float64{{1, 0}, {0, 1}}
	for _, tc := range []struct {
		name           string
		c, beta, gamma float64
		p, pos, neg    Sample
		loss           float64
		theta          []float64
		m              [][][]float64
		done, skipped  int64
	}{{
		// Modality 0: a = (−1, 0), b = (0, −0.5), f₀ = 1 − 0.25 = 0.75.
		// Modality 1: f₁ = 0.01 − 2 = −1.99. f = (0.75 − 1.99)/2 = −0.62,
		// loss = 0.38. Hedge: z = (1, 0), θ ∝ (0.25, 0.5) = (1/3, 2/3).
		// M₀: ℓ₀ = 1.75, ‖V‖² = 1 + 0.0625 = 1.0625, τ = 28/17 < C,
		// M₀ − τV = diag(1 − 28/17, 1 + 7/17): one negative eigenvalue,
		// clipped to diag(0, 24/17). M₁: ℓ₁ = max(0, −0.99) = 0, unchanged.
		name: "clip, Hedge", c: 10, beta: 0.5, gamma: 1,
		p:    Sample{{0, 0}, {0, 0}},
		pos:  Sample{{1, 0}, {0.1, 0}},
		neg:  Sample{{0, 0.5}, {1, 1}},
		loss: 0.38, theta: []float64{1. / 3, 2. / 3},
		m:    [][][]float64{{{0, 0}, {0, 24. / 17}}, id},
		done: 1,
	}, {
		// Same modality 0 alone: loss = 1.75, θ stays (1). τ = min(C, 28/17)
		// = 0.5 and M − τV = diag(0.5, 1.125). The bound 1 + τλ₋ with
		// λ₋ = −‖a‖² = −1 (a ⊥ b) is 0.5 ≥ 0: no decomposition.
		name: "C binds, skip", c: 0.5, beta: 0.5, gamma: 1,
		p: Sample{{0, 0}}, pos: Sample{{1, 0}}, neg: Sample{{0, 0.5}},
		loss: 1.75, theta: []float64{1},
		m:       [][][]float64{{{0.5, 0}, {0, 1.125}}},
		skipped: 1,
	}, {
		// The margin is γ in ℓ_i too (package doc, "Margin"): with γ = 0.5,
		// ℓ = 1.25, τ = 1.25/1.0625 = 20/17, M − τV = diag(−3/17, 22/17),
		// clipped to diag(0, 22/17). A fixed margin 1 would give 28/17.
		name: "margin γ", c: 10, beta: 0.5, gamma: 0.5,
		p: Sample{{0, 0}}, pos: Sample{{1, 0}}, neg: Sample{{0, 0.5}},
		loss: 1.25, theta: []float64{1},
		m:    [][][]float64{{{0, 0}, {0, 22. / 17}}},
		done: 1,
	}, {
		// γ = 0 and f = 0.25 − 0.5625 < 0: no update, although a fixed
		// margin 1 would count a loss of 0.6875.
		name: "γ = 0", c: 10, beta: 0.5, gamma: 0,
		p: Sample{{0, 0}}, pos: Sample{{0.5, 0}}, neg: Sample{{0, 0.75}},
		loss: 0, theta: []float64{1},
		m: [][][]float64{id},
	}, {
		name: "clip non-diagonal", c: 10, beta: 0.5, gamma: 1,
		p: Sample{{0, 0}}, pos: Sample{{1, 1}}, neg: Sample{{1, 0}},
		loss: 2, theta: []float64{1},
		m:    [][][]float64{clipped},
		done: 1,
	}, {
		// f = 0.01 − 4 + γ < 0: nothing changes.
		name: "no update", c: 10, beta: 0.5, gamma: 1,
		p: Sample{{0, 0}, {0, 0}}, pos: Sample{{0.1, 0}, {0, 0.1}}, neg: Sample{{2, 0}, {0, 2}},
		loss: 0, theta: []float64{0.5, 0.5},
		m: [][][]float64{id, id},
	}, {
		// p⁺ = p⁻: f = 0, ℓ = γ = 1 > 0, so the step runs, but V = 0.
		name: "V = 0", c: 10, beta: 0.5, gamma: 1,
		p: Sample{{0, 0}}, pos: Sample{{1, 0}}, neg: Sample{{1, 0}},
		loss: 1, theta: []float64{1},
		m: [][][]float64{id},
	}} {
		p := DefaultParams()
		p.C, p.Beta, p.Gamma = tc.c, tc.beta, tc.gamma
		dims := make([]int, len(tc.p))
		for i := range dims {
			dims[i] = 2
		}
		o, err := NewOMDML(dims, p)
		if err != nil {
			t.Fatal(err)
		}
		const tol = 1e-12
		if got := o.Update(tc.p, tc.pos, tc.neg); math.Abs(got-tc.loss) > tol {
			t.Errorf("%s: loss = %v, want %v", tc.name, got, tc.loss)
		}
		for i, want := range tc.theta {
			if got := o.Weights()[i]; math.Abs(got-want) > tol {
				t.Errorf("%s: θ_%d = %v, want %v", tc.name, i, got, want)
			}
		}
		for i, want := range tc.m {
			got := o.Metric(i)
			for r := range 2 {
				for c := range 2 {
					if math.Abs(got.At(r, c)-want[r][c]) > tol {
						t.Errorf("%s: M_%d = %v, want %v", tc.name, i, mat.Formatted(got), want)
						r, c = 2, 2
					}
				}
			}
		}
		if done, skipped := o.Projections(); done != tc.done || skipped != tc.skipped {
			t.Errorf("%s: Projections() = %d, %d, want %d, %d", tc.name, done, skipped, tc.done, tc.skipped)
		}
	}
}

// TestFrobeniusAndLambdaMinus checks the closed forms that OMDML uses in
// place of forming V = aaᵀ − bbᵀ: ‖V‖²_F = ‖a‖⁴ + ‖b‖⁴ − 2(a·b)² = s² + 2g,
// and λ_min(bbᵀ − aaᵀ) = lambdaMinus(s, g).
func TestFrobeniusAndLambdaMinus(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for k := range 200 {
		n := 1 + k%6
		a, b := make([]float64, n), make([]float64, n)
		for j := range n {
			a[j], b[j] = r.NormFloat64(), r.NormFloat64()
		}
		switch k % 5 { // the edge cases: parallel, equal, zero
		case 1:
			for j := range b {
				b[j] = -2.5 * a[j]
			}
		case 2:
			copy(b, a)
		case 3:
			clear(a)
		}
		va, vb := mat.NewVecDense(n, a), mat.NewVecDense(n, b)
		V := mat.NewSymDense(n, nil)
		V.SymRankOne(V, 1, vb)
		V.SymRankOne(V, -1, va)
		aa, bb, ab := mat.Dot(va, va), mat.Dot(vb, vb), mat.Dot(va, vb)
		s, g := bb-aa, max(0, aa*bb-ab*ab)
		fro := mat.Norm(V, 2)
		if want, got := fro*fro, s*s+2*g; math.Abs(got-want) > 1e-10*max(1, want) {
			t.Errorf("case %d: s² + 2g = %v, ‖V‖²_F = %v", k, got, want)
		}
		if paper := aa*aa + bb*bb - 2*ab*ab; math.Abs(paper-(s*s+2*g)) > 1e-10*max(1, paper) {
			t.Errorf("case %d: ‖a‖⁴ + ‖b‖⁴ − 2(a·b)² = %v, s² + 2g = %v", k, paper, s*s+2*g)
		}
		lo, _ := minEig(t, V)
		if got := lambdaMinus(s, g); math.Abs(got-min(lo, 0)) > 1e-10*max(1, math.Abs(lo)) || got > 0 {
			t.Errorf("case %d: lambdaMinus = %v, λ_min(bbᵀ − aaᵀ) = %v", k, got, lo)
		}
	}
}

// TestProject checks the O(n²)-per-eigenvalue reconstruction against
// QΛ⁺Qᵀ on matrices with several negative eigenvalues, which Update never
// produces but rounding could.
func TestProject(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 5, 12} {
		o, err := NewOMDML([]int{n}, DefaultParams())
		if err != nil {
			t.Fatal(err)
		}
		x := mat.NewSymDense(n, nil)
		for i := range n {
			for j := i; j < n; j++ {
				x.SetSym(i, j, r.NormFloat64())
			}
		}
		o.m[0].CopySym(x)
		o.project(0)

		var e mat.EigenSym
		e.Factorize(x, true)
		var q mat.Dense
		e.VectorsTo(&q)
		vals := e.Values(nil)
		for k := range vals {
			vals[k] = max(vals[k], 0)
		}
		var want mat.Dense
		want.Mul(&q, mat.NewDiagDense(n, vals))
		want.Mul(&want, q.T())
		if !mat.EqualApprox(o.m[0], &want, 1e-10) {
			t.Errorf("n = %d: project = %v, want QΛ⁺Qᵀ = %v", n, mat.Formatted(o.m[0]), mat.Formatted(&want))
		}
		if lo, norm := minEig(t, o.m[0]); lo < -1e-12*max(1, norm) {
			t.Errorf("n = %d: λ_min after projection = %v", n, lo)
		}
	}
}

// TestOMDMLStaysPSD runs OMDML on random data with a large C, so that most
// steps need a projection, and checks after every step that each M_i is PSD
// and that the bound L_i used to skip projections is below λ_min(M_i).
func TestOMDMLStaysPSD(t *testing.T) {
	dims := []int{2, 5, 8}
	p := DefaultParams()
	p.C = 10
	o, err := NewOMDML(dims, p)
	if err != nil {
		t.Fatal(err)
	}
	for k, tr := range uniformTriplets(17, dims, 400) {
		o.Update(tr.p, tr.pos, tr.neg)
		for i := range dims {
			lo, norm := minEig(t, o.m[i])
			if lo < -1e-9*max(1, norm) {
				t.Fatalf("step %d: λ_min(M_%d) = %v (‖M‖ = %v)", k, i, lo, norm)
			}
			if o.lb[i] > lo+1e-9*max(1, norm) {
				t.Fatalf("step %d: bound L_%d = %v above λ_min(M_%d) = %v", k, i, o.lb[i], i, lo)
			}
		}
	}
	done, skipped := o.Projections()
	t.Logf("%d eigendecompositions, %d skipped", done, skipped)
	if done == 0 || skipped == 0 {
		t.Errorf("Projections() = %d, %d: the test should exercise both the projection and the skip", done, skipped)
	}
}

// TestOMDMLMetricIsDistance checks that Distance is Σθ_i d_i with the
// matrices Metric returns.
func TestOMDMLMetricIsDistance(t *testing.T) {
	dims := []int{3, 4}
	p := DefaultParams()
	p.Beta = 0.7
	o, err := NewOMDML(dims, p)
	if err != nil {
		t.Fatal(err)
	}
	stream := uniformTriplets(8, dims, 30)
	for _, tr := range stream {
		o.Update(tr.p, tr.pos, tr.neg)
	}
	x, y := stream[0].p, stream[1].neg
	var want float64
	for i, th := range o.Weights() {
		d := mat.NewVecDense(dims[i], nil)
		d.SubVec(mat.NewVecDense(dims[i], x[i]), mat.NewVecDense(dims[i], y[i]))
		want += th * mat.Inner(d, o.Metric(i), d)
	}
	if got := o.Distance(x, y); math.Abs(got-want) > 1e-12*max(1, want) {
		t.Errorf("Distance = %v, Σθ_i (x−y)ᵀM_i(x−y) = %v", got, want)
	}
}
