package learners

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// Dense learners work on an image's dense global features rather than on its
// bag of words: the modalities of transforms/global (colour, edge, Gabor,
// LBP, GIST) concatenated into one vector x ∈ R^d, d = Σ_i n_i, in the order
// of Dims. Multi-modal learners (OMDML, LOMDML) read the modalities back as
// consecutive slices of x; the others treat x as one vector.
//
// A trained dense model ranks a collection through an embedding: it maps
// every database image to Item(x) and a query to Query(x), and Metric says
// how two embeddings compare. Mahalanobis metrics d(a,b) = (a−b)ᵀM(a−b) with
// M = LᵀL embed x ↦ Lx and compare by Euclidean distance; a bilinear
// similarity aᵀWb embeds the query as Wᵀa and compares by dot product;
// binary-code learners embed x ↦ the projections whose signs are the code
// and compare by Hamming distance.

// Metric is how a dense model compares two embeddings.
type Metric int

const (
	// Euclidean ranks by ascending squared distance ‖Query(a) − Item(b)‖².
	Euclidean Metric = iota
	// Dot ranks by descending Query(a)·Item(b).
	Dot
	// Hamming ranks by ascending Hamming distance between the codes whose
	// bit j is set when the j-th coordinate of the embedding is ≥ 0
	// (itq.Pack's convention).
	Hamming
)

// String returns the metric's name, as the report prints it.
func (m Metric) String() string {
	switch m {
	case Euclidean:
		return "euclidean"
	case Dot:
		return "dot"
	case Hamming:
		return "hamming"
	}
	return fmt.Sprintf("Metric(%d)", int(m))
}

// DenseModel is a trained, or trainable, model over dense features.
type DenseModel interface {
	// Name identifies the algorithm, e.g. "lomdml".
	Name() string
	// Dims returns the modality dimensions n_1, …, n_m; inputs have length
	// Σ n_i.
	Dims() []int
	// Params returns the hyper-parameters by name.
	Params() map[string]float64
	// State exports the model as plain data (for the model file and for
	// averaging) and SetState imports one; each model documents its
	// layout. SetState leaves the model unchanged on error.
	State() State
	SetState(State) error
	// Metric, Item and Query define retrieval with the model (package
	// comment above). Item and Query write into dst, grown if short, and
	// return it; they are safe for concurrent use with each other once
	// training is over, and panic if len(x) ≠ Σ n_i.
	Metric() Metric
	Item(dst, x []float64) []float64
	Query(dst, x []float64) []float64
}

// DenseOnline is a dense model learnt from triplets one at a time (OASIS
// with a full matrix, OMDML, LOMDML), and trained in shards like Stateful.
type DenseOnline interface {
	DenseModel
	// Update learns from the triplet (x, pos, neg), x being more similar
	// to pos than to neg, and returns the hinge loss suffered before the
	// step. It returns an error, and changes nothing, if a length is wrong
	// or a value is not finite.
	Update(x, pos, neg []float64) (float64, error)
}

// DenseBatch is a dense model learnt from a whole training set at once
// (SSML, ITQ, CCA-ITQ, LSH, mGLP, and the untrained Euclidean baseline).
type DenseBatch interface {
	DenseModel
	// Fit trains on X (n×d, one image per row) and Y (n×t, each image's
	// text as a dense bag of tags: labels one-hot where there are no tags).
	// Learners that do not use text ignore Y. Fit returns an error for
	// data it cannot learn from (n too small, NaN, wrong width).
	Fit(X, Y *mat.Dense) error
}

// A DenseFactory makes a dense model of one algorithm for modalities of
// dimensions dims, from hyper-parameters by name (unknown names are an
// error, missing ones take the defaults, as for Factory).
type DenseFactory func(dims []int, params map[string]float64) (DenseModel, error)

var denseRegistry struct {
	sync.RWMutex
	m map[string]DenseFactory
}

// RegisterDense makes a dense model available to NewDense under name, as
// Register does for bag-of-words learners. It panics if name is empty, f
// is nil, or name is already registered by either function.
func RegisterDense(name string, f DenseFactory) {
	if name == "" || f == nil {
		panic("learners: RegisterDense with an empty name or a nil DenseFactory")
	}
	registry.RLock()
	_, dup := registry.m[name]
	registry.RUnlock()
	denseRegistry.Lock()
	defer denseRegistry.Unlock()
	if _, d := denseRegistry.m[name]; d || dup {
		panic(fmt.Sprintf("learners: RegisterDense called twice for %q", name))
	}
	if denseRegistry.m == nil {
		denseRegistry.m = make(map[string]DenseFactory)
	}
	denseRegistry.m[name] = f
}

// NewDense returns a new dense model of the algorithm registered as name.
// The caller type-asserts it to DenseOnline or DenseBatch to train it.
func NewDense(name string, dims []int, params map[string]float64) (DenseModel, error) {
	denseRegistry.RLock()
	f, ok := denseRegistry.m[name]
	denseRegistry.RUnlock()
	if !ok {
		return nil, fmt.Errorf("unknown learner %q of global features; they are: %s", name, strings.Join(DenseNames(), ", "))
	}
	if len(dims) == 0 {
		return nil, fmt.Errorf("%s: no modalities", name)
	}
	for i, n := range dims {
		if n <= 0 {
			return nil, fmt.Errorf("%s: modality %d has dimension %d", name, i, n)
		}
	}
	return f(slices.Clone(dims), params)
}

// DenseNames returns the names of the registered dense models, sorted.
func DenseNames() []string {
	denseRegistry.RLock()
	defer denseRegistry.RUnlock()
	names := make([]string, 0, len(denseRegistry.m))
	for n := range denseRegistry.m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// IsDense reports whether name is a registered dense model.
func IsDense(name string) bool {
	denseRegistry.RLock()
	defer denseRegistry.RUnlock()
	_, ok := denseRegistry.m[name]
	return ok
}

// CheckFitData reports why X cannot be the training data of the dense batch
// learner name over d dimensions: nil or empty, not d columns wide, or a
// value that is not finite. Fit methods call it first.
func CheckFitData(name string, X *mat.Dense, d int) error {
	if X == nil || X.IsEmpty() {
		return fmt.Errorf("%s: Fit: no training data", name)
	}
	n, c := X.Dims()
	if c != d {
		return fmt.Errorf("%s: Fit: X has %d columns, want %d (the sum of the modality dimensions)", name, c, d)
	}
	for i := range n {
		for j, v := range X.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s: Fit: X[%d,%d] = %v is not finite", name, i, j, v)
			}
		}
	}
	return nil
}

// Width returns d = Σ dims, the length of a dense model's input, checking
// what every dense learner's constructor needs: at least one modality, each
// of positive dimension, and d at most max (max ≤ 0: no bound; learners
// holding d×d matrices bound d so that d² cannot overflow). Its errors
// start with name, the learner's.
func Width(name string, dims []int, max int) (int, error) {
	if len(dims) == 0 {
		return 0, fmt.Errorf("%s: no modalities", name)
	}
	d := 0
	for i, n := range dims {
		if n <= 0 {
			return 0, fmt.Errorf("%s: modality %d has dimension %d, want > 0", name, i, n)
		}
		if max > 0 && n > max-d { // d + n > max without overflow
			return 0, fmt.Errorf("%s: total dimension of modalities %v exceeds %d", name, dims, max)
		}
		d += n
	}
	return d, nil
}
