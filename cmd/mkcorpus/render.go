package main

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"math"
	"math/rand/v2"
)

// Settings are what an image depends on besides its index: the same
// settings and sources make the same bytes, so corpus.json records them and
// a resumed or extended run refuses a directory made with others.
type Settings struct {
	Seed          uint64  `json:"seed"`
	Width         int     `json:"width"`
	Height        int     `json:"height"`
	QualityMin    int     `json:"quality_min"`
	QualityMax    int     `json:"quality_max"`
	TwoObjects    float64 `json:"two_objects"`
	SourceDigest  string  `json:"source_sha256"`
	FormatVersion int     `json:"format_version"`
}

// formatVersion changes whenever the generator would draw other pixels for
// the same settings, so that a corpus made by an older generator is not
// silently extended by a newer one.
const formatVersion = 1

// Source is one photo the corpus is made from.
type Source struct {
	ID, Path, Object, Category string
}

// Plan is the part of an image's draw that the labels CSV needs; it is
// cheap (no pixels), so the CSV is written without rendering anything.
type Plan struct {
	Index   int
	Main    int // index into the sources
	Second  int // -1 for a one-object photo
	Quality int
	// render seeds the pixels' own stream.
	render uint64
}

// mix is SplitMix64's finaliser: neighbouring (seed, i) must give
// unrelated streams, which PCG seeded with raw counters does not promise.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Order is the order in which images take their main source: a seeded
// permutation, so that every run of len(order) consecutive images uses
// each source once and any prefix of the corpus is balanced.
func Order(seed uint64, n int) []int {
	r := rand.New(rand.NewPCG(mix(seed^0x6f72646572), mix(seed+1)))
	return r.Perm(n)
}

// PlanImage draws image i's sources and quality. It depends on (s, i) and
// the sources only.
func PlanImage(s Settings, order []int, sources []Source, i int) Plan {
	r := rand.New(rand.NewPCG(mix(s.Seed), mix(uint64(i)^mix(s.Seed+0x706c616e))))
	p := Plan{Index: i, Main: order[i%len(order)], Second: -1}
	p.Quality = s.QualityMin + r.IntN(s.QualityMax-s.QualityMin+1)
	if len(sources) > 1 && r.Float64() < s.TwoObjects {
		// Another object, not another view of the same one: the second
		// object is recorded as a distractor, not as more of the label.
		for range 64 {
			j := r.IntN(len(sources))
			if sources[j].Object != sources[p.Main].Object {
				p.Second = j
				break
			}
		}
	}
	p.render = r.Uint64()
	return p
}

// frame is an RGB float image, interleaved, values on the 0–255 scale.
type frame struct {
	w, h int
	pix  []float32
}

func newFrame(w, h int) *frame { return &frame{w: w, h: h, pix: make([]float32, w*h*3)} }

// object is a source photo as premultiplied RGBA floats: alpha is the
// object's mask, keyed out of the photo's blue cloth.
type object struct {
	w, h int
	pix  []float32 // r, g, b (premultiplied), a in [0,1]
}

// Render draws image p as a JPEG. load returns source j's decoded photo.
func Render(s Settings, p Plan, load func(j int) (image.Image, error)) ([]byte, error) {
	r := rand.New(rand.NewPCG(p.render, mix(p.render)))
	f := newFrame(s.Width, s.Height)
	background(f, r)
	main, err := load(p.Main)
	if err != nil {
		return nil, err
	}
	mainObj := keyObject(main)
	// The main object spans about 45–95% of the frame's height (a source
	// photo's object fills most of its 256 pixels).
	short := float64(min(s.Width, s.Height))
	scale := short / float64(mainObj.h) * (0.55 + 0.6*r.Float64())
	var second *object
	if p.Second >= 0 {
		img, err := load(p.Second)
		if err != nil {
			return nil, err
		}
		second = keyObject(img)
		// Smaller than the main one, so that the label is the larger
		// object; behind it, so that it never hides it.
		s2 := scale * (0.4 + 0.3*r.Float64())
		// Place the two apart: the main one on one side, the other on
		// the other side.
		left := r.IntN(2) == 0
		cx := f.w/2 + int(float64(f.w)*(0.18+0.12*r.Float64()))*sign(!left)
		place(f, second, r, s2, float64(cx), float64(f.h)*(0.35+0.3*r.Float64()))
		cxm := f.w/2 + int(float64(f.w)*(0.1+0.1*r.Float64()))*sign(left)
		place(f, mainObj, r, scale, float64(cxm), float64(f.h)*(0.4+0.2*r.Float64()))
	} else {
		cx := float64(f.w) * (0.3 + 0.4*r.Float64())
		cy := float64(f.h) * (0.3 + 0.4*r.Float64())
		place(f, mainObj, r, scale, cx, cy)
	}
	camera(f, r)
	var buf bytes.Buffer
	buf.Grow(s.Width * s.Height / 4)
	if err := jpeg.Encode(&buf, f.rgba(), &jpeg.Options{Quality: p.Quality}); err != nil {
		return nil, fmt.Errorf("image %d: encode: %w", p.Index, err)
	}
	return buf.Bytes(), nil
}

