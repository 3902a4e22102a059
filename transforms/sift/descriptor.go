package sift

import "math"

const (
	// The histogram carries a one-cell margin on each spatial side and one
	// extra orientation bin, so trilinear interpolation can spill over
	// without bounds tests; the margins are dropped and the extra bin wrapped
	// when the descriptor is read out.
	histRow = descBins + 2
	histCol = (descWidth + 2) * histRow
	histLen = (descWidth + 2) * histCol
)

// prefetchRows is how many rows ahead of the one it works on the
// descriptor (and the orientation histogram) prefetches.
const prefetchRows = 4

// descScratch holds per-keypoint descriptor buffers.
type descScratch struct {
	hist [histLen]float32
	raw  [DescriptorSize]float32
	// The Gaussian weight factors of the last keypoint, for the c = wtWs
	// of compute (0 before any), and the same mirrored.
	wt   []float32
	wtWs float32
	wtm  []float32
	// The samples of the patch that fall in the grid: gradient, grid
	// position, the two Gaussian weight factors, then magnitude and angle.
	dx, dy, rbin, cbin, wr, wc, mag, ang []float32
	// Their histogram indices and trilinear weights (see descWeights).
	idx []int32
	wts []float32
}

// samples returns the per-sample buffers resized to n, growing them (only)
// when a keypoint needs more than any before.
func (s *descScratch) samples(n int) {
	for _, b := range []*[]float32{&s.dx, &s.dy, &s.rbin, &s.cbin, &s.wr, &s.wc, &s.mag, &s.ang} {
		*b = grow(*b, n)
	}
}

