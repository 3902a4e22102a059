package omdml

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestLOMDMLHandComputed checks one step on 2-d data with W₀ = I (r = n):
// a = (−1, 0), b = (0, −0.5), f = 1 − 0.25 = 0.75, loss = 1.75, and
// W − 2η(Wa)aᵀ + 2η(Wb)bᵀ = I − 0.2·diag(1, 0) + 0.2·diag(0, 0.25)
// = diag(0.8, 1.05) for η = 0.1.
func TestLOMDMLHandComputed(t *testing.T) {
	p := DefaultParams()
	p.Eta = 0.1
	l, err := NewLOMDML([]int{2}, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Update(Sample{{0, 0}}, Sample{{1, 0}}, Sample{{0, 0.5}}); math.Abs(got-1.75) > 1e-15 {
		t.Errorf("loss = %v, want 1.75", got)
	}
	want := mat.NewDense(2, 2, []float64{0.8, 0, 0, 1.05})
	if got := l.Projection(0); !mat.EqualApprox(got, want, 1e-15) {
		t.Errorf("W = %v, want %v", mat.Formatted(got), mat.Formatted(want))
	}
}

// paperGradient is ∂f/∂W for f(W) = ‖W(p − p⁺)‖² − ‖W(p − p⁻)‖², in the
// form the paper gives (the equation before its Eq. (7)):
// 2(q⁻ − q⁺)pᵀ + 2(q⁺ − q)p⁺ᵀ + 2(q − q⁻)p⁻ᵀ.
func paperGradient(w *mat.Dense, p, pos, neg []float64) *mat.Dense {
	r, n := w.Dims()
	var q, qp, qn mat.VecDense
	q.MulVec(w, mat.NewVecDense(n, p))
	qp.MulVec(w, mat.NewVecDense(n, pos))
	qn.MulVec(w, mat.NewVecDense(n, neg))
	g := mat.NewDense(r, n, nil)
	term := func(x, y *mat.VecDense, v []float64) {
		var d mat.VecDense
		d.SubVec(x, y)
		g.RankOne(g, 2, &d, mat.NewVecDense(n, v))
	}
	term(&qn, &qp, p)
	term(&qp, &q, pos)
	term(&q, &qn, neg)
	return g
}

func fOf(w *mat.Dense, p, pos, neg []float64) float64 {
	return projDist(w.RawMatrix(), p, pos) - projDist(w.RawMatrix(), p, neg)
}

// TestLOMDMLGradient checks the gradient three ways: the paper's formula
// against central finite differences of f (exact up to rounding, since f is
// quadratic in W), and one Update against W − η·(that gradient).
func TestLOMDMLGradient(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, sz := range []struct{ r, n int }{{1, 1}, {2, 5}, {3, 3}, {4, 9}} {
		w := mat.NewDense(sz.r, sz.n, nil)
		for i := range sz.r {
			for j := range sz.n {
				w.Set(i, j, r.NormFloat64())
			}
		}
		vecs := make([][]float64, 3)
		for k := range vecs {
			vecs[k] = make([]float64, sz.n)
			for j := range vecs[k] {
				vecs[k][j] = r.NormFloat64()
			}
		}
		p, pos, neg := vecs[0], vecs[1], vecs[2]
		g := paperGradient(w, p, pos, neg)

		const h = 1e-5
		fd := mat.NewDense(sz.r, sz.n, nil)
		wh := mat.DenseCopyOf(w)
		for i := range sz.r {
			for j := range sz.n {
				x := w.At(i, j)
				wh.Set(i, j, x+h)
				fp := fOf(wh, p, pos, neg)
				wh.Set(i, j, x-h)
				fm := fOf(wh, p, pos, neg)
				wh.Set(i, j, x)
				fd.Set(i, j, (fp-fm)/(2*h))
			}
		}
		if !mat.EqualApprox(g, fd, 1e-6*max(1, mat.Norm(g, math.Inf(1)))) {
			t.Errorf("%d×%d: gradient %v, finite differences %v", sz.r, sz.n, mat.Formatted(g), mat.Formatted(fd))
		}

		// Update with one modality whose W is w, and γ large enough that
		// ℓ > 0, must step by exactly −η·g (up to rounding).
		prm := DefaultParams()
		prm.Gamma = 1e6
		prm.Eta = 0.01
		prm.Rank = sz.r
		l, err := NewLOMDML([]int{sz.n}, prm)
		if err != nil {
			t.Fatal(err)
		}
		if rr, _ := l.w[0].Dims(); rr != sz.r {
			t.Fatalf("rank %d gave %d rows", sz.r, rr)
		}
		l.w[0].Copy(w)
		l.Update(Sample{p}, Sample{pos}, Sample{neg})
		var want mat.Dense
		want.Scale(-prm.Eta, g)
		want.Add(w, &want)
		if got := l.Projection(0); !mat.EqualApprox(got, &want, 1e-12*max(1, mat.Norm(&want, math.Inf(1)))) {
			t.Errorf("%d×%d: Update gave W = %v, want W − ηg = %v", sz.r, sz.n, mat.Formatted(got), mat.Formatted(&want))
		}
	}
}

// TestLOMDMLInit checks W₀: the identity when the rank reaches n, otherwise
// a seeded Gaussian projection with E[W₀ᵀW₀] = I whose draws depend only on
// the seed and the modality's index and size.
func TestLOMDMLInit(t *testing.T) {
	p := DefaultParams()
	p.Rank = 8
	l, err := NewLOMDML([]int{8, 3, 400}, p)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range []int{8, 3} {
		if !mat.Equal(l.Projection(i), eye(n)) {
			t.Errorf("modality %d: rank ≥ n, W₀ = %v, want I", i, mat.Formatted(l.Projection(i)))
		}
	}
	w := l.Projection(2)
	if r, c := w.Dims(); r != 8 || c != 400 {
		t.Fatalf("W₀ is %d×%d, want 8×400", r, c)
	}
	// diag(W₀ᵀW₀) averages r draws of N(0, 1/r)²: mean 1, and over 400
	// columns the average is within a few 1/√(400·r/2) = 0.025 of 1.
	m := l.Metric(2)
	var diag float64
	for j := range 400 {
		diag += m.At(j, j) / 400
	}
	if math.Abs(diag-1) > 0.1 {
		t.Errorf("mean diagonal of W₀ᵀW₀ = %v, want ≈ 1", diag)
	}

	other, err := NewLOMDML([]int{5, 400}, p) // modality 2 is now modality 1
	if err != nil {
		t.Fatal(err)
	}
	same, err := NewLOMDML([]int{1, 1, 400}, p)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(same.Projection(2), w) {
		t.Error("W₀ of modality 2 depends on the other modalities' sizes")
	}
	if mat.Equal(other.Projection(1), w) {
		t.Error("W₀ does not depend on the modality's index")
	}
	p.Seed++
	reseeded, err := NewLOMDML([]int{8, 3, 400}, p)
	if err != nil {
		t.Fatal(err)
	}
	if mat.Equal(reseeded.Projection(2), w) {
		t.Error("W₀ does not depend on the seed")
	}
}

func eye(n int) *mat.Dense {
	m := mat.NewDense(n, n, nil)
	for i := range n {
		m.Set(i, i, 1)
	}
	return m
}

// TestLOMDMLMetricIsDistance checks that Distance is Σθ_i ‖W_i(x − y)‖² =
// Σθ_i (x − y)ᵀ W_iᵀW_i (x − y) with what Projection and Metric return.
func TestLOMDMLMetricIsDistance(t *testing.T) {
	dims := []int{3, 9}
	p := DefaultParams()
	p.Rank = 4
	p.Beta = 0.7
	l, err := NewLOMDML(dims, p)
	if err != nil {
		t.Fatal(err)
	}
	stream := uniformTriplets(8, dims, 30)
	for _, tr := range stream {
		l.Update(tr.p, tr.pos, tr.neg)
	}
	x, y := stream[0].p, stream[1].neg
	var viaW, viaM float64
	for i, th := range l.Weights() {
		d := mat.NewVecDense(dims[i], nil)
		d.SubVec(mat.NewVecDense(dims[i], x[i]), mat.NewVecDense(dims[i], y[i]))
		var q mat.VecDense
		q.MulVec(l.Projection(i), d)
		viaW += th * mat.Dot(&q, &q)
		viaM += th * mat.Inner(d, l.Metric(i), d)
	}
	got := l.Distance(x, y)
	if math.Abs(got-viaW) > 1e-12*max(1, viaW) || math.Abs(got-viaM) > 1e-10*max(1, viaM) {
		t.Errorf("Distance = %v, via W = %v, via M = %v", got, viaW, viaM)
	}
}
