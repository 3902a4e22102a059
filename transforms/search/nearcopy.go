package search

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/bowline/bowline/learners/sparse"
)

// Near-copy candidates (Refine.NearCopies).
//
// A learner that drops most visual words for its task — ranking the views
// of an object alike, say — drops with them the words that tell one photo
// from the others of its object: a copy of a collection photo, turned,
// cropped and re-encoded, can find its source ranked in the thousands,
// where verification never looks. So each image also has a sketch: its
// NearCopyWords rarest words (held by the fewest images, ties by word id),
// which a copy of it shares with it and few other photos do. The sketches
// are an inverted index of their own, every value 1, so that an image's
// score for a query is the number of the query's words in its sketch; the
// images of highest score are the query's near-copy candidates, verified
// beside the learner's best (Refine). It is min-hash's idea (Chum,
// Philbin & Zisserman, BMVC 2008) with one fixed order of the words,
// rarest first, rather than random ones: a random word of a 10K
// vocabulary is in one photo of six of 1,700 words, so random orders
// would pair unrelated photos, while a photo's rarest words are in almost
// no other photo but its copies.
//
// Measured on 10K photos of ETH-80's objects on varied backgrounds (10K
// words; SOLIS-ADA trained on the object labels, 97% zeros): copies
// turned a quarter, cropped to 80% and re-encoded as JPEG find their
// source first 100, 99 and 100 times of 100 (three seeds) with 10
// candidates of 64 words, against 88, 86 and 90 verifying the learner's
// best 100 alone (cmd/nearcopies --near 10).
//
// The sketch costs 8 bytes a word of it an image, 512 bytes at the
// default 64 words: 0.5 GB a million images, against 8 bytes a posting
// for the TF-IDF index, some 14 GB for a million photos of 1,700 words.
// Its search reads postings lists that grow with the collection: 0.12 ms
// at 10K such photos, 1.08 ms at 100K, so about 11 ms at a million.

// DefaultNearCopies is a good Refine.NearCopies: on the copies above (one
// seed, 32-word sketches) 30 candidates found no source that 10 did not.
const DefaultNearCopies = 10

// DefaultNearCopyWords is Options.NearCopyWords's default.
const DefaultNearCopyWords = 64

// loadSketch indexes every image's m rarest words of positive value and
// IDF by the document frequencies df, under unit weights and values. It
// picks each image's words twice, to count each word's postings and then
// to place them, so that the arrays are allocated once at their size.
func (ix *Index) loadSketch(df []int64, m int) (*scored, error) {
	ones := make([]float32, ix.vocab)
	for w := range ones {
		ones[w] = 1
	}
	var keys []uint64
	count := make([]int64, ix.vocab)
	for d := range ix.arrival {
		keys = ix.sketchOf(d, df, m, keys)
		for _, k := range keys {
			count[uint32(k)]++
		}
	}
	b := newPostingsBuilder(ones, count)
	for d := range ix.arrival {
		keys = ix.sketchOf(d, df, m, keys)
		for _, k := range keys {
			if err := b.add(uint32(k), int32(d), 1); err != nil {
				return nil, fmt.Errorf("near-copy sketch of image %s: %w", ix.ids[d], err)
			}
		}
	}
	return newScored(ix.ids, b.finish())
}

// sketchOf returns the sketch of image d (ordinal) in keys[:0]: its m
// words of positive value and IDF with the least document frequencies,
// ties by word id, each as the key df<<32 | word, in no particular order.
// A max-heap of the m best keys seen makes it one pass of a compare per
// word, whatever the bag's size.
func (ix *Index) sketchOf(d int, df []int64, m int, keys []uint64) []uint64 {
	keys = keys[:0]
	bag := ix.bagOf(d)
	for t, w := range bag.Idx {
		if bag.Val[t] <= 0 || ix.idf[w] == 0 {
			continue
		}
		k := uint64(df[w])<<32 | uint64(w)
		switch {
		case len(keys) < m:
			keys = append(keys, k)
			for i := len(keys) - 1; i > 0; { // sift up
				p := (i - 1) / 2
				if keys[p] >= keys[i] {
					break
				}
				keys[p], keys[i] = keys[i], keys[p]
				i = p
			}
		case k < keys[0]:
			keys[0] = k
			for i := 0; ; { // sift down
				c := 2*i + 1
				if c >= len(keys) {
					break
				}
				if c+1 < len(keys) && keys[c+1] > keys[c] {
					c++
				}
				if keys[i] >= keys[c] {
					break
				}
				keys[i], keys[c] = keys[c], keys[i]
				i = c
			}
		}
	}
	return keys
}

// nearCopies returns the query's near-copy candidates, at most n: the
// images other than exclude whose sketches hold the most of q's words of
// positive value, at least one, best first, ties by ordinal.
func (ix *Index) nearCopies(w *worker, q sparse.Vector, n, exclude int) []int32 {
	w.ones = slices.Grow(w.ones[:0], len(q.Idx))[:len(q.Idx)]
	for t, v := range q.Val {
		w.ones[t] = 0
		if v > 0 {
			w.ones[t] = 1
		}
	}
	hits, matched := ix.sketch.search(sparse.Vector{Idx: q.Idx, Val: w.ones}, n, exclude)
	out := make([]int32, min(len(hits), matched))
	for i := range out {
		out[i] = int32(hits[i].Doc)
	}
	return out
}

// withNearCopies verifies the near-copy candidates near of a query (bag q,
// keypoints w.qg) that are not among hits[:head], the verified head of the
// learner p's ranking hits, and moves those verified into it: after the
// head, in the learner's order (its score of each, ties by ordinal), each
// taken out of the rest of hits if it was there. It returns the ranking
// and its new head, to be re-ordered by inliers (rerank); the candidates
// that fail verification stay where the learner ranked them, or out of
// the ranking. No candidates (near empty) leave hits and head as they are.
func (ix *Index) withNearCopies(w *worker, p *scored, q sparse.Vector, hits []cand, head int, near []int32, checked map[int32]verdict) ([]cand, int) {
	var add []cand
	for _, d := range near {
		if slices.ContainsFunc(hits[:head], func(c cand) bool { return c.doc == d }) {
			continue
		}
		c := []cand{{doc: d}}
		ix.verify(w, c, checked)
		if c[0].verified {
			c[0].score = p.ix.Score(q, int(d))
			add = append(add, c[0])
		}
	}
	if len(add) == 0 {
		return hits, head
	}
	hits = slices.DeleteFunc(hits, func(c cand) bool {
		return slices.ContainsFunc(add, func(a cand) bool { return a.doc == c.doc })
	})
	slices.SortFunc(add, func(a, b cand) int { return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.doc, b.doc)) })
	return slices.Insert(hits, head, add...), head + len(add)
}
