package mglp

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/itq"
)

// DefaultBits is the code length the registered learner uses when the bits
// parameter is not given (capped at the feature dimension): itq's, so that
// mGLP is compared with ITQ and CCA-ITQ at equal length, as the paper does.
// With text, bits beyond the texts' principal directions are rotations of
// the text-coupled ones (package doc, Bits beyond the text's rank), so a
// long code does no harm: on ETH-80 with its 8 category labels as text,
// held-out mAP is 0.97 at 7 bits and 0.98 at 64. Without text (uGLP) every
// bit has unit variance (the constraint AᵀX̃ᵀX̃A ∝ I), so bits beyond the
// directions that carry the data's structure weigh as much in the Hamming
// distance as the good ones: on ETH-80, uGLP beats ITQ at 16 bits (mAP 0.50
// against 0.46) but not at 64 (0.34 against 0.49). Tune bits for uGLP on
// validation data.
const DefaultBits = itq.DefaultBits

// Dense is a learners.DenseBatch.
var _ learners.DenseBatch = (*Dense)(nil)

// Dense adapts mGLP to learners.DenseBatch (registered as "mglp"), so that
// the pipeline trains and applies it by name like every other dense
// learner. The modalities are concatenated and treated as one image vector
// of dimension d = Σ dims; the texts are the Y that Fit receives. With text
// it learns mGLP, without (Y nil or empty) the uni-modal uGLP.
//
// Retrieval compares codes by Hamming distance: Item and Query both return
// the c = bits projections Aᵀ(x − μ) whose signs, packed with itq.Pack, are
// the Model's code of x.
//
// Fit (or SetState) must come before Item and Query, which panic otherwise:
// calling them on an untrained model is a programming error. After Fit,
// Item and Query are safe for concurrent use; Fit and SetState are not safe
// concurrently with anything.
type Dense struct {
	dims  []int
	d     int
	bits  int
	p     Params
	model *Model // nil until Fit or SetState
	steps int64  // training rows of the last Fit (State.Steps)
}

// NewDense returns an untrained mGLP learner for image modalities of
// dimensions dims, learning bits-long codes (1 ≤ bits ≤ Σ dims; Fit also
// needs bits ≤ the number of principal directions of the training images it
// keeps, at most n − 1).
func NewDense(dims []int, bits int, p Params) (*Dense, error) {
	d, err := learners.Width("mglp", dims, 0)
	if err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if bits < 1 || bits > d {
		return nil, fmt.Errorf("mglp: bits must be in [1, %d] (the feature dimension), got %d", d, bits)
	}
	return &Dense{dims: slices.Clone(dims), d: d, bits: bits, p: p}, nil
}

// Name returns "mglp".
func (l *Dense) Name() string { return "mglp" }

// Dims returns a copy of the modality dimensions.
func (l *Dense) Dims() []int { return slices.Clone(l.dims) }

// Params returns bits and the fields of Params by their names lower-cased
// (lambda, eta, tau, neighbors, lshbits, reg, iterations, seed, codingiter,
// codingtol), the names the factory takes.
func (l *Dense) Params() map[string]float64 {
	p := l.p
	return map[string]float64{
		"bits": float64(l.bits), "lambda": p.Lambda, "eta": p.Eta, "tau": p.Tau,
		"neighbors": float64(p.Neighbors), "lshbits": float64(p.LSHBits), "reg": p.Reg,
		"iterations": float64(p.Iterations), "seed": float64(p.Seed),
		"codingiter": float64(p.CodingIter), "codingtol": p.CodingTol,
	}
}

// Metric returns learners.Hamming.
func (l *Dense) Metric() learners.Metric { return learners.Hamming }

// Fit trains on the images X (n×d) and their texts Y (n×t): mGLP, or uGLP
// when Y is nil or has no columns. It returns an error, and keeps the
// previous model, if X does not have d columns, a value is not finite, Y
// does not have n rows, or Train fails (e.g. bits above the images' rank).
func (l *Dense) Fit(X, Y *mat.Dense) error {
	if err := learners.CheckFitData("mglp", X, l.d); err != nil {
		return err
	}
	n, _ := X.Dims()
	if Y != nil && Y.IsEmpty() {
		Y = nil
	}
	m, err := Train(X, Y, l.bits, l.p)
	if err != nil {
		return fmt.Errorf("mglp: Fit: %w", err)
	}
	l.model, l.steps = m, int64(n)
	return nil
}

// Model returns the model that Fit trained or SetState restored, nil before
// either. A restored model encodes exactly as the trained one did, but its
// diagnostics (TextProjection, Eigenvalues, ImageShare, Loss, Coding) are
// empty and Multimodal reports false: the state holds only the encoder.
func (l *Dense) Model() *Model { return l.model }

// State exports the encoder: Vectors[0] is the image mean μ (length d) and
// Vectors[1] the projection A (d×c) row-major, A[i][j] at i·c + j, so that
// Item(x)_j = Σ_i A[i][j](x_i − μ_i). Steps is the number of rows Fit
// trained on. Before Fit or SetState the state has no Vectors, and SetState
// rejects it. Averaging such states is not meaningful (A is defined up to a
// rotation); batch models are not sharded.
func (l *Dense) State() learners.State {
	st := learners.State{Learner: "mglp", Steps: l.steps}
	if l.model == nil {
		return st
	}
	A := l.model.proj
	data := make([]float64, 0, l.d*l.bits)
	for i := range l.d {
		data = append(data, A.RawRowView(i)...)
	}
	st.Vectors = [][]float64{slices.Clone(l.model.mean), data}
	return st
}

// SetState replaces the model by the encoder in st (layout on State). It
// returns an error, and leaves the learner as it was, unless st is an mglp
// state with a mean of length d and a d×bits projection, all finite.
func (l *Dense) SetState(st learners.State) error {
	if err := learners.CheckState(st, "mglp", l.d, l.d*l.bits); err != nil {
		return err
	}
	A := mat.NewDense(l.d, l.bits, slices.Clone(st.Vectors[1]))
	l.model = &Model{mean: slices.Clone(st.Vectors[0]), proj: A}
	l.steps = st.Steps
	return nil
}

// Item returns Aᵀ(x − μ) in dst (grown if short), the projections whose
// signs are the code. It panics before Fit or SetState, or if len(x) ≠ d.
func (l *Dense) Item(dst, x []float64) []float64 {
	if l.model == nil {
		panic("mglp: Item or Query before Fit or SetState")
	}
	if len(x) != l.d {
		panic(fmt.Sprintf("mglp: Item or Query of a %d-vector, want %d", len(x), l.d))
	}
	if cap(dst) >= l.bits {
		dst = dst[:l.bits]
	} else {
		dst = make([]float64, l.bits)
	}
	return l.model.projectTo(dst, x)
}

// Query is Item: database images and queries are encoded alike (only
// images are encoded; texts serve training).
func (l *Dense) Query(dst, x []float64) []float64 { return l.Item(dst, x) }

// intParam converts the parameter name, carried as a float64 in the
// registry's map, to an int: it must be a whole number no larger in
// magnitude than 2⁵³, below which float64 holds every integer exactly.
func intParam(name string, v float64) (int, error) {
	if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
		return 0, fmt.Errorf("parameter %q must be an integer of magnitude at most 2^53, got %v", name, v)
	}
	return int(v), nil
}
