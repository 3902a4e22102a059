package mglp

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func randomDense(rng *rand.Rand, r, c int) *mat.Dense {
	X := mat.NewDense(r, c, nil)
	for i := range r {
		for j := range c {
			X.Set(i, j, rng.NormFloat64())
		}
	}
	return X
}

// TestSparseCodeKKT checks that the sparse code of a point satisfies the
// optimality conditions of Eqs. (3)–(4) (with the σ² scaling of the
// package doc): with g = Gw and the multiplier μ of Σw = 1,
// g_j + μ + t_j sign(w_j) = 0 where w_j ≠ 0 and |g_j + μ| ≤ t_j elsewhere,
// t_j = τ s_j.
func TestSparseCodeKKT(t *testing.T) {
	tests := []struct {
		name       string
		k, d       int
		tau        float64
		duplicates int // neighbours equal to the point
	}{
		{"full rank", 6, 10, 0.5, 0},
		{"more neighbours than dimensions", 20, 5, 1, 0},
		{"no penalty", 10, 12, 0, 0},
		{"heavy penalty", 10, 8, 50, 0},
		{"duplicate neighbour", 8, 6, 1, 1},
		{"all duplicates", 4, 3, 1, 4},
	}
	for ti, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ti), 7))
			X := randomDense(rng, tc.k+1, tc.d)
			for a := 1; a <= tc.duplicates; a++ {
				X.SetRow(a, X.RawRowView(0))
			}
			nbrs := make([]int, tc.k)
			for a := range nbrs {
				nbrs[a] = a + 1
			}
			r := sparseCode(X, 0, nbrs, tc.tau, 20000, 1e-11)
			if !r.converged {
				t.Fatalf("did not converge in %d iterations", r.iters)
			}

			// The problem, rebuilt from its definition.
			x := X.RawRowView(0)
			dist := make([]float64, tc.k)
			var sumDist, sumSq float64
			delta := mat.NewDense(tc.d, tc.k, nil)
			for a, j := range nbrs {
				for c := range tc.d {
					delta.Set(c, a, X.At(j, c)-x[c])
				}
				dist[a] = mat.Norm(delta.ColView(a), 2)
				sumDist += dist[a]
				sumSq += dist[a] * dist[a]
			}
			sigma2 := sumSq / float64(tc.k)
			if sigma2 == 0 {
				sigma2 = 1
			}
			tj := make([]float64, tc.k)
			for a := range tj {
				if sumDist > 0 {
					tj[a] = tc.tau * dist[a] / sumDist
				}
			}
			w := mat.NewVecDense(tc.k, r.w)
			if s := mat.Sum(w); math.Abs(s-1) > 1e-12 {
				t.Fatalf("Σw = %v, want 1", s)
			}
			var res, g mat.VecDense
			res.MulVec(delta, w)
			g.MulVec(delta.T(), &res)
			g.ScaleVec(1/sigma2, &g)

			var support []int
			var mu float64
			for a := range tc.k {
				if r.w[a] != 0 {
					support = append(support, a)
					mu -= g.AtVec(a) + tj[a]*math.Copysign(1, r.w[a])
				}
			}
			mu /= float64(len(support))
			const tol = 1e-6
			for a := range tc.k {
				ga := g.AtVec(a) + mu
				if r.w[a] != 0 {
					if v := ga + tj[a]*math.Copysign(1, r.w[a]); math.Abs(v) > tol {
						t.Errorf("w[%d] = %.4g ≠ 0 but g + μ + t·sign(w) = %.3g", a, r.w[a], v)
					}
				} else if math.Abs(ga) > tj[a]+tol {
					t.Errorf("w[%d] = 0 but |g + μ| = %.4g > t = %.4g", a, math.Abs(ga), tj[a])
				}
			}
			t.Logf("%d of %d weights non-zero, %d iterations", len(support), tc.k, r.iters)
			if tc.name == "heavy penalty" && len(support) > tc.k/2 {
				t.Errorf("τ = %v left %d of %d weights non-zero", tc.tau, len(support), tc.k)
			}
		})
	}
}

