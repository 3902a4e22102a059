package sift

import (
	"image"
	"math"
)

// Rec. 601 luma weights, as OpenCV's COLOR_BGR2GRAY and JPEG's Y.
const (
	lumaR = 0.299
	lumaG = 0.587
	lumaB = 0.114
)

// u8 maps a byte to [0,1].
var u8 = func() (t [256]float32) {
	for i := range t {
		t[i] = float32(i) / 255
	}
	return t
}()

// FromImage converts img to gray with Rec. 601 luma in [0,1], reusing dst's
// Pix if it is large enough; dst may be nil. Alpha is treated as
// premultiplied colour over black, as image/color's RGBA() defines it.
// YCbCr images (decoded JPEGs) use their Y plane directly, which is that same
// luma.
func FromImage(img image.Image, dst *Image) *Image {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if dst == nil {
		dst = &Image{}
	}
	dst.Width, dst.Height = w, h
	dst.Pix = grow(dst.Pix, w*h)
	if w == 0 || h == 0 {
		return dst
	}
	out := dst.Pix
	switch src := img.(type) {
	case *image.Gray:
		for y := 0; y < h; y++ {
			i := src.PixOffset(b.Min.X, b.Min.Y+y)
			grayRow(src.Pix[i:i+w], out[y*w:y*w+w])
		}
		return dst // u8 is within [0,1]
	case *image.YCbCr:
		for y := 0; y < h; y++ {
			i := src.YOffset(b.Min.X, b.Min.Y+y)
			grayRow(src.Y[i:i+w], out[y*w:y*w+w])
		}
		return dst
	case *image.RGBA:
		for y := 0; y < h; y++ {
			i := src.PixOffset(b.Min.X, b.Min.Y+y)
			row := src.Pix[i : i+4*w]
			o := out[y*w : y*w+w]
			for x := range o {
				p := row[4*x : 4*x+3]
				o[x] = float32((lumaR*float64(p[0]) + lumaG*float64(p[1]) + lumaB*float64(p[2])) / 255)
			}
		}
	case *image.NRGBA:
		for y := 0; y < h; y++ {
			i := src.PixOffset(b.Min.X, b.Min.Y+y)
			row := src.Pix[i : i+4*w]
			o := out[y*w : y*w+w]
			for x := range o {
				p := row[4*x : 4*x+4]
				l := lumaR*float64(p[0]) + lumaG*float64(p[1]) + lumaB*float64(p[2])
				o[x] = float32(l * float64(p[3]) / (255 * 255))
			}
		}
	case *image.Gray16:
		for y := 0; y < h; y++ {
			i := src.PixOffset(b.Min.X, b.Min.Y+y)
			row := src.Pix[i : i+2*w]
			o := out[y*w : y*w+w]
			for x := range o {
				o[x] = float32(float64(uint16(row[2*x])<<8|uint16(row[2*x+1])) / 65535)
			}
		}
	case *image.Paletted: // PNG and GIF
		var lut [256]float32
		for i, c := range src.Palette[:min(len(src.Palette), len(lut))] {
			lut[i] = luma16(c.RGBA())
		}
		for y := 0; y < h; y++ {
			i := src.PixOffset(b.Min.X, b.Min.Y+y)
			row := src.Pix[i : i+w]
			o := out[y*w : y*w+w]
			for x, v := range row {
				o[x] = lut[v]
			}
		}
	default:
		for y := 0; y < h; y++ {
			o := out[y*w : y*w+w]
			for x := range o {
				o[x] = luma16(img.At(b.Min.X+x, b.Min.Y+y).RGBA())
			}
		}
	}
	// Luma weights sum to 1 only up to rounding; keep the documented range.
	for i, v := range out {
		if v > 1 {
			out[i] = 1
		}
	}
	return dst
}

// luma16 is the luma in [0,1] of a colour as color.Color.RGBA returns it.
func luma16(r, g, b, _ uint32) float32 {
	return float32((lumaR*float64(r) + lumaG*float64(g) + lumaB*float64(b)) / 65535)
}

