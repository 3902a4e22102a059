package spatial

import (
	"cmp"
	"slices"
)

// Ranked is what spatial re-ranking reads of a result: its score under the
// learner, and what verifying it against the query found.
type Ranked struct {
	Score    float64
	Inliers  int
	Verified bool
}

// CompareReranked orders two results of one ranking as spatial re-ranking
// does (Philbin et al., CVPR 2007): the verified before the others, and
// among them more inliers first, then the higher score. It returns 0 for
// two unverified results, so that a stable sort keeps the learner's order
// among them, and for two verified with equal inliers and score, which
// keep their order too: the image id never decides, so a tie the learner
// broke by id is neither flattered nor penalised. Search results and the
// evaluation's rankings are both re-ranked by it, so that the evaluation
// measures what a query returns.
func CompareReranked(a, b Ranked) int {
	switch {
	case a.Verified != b.Verified:
		if a.Verified {
			return -1
		}
		return 1
	case !a.Verified:
		return 0
	}
	return cmp.Or(cmp.Compare(b.Inliers, a.Inliers), cmp.Compare(b.Score, a.Score))
}

// Rerank sorts hits, the verified best results of a ranking in its order,
// stably by CompareReranked of what key reads of each.
func Rerank[H any](hits []H, key func(*H) Ranked) {
	slices.SortStableFunc(hits, func(a, b H) int { return CompareReranked(key(&a), key(&b)) })
}
