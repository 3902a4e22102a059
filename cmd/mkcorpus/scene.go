package main

import (
	"math"
	"math/rand/v2"
)

// background paints a procedural scene: a lit gradient under a "dead
// leaves" layer of overlapping ellipses and rectangles whose sizes follow a
// power law (density ∝ r⁻³, the model whose occlusions reproduce the
// scale-free statistics of natural images), then a fractal texture.
//
// The scene is made of nothing but these primitives on purpose: its SIFT
// descriptors are clutter that every label shares, as the clutter around
// the subject of a real photo is, rather than features of another labelled
// object (ETH-80 photos as clutter would put another category's cow into a
// photo labelled apple). The second object of a two-object photo is the
// only labelled content besides the main one, and the labels CSV names it.
func background(f *frame, r *rand.Rand) {
	// A palette per scene, so that a scene has a colour scheme rather
	// than confetti: a few base colours, each leaf a jittered one of them.
	var pal [5][3]float32
	for k := range pal {
		l := 40 + 170*r.Float64()
		for c := range 3 {
			pal[k][c] = float32(min(max(l+60*r.NormFloat64(), 0), 255))
		}
	}
	gradient(f, r, pal[0], pal[1])
	short := float64(min(f.w, f.h))
	rmin, rmax := 2.0, 0.3*short
	n := (1100 + r.IntN(1600)) * f.w * f.h / (640 * 480)
	for range n {
		// Inverse CDF of p(r) ∝ r⁻³ on [rmin, rmax].
		u := r.Float64()
		rad := 1 / math.Sqrt(1/(rmin*rmin)-u*(1/(rmin*rmin)-1/(rmax*rmax)))
		var col [3]float32
		base := pal[r.IntN(len(pal))]
		jit := float32(r.NormFloat64() * 25)
		for c := range 3 {
			col[c] = base[c] + jit + float32(r.NormFloat64()*12)
		}
		cx, cy := r.Float64()*float64(f.w), r.Float64()*float64(f.h)
		ecc := math.Exp(r.NormFloat64() * 0.5)
		leaf(f, r.IntN(3) == 0, cx, cy, rad*ecc, rad/ecc, r.Float64()*math.Pi, col, float32(r.NormFloat64()*0.3))
	}
	texture(f, r, float32(4+14*r.Float64()))
}

// gradient fills f with a linear ramp from a to b in a random direction,
// like light falling off across a wall.
func gradient(f *frame, r *rand.Rand, a, b [3]float32) {
	th := r.Float64() * 2 * math.Pi
	dx, dy := float32(math.Cos(th)), float32(math.Sin(th))
	span := float32(math.Abs(float64(dx))*float64(f.w) + math.Abs(float64(dy))*float64(f.h))
	off := float32(0)
	if dx < 0 {
		off -= dx * float32(f.w)
	}
	if dy < 0 {
		off -= dy * float32(f.h)
	}
	for y := range f.h {
		for x := range f.w {
			t := (dx*float32(x) + dy*float32(y) + off) / span
			k := 3 * (y*f.w + x)
			for c := range 3 {
				f.pix[k+c] = a[c] + t*(b[c]-a[c])
			}
		}
	}
}

// leaf paints one ellipse (or rectangle) of semi-axes rx, ry turned by
// theta, anti-aliased over about a pixel so that its edge is an edge, not a
// staircase of corners; shade tilts its colour across it.
func leaf(f *frame, rect bool, cx, cy, rx, ry, theta float64, col [3]float32, shade float32) {
	paintLeaf(f, rect, cx, cy, rx, ry, theta, col, shade, leafSpan)
}

// leafSpanFunc is the signature of leafSpan.
type leafSpanFunc func(rect bool, dv, rx, ry, cos, sin float64) (lo, hi float64, ok bool)

