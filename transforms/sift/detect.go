package sift

import "math"

// detectOctave finds the keypoints of octave o, given its Gaussian scales g
// and DoG layers dog (w×h planes), and appends them to e.kps.
func (e *Extractor) detectOctave(o int, g, dog []float32, w, h int) {
	S := e.opt.ScalesPerOctave
	plane := w * h
	if w < 2*imgBorder+1 || h < 2*imgBorder+1 {
		return
	}
	// Pre-filter: an extremum with |D| at most half the final contrast
	// threshold cannot plausibly interpolate to above it, so it is not worth
	// refining (OpenCV floors this to whole grey levels; we keep it exact).
	thr := float32(0.5 * e.opt.ContrastThreshold / float64(S))
	for i := 1; i <= S; i++ {
		prev := dog[(i-1)*plane : i*plane]
		cur := dog[i*plane : (i+1)*plane]
		next := dog[(i+1)*plane : (i+2)*plane]
		for r := imgBorder; r < h-imgBorder; r++ {
			for c := imgBorder; c < w-imgBorder; c++ {
				p := r*w + c
				v := cur[p]
				switch {
				case v > thr:
					if !isMax(v, prev, cur, next, p, w) {
						continue
					}
				case v < -thr:
					if !isMin(v, prev, cur, next, p, w) {
						continue
					}
				default:
					continue
				}
				e.addExtremum(o, i, r, c, g, dog, w, h)
			}
		}
	}
}

// isMax reports whether v = cur[p] is ≥ all 26 neighbours in scale space.
// Non-strict, as OpenCV: on a plateau every sample is a candidate and the
// duplicates that refine to the same point are removed later.
func isMax(v float32, prev, cur, next []float32, p, w int) bool {
	a, b := p-w, p+w
	if v < cur[p-1] || v < cur[p+1] ||
		v < cur[a-1] || v < cur[a] || v < cur[a+1] ||
		v < cur[b-1] || v < cur[b] || v < cur[b+1] {
		return false
	}
	for _, s := range [2][]float32{prev, next} {
		if v < s[p-1] || v < s[p] || v < s[p+1] ||
			v < s[a-1] || v < s[a] || v < s[a+1] ||
			v < s[b-1] || v < s[b] || v < s[b+1] {
			return false
		}
	}
	return true
}

// isMin is isMax for minima.
func isMin(v float32, prev, cur, next []float32, p, w int) bool {
	a, b := p-w, p+w
	if v > cur[p-1] || v > cur[p+1] ||
		v > cur[a-1] || v > cur[a] || v > cur[a+1] ||
		v > cur[b-1] || v > cur[b] || v > cur[b+1] {
		return false
	}
	for _, s := range [2][]float32{prev, next} {
		if v > s[p-1] || v > s[p] || v > s[p+1] ||
			v > s[a-1] || v > s[a] || v > s[a+1] ||
			v > s[b-1] || v > s[b] || v > s[b+1] {
			return false
		}
	}
	return true
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
func (e *Extractor) addExtremum(o, layer, r, c int, g, dog []float32, w, h int) {
	S := e.opt.ScalesPerOctave
	plane := w * h
	var xi, xr, xc float32
	step := 0
	for ; step < maxInterpSteps; step++ {
		cur := dog[layer*plane : (layer+1)*plane]
		prev := dog[(layer-1)*plane : layer*plane]
		next := dog[(layer+1)*plane : (layer+2)*plane]
		p := r*w + c
		dx := (cur[p+1] - cur[p-1]) * 0.5
		dy := (cur[p+w] - cur[p-w]) * 0.5
		ds := (next[p] - prev[p]) * 0.5
		v2 := cur[p] * 2
		dxx := cur[p+1] + cur[p-1] - v2
		dyy := cur[p+w] + cur[p-w] - v2
		dss := next[p] + prev[p] - v2
		dxy := (cur[p+w+1] - cur[p+w-1] - cur[p-w+1] + cur[p-w-1]) * 0.25
		dxs := (next[p+1] - next[p-1] - prev[p+1] + prev[p-1]) * 0.25
		dys := (next[p+w] - next[p-w] - prev[p+w] + prev[p-w]) * 0.25

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

	cur := dog[layer*plane : (layer+1)*plane]
	prev := dog[(layer-1)*plane : layer*plane]
	next := dog[(layer+1)*plane : (layer+2)*plane]
	p := r*w + c
	dx := (cur[p+1] - cur[p-1]) * 0.5
	dy := (cur[p+w] - cur[p-w]) * 0.5
	ds := (next[p] - prev[p]) * 0.5
	contr := cur[p] + (dx*xc+dy*xr+ds*xi)*0.5
	// Negated comparisons so that NaNs (from NaN pixels) reject too.
	if !(abs32(contr)*float32(S) >= float32(e.opt.ContrastThreshold)) {
		return
	}
	v2 := cur[p] * 2
	dxx := cur[p+1] + cur[p-1] - v2
	dyy := cur[p+w] + cur[p-w] - v2
	dxy := (cur[p+w+1] - cur[p+w-1] - cur[p-w+1] + cur[p-w-1]) * 0.25
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

	raw := s.raw[:]
	clear(raw)
	tmp := raw[2 : 2+n]
	y0, y1 := max(r-radius, 1), min(r+radius, h-2)
	x0, x1 := max(c-radius, 1), min(c+radius, w-2)
	for y := y0; y <= y1; y++ {
		wy := wt[absInt(y-r)]
		row := gl[y*w : y*w+w]
		up := gl[(y-1)*w : (y-1)*w+w]
		dn := gl[(y+1)*w : (y+1)*w+w]
		for x := x0; x <= x1; x++ {
			dx := row[x+1] - row[x-1]
			dy := up[x] - dn[x]
			mag := float32(math.Sqrt(float64(dx*dx + dy*dy)))
			ori := fastAtan2(dy, dx)
			bin := cvRound(float32(n) / 360 * ori)
			if bin >= n {
				bin -= n
			}
			if bin < 0 {
				bin += n
			}
			tmp[bin] += wy * wt[absInt(x-c)] * mag
		}
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

// fastAtan2 is OpenCV's polynomial atan2 in degrees, [0, 360), accurate to
// about 0.01°: a 7th-order minimax fit of atan on [0, 1], extended to the
// other octants by symmetry.
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