func sign(pos bool) int {
	if pos {
		return 1
	}
	return -1
}

// keyObject keys the object out of an ETH-80 photo. Every ETH-80 photo is
// shot on the same blue cloth, so "blueness" (blue above the larger of red
// and green, relative to blue) separates cloth from object far better than a
// distance to one colour: the cloth's folds change its brightness, not its
// hue. The threshold is relative to the blueness of the photo's own border,
// which is cloth. A blue part of an object is keyed out with the cloth: the
// price of needing no masks.
func keyObject(img image.Image) *object {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	o := &object{w: w, h: h, pix: make([]float32, w*h*4)}
	rgb := make([]float32, w*h*3)
	toRGB(img, rgb)
	blue := make([]float32, w*h)
	var border float64
	var nb int
	for y := range h {
		for x := range w {
			k := y*w + x
			rr, gg, bb := rgb[3*k], rgb[3*k+1], rgb[3*k+2]
			blue[k] = (bb - max(rr, gg)) / (bb + 100)
			if x < 4 || y < 4 || x >= w-4 || y >= h-4 {
				border += float64(blue[k])
				nb++
			}
		}
	}
	bg := float32(border / float64(max(nb, 1)))
	if bg < 0.08 {
		// Not a blue-cloth photo: keep the whole photo rather than key
		// out random colours.
		bg = 10
	}
	lo, hi := 0.4*bg, 0.75*bg
	a := make([]float32, w*h)
	for k := range a {
		t := (hi - blue[k]) / (hi - lo)
		a[k] = min(max(t, 0), 1)
	}
	// A 3×3 box softens the key's edge (no hard cut-out halo) and removes
	// single-pixel specks of the cloth.
	const edge = 3 // pixels at the photo's border are always cloth
	for y := range h {
		for x := range w {
			k := y*w + x
			var v float32
			if x >= edge && y >= edge && x < w-edge && y < h-edge {
				v = (a[k-w-1] + a[k-w] + a[k-w+1] + a[k-1] + a[k] + a[k+1] + a[k+w-1] + a[k+w] + a[k+w+1]) / 9
				v = min(max((v-0.2)/0.6, 0), 1)
			}
			o.pix[4*k] = rgb[3*k] * v
			o.pix[4*k+1] = rgb[3*k+1] * v
			o.pix[4*k+2] = rgb[3*k+2] * v
			o.pix[4*k+3] = v
		}
	}
	return o
}

// toRGB converts img to interleaved floats, with the fast path for the
// YCbCr images JPEG decodes to.
func toRGB(img image.Image, dst []float32) {
	b := img.Bounds()
	w := b.Dx()
	if yc, ok := img.(*image.YCbCr); ok {
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				yi, ci := yc.YOffset(x, y), yc.COffset(x, y)
				Y := float32(yc.Y[yi])
				cb, cr := float32(yc.Cb[ci])-128, float32(yc.Cr[ci])-128
				k := 3 * ((y-b.Min.Y)*w + x - b.Min.X)
				dst[k] = clamp255(Y + 1.402*cr)
				dst[k+1] = clamp255(Y - 0.344136*cb - 0.714136*cr)
				dst[k+2] = clamp255(Y + 1.772*cb)
			}
		}
		return
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			rr, gg, bb, _ := img.At(x, y).RGBA()
			k := 3 * ((y-b.Min.Y)*w + x - b.Min.X)
			dst[k], dst[k+1], dst[k+2] = float32(rr>>8), float32(gg>>8), float32(bb>>8)
		}
	}
}

