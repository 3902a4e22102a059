package itq

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/bowline/bowline/learners"
)

// DefaultBits is the code length the registered learners use when the bits
// parameter is not given (capped at the feature dimension). For the
// project's ~800-dimensional global features, 64 bits is one machine word:
// Hamming distance is a single popcount and a code costs 8 bytes, exactly
// as 32 bits would (Pack rounds up to whole words), while ITQ keeps twice as
// many principal directions. The ITQ paper's precision keeps rising up to
// 128–256 bits on 320–960-d GIST, so 64 is the cheapest length that is not
// wasting half its storage; longer codes are a parameter away.
const DefaultBits = 64

// Dense is a learners.DenseBatch.
var _ learners.DenseBatch = (*Dense)(nil)

// Dense adapts ITQ, CCA-ITQ or LSH to learners.DenseBatch, so that the
// pipeline trains and applies them by name like every other dense learner
// (registered as "itq", "cca-itq" and "lsh"). The modalities are
// concatenated and treated as one vector of dimension d = Σ dims.
//
// Retrieval compares codes by Hamming distance: Item and Query both return
// the c = bits projections Pᵀ(x − μ) whose signs, packed with Pack, are the
// Model's code of x.
//
// Fit (or SetState) must come before Item and Query, which panic otherwise:
// calling them on an untrained model is a programming error. After Fit,
// Item and Query are safe for concurrent use; Fit and SetState are not safe
// concurrently with anything.
type Dense struct {
	kind  string
	dims  []int
	d     int
	bits  int
	opt   Options
	model *Model // nil until Fit or SetState
	steps int64  // training rows of the last Fit (State.Steps)
}

// NewDense returns an untrained dense learner of the given kind ("itq",
// "cca-itq" or "lsh") for modalities of dimensions dims, learning bits-long
// codes (1 ≤ bits ≤ Σ dims, so that a misconfigured length fails here
// rather than after the data have been loaded). CCA-ITQ needs opt.Reg > 0.
func NewDense(kind string, dims []int, bits int, opt Options) (*Dense, error) {
	switch kind {
	case "itq", "cca-itq", "lsh":
	default:
		return nil, fmt.Errorf("itq: NewDense: unknown kind %q (want itq, cca-itq or lsh)", kind)
	}
	d, err := learners.Width(kind, dims, 0)
	if err != nil {
		return nil, err
	}
	if err := opt.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	if bits < 1 || bits > d {
		return nil, fmt.Errorf("%s: bits must be in [1, %d] (the feature dimension), got %d", kind, d, bits)
	}
	if kind == "cca-itq" && opt.Reg == 0 {
		return nil, fmt.Errorf("%s: reg must be > 0 (the label covariance of one-hot labels is singular)", kind)
	}
	return &Dense{kind: kind, dims: slices.Clone(dims), d: d, bits: bits, opt: opt}, nil
}

// Name returns the kind, "itq", "cca-itq" or "lsh".
func (l *Dense) Name() string { return l.kind }

// Dims returns a copy of the modality dimensions.
func (l *Dense) Dims() []int { return slices.Clone(l.dims) }

// Params returns the hyper-parameters by the names the factory takes: bits
// and seed for all kinds, iterations for itq and cca-itq, reg for cca-itq
// only (a parameter a kind ignores is not accepted, so that it cannot be
// set to no effect).
func (l *Dense) Params() map[string]float64 {
	p := map[string]float64{"bits": float64(l.bits), "seed": float64(l.opt.Seed)}
	if l.kind != "lsh" {
		p["iterations"] = float64(l.opt.Iterations)
	}
	if l.kind == "cca-itq" {
		p["reg"] = l.opt.Reg
	}
	return p
}

// Metric returns learners.Hamming.
func (l *Dense) Metric() learners.Metric { return learners.Hamming }