// compute writes the descriptor of k, sampled from its Gaussian scale g
// (w×h), to dst (Lowe §6, as OpenCV's calcSIFTDescriptor).
//
// The patch around the keypoint is divided into a 4×4 grid of cells, each
// 3σ wide, in a frame rotated to the keypoint's orientation. Every pixel in
// the patch contributes its gradient magnitude, weighted by a Gaussian of σ
// equal to half the grid width (2 cells), to an 8-bin histogram of gradient
// orientation relative to the keypoint's. The contribution is spread by
// trilinear interpolation over the two nearest cells in each spatial
// direction and the two nearest orientation bins, so that small shifts and
// rotations change the descriptor smoothly. The 128-vector is normalised to
// unit length, clamped at 0.2 (which de-emphasises large gradient magnitudes,
// unreliable under non-linear illumination changes), renormalised, and
// quantised to bytes by ×512 with saturation. With root set, the clamped
// vector is turned into RootSIFT instead (see Options.RootSIFT).
func (s *descScratch) compute(g []float32, w, h int, k *kpoint, root bool, dst []byte) {
	const (
		d = descWidth
		n = descBins
	)
	ori := 360 - k.angle // back to OpenCV's y-up histogram angle
	if abs32(ori-360) < flt32Epsilon {
		ori = 0
	}
	px, py := cvRound(k.x), cvRound(k.y)
	rad := float64(ori) * (math.Pi / 180)
	cosT := float32(math.Cos(rad))
	sinT := float32(math.Sin(rad))
	const binsPerDeg = float32(n) / 360
	expScale := float32(-1.0 / (d * d * 0.5))
	histWidth := float32(descSclFactor) * k.sigma
	// The rotated grid (d+1 cells wide, counting the interpolation margin)
	// fits in a circle of this radius.
	radius := cvRound(histWidth * math.Sqrt2 * (d + 1) * 0.5)
	radius = min(radius, int(math.Sqrt(float64(w)*float64(w)+float64(h)*float64(h))))
	cosT /= histWidth
	sinT /= histWidth
	invSin, invCos := 1/sinT, 1/cosT // for gridSpan

	// The Gaussian weight depends only on the distance to the keypoint, so
	// exp(−(i²+j²)·c) = exp(−i²·c)·exp(−j²·c): one table per keypoint,
	// kept for the next if that has the same c and radius (the keypoints
	// of one extremum with several orientations come one after another).
	ws := expScale / (histWidth * histWidth)
	if s.wtWs != ws || len(s.wt) != radius+1 {
		s.wtWs = ws
		s.wt = grow(s.wt, radius+1)
		wt := s.wt
		for t := range wt {
			wt[t] = float32(math.Exp(float64(float32(t*t) * ws)))
		}
		// The same mirrored, wtm[radius+j] = wt[|j|], so that a row's
		// column weights are a copy.
		s.wtm = grow(s.wtm, 2*radius+1+8)[:2*radius+1] // see gatherRow
		for t, v := range wt {
			s.wtm[radius+t], s.wtm[radius-t] = v, v
		}
	}
	wt, wtm := s.wt, s.wtm

	// Gather the samples that fall in the grid, then compute all their
	// gradient magnitudes and angles at once (vectorised), then spread them
	// into the histogram.
	box := 2*radius + 1
	s.samples(box*box + 8) // see gatherRow
	ns := 0
	dxs, dys, rbs, cbs, wrs, wcs := s.dx, s.dy, s.rbin, s.cbin, s.wr, s.wc
	// The patch's rows are read top to bottom, each once, from a plane
	// long out of the cache: ask for each some rows ahead, so that loading
	// it overlaps the work on the rows before.
	pc0, pc1 := max(px-radius-1, 0), min(px+radius+2, w)
	ahead := func(r int) {
		if useAVX && r >= 0 && r < h && pc0 < pc1 {
			prefetch(&g[r*w+pc0], pc1-pc0)
		}
	}
	for t := -1; t < prefetchRows; t++ {
		ahead(py - radius + t)
	}
	for i := -radius; i <= radius; i++ {
		ahead(py + i + prefetchRows)
		r := py + i
		if r <= 0 || r >= h-1 {
			continue
		}
		row := g[r*w : r*w+w]
		up := g[(r-1)*w : (r-1)*w+w]
		dn := g[(r+1)*w : (r+1)*w+w]
		wi := wt[absInt(i)]
		fi := float32(i)
		j0, j1 := gridRun(max(-radius, 1-px), min(radius, w-2-px), fi, sinT, cosT, invSin, invCos)
		if j0 > j1 {
			continue
		}
		m := j1 - j0 + 1
		c0 := px + j0
		gatherRow(&rowSlices{
			dx: dxs[ns : ns+m], dy: dys[ns : ns+m], rbin: rbs[ns : ns+m], cbin: cbs[ns : ns+m],
			wr: wrs[ns : ns+m], wc: wcs[ns : ns+m],
			left: row[c0-1 : c0+1+m], up: up[c0 : c0+m], dn: dn[c0 : c0+m], wcSrc: wtm[radius+j0 : radius+j0+m],
		}, j0, sinT, cosT, fi*cosT, fi*sinT, wi)
		ns += m
	}
	mags, angs := s.mag[:ns], s.ang[:ns]
	gradPolar(dxs[:ns], dys[:ns], mags, angs)

	hist := s.hist[:]
	clear(hist)
	s.idx = growInt32(s.idx, ns)
	s.wts = grow(s.wts, (ns+7)&^7*8)
	descWeights(&descSampleSlices{mags, wrs[:ns], wcs[:ns], angs, rbs[:ns], cbs[:ns]}, ori, binsPerDeg, s.idx, s.wts)
	scatter(hist, s.idx[:ns], s.wts)

	raw := s.raw[:]
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			idx := ((i+1)*(d+2) + (j + 1)) * (n + 2)
			hist[idx] += hist[idx+n]
			hist[idx+1] += hist[idx+n+1]
			copy(raw[(i*d+j)*n:(i*d+j+1)*n], hist[idx:idx+n])
		}
	}

	var nrm2 float32
	for _, v := range raw {
		nrm2 += v * v
	}
	thr := float32(math.Sqrt(float64(nrm2))) * descMagThr
	nrm2 = 0
	var nrm1 float32
	for i, v := range raw {
		v = min(v, thr)
		raw[i] = v
		nrm2 += v * v
		nrm1 += v
	}
	dst = dst[:len(raw)]
	if root {
		// The bins are non-negative, so their sum is the L1 norm.
		inv := 1 / max(float64(nrm1), flt32Epsilon)
		for i, v := range raw {
			q := math.RoundToEven(descIntFactor * math.Sqrt(float64(v)*inv))
			dst[i] = byte(min(q, 255))
		}
		return
	}
	scale := descIntFactor / max(float32(math.Sqrt(float64(nrm2))), flt32Epsilon)
	quantise(dst, raw, scale)
}

