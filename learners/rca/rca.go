package rca

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/bowline/bowline/learners"
)

// name is the learner's registered name and State.Learner.
const name = "rca"

// maxDim bounds d = Σ dims so that d² cannot overflow an int on any
// platform; memory (8d² bytes per matrix) and the O(d³)
// eigendecomposition are the real limits.
const maxDim = 1 << 15

// Params are RCA's hyper-parameters.
type Params struct {
	// Epsilon (ε ≥ 0) sets the ridge ρ = ε·tr(Ĉ)/d added to the
	// within-chunklet covariance (package doc, "Ridge"); 0 is the paper's
	// metric, which needs a non-singular Ĉ.
	Epsilon float64
}

// DefaultParams returns ε = 10⁻³: a ridge of a thousandth of the mean
// within-chunklet variance, which leaves every direction the chunklets do
// vary along practically as the paper weighs it.
func DefaultParams() Params { return Params{Epsilon: 1e-3} }

// Validate reports whether Epsilon is finite and ≥ 0.
func (p Params) Validate() error {
	if math.IsNaN(p.Epsilon) || math.IsInf(p.Epsilon, 0) || p.Epsilon < 0 {
		return fmt.Errorf("rca: ridge epsilon must be finite and >= 0, got %v", p.Epsilon)
	}
	return nil
}

// Model is RCA as a learners.DenseBatch (registered as "rca") over the
// concatenation of the modalities of dimensions Dims, treated as one vector
// of dimension d = Σ dims.
//
// Retrieval is by learners.Euclidean between Item(x) = Query(x) = W x,
// W = Ĉ_ε^{-1/2} (package doc). Fit (or SetState) must come before Item and
// Query, which panic otherwise: calling them on an untrained model is a
// programming error. After Fit, Item, Query and the other read-only methods
// are safe for concurrent use; Fit and SetState are not safe concurrently
// with anything.
type Model struct {
	dims []int
	d    int
	p    Params
	w    []float64 // W, d×d row-major, exactly symmetric; nil until Fit or SetState
	// What Fit computed; zero before Fit and after SetState.
	cov       *mat.SymDense // Ĉ, without the ridge
	ridge     float64       // ρ
	chunklets int           // k, chunklets of ≥ 2 images
	points    int           // p, images in them
	steps     int64         // training rows of the last Fit (State.Steps)
}

var _ learners.DenseBatch = (*Model)(nil)

// New returns an untrained RCA model for modalities of dimensions dims.
// Σ dims must be at most 32768.
func New(dims []int, p Params) (*Model, error) {
	d, err := learners.Width(name, dims, maxDim)
	if err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &Model{dims: slices.Clone(dims), d: d, p: p}, nil
}

// Name returns "rca".
func (m *Model) Name() string { return name }

// Dims returns a copy of the modality dimensions.
func (m *Model) Dims() []int { return slices.Clone(m.dims) }

// Params returns "epsilon", the name the registered factory takes.
func (m *Model) Params() map[string]float64 { return map[string]float64{"epsilon": m.p.Epsilon} }

// Metric returns learners.Euclidean.
func (m *Model) Metric() learners.Metric { return learners.Euclidean }

