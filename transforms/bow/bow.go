// Package bow turns an image's local descriptors into a bag-of-visual-words
// vector: each descriptor is quantised to its nearest visual word (a k-means
// centroid), the words are counted, and the counts are weighted by inverse
// document frequency and L2-normalised.
//
// # Soft assignment
//
// Hard assignment loses the descriptors that fall near the boundary of two
// words' cells: a small change in the image moves them to the other word,
// and the two images no longer match on it. With soft assignment
// (Quantizer.SetSoft; Philbin, Chum, Isard, Sivic & Zisserman, "Lost in
// quantization: improving particular object retrieval in large scale image
// databases", CVPR 2008) each descriptor instead counts towards its R
// nearest words, word j with weight exp(−d_j²/(2σ²)) where d_j is its
// Euclidean distance to the word, the R weights normalised to sum to 1. An
// image's term frequencies are then sums of weights rather than counts, and
// a word is present in the image (for document frequencies) if any of its
// descriptors gives it weight, however little (short of a sum that rounds
// to zero in float32). See SoftOptions and
// DefaultSigma for the choice of σ.
//
// # Burstiness
//
// A visual word is bursty: a repeated texture (a brick wall, a striped
// shirt, foliage) puts tens of descriptors on the same few words, and with
// raw term frequencies those words dominate the image's L2-normalised
// vector, so images that share one texture look alike whatever else they
// hold. Jégou, Douze & Schmid ("On the burstiness of visual elements",
// CVPR 2009) damp the repetitions with a power law. TF chooses how a term
// frequency enters the weight before IDF and L2 normalisation: raw,
// square-rooted (their α = 0.5) or log(1 + tf). Document frequencies, and
// so IDF, count images that contain a word, which no TF changes.
//
// On ETH-80's held-out photos (20% of each label; 10K words) square roots
// raise the held-out mAP of TF-IDF by 0.004 with its 8 category labels and
// 0.008 with its 80 objects, and SOLIS-ADA's by 0.004 and 0.006, each
// significant in a paired bootstrap; ln(1 + tf) a little less; at 1K words
// 0.001–0.009. The synthetic corpus (package synthetic) loses 0.018: its
// labels are prototypes repeated within an image, so there bursts are the
// signal.
package bow

import (
	"fmt"
	"math"
	"slices"

	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/nn"
	"github.com/bowline/bowline/transforms/setting"
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
	forest *nn.Forest
	search nn.Search

	// ivf, when set, assigns hard words approximately (see SetIVF).
	ivf        *nn.IVF
	ivfScratch nn.IVFScratch

	// exact assigns hard words without a forest, built on first use.
	exact   *nn.Exact
	scratch nn.ExactScratch

	// soft, when soft.R > 0, assigns each descriptor to its soft.R
	// nearest words (see SetSoft).
	soft  SoftOptions
	kidx  []int32   // the current descriptor's nearest words,
	kdist []float32 // their squared distances
	kw    []float64 // and their weights
	// keys holds one (word << 32 | i) per weighted assignment of the
	// current call, i indexing its weight in wts; sorting the keys groups
	// the words while keeping each word's weights in descriptor order.
	keys []uint64
	wts  []float64
}

// DefaultSigma is the σ of soft assignment when SoftOptions.Sigma is zero:
// √6,250 ≈ 79.06, the value of Philbin et al. (2008), in the units of the
// descriptor bytes.
//
// It transfers as it stands because our descriptors are on the paper's
// scale: package sift quantises SIFT as Lowe does, a unit vector times 512
// (components 0–255 after saturation), and RootSIFT the same way, so both
// have L2 norm 512 (measured: 512.0 on average over ETH-80). On ETH-80
// (SIFT from 1 image in 8, vocabularies trained on objects 1–8, measured on
// the held-out objects 9 and 10) the nearest word of a descriptor is at
// d₁ ≈ 260 (d₁² ≈ 70,000, so σ² ≈ 0.09·d₁²), the second and third are
// further by a median d₂² − d₁² ≈ 7,900 and d₃² − d₁² ≈ 14,500 at 1,000
// words, and R = 3 with this σ gives the nearest word a mean weight of
// 0.57 and the next two 0.26 and 0.17 (0.51, 0.28, 0.20 at 10,000 words;
// 0.49, 0.29, 0.22 for RootSIFT, whose distances are about 20% shorter):
// the descriptor stays mostly with its nearest word, as the paper intends,
// without collapsing to hard assignment (σ = 32 would give 0.89, 0.09,
// 0.02) or to an even split (σ = 112: 0.46, 0.30, 0.24). A vocabulary's
// own Objective is no basis for a relative default: it is measured on its
// training sample, and large vocabularies fit that far better than unseen
// descriptors.
const DefaultSigma = 79.05694150420949

