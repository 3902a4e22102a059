package oasis

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/bowline/bowline/learners"
)

// DenseFull is full-matrix OASIS as a learners.DenseOnline, the form in which
// the pipeline trains it on dense global features: the input is the
// concatenation of the modalities of dimensions Dims, which OASIS treats as
// one vector of d = Σ n_i dimensions (W is d×d, so cross-modality terms are
// learnt too).
//
// Retrieval is by the bilinear similarity itself (learners.Dot): Item(x) = x
// and Query(x) = Wᵀx, so that Query(a)·Item(b) = aᵀWb = Similarity(a, b)
// and an index stores the raw features while each query costs one O(d²)
// product.
//
// The embedded *Full gives Similarity, Matrix, Steps, State and SetState.
// Update replaces Full's panicking Update by one that returns an error,
// because the pipeline's inputs come from data, not from code. DenseFull is
// not safe for concurrent use, except that Item, Query, Similarity and the
// other read-only methods may be called concurrently with each other.
type DenseFull struct {
	*Full
	dims []int
}

var _ learners.DenseOnline = (*DenseFull)(nil)

// NewDenseFull returns full-matrix OASIS for modalities of dimensions dims,
// with W = I. Σ dims must be at most 32768; the learner needs 8(Σ dims)²
// bytes.
func NewDenseFull(dims []int, p Params) (*DenseFull, error) {
	d, err := learners.Width("oasis-full", dims, maxFullDim)
	if err != nil {
		return nil, err
	}
	f, err := NewFull(d, p) // its errors already name the package
	if err != nil {
		return nil, err
	}
	return &DenseFull{Full: f, dims: append([]int(nil), dims...)}, nil
}

// Dims returns a copy of the modality dimensions; inputs have Σ n_i = Dim()
// values.
func (f *DenseFull) Dims() []int { return append([]int(nil), f.dims...) }

// Metric returns learners.Dot: OASIS learns a similarity, not a distance.
func (f *DenseFull) Metric() learners.Metric { return learners.Dot }

// Item writes the database-side embedding of x, x itself, into dst (grown if
// its capacity is short) and returns dst[:Dim()]. It panics if len(x) is not
// Dim().
func (f *DenseFull) Item(dst, x []float64) []float64 {
	f.mustDim("Item", []string{"x"}, x)
	dst = grow(dst, f.d)
	copy(dst, x)
	return dst
}

// Query writes the query-side embedding Wᵀx into dst (grown if its capacity
// is short) and returns dst[:Dim()], so that Query(a)·Item(b) = aᵀWb. It
// costs O(d²) and does not allocate when dst is large enough; dst must not
// overlap x. It panics if len(x) is not Dim().
func (f *DenseFull) Query(dst, x []float64) []float64 {
	f.mustDim("Query", []string{"x"}, x)
	dst = grow(dst, f.d)
	blas64.Gemv(blas.Trans, 1, f.w, blas64.Vector{N: f.d, Inc: 1, Data: x}, 0, blas64.Vector{N: f.d, Inc: 1, Data: dst})
	return dst
}

// Update performs Full's passive-aggressive step on the triplet (x, pos, neg)
// and returns the hinge loss suffered before it. Unlike Full.Update it
// returns an error, changing nothing (the step count included), if a length
// is not Dim() or a value is NaN or infinite.
func (f *DenseFull) Update(x, pos, neg []float64) (float64, error) {
	for k, v := range [3][]float64{x, pos, neg} {
		if len(v) != f.d {
			return 0, fmt.Errorf("oasis-full: Update: len(%s) = %d, want %d", tripletArgs[k], len(v), f.d)
		}
		for j, e := range v {
			if math.IsNaN(e) || math.IsInf(e, 0) {
				return 0, fmt.Errorf("oasis-full: Update: %s[%d] is %v", tripletArgs[k], j, e)
			}
		}
	}
	return f.Full.Update(x, pos, neg), nil
}

var tripletArgs = [3]string{"x", "pos", "neg"}

// grow returns dst[:n], reallocated if its capacity is short.
func grow(dst []float64, n int) []float64 {
	if cap(dst) < n {
		return make([]float64, n)
	}
	return dst[:n]
}

// "oasis-full" registers with learners.NewDense, taking "c" as Params
// returns it; missing parameters take DefaultParams.
func init() {
	learners.RegisterDense("oasis-full", func(dims []int, params map[string]float64) (learners.DenseModel, error) {
		p := DefaultParams()
		if err := learners.AssignParams(map[string]*float64{"c": &p.C}, params); err != nil {
			return nil, fmt.Errorf("oasis-full: %w", err)
		}
		f, err := NewDenseFull(dims, p)
		if err != nil {
			return nil, err
		}
		return f, nil
	})
}
