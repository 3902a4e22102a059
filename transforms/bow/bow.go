// Package bow turns an image's local descriptors into a bag-of-visual-words
// vector: each descriptor is quantised to its nearest visual word (a k-means
// centroid), the words are counted, and the counts are weighted by inverse
// document frequency and L2-normalised.
package bow

import (
	"fmt"
	"math"
	"slices"

	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/sparse"
)

// Quantizer maps byte descriptors (such as 128-byte SIFT descriptors) to
// visual words. It holds per-call scratch, so it is not safe for concurrent
// use; Quantizers built on the same centroids share them, so making one per
// goroutine is cheap.
type Quantizer struct {
	centroids []float32 // k×dim, row-major; shared, never written
	k, dim    int

	x     []float32 // the current descriptor, converted
	words []uint32  // the word of every descriptor in the current call

	// forest, when set, assigns approximately (see NewForestQuantizer).
	forest *kmeans.Forest
	search kmeans.Search
}

// NewForestQuantizer returns a Quantizer that assigns each descriptor with
// the approximate nearest-centroid search of f, as approximate k-means
// trained it: exhaustive search costs O(k·dim) per descriptor, which at
// 100,000 words and more is the whole job's cost. The forest's Checks
// trade recall for speed; Checks ≥ k makes it exact.
func NewForestQuantizer(f *kmeans.Forest) *Quantizer {
	return &Quantizer{centroids: f.Centroids(), k: f.K(), dim: f.Dim(), x: make([]float32, f.Dim()), forest: f}
}

// NewQuantizer returns a Quantizer for the len(centroids)/dim visual words in
// centroids (row-major, as kmeans.Result.Centroids). The Quantizer keeps
// centroids without copying; the caller must not modify them while it is in
// use.
func NewQuantizer(centroids []float32, dim int) (*Quantizer, error) {
	if dim < 1 {
		return nil, fmt.Errorf("bow: descriptor dimension %d, want at least 1", dim)
	}
	if len(centroids) == 0 || len(centroids)%dim != 0 {
		return nil, fmt.Errorf("bow: %d centroid values is not a positive whole number of %d-dimensional centroids", len(centroids), dim)
	}
	k := len(centroids) / dim
	if int64(k) > math.MaxUint32 {
		return nil, fmt.Errorf("bow: %d centroids exceed the uint32 word ids", k)
	}
	for i, v := range centroids {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("bow: centroid %d coordinate %d is %v, want a finite value", i/dim, i%dim, v)
		}
	}
	return &Quantizer{centroids: centroids, k: k, dim: dim, x: make([]float32, dim)}, nil
}

// K returns the vocabulary size, the number of centroids.
func (q *Quantizer) K() int { return q.k }

// Dim returns the descriptor length in bytes.
func (q *Quantizer) Dim() int { return q.dim }

// Quantize assigns each of the n = len(desc)/Dim() descriptors in desc
// (row-major, one byte per coordinate) to its nearest centroid in squared
// Euclidean distance, ties to the lower word id, and returns the term counts:
// Idx holds the distinct word ids in ascending order and Val their counts.
// The vector is freshly allocated and the caller may keep it. No
// descriptors give an empty vector.
//
// Quantize panics if len(desc) is not a multiple of Dim(): a truncated
// descriptor means the caller split its input wrongly, and guessing would
// hide that.
func (q *Quantizer) Quantize(desc []byte) sparse.Vector {
	q.quantize(desc)
	m := distinct(q.words)
	return q.counts(sparse.Vector{Idx: make([]uint32, 0, m), Val: make([]float32, 0, m)})
}

// QuantizeTo is Quantize writing into dst's storage, which it reuses and
// grows as needed, so a caller that keeps dst between calls allocates
// nothing once it has grown. The result aliases dst.
func (q *Quantizer) QuantizeTo(dst sparse.Vector, desc []byte) sparse.Vector {
	q.quantize(desc)
	return q.counts(sparse.Vector{Idx: dst.Idx[:0], Val: dst.Val[:0]})
}

