package main

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The fast paths of leaf, blur and sample must draw exactly the pixels of
// the plain loops below (a corpus's bytes are a function of its settings):
// each test compares them bit for bit on random input.

// wholeBox is a span that keeps the leaf's whole bounding box.
func wholeBox(bool, float64, float64, float64, float64, float64) (lo, hi float64, ok bool) {
	return math.Inf(-1), math.Inf(1), true
}

func randomFrame(r *rand.Rand, w, h int) *frame {
	f := newFrame(w, h)
	for k := range f.pix {
		f.pix[k] = float32(r.Float64() * 255)
	}
	return f
}

func sameFrames(t *testing.T, what string, got, want *frame) {
	t.Helper()
	for k := range want.pix {
		if math.Float32bits(got.pix[k]) != math.Float32bits(want.pix[k]) {
			t.Fatalf("%s: value %d (pixel %d,%d) is %v, want %v", what, k, k/3%want.w, k/3/want.w, got.pix[k], want.pix[k])
		}
	}
}

// TestLeafSpan: leaf paints the pixels that testing every pixel of the
// bounding box paints, for ellipses and rectangles of every size, eccentricity and
// angle (the axis-aligned ones, where a slab's coefficient vanishes,
// included), at the frame's edges too.
func TestLeafSpan(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const w, h = 120, 90
	for n := range 3000 {
		rect := n%3 == 0
		rad := 0.3 + 60*r.Float64()*r.Float64()
		ecc := math.Exp(r.NormFloat64() * 0.8)
		theta := r.Float64() * math.Pi
		switch n % 5 {
		case 1:
			theta = 0
		case 2:
			theta = math.Pi / 2
		}
		cx, cy := r.Float64()*1.4*w-0.2*w, r.Float64()*1.4*h-0.2*h
		col := [3]float32{float32(r.Float64() * 255), float32(r.Float64() * 255), float32(r.Float64() * 255)}
		shade := float32(r.NormFloat64() * 0.3)
		got := randomFrame(rand.New(rand.NewPCG(uint64(n), 1)), w, h)
		want := randomFrame(rand.New(rand.NewPCG(uint64(n), 1)), w, h)
		leaf(got, rect, cx, cy, rad*ecc, rad/ecc, theta, col, shade)
		paintLeaf(want, rect, cx, cy, rad*ecc, rad/ecc, theta, col, shade, wholeBox)
		sameFrames(t, "leaf", got, want)
	}
}

// blurScan is blur as one clamped loop per pixel and pass.
func blurScan(f *frame, sigma float64) {
	kern := gaussKernel(sigma)
	rad := len(kern) / 2
	tmp := make([]float32, len(f.pix))
	for y := range f.h {
		for x := range f.w {
			var s0, s1, s2 float32
			for i, kv := range kern {
				k := 3 * (y*f.w + min(max(x+i-rad, 0), f.w-1))
				s0 += kv * f.pix[k]
				s1 += kv * f.pix[k+1]
				s2 += kv * f.pix[k+2]
			}
			k := 3 * (y*f.w + x)
			tmp[k], tmp[k+1], tmp[k+2] = s0, s1, s2
		}
	}
	for y := range f.h {
		for x := range f.w {
			var s0, s1, s2 float32
			for i, kv := range kern {
				k := 3 * (min(max(y+i-rad, 0), f.h-1)*f.w + x)
				s0 += kv * tmp[k]
				s1 += kv * tmp[k+1]
				s2 += kv * tmp[k+2]
			}
			k := 3 * (y*f.w + x)
			f.pix[k], f.pix[k+1], f.pix[k+2] = s0, s1, s2
		}
	}
}

// TestBlur: blur's unclamped interior and row-at-a-time vertical pass sum
// as the per-pixel loops do, on frames narrower and shorter than the
// kernel too.
func TestBlur(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, size := range [][2]int{{64, 48}, {5, 3}, {1, 9}, {13, 1}} {
		for _, sigma := range []float64{0.5, 1, 1.4} {
			seed := r.Uint64()
			got := randomFrame(rand.New(rand.NewPCG(seed, 1)), size[0], size[1])
			want := randomFrame(rand.New(rand.NewPCG(seed, 1)), size[0], size[1])
			got.blur(sigma)
			blurScan(want, sigma)
			sameFrames(t, "blur", got, want)
		}
	}
}

// TestSample: sample is bilinear with math.Min/math.Max clamping, and
// reports the transparent points, inside the photo and beyond its edges.
func TestSample(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	o := &object{w: 7, h: 5, pix: make([]float32, 7*5*4)}
	for k := 0; k < len(o.pix); k += 4 {
		a := float32(0)
		if r.IntN(3) > 0 {
			a = float32(r.Float64())
		}
		for c := range 3 {
			o.pix[k+c] = float32(r.Float64()*255) * a
		}
		o.pix[k+3] = a
	}
	var transparent, opaque int
	for range 20000 {
		x, y := r.Float64()*10-2, r.Float64()*8-2
		cx := math.Min(math.Max(x, 0), float64(o.w-1))
		cy := math.Min(math.Max(y, 0), float64(o.h-1))
		ix, iy := int(cx), int(cy)
		ix1, iy1 := min(ix+1, o.w-1), min(iy+1, o.h-1)
		fx, fy := float32(cx-float64(ix)), float32(cy-float64(iy))
		var want [4]float32
		for ch := range 4 {
			p := func(x, y int) float32 { return o.pix[4*(y*o.w+x)+ch] }
			top := p(ix, iy) + fx*(p(ix1, iy)-p(ix, iy))
			bot := p(ix, iy1) + fx*(p(ix1, iy1)-p(ix, iy1))
			want[ch] = top + fy*(bot-top)
		}
		got, ok := o.sample(x, y)
		if ok != (want[3] > 0) {
			t.Fatalf("sample(%v, %v): ok %v with alpha %v", x, y, ok, want[3])
		}
		if !ok {
			transparent++
			continue
		}
		opaque++
		if got != want {
			t.Fatalf("sample(%v, %v) = %v, want %v", x, y, got, want)
		}
	}
	if transparent == 0 || opaque == 0 {
		t.Fatalf("%d transparent and %d opaque points: the test needs both", transparent, opaque)
	}
}
