package sift

import (
	"math"
	"math/bits"
)

// detectOctave finds the keypoints of octave o, given its Gaussian scales g
// (w×h planes), and appends them to e.kps.
//
// The DoG layers D_i = L_{i+1} − L_i are never stored as planes: the scan
// computes D_i of one row on the fly from two Gaussian rows while it looks
// for candidates along the row (dogMask), and keeps the last three rows of
// each layer, with which the candidates of the middle row are checked
// against the rows above and below (dogRefine). The few left (about 0.3%
// of samples on photos) compute the DoG values of their other neighbours
// from g as they test them (isExtremum), with the same float32
// subtraction, so the same values. Storing whole DoG planes cost more
// than the scan itself: five rows written and read back for every image
// row, from planes long out of cache; the three rows a layer are read
// back while they are in the cache.
func (e *Extractor) detectOctave(o int, g []float32, w, h int) {
	S := e.opt.ScalesPerOctave
	plane := w * h
	if w < 2*imgBorder+1 || h < 2*imgBorder+1 {
		return
	}
	c0, c1 := imgBorder, w-imgBorder // columns searched
	// The masks of the S layers of two rows: the candidates of a row are
	// tested once the next row has been scanned, when the rows above and
	// below them in L_1 … L_{S+1} are all in the cache; tested at once,
	// nearly every candidate waited for the row below from memory.
	nm := (c1 - c0 + 7) / 8
	e.mask = growBytes(e.mask, 2*S*nm)
	masks := func(r int) []uint8 { return e.mask[r%2*S*nm : (r%2+1)*S*nm] }
	// The DoG rows of columns c0−1 … c1 of the last three rows scanned,
	// each with room for dogRefine's whole bytes of samples.
	nd, stride := c1-c0+2, 8*nm+2
	e.dog = grow(e.dog, 3*S*stride)
	dog := func(i, r int) []float32 { return e.dog[(r%3*S+i-1)*stride:][:stride] }
	row := func(i, r int) []float32 { return g[i*plane+r*w+c0-1:][:nd] }
	// test tests the candidates of row r.
	test := func(r int) {
		ms := masks(r)
		for i := 1; i <= S; i++ {
			mi := ms[(i-1)*nm : i*nm]
			dogRefine(dog(i, r-1), dog(i, r), dog(i, r+1), mi)
			for b, m := range mi {
				for ; m != 0; m &= m - 1 {
					c := c0 + 8*b + bits.TrailingZeros8(m)
					if e.extremum(o, g, w, h, i, r, c) {
						e.addExtremum(o, i, r, c, g, w, h)
					}
				}
			}
		}
	}
	// Pre-filter: an extremum with |D| at most half the final contrast
	// threshold cannot plausibly interpolate to above it, so it is not worth
	// refining (OpenCV floors this to whole grey levels; we keep it exact).
	thr := float32(0.5 * e.opt.ContrastThreshold / float64(S))
	topReach := len(e.kern[S+2]) + 1
	for i := 1; i <= S; i++ { // the row above the first scanned
		sub(dog(i, imgBorder-1)[:nd], row(i, imgBorder-1), row(i+1, imgBorder-1))
	}
	for r := imgBorder; r < h-imgBorder; r++ {
		if (r-imgBorder)%checkRows == 0 && e.stopped() {
			return
		}
		// Most samples are below the threshold or not even a maximum or
		// minimum along the row: find the rest eight at a time, then
		// test those against all 26 neighbours.
		// The candidates of layer 1 are tested against L_0 too, which
		// the scan does not read: ask for the row that they will need
		// after the next one.
		if useAVX && r+1 < h {
			prefetch(&g[(r+1)*w+c0-1], c1-c0+2)
		}
		// The top layer's candidates of the row before read L_{S+1} up to
		// r+1+R (topDoG, R = kernel radius), rows the scan reaches only
		// later: ask for the next one now, so that topDoG does not wait
		// for them.
		if y := r + topReach; useAVX && y < h {
			prefetch(&g[(S+1)*plane+y*w], w)
		}
		ms := masks(r)
		for i := 1; i <= S; i++ {
			dogMask(row(i, r), row(i+1, r), thr, ms[(i-1)*nm:i*nm], dog(i, r)[:nd])
		}
		if r > imgBorder {
			test(r - 1)
		}
	}
	last := h - imgBorder // the row below the last scanned
	for i := 1; i <= S; i++ {
		sub(dog(i, last)[:nd], row(i, last), row(i+1, last))
	}
	test(last - 1)
}

