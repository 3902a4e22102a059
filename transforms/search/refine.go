package search

import (
	"fmt"
	"slices"

	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/index"
	"github.com/bowline/bowline/transforms/setting"
	"github.com/bowline/bowline/transforms/spatial"
)

// Refine asks a search for what the best bag-of-words systems add to the
// ranking: spatial re-ranking (Philbin, Chum, Isard, Sivic & Zisserman,
// CVPR 2007) and average query expansion (Chum, Philbin, Sivic, Isard &
// Zisserman, "Total Recall", ICCV 2007). The zero value asks for neither:
// the learner's ranking, exactly.
type Refine struct {
	// Rerank is how many of the learner's best hits are verified
	// (transforms/spatial: the words they share with the query must lie
	// where one affine map of the query puts them) and re-ordered: the
	// verified first, by inliers, then score, then their rank before;
	// the others after them in the order they had. 0: none.
	Rerank int
	// Expand is the most verified hits whose bags of words are averaged
	// with the query's (the sum L2-normalised, as every bag is) into a new
	// query, searched again with the same learner and, with Rerank,
	// re-ranked again against the first query's keypoints. The hits
	// verified are the best Rerank, or the best DefaultRerank without
	// Rerank. 0: no expansion. Only a learner of bags of words expands.
	// An expanded search's hits are scored, and Result.Matched counted,
	// under the expanded query.
	Expand int
	// NearCopies, with Rerank, also verifies the query's best NearCopies
	// near-copy candidates — the images whose sketches, their rarest
	// words, hold the most of its words (nearcopy.go) — that are not
	// among the learner's best Rerank hits, and re-ranks those verified
	// with them, wherever the learner ranked them: a copy of a collection
	// photo finds its source even where the learner's weights dropped the
	// words that single it out. 0: none. Only a learner of bags of words
	// takes near copies.
	NearCopies int
}

// DefaultRerank is the number of hits verified to expand a query when
// Refine.Rerank does not say, and a good Rerank: Philbin et al. verify the
// best 100 to 1,000 (and Chum et al. expand with the verified among them).
const DefaultRerank = 100

// DefaultExpand is a good Refine.Expand, the most verified results (those
// that pass spatial's acceptance, best first) averaged with the query.
// Chum et al. average up to 50, but on ETH-80's objects (10K words,
// rerank 100) TF-IDF's expanded queries gain +0.0374 mAP at 5, +0.0380 at
// 10, +0.0378 at 20 and 50, and on 26 outside photos of a landmark
// searched against its 250 photos depth 5 beat 50 for every method
// (TF-IDF 0.516 against 0.475): past the few best, a verified result
// brings more of what it does not share with the query than of what it
// does. Category labels gain a little more from more (+0.0463 at 5,
// +0.0498 at 10, +0.0515 at 50), which is not what verification serves.
const DefaultExpand = 10

// SearchIDRefined is SearchID, its hits re-ranked and its query expanded
// as r asks. The query's keypoints are its own, from the run's geometry
// files. Errors wrap those of SearchID, ErrNoGeometry (r asks for
// anything of a run without geometry) and ErrCannotExpand.
func (ix *Index) SearchIDRefined(learner, imageID string, k int, r Refine) (Result, error) {
	if r == (Refine{}) {
		return ix.SearchID(learner, imageID, k)
	}
	p, cs, err := ix.learner(learner)
	if err != nil {
		return Result{}, err
	}
	if err := ix.refinable(learner, cs != nil, r); err != nil {
		return Result{}, err
	}
	d, ok := slices.BinarySearch(ix.ids, imageID)
	if !ok || (cs != nil && !cs.has[d]) {
		return Result{}, fmt.Errorf("image %q: %w", imageID, ErrUnknownImage)
	}
	w := ix.worker()
	defer ix.pool.Put(w)
	ix.geo.decode(d, &w.qg)
	var search func(q sparse.Vector, k int) ([]cand, int)
	if cs != nil {
		code := cs.query[d*cs.words : (d+1)*cs.words]
		search = func(_ sparse.Vector, k int) ([]cand, int) {
			return candsOf(w.hamming(cs, code, k, d)), cs.count - 1
		}
	} else {
		search = func(q sparse.Vector, k int) ([]cand, int) { return ix.searchBoW(p, q, k, d) }
	}
	return ix.refine(w, p, search, ix.bagOf(d), d, k, r)
}

// Validate reports a negative count (a *setting.Error), and near copies
// asked without Rerank, whose verified hits they join.
func (r Refine) Validate() error {
	for _, c := range []struct {
		field string
		v     int
	}{{"Rerank", r.Rerank}, {"Expand", r.Expand}, {"NearCopies", r.NearCopies}} {
		if c.v < 0 {
			return setting.Errorf("search", "Refine."+c.field, c.v, "0 or more")
		}
	}
	if r.NearCopies > 0 && r.Rerank == 0 {
		return fmt.Errorf("near copies %d: need rerank, whose verified hits they join", r.NearCopies)
	}
	return nil
}

// refinable reports why r cannot be done for learner.
func (ix *Index) refinable(learner string, coded bool, r Refine) error {
	if err := r.Validate(); err != nil {
		return err
	}
	switch {
	case ix.geo == nil:
		return ErrNoGeometry
	case (r.Expand > 0 || r.NearCopies > 0) && coded:
		return fmt.Errorf("learner %s ranks binary codes: %w", learner, ErrCannotExpand)
	}
	return nil
}

// cand is a hit by ordinal, with what verification found.
type cand struct {
	doc      int32
	score    float64
	inliers  int
	verified bool
}

