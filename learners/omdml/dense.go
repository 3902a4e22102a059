package omdml

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/bowline/bowline/learners"
)

// Dense is OMDML or LOMDML as a learners.DenseOnline, the form in which the
// pipeline trains them on dense global features: the input is the
// concatenation x = (x_1, …, x_m) of the modalities, in the order of Dims,
// which Dense cuts back into a Sample without copying.
//
// Retrieval is by Euclidean distance (learners.Euclidean) between the
// embeddings
//
//	Item(x) = Query(x) = (√θ_1 L_1 x_1, …, √θ_m L_m x_m),   M_i = L_iᵀL_i,
//
// so that ‖Item(a) − Item(b)‖² = Σ_i θ_i d_i(a_i, b_i) = Distance(a, b) and an
// index ranks by the learnt distance without evaluating it pairwise. LOMDML
// keeps its metrics factored, L_i = W_i (r_i×n_i, paper §5.6); for OMDML
// L_i = Λ_i^{1/2}Q_iᵀ (n_i×n_i) from the eigendecomposition M_i = Q_iΛ_iQ_iᵀ,
// with the tiny negative eigenvalues rounding leaves clipped to 0. The
// embedding therefore has Σ_i r_i values for LOMDML and Σ_i n_i for OMDML.
//
// The matrices √θ_i L_i are computed once, on the first Item or Query after
// an Update or SetState, rather than on every call: for OMDML that is an
// O(n_i³) eigendecomposition per modality. Item and Query are safe for
// concurrent use with each other; Update and SetState are not safe for
// concurrent use with anything, as for every learner.
type Dense struct {
	l    denseLearner
	c    *core
	d    int       // Σ n_i
	args [3]Sample // scratch: the modality slices of Update's x, pos, neg

	mu  sync.Mutex // serialises computing emb
	emb atomic.Pointer[embedding]
}

var _ learners.DenseOnline = (*Dense)(nil)

// denseLearner is what Dense needs from the learner it wraps.
type denseLearner interface {
	Learner
	// base returns the state both algorithms share.
	base() *core
	// factor returns a new matrix L_i with M_i = L_iᵀL_i.
	factor(i int) *mat.Dense
}

// embedding holds the matrices √θ_i L_i of the current model.
type embedding struct {
	mats []blas64.General
	dim  int // Σ rows
}

// NewDenseOMDML returns OMDML (NewOMDML) for modalities of dimensions dims
// as a learners.DenseOnline.
func NewDenseOMDML(dims []int, p Params) (*Dense, error) {
	o, err := NewOMDML(dims, p)
	if err != nil {
		return nil, err
	}
	return newDense(o), nil
}

// NewDenseLOMDML returns LOMDML (NewLOMDML) for modalities of dimensions dims
// as a learners.DenseOnline.
func NewDenseLOMDML(dims []int, p Params) (*Dense, error) {
	l, err := NewLOMDML(dims, p)
	if err != nil {
		return nil, err
	}
	return newDense(l), nil
}

func newDense(l denseLearner) *Dense {
	c := l.base()
	d := 0
	for _, n := range c.dims {
		d += n
	}
	dn := &Dense{l: l, c: c, d: d}
	for k := range dn.args {
		dn.args[k] = make(Sample, len(c.dims))
	}
	return dn
}

// Learner returns the wrapped *OMDML or *LOMDML, for its read-only methods
// (Distance, Weights, Metric, Projection, Projections). Changing it other
// than through d would leave Item and Query on the old model.
func (d *Dense) Learner() Learner { return d.l }

// Name returns "omdml" or "lomdml".
func (d *Dense) Name() string { return d.c.name }

// Dims returns a copy of n_1, …, n_m; inputs have Σ n_i values.
func (d *Dense) Dims() []int { return d.c.Dims() }

// Params returns the wrapped learner's hyper-parameters by name.
func (d *Dense) Params() map[string]float64 { return d.l.Params() }

// Steps returns the number of Updates so far, zero-loss steps included.
func (d *Dense) Steps() int64 { return d.c.steps }

// State returns the wrapped learner's State (OMDML.State, LOMDML.State).
func (d *Dense) State() learners.State { return d.l.State() }

// SetState replaces the model by st as the wrapped learner's SetState does,
// and leaves it unchanged on error.
func (d *Dense) SetState(st learners.State) error {
	if err := d.l.SetState(st); err != nil {
		return err
	}
	d.emb.Store(nil)
	return nil
}

// Metric returns learners.Euclidean (see Dense).
func (d *Dense) Metric() learners.Metric { return learners.Euclidean }

// Update learns from the triplet (x, pos, neg) of concatenated modality
// vectors as the wrapped learner's Update does, and returns the loss
// max(0, f + γ) suffered before the step. It returns an error, changing
// nothing, if a length is not Σ n_i or a value is NaN or infinite (the
// checks of CheckSample). The modalities are cut into Sample headers kept
// in d, so that Dense adds no allocation: LOMDML's Update allocates nothing,
// OMDML's only in the eigendecompositions of its projections.
//
// OMDML still panics, after changing part of the model, if an
// eigendecomposition does not converge, which needs finite features of the
// order of 1e75 (OMDML.Update).
func (d *Dense) Update(x, pos, neg []float64) (float64, error) {
	vs := [3][]float64{x, pos, neg}
	for k, v := range vs {
		if len(v) != d.d {
			return 0, fmt.Errorf("%s: Update: len(%s) = %d, want %d", d.c.name, denseArgs[k], len(v), d.d)
		}
	}
	for k, v := range vs {
		d.split(d.args[k], v)
		if err := d.c.sampleError(d.args[k]); err != nil {
			d.clearArgs()
			return 0, fmt.Errorf("%s: Update: %s: %w", d.c.name, denseArgs[k], err)
		}
	}
	d.emb.Store(nil)
	loss := d.l.Update(d.args[0], d.args[1], d.args[2])
	d.clearArgs()
	return loss, nil
}

