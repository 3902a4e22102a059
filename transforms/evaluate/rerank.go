package evaluate

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/bowline/bowline/transforms/spatial"
)

// Candidate is one of a query's best results kept for spatial
// verification (Ranking.Rerank): its image, its score under the model and
// whether it has the query's label, then what verifying it found.
type Candidate struct {
	ID       string
	Score    float64
	Rel      bool
	Inliers  int
	Verified bool
}

func (c *Candidate) ranked() spatial.Ranked {
	return spatial.Ranked{Score: c.Score, Inliers: c.Inliers, Verified: c.Verified}
}

// byScore orders candidates best first, ids apart only to fix the order
// the candidates are verified and merged in: the metrics never see it.
func byScore(a, b Candidate) int {
	return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.ID, b.ID))
}

// topCandidates cuts c, sorted by byScore, after its first depth results
// and the rest of the tie group at the cut, as the ranking's tie groups
// are cut: the candidates are then whole groups of the ranking.
func topCandidates(c []Candidate, depth int) []Candidate {
	if len(c) <= depth {
		return c
	}
	n := depth
	for n < len(c) && c[n].Score == c[depth-1].Score {
		n++
	}
	return c[:n]
}

// mergeCandidates merges two candidate lists sorted by byScore into one,
// cut as topCandidates cuts.
func mergeCandidates(a, b []Candidate, depth int) []Candidate {
	out := make([]Candidate, 0, min(len(a)+len(b), depth+1))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		if j == len(b) || (i < len(a) && byScore(a[i], b[j]) <= 0) {
			out, i = append(out, a[i]), i+1
		} else {
			out, j = append(out, b[j]), j+1
		}
		if len(out) > depth && out[len(out)-1].Score != out[depth-1].Score {
			return out[:len(out)-1]
		}
	}
	return out
}

// rerankedTies returns the tie groups of the ranking groups once its best
// results, cands (whole groups of it, sorted by byScore and verified), are
// re-ranked by spatial.CompareReranked: verified first, by inliers, then
// score; the unverified after them in their order. Two re-ranked results
// tie when CompareReranked cannot order them and their scores are equal,
// so the re-ranked ranking's order within a group is the learner's,
// every order equally likely, as in the ranking before. The groups after
// the candidates keep their places.
func rerankedTies(groups []TieGroup, cands []Candidate) ([]TieGroup, error) {
	c := slices.Clone(cands)
	spatial.Rerank(c, (*Candidate).ranked)
	var out []TieGroup
	for i := range c {
		if i == 0 || c[i].Score != c[i-1].Score || spatial.CompareReranked(c[i-1].ranked(), c[i].ranked()) != 0 {
			out = append(out, TieGroup{Score: c[i].Score})
		}
		g := &out[len(out)-1]
		g.N++
		if c[i].Rel {
			g.Rel++
		}
	}
	n := 0
	for k, g := range groups {
		if n == len(c) {
			return append(out, groups[k:]...), nil
		}
		n += g.N
	}
	if n != len(c) {
		return nil, fmt.Errorf("evaluate: %d candidates to re-rank are not whole tie groups of the ranking (%d results)", len(c), n)
	}
	return out, nil
}

// Rerank makes the ranking keep, for spatial verification, each query's
// best depth results (Candidates) beside its tie groups, and the groups
// themselves until Scores: RerankedScores then scores the ranking the
// candidates re-ranked make. Only results of positive score are
// candidates: a result sharing no weighted word with the query is never
// verified (nor returned by a search). It must be called before Add. The
// depth is cut to the ranking's depth, so that the candidates stay whole
// groups of it; depth ≤ 0 keeps none.
func (r *Ranking) Rerank(depth int) {
	if r.depth > 0 {
		depth = min(depth, r.depth)
	}
	r.rerank = max(depth, 0)
	r.cands = make([][]Candidate, len(r.queries))
}

// Queries returns the ranking's queries.
func (r *Ranking) Queries() []Query { return r.queries }

// Candidates returns query qi's candidates for verification, best first:
// the caller fills in their Inliers and Verified.
func (r *Ranking) Candidates(qi int) []Candidate {
	if r.cands == nil {
		return nil
	}
	return r.cands[qi]
}

// Expansion returns the ids of query qi's best n verified candidates in
// the re-ranked order (most inliers first), those search.Refine's query
// expansion averages with the query.
func (r *Ranking) Expansion(qi, n int) []string {
	c := slices.Clone(r.Candidates(qi))
	spatial.Rerank(c, (*Candidate).ranked)
	var ids []string
	for _, x := range c {
		if len(ids) == n || !x.Verified {
			break
		}
		ids = append(ids, x.ID)
	}
	return ids
}

// RerankedScores returns every query's metrics over its ranking with its
// candidates re-ranked (rerankedTies), as Scores returns them over its
// ranking: both tie-aware, to the same depth.
func (r *Ranking) RerankedScores() ([]QueryScore, error) {
	if r.rerank <= 0 {
		return nil, fmt.Errorf("evaluate: a ranking without re-ranking (Ranking.Rerank)")
	}
	if r.seen != r.images {
		return nil, fmt.Errorf("evaluate: %d of the collection's %d images ranked", r.seen, r.images)
	}
	out := make([]QueryScore, len(r.queries))
	for qi, q := range r.queries {
		g, err := rerankedTies(r.tops[qi], r.cands[qi])
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", q.ID, err)
		}
		out[qi] = score(q, TiedRanking{Groups: g, Depth: r.depth}, r.relevant[q.Label]-1)
		out[qi].Seconds = r.seconds[qi]
	}
	return out, nil
}