// quantise sets dst[i] to v·scale (v = raw[i], a bin: ≥ 0 or NaN, scale >
// 0) rounded half to even and saturated at 255, in float32: x + 2²³ − 2²³
// rounds 0 ≤ x < 2²³ to an integer half to even, as math.RoundToEven of
// the float64 x does, and rounding x ≥ 255 can only give 255 or more, so
// it is clamped before. A NaN gives 0.
func quantise(dst []byte, raw []float32, scale float32) {
	const shift = 1 << 23
	dst = dst[:len(raw)]
	for i, v := range raw {
		x := v * scale
		if !(x < 255) {
			x = 255
			if v != v {
				x = 0
			}
		}
		dst[i] = byte(int32(float32(x+shift) - shift))
	}
}

// rowSlices are the samples of one row of a descriptor patch, from column
// j0 on, as gatherRow reads and writes them: left is the image row from the
// column before the first sample to the one after the last, up and dn the
// rows above and below from the first sample, wcSrc the samples' column
// weight factors; the others are outputs (see descScratch). All but left
// (2 longer) have the length of dx.
type rowSlices struct {
	dx, dy, rbin, cbin, wr, wc []float32
	left, up, dn, wcSrc        []float32
}

// rowGather is rowSlices as gatherRowAVX reads it, with the row's
// parameters.
type rowGather struct {
	dx, dy, rbin, cbin, wr, wc       *float32
	left, up, dn, wcSrc              *float32
	j0, sinT, cosT, fiCos, fiSin, wi float32
}

// gatherRow sets, for the samples of a row of the patch (row fi, columns
// j0 …), their gradient, grid coordinates (see gridCoordsGo: fiCos = fi·cosT,
// fiSin = fi·sinT) and Gaussian weight factors, the row's wi and the
// column's from r.wcSrc: one pass over the row, eight samples at a time
// where the CPU allows, always with the results of gatherRowGo.
//
// If every slice's capacity allows, the vector code rounds the row up to
// whole vectors: it reads up to 7 values past the ends of the inputs and
// writes up to 7 past the ends of the outputs (values of no use, which
// compute's next row overwrites), instead of leaving the last few samples
// of each row, 3.5 on average, to the Go code.
func gatherRow(r *rowSlices, j0 int, sinT, cosT, fiCos, fiSin, wi float32) {
	n := len(r.dx)
	_, _, _, _, _ = r.dy[:n], r.rbin[:n], r.cbin[:n], r.wr[:n], r.wc[:n]
	_, _, _, _ = r.left[:n+2], r.up[:n], r.dn[:n], r.wcSrc[:n]
	m := 0
	if useAVX && n > 0 {
		if v := (n + 7) &^ 7; cap(r.left) >= v+2 && min(cap(r.up), cap(r.dn), cap(r.wcSrc), cap(r.dx), cap(r.dy),
			cap(r.rbin), cap(r.cbin), cap(r.wr), cap(r.wc)) >= v {
			gatherRowAVX(&rowGather{
				&r.dx[0], &r.dy[0], &r.rbin[0], &r.cbin[0], &r.wr[0], &r.wc[0],
				&r.left[0], &r.up[0], &r.dn[0], &r.wcSrc[0],
				float32(j0), sinT, cosT, fiCos, fiSin, wi,
			}, v)
			return
		}
		m = n &^ 7
		if m > 0 {
			gatherRowAVX(&rowGather{
				&r.dx[0], &r.dy[0], &r.rbin[0], &r.cbin[0], &r.wr[0], &r.wc[0],
				&r.left[0], &r.up[0], &r.dn[0], &r.wcSrc[0],
				float32(j0), sinT, cosT, fiCos, fiSin, wi,
			}, m)
		}
	}
	gatherRowGo(r, m, j0, sinT, cosT, fiCos, fiSin, wi)
}

