package itq

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Options are the settings shared by Train, TrainCCA and TrainLSH.
type Options struct {
	// Iterations (≥ 0) is the number of ITQ alternations between B and R;
	// the paper uses 50. With 0 the rotation stays the random R₀.
	Iterations int
	// Seed seeds the random orthogonal R₀ (and the projections of
	// TrainLSH): the same data, options and seed give the same model.
	Seed uint64
	// Reg (≥ 0) is the CCA ridge relative to each view's mean variance
	// (package doc, CCA-ITQ). Train and TrainLSH ignore it.
	Reg float64
}

// DefaultOptions returns the paper's settings: 50 iterations, seed 1, and a
// relative CCA ridge of 10⁻⁴ (the authors' reference code adds 10⁻⁴ to the
// covariances, which is the same order for unit-variance features).
func DefaultOptions() Options { return Options{Iterations: 50, Seed: 1, Reg: 1e-4} }

// Validate reports every option out of range.
func (o Options) Validate() error {
	var errs []error
	if o.Iterations < 0 {
		errs = append(errs, fmt.Errorf("itq: Iterations must be >= 0, got %d", o.Iterations))
	}
	if math.IsNaN(o.Reg) || math.IsInf(o.Reg, 0) || o.Reg < 0 {
		errs = append(errs, fmt.Errorf("itq: Reg must be finite and >= 0, got %v", o.Reg))
	}
	return errors.Join(errs...)
}

// Model is a learned linear binary encoder: the code of x is
// sign(Pᵀ(x − μ)) packed into a Code, with P the d×c projection (for ITQ
// and CCA-ITQ, P = W R). A Model is immutable and safe for concurrent use.
type Model struct {
	kind   string
	mean   []float64  // μ, length d
	proj   *mat.Dense // P, d×c
	rot    *mat.Dense // R, c×c; nil for LSH
	loss   []float64  // ‖B − VR‖²_F after each iteration
	corr   []float64  // canonical correlations of the kept directions (CCA-ITQ)
	bits   int
	inputD int
}

// Kind names the method that trained the model: "itq", "cca-itq" or "lsh".
func (m *Model) Kind() string { return m.kind }

// Bits returns the code length c.
func (m *Model) Bits() int { return m.bits }

// Dim returns the feature dimension d that Encode expects.
func (m *Model) Dim() int { return m.inputD }

// Mean returns a copy of the training mean μ subtracted before projecting.
func (m *Model) Mean() []float64 { return slices.Clone(m.mean) }

// Projection returns a copy of the d×c projection P (codes are
// sign(Pᵀ(x − μ))).
func (m *Model) Projection() *mat.Dense { return mat.DenseCopyOf(m.proj) }

// Rotation returns a copy of the learned c×c orthogonal rotation R, or nil
// for an LSH model, which has none.
func (m *Model) Rotation() *mat.Dense {
	if m.rot == nil {
		return nil
	}
	return mat.DenseCopyOf(m.rot)
}

// Loss returns the quantisation loss ‖B − VR‖²_F after each ITQ iteration
// (non-increasing; package doc). It is empty for LSH and for 0 iterations.
func (m *Model) Loss() []float64 { return slices.Clone(m.loss) }

// Correlations returns the canonical correlations r of the c directions a
// CCA-ITQ model keeps, largest first; nil for other models.
func (m *Model) Correlations() []float64 { return slices.Clone(m.corr) }

// Encode returns the code of x in dst (reused when its capacity suffices,
// package doc, Codes). It panics if len(x) != Dim(), as gonum does on a
// dimension mismatch.
func (m *Model) Encode(x []float64, dst Code) Code {
	if len(x) != m.inputD {
		panic(fmt.Sprintf("itq: Encode of a %d-vector with a model of dimension %d", len(x), m.inputD))
	}
	return Pack(projectTo(make([]float64, m.bits), x, m.mean, m.proj), dst)
}

// EncodeAll encodes every row of X. The codes share one backing array.
func (m *Model) EncodeAll(X *mat.Dense) ([]Code, error) {
	return encodeAll(X, m.mean, m.proj)
}

// projectTo writes Pᵀ(x − μ) into v, which has length c. Encode and
// Dense.Item both compute the projections here, so that the signs of Item
// are the code bit for bit.
func projectTo(v, x, mean []float64, P *mat.Dense) []float64 {
	clear(v)
	for i, xi := range x {
		xi -= mean[i]
		if xi == 0 {
			continue
		}
		for j, p := range P.RawRowView(i) {
			v[j] += xi * p
		}
	}
	return v
}

