package lumajpeg

import "math"

// Scaled inverse DCTs, as libjpeg's jidctint.c reduces them. The 8-point
// IDCT is f(x) = ½ Σ_u C(u) F(u) cos((2x+1)uπ/16), C(0) = 1/√2, C(u>0) =
// 1. A pixel of the image scaled by n/8 (n = 4, 2) stands for 8/n pixels,
// whose centre is x = (8/n)·i + (8/n − 1)/2; there f's cosines are
// cos((2i+1)uπ/(2n)), and keeping only the n lowest frequencies, those
// that this grid can hold, leaves an n-point IDCT of the block's top-left
// n×n coefficients with the 8-point normalisation: in two dimensions
// p(i, j) = Σ_u Σ_v t(i, u)·t(j, v)·F(u, v), t(i, u) = ½·C(u)·cos((2i+1)uπ/(2n)).
// For n = 1 that is the DC coefficient over 8: the block's mean.
//
// Before the transform each coefficient F(u, v) is weighted by g(u)·g(v),
// the Filter's gains (gain(u) = 1 at u = 0, so a block's mean is kept):
// the reduced transform is a low-pass filter, and the gains choose which.
// Box's are the block mean's: averaging the 8/n pixels a reduced pixel
// stands for multiplies the cosine of frequency u by
// mean_m cos((2m+1)uπ/16) over the 8/n phases m around the centre, so
// g(u) = cos(uπ/16) at n = 4 and (cos(π/16) + cos(3π/16))/2 at n = 2
// (the frequencies above the grid's alias onto it with small weights that
// Box leaves out). Sharpen's are above 1: a reduced image that is then
// area-downscaled by a factor between 1 and 2 is blurred by the pixels
// the downscale's cells cut (their content spread over the whole reduced
// pixel), which the full decode's area downscale does not; its gains are
// the least-squares fit of the reduced decode's area downscale to the full
// decode's over rows and columns of camera photos (TestFilters checks
// that it is closest on other photos).
// Reduced's are 1: libjpeg's reduced IDCT. The weighted coefficients are
// dequantised with gainFrac fraction bits (dequantTable), and the
// transforms below divide them away.
//
// For n = 2, t is ±1/(2√2), so p = (F00 ± F01 ± F10 ± F11)/8, in integers
// exactly. For n = 4 each pass multiplies by √2·t, whose even part is ±½
// (a shift) and whose odd part is the fixed-point constants below
// (scaledBits fraction bits); the row pass keeps scaledPass fraction bits,
// and the column pass divides by 2^(2·scaledBits−(scaledBits−scaledPass))
// and by the 2 that the two √2 make. A block with a DC coefficient alone
// (or rows of zeros) goes through the even part only, exact: its pixels
// are (F00 + 4)>>3 (with the fraction bits, dcShift), the n = 1 value, at
// every scale.

const (
	scaledBits = 13
	scaledPass = 2
	// scaledC1 and scaledC3 are √2·½·cos(π/8) and √2·½·cos(3π/8) with
	// scaledBits fraction bits.
	scaledC1 = 5352
	scaledC3 = 2217
	// gainFrac is the fraction bits of a scaled decode's dequantised
	// coefficients (dequantTable). The row pass rounds them away with the
	// constants' bits but scaledPass, so that the column pass sees the
	// magnitudes an integer transform of the coefficients would; a DC
	// coefficient, a multiple of 2^gainFrac (its gain is 1), comes out of
	// it exact, and the column pass rounds it as the n = 1 value does.
	gainFrac = 4
)

// Filter is the low-pass filter a DCT-scaled decode is (the gains above).
type Filter uint8

const (
	// Reduced is libjpeg's reduced IDCT (gains 1).
	Reduced Filter = iota
	// Box is the mean of the pixels each reduced pixel stands for, for an
	// image used at its reduced size.
	Box
	// Sharpen is for an image area-downscaled further by a factor between
	// 1 and 2: its area downscale is closest to the full decode's.
	Sharpen
	nFilters
)

// gainBits is the fraction bits of filterGains.
const gainBits = 14

// filterGains are each Filter's gains g(u) for u = 0..3 at n = 4, and
// g(1) at n = 2 (index 4), with gainBits fraction bits. Sharpen's were
// fitted on the rows and columns of six 4000×3000 cmd/mkcorpus photos,
// the 1/2 decode area-downscaled to 1,024 wide and the 1/4 decode to 800:
// the gains that minimise the squared difference to the full decode's area
// downscale to the same size.
var filterGains = func() (t [nFilters][5]int32) {
	fix := func(g float64) int32 { return int32(math.Round(g * (1 << gainBits))) }
	for f := range nFilters {
		t[f][0] = fix(1)
	}
	for u := 1; u < 4; u++ {
		t[Reduced][u] = fix(1)
		t[Box][u] = fix(math.Cos(float64(u) * math.Pi / 16))
	}
	t[Reduced][4] = fix(1)
	t[Box][4] = fix((math.Cos(math.Pi/16) + math.Cos(3*math.Pi/16)) / 2)
	t[Sharpen][1], t[Sharpen][2], t[Sharpen][3], t[Sharpen][4] = fix(sharpenGains[0]), fix(sharpenGains[1]), fix(sharpenGains[2]), fix(sharpenGains[3])
	return t
}()

