package itq

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// centre returns a copy of X with its column means subtracted, and the
// means.
func centre(X *mat.Dense) (*mat.Dense, []float64) {
	n, d := X.Dims()
	mean := make([]float64, d)
	for i := range n {
		for j, v := range X.RawRowView(i) {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	C := mat.NewDense(n, d, nil)
	for i := range n {
		row, dst := X.RawRowView(i), C.RawRowView(i)
		for j, v := range row {
			dst[j] = v - mean[j]
		}
	}
	return C, mean
}

// covariance returns AᵀA/n + ρI with ρ = reg·tr(AᵀA/n)/d, for the n×d
// matrix A, and ρ. The ridge is relative to the mean variance so that reg is
// scale-free (package doc, CCA-ITQ).
func covariance(A *mat.Dense, reg float64) (*mat.SymDense, float64) {
	n, d := A.Dims()
	C := mat.NewSymDense(d, nil)
	C.SymOuterK(1/float64(n), A.T())
	rho := reg * C.Trace() / float64(d)
	for i := range d {
		C.SetSym(i, i, C.At(i, i)+rho)
	}
	return C, rho
}

// genEigSym solves the symmetric-definite generalized eigenproblem
// A v = λ B v (B positive definite) through the Cholesky factor B = UᵀU:
// U⁻ᵀ A U⁻¹ z = λ z, v = U⁻¹ z. It returns the eigenvalues in ascending
// order and the B-orthonormal eigenvectors (Vᵀ B V = I) as the columns of V
// in the same order.
func genEigSym(A, B *mat.SymDense) ([]float64, *mat.Dense, error) {
	n := A.SymmetricDim()
	if B.SymmetricDim() != n {
		return nil, nil, fmt.Errorf("generalized eigenproblem: A is %d×%d but B is %d×%d", n, n, B.SymmetricDim(), B.SymmetricDim())
	}
	var chol mat.Cholesky
	if !chol.Factorize(B) {
		return nil, nil, errors.New("generalized eigenproblem: B is not positive definite (increase the regularisation)")
	}
	var U mat.TriDense
	chol.UTo(&U)
	u := U.RawTriangular()

	// T = U⁻ᵀ A, then C = U⁻ᵀ Tᵀ = U⁻ᵀ A U⁻¹ (A symmetric).
	T := mat.DenseCopyOf(A)
	blas64.Trsm(blas.Left, blas.Trans, 1, u, T.RawMatrix())
	Ct := mat.DenseCopyOf(T.T())
	blas64.Trsm(blas.Left, blas.Trans, 1, u, Ct.RawMatrix())
	C := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			// Symmetrise: rounding leaves C very slightly asymmetric.
			C.SetSym(i, j, (Ct.At(i, j)+Ct.At(j, i))/2)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(C, true) {
		return nil, nil, errors.New("generalized eigenproblem: symmetric eigendecomposition did not converge")
	}
	vals := eig.Values(nil)
	var V mat.Dense
	eig.VectorsTo(&V)
	blas64.Trsm(blas.Left, blas.NoTrans, 1, u, V.RawMatrix())
	return vals, &V, nil
}

// topColumns returns the columns of V at positions idx, in that order,
// each multiplied by scale[k] when scale is not nil.
func topColumns(V *mat.Dense, idx []int, scale []float64) *mat.Dense {
	r, _ := V.Dims()
	W := mat.NewDense(r, len(idx), nil)
	for k, j := range idx {
		s := 1.0
		if scale != nil {
			s = scale[k]
		}
		for i := range r {
			W.Set(i, k, s*V.At(i, j))
		}
	}
	return W
}
