package ssml

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
)

// Dense is a learners.DenseBatch.
var _ learners.DenseBatch = (*Dense)(nil)

// Dense adapts SSML to learners.DenseBatch (registered as "ssml"), so that
// the pipeline trains and applies it by name like every other dense
// learner. The modalities are concatenated and treated as one vector of
// dimension d = Σ dims; the tags are the rows of the Y that Fit receives.
//
// Retrieval is Euclidean in the embedding Item(x) = Query(x) = Uᵀx, where
// U (d×r) is the Model's Factor, M = UUᵀ, so that ‖Uᵀa − Uᵀb‖² = d_M(a, b)
// (in the notation of learners' package comment, L = Uᵀ and M = LᵀL).
//
// Fit (or SetState) must come before Item and Query, which panic otherwise:
// calling them on an untrained model is a programming error. After Fit,
// Item and Query are safe for concurrent use; Fit and SetState are not safe
// concurrently with anything.
type Dense struct {
	dims   []int
	d      int
	p      Params
	factor []float64 // U, d×r row-major; nil until Fit or SetState
	r      int
	model  *Model // what Fit trained; nil before Fit and after SetState
	steps  int64  // training rows of the last Fit (State.Steps)
}

// NewDense returns an untrained SSML learner for modalities of dimensions
// dims with the parameters p.
func NewDense(dims []int, p Params) (*Dense, error) {
	if len(dims) == 0 {
		return nil, errors.New("ssml: no modalities")
	}
	d := 0
	for i, n := range dims {
		if n <= 0 {
			return nil, fmt.Errorf("ssml: modality %d has dimension %d", i, n)
		}
		d += n
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &Dense{dims: slices.Clone(dims), d: d, p: p}, nil
}

// Name returns "ssml".
func (l *Dense) Name() string { return "ssml" }

// Dims returns a copy of the modality dimensions.
func (l *Dense) Dims() []int { return slices.Clone(l.dims) }

// Params returns the fields of Params by their names lower-cased (alpha,
// beta, epsilon, maxiter, tol, zerotol), the names the factory takes.
func (l *Dense) Params() map[string]float64 {
	p := l.p
	return map[string]float64{
		"alpha": p.Alpha, "beta": p.Beta, "epsilon": p.Epsilon,
		"maxiter": float64(p.MaxIter), "tol": p.Tol, "zerotol": p.ZeroTol,
	}
}

// Metric returns learners.Euclidean.
func (l *Dense) Metric() learners.Metric { return learners.Euclidean }

// Fit trains on the features X (n×d) and the tags Y (n×t, required,
// non-negative: row i is image i's bag of tags, labels one-hot where there
// are no tags). SSML takes the tags as sparse float32 vectors, so the
// non-zero entries of each row are converted, and one too large for a
// float32 is an error. Fit returns an error, and keeps the previous model,
// if X does not have d columns, Y is missing, does not have n rows or has
// a negative or non-finite entry, or Train fails (e.g. no two images share
// a tag).
func (l *Dense) Fit(X, Y *mat.Dense) error {
	if err := learners.CheckFitData("ssml", X, l.d); err != nil {
		return err
	}
	n, _ := X.Dims()
	tags, err := tagVectors(Y, n)
	if err != nil {
		return err
	}
	m, err := Train(X, tags, l.p)
	if err != nil {
		return fmt.Errorf("ssml: Fit: %w", err)
	}
	U := m.factor
	_, r := U.Dims()
	factor := make([]float64, 0, l.d*r)
	for i := range l.d {
		factor = append(factor, U.RawRowView(i)...)
	}
	l.factor, l.r, l.model, l.steps = factor, r, m, int64(n)
	return nil
}

// tagVectors converts the rows of the dense tag matrix Y (n rows) to the
// sparse vectors Train takes, keeping the entries that are non-zero as
// float32.
func tagVectors(Y *mat.Dense, n int) ([]sparse.Vector, error) {
	if Y == nil || Y.IsEmpty() {
		return nil, errors.New("ssml: Fit: no tags (Y is empty); SSML learns from tags or labels")
	}
	ny, t := Y.Dims()
	if ny != n {
		return nil, fmt.Errorf("ssml: Fit: X has %d rows but Y has %d", n, ny)
	}
	if t > math.MaxUint32+1 {
		return nil, fmt.Errorf("ssml: Fit: Y has %d columns, more than tag ids can index", t)
	}
	tags := make([]sparse.Vector, n)
	for i := range n {
		var v sparse.Vector
		for j, y := range Y.RawRowView(i) {
			if y == 0 {
				continue
			}
			f := float32(y)
			if !(y > 0) || math.IsInf(float64(f), 0) {
				return nil, fmt.Errorf("ssml: Fit: Y[%d,%d] = %v: tag weights must be non-negative and finite in float32", i, j, y)
			}
			if f == 0 { // below float32's range: as good as absent
				continue
			}
			v.Idx = append(v.Idx, uint32(j))
			v.Val = append(v.Val, f)
		}
		tags[i] = v
	}
	return tags, nil
}

// Model returns the model that Fit trained (with its metric, objective and
// sparsity), or nil before Fit and after SetState: a state holds only the
// factor.
func (l *Dense) Model() *Model { return l.model }

// State exports the factor U (d×r, M = UUᵀ) as Vectors[0], row-major: U[i][k]
// at i·r + k, so that Item(x)_k = Σ_i U[i][k] x_i, and r =
// len(Vectors[0])/d (r ≥ 1 is the rank of M, so states of different models
// may differ in length). Steps is the number of rows Fit trained on. Before
// Fit or SetState the state has no Vectors, and SetState rejects it.
// Averaging factors is not meaningful (U is defined up to a rotation);
// batch models are not sharded.
func (l *Dense) State() learners.State {
	st := learners.State{Learner: "ssml", Steps: l.steps}
	if l.factor != nil {
		st.Vectors = [][]float64{slices.Clone(l.factor)}
	}
	return st
}

// SetState replaces the model by the factor in st (layout on State). It
// returns an error, and leaves the learner as it was, unless st is an ssml
// state with one finite vector whose length is a positive multiple of d.
func (l *Dense) SetState(st learners.State) error {
	want := l.d
	if len(st.Vectors) == 1 {
		want = len(st.Vectors[0])
	}
	if err := learners.CheckState(st, "ssml", want); err != nil {
		return err
	}
	v := st.Vectors[0]
	if len(v) == 0 || len(v)%l.d != 0 {
		return fmt.Errorf("ssml: SetState: factor has %d values, not a positive multiple of the dimension %d", len(v), l.d)
	}
	l.factor, l.r, l.model, l.steps = slices.Clone(v), len(v)/l.d, nil, st.Steps
	return nil
}

// Item returns Uᵀx in dst (grown if short), of length r. It panics before
// Fit or SetState, or if len(x) ≠ d.
func (l *Dense) Item(dst, x []float64) []float64 {
	if l.factor == nil {
		panic("ssml: Item or Query before Fit or SetState")
	}
	if len(x) != l.d {
		panic(fmt.Sprintf("ssml: Item or Query of a %d-vector, want %d", len(x), l.d))
	}
	if cap(dst) >= l.r {
		dst = dst[:l.r]
		clear(dst)
	} else {
		dst = make([]float64, l.r)
	}
	for i, xi := range x {
		if xi == 0 {
			continue
		}
		for k, u := range l.factor[i*l.r : (i+1)*l.r] {
			dst[k] += xi * u
		}
	}
	return dst
}

// Query is Item: the metric is symmetric.
func (l *Dense) Query(dst, x []float64) []float64 { return l.Item(dst, x) }
