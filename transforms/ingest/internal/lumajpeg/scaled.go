package lumajpeg

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
// For n = 2, t is ±1/(2√2), so p = (F00 ± F01 ± F10 ± F11)/8, in integers
// exactly. For n = 4 each pass multiplies by √2·t, whose even part is ±½
// (a shift) and whose odd part is the fixed-point constants below
// (scaledBits fraction bits); the row pass keeps scaledPass fraction bits,
// and the column pass divides by 2^(2·scaledBits−(scaledBits−scaledPass))
// and by the 2 that the two √2 make. A block with a DC coefficient alone
// (or rows of zeros) goes through the even part only, exact: its pixels
// are (F00 + 4)>>3, the n = 1 value, at every scale.

const (
	scaledBits = 13
	scaledPass = 2
	// scaledC1 and scaledC3 are √2·½·cos(π/8) and √2·½·cos(3π/8) with
	// scaledBits fraction bits.
	scaledC1 = 5352
	scaledC3 = 2217
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
// dequantised in natural order (only its top-left n×n coefficients are
// read), to dst with the given stride, level-shifted by 128 and clipped.
// rows is storeBlock's: 0 if b holds no AC coefficient.
func idctScaled(b *block, n int, dst []byte, stride int, rows uint8) {
	if n == 1 || rows == 0 {
		// Round half up, as the level shift below does.
		p := level((b[0] + 4) >> 3)
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
		dst[0] = level((s0 + s1 + 4) >> 3)
		dst[1] = level((d0 + d1 + 4) >> 3)
		dst[stride] = level((s0 - s1 + 4) >> 3)
		dst[stride+1] = level((d0 - d1 + 4) >> 3)
		return
	}
	idctScaled4(b, dst, stride)
}

// idctScaled4Go writes the 4×4 pixels of the top-left 4×4 coefficients of
// b, dequantised in natural order, to dst with the given stride,
// level-shifted by 128 and clipped: the row pass, rounded to scaledPass
// fraction bits, then the column pass.
func idctScaled4Go(b *block, dst []byte, stride int) {
	const (
		rowShift = scaledBits - scaledPass
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