// sub sets d[i] = b[i] − a[i].
func sub(d, a, b []float32) {
	n := len(d)
	a, b = a[:n], b[:n]
	m := 0
	if useAVX {
		m = n &^ 7
		if m > 0 {
			subAVX(&d[0], &a[0], &b[0], m)
		}
	}
	for i := m; i < n; i++ {
		d[i] = b[i] - a[i]
	}
}

// dogMask marks the candidate extrema of the DoG row d = hi − lo over
// [1, len(lo)−1): bit b of mask[i] is set if v = d[1+8i+b] satisfies v > thr
// and v ≥ both its neighbours in the row, or v < −thr and v ≤ both. Bits
// past the end are clear. It stores the row, all len(lo) values, in d.
func dogMask(lo, hi []float32, thr float32, mask []uint8, d []float32) {
	n := len(lo) - 2
	hi, d = hi[:len(lo)], d[:len(lo)]
	mask = mask[:(n+7)/8]
	m := 0
	if useAVX {
		m = n &^ 7
		if m > 0 {
			dogMaskAVX(&lo[1], &hi[1], m, thr, &mask[0], &d[1])
		}
	}
	clear(mask[m/8:])
	d[0] = hi[0] - lo[0]
	for x := m; x < n; x++ {
		l, v, r := hi[x]-lo[x], hi[x+1]-lo[x+1], hi[x+2]-lo[x+2]
		d[x+1] = v
		if v > thr && v >= l && v >= r || v < -thr && v <= l && v <= r {
			mask[x/8] |= 1 << (x % 8)
		}
	}
	d[n+1] = hi[n+1] - lo[n+1]
}

// dogRefine clears the candidates of mask (as dogMask's, for the DoG row
// d) that do not beat the three samples above and below them, in the DoG
// rows up and dn of the same layer: the first test of isExtremum, made
// here on rows the scan keeps, so that five in six candidates on photos
// never reach it. The rows must hold 8·len(mask)+2 values (the vector
// code reads them whatever the bits).
func dogRefine(up, d, dn []float32, mask []uint8) {
	n := 8*len(mask) + 2
	up, d, dn = up[:n], d[:n], dn[:n]
	i0 := 0
	if useAVX {
		i0 = len(mask) &^ 15
		if i0 > 0 {
			dogRefineAVX(&up[1], &d[1], &dn[1], &mask[0], i0)
		}
	}
	for i := i0; i < len(mask); i++ {
		m := mask[i]
		for left := m; left != 0; left &= left - 1 {
			b := bits.TrailingZeros8(left)
			x := 1 + 8*i + b
			v := d[x]
			var beats bool
			if v > 0 {
				beats = v >= up[x-1] && v >= up[x] && v >= up[x+1] && v >= dn[x-1] && v >= dn[x] && v >= dn[x+1]
			} else {
				beats = v <= up[x-1] && v <= up[x] && v <= up[x+1] && v <= dn[x-1] && v <= dn[x] && v <= dn[x+1]
			}
			if !beats {
				m &^= 1 << b
			}
		}
		mask[i] = m
	}
}

// extremum is isExtremum of the sample (r, c) of DoG layer `layer` in
// octave o. The top layer's neighbours above, in D_{S+1} = L_{S+2} −
// L_{S+1}, are computed by topDoG, and only for the samples that beat
// their other 17 neighbours (1,300–2,200 an image on 640×480 mosaics of
// ETH-80 photos).
func (e *Extractor) extremum(o int, g []float32, w, h, layer, r, c int) bool {
	plane, p := w*h, r*w+c
	if layer < e.opt.ScalesPerOctave {
		return isExtremum(g, plane, w, layer, p, false)
	}
	if !isExtremum(g, plane, w, layer, p, true) {
		return false
	}
	var up [3][3]float32
	e.topDoG(o, g, w, h, r, c, &up)
	v := g[(layer+1)*plane+p] - g[layer*plane+p]
	for _, row := range up {
		for _, d := range row {
			if v > 0 && !(v >= d) || !(v > 0) && !(v <= d) {
				return false
			}
		}
	}
	return true
}

