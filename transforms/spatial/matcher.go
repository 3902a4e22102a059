package spatial

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Result is the outcome of verifying one candidate against a query.
type Result struct {
	// Inliers is the number of tentative correspondences that the best
	// transform found maps within the thresholds (position, scale and
	// angle): the best similarity's, or its affine refinement's if that
	// has more; 0 when the images share no word.
	Inliers int
	// Support is the inliers that count as evidence: at most one a
	// visual word, one a cell of the query and one a cell of the
	// candidate, cells of the reprojection threshold's side (see the
	// package documentation, Acceptance). A burst — one word repeated
	// over a texture, or many keypoints in one small region — gives many
	// inliers and little support. Re-ranking orders by it.
	Support int
	// LogNFA is log10 of the number of false alarms of the match: the
	// expected number of transforms of at least Support inliers that the
	// search would find between images whose correspondences fall at
	// random (the package documentation, Acceptance); +Inf when Support
	// is 1 or less.
	LogNFA float64
	// Verified is Support >= Options.MinInliers and LogNFA <
	// log10 Options.MaxNFA.
	Verified bool
	// Correspondences is the number of tentative correspondences
	// considered, after MaxPerWord and MaxCorrespondences.
	Correspondences int
	// Transform maps query pixels to candidate pixels: the least-squares
	// affine fit to the inliers when they determine one (three or more,
	// not collinear, preserving orientation; refitted to those within
	// half the threshold of the first fit), otherwise the similarity of
	// the best correspondence; Identity when there are no inliers. A fit
	// need not keep every inlier within the threshold, nor gain none.
	Transform Affine
	// Refined reports whether Transform is the least-squares fit.
	Refined bool
}

// Pair is an inlier: the index of a keypoint in the query's Geometry and
// of the keypoint of the same word in the candidate's.
type Pair struct {
	Query, Candidate int32
}

// Matcher verifies candidates against queries. It owns its scratch, which
// grows to MaxCorrespondences and the grid of transform cells and is then
// reused, so that verification allocates nothing once warm. Not safe for
// concurrent use: give each goroutine its own Matcher.
type Matcher struct {
	opt Options

	logTol, angTol float32 // ln ScaleTolerance; AngleTolerance
	nA, nS         int     // angle and log-scale bins of the grid
	invWA, invWS   float32 // their inverse widths
	sLo            float32 // lower end of the log-scale bins

	runs  []run   // shared words of the current pair
	raw   []corr  // correspondences in collection order
	cell  []int32 // raw[k]'s cell
	corrs []corr  // raw sorted by cell
	start []int32 // corrs[start[c]:start[c+1]] are cell c's
	ub    []int32 // correspondences in cell c and its neighbours
	order []int32 // non-empty cells by decreasing ub

	best, cur []int32 // inliers (indices into corrs) of the best and the current transform

	// stamp[k] == epoch marks corrs[k] as an inlier of search's best
	// hypothesis so far; epoch advances whenever the best changes, so
	// the stamps never need clearing.
	stamp []uint32
	epoch uint32
	// seen is support's hash set of the words and cells counted.
	seen []uint64
	// exhaustive makes search try every hypothesis, for the test that
	// the grid's pruning is exact.
	exhaustive bool
}

// run is one word shared by the query and the candidate: its keypoints are
// q[qi:qi+a] and c[ci:ci+b].
type run struct {
	qi, ci, a, b int32
}

// corr is a tentative correspondence: the query keypoint i at (px, py) and
// the candidate keypoint j at (qx, qy), the log of their scale ratio
// lr = ln(σ_c/σ_q) and their angle difference dt = θ_c − θ_q in [0, 2π).
type corr struct {
	px, py, qx, qy float32
	lr, dt         float32
	i, j           int32
}

// scaleRange bounds the log-scale bins: scale changes beyond 32× either way
// share the outermost bins (SIFT on two photos of one scene rarely sees
// more than 8×).
const (
	scaleRange = 3.4657359 // ln 32
	maxBins    = 64
)