// Fit trains on the rows of X (n×d); cca-itq also reads the labels or tags
// Y (n×t, required), itq and lsh ignore Y. It returns an error, and keeps
// the previous model, if X does not have d columns, has a non-finite
// value, has fewer than 2 rows, or CCA-ITQ's Y is missing or mismatched.
func (l *Dense) Fit(X, Y *mat.Dense) error {
	if err := learners.CheckFitData(l.kind, X, l.d); err != nil {
		return err
	}
	var m *Model
	var err error
	switch l.kind {
	case "itq":
		m, err = Train(X, l.bits, l.opt)
	case "cca-itq":
		if Y == nil || Y.IsEmpty() {
			return fmt.Errorf("%s: Fit: no labels or tags (Y is empty)", l.kind)
		}
		m, err = TrainCCA(X, Y, l.bits, l.opt)
	case "lsh":
		m, err = TrainLSH(X, l.bits, l.opt)
	}
	if err != nil {
		return fmt.Errorf("%s: Fit: %w", l.kind, err)
	}
	n, _ := X.Dims()
	l.model, l.steps = m, int64(n)
	return nil
}

// Model returns the model that Fit trained or SetState restored, nil before
// either. A restored model encodes exactly as the trained one did, but its
// diagnostics (Rotation, Loss, Correlations) are empty: the state holds only
// the encoder.
func (l *Dense) Model() *Model { return l.model }

// State exports the encoder: Vectors[0] is the mean μ (length d) and
// Vectors[1] the projection P (d×c) row-major, P[i][j] at i·c + j, so that
// Item(x)_j = Σ_i P[i][j](x_i − μ_i). Steps is the number of rows Fit
// trained on. Before Fit or SetState the state has no Vectors, and SetState
// rejects it. Averaging such states is not meaningful (P is defined up to
// the signs and order of its columns); batch models are not sharded.
func (l *Dense) State() learners.State {
	st := learners.State{Learner: l.kind, Steps: l.steps}
	if l.model == nil {
		return st
	}
	st.Vectors = [][]float64{slices.Clone(l.model.mean), rowMajor(l.model.proj)}
	return st
}

// SetState replaces the model by the encoder in st (layout on State). It
// returns an error, and leaves the learner as it was, unless st is of the
// same kind, has a mean of length d and a d×bits projection, and is finite.
func (l *Dense) SetState(st learners.State) error {
	if err := learners.CheckState(st, l.kind, l.d, l.d*l.bits); err != nil {
		return err
	}
	P := mat.NewDense(l.d, l.bits, slices.Clone(st.Vectors[1]))
	l.model = &Model{kind: l.kind, mean: slices.Clone(st.Vectors[0]), proj: P, bits: l.bits, inputD: l.d}
	l.steps = st.Steps
	return nil
}

// Item returns Pᵀ(x − μ) in dst (grown if short), the projections whose
// signs are the code. It panics before Fit or SetState, or if len(x) ≠ d.
func (l *Dense) Item(dst, x []float64) []float64 {
	if l.model == nil {
		panic(fmt.Sprintf("%s: Item or Query before Fit or SetState", l.kind))
	}
	if len(x) != l.d {
		panic(fmt.Sprintf("%s: Item or Query of a %d-vector, want %d", l.kind, len(x), l.d))
	}
	return projectTo(grow(dst, l.bits), x, l.model.mean, l.model.proj)
}

// Query is Item: database images and queries are encoded alike.
func (l *Dense) Query(dst, x []float64) []float64 { return l.Item(dst, x) }

// rowMajor returns a copy of the elements of A, row after row.
func rowMajor(A *mat.Dense) []float64 {
	r, c := A.Dims()
	out := make([]float64, 0, r*c)
	for i := range r {
		out = append(out, A.RawRowView(i)...)
	}
	return out
}

// grow returns dst resliced to length n, or a new slice if it is too short.
func grow(dst []float64, n int) []float64 {
	if cap(dst) >= n {
		return dst[:n]
	}
	return make([]float64, n)
}

// intParam converts the parameter name, carried as a float64 in the
// registry's map, to an int: it must be a whole number no larger in
// magnitude than 2⁵³, below which float64 holds every integer exactly.
func intParam(name string, v float64) (int, error) {
	if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
		return 0, fmt.Errorf("parameter %q must be an integer of magnitude at most 2^53, got %v", name, v)
	}
	return int(v), nil
}

// seedParam converts a seed parameter, which must be a whole number in
// [0, 2⁵³].
func seedParam(v float64) (uint64, error) {
	s, err := intParam("seed", v)
	if err != nil {
		return 0, err
	}
	if s < 0 {
		return 0, errors.New(`parameter "seed" must be >= 0`)
	}
	return uint64(s), nil
}
