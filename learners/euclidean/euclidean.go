// Package euclidean is the untrained baseline of the dense learners, the
// dense analogue of the bag-of-words TF-IDF cosine: it ranks images by the
// squared Euclidean distance between their global features as they are,
// Item(x) = Query(x) = x. Every learnt dense metric or code is compared with
// it, since a learner that does not beat it has learnt nothing useful. It
// registers with learners.NewDense as "euclidean".
package euclidean

import (
	"errors"
	"fmt"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/bowline/bowline/learners"
)

// Model is a learners.DenseBatch.
var _ learners.DenseBatch = (*Model)(nil)

// Model is the Euclidean baseline over modalities of the given dimensions,
// concatenated into one vector of dimension d = Σ dims. It has no
// parameters and nothing to learn: unlike the trained learners, Item and
// Query work before Fit, which only validates the data, so that the
// baseline does not depend on what it is compared with being trained. Its
// methods are safe for concurrent use, except Fit and SetState.
type Model struct {
	dims  []int
	d     int
	steps int64 // training rows of the last Fit (State.Steps)
}

// New returns the baseline for modalities of dimensions dims.
func New(dims []int) (*Model, error) {
	if len(dims) == 0 {
		return nil, errors.New("euclidean: no modalities")
	}
	d := 0
	for i, n := range dims {
		if n <= 0 {
			return nil, fmt.Errorf("euclidean: modality %d has dimension %d", i, n)
		}
		d += n
	}
	return &Model{dims: slices.Clone(dims), d: d}, nil
}

// Name returns "euclidean".
func (m *Model) Name() string { return "euclidean" }

// Dims returns a copy of the modality dimensions.
func (m *Model) Dims() []int { return slices.Clone(m.dims) }

// Params returns an empty map: the baseline has no hyper-parameters.
func (m *Model) Params() map[string]float64 { return map[string]float64{} }

// Metric returns learners.Euclidean.
func (m *Model) Metric() learners.Metric { return learners.Euclidean }

// Fit checks that X (n×d, n ≥ 1) has d columns and finite values, and
// records n as the state's Steps; Y is ignored. It returns an error, and
// changes nothing, otherwise, as a learner would, so that a pipeline
// misconfiguration shows with the baseline too.
func (m *Model) Fit(X, Y *mat.Dense) error {
	if err := learners.CheckFitData("euclidean", X, m.d); err != nil {
		return err
	}
	n, _ := X.Dims()
	m.steps = int64(n)
	return nil
}

// State returns a state with no Vectors (there are no weights) and Steps
// the number of rows of the last Fit.
func (m *Model) State() learners.State {
	return learners.State{Learner: "euclidean", Steps: m.steps}
}

// SetState accepts a euclidean state with no Vectors and keeps its Steps;
// it returns an error, and changes nothing, for any other.
func (m *Model) SetState(st learners.State) error {
	if err := learners.CheckState(st, "euclidean"); err != nil {
		return err
	}
	m.steps = st.Steps
	return nil
}

// Item returns a copy of x in dst (grown if short). It panics if
// len(x) ≠ d.
func (m *Model) Item(dst, x []float64) []float64 {
	if len(x) != m.d {
		panic(fmt.Sprintf("euclidean: Item or Query of a %d-vector, want %d", len(x), m.d))
	}
	if cap(dst) >= m.d {
		dst = dst[:m.d]
	} else {
		dst = make([]float64, m.d)
	}
	copy(dst, x)
	return dst
}

// Query is Item.
func (m *Model) Query(dst, x []float64) []float64 { return m.Item(dst, x) }