// gatherRowGo is gatherRow for the samples from t0 on.
func gatherRowGo(r *rowSlices, t0, j0 int, sinT, cosT, fiCos, fiSin, wi float32) {
	n := len(r.dx)
	sub(r.dx[t0:], r.left[t0:n], r.left[t0+2:n+2])
	sub(r.dy[t0:n], r.dn[t0:n], r.up[t0:n]) // y up, as OpenCV's
	gridCoordsGo(r.rbin[t0:n], r.cbin[t0:n], j0+t0, sinT, cosT, fiCos, fiSin)
	for t := range r.wr[t0:n] {
		r.wr[t0+t] = wi
	}
	copy(r.wc[t0:n], r.wcSrc[t0:n])
}

// scatter adds the trilinear weights of the samples, laid out as
// descWeights leaves them, to the eight bins of each, in sample order.
//
// Neighbouring samples often share their bins (the same cells and
// orientation), and adding to memory would then make each sample wait for
// the previous one's stores; a run of samples with the same bins sums into
// registers instead, loaded before the run and stored after it. No other
// sample comes between, so every bin sees the same additions in the same
// order.
func scatter(hist []float32, idx []int32, wts []float32) {
	_ = hist[histLen-1]
	if len(idx) == 0 {
		return
	}
	_ = wts[(len(idx)+7)&^7*8-1]
	if useAVX && useAVX2 {
		if !scatterCellsAVX2(&hist[0], &idx[0], &wts[0], len(idx)) {
			panic("sift: scatter: bins outside the histogram")
		}
		return
	}
	if useAVX {
		for _, i := range idx {
			if i < 0 || int(i)+histCol+histRow+2 > len(hist) {
				panic("sift: scatter: bins outside the histogram")
			}
		}
		scatterAVX(&hist[0], &idx[0], &wts[0], len(idx))
		return
	}
	scatterGo(hist, idx, wts)
}

// scatterGo is scatter in Go.
func scatterGo(hist []float32, idx []int32, wts []float32) {
	cur := idx[0]
	hb := hist[cur : cur+histCol+histRow+2]
	a0, a1, a2, a3 := hb[0], hb[1], hb[histRow], hb[histRow+1]
	a4, a5, a6, a7 := hb[histCol], hb[histCol+1], hb[histCol+histRow], hb[histCol+histRow+1]
	// The eight weights of sample k are wts[b+8j] for j = 0…7, b = 8(k&^7)
	// + k&7: see descWeights.
	for b := 0; b < len(idx); b += 8 {
		blk := wts[8*b : 8*b+64]
		for l, i := range idx[b:min(b+8, len(idx))] {
			if i != cur {
				hb[0], hb[1], hb[histRow], hb[histRow+1] = a0, a1, a2, a3
				hb[histCol], hb[histCol+1], hb[histCol+histRow], hb[histCol+histRow+1] = a4, a5, a6, a7
				cur = i
				hb = hist[cur : cur+histCol+histRow+2]
				a0, a1, a2, a3 = hb[0], hb[1], hb[histRow], hb[histRow+1]
				a4, a5, a6, a7 = hb[histCol], hb[histCol+1], hb[histCol+histRow], hb[histCol+histRow+1]
			}
			w := blk[l:]
			w = w[:57]
			a0 += w[0]
			a1 += w[8]
			a2 += w[16]
			a3 += w[24]
			a4 += w[32]
			a5 += w[40]
			a6 += w[48]
			a7 += w[56]
		}
	}
	hb[0], hb[1], hb[histRow], hb[histRow+1] = a0, a1, a2, a3
	hb[histCol], hb[histCol+1], hb[histCol+histRow], hb[histCol+histRow+1] = a4, a5, a6, a7
}

