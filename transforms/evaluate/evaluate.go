// Package evaluate computes retrieval metrics for one query's ranking —
// average precision, precision at k and normalised discounted cumulative
// gain — and averages them over queries.
//
// A ranking is described position by position, best first: rel[i] (or
// gains[i]) belongs to the i-th ranked result. The query itself should be
// left out of both the ranking and the relevance totals.
//
// # Ties
//
// A model may give many results the same score — a sparse one gives most
// of the collection 0 — and no order among them is better founded than
// another. Breaking ties by image id would let the ids speak: they group
// by label, so a query's own label (or the first alphabetically) would
// rise for free. So the evaluation ranks by score alone and reports the
// expectation of each metric over every order of the tied results, all
// equally likely (McSherry and Najork, "Computing Information Retrieval
// Performance Measures Efficiently in the Presence of Tied Scores", ECIR
// 2008): deterministic, without a seed, and blind to ids. A TiedRanking
// is the ranking as groups of tied results, best first: group g holds n_g
// results, r_g of them relevant, after t_g = Σ_{h<g} n_h results of which
// R_g = Σ_{h<g} r_h are relevant. Within g a position is relevant with
// chance r_g/n_g, and given that it is, each of the other n_g − 1
// positions holds one of the other r_g − 1 relevant results with chance
// (r_g − 1)/(n_g − 1). By linearity of expectation, with R relevant items
// in the collection,
//
//	E[AP] = (1/R) Σ_g Σ_{i=1}^{n_g} (r_g/n_g) · (R_g + 1 + (i−1)(r_g−1)/(n_g−1)) / (t_g + i),
//	E[P@k] = (1/k) Σ_g r_g · |positions of g within k| / n_g,
//	E[DCG@k] = Σ_g (r_g/n_g) Σ_{positions p of g, p ≤ k} 1/log₂(p + 1),
//
// and E[NDCG@k] = E[DCG@k] / IDCG@k, since the ideal DCG does not depend
// on the order. The term (r_g − 1)/(n_g − 1) is 0 when n_g = 1: without
// ties every group holds one result and these are the plain metrics, to
// the bit. The precision–recall curve is drawn through the expected
// numbers of relevant results at each rank (TiedRanking.InterpolatedPrecision).
// A ranking cut at a rank depth D counts positions up to D only: the group
// straddling the cut keeps its full counts n_g and r_g — the results tied
// with the last kept one, beyond the cut as well — and contributes its
// positions up to D. Chunks of the collection ranked apart keep, for each
// query, their groups down to the one that reaches D, whole; merged (equal
// scores summed) and cut again they are exactly the whole collection's,
// since a group beyond one chunk's cut has at least D better results in
// that chunk alone.
//
// # Spatial re-ranking and query expansion
//
// With Options.Rerank each method of bags of words gets +sv rows: each
// query's results of positive score down to rank Rerank (the tie group at
// the cut whole) are verified against the query's keypoints
// (transforms/spatial, the run's geometry files) and re-ordered by
// spatial.CompareReranked, the function search's re-ranking uses; two
// results it cannot order that share a score tie, so the +sv metrics are
// tie-aware as the others and equal those of search.Refine{Rerank} once
// its ties (broken by id) are grouped. With Options.Expand the +sv+qe rows
// average each query with its best Expand verified results
// (index.ExpandQuery), rank the collection again and re-rank again. Both
// are compared with the method itself, not TF-IDF. Where a tie group
// straddles rank Rerank, search verifies its members up to the rank (by
// id) and the evaluation all of them: the rows then measure the
// id-blind ranking search approximates.
//
// On ETH-80 (--vocab 10000 --akm, --rerank 100 --expand 50, ~650
// held-out queries) verification adds little: +0.008 to +0.013 mAP to each
// learner and +0.0001 (p = 0.9) to TF-IDF with object labels, +0.0002 to
// +0.0015 with category labels (all significant but TF-IDF's on objects):
// ETH-80's 41 views of an object rarely share an affine frame. Expansion
// adds +0.015 to +0.037 (objects) and +0.010 to +0.052 (categories; TF-IDF
// 0.291 → 0.343). Both cost far more than ranking: retrain's evaluate
// stage took 1.7 CPU s plain, 19.0 with +sv and 34.8 with +sv+qe, the
// whole retrain 6, 22 and 45 s, at peaks of 259, 406 and 469 MB, so the
// rows are off unless asked for.
package evaluate

import (
	"fmt"
	"math"
	"slices"
)

// AveragePrecision returns the non-interpolated average precision of a
// ranking, the area under its precision–recall curve:
//
//	AP = (1/R) Σ_{k : rel[k]} precision@(k+1),
//
// where R = totalRelevant is the number of relevant items in the collection.
// Dividing by R rather than by the relevant items retrieved charges a
// truncated ranking for every relevant item it misses: each contributes 0.
//
// A query with no relevant items (R = 0) has no meaningful AP; it returns 0
// rather than NaN so that a sum stays finite, and callers computing a mean
// AP should normally leave such queries out.
//
// AveragePrecision panics if totalRelevant is negative or smaller than the
// number of relevant results in rel.
func AveragePrecision(rel []bool, totalRelevant int) float64 {
	if totalRelevant < 0 {
		panic(fmt.Sprintf("evaluate: totalRelevant = %d", totalRelevant))
	}
	var found int
	var sum float64
	for i, r := range rel {
		if r {
			found++
			sum += float64(found) / float64(i+1)
		}
	}
	if found > totalRelevant {
		panic(fmt.Sprintf("evaluate: %d relevant results ranked but totalRelevant = %d", found, totalRelevant))
	}
	if totalRelevant == 0 {
		return 0
	}
	return sum / float64(totalRelevant)
}

