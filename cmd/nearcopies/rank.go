package main

import (
	"cmp"
	"math"
	"slices"

	"github.com/bowline/bowline/transforms/search"
	"github.com/bowline/bowline/transforms/spatial"
)

// before orders two hits of one result as the search ranked them, except
// where the order is a tie's: it returns 0 for hits of equal score and,
// re-ranked, for two verified of equal inliers and score (spatial's
// re-ranking keeps the learner's order there, an order of ids that says
// nothing of the query).
func before(a, b search.Hit, reranked bool) int {
	if reranked {
		c := spatial.CompareReranked(
			spatial.Ranked{Score: a.Score, Inliers: a.Inliers, Verified: a.Verified},
			spatial.Ranked{Score: b.Score, Inliers: b.Inliers, Verified: b.Verified})
		if c != 0 {
			return c
		}
	}
	// Unverified hits keep the learner's order: by score.
	return cmp.Compare(b.Score, a.Score)
}

// rankOf returns the rank of source among hits, every match of a query
// (k = 0), and the source's hit (ok false if it did not match): 1 plus the
// hits before it plus the others tied with it, the worst place of its tie.
// A source that does not match ranks last of the images indexed: it ties
// with every image of score 0 or below, below every match.
func rankOf(hits []search.Hit, source string, reranked bool, images int) (rank int, hit search.Hit, ok bool) {
	at := slices.IndexFunc(hits, func(h search.Hit) bool { return h.ImageID == source })
	if at < 0 {
		return images, search.Hit{}, false
	}
	src := hits[at]
	rank = 1
	for i, h := range hits {
		if i != at && before(h, src, reranked) <= 0 {
			rank++
		}
	}
	return rank, src, true
}

// median returns the median of xs (the mean of the middle two of an even
// count); 0 for none, which JSON can hold (NaN it cannot).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// percentile returns the nearest-rank p-th percentile of xs (0 < p ≤ 100):
// the smallest value at least p% of xs are at or below; 0 for none.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}