// paintLeaf is leaf, testing the pixels of each row's span only.
func paintLeaf(f *frame, rect bool, cx, cy, rx, ry, theta float64, col [3]float32, shade float32, span leafSpanFunc) {
	ext := math.Max(rx, ry) + 1
	xa, xb := max(int(cx-ext), 0), min(int(cx+ext)+1, f.w-1)
	ya, yb := max(int(cy-ext), 0), min(int(cy+ext)+1, f.h-1)
	cos, sin := math.Cos(theta), math.Sin(theta)
	rmin := math.Min(rx, ry)
	irx2, iry2 := 1/(rx*rx), 1/(ry*ry)
	// Normalised radii beyond which a pixel is outside (d ≥ 0.5) or fully
	// inside (d ≤ −0.5).
	out2 := (1 + 0.5/rmin) * (1 + 0.5/rmin)
	in2 := max(1-0.5/rmin, 0) * max(1-0.5/rmin, 0)
	for y := ya; y <= yb; y++ {
		lo, hi, ok := span(rect, float64(y)-cy, rx, ry, cos, sin)
		if !ok {
			continue
		}
		row := f.pix[3*y*f.w : 3*(y+1)*f.w]
		for x := max(xa, int(math.Floor(max(cx+lo, float64(xa))))); x <= min(xb, int(math.Ceil(min(cx+hi, float64(xb))))); x++ {
			du, dv := float64(x)-cx, float64(y)-cy
			a, b := cos*du+sin*dv, -sin*du+cos*dv
			// d: a signed distance to the edge in pixels, negative inside.
			var d float64
			if rect {
				d = math.Max(math.Abs(a)-rx, math.Abs(b)-ry)
			} else {
				// The square root only on the anti-aliased rim.
				q2 := a*a*irx2 + b*b*iry2
				switch {
				case q2 >= out2:
					continue
				case q2 <= in2:
					d = -1
				default:
					d = (math.Sqrt(q2) - 1) * rmin
				}
			}
			if d >= 0.5 {
				continue
			}
			al := float32(math.Min(0.5-d, 1))
			s := 1 + shade*float32(a/(rx+1))
			p := row[3*x : 3*x+3 : 3*x+3]
			for c := range 3 {
				p[c] += al * (col[c]*s - p[c])
			}
		}
	}
}

// leafSpan bounds the offsets du = x − cx at which row offset dv meets a
// leaf (ok false: none does), the pixels leaf may paint. It is generous by
// half a pixel of radius and a pixel at each end, so that rounding in the
// span never drops a pixel that leaf's own test would paint: leaf decides
// every pixel inside the span exactly as it would without one.
func leafSpan(rect bool, dv, rx, ry, cos, sin float64) (lo, hi float64, ok bool) {
	const pad = 1
	if rect {
		// |cos·du + sin·dv| < rx+½ and |−sin·du + cos·dv| < ry+½, each
		// a slab of du unless its coefficient vanishes.
		lo, hi = math.Inf(-1), math.Inf(1)
		slab := func(c, off, r float64) {
			if math.Abs(c) < 1e-9 {
				if math.Abs(off) > r {
					lo, hi = 1, -1
				}
				return
			}
			a, b := (-r-off)/c, (r-off)/c
			lo, hi = max(lo, min(a, b)), min(hi, max(a, b))
		}
		slab(cos, sin*dv, rx+1)
		slab(-sin, cos*dv, ry+1)
		return lo - pad, hi + pad, lo <= hi
	}
	// q(du) = ((cos·du + sin·dv)/rx)² + ((−sin·du + cos·dv)/ry)² is the
	// quadratic A·du² + B·du + C; leaf paints only where q < (1+½/rmin)²,
	// inside q < (1+1/rmin)².
	irx2, iry2 := 1/(rx*rx), 1/(ry*ry)
	a := cos*cos*irx2 + sin*sin*iry2
	b := 2 * dv * cos * sin * (irx2 - iry2)
	e := 1 + 1/math.Min(rx, ry)
	c := dv*dv*(sin*sin*irx2+cos*cos*iry2) - e*e
	disc := b*b - 4*a*c
	if disc < 0 {
		return 0, 0, false
	}
	sq := math.Sqrt(disc)
	return (-b-sq)/(2*a) - pad, (-b+sq)/(2*a) + pad, true
}

// texture adds fractal value noise of amplitude amp to the brightness:
// surfaces in photos are grainy at every scale, and flat regions would
// carry no descriptors at all.
func texture(f *frame, r *rand.Rand, amp float32) {
	add := make([]float32, f.w*f.h)
	for _, cell := range []int{48, 12, 3} {
		gw, gh := f.w/cell+2, f.h/cell+2
		g := make([]float32, gw*gh)
		for k := range g {
			g[k] = float32(r.Float64()*2 - 1)
		}
		a := amp * float32(cell) / 48
		a = max(a, amp*0.3)
		// Smoothstep weights per column and row, computed once.
		step := func(n int) ([]int, []float32) {
			idx, w := make([]int, n), make([]float32, n)
			for x := range n {
				t := float32(x%cell) / float32(cell)
				idx[x], w[x] = x/cell, t*t*(3-2*t)
			}
			return idx, w
		}
		gx, tx := step(f.w)
		gy, ty := step(f.h)
		for y := range f.h {
			r0, r1 := g[gy[y]*gw:], g[(gy[y]+1)*gw:]
			row := add[y*f.w : (y+1)*f.w]
			wy := ty[y]
			for x := range row {
				k := gx[x]
				top := r0[k] + tx[x]*(r0[k+1]-r0[k])
				bot := r1[k] + tx[x]*(r1[k+1]-r1[k])
				row[x] += a * (top + wy*(bot-top))
			}
		}
	}
	for k, v := range add {
		f.pix[3*k] += v
		f.pix[3*k+1] += v
		f.pix[3*k+2] += v
	}
}

