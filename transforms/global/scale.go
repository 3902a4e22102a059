package global

import (
	"errors"
	"fmt"
	"math"
)

// Dims are the dimensions of the five modalities in the order in which
// they are concatenated into one vector for learning (Concat): colour,
// edge, Gabor, LBP, GIST.
var Dims = []int{ColourDim, EdgeDim, GaborDim, LBPDim, GISTDim}

// Concat appends the five modalities to dst in the order of Dims and
// returns it, or an error naming the first modality whose length is not
// its dimension (an image described without global features has none).
func Concat(dst []float32, colour, edge, gabor, lbp, gist []float32) ([]float32, error) {
	for i, m := range [][]float32{colour, edge, gabor, lbp, gist} {
		if len(m) != Dims[i] {
			return dst, fmt.Errorf("global: modality %d has %d values, want %d", i, len(m), Dims[i])
		}
		dst = append(dst, m...)
	}
	return dst, nil
}

// Moments accumulates, over a collection of concatenated feature vectors,
// what NewScaler needs: the count and the per-dimension sums of x and x².
// The zero value is empty; Add and Merge size it on first use.
type Moments struct {
	N     int64
	Sum   []float64
	SumSq []float64
}

// Add adds one vector.
func (m *Moments) Add(x []float32) {
	if m.Sum == nil {
		m.Sum, m.SumSq = make([]float64, len(x)), make([]float64, len(x))
	}
	if len(x) != len(m.Sum) {
		panic(fmt.Sprintf("global: Moments.Add of %d values to moments of %d", len(x), len(m.Sum)))
	}
	m.N++
	for i, v := range x {
		f := float64(v)
		m.Sum[i] += f
		m.SumSq[i] += f * f
	}
}

// Merge adds o's vectors to m.
func (m *Moments) Merge(o Moments) {
	if o.N == 0 {
		return
	}
	if m.N == 0 {
		m.N, m.Sum, m.SumSq = o.N, append([]float64(nil), o.Sum...), append([]float64(nil), o.SumSq...)
		return
	}
	if len(o.Sum) != len(m.Sum) {
		panic(fmt.Sprintf("global: Moments.Merge of %d dimensions into %d", len(o.Sum), len(m.Sum)))
	}
	m.N += o.N
	for i := range m.Sum {
		m.Sum[i] += o.Sum[i]
		m.SumSq[i] += o.SumSq[i]
	}
}

// Scaler puts a collection's concatenated global features on a common
// footing before learning:
//
//	x̂_j = (x_j − μ_j) / s_k   for every dimension j of modality k,
//	s_k² = Σ_{j∈k} Var(x_j) = the mean of ‖x_k − μ_k‖² over the collection.
//
// Centring does not change distances and makes dot products (OASIS's
// bilinear similarity, the codes' sign projections) measure co-variation;
// the per-modality scale gives every modality a mean squared norm of 1,
// so each weighs the same in a Euclidean distance at the start, as
// OMDML's uniform modality weights θ assume, however many dimensions it has
// (GIST's 512 against edge's 37) and whatever its units. Within a modality
// the dimensions keep their relative scales: they are bins of one
// histogram or filter bank, and standardising each would inflate the
// near-empty bins. The OMDML paper scales every entry to [0, 1] instead,
// which leaves GIST dominating every distance.
type Scaler struct {
	Dims  []int
	Mean  []float64
	Scale []float64 // per modality: 1/s_k, or 0 for a constant modality
}

// NewScaler derives the Scaler of the collection m summarises, whose
// vectors are concatenations of modalities of dimensions dims.
func NewScaler(m Moments, dims []int) (Scaler, error) {
	if m.N == 0 {
		return Scaler{}, errors.New("global: no feature vectors to scale")
	}
	total := 0
	for _, d := range dims {
		total += d
	}
	if total != len(m.Sum) {
		return Scaler{}, fmt.Errorf("global: moments of %d dimensions for modalities of %d in all", len(m.Sum), total)
	}
	n := float64(m.N)
	s := Scaler{Dims: append([]int(nil), dims...), Mean: make([]float64, total), Scale: make([]float64, len(dims))}
	off := 0
	for k, d := range dims {
		var v float64
		for j := off; j < off+d; j++ {
			mu := m.Sum[j] / n
			s.Mean[j] = mu
			v += math.Max(0, m.SumSq[j]/n-mu*mu)
		}
		if v > 0 {
			s.Scale[k] = 1 / math.Sqrt(v)
		}
		off += d
	}
	return s, nil
}

// Apply writes the scaled x into dst (grown if short) and returns it. It
// panics if len(x) is not the Scaler's dimension.
func (s Scaler) Apply(dst []float32, x []float32) []float32 {
	if len(x) != len(s.Mean) {
		panic(fmt.Sprintf("global: Scaler.Apply to %d values, want %d", len(x), len(s.Mean)))
	}
	if cap(dst) < len(x) {
		dst = make([]float32, len(x))
	}
	dst = dst[:len(x)]
	off := 0
	for k, d := range s.Dims {
		for j := off; j < off+d; j++ {
			dst[j] = float32((float64(x[j]) - s.Mean[j]) * s.Scale[k])
		}
		off += d
	}
	return dst
}