// quantize fills q.words with the sorted words of the descriptors in desc.
func (q *Quantizer) quantize(desc []byte) {
	if len(desc)%q.dim != 0 {
		panic(fmt.Sprintf("bow: %d descriptor bytes is not a whole number of %d-byte descriptors", len(desc), q.dim))
	}
	q.words = q.words[:0]
	if q.forest != nil {
		q.words = q.forest.QuantizeBytes(q.words, desc, &q.search)
		slices.Sort(q.words)
		return
	}
	for off := 0; off < len(desc); off += q.dim {
		for j, b := range desc[off : off+q.dim] {
			q.x[j] = float32(b)
		}
		w, _ := kmeans.Nearest(q.centroids, q.dim, q.x)
		q.words = append(q.words, uint32(w))
	}
	// Sorting the n words costs O(n log n), negligible against the
	// O(n·k·dim) search, and needs no k-sized count array.
	slices.Sort(q.words)
}

// distinct returns the number of distinct values in the sorted slice w.
func distinct(w []uint32) int {
	m := 0
	for i := range w {
		if i == 0 || w[i] != w[i-1] {
			m++
		}
	}
	return m
}

// counts appends the run lengths of the sorted q.words to v.
func (q *Quantizer) counts(v sparse.Vector) sparse.Vector {
	for i := 0; i < len(q.words); {
		j := i + 1
		for j < len(q.words) && q.words[j] == q.words[i] {
			j++
		}
		v.Idx = append(v.Idx, q.words[i])
		v.Val = append(v.Val, float32(j-i))
		i = j
	}
	return v
}

// IDF returns the inverse document frequencies of a vocabulary from its
// document frequencies: df[i] is the number of the n images that contain
// word i at least once, and
//
//	idf_i = ln(n / df_i)  for df_i > 0,
//	idf_i = 0             for df_i = 0.
//
// A word present in every image (df_i = n) thus gets weight 0, so TFIDF drops
// it: it cannot discriminate between images. A word in no image gets 0 too;
// it can appear only in queries from outside the collection, where it
// matches nothing anyway.
//
// IDF panics if n < 0 or some df_i is outside [0, n]: such counts cannot come
// from one collection.
func IDF(df []int64, n int64) []float32 {
	if n < 0 {
		panic(fmt.Sprintf("bow: IDF with %d documents", n))
	}
	idf := make([]float32, len(df))
	for i, d := range df {
		if d < 0 || d > n {
			panic(fmt.Sprintf("bow: document frequency %d of word %d is outside [0, %d]", d, i, n))
		}
		if d > 0 {
			idf[i] = float32(math.Log(float64(n) / float64(d)))
		}
	}
	return idf
}

// TFIDF returns the tf-idf vector of an image with term counts counts:
// coordinate i is counts_i·idf_i, scaled to unit Euclidean norm so that the
// dot product of two results is their cosine similarity. Coordinates whose
// weight is zero (a zero idf or count) are dropped, so the result is as
// sparse as possible; if every coordinate is dropped the result is empty.
// The result is freshly allocated; counts is not modified.
//
// TFIDF panics if a word id in counts is not below len(idf), which means
// counts and idf come from different vocabularies.
func TFIDF(counts sparse.Vector, idf []float32) sparse.Vector {
	if len(counts.Idx) != len(counts.Val) {
		panic(fmt.Sprintf("bow: TFIDF of a vector with %d indices and %d values", len(counts.Idx), len(counts.Val)))
	}
	m := 0
	var ss float64
	for k, i := range counts.Idx {
		if int64(i) >= int64(len(idf)) {
			panic(fmt.Sprintf("bow: word %d is outside the vocabulary of %d idf weights", i, len(idf)))
		}
		if w := float64(counts.Val[k]) * float64(idf[i]); w != 0 {
			m++
			ss += w * w
		}
	}
	v := sparse.Vector{Idx: make([]uint32, 0, m), Val: make([]float32, 0, m)}
	if m == 0 {
		return v
	}
	// Normalising from the float64 weights rounds once, rather than again
	// after a float32 intermediate.
	inv := 1 / math.Sqrt(ss)
	for k, i := range counts.Idx {
		// A weight too small to survive float32 rounding is dropped too,
		// so the result never stores a zero.
		if w := float32(float64(counts.Val[k]) * float64(idf[i]) * inv); w != 0 {
			v.Idx = append(v.Idx, i)
			v.Val = append(v.Val, w)
		}
	}
	return v
}