// upsample2 writes the 2w×2h bilinear upsampling of src (w×h) to dst with
// pixel centres aligned, as OpenCV's resize with INTER_LINEAR: dst pixel X
// samples src at X/2 − ¼, so every dst pixel is a ¾/¼ blend of its two
// nearest src pixels in each direction (replicating the edge).
//
// The alternative that keeps even pixels exact and averages odd ones maps
// coordinates back by a plain factor 2, but blurs every other pixel and not
// the rest, so the finest scales depend on where the content falls on the
// pixel grid; on cmd/siftbench's transformed photos it matched worse for
// every transformation but exact multiples of 90° rotations. Here every
// pixel is blurred alike, and Extract subtracts the ¼.
func upsample2(src []float32, w, h int, dst []float32) {
	W := 2 * w
	for y := 0; y < h; y++ {
		upsampleRow(src[y*w:y*w+w], dst[2*y*W:2*y*W+W])
	}
	// Source row y now sits in dst row 2y. Rows 2y+1 and 2y+2 blend rows y
	// and y+1; going bottom-up, row 2y+2 is overwritten only after its last
	// use.
	copy(dst[(2*h-1)*W:2*h*W], dst[2*(h-1)*W:2*(h-1)*W+W])
	for y := h - 2; y >= 0; y-- {
		blendRows(dst[2*y*W:2*y*W+W], dst[(2*y+1)*W:(2*y+1)*W+W], dst[2*(y+1)*W:2*(y+1)*W+W])
	}
}

// upsampleRow is upsample2's horizontal pass: d (2·len(s) samples) is s
// upsampled.
func upsampleRow(s, d []float32) {
	w := len(s)
	d = d[:2*w]
	d[0] = s[0]
	m := 0
	if useAVX {
		m = (w - 1) &^ 7
		if m > 0 {
			upsampleRowAVX(&s[0], &d[0], m)
		}
	}
	for x := m; x < w-1; x++ {
		a, b := s[x], s[x+1]
		d[2*x+1] = float32(0.75*a) + float32(0.25*b)
		d[2*x+2] = float32(0.25*a) + float32(0.75*b)
	}
	d[2*w-1] = s[w-1]
}

// blendRows is upsample2's vertical pass between the upsampled rows a and
// b: it sets m to ¾a + ¼b, the row between them nearer a, and b to ¼a +
// ¾b, the one nearer b.
func blendRows(a, m, b []float32) {
	m = m[:len(a)]
	b = b[:len(a)]
	n := 0
	if useAVX {
		n = len(a) &^ 7
		if n > 0 {
			blendRowsAVX(&a[0], &m[0], &b[0], n)
		}
	}
	for x := n; x < len(a); x++ {
		av, bv := a[x], b[x]
		m[x] = float32(0.75*av) + float32(0.25*bv)
		b[x] = float32(0.25*av) + float32(0.75*bv)
	}
}

// upRows makes the rows of upsample2's output one at a time, in order,
// from two upsampled source rows, so that the blur of the doubled image
// reads its rows from the cache instead of a doubled image written to
// memory and read back.
type upRows struct {
	src    []float32
	w, h   int
	h0, h1 []float32 // source rows y and y+1, upsampled
	m, b   []float32 // rows 2y+1 and 2y+2
	next   int       // the row row must be asked for next
}

// start makes u produce the rows of src (w×h) doubled.
func (u *upRows) start(src []float32, w, h int) {
	u.src, u.w, u.h, u.next = src, w, h, 0
	for _, r := range []*[]float32{&u.h0, &u.h1, &u.m, &u.b} {
		*r = grow(*r, 2*w)
	}
}

// row returns row Y of the doubled image, valid until the next call; Y
// must be 0, then one more than the last call's.
func (u *upRows) row(Y int) []float32 {
	if Y != u.next {
		panic("sift: upRows: rows out of order")
	}
	u.next++
	w, h := u.w, u.h
	switch {
	case Y == 0:
		upsampleRow(u.src[:w], u.h0)
		return u.h0
	case Y == 2*h-1: // the last row copies the last source row
		if h == 1 {
			return u.h0
		}
		return u.h1
	case Y%2 == 1:
		y := Y / 2
		if y > 0 {
			u.h0, u.h1 = u.h1, u.h0
		}
		upsampleRow(u.src[(y+1)*w:(y+2)*w], u.h1)
		copy(u.b, u.h1)
		blendRows(u.h0, u.m, u.b)
		return u.m
	default:
		return u.b
	}
}

// downsample2 takes every other sample of src (sw×sh), starting at (0, 0),
// into dst (dw×dh, dw = sw/2, dh = sh/2), as OpenCV's INTER_NEAREST resize
// does for an exact factor 2.
func downsample2(src []float32, sw, sh int, dst []float32, dw, dh int) {
	if 2*dw > sw || 2*dh > sh {
		panic("sift: downsample2: destination larger than half the source")
	}
	for y := 0; y < dh; y++ {
		s := src[2*y*sw : 2*y*sw+sw]
		d := dst[y*dw : y*dw+dw]
		m := 0
		if useAVX {
			m = dw &^ 7
			if m > 0 {
				downsampleRowAVX(&s[0], &d[0], m)
			}
		}
		for x := m; x < dw; x++ {
			d[x] = s[2*x]
		}
	}
}