// Fit learns W from the features X (n×d) and the chunklets that the tag
// matrix Y (n×t, required) defines, the arg-max column of each row (package
// doc, "Chunklets"). It costs O(n d² + d³). Fit returns an error, and keeps
// the previous model, if X is empty, not d columns wide or not finite
// (learners.CheckFitData), if Y is missing, does not have n rows or has a
// value that is not finite, if no chunklet has two images, if the images of
// every chunklet are identical (Ĉ = 0), or if Ĉ_ε is singular to working
// precision (only possible with ε = 0, or ε too small to matter).
func (m *Model) Fit(X, Y *mat.Dense) error {
	if err := learners.CheckFitData(name, X, m.d); err != nil {
		return err
	}
	n, _ := X.Dims()
	chunk, err := chunklets(Y, n)
	if err != nil {
		return err
	}
	// Group the rows by chunklet, keeping those of size ≥ 2.
	size := make(map[int]int)
	for _, c := range chunk {
		if c >= 0 {
			size[c]++
		}
	}
	k, p := 0, 0
	for _, s := range size {
		if s >= 2 {
			k++
			p += s
		}
	}
	if p == 0 {
		return fmt.Errorf("rca: Fit: no two of the %d images share a label (their arg-max tag), so there is no chunklet to learn from", n)
	}
	d := m.d
	means := make(map[int][]float64, k)
	for i, c := range chunk {
		if c < 0 || size[c] < 2 {
			continue
		}
		mu := means[c]
		if mu == nil {
			mu = make([]float64, d)
			means[c] = mu
		}
		for j, v := range X.RawRowView(i) {
			mu[j] += v
		}
	}
	for c, mu := range means {
		for j := range mu {
			mu[j] /= float64(size[c])
		}
	}
	// The p centred rows, then Ĉ = XcᵀXc / p.
	Xc := mat.NewDense(p, d, nil)
	r := 0
	for i, c := range chunk {
		if c < 0 || size[c] < 2 {
			continue
		}
		mu, dst := means[c], Xc.RawRowView(r)
		for j, v := range X.RawRowView(i) {
			dst[j] = v - mu[j]
		}
		r++
	}
	cov := mat.NewSymDense(d, nil)
	cov.SymOuterK(1/float64(p), Xc.T())
	tr := cov.Trace()
	if !(tr > 0) {
		return fmt.Errorf("rca: Fit: the %d images of the %d chunklets do not vary within their chunklets (Ĉ = 0)", p, k)
	}
	if math.IsInf(tr, 0) {
		return fmt.Errorf("rca: Fit: the within-chunklet covariance overflows (trace %v)", tr)
	}
	ridge := m.p.Epsilon * tr / float64(d)
	w, err := inverseSqrt(cov, ridge)
	if err != nil {
		return fmt.Errorf("rca: Fit: %w (%d images in %d chunklets, dimension %d)", err, p, k, d)
	}
	m.w, m.cov, m.ridge, m.chunklets, m.points, m.steps = w, cov, ridge, k, p, int64(n)
	return nil
}

// chunklets returns the chunklet of each of the n rows of Y, the column of
// its largest entry (the first one on ties), or −1 for a row with no
// positive entry.
func chunklets(Y *mat.Dense, n int) ([]int, error) {
	if Y == nil || Y.IsEmpty() {
		return nil, errors.New("rca: Fit: no labels (Y is empty); RCA learns from images that share a label")
	}
	ny, _ := Y.Dims()
	if ny != n {
		return nil, fmt.Errorf("rca: Fit: X has %d rows but Y has %d", n, ny)
	}
	chunk := make([]int, n)
	for i := range n {
		best, arg := 0.0, -1
		for j, y := range Y.RawRowView(i) {
			if math.IsNaN(y) || math.IsInf(y, 0) {
				return nil, fmt.Errorf("rca: Fit: Y[%d,%d] = %v is not finite", i, j, y)
			}
			if y > best {
				best, arg = y, j
			}
		}
		chunk[i] = arg
	}
	return chunk, nil
}

// inverseSqrt returns (C + ρI)^{-1/2}, d×d row-major and exactly
// symmetric, through the eigendecomposition of C + ρI. It returns an error
// if the decomposition fails or the smallest eigenvalue is not above
// d·ε_mach times the largest (numerically singular).
func inverseSqrt(C *mat.SymDense, ridge float64) ([]float64, error) {
	d := C.SymmetricDim()
	Cr := mat.NewSymDense(d, nil)
	Cr.CopySym(C)
	for i := range d {
		Cr.SetSym(i, i, Cr.At(i, i)+ridge)
	}
	var eig mat.EigenSym
	if !eig.Factorize(Cr, true) {
		return nil, errors.New("eigendecomposition of the within-chunklet covariance did not converge")
	}
	vals := eig.Values(nil) // ascending
	lo, hi := vals[0], vals[d-1]
	if !(lo > float64(d)*0x1p-52*hi) {
		return nil, fmt.Errorf("the within-chunklet covariance is singular (eigenvalues from %.3g to %.3g; ridge ρ = %.3g): set epsilon > 0", lo, hi, ridge)
	}
	var q mat.Dense
	eig.VectorsTo(&q)
	// W = Q Λ^{-1/2} Qᵀ: scale the columns of Q, then multiply by Qᵀ.
	qs := mat.DenseCopyOf(&q)
	for k, v := range vals {
		s := 1 / math.Sqrt(v)
		for i := range d {
			qs.Set(i, k, qs.At(i, k)*s)
		}
	}
	var W mat.Dense
	W.Mul(qs, q.T())
	w := make([]float64, d*d)
	for i := range d {
		for j := i; j < d; j++ {
			v := (W.At(i, j) + W.At(j, i)) / 2 // symmetrise: rounding leaves W slightly asymmetric
			w[i*d+j], w[j*d+i] = v, v
		}
	}
	return w, nil
}