func candsOf(r []rankHit) []cand {
	out := make([]cand, len(r))
	for i, h := range r {
		out[i] = cand{doc: int32(h.doc), score: h.score}
	}
	return out
}

// searchBoW is scored.search by ordinals, the matches alone.
func (ix *Index) searchBoW(p *scored, q sparse.Vector, k, exclude int) ([]cand, int) {
	hits, matched := p.search(q, k, exclude)
	hits = hits[:min(len(hits), matched)]
	out := make([]cand, len(hits))
	for i, h := range hits {
		out[i] = cand{doc: int32(h.Doc), score: h.Score}
	}
	return out, matched
}

// bagOf returns the stored bag of words of image d (ordinal).
func (ix *Index) bagOf(d int) sparse.Vector {
	a := ix.arrival[d]
	lo, hi := ix.off[a], ix.off[a+1]
	return sparse.Vector{Idx: ix.words[lo:hi], Val: ix.vals[lo:hi]}
}

// refine runs search (the matches of a query's bag of words, best first,
// at most k of them, k ≤ 0 all, and how many match) for the query bag q
// whose keypoints are w.qg, and re-ranks and expands as r asks: see
// Refine. p is the learner's index (nil for binary codes), exclude the
// query's ordinal if it is an indexed image (−1 otherwise). It returns the
// best k.
func (ix *Index) refine(w *worker, p *scored, search func(q sparse.Vector, k int) ([]cand, int), q sparse.Vector, exclude, k int, r Refine) (Result, error) {
	depth := r.Rerank
	if r.Expand > 0 && depth == 0 {
		depth = DefaultRerank
	}
	top := func(k int) int {
		if k <= 0 {
			return 0
		}
		return max(k, depth)
	}
	hits, matched := search(q, top(k))
	checked := map[int32]verdict{} // by ordinal, each candidate verified once
	head := min(depth, len(hits))
	ix.verify(w, hits[:head], checked)
	var near []int32
	if r.NearCopies > 0 {
		near = ix.nearCopies(w, q, r.NearCopies, exclude)
	}
	hits, head = ix.withNearCopies(w, p, q, hits, head, near, checked)
	if r.Rerank > 0 {
		rerank(hits[:head])
	}
	if r.Expand > 0 {
		var bags []sparse.Vector
		// The verified in the order of the re-ranking: the most inliers
		// first, whether or not the result is re-ranked.
		ver := slices.Clone(hits[:head])
		rerank(ver)
		for _, h := range ver {
			if len(bags) == r.Expand || !h.verified {
				break
			}
			bags = append(bags, ix.bagOf(int(h.doc)))
		}
		if len(bags) > 0 {
			exp := index.ExpandQuery(q, bags)
			hits, matched = search(exp, top(k))
			if r.Rerank > 0 {
				head = min(r.Rerank, len(hits))
				ix.verify(w, hits[:head], checked)
				hits, head = ix.withNearCopies(w, p, exp, hits, head, near, checked)
				rerank(hits[:head])
			} else {
				// Inliers are reported only where verified; the new
				// ranking's others were not looked at.
				for i := range hits {
					if v, ok := checked[hits[i].doc]; ok {
						hits[i].inliers, hits[i].verified = v.inliers, v.verified
					}
				}
			}
		}
	}
	if k > 0 && len(hits) > k {
		hits = hits[:k]
	}
	out := make([]Hit, len(hits))
	for i, h := range hits {
		out[i] = Hit{ImageID: ix.ids[h.doc], Score: h.score, Inliers: h.inliers, Verified: h.verified}
	}
	return Result{Hits: out, Matched: matched}, nil
}

// verdict is what verifying a candidate found: its inliers as evidence
// (spatial.Result.Support) and whether it passed acceptance.
type verdict struct {
	inliers  int
	verified bool
}

// verify verifies the candidates against the query keypoints w.qg, each
// once a query (checked remembers the verdicts of those seen).
func (ix *Index) verify(w *worker, cands []cand, checked map[int32]verdict) {
	if w.match == nil {
		m, err := spatial.NewMatcher(spatial.DefaultOptions())
		if err != nil {
			panic(fmt.Sprintf("search: spatial's default options: %v", err))
		}
		w.match = m
	}
	for i := range cands {
		c := &cands[i]
		v, ok := checked[c.doc]
		if !ok {
			ix.geo.decode(int(c.doc), &w.cg)
			res := w.match.Verify(&w.qg, &w.cg)
			v = verdict{inliers: res.Support, verified: res.Verified}
			checked[c.doc] = v
		}
		c.inliers, c.verified = v.inliers, v.verified
	}
}

// rerank orders verified hits first, by inliers, then score, then their
// order in hits; the unverified after them in their order
// (spatial.CompareReranked, which the evaluation's re-ranked rows use too).
func rerank(hits []cand) {
	spatial.Rerank(hits, func(c *cand) spatial.Ranked {
		return spatial.Ranked{Score: c.score, Inliers: c.inliers, Verified: c.verified}
	})
}

// searchImageRefined is SearchImage's search of a described photo, as
// refine does it: bag is the photo's bag of words (nil for a learner of
// binary codes, whose code is code) and w.qg its keypoints.
func (ix *Index) searchImageRefined(w *worker, p *scored, cs *codes, code []uint64, bag sparse.Vector, k int, r Refine) (Result, error) {
	var search func(q sparse.Vector, k int) ([]cand, int)
	if cs != nil {
		search = func(_ sparse.Vector, k int) ([]cand, int) { return candsOf(w.hamming(cs, code, k, -1)), cs.count }
	} else {
		search = func(q sparse.Vector, k int) ([]cand, int) { return ix.searchBoW(p, q, k, -1) }
	}
	return ix.refine(w, p, search, bag, -1, k, r)
}