// sharpenGains are Sharpen's g(1), g(2), g(3) at n = 4 and g(1) at n = 2.
var sharpenGains = [4]float64{1.020, 1.069, 1.189, 1.095}

// dequantTable returns the quantisation table q (zig-zag order) times the
// gains g(u)·g(v) of f at n = 8>>shift, with gainFrac fraction bits, for a
// scaled decode (shift ≥ 1); the coefficients outside the n×n corner,
// which the reduced transforms do not read, keep q with its fraction bits.
func dequantTable(q *block, f Filter, shift uint) (t block) {
	n := 8 >> shift
	g := func(u int) int64 {
		if n == 2 && u == 1 {
			return int64(filterGains[f][4])
		}
		if u >= n {
			return 1 << gainBits
		}
		return int64(filterGains[f][u])
	}
	for zig, k := range unzig {
		u, v := k%8, k/8
		p := int64(q[zig]) * g(u) * g(v)
		t[zig] = int32((p + 1<<(2*gainBits-gainFrac-1)) >> (2*gainBits - gainFrac))
	}
	return t
}

// dcShift is the shift that rounds (half up, with the bias dcBias) a DC
// coefficient with gainFrac fraction bits to the block's mean, F00/8.
const (
	dcShift = gainFrac + 3
	dcBias  = 1 << (dcShift - 1)
)

// idct4 is the 4-point transform of a row or column (x0..x3) times √2,
// times 2^scaledBits.
func idct4(x0, x1, x2, x3 int32) (y0, y1, y2, y3 int32) {
	e0 := (x0 + x2) << (scaledBits - 1)
	e1 := (x0 - x2) << (scaledBits - 1)
	o0 := x1*scaledC1 + x3*scaledC3
	o1 := x1*scaledC3 - x3*scaledC1
	return e0 + o0, e1 + o1, e1 - o1, e0 - o0
}

// idctScaled writes the n×n pixels (n = 1, 2 or 4) of the block b,
// dequantised by dequantTable in natural order (only its top-left n×n
// coefficients are read), to dst with the given stride, level-shifted by 128 and clipped.
// rows is storeBlock's: 0 if b holds no AC coefficient.
func idctScaled(b *block, n int, dst []byte, stride int, rows uint8) {
	if n == 1 || rows == 0 {
		// Round half up, as the level shift below does.
		p := level((b[0] + dcBias) >> dcShift)
		for j := range n {
			row := dst[j*stride : j*stride+n]
			for i := range row {
				row[i] = p
			}
		}
		return
	}
	if n == 2 {
		s0, d0 := b[0]+b[1], b[0]-b[1]
		s1, d1 := b[8]+b[9], b[8]-b[9]
		dst[0] = level((s0 + s1 + dcBias) >> dcShift)
		dst[1] = level((d0 + d1 + dcBias) >> dcShift)
		dst[stride] = level((s0 - s1 + dcBias) >> dcShift)
		dst[stride+1] = level((d0 - d1 + dcBias) >> dcShift)
		return
	}
	idctScaled4(b, dst, stride)
}

// idctScaled4Go writes the 4×4 pixels of the top-left 4×4 coefficients of
// b, dequantised by dequantTable in natural order, to dst with the given stride,
// level-shifted by 128 and clipped: the row pass, rounded to scaledPass
// fraction bits, then the column pass.
func idctScaled4Go(b *block, dst []byte, stride int) {
	const (
		rowShift = scaledBits - scaledPass + gainFrac
		colShift = scaledBits + scaledPass + 1
	)
	var r [16]int32
	for v := range 4 {
		y0, y1, y2, y3 := idct4(b[8*v], b[8*v+1], b[8*v+2], b[8*v+3])
		r[4*v] = (y0 + 1<<(rowShift-1)) >> rowShift
		r[4*v+1] = (y1 + 1<<(rowShift-1)) >> rowShift
		r[4*v+2] = (y2 + 1<<(rowShift-1)) >> rowShift
		r[4*v+3] = (y3 + 1<<(rowShift-1)) >> rowShift
	}
	_ = dst[3*stride+3]
	for i := range 4 {
		y0, y1, y2, y3 := idct4(r[i], r[4+i], r[8+i], r[12+i])
		dst[i] = level((y0 + 1<<(colShift-1)) >> colShift)
		dst[stride+i] = level((y1 + 1<<(colShift-1)) >> colShift)
		dst[2*stride+i] = level((y2 + 1<<(colShift-1)) >> colShift)
		dst[3*stride+i] = level((y3 + 1<<(colShift-1)) >> colShift)
	}
}