// encodeAll returns sign((X − 1μᵀ)P) row by row as packed codes.
func encodeAll(X *mat.Dense, mean []float64, P *mat.Dense) ([]Code, error) {
	n, d := X.Dims()
	pd, c := P.Dims()
	if d != pd {
		return nil, fmt.Errorf("itq: encode: data has %d columns, model dimension is %d", d, pd)
	}
	Xc := mat.NewDense(n, d, nil)
	for i := range n {
		dst := Xc.RawRowView(i)
		for j, v := range X.RawRowView(i) {
			dst[j] = v - mean[j]
		}
	}
	var V mat.Dense
	V.Mul(Xc, P)
	w := Words(c)
	backing := make([]uint64, n*w)
	codes := make([]Code, n)
	for i := range n {
		codes[i] = Pack(V.RawRowView(i), backing[i*w:(i+1)*w:(i+1)*w])
	}
	return codes, nil
}

// checkData validates a training matrix and a code length.
func checkData(X *mat.Dense, bits int) (n, d int, err error) {
	if X == nil {
		return 0, 0, errors.New("itq: nil data matrix")
	}
	n, d = X.Dims()
	if n < 2 {
		return n, d, fmt.Errorf("itq: need at least 2 training rows, got %d", n)
	}
	if bits < 1 || bits > d {
		return n, d, fmt.Errorf("itq: bits must be in [1, %d] (the feature dimension), got %d", d, bits)
	}
	for i := range n {
		for j, v := range X.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return n, d, fmt.Errorf("itq: X[%d,%d] = %v is not finite", i, j, v)
			}
		}
	}
	return n, d, nil
}

// Train learns an ITQ model with the given code length from the rows of X
// (n×d): PCA to c = bits directions, then the learned rotation (package doc).
// It needs n ≥ 2 and 1 ≤ bits ≤ d.
func Train(X *mat.Dense, bits int, opt Options) (*Model, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	_, d, err := checkData(X, bits)
	if err != nil {
		return nil, err
	}
	Xc, mean := centre(X)
	cov, _ := covariance(Xc, 0)
	var eig mat.EigenSym
	if !eig.Factorize(cov, true) {
		return nil, errors.New("itq: PCA: eigendecomposition of the covariance did not converge")
	}
	var E mat.Dense
	eig.VectorsTo(&E)
	// EigenSym sorts ascending; the principal directions are the last ones.
	idx := make([]int, bits)
	for k := range idx {
		idx[k] = d - 1 - k
	}
	W := topColumns(&E, idx, nil)
	return fit("itq", Xc, mean, W, nil, opt)
}

// TrainCCA learns a CCA-ITQ model from the rows of X (n×d, image features)
// and Y (n×t, labels or tags of the same images, e.g. one-hot class
// indicators or a bag of tags): the c = bits image directions of largest
// canonical correlation with Y, each scaled by its correlation, then the
// learned rotation (package doc). Only X is needed to encode. Directions
// beyond the rank of the cross-covariance (at most t, or t − 1 for one-hot
// labels) have correlation ≈ 0 and carry little information.
func TrainCCA(X, Y *mat.Dense, bits int, opt Options) (*Model, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	n, _, err := checkData(X, bits)
	if err != nil {
		return nil, err
	}
	if Y == nil {
		return nil, errors.New("itq: CCA: nil label matrix Y")
	}
	ny, _ := Y.Dims()
	if ny != n {
		return nil, fmt.Errorf("itq: CCA: X has %d rows but Y has %d", n, ny)
	}
	for i := range ny {
		for j, v := range Y.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("itq: CCA: Y[%d,%d] = %v is not finite", i, j, v)
			}
		}
	}
	if opt.Reg == 0 {
		// Without a ridge C_yy is singular for one-hot labels (their
		// centred columns sum to zero), and C_xx whenever n ≤ d.
		return nil, errors.New("itq: CCA needs Reg > 0")
	}
	Xc, mean := centre(X)
	Yc, _ := centre(Y)
	Cxx, _ := covariance(Xc, opt.Reg)
	Cyy, _ := covariance(Yc, opt.Reg)
	var Cxy mat.Dense
	Cxy.Mul(Xc.T(), Yc)
	Cxy.Scale(1/float64(n), &Cxy)

	var chol mat.Cholesky
	if !chol.Factorize(Cyy) {
		return nil, errors.New("itq: CCA: label covariance is not positive definite (increase Reg)")
	}
	var S mat.Dense // C_yy⁻¹ C_yx, t×d
	if err := chol.SolveTo(&S, Cxy.T()); err != nil {
		return nil, fmt.Errorf("itq: CCA: solving with the label covariance: %w", err)
	}
	var K mat.Dense // C_xy C_yy⁻¹ C_yx, d×d
	K.Mul(&Cxy, &S)
	Ks := symmetrise(&K)
	vals, V, err := genEigSym(Ks, Cxx)
	if err != nil {
		return nil, fmt.Errorf("itq: CCA: %w", err)
	}
	d := len(vals)
	idx := make([]int, bits)
	corr := make([]float64, bits)
	for k := range idx {
		idx[k] = d - 1 - k
		// The eigenvalues are r²; rounding can leave tiny negatives.
		corr[k] = math.Sqrt(math.Max(vals[d-1-k], 0))
	}
	W := topColumns(V, idx, corr)
	return fit("cca-itq", Xc, mean, W, corr, opt)
}