// NewMatcher validates opt and returns a Matcher.
func NewMatcher(opt Options) (*Matcher, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	m := &Matcher{opt: opt}
	m.logTol = float32(math.Log(opt.ScaleTolerance))
	m.angTol = float32(opt.AngleTolerance)
	// Bins at least as wide as the tolerances, so that every inlier of a
	// transform lies in the transform's cell or a neighbouring one.
	m.nA = max(1, min(maxBins, int(2*math.Pi/opt.AngleTolerance)))
	m.invWA = float32(float64(m.nA) / (2 * math.Pi))
	wS := max(math.Log(opt.ScaleTolerance), 2*scaleRange/maxBins)
	m.nS = max(1, min(maxBins, int(math.Ceil(2*scaleRange/wS))))
	m.invWS = float32(1 / wS)
	m.sLo = -scaleRange
	return m, nil
}

// Options returns the options the Matcher was built with.
func (m *Matcher) Options() Options { return m.opt }

// Verify checks how well the candidate's keypoints agree with the query's
// under one transform (see the package documentation): it collects the
// tentative correspondences (keypoints of the same word), scores the
// similarity of each (bar those the search prunes) by its inliers, keeps
// the best (the first in a fixed order on ties) and refines it to an
// affine map by least squares. The result depends on the two geometries
// and the options only.
//
// Both geometries must be sorted by word (Geometry.Sort); Verify panics if
// their slices differ in length, and otherwise never fails: degenerate
// input (no shared word, one keypoint, every keypoint at one point) gives
// few or no inliers. The inliers stay available through Inliers until the
// next call.
func (m *Matcher) Verify(query, cand *Geometry) Result {
	mustLen(query, "query")
	mustLen(cand, "candidate")
	m.best, m.cur = m.best[:0], m.cur[:0]
	m.collect(query, cand)
	res := Result{Correspondences: len(m.raw), Transform: Identity(), LogNFA: math.Inf(1)}
	if len(m.raw) == 0 {
		m.corrs = m.corrs[:0]
		return res
	}
	thr := m.opt.Threshold * float64(side(cand))
	thr = max(thr, 1)
	thr2 := float32(thr * thr)

	m.bin()
	h := m.search(thr2)
	t := similarity(&m.corrs[h])
	m.best = m.inliers(&t, thr2, m.best[:0])
	res.Transform = t.toAffine()
	for range m.opt.RefineIterations {
		fit, ok := fitAffine(m.corrs, m.best)
		if !ok {
			break
		}
		ft, ok := affine(fit)
		if !ok {
			break
		}
		m.cur = m.inliers(&ft, thr2, m.cur[:0])
		if len(m.cur) <= len(m.best) {
			break
		}
		m.best, m.cur = m.cur, m.best
		res.Transform, res.Refined = fit, true
	}
	// RANSAC's final step: the map is fitted to all the inliers, a better
	// estimate than one correspondence's frames, and then, as LO-RANSAC
	// shrinks its threshold, fitted again to those within half the
	// threshold of the first fit: a loose threshold lets a similarity
	// collect near misses, which pull a least-squares fit.
	if m.opt.RefineIterations > 0 {
		if fit, ok := fitAffine(m.corrs, m.best); ok {
			if ft, ok := affine(fit); ok {
				res.Transform, res.Refined = fit, true
				m.cur = m.inliers(&ft, thr2/4, m.cur[:0])
				if fit, ok := fitAffine(m.corrs, m.cur); ok {
					if _, ok := affine(fit); ok {
						res.Transform = fit
					}
				}
			}
		}
	}
	res.Inliers = len(m.best)
	res.Support = m.support(query, thr, max(m.opt.Threshold*float64(side(query)), 1))
	res.LogNFA = logNFA(len(m.raw), res.Support, m.chance(cand, thr))
	res.Verified = res.Support >= m.opt.MinInliers && res.LogNFA < math.Log10(m.opt.MaxNFA)
	return res
}

