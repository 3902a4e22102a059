package index

import (
	"fmt"
	"math"
	"slices"

	"github.com/bowline/bowline/learners/sparse"
)

// Accumulator sums one query's scores S_w(q, x_d) = Σ_i w_i q_i x_{d,i}
// over the documents of an Index, in float64, word by word in the query's
// order. It is the scoring loop of both the Searcher and the evaluation's
// rankings, so the two give the same scores bit for bit. It reuses its
// scratch (9 bytes a document) from query to query, so it is not safe for
// concurrent use; the index's Accumulators share 4 bytes a document more
// once a query touches most documents (Docs).
type Accumulator struct {
	ix      *Index
	acc     []float64 // acc[d]: S_w(q, x_d) so far; zero between queries
	seen    []bool    // seen[d]: d is in touched
	touched []int32   // documents with a posting hit, in first-hit order
	dense   bool      // the query's postings were summed without marks
}

// NewAccumulator returns an Accumulator over ix's documents.
func (ix *Index) NewAccumulator() *Accumulator {
	n := len(ix.ids)
	return &Accumulator{ix: ix, acc: make([]float64, n), seen: make([]bool, n)}
}

// Add adds q's scores: w_i q_i x_{d,i} for every weighted word i of q and
// every document d holding it. It panics if q is malformed (lengths
// differ, a value is not finite) or has a word outside the vocabulary.
//
// A query whose weighted words' postings number at least half the
// documents is summed without marking the documents it touches: a photo's
// thousands of words over a 10K vocabulary touch nearly every document,
// and a walk over all of them afterwards (Docs) costs less than a mark
// and its branch on every posting. The scores are the same either way.
func (a *Accumulator) Add(q sparse.Vector) {
	ix := a.ix
	if len(q.Idx) != len(q.Val) {
		panic(fmt.Sprintf("index: query with %d indices and %d values", len(q.Idx), len(q.Val)))
	}
	reach := 0
	for t, i := range q.Idx {
		// w_i q_i once per query word; then one multiply-add per posting.
		if ix.weighted(q, t) != 0 {
			reach += int(ix.start[i+1] - ix.start[i])
		}
	}
	acc := a.acc
	a.dense = a.dense || 2*reach >= len(acc)
	for t, i := range q.Idx {
		qw := float64(ix.weight[i]) * float64(q.Val[t])
		if qw == 0 {
			continue
		}
		docs, vals := ix.Postings(i)
		vals = vals[:len(docs)]
		if a.dense {
			for p, d := range docs {
				acc[d] += qw * float64(vals[p])
			}
			continue
		}
		for p, d := range docs {
			if !a.seen[d] {
				a.seen[d] = true
				a.touched = append(a.touched, d)
			}
			acc[d] += qw * float64(vals[p])
		}
	}
}

// Scores returns the scores so far by document ordinal. The slice is the
// Accumulator's: valid, and to be read only, until Reset.
func (a *Accumulator) Scores() []float64 { return a.acc }

// Docs returns every document whose score may be nonzero, each once: the
// documents the query's postings touched, or every document after a query
// that reached most of them (Add). The slice is the Accumulator's: valid,
// and to be read only, until the next Add or Reset.
func (a *Accumulator) Docs() []int32 {
	if !a.dense {
		return a.touched
	}
	ix := a.ix
	ix.ordinalsOnce.Do(func() {
		ix.ordinals = make([]int32, len(ix.ids))
		for d := range ix.ordinals {
			ix.ordinals[d] = int32(d)
		}
	})
	return ix.ordinals
}

// Reset zeroes the scores for the next query.
func (a *Accumulator) Reset() {
	for _, d := range a.touched {
		a.acc[d], a.seen[d] = 0, false
	}
	if a.dense {
		clear(a.acc)
	}
	a.touched, a.dense = a.touched[:0], false
}

// Score returns S_w(q, x_doc) = Σ_i w_i q_i x_{doc,i}, the score an
// Accumulator (and so a Searcher) sums for doc, bit for bit: the same
// products added in the same order, word by word in the query's order.
// It finds doc in each weighted word's postings by binary search, for a
// document a ranking did not reach. It panics as Add does, and if doc is
// not in [0, Docs()).
func (ix *Index) Score(q sparse.Vector, doc int) float64 {
	if len(q.Idx) != len(q.Val) {
		panic(fmt.Sprintf("index: query with %d indices and %d values", len(q.Idx), len(q.Val)))
	}
	if doc < 0 || doc >= len(ix.ids) {
		panic(fmt.Sprintf("index: document %d outside [0, %d)", doc, len(ix.ids)))
	}
	var s float64
	for t, i := range q.Idx {
		qw := ix.weighted(q, t)
		if qw == 0 {
			continue
		}
		docs, vals := ix.Postings(i)
		if p, ok := slices.BinarySearch(docs, int32(doc)); ok {
			s += qw * float64(vals[p])
		}
	}
	return s
}

// weighted returns w_i q_i for the t-th word i of q. It panics if i is
// outside the vocabulary or the product is not finite: a NaN score would
// fit nowhere in the ranking.
func (ix *Index) weighted(q sparse.Vector, t int) float64 {
	i := q.Idx[t]
	if int64(i) >= int64(ix.vocab) {
		panic(fmt.Sprintf("index: query word %d outside the vocabulary of %d", i, ix.vocab))
	}
	qw := float64(ix.weight[i]) * float64(q.Val[t])
	if math.IsNaN(qw) || math.IsInf(qw, 0) {
		panic(fmt.Sprintf("index: query value %v for word %d is not finite", q.Val[t], i))
	}
	return qw
}