// resampler shrinks images by area averaging: each destination pixel is the
// mean of the source area it covers, with fractional coverage at its edges.
// That is the box prefilter a downscale needs against aliasing, and for
// integer factors it is the plain block mean.
//
// A destination pixel is Σ_k wy_k · (Σ_j wx_j · s[i_k][j_0+j]): each source
// row filtered horizontally, then the rows of a destination row weighted and
// summed, the products rounded before each sum, taps in increasing order
// from 0. Source rows are filtered eight at a time when a destination row
// first needs them, into a ring of the few groups a destination row reads,
// so the intermediate stays in cache and a source given as bytes
// (resizeGray) is converted a group at a time. With AVX the eight rows are
// filtered together: transposed so that a column's eight samples are one
// vector, each destination column is a tap-by-tap sum of broadcast weight
// times column, and the sums are transposed back into rows, which computes
// every sample as the scalar loop does.
type resampler struct {
	xs, ys taps
	// gi and gw are xs without the taps past the row's end: tap k of
	// destination x at x·xs.n + k, its source index (clamped into the row,
	// where its weight is 0) and weight.
	gi []int32
	gw []float32
	// ring holds groups of 8 filtered rows of dw samples, the group of
	// source rows 8g … 8g+7 in slot g mod len(held); held is the group each
	// slot holds, −1 for none.
	ring []float32
	held []int
	// rows holds 8 source rows converted from bytes; cols and sums are the
	// vector pass's transposed group (sw columns of 8) and its sums (dw
	// columns of 8).
	rows, cols, sums []float32
}

// taps holds, for each destination index, the first source index and its
// weights (stored with stride n).
type taps struct {
	first []int32
	w     []float32
	n     int
}

func (t *taps) build(srcN, dstN int) {
	f := float64(srcN) / float64(dstN)
	t.n = int(math.Ceil(f)) + 1
	if cap(t.first) < dstN {
		t.first = make([]int32, dstN)
	}
	t.first = t.first[:dstN]
	t.w = grow(t.w, dstN*t.n)
	clear(t.w)
	for d := 0; d < dstN; d++ {
		lo, hi := float64(d)*f, float64(d+1)*f
		i0 := int(math.Floor(lo))
		t.first[d] = int32(i0)
		for k := 0; k < t.n; k++ {
			i := i0 + k
			if i >= srcN {
				break
			}
			ov := math.Min(hi, float64(i+1)) - math.Max(lo, float64(i))
			if ov > 0 {
				t.w[d*t.n+k] = float32(ov / f)
			}
		}
	}
}

// resize area-averages src (sw×sh) into dst (dw×dh); dw ≤ sw, dh ≤ sh.
func (r *resampler) resize(src []float32, sw, sh int, dst []float32, dw, dh int) {
	r.resizeRows(sw, sh, dst, dw, dh, func(y int, _ []float32) []float32 { return src[y*sw : y*sw+sw] })
}

// resizeGray is resize of the sw×sh grey image whose rows start stride
// bytes apart in pix, read as FromImage reads an *image.Gray (byte v is
// v/255): the same result, without the float copy of the whole image.
func (r *resampler) resizeGray(pix []uint8, stride, sw, sh int, dst []float32, dw, dh int) {
	r.resizeRows(sw, sh, dst, dw, dh, func(y int, buf []float32) []float32 {
		grayRow(pix[y*stride:y*stride+sw], buf)
		return buf
	})
}

// resizeRows is resize of the sw×sh image whose row y is row(y, buf):
// sw samples, in buf (sw samples it may use) or elsewhere, unchanged
// until the group of 8 rows being filtered is done.
func (r *resampler) resizeRows(sw, sh int, dst []float32, dw, dh int, row func(y int, buf []float32) []float32) {
	r.xs.build(sw, dw)
	r.ys.build(sh, dh)
	r.layout(sw, dw)
	n := r.ys.n
	// Destination row y reads source rows first(y) … first(y)+n−1, which
	// span at most (n+6)/8+1 groups, and first never decreases, so a group
	// is overwritten in the ring only once no later destination row reads
	// it.
	slots := (n+6)/8 + 1
	r.ring = grow(r.ring, slots*8*dw)
	if cap(r.held) < slots {
		r.held = make([]int, slots)
	}
	r.held = r.held[:slots]
	for i := range r.held {
		r.held[i] = -1
	}
	r.rows = grow(r.rows, 8*sw)
	for y := 0; y < dh; y++ {
		o := dst[y*dw : y*dw+dw]
		i0 := int(r.ys.first[y])
		set := true // o's sums start from 0
		for k, wk := range r.ys.w[y*n : y*n+n] {
			if wk == 0 {
				continue
			}
			i := i0 + k
			g := i / 8
			slot := g % slots
			group := r.ring[slot*8*dw : (slot+1)*8*dw]
			if r.held[slot] != g {
				r.filterGroup(g, sw, sh, group, row)
				r.held[slot] = g
			}
			mulAdd(o, group[(i%8)*dw:(i%8+1)*dw], wk, set)
			set = false
		}
		if set {
			clear(o)
		}
	}
}