// isExtremum reports whether the DoG sample v = D_layer[p] is ≥ all 26 of
// its neighbours in scale space if v > 0, or ≤ all of them if not, with D_l
// = L_{l+1} − L_l computed from the Gaussian scales g (planes of plane
// samples, rows of w); with top, only the 17 of its own layer and the one
// below. Non-strict, as OpenCV: on a plateau every sample is a candidate
// and the duplicates that refine to the same point are removed later. The
// scan has checked v against its neighbours in the row (dogMask) and in
// the rows above and below (dogRefine); they are tested again, in a few
// instructions of the vector code, so that this is the whole test on its
// own. The vector code reads one sample further right, which must exist
// (the scan keeps imgBorder columns away from the edge).
func isExtremum(g []float32, plane, w, layer, p int, top bool) bool {
	if useAVX {
		last := layer + 2
		if top {
			last = layer + 1
		}
		_ = g[(layer-1)*plane+p-w-1]
		_ = g[last*plane+p+w+2]
		return isExtremumAVX(&g[layer*plane+p], plane, w, top)
	}
	return isExtremumGo(g, plane, w, layer, p, top)
}

// isExtremumGo is isExtremum in Go, testing the neighbours most likely to
// fail first.
func isExtremumGo(g []float32, plane, w, layer, p int, top bool) bool {
	// The layers' Gaussian planes L_{layer−1} … L_{layer+2}.
	l0 := g[(layer-1)*plane : layer*plane]
	l1 := g[layer*plane : (layer+1)*plane]
	l2 := g[(layer+1)*plane : (layer+2)*plane]
	l1, l2 = l1[:len(l0)], l2[:len(l0)]
	v := l2[p] - l1[p]
	// beats reports whether v beats (is ≥ if a maximum, ≤ if a minimum)
	// the three samples q−1, q, q+1 of the DoG layer hi − lo.
	beats := func(lo, hi []float32, q int) bool {
		a, b := lo[q-1:q+2], hi[q-1:q+2]
		d0, d1, d2 := b[0]-a[0], b[1]-a[1], b[2]-a[2]
		if v > 0 {
			return v >= d0 && v >= d1 && v >= d2
		}
		return v <= d0 && v <= d1 && v <= d2
	}
	below := beats(l1, l2, p-w) && beats(l1, l2, p+w) &&
		beats(l0, l1, p-w) && beats(l0, l1, p) && beats(l0, l1, p+w)
	if !below || top {
		return below
	}
	l3 := g[(layer+2)*plane : (layer+3)*plane][:len(l0)]
	return beats(l2, l3, p-w) && beats(l2, l3, p) && beats(l2, l3, p+w)
}