// gridRun returns the columns j0 … j1 within [lo, hi] of the samples of
// row fi of a descriptor patch that fall in the grid (j0 > j1 if none),
// whose rotation sinT, cosT (scaled to grid units) has the reciprocals
// invSin, invCos.
//
// The samples inside the grid, a rotated square, form one run of j: the
// rotated coordinates are monotonic in j (in float32 too), so each bound
// of the grid cuts the row once. gridSpan finds the run in exact
// arithmetic; the test in float32 (as gridCoordsGo computes the
// coordinates) moves its ends where rounding puts them, rarely.
func gridRun(lo, hi int, fi, sinT, cosT, invSin, invCos float32) (j0, j1 int) {
	const d = descWidth
	j0, j1 = gridSpan(lo, hi, sinT, invSin, fi*cosT)
	j0, j1 = gridSpan(j0, j1, cosT, invCos, -fi*sinT)
	inGrid := func(j int) bool {
		fj := float32(j)
		// Sample position in grid units, rotated by −ori; subtracting
		// 0.5 puts cell centres at integers, so a sample at a cell
		// centre goes entirely to that cell.
		// The conversions round each product, as gridCoordsGo's do, so
		// that no platform fuses them into the additions.
		rbin := float32(fj*sinT) + float32(fi*cosT) + d/2 - 0.5
		cbin := float32(fj*cosT) - float32(fi*sinT) + d/2 - 0.5
		return rbin > -1 && rbin < d && cbin > -1 && cbin < d
	}
	for j0 > lo && inGrid(j0-1) {
		j0--
	}
	for j0 <= j1 && !inGrid(j0) {
		j0++
	}
	for j1 < hi && inGrid(j1+1) {
		j1++
	}
	for j1 >= j0 && !inGrid(j1) {
		j1--
	}
	return j0, j1
}

// gridSpan narrows [lo, hi] to the integers j for which a·j + b lies in
// (−L, L), L = descWidth/2 + ½, the half-width of the descriptor grid with
// its interpolation margin, in exact arithmetic: j from ⌊t₀⌋+1 to ⌊t₁⌋ for
// the real bounds t₀ < t₁. What it computes is off from those bounds by
// far less than a pixel: inv is 1/a, and multiplying by it instead of
// dividing by a is off by a relative 2⁻²² at most, under 0.02 pixels for
// the |t| ≤ 6·10⁴ that |a| ≥ 10⁻⁴ allows; so is the float32 test of a
// sample (gridRun's inGrid), which therefore finds each end of the run
// at most one column off the span's.
func gridSpan(lo, hi int, a, inv, b float32) (int, int) {
	const L = descWidth/2 + 0.5
	if abs32(a) < 1e-4 {
		return lo, hi // the row is (nearly) parallel to this side
	}
	t0, t1 := (-L-b)*inv, (L-b)*inv
	if t0 > t1 {
		t0, t1 = t1, t0
	}
	return max(lo, floor32(t0)+1), min(hi, floor32(t1))
}

// floor32 is ⌊x⌋ for the small finite values used as bin coordinates.
// math.Floor is one rounding instruction on x86 with SSE4.1, with no
// branch: a truncate-then-step-down comparison would go either way at
// random for the grid's bounds, half of them negative.
func floor32(x float32) int { return int(math.Floor(float64(x))) }

// descSampleSlices are the samples of a descriptor patch that fall in the
// grid: gradient magnitude, the two Gaussian weight factors, gradient angle
// in degrees, and row and column in grid units (cell centres at integers).
// All have the length of mag.
type descSampleSlices struct {
	mag, wr, wc, ang, rbin, cbin []float32
}

// descSamples is descSampleSlices as descWeightsAVX reads it.
type descSamples struct {
	mag, wr, wc, ang, rbin, cbin *float32
}

