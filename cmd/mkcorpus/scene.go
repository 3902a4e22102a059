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
		for x := xa; x <= xb; x++ {
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
			k := 3 * (y*f.w + x)
			for c := range 3 {
				f.pix[k+c] += al * (col[c]*s - f.pix[k+c])
			}
		}
	}
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
	tmp := make([]float32, len(f.pix))
	for y := range f.h {
		row := f.pix[3*y*f.w : 3*(y+1)*f.w]
		out := tmp[3*y*f.w : 3*(y+1)*f.w]
		for x := range f.w {
			var s0, s1, s2 float32
			for i, kv := range kern {
				xx := min(max(x+i-rad, 0), f.w-1)
				s0 += kv * row[3*xx]
				s1 += kv * row[3*xx+1]
				s2 += kv * row[3*xx+2]
			}
			out[3*x], out[3*x+1], out[3*x+2] = s0, s1, s2
		}
	}
	for y := range f.h {
		for x := range f.w {
			var s0, s1, s2 float32
			for i, kv := range kern {
				yy := min(max(y+i-rad, 0), f.h-1)
				k := 3 * (yy*f.w + x)
				s0 += kv * tmp[k]
				s1 += kv * tmp[k+1]
				s2 += kv * tmp[k+2]
			}
			k := 3 * (y*f.w + x)
			f.pix[k], f.pix[k+1], f.pix[k+2] = s0, s1, s2
		}
	}
}
