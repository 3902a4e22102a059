package mglp

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/bowline/bowline/learners/itq"
)

// Params are mGLP's hyper-parameters (package doc).
type Params struct {
	// Lambda (λ ∈ [0, 1]) balances the image geometry (λ) against the
	// text geometry (1 − λ) in Eq. (14). Ignored without text.
	Lambda float64
	// Eta (η ≥ 0) weighs the multimodal loss, the mean squared distance
	// between the image and the text projections of each pair. With text
	// it must be > 0 (package doc, Degenerate cases). Ignored without
	// text.
	Eta float64
	// Tau (τ ≥ 0) weighs the weighted ℓ1 penalty of the sparse coding,
	// relative to the local scale σ_i² (package doc). Larger τ selects
	// fewer neighbours.
	Tau float64
	// Neighbors (≥ 1) is |N(x)|, the number of candidate neighbours each
	// point is coded over; capped at n − 1.
	Neighbors int
	// LSHBits (0…64) selects approximate neighbours from that many sign
	// random projections (the paper uses 16-bit LSH); 0 searches exactly.
	LSHBits int
	// Reg (> 0) discards, in each modality, the principal directions whose
	// variance is at most Reg times the mean variance before the
	// eigenproblem (package doc, Solution).
	Reg float64
	// Iterations (≥ 0) is the number of ITQ alternations of the
	// quantisation refinement (Eqs. 29–30); 0 gives the paper's mGLP⁻
	// (uGLP⁻ without text).
	Iterations int
	// Seed seeds the LSH projections and the refinement's random R₀.
	Seed uint64
	// CodingIter (≥ 1) caps the ADMM iterations of one sparse coding
	// problem; CodingTol (> 0) is its stopping tolerance on the primal
	// and dual residuals.
	CodingIter int
	CodingTol  float64
}

// DefaultParams returns λ = 0.5, η = 1 (the paper picks λ in [0, 1] and η
// in [0, 3] by grid search and does not report τ), τ = 1, 20 neighbours
// from 16-bit LSH (the paper's hash length), Reg = 10⁻⁶, 50 refinement
// iterations (as ITQ), seed 1, and at most 5000 ADMM iterations to a
// tolerance of 10⁻⁸ per sparse code. The s_ij of a point sum to 1 and the
// reconstruction term is in units of σ_i², so τ = 1 penalises a weight on a
// neighbour at the mean distance by about 1/K per unit.
func DefaultParams() Params {
	return Params{
		Lambda: 0.5, Eta: 1, Tau: 1, Neighbors: 20, LSHBits: 16, Reg: 1e-6,
		Iterations: 50, Seed: 1, CodingIter: 5000, CodingTol: 1e-8,
	}
}

// Validate reports every parameter out of range. NaN is always an error.
func (p Params) Validate() error {
	var errs []error
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	if !finite(p.Lambda) || p.Lambda < 0 || p.Lambda > 1 {
		errs = append(errs, fmt.Errorf("mglp: Lambda must be in [0, 1], got %v", p.Lambda))
	}
	if !finite(p.Eta) || p.Eta < 0 {
		errs = append(errs, fmt.Errorf("mglp: Eta must be finite and >= 0, got %v", p.Eta))
	}
	if !finite(p.Tau) || p.Tau < 0 {
		errs = append(errs, fmt.Errorf("mglp: Tau must be finite and >= 0, got %v", p.Tau))
	}
	if p.Neighbors < 1 {
		errs = append(errs, fmt.Errorf("mglp: Neighbors must be >= 1, got %d", p.Neighbors))
	}
	if p.LSHBits < 0 || p.LSHBits > 64 {
		errs = append(errs, fmt.Errorf("mglp: LSHBits must be in [0, 64], got %d", p.LSHBits))
	}
	if !finite(p.Reg) || p.Reg <= 0 || p.Reg >= 1 {
		errs = append(errs, fmt.Errorf("mglp: Reg must be in (0, 1), got %v", p.Reg))
	}
	if p.Iterations < 0 {
		errs = append(errs, fmt.Errorf("mglp: Iterations must be >= 0, got %d", p.Iterations))
	}
	if p.CodingIter < 1 {
		errs = append(errs, fmt.Errorf("mglp: CodingIter must be >= 1, got %d", p.CodingIter))
	}
	if !finite(p.CodingTol) || p.CodingTol <= 0 {
		errs = append(errs, fmt.Errorf("mglp: CodingTol must be finite and > 0, got %v", p.CodingTol))
	}
	return errors.Join(errs...)
}

