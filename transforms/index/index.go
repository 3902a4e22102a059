// Package index is an in-memory inverted index over sparse image vectors,
// scored by a learned diagonal similarity
//
//	S_w(q, x) = Σ_i w_i q_i x_i.
//
// With w ≡ 1 and unit vectors this is cosine similarity; documents scaled
// by Normalize to unit length in the metric of w make it the cosine in that
// metric, which is how the job indexes learned weights. Words with w_i = 0
// contribute nothing to any score and are left out of the index entirely,
// which is how sparse learned weights shrink it.
package index

import (
	"fmt"
	"math"
	"sync"

	"github.com/bowline/bowline/learners/sparse"
)

// Index is an inverted index built once, by Build or FromPostings, and
// read-only afterwards; it is safe for concurrent use by multiple Searchers.
//
// Postings are stored compressed-sparse-row style: the postings of word i
// are docs[start[i]:start[i+1]] (document ordinals, ascending) with the
// document's coordinate x_i in the same positions of vals.
type Index struct {
	ids    []string
	vocab  int
	weight []float32 // w_i, len vocab
	start  []int     // len vocab+1
	docs   []int32
	vals   []float32

	// ordinals is 0, 1, …, len(ids)−1, made once for every Accumulator
	// of the index on their first query that reaches most documents.
	ordinalsOnce sync.Once
	ordinals     []int32
}

// Build indexes the documents vecs, whose identifiers are ids (ordinal i has
// ids[i] and vecs[i]), under the diagonal weights w over a vocabulary of
// vocab words. A nil w means w_i = 1 for every word, i.e. the plain dot
// product (cosine similarity for unit vectors).
//
// Only coordinates with w_i ≠ 0 and x_i ≠ 0 become postings: the others add
// zero to every score. Build copies what it keeps; ids, vecs and w may be
// reused afterwards.
//
// It returns an error if the lengths of ids and vecs differ, len(w) ≠ vocab,
// a weight is not finite, an id is repeated, or a vector is not a valid
// sparse.Vector over vocab words.
func Build(ids []string, vecs []sparse.Vector, w []float32, vocab int) (*Index, error) {
	if len(ids) != len(vecs) {
		return nil, fmt.Errorf("index: %d ids but %d vectors", len(ids), len(vecs))
	}
	if len(ids) > math.MaxInt32 {
		return nil, fmt.Errorf("index: %d documents exceed the int32 ordinals", len(ids))
	}
	if vocab < 0 || int64(vocab) > math.MaxUint32+1 {
		return nil, fmt.Errorf("index: vocabulary size %d outside [0, 2³²]", vocab)
	}
	weight := make([]float32, vocab)
	if w == nil {
		for i := range weight {
			weight[i] = 1
		}
	} else {
		if len(w) != vocab {
			return nil, fmt.Errorf("index: %d weights for a vocabulary of %d words", len(w), vocab)
		}
		for i, v := range w {
			if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("index: weight of word %d is %v, want a finite value", i, v)
			}
		}
		copy(weight, w)
	}
	seen := make(map[string]int, len(ids))
	for d, id := range ids {
		if prev, dup := seen[id]; dup {
			return nil, fmt.Errorf("index: documents %d and %d share the id %q", prev, d, id)
		}
		seen[id] = d
		if err := vecs[d].Validate(vocab); err != nil {
			return nil, fmt.Errorf("index: document %d (%q): %w", d, id, err)
		}
	}

	// Two passes: count postings per word, then fill each word's range in
	// document order, so every posting list comes out sorted by ordinal.
	start := make([]int, vocab+1)
	for _, v := range vecs {
		for k, i := range v.Idx {
			if weight[i] != 0 && v.Val[k] != 0 {
				start[i+1]++
			}
		}
	}
	for i := range vocab {
		start[i+1] += start[i]
	}
	nnz := start[vocab]
	ix := &Index{
		ids:    append([]string(nil), ids...),
		vocab:  vocab,
		weight: weight,
		start:  start,
		docs:   make([]int32, nnz),
		vals:   make([]float32, nnz),
	}
	next := make([]int, vocab)
	copy(next, start[:vocab])
	for d, v := range vecs {
		for k, i := range v.Idx {
			if x := v.Val[k]; weight[i] != 0 && x != 0 {
				p := next[i]
				ix.docs[p], ix.vals[p] = int32(d), x
				next[i]++
			}
		}
	}
	return ix, nil
}