// SoftOptions configures soft assignment (Quantizer.SetSoft). The zero
// value is hard assignment.
type SoftOptions struct {
	// R is the number of nearest words each descriptor is assigned to: 3
	// in Philbin et al. (2008). 0 is hard assignment by the nearest word
	// alone. R = 1 takes the soft path with a single weight of exactly 1
	// and so gives exactly the hard counts; larger R costs a k-nearest
	// search and about R times more entries per descriptor. R larger than
	// the vocabulary is the whole vocabulary.
	R int

	// Sigma is σ of the weight exp(−d²/(2σ²)) of a word at Euclidean
	// distance d from the descriptor, in the units of the descriptor bytes.
	// Smaller σ concentrates the weight on the nearest word, larger σ
	// spreads it evenly over the R words. 0 means DefaultSigma.
	Sigma float64
}

// Validate reports whether o is usable.
func (o SoftOptions) Validate() error {
	switch {
	case o.R < 0:
		return setting.Errorf("bow", "SoftOptions.R", o.R, "0 (hard assignment) or more")
	case !(o.Sigma >= 0) || math.IsInf(o.Sigma, 1):
		return setting.Errorf("bow", "SoftOptions.Sigma", o.Sigma, "0 (DefaultSigma) or a positive finite number")
	}
	return nil
}

// sigma returns the σ in force.
func (o SoftOptions) sigma() float64 {
	if o.Sigma == 0 {
		return DefaultSigma
	}
	return o.Sigma
}

// SetSoft makes q assign each descriptor to its o.R nearest words with
// Gaussian weights, as the package documentation describes, searching with
// q's forest if it has one (the forest's k-nearest search, with the same
// Checks) and exhaustively otherwise. The zero SoftOptions restores hard
// assignment. It returns an error, leaving q unchanged, if o is invalid.
func (q *Quantizer) SetSoft(o SoftOptions) error {
	if err := o.Validate(); err != nil {
		return err
	}
	q.soft = o
	if r := min(o.R, q.k); r > 0 {
		q.kidx, q.kdist, q.kw = make([]int32, r), make([]float32, r), make([]float64, r)
	}
	return nil
}

// Soft returns the soft-assignment options in force; R = 0 means hard
// assignment.
func (q *Quantizer) Soft() SoftOptions { return q.soft }

// SoftWeights sets w[j] to the soft-assignment weight of the j-th of the
// r = len(sqDist) nearest words of one descriptor, whose squared Euclidean
// distances are sqDist: exp(−sqDist[j]/(2σ²)), normalised so that the r
// weights sum to 1. The weights fall as the distance grows.
//
// The weights are computed relative to the nearest word,
// exp(−(sqDist[j] − min)/(2σ²)), which the normalisation makes equal to
// the formula but which cannot underflow for all r words at once: the
// nearest has weight at least 1/r however far away it is. With r = 1 the
// weight is exactly 1. SoftWeights does not allocate. It panics if
// len(w) < len(sqDist) or sigma is not positive and finite.
func SoftWeights(w []float64, sqDist []float32, sigma float64) {
	if len(w) < len(sqDist) || !(sigma > 0) || math.IsInf(sigma, 1) {
		panic(fmt.Sprintf("bow: SoftWeights of %d distances into %d weights with sigma %v", len(sqDist), len(w), sigma))
	}
	if len(sqDist) == 0 {
		return
	}
	m := sqDist[0]
	for _, d := range sqDist[1:] {
		m = min(m, d)
	}
	inv := -1 / (2 * sigma * sigma)
	var sum float64
	for j, d := range sqDist {
		e := math.Exp((float64(d) - float64(m)) * inv)
		w[j] = e
		sum += e
	}
	for j := range sqDist {
		w[j] /= sum
	}
}

// NewForestQuantizer returns a Quantizer that assigns each descriptor with
// the approximate nearest-centroid search of f, as approximate k-means
// trained it: exhaustive search costs O(k·dim) per descriptor, which at
// 100,000 words and more is the whole job's cost. The forest's Checks
// trade recall for speed; Checks ≥ k makes it exact.
func NewForestQuantizer(f *nn.Forest) *Quantizer {
	return &Quantizer{centroids: f.Centroids(), k: f.K(), dim: f.Dim(), x: make([]float32, f.Dim()), forest: f}
}