// CodingStats describes the locally linear sparse codes of one modality.
type CodingStats struct {
	// Neighbors is |N(x)| as used (Params.Neighbors capped at n − 1).
	Neighbors int
	// MeanNonZeros is the mean number of non-zero weights per point.
	MeanNonZeros float64
	// Unconverged counts the points whose solver hit CodingIter; their
	// weights are the last iterate rescaled to sum to 1.
	Unconverged int
}

// Model is a learned mGLP (or, trained without text, uGLP) encoder: the
// code of an image x is sign(Aᵀ(x − μ)) packed into an itq.Code. A Model is
// immutable and safe for concurrent use.
type Model struct {
	mean       []float64
	proj       *mat.Dense // A, d×c, after the refinement
	textProj   *mat.Dense // B, t×c, after the refinement; nil without text
	eigen      []float64
	imageShare []float64
	loss       []float64
	stats      []CodingStats
}

// Bits returns the code length c.
func (m *Model) Bits() int { _, c := m.proj.Dims(); return c }

// Dim returns the image feature dimension d that Encode expects.
func (m *Model) Dim() int { return len(m.mean) }

// Multimodal reports whether the model was trained with text (mGLP) or
// without (uGLP).
func (m *Model) Multimodal() bool { return m.textProj != nil }

// Projection returns a copy of the d×c image projection A.
func (m *Model) Projection() *mat.Dense { return mat.DenseCopyOf(m.proj) }

// TextProjection returns a copy of the t×c text projection B (learned
// jointly and otherwise unused: retrieval is image to image), or nil for a
// uni-modal model.
func (m *Model) TextProjection() *mat.Dense {
	if m.textProj == nil {
		return nil
	}
	return mat.DenseCopyOf(m.textProj)
}

// Mean returns a copy of the training image mean μ.
func (m *Model) Mean() []float64 { return slices.Clone(m.mean) }

// Eigenvalues returns the eigenvalues of the relaxed directions, in
// ascending order: the relaxed loss of each projection per unit of
// constrained variance. There are c of them, or, with text, at most as many
// as the texts' principal directions (package doc, Bits beyond the text's
// rank). The refinement does not change their sum (the paper's
// Observation 2).
func (m *Model) Eigenvalues() []float64 { return slices.Clone(m.eigen) }

// ImageShare returns, for each relaxed direction (eigenvector) before the
// refinement, the share of its squared norm in whitened coordinates that
// lies in the image block; 1 for a uni-modal model. A share near 0 means
// the direction is nearly text-only, and its image bit carries little
// (package doc, Degenerate cases).
func (m *Model) ImageShare() []float64 { return slices.Clone(m.imageShare) }

// Loss returns the quantisation loss ‖Z − VR‖²_F after each refinement
// iteration (non-increasing; empty when Iterations = 0).
func (m *Model) Loss() []float64 { return slices.Clone(m.loss) }

// Coding returns the sparse-coding statistics of the images and, for a
// multimodal model, of the texts.
func (m *Model) Coding() []CodingStats { return slices.Clone(m.stats) }

// Encode returns the code of x in dst (reused when its capacity suffices).
// It panics if len(x) != Dim().
func (m *Model) Encode(x []float64, dst itq.Code) itq.Code {
	if len(x) != len(m.mean) {
		panic(fmt.Sprintf("mglp: Encode of a %d-vector with a model of dimension %d", len(x), len(m.mean)))
	}
	_, c := m.proj.Dims()
	return itq.Pack(m.projectTo(make([]float64, c), x), dst)
}

// projectTo writes Aᵀ(x − μ) into v, which has length c. Encode and
// Dense.Item both compute the projections here, so that the signs of Item
// are the code bit for bit.
func (m *Model) projectTo(v, x []float64) []float64 {
	clear(v)
	for i, xi := range x {
		xi -= m.mean[i]
		if xi == 0 {
			continue
		}
		for j, a := range m.proj.RawRowView(i) {
			v[j] += xi * a
		}
	}
	return v
}

