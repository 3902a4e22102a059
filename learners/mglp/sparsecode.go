package mglp

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"
)

// codeResult is the solution of one locally linear sparse coding problem.
type codeResult struct {
	w         []float64 // weights over the neighbours, Σ w = 1
	mu        float64   // multiplier of the constraint 1ᵀw = 1
	converged bool
	iters     int // ADMM iterations run
}

// sparseCode solves the paper's Eqs. (3)–(4) for the point x over its
// neighbours nbrs (rows of X, nearest first):
//
//	min_w  ½‖x − Σ_j w_j x_j‖² / σ² + τ Σ_j s_j |w_j|   s.t.  Σ_j w_j = 1,
//
// with s_j = ‖x − x_j‖ / Σ_k ‖x − x_k‖ (the paper's weights) and σ² the mean
// of ‖x − x_j‖² over the neighbours (package doc: τ is relative to the
// local scale; the paper's τ is τσ²). With the constraint,
// x − Σ w_j x_j = −Σ w_j δ_j for δ_j = x_j − x, so only the K×K Gram matrix
// G = ΔᵀΔ/σ² is needed.
//
// The paper uses a homotopy solver; any solver of this convex problem will
// do, and solveCode uses ADMM.
func sparseCode(X *mat.Dense, i int, nbrs []int, tau float64, maxIter int, tol float64) codeResult {
	k := len(nbrs)
	_, d := X.Dims()
	x := X.RawRowView(i)
	delta := make([][]float64, k)
	dist := make([]float64, k)
	var sumDist, sumSq float64
	for a, j := range nbrs {
		row := X.RawRowView(j)
		dl := make([]float64, d)
		var sq float64
		for c := range d {
			dl[c] = row[c] - x[c]
			sq += dl[c] * dl[c]
		}
		delta[a] = dl
		dist[a] = math.Sqrt(sq)
		sumDist += dist[a]
		sumSq += sq
	}
	sigma2 := sumSq / float64(k)
	if sigma2 == 0 {
		sigma2 = 1 // every neighbour duplicates x: any weights reconstruct it
	}
	G := make([]float64, k*k)
	for a := range k {
		for b := a; b < k; b++ {
			var s float64
			for c := range d {
				s += delta[a][c] * delta[b][c]
			}
			s /= sigma2
			G[a*k+b], G[b*k+a] = s, s
		}
	}
	s := make([]float64, k)
	if sumDist > 0 {
		for a := range k {
			s[a] = dist[a] / sumDist
		}
	}
	return solveCode(G, s, tau, maxIter, tol)
}

// solveCode minimises ½wᵀGw + Σ_j t_j|w_j| (t_j = τ s_j) subject to
// 1ᵀw = 1 for the k×k PSD matrix G (row-major) by ADMM on the split w = z
// (Boyd et al., "Distributed optimization and statistical learning via
// ADMM", 2011):
//
//	w ← argmin_{1ᵀw=1} ½wᵀGw + (ρ/2)‖w − z + u‖²   (a k×k solve with G + ρI, definite even when G is singular)
//	z ← soft-threshold(w + u, t/ρ)                 (exact zeros: the sparse code)
//	u ← u + w − z
//
// with ρ adapted by residual balancing. At a fixed point, Gz + ν1 = −ρu with
// ρu_j = t_j sign(z_j) where z_j ≠ 0 and |ρu_j| ≤ t_j elsewhere, which are
// the problem's KKT conditions with ν the multiplier of 1ᵀw = 1. It stops
// when the primal residual ‖w − z‖ and the dual residual ρ‖z − z_prev‖ are
// both ≤ tol, or after maxIter iterations, and returns z rescaled to sum to
// exactly 1.
func solveCode(G, s []float64, tau float64, maxIter int, tol float64) codeResult {
	k := len(s)
	var meanDiag float64
	for a := range k {
		meanDiag += G[a*k+a]
	}
	meanDiag /= float64(k)
	// ρ of the order of G's curvature balances the two ADMM blocks.
	rho := math.Max(meanDiag, 1e-6)

	// Hinv = (G + ρI)⁻¹, explicit: k is small (tens), and a k×k
	// matrix-vector product per iteration is cheaper than two triangular
	// solves. h1 = Hinv·1 and c1 = 1ᵀh1 give the multiplier in closed form.
	Hinv := make([]float64, k*k)
	h1 := make([]float64, k)
	var c1 float64
	factor := func() bool {
		H := mat.NewSymDense(k, nil)
		for a := range k {
			for b := a; b < k; b++ {
				H.SetSym(a, b, G[a*k+b])
			}
			H.SetSym(a, a, G[a*k+a]+rho)
		}
		var chol mat.Cholesky
		if !chol.Factorize(H) {
			return false
		}
		var inv mat.SymDense
		if err := chol.InverseTo(&inv); err != nil {
			var cond mat.Condition
			if !errors.As(err, &cond) {
				return false
			}
		}
		c1 = 0
		for a := range k {
			h1[a] = 0
			for b := range k {
				v := inv.At(a, b)
				Hinv[a*k+b] = v
				h1[a] += v
			}
			c1 += h1[a]
		}
		return c1 > 0
	}
	if !factor() {
		w := make([]float64, k)
		w[0] = 1
		return codeResult{w: w}
	}

	w := make([]float64, k)
	z := make([]float64, k)
	zOld := make([]float64, k)
	u := make([]float64, k)
	rhs := make([]float64, k)
	z[0] = 1 // the nearest neighbour alone is feasible
	var nu float64
	converged := false
	it := 0
	for it < maxIter {
		it++
		for a := range k {
			rhs[a] = rho * (z[a] - u[a])
		}
		// w = Hinv(ρ(z − u) − ν1) with ν chosen so that 1ᵀw = 1.
		var sumHr float64
		for a := range k {
			row := Hinv[a*k : (a+1)*k]
			var v float64
			for b, r := range rhs {
				v += row[b] * r
			}
			w[a] = v
			sumHr += v
		}
		nu = (sumHr - 1) / c1
		for a := range k {
			w[a] -= nu * h1[a]
		}
		copy(zOld, z)
		var prim, dual float64
		for a := range k {
			v := w[a] + u[a]
			t := tau * s[a] / rho
			switch {
			case v > t:
				z[a] = v - t
			case v < -t:
				z[a] = v + t
			default:
				z[a] = 0
			}
			u[a] += w[a] - z[a]
			prim += (w[a] - z[a]) * (w[a] - z[a])
			dual += (z[a] - zOld[a]) * (z[a] - zOld[a])
		}
		prim, dual = math.Sqrt(prim), rho*math.Sqrt(dual)
		if prim <= tol && dual <= tol {
			converged = true
			break
		}
		// Residual balancing (Boyd et al. §3.4.1): u is the scaled dual
		// variable, so it scales inversely with ρ.
		if it%10 == 0 && (prim > 10*dual || dual > 10*prim) {
			f := 2.0
			if dual > prim {
				f = 0.5
			}
			rho *= f
			for a := range u {
				u[a] /= f
			}
			if !factor() {
				break
			}
		}
	}
	var sum float64
	for _, v := range z {
		sum += v
	}
	if !converged && (sum < 0.5 || sum > 1.5) {
		// Far from feasible: fall back to the nearest neighbour alone,
		// which is feasible; the caller counts the point as unconverged.
		clear(z)
		z[0], sum = 1, 1
	}
	normalise(z, sum)
	return codeResult{w: z, mu: nu, converged: converged, iters: it}
}

func normalise(w []float64, sum float64) {
	if sum == 0 {
		return
	}
	for j := range w {
		w[j] /= sum
	}
}