// layout fills gi and gw from xs for sources of sw samples a row.
func (r *resampler) layout(sw, dw int) {
	n := r.xs.n
	r.gi = growInt32(r.gi, n*dw)
	r.gw = grow(r.gw, n*dw)
	for x := 0; x < dw; x++ {
		for k := 0; k < n; k++ {
			i := int(r.xs.first[x]) + k
			w := r.xs.w[x*n+k]
			if i >= sw {
				i, w = sw-1, 0
			}
			r.gi[x*n+k], r.gw[x*n+k] = int32(i), w
		}
	}
}

// filterGroup sets out (8 rows of dw samples) to the horizontal pass of
// source rows 8g … 8g+7, a row past sh to that of row sh−1.
func (r *resampler) filterGroup(g, sw, sh int, out []float32, row func(y int, buf []float32) []float32) {
	dw := len(out) / 8
	var src [8][]float32
	for j := range src {
		src[j] = row(min(8*g+j, sh-1), r.rows[j*sw:(j+1)*sw])
	}
	if !useAVX {
		for j := range src {
			filterRow(src[j], out[j*dw:(j+1)*dw], r.gi, r.gw, r.xs.n)
		}
		return
	}
	// Transpose: cols[8c+j] = src[j][c].
	r.cols = grow(r.cols, 8*sw)
	var ptr [8]*float32
	m := sw &^ 7
	if m > 0 {
		for j := range ptr {
			ptr[j] = &src[j][0]
		}
		transposeInAVX(&r.cols[0], &ptr, m)
	}
	for c := m; c < sw; c++ {
		for j := range src {
			r.cols[8*c+j] = src[j][c]
		}
	}
	r.sums = grow(r.sums, 8*dw)
	filterColsAVX(&r.sums[0], &r.cols[0], &r.gi[0], &r.gw[0], r.xs.n, dw)
	// Transpose back: out[j·dw+x] = sums[8x+j].
	m = dw &^ 7
	if m > 0 {
		for j := range ptr {
			ptr[j] = &out[j*dw]
		}
		transposeOutAVX(&ptr, &r.sums[0], m)
	}
	for x := m; x < dw; x++ {
		for j := range 8 {
			out[j*dw+x] = r.sums[8*x+j]
		}
	}
}

// filterRow sets o (dw samples) to the horizontal pass of source row s
// with the taps gi, gw (n a destination sample). A zero-weight tap adds +0
// or −0 for a finite sample, which leaves the sum as skipping it would.
func filterRow(s, o []float32, gi []int32, gw []float32, n int) {
	for x := range o {
		var acc float32
		for k := x * n; k < x*n+n; k++ {
			acc += float32(gw[k] * s[gi[k]])
		}
		o[x] = acc
	}
}

// mulAdd sets o[x] += w·s[x] for x < len(o), the product rounded before
// the sum; with set, o[x] = 0 + w·s[x], whatever o held.
func mulAdd(o, s []float32, w float32, set bool) {
	s = s[:len(o)]
	m := 0
	if useAVX {
		m = len(o) &^ 7
		if m > 0 {
			mulAddAVX(&o[0], &s[0], w, m, set)
		}
	}
	for x := m; x < len(o); x++ {
		if set {
			o[x] = 0
		}
		o[x] += float32(w * s[x])
	}
}

// grayRow sets o[x] = u8[s[x]] for x < len(s).
func grayRow(s []uint8, o []float32) {
	o = o[:len(s)]
	m := 0
	if useAVX2 {
		m = len(s) &^ 7
		if m > 0 {
			grayRowAVX2(&o[0], &s[0], m)
		}
	}
	for x := m; x < len(s); x++ {
		o[x] = u8[s[x]]
	}
}