func clamp255(v float32) float32 { return min(max(v, 0), 255) }

// halve is a 2×2 box reduction, used before a warp that shrinks the object
// by more than two thirds: bilinear sampling alone would alias.
func (o *object) halve() *object {
	w, h := o.w/2, o.h/2
	d := &object{w: w, h: h, pix: make([]float32, w*h*4)}
	for y := range h {
		for x := range w {
			for c := range 4 {
				k := (2*y*o.w+2*x)*4 + c
				d.pix[(y*w+x)*4+c] = 0.25 * (o.pix[k] + o.pix[k+4] + o.pix[k+o.w*4] + o.pix[k+o.w*4+4])
			}
		}
	}
	return d
}

// place composites o into f, its centre at (cx, cy), scaled by scale and
// then rotated, put in perspective, cropped and recoloured at random. The
// warp is done by inverse mapping: every frame pixel in the object's
// bounding box is mapped back into the photo through the inverse
// homography and sampled bilinearly, so that no frame pixel is left unset
// or written twice.
func place(f *frame, o *object, r *rand.Rand, scale, cx, cy float64) {
	for scale < 0.66 && o.w >= 32 {
		o = o.halve()
		scale *= 2
	}
	// A crop of the photo: most photos keep it whole, some lose up to a
	// fifth on a side (the object cut by the photographer's framing).
	x0, y0, x1, y1 := 0.0, 0.0, float64(o.w), float64(o.h)
	if r.Float64() < 0.3 {
		x0 += r.Float64() * 0.2 * float64(o.w)
		x1 -= r.Float64() * 0.2 * float64(o.w)
		y0 += r.Float64() * 0.2 * float64(o.h)
		y1 -= r.Float64() * 0.2 * float64(o.h)
	}
	// Rotation: mostly a tilted camera, sometimes any angle.
	theta := r.NormFloat64() * 0.25
	if r.Float64() < 0.15 {
		theta = r.Float64() * 2 * math.Pi
	}
	flip := 1.0
	if r.Float64() < 0.5 {
		flip = -1 // a mirror image is another plausible photo of the object
	}
	aspect := math.Exp(r.NormFloat64() * 0.08)
	cos, sin := math.Cos(theta), math.Sin(theta)
	src := [4][2]float64{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}}
	var dst [4][2]float64
	// Perspective: each corner moves by up to 12% of the object's size,
	// the look of a plane seen off-axis.
	persp := 0.12 * r.Float64() * scale * float64(o.w)
	mx, my := (x0+x1)/2, (y0+y1)/2
	for k, p := range src {
		u := (p[0] - mx) * scale * aspect * flip
		v := (p[1] - my) * scale / aspect
		dst[k][0] = cx + cos*u - sin*v + persp*(2*r.Float64()-1)
		dst[k][1] = cy + sin*u + cos*v + persp*(2*r.Float64()-1)
	}
	inv, ok := homography(dst, src)
	if !ok {
		return
	}
	// Colour: brightness, contrast, saturation and a white-balance shift,
	// as one affine map of premultiplied colour (so that the mask's soft
	// edge is recoloured consistently).
	var m [3][3]float32
	var bias [3]float32
	contrast := float32(math.Exp(r.NormFloat64() * 0.15))
	sat := float32(math.Exp(r.NormFloat64() * 0.25))
	bright := float32(r.NormFloat64() * 15)
	for c := range 3 {
		gain := float32(math.Exp(r.NormFloat64()*0.06)) * contrast
		for d := range 3 {
			v := (1 - sat) / 3
			if c == d {
				v += sat
			}
			m[c][d] = gain * v
		}
		bias[c] = 128*(1-contrast) + bright
	}
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, p := range dst {
		minX, maxX = math.Min(minX, p[0]), math.Max(maxX, p[0])
		minY, maxY = math.Min(minY, p[1]), math.Max(maxY, p[1])
	}
	xa, xb := max(int(math.Floor(minX)), 0), min(int(math.Ceil(maxX)), f.w-1)
	ya, yb := max(int(math.Floor(minY)), 0), min(int(math.Ceil(maxY)), f.h-1)
	for y := ya; y <= yb; y++ {
		py := float64(y) + 0.5
		for x := xa; x <= xb; x++ {
			px := float64(x) + 0.5
			wz := inv[2][0]*px + inv[2][1]*py + inv[2][2]
			if wz <= 0 {
				continue
			}
			sx := (inv[0][0]*px+inv[0][1]*py+inv[0][2])/wz - 0.5
			sy := (inv[1][0]*px+inv[1][1]*py+inv[1][2])/wz - 0.5
			if sx < x0-0.5 || sy < y0-0.5 || sx > x1-0.5 || sy > y1-0.5 {
				continue
			}
			c, ok := o.sample(sx, sy)
			if !ok {
				continue
			}
			k := 3 * (y*f.w + x)
			for ch := range 3 {
				v := m[ch][0]*c[0] + m[ch][1]*c[1] + m[ch][2]*c[2] + bias[ch]*c[3]
				f.pix[k+ch] = v + (1-c[3])*f.pix[k+ch]
			}
		}
	}
}