// FromPostings returns the index whose postings are given compressed-sparse-
// row style, the layout Index keeps: the postings of word i are the
// document ordinals docs[start[i]:start[i+1]], strictly ascending, with the
// documents' unweighted coordinates x_i in the same positions of vals,
// scored with the weight weight[i]; ordinal d names the document ids[d].
// It is for indexes assembled elsewhere — read from posting-list files,
// part by part — that never hold every vector at once as Build needs.
//
// FromPostings takes ownership of weight, start, docs and vals without
// copying them: the caller must not modify them afterwards. ids is only
// read, so several indexes over the same documents may share it; unlike
// Build, FromPostings does not check that the ids are distinct (they are
// the names Search returns). Postings on a word of zero weight, or of zero
// value, are kept and add zero to every score.
//
// It returns an error if len(start) ≠ len(weight)+1, the offsets do not
// ascend from 0 to len(docs), len(vals) ≠ len(docs), a weight or a value
// is not finite, or a word's ordinals are not strictly ascending within
// [0, len(ids)).
func FromPostings(ids []string, weight []float32, start []int, docs []int32, vals []float32) (*Index, error) {
	vocab := len(weight)
	if len(ids) > math.MaxInt32 {
		return nil, fmt.Errorf("index: %d documents exceed the int32 ordinals", len(ids))
	}
	if int64(vocab) > math.MaxUint32+1 {
		return nil, fmt.Errorf("index: vocabulary size %d beyond 2³²", vocab)
	}
	if len(start) != vocab+1 {
		return nil, fmt.Errorf("index: %d offsets for a vocabulary of %d words, want %d", len(start), vocab, vocab+1)
	}
	if len(vals) != len(docs) {
		return nil, fmt.Errorf("index: %d ordinals but %d values", len(docs), len(vals))
	}
	if start[0] != 0 || start[vocab] != len(docs) {
		return nil, fmt.Errorf("index: offsets from %d to %d, want from 0 to the %d postings", start[0], start[vocab], len(docs))
	}
	n := int32(len(ids))
	for i, v := range weight {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("index: weight of word %d is %v, want a finite value", i, v)
		}
		lo, hi := start[i], start[i+1]
		if hi < lo || hi > len(docs) {
			return nil, fmt.Errorf("index: offsets of word %d, [%d, %d), not ascending within the %d postings", i, lo, hi, len(docs))
		}
		prev := int32(-1)
		for p, d := range docs[lo:hi] {
			if d <= prev || d >= n {
				return nil, fmt.Errorf("index: word %d: ordinal %d after %d, want ascending within [0, %d)", i, d, prev, n)
			}
			if f := float64(vals[lo+p]); math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("index: word %d, document %d: value %v, want a finite value", i, d, vals[lo+p])
			}
			prev = d
		}
	}
	return &Index{ids: ids, vocab: vocab, weight: weight, start: start, docs: docs, vals: vals}, nil
}

// Words returns the vocabulary size.
func (ix *Index) Words() int { return ix.vocab }

// Docs returns the number of documents.
func (ix *Index) Docs() int { return len(ix.ids) }

// NNZ returns the total number of postings.
func (ix *Index) NNZ() int { return len(ix.docs) }

// ID returns the identifier of document ordinal doc, as given to Build or
// FromPostings.
func (ix *Index) ID(doc int) string { return ix.ids[doc] }

// Weight returns w_word, the weight the index scores the word with.
// It panics if word ≥ Words().
func (ix *Index) Weight(word uint32) float32 { return ix.weight[word] }

// Postings returns the postings of word: the ordinals of the documents that
// contain it, ascending, and their unweighted coordinates x_word. Build
// keeps no postings for a word with zero weight. The slices alias the index
// and must not be modified. Postings panics if word ≥ Words().
func (ix *Index) Postings(word uint32) (docs []int32, vals []float32) {
	if int64(word) >= int64(ix.vocab) {
		panic(fmt.Sprintf("index: word %d outside the vocabulary of %d", word, ix.vocab))
	}
	lo, hi := ix.start[word], ix.start[word+1]
	return ix.docs[lo:hi:hi], ix.vals[lo:hi:hi]
}