// EncodeAll encodes every row of X; the codes share one backing array.
func (m *Model) EncodeAll(X *mat.Dense) ([]itq.Code, error) {
	n, d := X.Dims()
	if d != len(m.mean) {
		return nil, fmt.Errorf("mglp: encode: data has %d columns, model dimension is %d", d, len(m.mean))
	}
	Xc := centreWith(X, m.mean)
	var V mat.Dense
	V.Mul(Xc, m.proj)
	_, c := m.proj.Dims()
	w := itq.Words(c)
	backing := make([]uint64, n*w)
	codes := make([]itq.Code, n)
	for i := range n {
		codes[i] = itq.Pack(V.RawRowView(i), backing[i*w:(i+1)*w:(i+1)*w])
	}
	return codes, nil
}

// Train learns a bits-long mGLP encoder from image features X (n×d, one
// image per row) and the texts of the same images Y (n×t, e.g. a dense bag
// of tags, attribute vector or mean word vector; row i describes image i).
// With Y nil it learns the uni-modal uGLP encoder (Eqs. 8–11). With Y, bits
// beyond the texts' principal directions are rotations of the others, or
// constant without the refinement (package doc, Bits beyond the text's
// rank). Only images are encoded afterwards. It needs n ≥ 2 and
// 1 ≤ bits ≤ the number of image principal directions kept (at most
// min(d, n − 1)).
func Train(X, Y *mat.Dense, bits int, p Params) (*Model, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := checkMatrix("X", X); err != nil {
		return nil, err
	}
	n, _ := X.Dims()
	if n < 2 {
		return nil, fmt.Errorf("mglp: need at least 2 training rows, got %d", n)
	}
	if bits < 1 {
		return nil, fmt.Errorf("mglp: bits must be >= 1, got %d", bits)
	}
	if Y != nil {
		if err := checkMatrix("Y", Y); err != nil {
			return nil, err
		}
		if ny, _ := Y.Dims(); ny != n {
			return nil, fmt.Errorf("mglp: X has %d rows but Y has %d", n, ny)
		}
		if p.Eta == 0 {
			return nil, errors.New("mglp: with text, Eta must be > 0 (with η = 0 the joint problem is solved by text-only directions; train without text for uGLP)")
		}
	}

	Xc, mean := centre(X)
	mx, err := newModality(Xc, p, p.Seed)
	if err != nil {
		return nil, fmt.Errorf("mglp: images: %w", err)
	}
	kx := mx.dim()
	if bits > kx {
		return nil, fmt.Errorf("mglp: bits = %d exceeds the %d principal directions of the images kept (variance > Reg × mean)", bits, kx)
	}
	m := &Model{mean: mean, stats: []CodingStats{mx.stats}}

	var H *mat.SymDense
	var my *modality
	if Y == nil {
		H = mx.geometry
	} else {
		Yc, _ := centre(Y)
		my, err = newModality(Yc, p, p.Seed+1)
		if err != nil {
			return nil, fmt.Errorf("mglp: texts: %w", err)
		}
		m.stats = append(m.stats, my.stats)
		H = jointMatrix(mx, my, p.Lambda, p.Eta)
	}
	var eig mat.EigenSym
	if !eig.Factorize(H, true) {
		return nil, errors.New("mglp: eigendecomposition of the relaxed problem did not converge")
	}
	vals := eig.Values(nil)
	var Z mat.Dense
	eig.VectorsTo(&Z)
	// The smallest eigenvalues (EigenSym sorts ascending) minimise the
	// relaxed trace (Eq. 10). With text there are at most as many relaxed
	// directions as the texts have principal directions (package doc,
	// Bits beyond the text's rank); the other bits' columns of A and B stay
	// zero until the refinement rotates the kept directions into them.
	dirs := bits
	if my != nil {
		dirs = min(bits, my.dim())
	}
	m.eigen = slices.Clone(vals[:dirs])
	m.imageShare = make([]float64, dirs)
	for k := range dirs {
		var img, all float64
		for r := range H.SymmetricDim() {
			v := Z.At(r, k) * Z.At(r, k)
			all += v
			if r < kx {
				img += v
			}
		}
		m.imageShare[k] = img / all
	}
	d := Xc.RawMatrix().Cols
	A := mat.NewDense(d, bits, nil)
	A.Slice(0, d, 0, dirs).(*mat.Dense).Mul(mx.whiten, Z.Slice(0, kx, 0, dirs))
	var B *mat.Dense
	if my != nil {
		ky, t := my.dim(), my.data.RawMatrix().Cols
		B = mat.NewDense(t, bits, nil)
		B.Slice(0, t, 0, dirs).(*mat.Dense).Mul(my.whiten, Z.Slice(kx, kx+ky, 0, dirs))
	}

	// Quantisation refinement (Eqs. 29–30) on the stacked projections of
	// both modalities, V = [X̃A; ỸB] (package doc, Refinement).
	if p.Iterations > 0 {
		V := mat.NewDense(n, bits, nil)
		V.Mul(Xc, A)
		if B != nil {
			var VY mat.Dense
			VY.Mul(my.data, B)
			V = stack(V, &VY)
		}
		R, loss, err := itq.Rotate(V, p.Iterations, p.Seed)
		if err != nil {
			return nil, fmt.Errorf("mglp: refinement: %w", err)
		}
		var AR mat.Dense
		AR.Mul(A, R)
		A = &AR
		if B != nil {
			var BR mat.Dense
			BR.Mul(B, R)
			B = &BR
		}
		m.loss = loss
	}
	m.proj, m.textProj = A, B
	return m, nil
}