func TestNeighbors(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	X := randomDense(rng, 150, 6)
	X.SetRow(7, X.RawRowView(3)) // a duplicate: distance 0, tie with nothing
	const k = 9
	exact, err := neighbors(X, k, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	approx, err := neighbors(X, k, 16, 1)
	if err != nil {
		t.Fatal(err)
	}
	dist := func(i, j int) float64 {
		var s float64
		for c := range 6 {
			d := X.At(i, c) - X.At(j, c)
			s += d * d
		}
		return s
	}
	var recall float64
	for i := range 150 {
		// The reference: sort every other row by (distance, index).
		var all []int
		for j := range 150 {
			if j != i {
				all = append(all, j)
			}
		}
		slices.SortStableFunc(all, func(a, b int) int {
			da, db := dist(i, a), dist(i, b)
			switch {
			case da < db-1e-9:
				return -1
			case da > db+1e-9:
				return 1
			}
			return 0
		})
		if !slices.Equal(exact[i], all[:k]) {
			t.Fatalf("row %d: exact neighbours %v, want %v", i, exact[i], all[:k])
		}
		got := approx[i]
		if len(got) != k || slices.Contains(got, i) {
			t.Fatalf("row %d: approximate neighbours %v: want %d rows, not itself", i, got, k)
		}
		for a := 1; a < k; a++ {
			if dist(i, got[a]) < dist(i, got[a-1]) {
				t.Fatalf("row %d: approximate neighbours %v not sorted by distance", i, got)
			}
		}
		for _, j := range got {
			if slices.Contains(all[:k], j) {
				recall++
			}
		}
	}
	if exact[3][0] != 7 || exact[7][0] != 3 {
		t.Errorf("duplicates are not each other's nearest neighbour: %v, %v", exact[3], exact[7])
	}
	recall /= 150 * k
	t.Logf("16-bit LSH neighbour recall@%d: %.2f", k, recall)
	if recall < 0.5 {
		t.Errorf("approximate neighbours recall %.2f < 0.5", recall)
	}
}

// TestEigenproblemMatchesPaper builds the paper's matrices explicitly —
// M_x = (I − W)ᵀ(I − W)/n, M_G and M_C of Eqs. (22) and (24), Q of Eq. (20)
// — and checks that the whitened solution Train uses solves the
// generalized eigenproblem (QMQᵀ) p = ν (QQᵀ) p with PᵀQQᵀP = nI.
func TestEigenproblemMatchesPaper(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	const n, dx, dy = 60, 5, 4
	const lambda, eta = 0.3, 2.0
	Xc, _ := centre(randomDense(rng, n, dx))
	Yc, _ := centre(randomDense(rng, n, dy))
	p := DefaultParams()
	p.Neighbors, p.LSHBits = 8, 0
	mx, err := newModality(Xc, p, 1)
	if err != nil {
		t.Fatal(err)
	}
	my, err := newModality(Yc, p, 2)
	if err != nil {
		t.Fatal(err)
	}
	if mx.dim() != dx || my.dim() != dy {
		t.Fatalf("directions dropped from full-rank data: kept %d and %d", mx.dim(), my.dim())
	}
	var eig mat.EigenSym
	if !eig.Factorize(jointMatrix(mx, my, lambda, eta), true) {
		t.Fatal("eigendecomposition failed")
	}
	vals := eig.Values(nil)
	var Z mat.Dense
	eig.VectorsTo(&Z)
	T := mat.NewDense(dx+dy, dx+dy, nil)
	T.Slice(0, dx, 0, dx).(*mat.Dense).Copy(mx.whiten)
	T.Slice(dx, dx+dy, dx, dx+dy).(*mat.Dense).Copy(my.whiten)
	var P mat.Dense
	P.Mul(T, &Z)

	laplace := func(m *modality) *mat.Dense {
		IW := mat.NewDense(n, n, nil)
		for i := range n {
			IW.Set(i, i, 1)
			for a, j := range m.nbrs[i] {
				IW.Set(i, j, IW.At(i, j)-m.weights[i][a])
			}
		}
		var M mat.Dense
		M.Mul(IW.T(), IW)
		M.Scale(1/float64(n), &M)
		return &M
	}
	M := mat.NewDense(2*n, 2*n, nil)
	Mx, My := laplace(mx), laplace(my)
	for i := range n {
		for j := range n {
			M.Set(i, j, lambda*Mx.At(i, j))
			M.Set(n+i, n+j, (1-lambda)*My.At(i, j))
		}
		// M_C = (η/n)(I_2n − W_C), W_C = [[0, I], [I, 0]].
		M.Set(i, i, M.At(i, i)+eta/n)
		M.Set(n+i, n+i, M.At(n+i, n+i)+eta/n)
		M.Set(i, n+i, -eta/n)
		M.Set(n+i, i, -eta/n)
	}
	Q := mat.NewDense(dx+dy, 2*n, nil) // blockdiag(X̃ᵀ, Ỹᵀ) in the paper's orientation
	Q.Slice(0, dx, 0, n).(*mat.Dense).Copy(Xc.T())
	Q.Slice(dx, dx+dy, n, 2*n).(*mat.Dense).Copy(Yc.T())
	var QM, Abig, Bbig mat.Dense
	QM.Mul(Q, M)
	Abig.Mul(&QM, Q.T())
	Bbig.Mul(Q, Q.T())

	var AP, BP, PBP mat.Dense
	AP.Mul(&Abig, &P)
	BP.Mul(&Bbig, &P)
	for c := range dx + dy {
		nu := vals[c] / n
		for r := range dx + dy {
			if diff := AP.At(r, c) - nu*BP.At(r, c); math.Abs(diff) > 1e-9*(1+math.Abs(AP.At(r, c))) {
				t.Fatalf("eigenpair %d: (QMQᵀp − ν QQᵀp)[%d] = %v", c, r, diff)
			}
		}
	}
	PBP.Mul(P.T(), &BP)
	for i := range dx + dy {
		for j := range dx + dy {
			want := 0.0
			if i == j {
				want = n
			}
			if math.Abs(PBP.At(i, j)-want) > 1e-9*n {
				t.Fatalf("PᵀQQᵀP[%d,%d] = %v, want %v", i, j, PBP.At(i, j), want)
			}
		}
	}
}