// SetIVF makes q assign hard words with the approximate search of v, an IVF
// over q's centroids: at 10K words and more it finds the nearest word as
// often as the forest's default search in a fifth of the time or less
// (cmd/akmbench -mode assign). Soft assignment keeps searching with q's
// forest, or exhaustively. It panics if v's centroids are not q's.
func (q *Quantizer) SetIVF(v *nn.IVF) {
	c := v.Centroids()
	if v.Dim() != q.dim || len(c) != len(q.centroids) || &c[0] != &q.centroids[0] {
		panic("bow: SetIVF with an IVF over other centroids")
	}
	q.ivf = v
}

// NewQuantizerOf returns a Quantizer of the vocabulary centroids (as
// NewQuantizer takes them) that searches it as the vocabulary was
// trained, through the searches kmeans.QuantizerIndexes builds: with a
// forest, NewForestQuantizer's, and with an IVF too, hard words through
// it (SetIVF); exhaustively without a forest (NewQuantizer).
func NewQuantizerOf(centroids []float32, dim int, forest *nn.Forest, ivf *nn.IVF) (*Quantizer, error) {
	if forest == nil {
		return NewQuantizer(centroids, dim)
	}
	q := NewForestQuantizer(forest)
	if ivf != nil {
		q.SetIVF(ivf)
	}
	return q, nil
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
// With soft assignment (SetSoft) Val holds instead each word's sum of the
// weights its descriptors gave it (SoftWeights), added in float64 in
// descriptor order and rounded once to float32, so it depends only on desc
// and the vocabulary; the values sum to n up to rounding, and a word whose
// sum rounds to zero is left out.
//
// Quantize panics if len(desc) is not a multiple of Dim(): a truncated
// descriptor means the caller split its input wrongly, and guessing would
// hide that.
func (q *Quantizer) Quantize(desc []byte) sparse.Vector {
	if q.soft.R > 0 {
		q.quantizeSoft(desc)
		m := distinctWords(q.keys)
		return q.softCounts(sparse.Vector{Idx: make([]uint32, 0, m), Val: make([]float32, 0, m)})
	}
	q.quantize(desc)
	m := distinct(q.words)
	return q.counts(sparse.Vector{Idx: make([]uint32, 0, m), Val: make([]float32, 0, m)})
}

// QuantizeTo is Quantize writing into dst's storage, which it reuses and
// grows as needed, so a caller that keeps dst between calls allocates
// nothing once it has grown. The result aliases dst.
func (q *Quantizer) QuantizeTo(dst sparse.Vector, desc []byte) sparse.Vector {
	if q.soft.R > 0 {
		q.quantizeSoft(desc)
		return q.softCounts(sparse.Vector{Idx: dst.Idx[:0], Val: dst.Val[:0]})
	}
	q.quantize(desc)
	return q.counts(sparse.Vector{Idx: dst.Idx[:0], Val: dst.Val[:0]})
}

// quantizeSoft fills q.keys and q.wts with the weighted words of the
// descriptors in desc, the keys sorted.
func (q *Quantizer) quantizeSoft(desc []byte) {
	if len(desc)%q.dim != 0 {
		panic(fmt.Sprintf("bow: %d descriptor bytes is not a whole number of %d-byte descriptors", len(desc), q.dim))
	}
	if n := len(desc) / q.dim; int64(n)*int64(len(q.kidx)) > math.MaxUint32 {
		panic(fmt.Sprintf("bow: %d descriptors × %d words exceed the 2³² assignments of one call", n, len(q.kidx)))
	}
	q.keys, q.wts = q.keys[:0], q.wts[:0]
	sigma := q.soft.sigma()
	for off := 0; off < len(desc); off += q.dim {
		d := desc[off : off+q.dim]
		var m int
		if q.forest != nil {
			m = q.forest.NearestKBytes(d, q.kidx, q.kdist, &q.search)
		} else {
			for j, b := range d {
				q.x[j] = float32(b)
			}
			m = nn.NearestK(q.centroids, q.dim, q.x, q.kidx, q.kdist)
		}
		w := q.kw[:m]
		SoftWeights(w, q.kdist[:m], sigma)
		for j, v := range w {
			if v > 0 {
				q.keys = append(q.keys, uint64(q.kidx[j])<<32|uint64(len(q.wts)))
				q.wts = append(q.wts, v)
			}
		}
	}
	// The keys are distinct, so any sort gives the same order: by word,
	// then by assignment, which is descriptor order.
	slices.Sort(q.keys)
}

// distinctWords returns the number of distinct words in the sorted keys.
func distinctWords(keys []uint64) int {
	m := 0
	for i := range keys {
		if i == 0 || keys[i]>>32 != keys[i-1]>>32 {
			m++
		}
	}
	return m
}

// softCounts appends to v each word of the sorted q.keys with the sum of
// its weights, leaving out sums that round to zero in float32.
func (q *Quantizer) softCounts(v sparse.Vector) sparse.Vector {
	for i := 0; i < len(q.keys); {
		w := q.keys[i] >> 32
		var sum float64
		j := i
		for ; j < len(q.keys) && q.keys[j]>>32 == w; j++ {
			sum += q.wts[uint32(q.keys[j])]
		}
		if tf := float32(sum); tf != 0 {
			v.Idx = append(v.Idx, uint32(w))
			v.Val = append(v.Val, tf)
		}
		i = j
	}
	return v
}

// quantize fills q.words with the sorted words of the descriptors in desc.
func (q *Quantizer) quantize(desc []byte) {
	if len(desc)%q.dim != 0 {
		panic(fmt.Sprintf("bow: %d descriptor bytes is not a whole number of %d-byte descriptors", len(desc), q.dim))
	}
	q.words = q.words[:0]
	if q.ivf != nil {
		q.words = q.ivf.QuantizeBytes(q.words, desc, &q.ivfScratch)
		slices.Sort(q.words)
		return
	}
	if q.forest != nil {
		q.words = q.forest.QuantizeBytes(q.words, desc, &q.search)
		slices.Sort(q.words)
		return
	}
	if q.exact == nil {
		q.exact = nn.NewExact(q.centroids, q.dim)
	}
	q.words = q.exact.QuantizeBytes(q.words, desc, &q.scratch)
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
// word i at least once — under soft assignment, that give it any weight,
// counted once per image whatever the weight, so that idf keeps measuring
// how many images a word occurs in rather than how strongly — and
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

// TF is how an image's term frequency tf of a word (its count, or its sum
// of weights under soft assignment) enters the word's weight before IDF:
// see Burstiness in the package documentation. The zero value is TFRaw.
type TF string

// The TFs.
const (
	// TFRaw weights a word by tf itself, as classic TF-IDF does.
	TFRaw TF = "raw"
	// TFSqrt weights it by √tf: a word seen 16 times weighs 4 times one
	// seen once, not 16 times.
	TFSqrt TF = "sqrt"
	// TFLog weights it by ln(1 + tf): 16 times weighs 4.1 times once,
	// like TFSqrt, but 100 times 6.7 times (TFSqrt 10): it damps larger
	// bursts more.
	TFLog TF = "log"
)

// TFs lists the TFs, for a flag's help and its check.
var TFs = []TF{TFRaw, TFSqrt, TFLog}

// Validate reports whether t is one of TFs, or the zero value.
func (t TF) Validate() error {
	if t == "" || slices.Contains(TFs, t) {
		return nil
	}
	return setting.Errorf("bow", "TF", string(t), "%s, %s or %s", TFRaw, TFSqrt, TFLog)
}

// of returns the weight of term frequency tf, not negative. Raw returns
// tf itself, so that raw TF-IDF is bit for bit what it was before TF.
func (t TF) of(tf float32) float64 {
	switch t {
	case "", TFRaw:
		return float64(tf)
	case TFSqrt:
		return math.Sqrt(float64(tf))
	case TFLog:
		return math.Log1p(float64(tf))
	}
	panic(fmt.Sprintf("bow: term frequency %q", string(t))) // callers Validate
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
	return TFIDFWith(counts, idf, TFRaw)
}

// TFIDFWith is TFIDF with the term frequencies weighted by tf first:
// coordinate i is tf(counts_i)·idf_i, L2-normalised. It panics, as TFIDF
// does, on counts from another vocabulary, on an invalid tf, and under
// TFSqrt or TFLog on a negative count, which no quantisation gives.
func TFIDFWith(counts sparse.Vector, idf []float32, tf TF) sparse.Vector {
	if err := tf.Validate(); err != nil {
		panic(err.Error())
	}
	if len(counts.Idx) != len(counts.Val) {
		panic(fmt.Sprintf("bow: TFIDF of a vector with %d indices and %d values", len(counts.Idx), len(counts.Val)))
	}
	m := 0
	var ss float64
	for k, i := range counts.Idx {
		if int64(i) >= int64(len(idf)) {
			panic(fmt.Sprintf("bow: word %d is outside the vocabulary of %d idf weights", i, len(idf)))
		}
		if tf != TFRaw && tf != "" && counts.Val[k] < 0 {
			panic(fmt.Sprintf("bow: word %d has term frequency %v: %s of a negative count", i, counts.Val[k], tf))
		}
		if w := tf.of(counts.Val[k]) * float64(idf[i]); w != 0 {
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
		if w := float32(tf.of(counts.Val[k]) * float64(idf[i]) * inv); w != 0 {
			v.Idx = append(v.Idx, i)
			v.Val = append(v.Val, w)
		}
	}
	return v
}