// descWeights computes, for every sample k of in, where and how much it
// adds to the descriptor histogram: idx[k], the index in descScratch.hist of
// the lower corner of the 2×2×2 bins (row, column, orientation) it spreads
// over, and the eight trilinear weights of those bins, magnitude ×
// Gaussian weight × the interpolation factors, at wts[8(k&^7) + 8j + k&7]
// for corner j = 4·row + 2·column + orientation offset. That layout is
// eight samples' weights for one corner in a row, so the vector code
// stores whole vectors; idx and wts hold len(in.mag) and ⌈len/8⌉·64
// values. The vector code computes eight samples at a time, bit for bit as
// descWeightsGo.
func descWeights(in *descSampleSlices, ori, binsPerDeg float32, idx []int32, wts []float32) {
	n := len(in.mag)
	m := 0
	if useAVX {
		m = n &^ 7
		if m > 0 {
			p := descSamples{&in.mag[0], &in.wr[0], &in.wc[0], &in.ang[0], &in.rbin[0], &in.cbin[0]}
			descWeightsAVX(&p, m, ori, binsPerDeg, &idx[0], &wts[0])
		}
	}
	descWeightsGo(in, m, ori, binsPerDeg, idx, wts)
}

// descWeightsGo is descWeights for the samples from k0 on. The explicit
// float32 conversions forbid fusing a product into the following
// subtraction (which some architectures would), so that rounding is the
// vector code's everywhere.
func descWeightsGo(in *descSampleSlices, k0 int, ori, binsPerDeg float32, idx []int32, wts []float32) {
	const (
		d = descWidth
		n = descBins
	)
	mags := in.mag
	wrs, wcs, angs := in.wr[:len(mags)], in.wc[:len(mags)], in.ang[:len(mags)]
	rbs, cbs := in.rbin[:len(mags)], in.cbin[:len(mags)]
	idx = idx[:len(mags)]
	for k := k0; k < len(mags); k++ {
		mag := float32(mags[k]*wrs[k]) * wcs[k]
		obin := float32(float32(angs[k]-ori) * binsPerDeg)
		rbin, cbin := rbs[k], cbs[k]

		r0 := floor32(rbin)
		c0 := floor32(cbin)
		o0 := floor32(obin)
		rbin -= float32(r0)
		cbin -= float32(c0)
		obin -= float32(o0)
		o0 = int(uint(o0+n) % n) // o0 ∈ [−n, n]: wrap without a branch

		vr1 := float32(mag * rbin)
		vr0 := mag - vr1
		vrc11 := float32(vr1 * cbin)
		vrc10 := vr1 - vrc11
		vrc01 := float32(vr0 * cbin)
		vrc00 := vr0 - vrc01
		vrco111 := float32(vrc11 * obin)
		vrco101 := float32(vrc10 * obin)
		vrco011 := float32(vrc01 * obin)
		vrco001 := float32(vrc00 * obin)

		idx[k] = int32(((r0+1)*(d+2)+c0+1)*(n+2) + o0)
		w := wts[8*(k&^7)+k&7:]
		w = w[:57]
		w[0] = vrc00 - vrco001
		w[8] = vrco001
		w[16] = vrc01 - vrco011
		w[24] = vrco011
		w[32] = vrc10 - vrco101
		w[40] = vrco101
		w[48] = vrc11 - vrco111
		w[56] = vrco111
	}
}

// gridCoordsGo sets rbin[t] and cbin[t] to the position in grid units of
// the sample in column j = j0+t of a row of the patch, as inGrid in compute
// computes it (fiCos = fi·cosT and fiSin = fi·sinT for the row fi); the
// explicit conversions forbid fusing the products into the additions, as
// in convSymGo.
func gridCoordsGo(rbin, cbin []float32, j0 int, sinT, cosT, fiCos, fiSin float32) {
	const d = descWidth
	cbin = cbin[:len(rbin)]
	for t := range rbin {
		fj := float32(j0 + t)
		rbin[t] = float32(fj*sinT) + fiCos + d/2 - 0.5
		cbin[t] = float32(fj*cosT) - fiSin + d/2 - 0.5
	}
}