// topDoG sets d to the 3×3 samples of D_{S+1} = L_{S+2} − L_{S+1} around
// (r, c) in octave o, whose planes g hold L_0 … L_{S+1}.
//
// L_{S+2}, the octave's last and most blurred scale, is read only by the
// extremum test of the top layer S and the refinement of its samples:
// about 2,000 neighbourhoods an image where the plane has hundreds of
// thousands of samples. So it is never built; its samples here come from
// the blur's own sums in the blur's order — the horizontal pass of the
// 2r+4 rows around them (8 columns from c−1, with reflected columns near
// the edges), then the vertical pass of convSym4 — and equal the full
// plane's bit for bit (TestTopDoGMatchesPlane). Building that plane would
// cost far more than these neighbourhoods: its kernel is the widest of the
// octave, and it would be written to memory and read back once.
//
// The last neighbourhood is kept: refinement's first step asks again for
// the one the test just computed.
func (e *Extractor) topDoG(o int, g []float32, w, h, r, c int, d *[3][3]float32) {
	if e.top.ok && e.top.o == o && e.top.r == r && e.top.c == c {
		*d = e.top.d
		return
	}
	S := e.opt.ScalesPerOctave
	plane := w * h
	lt := g[(S+1)*plane : (S+2)*plane]
	k := e.kern[S+2]
	R := len(k) - 1
	nr := 2*R + 4 // rows r−1−R … r+2+R make rows r−1 … r+2
	// The vector code filters four rows at a time: the rows past nr, if
	// any, are filtered and not read.
	e.top.h = grow(e.top.h, 8*((nr+3)&^3))
	hrow := e.top.h
	x0 := c - 1
	if x0-R >= 0 && x0+7+R < w {
		rows := e.top.rows[:0]
		for t := range (nr + 3) &^ 3 {
			rows = append(rows, reflect101(r-1-R+t, h)*w+x0)
		}
		e.top.rows = rows
		convRows(hrow, lt, rows, k)
	} else {
		// Near the left or right edge, the three columns needed, with
		// the horizontal pass's reflected samples and its sums.
		for t := range nr {
			row := lt[reflect101(r-1-R+t, h)*w:][:w]
			for j := range 3 {
				x := x0 + j
				sum := k[0] * row[x]
				for i := 1; i <= R; i++ {
					sum += float32(k[i] * (row[reflect101(x-i, w)] + row[reflect101(x+i, w)]))
				}
				hrow[8*t+j] = sum
			}
		}
	}
	if len(e.top.vrows) != nr { // the rows of hrow, made once
		e.top.vrows = make([]int, nr)
		for t := range e.top.vrows {
			e.top.vrows[t] = 8 * t
		}
	}
	var v [32]float32
	convSym4(v[:], 8, 8, hrow, e.top.vrows, k)
	for j := range 3 {
		a := lt[(r-1+j)*w+x0:]
		d[j] = [3]float32{v[8*j] - a[0], v[8*j+1] - a[1], v[8*j+2] - a[2]}
	}
	e.top.ok, e.top.o, e.top.r, e.top.c, e.top.d = true, o, r, c, *d
}

// cvRound rounds half to even, as OpenCV's cvRound (the x87/SSE default).
func cvRound(x float32) int { return int(math.RoundToEven(float64(x))) }

// addExtremum refines the extremum at (layer, r, c) and, if it survives,
// appends one keypoint per dominant orientation.
//
// Refinement (Lowe §4, Brown & Lowe 2002): expanding D to second order about
// the sample, D(x) ≈ D + ∇Dᵀx + ½xᵀHx, the extremum is at x̂ = −H⁻¹∇D, with
// ∇D and H from central differences over (x, y, σ). If any |x̂ᵢ| ≥ ½ the true
// extremum is nearer another sample, so we move there and repeat, at most
// maxInterpSteps times. The contrast at the extremum is D(x̂) = D + ½∇Dᵀx̂.
//
// Edge test (Lowe §4.1): the 2×2 spatial Hessian of an edge has one large and
// one small principal curvature; with eigenvalue ratio r the quantity
// tr²/det = (r+1)²/r grows with r, so keep only tr²/det < (R+1)²/R, which
// also rejects saddles (det ≤ 0).
func (e *Extractor) addExtremum(o, layer, r, c int, g []float32, w, h int) {
	S := e.opt.ScalesPerOctave
	plane := w * h
	var xi, xr, xc float32
	var n cube
	step := 0
	for ; step < maxInterpSteps; step++ {
		if layer < S {
			n.load(g, plane, w, layer, r*w+c, 3)
		} else {
			n.load(g, plane, w, layer, r*w+c, 2)
			e.topDoG(o, g, w, h, r, c, &n[2])
		}
		dx, dy, ds := n.gradient()
		dxx, dyy, dss, dxy, dxs, dys := n.hessian()

		sx, sy, ss := solve3(dxx, dxy, dxs, dyy, dys, dss, dx, dy, ds)
		xc, xr, xi = -sx, -sy, -ss
		if abs32(xi) < 0.5 && abs32(xr) < 0.5 && abs32(xc) < 0.5 {
			break
		}
		const far = float32(math.MaxInt32 / 3)
		if !(abs32(xi) <= far && abs32(xr) <= far && abs32(xc) <= far) {
			return // diverging (or NaN): no extremum nearby
		}
		c += cvRound(xc)
		r += cvRound(xr)
		layer += cvRound(xi)
		if layer < 1 || layer > S ||
			c < imgBorder || c >= w-imgBorder ||
			r < imgBorder || r >= h-imgBorder {
			return
		}
	}
	if step >= maxInterpSteps {
		return
	}

	// n still holds the neighbourhood of the final sample.
	dx, dy, ds := n.gradient()
	contr := n[1][1][1] + (dx*xc+dy*xr+ds*xi)*0.5
	// Negated comparisons so that NaNs (from NaN pixels) reject too.
	if !(abs32(contr)*float32(S) >= float32(e.opt.ContrastThreshold)) {
		return
	}
	dxx, dyy, _, dxy, _, _ := n.hessian()
	tr := dxx + dyy
	det := dxx*dyy - dxy*dxy
	et := float32(e.opt.EdgeThreshold)
	if !(det > 0 && tr*tr*et < (et+1)*(et+1)*det) {
		return
	}

	k := kpoint{
		x:        float32(c) + xc,
		y:        float32(r) + xr,
		sigma:    float32(e.opt.Sigma * math.Exp2((float64(layer)+float64(xi))/float64(S))),
		response: abs32(contr),
		octave:   int32(o),
		layer:    int32(layer),
	}
	gl := g[layer*plane : (layer+1)*plane]
	e.orient(gl, w, h, r, c, k)
}

