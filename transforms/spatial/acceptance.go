package spatial

import (
	"math"
	"math/bits"
	"slices"
)

// support counts the inliers m.best as evidence (Result.Support): in their
// order, an inlier counts if its word, its query point's cell and its
// candidate point's cell are all new, cells being squares of side thrQ in
// the query and thrC in the candidate (the reprojection thresholds of
// each: two points in one cell are as near as the inlier test can tell
// apart). It marks what it counted in a hash set of keys, m.seen, sized
// for the inliers' three keys each and cleared once a call.
func (m *Matcher) support(query *Geometry, thrC, thrQ float64) int {
	if len(m.best) == 0 {
		return 0
	}
	size := 1 << bits.Len(uint(8*len(m.best)))
	if cap(m.seen) < size {
		m.seen = make([]uint64, size)
	}
	m.seen = m.seen[:size]
	clear(m.seen)
	shift := 64 - bits.Len(uint(size-1))
	invQ, invC := 1/thrQ, 1/thrC
	n := 0
	for _, k := range m.best {
		c := &m.corrs[k]
		word := keyWord | uint64(query.Words[c.i])
		cq := keyQuery | cellKey(float64(c.px)*invQ, float64(c.py)*invQ)
		cc := keyCand | cellKey(float64(c.qx)*invC, float64(c.qy)*invC)
		if m.has(word, shift) || m.has(cq, shift) || m.has(cc, shift) {
			continue
		}
		m.put(word, shift)
		m.put(cq, shift)
		m.put(cc, shift)
		n++
	}
	return n
}

// Keys of support's set: a tag in the top two bits (never 0, the empty
// slot) and a word or a cell below.
const (
	keyWord  = 1 << 62
	keyQuery = 2 << 62
	keyCand  = 3 << 62
)

// cellKey packs the cell (⌊x⌋, ⌊y⌋) into 62 bits, 31 a coordinate:
// coordinates of an image's keypoints are far inside ±2³⁰ cells.
func cellKey(x, y float64) uint64 {
	const mask = 1<<31 - 1
	return (uint64(int64(math.Floor(x)))&mask)<<31 | uint64(int64(math.Floor(y)))&mask
}

// has and put look a key up and insert it in m.seen, open addressing by
// linear probing from a Fibonacci hash: the table has room for every key,
// so the probe ends.
func (m *Matcher) has(key uint64, shift int) bool {
	mask := len(m.seen) - 1
	for h := int((key * 0x9e3779b97f4a7c15) >> shift); ; h = (h + 1) & mask {
		switch m.seen[h] {
		case key:
			return true
		case 0:
			return false
		}
	}
}

func (m *Matcher) put(key uint64, shift int) {
	mask := len(m.seen) - 1
	h := int((key * 0x9e3779b97f4a7c15) >> shift)
	for m.seen[h] != 0 && m.seen[h] != key {
		h = (h + 1) & mask
	}
	m.seen[h] = key
}

// chance is the probability that a correspondence placed at random agrees
// with a given transform (see Acceptance in the package documentation):
// that its candidate point, uniform over the candidate's area, falls
// within thr of where the transform puts its query point, π·thr²/area, and
// that its rotation, uniform, is within AngleTolerance of the
// transform's, AngleTolerance/π. Its scale change must agree too, which
// is left out (a factor at most 1): SIFT's scales are not uniform, and
// leaving it out can only make acceptance stricter. The area is the
// candidate's size, or its keypoints' bounding box when the size is
// unknown.
func (m *Matcher) chance(cand *Geometry, thr float64) float64 {
	area := float64(cand.Width) * float64(cand.Height)
	if !(cand.Width > 0 && cand.Height > 0) && len(cand.X) > 0 {
		w := float64(slices.Max(cand.X) - slices.Min(cand.X))
		h := float64(slices.Max(cand.Y) - slices.Min(cand.Y))
		area = w * h
	}
	pos := 1.0
	if area > 0 && !math.IsInf(area, 0) {
		pos = min(1, math.Pi*thr*thr/area)
	}
	return pos * min(1, m.opt.AngleTolerance/math.Pi)
}

// logNFA is log10 of the number of false alarms of k supporting inliers
// among n tentative correspondences, each agreeing with a given transform
// with probability p by chance: ORSA's count for models fixed by s = 1
// correspondence (a SIFT frame fixes a similarity),
//
//	NFA = (n − 1) · C(n, k) · C(k, 1) · p^(k−1),
//
// the n − 1 values k may take times the chance of k inliers among n, one
// of them the model's own (see Acceptance in the package documentation).
// +Inf for k ≤ 1, where the inliers are no more than the model's own.
func logNFA(n, k int, p float64) float64 {
	if k <= 1 || k > n {
		return math.Inf(1)
	}
	return math.Log10(float64(n-1)) + log10Binom(n, k) + math.Log10(float64(k)) + float64(k-1)*math.Log10(p)
}

// log10Binom is log10 C(n, k), 0 ≤ k ≤ n.
func log10Binom(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return (a - b - c) / math.Ln10
}
