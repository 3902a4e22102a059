package evaluate

import (
	"fmt"
	"math"
	"slices"
)

// TieGroup is a run of results tied at one score in a ranking: N results,
// Rel of them relevant. A ranking is a sequence of groups of strictly
// decreasing Score; the metrics read only the counts, Score orders and
// merges the groups.
type TieGroup struct {
	Score  float64
	N, Rel int
}

// TiedRanking is a ranking known as its tie groups, best first: every
// order of the results within a group is equally likely, and the metrics
// are their expectations over those orders (see the package doc). Depth
// (> 0) cuts the ranking after its first Depth results: the last group
// may run past the cut, with its full counts, and only its positions up
// to the cut are retrieved. Depth 0 cuts nothing.
type TiedRanking struct {
	Groups []TieGroup
	Depth  int
}

// positions calls f(t, g) for each group g of r with t results before it,
// as long as t is within the cut. It panics on a malformed group.
func (r TiedRanking) positions(f func(t int, g TieGroup)) {
	t := 0
	for _, g := range r.Groups {
		if r.Depth > 0 && t >= r.Depth {
			return
		}
		if g.N < 1 || g.Rel < 0 || g.Rel > g.N {
			panic(fmt.Sprintf("evaluate: tie group of %d results, %d relevant", g.N, g.Rel))
		}
		f(t, g)
		t += g.N
	}
}

// end returns where group g starting after t results stops being
// retrieved: its last position, or the cut.
func (r TiedRanking) end(t int, g TieGroup) int {
	if r.Depth > 0 {
		return min(t+g.N, r.Depth)
	}
	return t + g.N
}

// AveragePrecision returns the expected average precision of r over the
// orders of its tied results, totalRelevant the relevant items of the
// collection (those ranked past the cut or not at all add 0). It panics,
// as the package's AveragePrecision does, if totalRelevant is negative or
// smaller than the relevant results of r; with totalRelevant = 0 it
// returns 0.
func (r TiedRanking) AveragePrecision(totalRelevant int) float64 {
	if totalRelevant < 0 {
		panic(fmt.Sprintf("evaluate: totalRelevant = %d", totalRelevant))
	}
	var sum float64
	found := 0 // relevant results in the groups before
	r.positions(func(t int, g TieGroup) {
		if g.Rel == 0 {
			return
		}
		// p is the chance that the result at a position of g is relevant;
		// given that it is, b·(i−1) are expected relevant before it in g.
		p := float64(g.Rel) / float64(g.N)
		var b float64
		if g.N > 1 {
			b = float64(g.Rel-1) / float64(g.N-1)
		}
		for i := 1; t+i <= r.end(t, g); i++ {
			sum += p * ((float64(found+1) + float64(i-1)*b) / float64(t+i))
		}
		found += g.Rel
	})
	if found > totalRelevant {
		panic(fmt.Sprintf("evaluate: %d relevant results ranked but totalRelevant = %d", found, totalRelevant))
	}
	if totalRelevant == 0 {
		return 0
	}
	return sum / float64(totalRelevant)
}

// PrecisionAt returns the expected fraction of the first k results that
// are relevant, over the orders of r's tied results: a group cut by k
// brings its share of relevant results, Rel/N a position. Positions past
// r's end or cut count as not relevant. It panics if k < 1.
func (r TiedRanking) PrecisionAt(k int) float64 {
	if k < 1 {
		panic(fmt.Sprintf("evaluate: PrecisionAt k = %d, want at least 1", k))
	}
	r.Depth = cut(r.Depth, k)
	var whole int // relevant results of the groups wholly within k
	var part float64
	r.positions(func(t int, g TieGroup) {
		if n := r.end(t, g) - t; n == g.N {
			whole += g.Rel
		} else {
			part = float64(n) * float64(g.Rel) / float64(g.N)
		}
	})
	return (float64(whole) + part) / float64(k)
}

// cut returns the tighter of two cuts (0: none).
func cut(depth, k int) int {
	if depth > 0 {
		return min(depth, k)
	}
	return k
}