// Covariance returns a copy of the within-chunklet covariance Ĉ that Fit
// computed, without the ridge, or nil before Fit and after SetState (a
// state holds only W).
func (m *Model) Covariance() *mat.SymDense {
	if m.cov == nil {
		return nil
	}
	c := mat.NewSymDense(m.d, nil)
	c.CopySym(m.cov)
	return c
}

// Ridge returns ρ = ε·tr(Ĉ)/d of the last Fit, so that W = (Ĉ + ρI)^{-1/2};
// 0 before Fit and after SetState.
func (m *Model) Ridge() float64 { return m.ridge }

// Chunklets returns the number k of chunklets of two or more images and the
// number p of images in them, of the last Fit; 0, 0 before Fit and after
// SetState.
func (m *Model) Chunklets() (k, p int) { return m.chunklets, m.points }

// Whitening returns a copy of W, or nil before Fit or SetState.
func (m *Model) Whitening() *mat.SymDense {
	if m.w == nil {
		return nil
	}
	return mat.NewSymDense(m.d, slices.Clone(m.w))
}

// State exports W (d×d, row-major, symmetric) as Vectors[0]; Steps is the
// number of rows Fit trained on. Before Fit or SetState the state has no
// Vectors, and SetState rejects it.
func (m *Model) State() learners.State {
	st := learners.State{Learner: name, Steps: m.steps}
	if m.w != nil {
		st.Vectors = [][]float64{slices.Clone(m.w)}
	}
	return st
}

// SetState replaces the model by the W in st (layout on State). It returns
// an error, and leaves the model as it was, unless st is an "rca" state
// with one vector of d² finite values (learners.CheckState) forming an
// exactly symmetric matrix, as Fit makes it. What only Fit knows
// (Covariance, Ridge, Chunklets) is cleared.
func (m *Model) SetState(st learners.State) error {
	d := m.d
	if err := learners.CheckState(st, name, d*d); err != nil {
		return err
	}
	w := st.Vectors[0]
	for i := range d {
		for j := i + 1; j < d; j++ {
			if w[i*d+j] != w[j*d+i] {
				return fmt.Errorf("rca: SetState: W is not symmetric: W[%d,%d] = %v but W[%d,%d] = %v", i, j, w[i*d+j], j, i, w[j*d+i])
			}
		}
	}
	m.w, m.cov, m.ridge, m.chunklets, m.points, m.steps = slices.Clone(w), nil, 0, 0, 0, st.Steps
	return nil
}

// Item returns W x in dst (grown if its capacity is short), of length d.
// dst must not overlap x. It panics before Fit or SetState, or if
// len(x) ≠ d.
func (m *Model) Item(dst, x []float64) []float64 {
	if m.w == nil {
		panic("rca: Item or Query before Fit or SetState")
	}
	if len(x) != m.d {
		panic(fmt.Sprintf("rca: Item or Query of a %d-vector, want %d", len(x), m.d))
	}
	if cap(dst) < m.d {
		dst = make([]float64, m.d)
	}
	dst = dst[:m.d]
	W := blas64.General{Rows: m.d, Cols: m.d, Stride: m.d, Data: m.w}
	blas64.Gemv(blas.NoTrans, 1, W, blas64.Vector{N: m.d, Inc: 1, Data: x}, 0, blas64.Vector{N: m.d, Inc: 1, Data: dst})
	return dst
}

// Query is Item: the metric is symmetric.
func (m *Model) Query(dst, x []float64) []float64 { return m.Item(dst, x) }