// Hit is one ranked document.
type Hit struct {
	Doc   int     // ordinal in the index
	ID    string  // identifier given to Build or FromPostings
	Score float64 // S_w(q, x_Doc)
}

// Searcher scores queries against an Index. It holds per-query scratch
// proportional to the number of documents, reused across queries, so it is
// not safe for concurrent use: make one Searcher per goroutine.
type Searcher struct {
	ix  *Index
	sum *Accumulator
	acc []float64 // sum.Scores(), held for the heap's comparisons
	pos []int32   // scratch: touched docs with positive score
	neg []int32   // scratch: touched docs with negative score

	radixMin int // smallest k ranked by appendRanking
	matched  int // documents of positive score in the last Search

	// Radix-sort scratch for large k, allocated on first use.
	keys, keys2   []uint64
	order, order2 []int32
	count         *[8][256]int
}

// NewSearcher returns a Searcher for ix.
func (ix *Index) NewSearcher() *Searcher {
	sum := ix.NewAccumulator()
	return &Searcher{ix: ix, sum: sum, acc: sum.Scores(), radixMin: max(len(ix.ids)/radixFraction, 1)}
}

// Search returns the k documents with the highest S_w(q, x), best first,
// leaving out document ordinal exclude (−1 excludes none; use the query's
// own ordinal to search by an indexed image).
//
// Documents are ranked by score descending, ties by ascending ordinal, so the
// result is deterministic. A document that shares no weighted word with q
// has score exactly 0 and is ranked like any other document with score 0:
// after every positive score, among the zero scores by ordinal, and before
// every negative score (which can occur with negative weights).
//
// If k ≤ 0 or k is at least the number of candidate documents, Search
// returns the full ranking of every document except exclude — what
// average precision needs. Scores are accumulated in float64, word by word
// in ascending word order.
//
// Search panics if q is malformed (lengths differ, a value is not finite),
// has a word outside the vocabulary, or exclude is not in [−1, Docs()).
func (s *Searcher) Search(q sparse.Vector, k int, exclude int) []Hit {
	ix := s.ix
	n := len(ix.ids)
	if exclude < -1 || exclude >= n {
		panic(fmt.Sprintf("index: exclude %d outside [-1, %d)", exclude, n))
	}
	s.sum.Add(q)
	s.matched = 0
	for _, d := range s.sum.Docs() {
		if s.acc[d] > 0 && int(d) != exclude {
			s.matched++
		}
	}

	candidates := n
	if exclude >= 0 {
		candidates--
	}
	if k <= 0 || k > candidates {
		k = candidates
	}
	hits := make([]Hit, 0, k)
	if k >= s.radixMin {
		hits = s.appendRanking(hits, k, exclude)
		s.sum.Reset()
		return hits
	}
	s.pos, s.neg = s.pos[:0], s.neg[:0]
	for _, d := range s.sum.Docs() {
		switch a := s.acc[d]; {
		case int(d) == exclude:
		case a > 0:
			s.pos = append(s.pos, d)
		case a < 0:
			s.neg = append(s.neg, d)
		}
	}
	hits = s.appendBest(hits, s.pos, k)
	// Zero scores: every document not yet ranked with acc = 0, touched or
	// not, by ordinal. The scan stops as soon as k is reached, so a query
	// with enough positive hits never walks the collection.
	for d := 0; d < n && len(hits) < k; d++ {
		if d != exclude && s.acc[d] == 0 {
			hits = append(hits, Hit{Doc: d, ID: ix.ids[d], Score: 0})
		}
	}
	hits = s.appendBest(hits, s.neg, k-len(hits))
	s.sum.Reset()
	return hits
}

// Matched returns the number of documents the last Search scored above
// zero, exclude left out, whatever its k: a service shows how many images
// match rather than padding its k results with zero scores.
func (s *Searcher) Matched() int { return s.matched }

// radixFraction sets when Search ranks by radix-sorting every document: once
// k reaches 1/radixFraction of them. Below that it selects from the touched
// documents with a heap. Heap
// selection costs O(m log k) comparisons that each chase two ordinals into
// acc, for m touched documents; the radix sort costs 8 passes over all n
// documents whatever k is. On 10,000 documents the two meet near k = 1,000.
const radixFraction = 8