// cube is the 3×3×3 DoG neighbourhood of a sample, [layer][row][column].
type cube [3][3][3]float32

// load fills the first `layers` layers of n around sample p of DoG layer
// `layer`, from the Gaussian scales g (D_i = L_{i+1} − L_i).
func (n *cube) load(g []float32, plane, w, layer, p, layers int) {
	for l := range layers {
		lo := g[(layer-1+l)*plane : (layer+l)*plane]
		hi := g[(layer+l)*plane : (layer+1+l)*plane]
		hi = hi[:len(lo)]
		for dr := 0; dr < 3; dr++ {
			q := p + (dr-1)*w
			a := lo[q-1 : q+2]
			b := hi[q-1 : q+2]
			n[l][dr] = [3]float32{b[0] - a[0], b[1] - a[1], b[2] - a[2]}
		}
	}
}

// gradient returns ∇D at the centre by central differences.
func (n *cube) gradient() (dx, dy, ds float32) {
	dx = (n[1][1][2] - n[1][1][0]) * 0.5
	dy = (n[1][2][1] - n[1][0][1]) * 0.5
	ds = (n[2][1][1] - n[0][1][1]) * 0.5
	return
}

// hessian returns the second derivatives of D at the centre.
func (n *cube) hessian() (dxx, dyy, dss, dxy, dxs, dys float32) {
	v2 := n[1][1][1] * 2
	dxx = n[1][1][2] + n[1][1][0] - v2
	dyy = n[1][2][1] + n[1][0][1] - v2
	dss = n[2][1][1] + n[0][1][1] - v2
	dxy = (n[1][2][2] - n[1][2][0] - n[1][0][2] + n[1][0][0]) * 0.25
	dxs = (n[2][1][2] - n[2][1][0] - n[0][1][2] + n[0][1][0]) * 0.25
	dys = (n[2][2][1] - n[2][0][1] - n[0][2][1] + n[0][0][1]) * 0.25
	return
}