// modality holds what the eigenproblem needs from one view.
type modality struct {
	data     *mat.Dense    // centred data, n×d
	whiten   *mat.Dense    // T = P Λ^{-1/2}, d×k: principal directions kept, whitened
	geometry *mat.SymDense // Tᵀ X̃ᵀ M X̃ T, k×k, M = (I − W)ᵀ(I − W)/n
	white    *mat.Dense    // X̃ T, n×k
	weights  [][]float64   // sparse codes, row i over nbrs[i]
	nbrs     [][]int
	stats    CodingStats
}

func (m *modality) dim() int { _, k := m.whiten.Dims(); return k }

// newModality codes every point of the centred data over its neighbours,
// whitens the data on its principal subspace and returns the geometric
// matrix in whitened coordinates.
func newModality(Xc *mat.Dense, p Params, seed uint64) (*modality, error) {
	n, d := Xc.Dims()
	nbrs, err := neighbors(Xc, p.Neighbors, p.LSHBits, seed)
	if err != nil {
		return nil, err
	}
	weights, stats := codeAll(Xc, nbrs, p)
	stats.Neighbors = min(p.Neighbors, n-1)

	// Residuals r_i = x_i − Σ_j w_ij x_j, the rows of (I − W)X̃.
	Res := mat.NewDense(n, d, nil)
	for i := range n {
		r := Res.RawRowView(i)
		copy(r, Xc.RawRowView(i))
		for a, j := range nbrs[i] {
			w := weights[i][a]
			if w == 0 {
				continue
			}
			for c, v := range Xc.RawRowView(j) {
				r[c] -= w * v
			}
		}
	}

	T, err := whitener(Xc, p.Reg)
	if err != nil {
		return nil, err
	}
	_, k := T.Dims()
	var RT, XT mat.Dense
	RT.Mul(Res, T)
	XT.Mul(Xc, T)
	G := mat.NewSymDense(k, nil)
	G.SymOuterK(1/float64(n), RT.T())
	return &modality{data: Xc, whiten: T, geometry: G, white: &XT, weights: weights, nbrs: nbrs, stats: stats}, nil
}