var denseArgs = [3]string{"x", "pos", "neg"}

// split cuts x, of Σ n_i values, into its modalities in s.
func (d *Dense) split(s Sample, x []float64) {
	off := 0
	for i, n := range d.c.dims {
		s[i] = x[off : off+n : off+n]
		off += n
	}
}

// clearArgs drops the headers into the caller's vectors, so that d does not
// keep them from being collected.
func (d *Dense) clearArgs() {
	for _, s := range d.args {
		clear(s)
	}
}

// Item writes the embedding (√θ_1 L_1 x_1, …, √θ_m L_m x_m) of x into dst
// (grown if its capacity is short) and returns it (see Dense). After the
// first call following an Update or SetState it costs O(Σ r_i n_i) and
// does not allocate when dst is large enough; dst must not overlap x. It
// panics if len(x) is not Σ n_i.
func (d *Dense) Item(dst, x []float64) []float64 {
	if len(x) != d.d {
		panic(fmt.Sprintf("%s: Dense.Item: len(x) = %d, want %d", d.c.name, len(x), d.d))
	}
	e := d.embedding()
	if cap(dst) < e.dim {
		dst = make([]float64, e.dim)
	}
	dst = dst[:e.dim]
	in, out := 0, 0
	for _, g := range e.mats {
		blas64.Gemv(blas.NoTrans, 1, g, vec(x[in:in+g.Cols]), 0, vec(dst[out:out+g.Rows]))
		in += g.Cols
		out += g.Rows
	}
	return dst
}

// Query is Item: the distance is symmetric, so queries and database images
// embed alike.
func (d *Dense) Query(dst, x []float64) []float64 {
	if len(x) != d.d {
		panic(fmt.Sprintf("%s: Dense.Query: len(x) = %d, want %d", d.c.name, len(x), d.d))
	}
	return d.Item(dst, x)
}

// embedding returns the matrices √θ_i L_i of the current model, computing
// them if an Update or SetState has invalidated them. The atomic pointer
// lets concurrent Item calls read them without locking; the mutex makes
// the first of them compute them once while the others wait.
func (d *Dense) embedding() *embedding {
	if e := d.emb.Load(); e != nil {
		return e
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if e := d.emb.Load(); e != nil {
		return e
	}
	e := &embedding{mats: make([]blas64.General, len(d.c.dims))}
	for i := range d.c.dims {
		l := d.l.factor(i)
		l.Scale(math.Sqrt(d.c.theta[i]), l)
		e.mats[i] = l.RawMatrix()
		e.dim += e.mats[i].Rows
	}
	d.emb.Store(e)
	return e
}

// base lets Dense reach the state the two algorithms share.
func (c *core) base() *core { return c }

// factor returns L_i = Λ_i^{1/2}Q_iᵀ, where M_i = Q_iΛ_iQ_iᵀ, so that
// L_iᵀL_i = M_i; eigenvalues that rounding left slightly negative are
// clipped to 0. It costs O(n_i³) and panics, as OMDML.Update does, if the
// decomposition does not converge.
func (o *OMDML) factor(i int) *mat.Dense {
	n := o.dims[i]
	var eig mat.EigenSym
	if !eig.Factorize(o.m[i], true) {
		panic(fmt.Sprintf("omdml: eigendecomposition of M_%d (%d×%d) did not converge", i, n, n))
	}
	vals := eig.RawValues()
	q := eig.RawQ().(*mat.Dense) // eigenvectors in columns
	l := mat.NewDense(n, n, nil)
	for k, v := range vals {
		s := math.Sqrt(max(0, v))
		for j := range n {
			l.Set(k, j, s*q.At(j, k))
		}
	}
	return l
}

// factor returns a copy of W_i: M_i = W_iᵀW_i.
func (l *LOMDML) factor(i int) *mat.Dense { return mat.DenseCopyOf(l.w[i]) }

// The two learners register with learners.NewDense. Each takes the
// hyper-parameters its Params method names (OMDML: c, beta, gamma; LOMDML:
// beta, gamma, eta, rank, seed); another name, even one the other learner
// reads, is an error, since it would be silently ignored. Missing ones take
// DefaultParams.
func init() {
	learners.RegisterDense("omdml", func(dims []int, params map[string]float64) (learners.DenseModel, error) {
		p, err := denseParams("omdml", (&OMDML{}).Params(), params)
		if err != nil {
			return nil, err
		}
		return denseModel(NewDenseOMDML(dims, p))
	})
	learners.RegisterDense("lomdml", func(dims []int, params map[string]float64) (learners.DenseModel, error) {
		p, err := denseParams("lomdml", (&LOMDML{}).Params(), params)
		if err != nil {
			return nil, err
		}
		return denseModel(NewDenseLOMDML(dims, p))
	})
}

// denseModel converts a constructor's result, keeping a failed one a nil
// interface rather than an interface holding a nil pointer.
func denseModel(d *Dense, err error) (learners.DenseModel, error) {
	if err != nil {
		return nil, err
	}
	return d, nil
}

// denseParams returns ParamsFromMap(params) after checking, with
// learners.AssignParams, that every name in params is one of those in known
// (a learner's Params).
func denseParams(name string, known, params map[string]float64) (Params, error) {
	fields := make(map[string]*float64, len(known))
	for k, v := range known {
		fields[k] = &v
	}
	if err := learners.AssignParams(fields, params); err != nil {
		return Params{}, fmt.Errorf("%s: %w", name, err)
	}
	return ParamsFromMap(params)
}