// symmetrise returns (K + Kᵀ)/2 as a SymDense.
func symmetrise(K *mat.Dense) *mat.SymDense {
	r, _ := K.Dims()
	S := mat.NewSymDense(r, nil)
	for i := range r {
		for j := i; j < r; j++ {
			S.SetSym(i, j, (K.At(i, j)+K.At(j, i))/2)
		}
	}
	return S
}

// fit projects the centred data on W and learns the rotation.
func fit(kind string, Xc *mat.Dense, mean []float64, W *mat.Dense, corr []float64, opt Options) (*Model, error) {
	d, c := W.Dims()
	var V mat.Dense
	V.Mul(Xc, W)
	R, loss, err := Rotate(&V, opt.Iterations, opt.Seed)
	if err != nil {
		return nil, err
	}
	P := mat.NewDense(d, c, nil)
	P.Mul(W, R)
	return &Model{kind: kind, mean: mean, proj: P, rot: R, loss: loss, corr: corr, bits: c, inputD: d}, nil
}

// TrainLSH returns sign random projections (Charikar's SimHash) with the
// given code length, the data-independent baseline: P has i.i.d. standard
// normal entries drawn from opt.Seed, and the training mean of X is
// subtracted first so that every bit splits the data roughly in half.
// Iterations and Reg are ignored.
func TrainLSH(X *mat.Dense, bits int, opt Options) (*Model, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	_, d, err := checkData(X, bits)
	if err != nil {
		return nil, err
	}
	_, mean := centre(X)
	rng := newRand(opt.Seed)
	P := mat.NewDense(d, bits, nil)
	for i := range d {
		row := P.RawRowView(i)
		for j := range row {
			row[j] = rng.NormFloat64()
		}
	}
	return &Model{kind: "lsh", mean: mean, proj: P, bits: bits, inputD: d}, nil
}

// newRand returns the package's deterministic generator for a seed.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
}

// Rotate runs ITQ's alternation on the n×c projected data V (package doc):
// from a random orthogonal R₀ drawn from seed, iterations times
// B ← sign(VR), R ← orthogonal Procrustes solution of min ‖B − VR‖_F. It
// returns the c×c rotation and the loss ‖B − VR‖²_F after each iteration,
// which never increases. Other learners (mGLP's quantisation refinement)
// call it on their own relaxed projections.
func Rotate(V *mat.Dense, iterations int, seed uint64) (*mat.Dense, []float64, error) {
	if V == nil {
		return nil, nil, errors.New("itq: Rotate: nil matrix")
	}
	if iterations < 0 {
		return nil, nil, fmt.Errorf("itq: Rotate: iterations must be >= 0, got %d", iterations)
	}
	n, c := V.Dims()
	R := randomOrthogonal(c, newRand(seed))
	normV := mat.Norm(V, 2)
	normV *= normV
	loss := make([]float64, 0, iterations)
	B := mat.NewDense(n, c, nil)
	var Z, M mat.Dense
	var svd mat.SVD
	var S, Shat mat.Dense
	for range iterations {
		Z.Mul(V, R)
		for i := range n {
			z, b := Z.RawRowView(i), B.RawRowView(i)
			for j, v := range z {
				// sign(0) = +1, as in Pack.
				if v >= 0 {
					b[j] = 1
				} else {
					b[j] = -1
				}
			}
		}
		M.Mul(B.T(), V) // BᵀV = S Ω Ŝᵀ
		if !svd.Factorize(&M, mat.SVDFull) {
			return nil, nil, errors.New("itq: Rotate: SVD did not converge")
		}
		svd.UTo(&S)
		svd.VTo(&Shat)
		R = mat.NewDense(c, c, nil)
		R.Mul(&Shat, S.T())
		// ‖B − VR‖² = ‖B‖² + ‖VR‖² − 2 tr(BᵀVR) = nc + ‖V‖² − 2 tr(MR).
		var tr float64
		for i := range c {
			tr += mat.Dot(M.RowView(i), R.ColView(i))
		}
		loss = append(loss, float64(n*c)+normV-2*tr)
	}
	return R, loss, nil
}

// randomOrthogonal returns the Q factor of a c×c standard normal matrix,
// which is orthogonal.
func randomOrthogonal(c int, rng *rand.Rand) *mat.Dense {
	G := mat.NewDense(c, c, nil)
	for i := range c {
		row := G.RawRowView(i)
		for j := range row {
			row[j] = rng.NormFloat64()
		}
	}
	var qr mat.QR
	qr.Factorize(G)
	Q := mat.NewDense(c, c, nil)
	qr.QTo(Q)
	return Q
}
