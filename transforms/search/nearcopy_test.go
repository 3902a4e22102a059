package search

import (
	"cmp"
	"slices"
	"testing"

	"github.com/bowline/bowline/transforms/spatial"
)

// sketchRef is an image's sketch by brute force: its m words of positive
// value and IDF with the least document frequencies, ties by word id.
func sketchRef(c corpus, d int, m int) map[uint32]bool {
	var words []uint32
	for t, w := range c.docs[d].WordIDs {
		if c.docs[d].Weights[t] > 0 && c.idf[w] != 0 {
			words = append(words, w)
		}
	}
	slices.SortFunc(words, func(a, b uint32) int { return cmp.Or(cmp.Compare(c.df[a], c.df[b]), cmp.Compare(a, b)) })
	out := map[uint32]bool{}
	for _, w := range words[:min(m, len(words))] {
		out[w] = true
	}
	return out
}

// Near-copy candidates join verification: the query's best n images by
// the number of its words in their sketches (ties by id, the query left
// out) are verified beside the learner's best Rerank, those verified and
// outside them move into the re-ranked head in the learner's order, and
// the rest of the ranking keeps its order without them. Checked against a
// brute-force sketch and a fresh matcher, for every learner, several
// queries, depths and k.
func TestNearCopiesJoinVerification(t *testing.T) {
	const m = 4
	c, rows, ix := geometryRun(t, 150, Options{NearCopyWords: m})
	geo := decodedAll(rows)
	sketches := make([]map[uint32]bool, len(c.docs))
	for d := range c.docs {
		sketches[d] = sketchRef(c, d, m)
	}
	matcher, err := spatial.NewMatcher(spatial.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	promoted := 0
	for _, l := range ix.Learners() {
		for q := 0; q < len(c.docs); q += 7 {
			id := c.docs[q].ImageID
			all, err := ix.SearchID(l, id, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, depth := range []int{3, 20} {
				for _, n := range []int{1, 10} {
					// The candidates: shared sketch words, best first, ties by id.
					type scoredDoc struct{ d, shared int }
					var cands []scoredDoc
					for d := range c.docs {
						shared := 0
						for t, w := range c.docs[q].WordIDs {
							if c.docs[q].Weights[t] > 0 && sketches[d][w] {
								shared++
							}
						}
						if d != q && shared > 0 {
							cands = append(cands, scoredDoc{d, shared})
						}
					}
					slices.SortStableFunc(cands, func(a, b scoredDoc) int { return cmp.Compare(b.shared, a.shared) })
					cands = cands[:min(n, len(cands))]
					// The learner's ranking with the verified candidates moved up.
					want := reference(t, all.Hits, geo[id], geo, depth)
					head := slices.Clone(all.Hits[:min(depth, len(all.Hits))])
					rest := slices.Clone(all.Hits[len(head):])
					var add []Hit
					for _, cd := range cands {
						cid := c.docs[cd.d].ImageID
						if slices.ContainsFunc(head, func(h Hit) bool { return h.ImageID == cid }) {
							continue
						}
						res := matcher.Verify(geo[id], geo[cid])
						if !res.Verified {
							continue
						}
						h := Hit{ImageID: cid, Inliers: res.Support, Verified: true}
						if i := slices.IndexFunc(rest, func(h Hit) bool { return h.ImageID == cid }); i >= 0 {
							h.Score = rest[i].Score
							rest = slices.Delete(rest, i, i+1)
						}
						add = append(add, h)
					}
					got0, err := ix.SearchIDRefined(l, id, 0, Refine{Rerank: depth, NearCopies: n})
					if err != nil {
						t.Fatal(err)
					}
					if len(add) > 0 {
						// A candidate the learner did not rank (no positive
						// score) has the score index.Score gives it, tested
						// there: taken from the result, but never positive.
						for i := range add {
							if slices.ContainsFunc(all.Hits, func(h Hit) bool { return h.ImageID == add[i].ImageID }) {
								continue
							}
							j := slices.IndexFunc(got0.Hits, func(h Hit) bool { return h.ImageID == add[i].ImageID })
							if j < 0 || got0.Hits[j].Score > 0 {
								t.Fatalf("%s, query %s: verified near copy %s missing, or unranked with a positive score: %v", l, id, add[i].ImageID, got0.Hits)
							}
							add[i].Score = got0.Hits[j].Score
						}
						slices.SortStableFunc(add, func(a, b Hit) int {
							return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.ImageID, b.ImageID))
						})
						want = reference(t, slices.Concat(head, add, rest), geo[id], geo, len(head)+len(add))
					}
					for _, k := range []int{5, 0} {
						got, err := ix.SearchIDRefined(l, id, k, Refine{Rerank: depth, NearCopies: n})
						if err != nil {
							t.Fatal(err)
						}
						w := want
						if k > 0 {
							w = w[:min(k, len(w))]
						}
						if !slices.Equal(got.Hits, w) {
							t.Fatalf("%s, query %s, rerank %d, near copies %d, k %d:\n got %v\nwant %v", l, id, depth, n, k, got.Hits, w)
						}
					}
					promoted += len(add)
				}
			}
		}
	}
	if promoted < 10 {
		t.Fatalf("%d near copies moved up: the test proves little", promoted)
	}
}

// NearCopies needs Rerank and a learner of bags of words, and is refused
// negative.
func TestNearCopiesRefused(t *testing.T) {
	c, _, ix := geometryRun(t, 30, Options{})
	id := c.docs[0].ImageID
	for _, r := range []Refine{{NearCopies: 3}, {Rerank: 10, NearCopies: -1}} {
		if _, err := ix.SearchIDRefined(TFIDF, id, 5, r); err == nil {
			t.Errorf("%+v: no error", r)
		}
	}
	if _, err := ix.SearchIDRefined(TFIDF, id, 5, Refine{Rerank: 10, NearCopies: 3}); err != nil {
		t.Errorf("rerank with near copies: %v", err)
	}
}

// An expanded query keeps the verified near copies of the first: they are
// verified again among the second search's best.
func TestNearCopiesSurviveExpansion(t *testing.T) {
	c, _, ix := geometryRun(t, 150, Options{NearCopyWords: 4})
	kept := 0
	for q := 0; q < len(c.docs); q += 5 {
		id := c.docs[q].ImageID
		near, err := ix.SearchIDRefined(TFIDF, id, 0, Refine{Rerank: 3, NearCopies: 10})
		if err != nil {
			t.Fatal(err)
		}
		plain, err := ix.SearchIDRefined(TFIDF, id, 0, Refine{Rerank: 3})
		if err != nil {
			t.Fatal(err)
		}
		exp, err := ix.SearchIDRefined(TFIDF, id, 0, Refine{Rerank: 3, NearCopies: 10, Expand: 5})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range near.Hits {
			if !h.Verified || slices.ContainsFunc(plain.Hits[:min(3, len(plain.Hits))], func(p Hit) bool { return p.ImageID == h.ImageID }) {
				continue
			}
			i := slices.IndexFunc(exp.Hits, func(e Hit) bool { return e.ImageID == h.ImageID })
			if i < 0 || !exp.Hits[i].Verified || exp.Hits[i].Inliers != h.Inliers {
				t.Fatalf("query %s: near copy %+v is not verified after expansion: %v", id, h, exp.Hits)
			}
			kept++
		}
	}
	if kept < 5 {
		t.Fatalf("%d near copies checked: the test proves little", kept)
	}
}