// solve3 solves the symmetric system [a b c; b d f; c f i]·x = (u, v, s).
// A singular Hessian gives x = 0, as OpenCV's Matx::solve returns zeros on
// failure: the sample itself is then taken as the extremum.
func solve3(a, b, c, d, f, i, u, v, s float32) (x, y, z float32) {
	A, B, C := float64(a), float64(b), float64(c)
	D, F, I := float64(d), float64(f), float64(i)
	U, V, W := float64(u), float64(v), float64(s)
	// Cofactors of the symmetric matrix.
	c00 := D*I - F*F
	c01 := C*F - B*I
	c02 := B*F - C*D
	det := A*c00 + B*c01 + C*c02
	if det == 0 {
		return 0, 0, 0
	}
	c11 := A*I - C*C
	c12 := B*C - A*F
	c22 := A*D - B*B
	inv := 1 / det
	x = float32((c00*U + c01*V + c02*W) * inv)
	y = float32((c01*U + c11*V + c12*W) * inv)
	z = float32((c02*U + c12*V + c22*W) * inv)
	return x, y, z
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// oriScratch holds the orientation histogram buffers.
type oriScratch struct {
	raw  [oriHistBins + 4]float32 // two wrap-around bins on each side
	hist [oriHistBins]float32
	wt   []float32
	// The window's rows' and columns' Gaussian weights.
	wy, wx []float32
	// The window's samples: gradient, weight, magnitude, angle.
	dx, dy, w, mag, ang []float32
}

// orient builds the gradient orientation histogram around (r, c) in the
// Gaussian scale gl closest to the keypoint's σ and appends k once per
// dominant orientation (Lowe §5).
//
// Each sample within a radius of 3·(1.5σ) adds its gradient magnitude,
// weighted by a Gaussian of σ_w = 1.5σ, to one of 36 bins (10° each); the
// histogram is then smoothed circularly with the kernel [1 4 6 4 1]/16. Every
// local peak within 80% of the highest one becomes a keypoint, its angle
// refined by fitting a parabola through the peak and its two neighbours.
//
// Angles follow OpenCV: histogram angles are measured with y pointing up
// (dy = L(y−1) − L(y+1)), and KeyPoint.angle = 360° − that, which is the same
// direction measured in image coordinates (y down).
func (e *Extractor) orient(gl []float32, w, h, r, c int, k kpoint) {
	const n = oriHistBins
	scl := k.sigma
	radius := cvRound(oriRadius * scl)
	sigw := oriSigFactor * scl
	expScale := -1 / (2 * sigw * sigw)

	// exp(−(i²+j²)/(2σ_w²)) = exp(−i²/2σ_w²)·exp(−j²/2σ_w²): one table.
	s := &e.ori
	if cap(s.wt) < radius+1 {
		s.wt = make([]float32, radius+1)
	}
	wt := s.wt[:radius+1]
	for t := range wt {
		wt[t] = float32(math.Exp(float64(float32(t*t) * expScale)))
	}

	// Gather the window's gradients, compute their magnitudes and angles
	// at once (vectorised), then bin them.
	y0, y1 := max(r-radius, 1), min(r+radius, h-2)
	x0, x1 := max(c-radius, 1), min(c+radius, w-2)
	ns := max(0, (y1-y0+1)*(x1-x0+1))
	for _, b := range []*[]float32{&s.dx, &s.dy, &s.w, &s.mag, &s.ang} {
		*b = grow(*b, ns)
	}
	dxs, dys, ws := s.dx, s.dy, s.w
	if m, rows := x1-x0+1, y1-y0+1; m > 0 && rows > 0 {
		s.wy, s.wx = grow(s.wy, rows), grow(s.wx, m)
		for t := range s.wy {
			s.wy[t] = wt[absInt(y0+t-r)]
		}
		for t := range s.wx {
			s.wx[t] = wt[absInt(x0+t-c)]
		}
		// As the descriptor: the first rows are asked for ahead, and
		// orientRows asks for each some rows below the one it works on.
		for t := -1; t < prefetchRows; t++ {
			if y := y0 + t; useAVX && y < h {
				prefetch(&gl[y*w+x0-1], m+2)
			}
		}
		orientRows(gl, y0*w+x0, w, m, s.wy, s.wx, dxs[:ns], dys[:ns], ws[:ns])
	}
	gradPolar(dxs, dys, s.mag, s.ang)

	raw := s.raw[:]
	clear(raw)
	tmp := raw[2 : 2+n]
	ang := s.ang[:len(ws)]
	for i, m := range s.mag[:len(ws)] {
		bin := cvRound(float32(n) / 360 * ang[i])
		if bin >= n {
			bin -= n
		}
		if bin < 0 {
			bin += n
		}
		tmp[bin] += ws[i] * m
	}

	raw[1] = raw[n+1]
	raw[0] = raw[n]
	raw[n+2] = raw[2]
	raw[n+3] = raw[3]
	hist := s.hist[:]
	var omax float32
	for i := 0; i < n; i++ {
		t := raw[i : i+5]
		hist[i] = (t[0]+t[4])*(1.0/16) + (t[1]+t[3])*(4.0/16) + t[2]*(6.0/16)
		if i == 0 || hist[i] > omax {
			omax = hist[i]
		}
	}

	magThr := omax * oriPeakRatio
	for j := 0; j < n; j++ {
		l := j - 1
		if l < 0 {
			l = n - 1
		}
		rr := j + 1
		if rr == n {
			rr = 0
		}
		hj, hl, hr := hist[j], hist[l], hist[rr]
		if hj > hl && hj > hr && hj >= magThr {
			// Vertex of the parabola through (−1, hl), (0, hj), (1, hr).
			bin := float32(j) + 0.5*(hl-hr)/(hl-2*hj+hr)
			if bin < 0 {
				bin += n
			} else if bin >= n {
				bin -= n
			}
			a := 360 - (360.0/n)*bin
			if abs32(a-360) < flt32Epsilon {
				a = 0
			}
			k.angle = a
			e.kps = append(e.kps, k)
		}
	}
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// orientRows gathers the orientation window: for the rows t of len(wy)
// and the columns x of len(wx) = m, with p = c + t·w the offset in g of
// sample (t, x = 0),
//
//	dx[t·m+x] = g[p+x+1] − g[p+x−1],  dy[t·m+x] = g[p+x−w] − g[p+x+w],
//	wts[t·m+x] = wy[t]·wx[x].
func orientRows(g []float32, c, w, m int, wy, wx, dx, dy, wts []float32) {
	rows := len(wy)
	n := rows * m
	if len(wx) != m || len(dx) < n || len(dy) < n || len(wts) < n {
		panic("sift: orientRows: buffers do not match the window")
	}
	if c-w-1 < 0 || c+(rows-1)*w+w+m >= len(g) {
		panic("sift: orientRows: window outside the plane")
	}
	if useAVX && m >= 8 {
		orientRowsAVX(&g[c], w, m, rows, &wy[0], &wx[0], &dx[0], &dy[0], &wts[0])
		return
	}
	for t, y := range wy {
		p := c + t*w
		row, up, dn := g[p-1:p+m+1], g[p-w:p-w+m], g[p+w:p+w+m]
		o := t * m
		for x, v := range wx {
			dx[o+x] = row[x+2] - row[x]
			dy[o+x] = up[x] - dn[x]
			wts[o+x] = y * v
		}
	}
}

// gradPolar sets mag[i] = |(dx[i], dy[i])| and ang[i] = fastAtan2(dy[i],
// dx[i]) for every i < len(dx), eight at a time where the CPU allows,
// always with the results of gradPolarGo.
func gradPolar(dx, dy, mag, ang []float32) {
	n := len(dx)
	dy, mag, ang = dy[:n], mag[:n], ang[:n]
	m := 0
	if useAVX {
		m = n &^ 7
		if m > 0 {
			gradPolarAVX(&dx[0], &dy[0], &mag[0], &ang[0], m)
		}
	}
	gradPolarGo(dx[m:], dy[m:], mag[m:], ang[m:])
}

func gradPolarGo(dx, dy, mag, ang []float32) {
	dy, mag, ang = dy[:len(dx)], mag[:len(dx)], ang[:len(dx)]
	for i, x := range dx {
		y := dy[i]
		mag[i] = float32(math.Sqrt(float64(float32(x*x) + float32(y*y))))
		ang[i] = fastAtan2(y, x)
	}
}

// fastAtan2 is OpenCV's polynomial atan2 in degrees, [0, 360], accurate to
// about 0.01°: a 7th-order minimax fit of atan on [0, 1], extended to the
// other octants by symmetry. (The octant branches are well predicted: the
// gradients around a keypoint are spatially coherent.)
func fastAtan2(y, x float32) float32 {
	const (
		p1  = float32(0.9997878412794807 * 180 / math.Pi)
		p3  = float32(-0.3258083974640975 * 180 / math.Pi)
		p5  = float32(0.1555786518463281 * 180 / math.Pi)
		p7  = float32(-0.04432655554792128 * 180 / math.Pi)
		eps = float32(2.220446049250313e-16) // (float)DBL_EPSILON, avoids 0/0
	)
	ax, ay := abs32(x), abs32(y)
	var a float32
	if ax >= ay {
		c := ay / (ax + eps)
		c2 := c * c
		a = (((p7*c2+p5)*c2+p3)*c2 + p1) * c
	} else {
		c := ax / (ay + eps)
		c2 := c * c
		a = 90 - (((p7*c2+p5)*c2+p3)*c2+p1)*c
	}
	if x < 0 {
		a = 180 - a
	}
	if y < 0 {
		a = 360 - a
	}
	return a
}