// NDCGAt returns the expected normalised discounted cumulative gain of
// the first k results over the orders of r's tied results, relevance
// binary (gain 1 for a relevant result): each position of a group gains
// Rel/N in expectation, and the ideal ranking puts the min(k,
// totalRelevant) relevant items first. With nothing relevant it returns 0.
// It panics if k < 1.
func (r TiedRanking) NDCGAt(totalRelevant, k int) float64 {
	if k < 1 {
		panic(fmt.Sprintf("evaluate: NDCGAt k = %d, want at least 1", k))
	}
	r.Depth = cut(r.Depth, k)
	var dcg float64
	r.positions(func(t int, g TieGroup) {
		if g.Rel == 0 {
			return
		}
		gain := float64(g.Rel) / float64(g.N)
		for i := t; i < r.end(t, g); i++ {
			dcg += gain / math.Log2(float64(i+2))
		}
	})
	var idcg float64
	for i := range min(k, totalRelevant) {
		idcg += 1 / math.Log2(float64(i+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

// InterpolatedPrecision returns, at each of the RecallLevels recall levels
// r = 0, 0.1, …, 1, the interpolated precision
//
//	p_interp(r) = max { precision@k : recall@k ≥ r }
//
// of the expected numbers of relevant results at each rank k, a group's
// relevant results spread evenly over its positions (Rel/N a position);
// 0 where the ranking never reaches recall r. Without ties it is the
// package's InterpolatedPrecision. With ties it is the curve through the
// expected counts, not the expectation of each order's curve (a maximum
// does not commute with the expectation): it is what the report's
// precision–recall chart draws. It appends to dst[:0]; with totalRelevant
// = 0 every level is 0. It panics if totalRelevant is negative.
func (r TiedRanking) InterpolatedPrecision(dst []float64, totalRelevant int) []float64 {
	dst = dst[:0]
	for range RecallLevels {
		dst = append(dst, 0)
	}
	if totalRelevant < 0 {
		panic(fmt.Sprintf("evaluate: negative total relevant %d", totalRelevant))
	}
	if totalRelevant == 0 {
		return dst
	}
	found := 0
	r.positions(func(t int, g TieGroup) {
		if g.Rel == 0 {
			return // precision only falls along the group
		}
		for i := 1; t+i <= r.end(t, g); i++ {
			// Exact where i·Rel/N is a whole number: without ties, found + 1.
			f := float64(found) + float64(i*g.Rel)/float64(g.N)
			// The highest level reached here; levels below it take the
			// maximum over the deeper ranks at the end.
			reached := int(math.Floor(f*float64(RecallLevels-1)/float64(totalRelevant) + 1e-9))
			reached = min(reached, RecallLevels-1)
			dst[reached] = max(dst[reached], f/float64(t+i))
		}
		found += g.Rel
	})
	for j := RecallLevels - 2; j >= 0; j-- {
		dst[j] = max(dst[j], dst[j+1])
	}
	return dst
}

// mergeTies merges two rankings of tie groups (strictly decreasing
// scores) into a new one, groups of equal scores summed, cut after the
// group that reaches depth results (depth ≤ 0: none cut). A group past
// the cut of either ranking cannot reach the merged one's, so a group
// kept whole by both is whole in the merge: the merged tie at the cut has
// its full counts.
func mergeTies(a, b []TieGroup, depth int) []TieGroup {
	out := make([]TieGroup, 0, len(a)+len(b))
	n := 0
	i, j := 0, 0
	for (i < len(a) || j < len(b)) && (depth <= 0 || n < depth) {
		var g TieGroup
		switch {
		case j == len(b) || (i < len(a) && a[i].Score > b[j].Score):
			g = a[i]
			i++
		case i == len(a) || b[j].Score > a[i].Score:
			g = b[j]
			j++
		default:
			g = TieGroup{Score: a[i].Score, N: a[i].N + b[j].N, Rel: a[i].Rel + b[j].Rel}
			i++
			j++
		}
		out = append(out, g)
		n += g.N
	}
	return out
}

// candidates are the scores of the candidate results of one query, the
// relevant apart from the others, as sort keys (sortKey): two lists of
// integers radix-sort in linear time and merge into tie groups, where
// sorting (score, relevance) pairs by comparison took several times
// longer over a whole collection.
type candidates struct {
	rel, other []uint64
	keys, tmp  []uint64 // scratch
}

func (c *candidates) reset() { c.rel, c.other = c.rel[:0], c.other[:0] }

func (c *candidates) add(score float64, rel bool) {
	if rel {
		c.rel = append(c.rel, sortKey(score))
	} else {
		c.other = append(c.other, sortKey(score))
	}
}

func (c *candidates) len() int { return len(c.rel) + len(c.other) }

// sortKey maps scores to integers in the same order, −0 folded into +0 so
// that both tie: positive floats order like their bit patterns, negative
// ones in reverse.
func sortKey(f float64) uint64 {
	if f == 0 {
		f = 0
	}
	b := math.Float64bits(f)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// fromKey inverts sortKey.
func fromKey(k uint64) float64 {
	if k>>63 != 0 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}

// appendTop appends to dst the tie groups of the best k of c (k ≤ 0: all
// of them), best first, the group at the k-th result whole: every
// candidate tied with it is counted. It reorders c.
func appendTop(dst []TieGroup, c *candidates, k int) []TieGroup {
	if k > 0 && c.len() > k {
		c.keys = append(append(c.keys[:0], c.rel...), c.other...)
		kth := kthLargest(c.keys, k)
		keep := func(x []uint64) []uint64 {
			kept := x[:0]
			for _, s := range x {
				if s >= kth {
					kept = append(kept, s)
				}
			}
			return kept
		}
		c.rel, c.other = keep(c.rel), keep(c.other)
	}
	c.tmp = radixSort(c.rel, c.tmp)
	c.tmp = radixSort(c.other, c.tmp)
	// Both ascending: merge from their ends, best first.
	i, j := len(c.rel)-1, len(c.other)-1
	for i >= 0 || j >= 0 {
		var key uint64
		rel := j < 0 || (i >= 0 && c.rel[i] >= c.other[j])
		if rel {
			key, i = c.rel[i], i-1
		} else {
			key, j = c.other[j], j-1
		}
		if s := fromKey(key); len(dst) == 0 || dst[len(dst)-1].Score != s {
			dst = append(dst, TieGroup{Score: s})
		}
		g := &dst[len(dst)-1]
		g.N++
		if rel {
			g.Rel++
		}
	}
	return dst
}

// radixSort sorts x ascending, by a least-significant-digit radix sort of
// its bytes for long x (skipping the bytes every key shares), using tmp as
// scratch and returning it.
func radixSort(x, tmp []uint64) []uint64 {
	if len(x) < 256 {
		slices.Sort(x)
		return tmp
	}
	if cap(tmp) < len(x) {
		tmp = make([]uint64, len(x))
	}
	src, dst := x, tmp[:len(x)]
	var count [8][256]int
	for _, k := range src {
		for b := range count {
			count[b][byte(k>>(8*b))]++
		}
	}
	for b := range count {
		c := &count[b]
		shift := 8 * b
		if c[byte(src[0]>>shift)] == len(src) {
			continue
		}
		sum := 0
		for i, n := range c {
			c[i], sum = sum, sum+n
		}
		for _, k := range src {
			d := byte(k >> shift)
			dst[c[d]] = k
			c[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &x[0] {
		copy(x, src)
	}
	return tmp
}

// kthLargest returns the k-th largest of x (1 ≤ k ≤ len(x)), counting
// equal values apart, in expected linear time (quickselect); it reorders
// x.
func kthLargest(x []uint64, k int) uint64 {
	want := k - 1 // its index in descending order
	lo, hi := 0, len(x)-1
	for lo < hi {
		p := x[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for x[i] > p {
				i++
			}
			for x[j] < p {
				j--
			}
			if i <= j {
				x[i], x[j] = x[j], x[i]
				i++
				j--
			}
		}
		// Now x[lo..j] ≥ p ≥ x[i..hi], and x[j+1..i-1] = p.
		switch {
		case want <= j:
			hi = j
		case want >= i:
			lo = i
		default:
			return x[want]
		}
	}
	return x[want]
}
