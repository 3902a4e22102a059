package bow

import (
	"fmt"
	"slices"

	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/nn"
)

// QuantizeWords is Quantize that also appends to words the hard (nearest)
// word of each descriptor of desc, in descriptor order, and returns both:
// spatial verification needs to know which keypoint went to which word,
// which the counts forget. Under hard assignment one search gives both, so
// the counts are exactly the run lengths of the sorted words. Under soft
// assignment the counts are Quantize's and the words those hard
// assignment would give (the IVF's or forest's search where the quantiser
// has one, as Quantize without SetSoft), at the cost of a second search.
func (q *Quantizer) QuantizeWords(desc []byte, words []uint32) (sparse.Vector, []uint32) {
	start := len(words)
	words = q.hardWords(words, desc)
	if q.soft.R > 0 {
		return q.Quantize(desc), words
	}
	q.words = append(q.words[:0], words[start:]...)
	slices.Sort(q.words)
	m := distinct(q.words)
	return q.counts(sparse.Vector{Idx: make([]uint32, 0, m), Val: make([]float32, 0, m)}), words
}

// hardWords appends the nearest word of each descriptor of desc to words,
// searching as quantize does.
func (q *Quantizer) hardWords(words []uint32, desc []byte) []uint32 {
	if len(desc)%q.dim != 0 {
		panic(fmt.Sprintf("bow: %d descriptor bytes is not a whole number of %d-byte descriptors", len(desc), q.dim))
	}
	switch {
	case q.ivf != nil:
		return q.ivf.QuantizeBytes(words, desc, &q.ivfScratch)
	case q.forest != nil:
		return q.forest.QuantizeBytes(words, desc, &q.search)
	}
	if q.exact == nil {
		q.exact = nn.NewExact(q.centroids, q.dim)
	}
	return q.exact.QuantizeBytes(words, desc, &q.scratch)
}
