package search

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/index"
)

// postings is one learner's inverted index in compressed-sparse-row form,
// the arrays of index.FromPostings: the postings of word w are the
// document ordinals docs[start[w]:start[w+1]], ascending, with the
// documents' bag-of-words values in the same positions of vals, scored
// with the word's weight weight[w] (1 for every word of TF-IDF). It is
// built from files part by part rather than from every vector at once as
// index.Build needs.
type postings struct {
	weight []float32 // len vocab
	start  []int     // len vocab+1
	docs   []int32
	vals   []float32
}

// bytes returns the memory the postings hold.
func (p *postings) bytes() int64 {
	return int64(cap(p.weight))*4 + int64(cap(p.start))*8 + int64(cap(p.docs))*4 + int64(cap(p.vals))*4
}

// postingsBuilder fills postings whose per-word counts are bounded in
// advance (by the words' document frequencies), so that the arrays are
// allocated once at their final size instead of growing: loading never
// holds the index twice.
type postingsBuilder struct {
	p    *postings
	next []int // next free position of each word's range
}

// newPostingsBuilder returns a builder for postings under weight, at most
// bound[w] of them for word w.
func newPostingsBuilder(weight []float32, bound []int64) *postingsBuilder {
	vocab := len(weight)
	start := make([]int, vocab+1)
	for w, b := range bound {
		start[w+1] = start[w] + int(b)
	}
	total := start[vocab]
	return &postingsBuilder{
		p:    &postings{weight: weight, start: start, docs: make([]int32, total), vals: make([]float32, total)},
		next: slices.Clone(start[:vocab]),
	}
}

// add appends the posting (doc, val) to word's list. It returns an error
// if the word has no room left: more postings than its bound, which a
// run's files cannot give unless they disagree with each other.
func (b *postingsBuilder) add(word uint32, doc int32, val float32) error {
	if int64(word) >= int64(len(b.next)) {
		return fmt.Errorf("word %d outside the vocabulary of %d", word, len(b.next))
	}
	i := b.next[word]
	if i == b.p.start[word+1] {
		return fmt.Errorf("word %d has more postings than its document frequency %d", word, b.p.start[word+1]-b.p.start[word])
	}
	b.p.docs[i], b.p.vals[i] = doc, val
	b.next[word] = i + 1
	return nil
}

// finish closes the gaps a word left below its bound, moving every list
// down in place, and returns the postings. Only if the gaps exceed a
// sixteenth of the arrays are they copied to arrays of the exact size.
// A word whose postings came unordered — in several runs, one per part of
// a document-partitioned index — has them sorted by ordinal.
func (b *postingsBuilder) finish() *postings {
	p := b.p
	pos := 0
	var run []posting
	for w := range b.next {
		lo, hi := p.start[w], b.next[w]
		copy(p.docs[pos:], p.docs[lo:hi])
		copy(p.vals[pos:], p.vals[lo:hi])
		p.start[w] = pos
		pos += hi - lo
		if docs := p.docs[p.start[w]:pos]; !slices.IsSorted(docs) {
			run = sortPostings(docs, p.vals[p.start[w]:pos], run)
		}
	}
	p.start[len(b.next)] = pos
	if slack := len(p.docs) - pos; slack > len(p.docs)/16 {
		p.docs, p.vals = slices.Clone(p.docs[:pos]), slices.Clone(p.vals[:pos])
	} else {
		p.docs, p.vals = p.docs[:pos], p.vals[:pos]
	}
	b.p, b.next = nil, nil
	return p
}

// posting is one document's value on a word.
type posting struct {
	doc int32
	val float32
}

// sortPostings sorts docs, and vals with them, by ordinal, through the
// scratch run, which it returns grown.
func sortPostings(docs []int32, vals []float32, run []posting) []posting {
	run = run[:0]
	for i, d := range docs {
		run = append(run, posting{d, vals[i]})
	}
	slices.SortFunc(run, func(a, b posting) int { return cmp.Compare(a.doc, b.doc) })
	for i, e := range run {
		docs[i], vals[i] = e.doc, e.val
	}
	return run
}

// scored is a learner's index of bags of words, with the searchers that
// score queries against it: an index.Searcher holds scratch the size of
// the collection and serves one query at a time, so each query borrows
// one from the pool.
type scored struct {
	ix    *index.Index
	bytes int64     // held by the index's postings (not its ids, which are shared)
	pool  sync.Pool // of *index.Searcher
}

// newScored makes p an index over the images ids, which it shares.
func newScored(ids []string, p *postings) (*scored, error) {
	bytes := p.bytes()
	ix, err := index.FromPostings(ids, p.weight, p.start, p.docs, p.vals)
	if err != nil {
		return nil, err
	}
	return &scored{ix: ix, bytes: bytes}, nil
}

// search returns the k images of best score S_w(q, x) = Σ_i w_i q_i x_i,
// leaving out image exclude (−1: none), as index.Searcher.Search ranks
// them — the ranking of the job's evaluation — and the number of images
// of positive score, which come first. k ≤ 0, or k beyond the collection,
// ranks every image. q must be valid over the vocabulary (checkQuery).
func (s *scored) search(q sparse.Vector, k, exclude int) ([]index.Hit, int) {
	sr, ok := s.pool.Get().(*index.Searcher)
	if !ok {
		sr = s.ix.NewSearcher()
	}
	hits := sr.Search(q, k, exclude)
	matched := sr.Matched()
	s.pool.Put(sr)
	return hits, matched
}

// checkQuery reports a query vector search cannot score: indices not
// ascending or outside the vocabulary, or a value that is not finite.
func checkQuery(idx []uint32, val []float32, vocab int) error {
	if len(idx) != len(val) {
		return fmt.Errorf("query with %d words and %d values", len(idx), len(val))
	}
	for t, w := range idx {
		if int64(w) >= int64(vocab) || (t > 0 && w <= idx[t-1]) {
			return fmt.Errorf("query word %d out of order or outside the vocabulary of %d", w, vocab)
		}
		if f := float64(val[t]); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("query value %v of word %d is not finite", val[t], w)
		}
	}
	return nil
}