// sample is bilinear, with the photo's edge clamped; ok is false where the
// photo is transparent (alpha ≤ 0), whose colour no caller uses.
func (o *object) sample(x, y float64) (c [4]float32, ok bool) {
	// x and y are finite: comparisons clamp as math.Min and math.Max do.
	if x < 0 {
		x = 0
	} else if w := float64(o.w - 1); x > w {
		x = w
	}
	if y < 0 {
		y = 0
	} else if h := float64(o.h - 1); y > h {
		y = h
	}
	ix, iy := int(x), int(y)
	ix1, iy1 := min(ix+1, o.w-1), min(iy+1, o.h-1)
	fx, fy := float32(x-float64(ix)), float32(y-float64(iy))
	a, b := 4*(iy*o.w+ix), 4*(iy*o.w+ix1)
	cc, d := 4*(iy1*o.w+ix), 4*(iy1*o.w+ix1)
	pa, pb, pc, pd := o.pix[a:a+4:a+4], o.pix[b:b+4:b+4], o.pix[cc:cc+4:cc+4], o.pix[d:d+4:d+4]
	lerp := func(ch int) float32 {
		top := pa[ch] + fx*(pb[ch]-pa[ch])
		bot := pc[ch] + fx*(pd[ch]-pc[ch])
		return top + fy*(bot-top)
	}
	// Alpha first: most of an object's bounding box is keyed-out cloth.
	if c[3] = lerp(3); c[3] <= 0 {
		return c, false
	}
	c[0], c[1], c[2] = lerp(0), lerp(1), lerp(2)
	return c, true
}

// homography returns the 3×3 projective map taking from[k] to to[k], by
// solving the 8×8 linear system with partial pivoting; ok is false for a
// degenerate quadrilateral.
func homography(from, to [4][2]float64) (h [3][3]float64, ok bool) {
	var a [8][9]float64
	for k := range 4 {
		x, y, u, v := from[k][0], from[k][1], to[k][0], to[k][1]
		a[2*k] = [9]float64{x, y, 1, 0, 0, 0, -u * x, -u * y, u}
		a[2*k+1] = [9]float64{0, 0, 0, x, y, 1, -v * x, -v * y, v}
	}
	for c := range 8 {
		p := c
		for r := c + 1; r < 8; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		if math.Abs(a[p][c]) < 1e-12 {
			return h, false
		}
		a[c], a[p] = a[p], a[c]
		for r := range 8 {
			if r == c {
				continue
			}
			t := a[r][c] / a[c][c]
			for k := c; k < 9; k++ {
				a[r][k] -= t * a[c][k]
			}
		}
	}
	var s [9]float64
	for c := range 8 {
		s[c] = a[c][8] / a[c][c]
	}
	s[8] = 1
	for i := range 9 {
		h[i/3][i%3] = s[i]
	}
	return h, true
}

// rgba rounds f into an image the JPEG encoder takes without conversion.
func (f *frame) rgba() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, f.w, f.h))
	for k := range f.w * f.h {
		img.Pix[4*k] = uint8(clamp255(f.pix[3*k]) + 0.5)
		img.Pix[4*k+1] = uint8(clamp255(f.pix[3*k+1]) + 0.5)
		img.Pix[4*k+2] = uint8(clamp255(f.pix[3*k+2]) + 0.5)
		img.Pix[4*k+3] = 255
	}
	return img
}