// Inliers appends the inliers of the last Verify to dst, by query keypoint
// and then candidate keypoint, and returns it.
func (m *Matcher) Inliers(dst []Pair) []Pair {
	n := len(dst)
	for _, k := range m.best {
		dst = append(dst, Pair{Query: m.corrs[k].i, Candidate: m.corrs[k].j})
	}
	slices.SortFunc(dst[n:], func(a, b Pair) int {
		return cmp.Or(cmp.Compare(a.Query, b.Query), cmp.Compare(a.Candidate, b.Candidate))
	})
	return dst
}

func mustLen(g *Geometry, name string) {
	n := len(g.Words)
	if len(g.X) != n || len(g.Y) != n || len(g.Scale) != n || len(g.Angle) != n {
		panic(fmt.Sprintf("spatial: %s geometry of %d words has %d x, %d y, %d scales and %d angles",
			name, n, len(g.X), len(g.Y), len(g.Scale), len(g.Angle)))
	}
}

// side is the longer side of g's image, or of its keypoints' bounding box
// when the size is unknown.
func side(g *Geometry) float32 {
	if g.Width > 0 || g.Height > 0 {
		return max(g.Width, g.Height)
	}
	if len(g.X) == 0 {
		return 0
	}
	x0, x1 := slices.Min(g.X), slices.Max(g.X)
	y0, y1 := slices.Min(g.Y), slices.Max(g.Y)
	s := max(x1-x0, y1-y0)
	if !finite(s) {
		return 0
	}
	return s
}

// collect fills m.raw with the tentative correspondences of q and c: the
// shared words by a merge of the two sorted lists, then their pairs in
// rounds up to MaxPerWord per word and MaxCorrespondences in all: first
// the words seen once in each image (the most distinctive, as a ratio test
// would keep), then every other word's first pair, then every word's
// second, and so on. A correspondence whose scale ratio or angle
// difference is not finite is left out.
func (m *Matcher) collect(q, c *Geometry) {
	m.runs, m.raw = m.runs[:0], m.raw[:0]
	limit := m.opt.MaxCorrespondences
	qw, cw := q.Words, c.Words
	for i, j := 0, 0; i < len(qw) && j < len(cw); {
		switch {
		case qw[i] < cw[j]:
			i++
		case qw[i] > cw[j]:
			j++
		default:
			w := qw[i]
			i0, j0 := i, j
			for i < len(qw) && qw[i] == w {
				i++
			}
			for j < len(cw) && cw[j] == w {
				j++
			}
			m.runs = append(m.runs, run{qi: int32(i0), ci: int32(j0), a: int32(i - i0), b: int32(j - j0)})
		}
	}
	for _, single := range []bool{true, false} {
		for _, u := range m.runs {
			if (u.a == 1 && u.b == 1) != single {
				continue
			}
			if len(m.raw) == limit {
				return
			}
			m.add(q, c, int(u.qi), int(u.ci)) // pairOf(0, a, b) is (0, 0)
		}
	}
	for r := 1; r < m.opt.MaxPerWord; r++ {
		more := false
		for _, u := range m.runs {
			if int64(u.a)*int64(u.b) <= int64(r) {
				continue
			}
			if len(m.raw) == limit {
				return
			}
			more = true
			i, j := pairOf(r, int(u.a), int(u.b))
			m.add(q, c, int(u.qi)+i, int(u.ci)+j)
		}
		if !more {
			return
		}
	}
}

// pairOf returns the r-th pair (i, j), 0 ≤ r < a·b, of a word with a
// keypoints in the query and b in the candidate. With n = max(a, b) the
// longer side's index is r mod n and the shorter side's is that plus
// ⌊r/n⌋, modulo its length: a bijection of [0, a·b) onto the pairs in which
// the first n pairs use every keypoint of the longer side once and those
// of the shorter side as evenly as they can. Sort puts the largest scales
// first, so the first pairs match large with large.
func pairOf(r, a, b int) (i, j int) {
	if a >= b {
		i = r % a
		return i, (i + r/a) % b
	}
	j = r % b
	return (j + r/b) % a, j
}

