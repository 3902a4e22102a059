// Package densetest holds the shared test fixtures of the dense learners'
// tests (itq, mglp, ssml, euclidean), so that every learner is measured
// alike: a toy retrieval set of Gaussian classes, the mean average precision
// of a trained model on it, and small helpers for building models and
// comparing their output and state. Its panic check, MustPanic, serves the
// sparse learners' tests (oasis, solis) too.
//
// It is imported only by the learners' tests; it imports
// the learners package but none of the learners themselves, so it cannot
// form an import cycle with them.
package densetest

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/bowline/bowline/learners"
)

// Labelled is a toy retrieval set: features, one-hot labels as the tag
// matrix, and the labels.
type Labelled struct {
	X, Y   *mat.Dense
	labels []int
}

// gaussianClasses draws n points of the k classes whose means are the rows
// of means (over the first signal dimensions), with within-class sd within
// there, followed by noiseDims dimensions of pure noise with sd noiseSD.
func gaussianClasses(rng *rand.Rand, means *mat.Dense, n int, within float64, noiseDims int, noiseSD float64) Labelled {
	k, sig := means.Dims()
	d := sig + noiseDims
	s := Labelled{X: mat.NewDense(n, d, nil), Y: mat.NewDense(n, k, nil), labels: make([]int, n)}
	for i := range n {
		c := rng.IntN(k)
		s.labels[i] = c
		s.Y.Set(i, c, 1)
		for j := range sig {
			s.X.Set(i, j, means.At(c, j)+within*rng.NormFloat64())
		}
		for j := sig; j < d; j++ {
			s.X.Set(i, j, noiseSD*rng.NormFloat64())
		}
	}
	return s
}

// Split returns a database of nDB points and nQ queries from the same k
// classes, whose means have sd 1 in each of sig dimensions; the points have
// within-class sd within there, followed by noiseDims dimensions of pure
// noise with sd noiseSD. The draw is determined by seed.
func Split(seed uint64, k, sig int, within float64, noiseDims int, noiseSD float64, nDB, nQ int) (db, q Labelled) {
	rng := rand.New(rand.NewPCG(seed, 7))
	means := mat.NewDense(k, sig, nil)
	for c := range k {
		for j := range sig {
			means.Set(c, j, rng.NormFloat64())
		}
	}
	return gaussianClasses(rng, means, nDB, within, noiseDims, noiseSD), gaussianClasses(rng, means, nQ, within, noiseDims, noiseSD)
}

// MeanAP ranks db for every query by m's Metric on its embeddings (ties by
// index, which is random with respect to the class) and returns the mean
// average precision, relevant meaning same class.
//
// hamming is the Hamming distance between the codes of two embeddings under
// learners.Hamming's convention (itq.Hamming of the itq.Pack of each, which
// this package cannot import without an import cycle); it is used only when
// m's Metric is learners.Hamming, and may be nil otherwise.
func MeanAP(t *testing.T, m learners.DenseModel, db, q Labelled, hamming func(a, b []float64) int) float64 {
	t.Helper()
	if m.Metric() == learners.Hamming && hamming == nil {
		t.Fatalf("MeanAP of a %s model without a hamming function", m.Metric())
	}
	embed := func(X *mat.Dense, f func(dst, x []float64) []float64) [][]float64 {
		n, _ := X.Dims()
		out := make([][]float64, n)
		for i := range n {
			out[i] = f(nil, X.RawRowView(i))
		}
		return out
	}
	items, queries := embed(db.X, m.Item), embed(q.X, m.Query)
	dist := func(a, b []float64) float64 {
		switch m.Metric() {
		case learners.Euclidean:
			var s float64
			for i := range a {
				s += (a[i] - b[i]) * (a[i] - b[i])
			}
			return s
		case learners.Dot:
			var s float64
			for i := range a {
				s += a[i] * b[i]
			}
			return -s
		case learners.Hamming:
			return float64(hamming(a, b))
		}
		t.Fatalf("unknown metric %v", m.Metric())
		return 0
	}
	var total float64
	order := make([]int, len(items))
	ds := make([]float64, len(items))
	for qi, qv := range queries {
		for i, it := range items {
			order[i], ds[i] = i, dist(qv, it)
		}
		slices.SortStableFunc(order, func(a, b int) int {
			switch {
			case ds[a] < ds[b]:
				return -1
			case ds[a] > ds[b]:
				return 1
			}
			return 0
		})
		var hits, ap float64
		for r, i := range order {
			if db.labels[i] == q.labels[qi] {
				hits++
				ap += hits / float64(r+1)
			}
		}
		if hits > 0 {
			total += ap / hits
		}
	}
	return total / float64(len(queries))
}

// NewDense returns the registered dense learner name over dims with params,
// failing t if learners.NewDense fails or the model is not a
// learners.DenseBatch.
func NewDense(t *testing.T, name string, dims []int, params map[string]float64) learners.DenseBatch {
	t.Helper()
	m, err := learners.NewDense(name, dims, params)
	if err != nil {
		t.Fatalf("NewDense(%q, %v, %v): %v", name, dims, params, err)
	}
	b, ok := m.(learners.DenseBatch)
	if !ok {
		t.Fatalf("%s is a %T, not a learners.DenseBatch", name, m)
	}
	return b
}

// BitsEqual reports whether a and b have the same length and bit-identical
// elements (so NaN equals NaN and 0 differs from -0).
func BitsEqual(a, b []float64) bool {
	return len(a) == len(b) && slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// StatesEqual reports whether a and b have the same learner and step count
// and bit-identical vectors (BitsEqual).
func StatesEqual(a, b learners.State) bool {
	return a.Learner == b.Learner && a.Steps == b.Steps && slices.EqualFunc(a.Vectors, b.Vectors, BitsEqual)
}

// MustPanic calls f and reports an error on t, naming the call what, unless
// f panics with a string containing want.
func MustPanic(t *testing.T, what, want string, f func()) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil {
			t.Errorf("%s did not panic", what)
		} else if s, _ := r.(string); !strings.Contains(s, want) {
			t.Errorf("%s panicked with %v, want %q", what, r, want)
		}
	}()
	f()
}

// ConcurrentEmbeddings has several goroutines embed xs with m at once, half
// through Item and half through Query, on a model whose embedding is not
// yet computed (the race detector checks its locking): each must get want,
// the embeddings of an identically trained model computed one at a time.
func ConcurrentEmbeddings(t *testing.T, m learners.DenseModel, xs, want [][]float64) {
	t.Helper()
	got := make([][][]float64, 4)
	var wg sync.WaitGroup
	for g := range got {
		wg.Go(func() {
			for _, x := range xs {
				if g%2 == 0 {
					got[g] = append(got[g], m.Item(nil, x))
				} else {
					got[g] = append(got[g], m.Query(nil, x))
				}
			}
		})
	}
	wg.Wait()
	for g := range got {
		if !reflect.DeepEqual(got[g], want) {
			t.Errorf("%s: goroutine %d's embeddings differ from the sequential ones", m.Name(), g)
		}
	}
}