// camera is what the lens and sensor do to the whole frame: focus (blur or
// an unsharp mask), vignetting, exposure and white balance, sensor noise.
func camera(f *frame, r *rand.Rand) {
	switch u := r.Float64(); {
	case u < 0.3:
		f.blur(0.5 + 0.9*r.Float64())
	case u < 0.55:
		orig := append([]float32(nil), f.pix...)
		f.blur(1)
		amt := float32(0.3 + 0.7*r.Float64())
		for k, v := range orig {
			f.pix[k] = v + amt*(v-f.pix[k])
		}
	}
	gamma := math.Exp(r.NormFloat64() * 0.12)
	var gain [3]float64
	for c := range gain {
		gain[c] = math.Exp(r.NormFloat64() * 0.05)
	}
	vig := 0.0
	if r.Float64() < 0.4 {
		vig = 0.15 + 0.3*r.Float64()
	}
	// A table per channel: gamma per pixel would cost more than the rest
	// of the frame; the table's 1/4-level steps are below JPEG's.
	var lut [3][1024]float32
	for c := range 3 {
		for i := range lut[c] {
			lut[c][i] = float32(255 * math.Pow(float64(i)/1023, gamma) * gain[c])
		}
	}
	sigma := 1 + 4*r.Float64()
	cx, cy := float32(f.w)/2, float32(f.h)/2
	rr := 1 / (cx*cx + cy*cy)
	for y := range f.h {
		for x := range f.w {
			k := 3 * (y*f.w + x)
			dx, dy := float32(x)-cx, float32(y)-cy
			v := 1 - float32(vig)*(dx*dx+dy*dy)*rr
			luma := float32(r.NormFloat64() * sigma)
			for c := range 3 {
				i := int(clamp255(f.pix[k+c])*(1023.0/255) + 0.5)
				f.pix[k+c] = lut[c][i]*v + luma
			}
		}
	}
}

// blur is a separable Gaussian of standard deviation sigma, edges clamped.
func (f *frame) blur(sigma float64) {
	kern := gaussKernel(sigma)
	rad := len(kern) / 2
	tmp := make([]float32, len(f.pix))
	for y := range f.h {
		row := f.pix[3*y*f.w : 3*(y+1)*f.w]
		out := tmp[3*y*f.w : 3*(y+1)*f.w]
		for x := range f.w {
			var s0, s1, s2 float32
			if x >= rad && x+rad < f.w {
				// Inside: no clamping, the same sums in the same order.
				win := row[3*(x-rad) : 3*(x+rad+1)]
				for i, kv := range kern {
					p := win[3*i : 3*i+3 : 3*i+3]
					s0 += kv * p[0]
					s1 += kv * p[1]
					s2 += kv * p[2]
				}
			} else {
				for i, kv := range kern {
					xx := min(max(x+i-rad, 0), f.w-1)
					s0 += kv * row[3*xx]
					s1 += kv * row[3*xx+1]
					s2 += kv * row[3*xx+2]
				}
			}
			out[3*x], out[3*x+1], out[3*x+2] = s0, s1, s2
		}
	}
	// Vertically a row at a time: each output value sums its column's
	// taps in kernel order from zero, as a per-pixel loop would, while
	// every pass reads and writes whole rows.
	n := 3 * f.w
	for y := range f.h {
		dst := f.pix[y*n : (y+1)*n]
		clear(dst)
		for i, kv := range kern {
			yy := min(max(y+i-rad, 0), f.h-1)
			src := tmp[yy*n : (yy+1)*n]
			src = src[:len(dst)]
			for k, v := range src {
				dst[k] += kv * v
			}
		}
	}
}

// gaussKernel is a Gaussian of standard deviation sigma over ±⌈3σ⌉ taps,
// summing to one.
func gaussKernel(sigma float64) []float32 {
	rad := int(math.Ceil(3 * sigma))
	kern := make([]float32, 2*rad+1)
	var sum float32
	for i := range kern {
		d := float64(i - rad)
		kern[i] = float32(math.Exp(-d * d / (2 * sigma * sigma)))
		sum += kern[i]
	}
	for i := range kern {
		kern[i] /= sum
	}
	return kern
}