// PrecisionAt returns the fraction of the first k results that are
// relevant. It divides by k even when rel holds fewer than k results, so
// a short ranking is not rewarded for returning less. It panics if k < 1.
func PrecisionAt(rel []bool, k int) float64 {
	if k < 1 {
		panic(fmt.Sprintf("evaluate: PrecisionAt k = %d, want at least 1", k))
	}
	var found int
	for _, r := range rel[:min(k, len(rel))] {
		if r {
			found++
		}
	}
	return float64(found) / float64(k)
}

// NDCGAt returns the normalised discounted cumulative gain of the first k
// results, DCG@k(gains) / DCG@k(ideal sorted descending), where
//
//	DCG@k(g) = Σ_{i<k} (2^g_i − 1) / log₂(i + 2).
//
// gains[i] is the graded relevance of the i-th ranked result; missing
// positions (len(gains) < k) gain nothing. ideal holds the gains of every
// item in the collection for this query — at least all those in gains — in
// any order; it is sorted (in a copy) here, and its best k give the
// largest DCG@k achievable, so the result lies in [0, 1]. If the ideal
// DCG is 0 (nothing relevant) NDCGAt returns 0.
//
// NDCGAt panics if k < 1 or a gain is negative or NaN.
func NDCGAt(gains []float64, ideal []float64, k int) float64 {
	if k < 1 {
		panic(fmt.Sprintf("evaluate: NDCGAt k = %d, want at least 1", k))
	}
	best := slices.Clone(ideal)
	slices.SortFunc(best, func(a, b float64) int {
		switch {
		case a > b:
			return -1
		case a < b:
			return 1
		}
		return 0
	})
	idcg := dcgAt(best, k)
	dcg := dcgAt(gains, k)
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

// dcgAt returns DCG@k of g, panicking on a negative or NaN gain, whose
// 2^g − 1 would be negative or undefined.
func dcgAt(g []float64, k int) float64 {
	var s float64
	for i, x := range g[:min(k, len(g))] {
		if !(x >= 0) {
			panic(fmt.Sprintf("evaluate: gain %v at position %d, want a non-negative number", x, i))
		}
		s += (math.Exp2(x) - 1) / math.Log2(float64(i+2))
	}
	return s
}

// RecallLevels is the number of recall levels, 0, 0.1, …, 1, at which
// InterpolatedPrecision samples a precision–recall curve.
const RecallLevels = 11

// InterpolatedPrecision returns, at each of the RecallLevels recall levels
// r = 0, 0.1, …, 1, the interpolated precision of the ranking
//
//	p_interp(r) = max { precision@k : recall@k ≥ r },
//
// 0 where the ranking never reaches recall r (a truncated ranking that
// misses relevant items). Interpolation makes the curve non-increasing, so
// the mean of many queries' curves is the precision–recall curve TREC
// reports. It appends to dst[:0]. With totalRelevant = 0 every level is 0.
// It panics, as AveragePrecision does, if totalRelevant is negative or
// smaller than the relevant results in rel.
func InterpolatedPrecision(dst []float64, rel []bool, totalRelevant int) []float64 {
	dst = dst[:0]
	for range RecallLevels {
		dst = append(dst, 0)
	}
	if totalRelevant < 0 {
		panic(fmt.Sprintf("evaluate: negative total relevant %d", totalRelevant))
	}
	found := 0
	for k, r := range rel {
		if !r {
			continue
		}
		found++
		if found > totalRelevant {
			panic(fmt.Sprintf("evaluate: %d relevant results but total relevant %d", found, totalRelevant))
		}
		p := float64(found) / float64(k+1)
		// Every level up to this recall is reached here with precision p.
		reached := int(math.Floor(float64(found)*float64(RecallLevels-1)/float64(totalRelevant) + 1e-9))
		for j := 0; j <= reached; j++ {
			dst[j] = max(dst[j], p)
		}
	}
	return dst
}

// Summary accumulates per-query metrics. The zero value is an empty
// summary. Its fields are exported so that it can serve as a combiner's
// accumulator; partial summaries combine with Merge.
type Summary struct {
	Queries          int     // number of queries added
	SumAP            float64 // Σ average precision
	SumPrecisionAt10 float64 // Σ precision@10
	SumNDCGAt10      float64 // Σ NDCG@10
}

// Add records one query's average precision, precision@10 and NDCG@10.
func (s *Summary) Add(ap, p10, ndcg10 float64) {
	s.Queries++
	s.SumAP += ap
	s.SumPrecisionAt10 += p10
	s.SumNDCGAt10 += ndcg10
}

// Merge adds the queries of o to s.
func (s *Summary) Merge(o Summary) {
	s.Queries += o.Queries
	s.SumAP += o.SumAP
	s.SumPrecisionAt10 += o.SumPrecisionAt10
	s.SumNDCGAt10 += o.SumNDCGAt10
}

// Means are per-query metrics averaged over Queries queries.
type Means struct {
	Queries       int
	MAP           float64 // mean average precision
	PrecisionAt10 float64 // mean precision@10
	NDCGAt10      float64 // mean NDCG@10
}

// Mean returns the means of the recorded metrics; with no queries they are
// all 0 rather than NaN.
func (s Summary) Mean() Means {
	if s.Queries == 0 {
		return Means{}
	}
	n := float64(s.Queries)
	return Means{Queries: s.Queries, MAP: s.SumAP / n, PrecisionAt10: s.SumPrecisionAt10 / n, NDCGAt10: s.SumNDCGAt10 / n}
}

// String formats m for logs and reports.
func (m Means) String() string {
	return fmt.Sprintf("queries=%d mAP=%.4f P@10=%.4f NDCG@10=%.4f", m.Queries, m.MAP, m.PrecisionAt10, m.NDCGAt10)
}