// codeAll solves the sparse coding problem of every point, in parallel;
// the result does not depend on the scheduling.
func codeAll(Xc *mat.Dense, nbrs [][]int, p Params) ([][]float64, CodingStats) {
	n := len(nbrs)
	weights := make([][]float64, n)
	conv := make([]bool, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if len(nbrs[i]) == 0 {
					conv[i] = true
					continue
				}
				r := sparseCode(Xc, i, nbrs[i], p.Tau, p.CodingIter, p.CodingTol)
				weights[i], conv[i] = r.w, r.converged
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	var st CodingStats
	nnz := 0
	for i := range n {
		for _, w := range weights[i] {
			if w != 0 {
				nnz++
			}
		}
		if !conv[i] {
			st.Unconverged++
		}
	}
	st.MeanNonZeros = float64(nnz) / float64(n)
	return weights, st
}

// whitener returns T = P Λ^{-1/2} for the principal directions P of the
// centred data whose variances Λ exceed reg times the mean variance, so
// that TᵀC T = I for the covariance C = X̃ᵀX̃/n.
func whitener(Xc *mat.Dense, reg float64) (*mat.Dense, error) {
	n, d := Xc.Dims()
	C := mat.NewSymDense(d, nil)
	C.SymOuterK(1/float64(n), Xc.T())
	cut := reg * C.Trace() / float64(d)
	var eig mat.EigenSym
	if !eig.Factorize(C, true) {
		return nil, errors.New("eigendecomposition of the covariance did not converge")
	}
	vals := eig.Values(nil)
	var V mat.Dense
	eig.VectorsTo(&V)
	var keep []int
	for e := len(vals) - 1; e >= 0; e-- {
		if vals[e] > cut && vals[e] > 0 {
			keep = append(keep, e)
		}
	}
	if len(keep) == 0 {
		return nil, errors.New("the data have no variance")
	}
	T := mat.NewDense(d, len(keep), nil)
	for c, e := range keep {
		s := 1 / math.Sqrt(vals[e])
		for r := range d {
			T.Set(r, c, s*V.At(r, e))
		}
	}
	return T, nil
}

// jointMatrix returns the relaxed objective matrix of Eq. (27) in whitened
// coordinates, Tᵀ Q M Qᵀ T with T = blockdiag(T_x, T_y):
//
//	[ λG_x + ηI        −η X̂ᵀŶ/n     ]
//	[ −η ŶᵀX̂/n        (1−λ)G_y + ηI ]
//
// (X̂ = X̃T_x, Ŷ = ỸT_y, so X̂ᵀX̂/n = ŶᵀŶ/n = I). In these coordinates the
// constraint matrix Tᵀ Q Qᵀ T is n·I, so the generalized eigenproblem is an
// ordinary symmetric one.
func jointMatrix(mx, my *modality, lambda, eta float64) *mat.SymDense {
	kx, ky := mx.dim(), my.dim()
	n, _ := mx.white.Dims()
	H := mat.NewSymDense(kx+ky, nil)
	for i := range kx {
		for j := i; j < kx; j++ {
			H.SetSym(i, j, lambda*mx.geometry.At(i, j))
		}
		H.SetSym(i, i, H.At(i, i)+eta)
	}
	for i := range ky {
		for j := i; j < ky; j++ {
			H.SetSym(kx+i, kx+j, (1-lambda)*my.geometry.At(i, j))
		}
		H.SetSym(kx+i, kx+i, H.At(kx+i, kx+i)+eta)
	}
	var XY mat.Dense
	XY.Mul(mx.white.T(), my.white)
	for i := range kx {
		for j := range ky {
			H.SetSym(i, kx+j, -eta*XY.At(i, j)/float64(n))
		}
	}
	return H
}

// stack returns [A; B].
func stack(A, B *mat.Dense) *mat.Dense {
	ra, c := A.Dims()
	rb, _ := B.Dims()
	S := mat.NewDense(ra+rb, c, nil)
	S.Slice(0, ra, 0, c).(*mat.Dense).Copy(A)
	S.Slice(ra, ra+rb, 0, c).(*mat.Dense).Copy(B)
	return S
}

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
	return centreWith(X, mean), mean
}

func centreWith(X *mat.Dense, mean []float64) *mat.Dense {
	n, d := X.Dims()
	C := mat.NewDense(n, d, nil)
	for i := range n {
		dst := C.RawRowView(i)
		for j, v := range X.RawRowView(i) {
			dst[j] = v - mean[j]
		}
	}
	return C
}

func checkMatrix(name string, X *mat.Dense) error {
	if X == nil {
		return fmt.Errorf("mglp: nil %s", name)
	}
	n, _ := X.Dims()
	for i := range n {
		for j, v := range X.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("mglp: %s[%d,%d] = %v is not finite", name, i, j, v)
			}
		}
	}
	return nil
}