// appendRanking appends to hits the best k documents other than exclude,
// best first, by a stable least-significant-digit radix sort of all
// documents on a key that orders scores descending. Documents enter in
// ascending ordinal, so stability breaks ties by ordinal.
func (s *Searcher) appendRanking(hits []Hit, k, exclude int) []Hit {
	n := len(s.acc)
	if s.keys == nil {
		s.keys, s.keys2 = make([]uint64, n), make([]uint64, n)
		s.order, s.order2 = make([]int32, n), make([]int32, n)
		s.count = new([8][256]int)
	}
	keys, order := s.keys[:0], s.order[:0]
	for d, a := range s.acc {
		if d != exclude {
			keys = append(keys, descKey(a))
			order = append(order, int32(d))
		}
	}
	if len(keys) == 0 {
		return hits
	}
	count := s.count
	*count = [8][256]int{}
	for _, key := range keys {
		for b := range count {
			count[b][byte(key>>(8*b))]++
		}
	}
	keys2, order2 := s.keys2[:len(keys)], s.order2[:len(keys)]
	for b := range count {
		c := &count[b]
		shift := 8 * b
		if c[byte(keys[0]>>shift)] == len(keys) {
			continue // every key has this digit: the pass would not move anything
		}
		sum := 0
		for i, m := range c {
			c[i], sum = sum, sum+m
		}
		for i, key := range keys {
			digit := byte(key >> shift)
			keys2[c[digit]], order2[c[digit]] = key, order[i]
			c[digit]++
		}
		keys, keys2 = keys2, keys
		order, order2 = order2, order
	}
	for _, d := range order[:k] {
		score := s.acc[d]
		if score == 0 {
			score = 0 // no −0 in results
		}
		hits = append(hits, Hit{Doc: int(d), ID: s.ix.ids[d], Score: score})
	}
	return hits
}

// descKey maps scores to integers in the opposite order: a > b if and only
// if descKey(a) < descKey(b). Positive floats order like their bit patterns,
// negative ones in reverse; −0 is folded into +0 so both tie.
func descKey(f float64) uint64 {
	if f == 0 {
		f = 0
	}
	b := math.Float64bits(f)
	if b>>63 != 0 {
		b = ^b // negative: larger magnitude must come first in ascending
	} else {
		b |= 1 << 63
	}
	return ^b
}

// better reports whether doc a ranks before doc b.
func (s *Searcher) better(a, b int32) bool {
	sa, sb := s.acc[a], s.acc[b]
	return sa > sb || (sa == sb && a < b)
}

// appendBest appends to hits the best k of cands (k ≤ 0: none), best first.
// It reorders cands. It keeps a heap of the k best seen so far with the
// worst at the root, O(len(cands)·log k), then heap-sorts it.
func (s *Searcher) appendBest(hits []Hit, cands []int32, k int) []Hit {
	if k <= 0 || len(cands) == 0 {
		return hits
	}
	k = min(k, len(cands))
	h := cands[:k]
	for i := k/2 - 1; i >= 0; i-- {
		s.down(h, i)
	}
	for _, d := range cands[k:] {
		if s.better(d, h[0]) {
			h[0] = d
			s.down(h, 0)
		}
	}
	// Heap sort: repeatedly move the worst to the end of the shrinking heap,
	// leaving h best first.
	for end := k - 1; end > 0; end-- {
		h[0], h[end] = h[end], h[0]
		s.down(h[:end], 0)
	}
	for _, d := range h {
		hits = append(hits, Hit{Doc: int(d), ID: s.ix.ids[d], Score: s.acc[d]})
	}
	return hits
}

// down restores the heap property (each parent worse than its children)
// below position i.
func (s *Searcher) down(h []int32, i int) {
	for {
		worst := i
		if l := 2*i + 1; l < len(h) && s.better(h[worst], h[l]) {
			worst = l
		}
		if r := 2*i + 2; r < len(h) && s.better(h[worst], h[r]) {
			worst = r
		}
		if worst == i {
			return
		}
		h[i], h[worst] = h[worst], h[i]
		i = worst
	}
}