func (m *Matcher) add(q, c *Geometry, i, j int) {
	lr := float32(math.Log(float64(c.Scale[j]) / float64(q.Scale[i])))
	dt := float32(wrap(float64(c.Angle[j]) - float64(q.Angle[i])))
	if !finite(lr) || !finite(dt) || !finite(q.X[i]) || !finite(q.Y[i]) || !finite(c.X[j]) || !finite(c.Y[j]) {
		return
	}
	m.raw = append(m.raw, corr{px: q.X[i], py: q.Y[i], qx: c.X[j], qy: c.Y[j], lr: lr, dt: dt, i: int32(i), j: int32(j)})
}

// cellOf returns the grid cell of a (log-scale change, rotation): angle
// bin·nS + scale bin. Out-of-range scale changes go to the outer bins.
func (m *Matcher) cellOf(lr, dt float32) (a, s int) {
	a = min(int(dt*m.invWA), m.nA-1)
	f := (lr - m.sLo) * m.invWS
	switch {
	case f < 0:
		s = 0
	case f >= float32(m.nS):
		s = m.nS - 1
	default:
		s = int(f)
	}
	return a, s
}

// bin sorts m.raw into m.corrs by grid cell (a stable counting sort) and
// computes each cell's bound m.ub, the correspondences in it and its
// neighbours, and m.order, the non-empty cells by decreasing bound.
func (m *Matcher) bin() {
	cells := m.nA * m.nS
	m.start = grow(m.start, cells+1)
	clear(m.start)
	m.cell = grow(m.cell, len(m.raw))
	for k := range m.raw {
		a, s := m.cellOf(m.raw[k].lr, m.raw[k].dt)
		c := int32(a*m.nS + s)
		m.cell[k] = c
		m.start[c+1]++
	}
	for c := range cells {
		m.start[c+1] += m.start[c]
	}
	m.corrs = growCorr(m.corrs, len(m.raw))
	m.ub = grow(m.ub, cells) // used as the fill pointers first
	copy(m.ub, m.start[:cells])
	for k := range m.raw {
		c := m.cell[k]
		m.corrs[m.ub[c]] = m.raw[k]
		m.ub[c]++
	}
	m.order = m.order[:0]
	for c := range cells {
		if m.start[c+1] == m.start[c] {
			m.ub[c] = 0
			continue
		}
		var sp [3][2]int32
		var n int32
		for _, r := range sp[:m.spans(c/m.nS, c%m.nS, &sp)] {
			n += r[1] - r[0]
		}
		m.ub[c] = n
		m.order = append(m.order, int32(c))
	}
	slices.SortFunc(m.order, func(a, b int32) int {
		return cmp.Or(cmp.Compare(m.ub[b], m.ub[a]), cmp.Compare(a, b))
	})
}

// search scores the similarity of correspondences by their inliers and
// returns the index in m.corrs of the best, the first in m.order's order
// on ties. A cell whose bound is no more than the best count so far cannot
// hold a better hypothesis, and since m.order is by decreasing bound, no
// later cell can either; a hypothesis stops counting once the
// correspondences left could not lift it above the best. Those two prunings
// are exact. The third is not: a correspondence that is an inlier of the
// best hypothesis so far is not tried, since its frames map nearly the same
// transform; without it a near duplicate, whose N correspondences nearly
// all agree, would cost N² tests.
func (m *Matcher) search(thr2 float32) int {
	var spans [3][2]int32
	best, bestH := -1, 0
	if cap(m.stamp) < len(m.corrs) {
		m.stamp, m.epoch = make([]uint32, len(m.corrs)), 0
	}
	m.stamp = m.stamp[:len(m.corrs)]
	if m.epoch++; m.epoch == 0 { // no stamp of an earlier call may match
		clear(m.stamp[:cap(m.stamp)])
		m.epoch = 1
	}
	logTol, angTol := m.logTol, m.angTol
	angWrap := 2*math.Pi - angTol // |Δθ| beyond it is within angTol the other way round
	for _, c := range m.order {
		bound := int(m.ub[c])
		if bound <= best {
			break
		}
		ns := m.spans(int(c)/m.nS, int(c)%m.nS, &spans)
		for h := m.start[c]; h < m.start[c+1]; h++ {
			if m.stamp[h] == m.epoch && !m.exhaustive {
				continue
			}
			t := similarity(&m.corrs[h])
			// In locals, so that they stay in registers through the loop.
			a11, a12, a21, a22, tx, ty, lr, dt := t.a11, t.a12, t.a21, t.a22, t.tx, t.ty, t.lr, t.dt
			n, left := 0, bound
			for _, sp := range spans[:ns] {
				if n+left <= best {
					break
				}
				left -= int(sp[1] - sp[0])
				// inlier, by hand and without branches: the call is not
				// inlined, and this loop is where verification spends its
				// time, on conditions a random correspondence meets half the
				// time (mispredicted branches cost it twice as much).
				cs := m.corrs[sp[0]:sp[1]]
				for k := range cs {
					p := &cs[k]
					d := abs32(p.lr - lr)
					e := abs32(p.dt - dt)
					ex := a11*p.px + a12*p.py + tx - p.qx
					ey := a21*p.px + a22*p.py + ty - p.qy
					n += b2i(d < logTol) & (b2i(e < angTol) | b2i(e > angWrap)) & b2i(ex*ex+ey*ey < thr2)
				}
			}
			if n > best {
				best, bestH = n, int(h)
				m.epoch++
				for _, sp := range spans[:ns] {
					for k := sp[0]; k < sp[1]; k++ {
						if m.inlier(&m.corrs[k], &t, thr2) {
							m.stamp[k] = m.epoch
						}
					}
				}
			}
		}
	}
	return bestH
}

// spans sets sp to the ranges of m.corrs of the cells within one bin of
// (a, s), each cell once, and returns how many it set: angle bins wrap
// around, scale bins do not, and the scale bins of one angle bin are
// consecutive cells, so one range each.
func (m *Matcher) spans(a, s int, sp *[3][2]int32) int {
	a0, a1 := a-1, a+1
	if m.nA < 3 {
		a0, a1 = 0, m.nA-1
	}
	s0, s1 := max(s-1, 0), min(s+1, m.nS-1)
	n := 0
	for da := a0; da <= a1; da++ {
		aa := (da + m.nA) % m.nA
		sp[n] = [2]int32{m.start[aa*m.nS+s0], m.start[aa*m.nS+s1+1]}
		n++
	}
	return n
}

// inlier reports whether t maps p's query point within √thr2 pixels of
// its candidate point, and p's own scale change and rotation agree with
// t's within the tolerances.
func (m *Matcher) inlier(p *corr, t *xf, thr2 float32) bool {
	d := abs32(p.lr - t.lr)
	e := abs32(p.dt - t.dt)
	ex := t.a11*p.px + t.a12*p.py + t.tx - p.qx
	ey := t.a21*p.px + t.a22*p.py + t.ty - p.qy
	return d < m.logTol && (e < m.angTol || e > 2*math.Pi-m.angTol) && ex*ex+ey*ey < thr2
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// b2i compiles to a move of the flag, not a branch.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// inliers appends the indices in m.corrs of t's inliers to dst.
func (m *Matcher) inliers(t *xf, thr2 float32, dst []int32) []int32 {
	for k := range m.corrs {
		if m.inlier(&m.corrs[k], t, thr2) {
			dst = append(dst, int32(k))
		}
	}
	return dst
}

func grow(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

func growCorr(s []corr, n int) []corr {
	if cap(s) < n {
		return make([]corr, n)
	}
	return s[:n]
}
