package lumajpeg

import "math"

// Scaled inverse DCTs, as libjpeg's jidctred.c reduces them. The 8-point
// IDCT is f(x) = ½ Σ_u C(u) F(u) cos((2x+1)uπ/16), C(0) = 1/√2, C(u>0) =
// 1. A pixel of the image scaled by n/8 (n = 4, 2) stands for 8/n pixels,
// whose centre is x = (8/n)·i + (8/n − 1)/2; there f's cosines are
// cos((2i+1)uπ/(2n)), and keeping only the n lowest frequencies, those
// that this grid can hold, leaves an n-point IDCT of the block's top-left
// n×n coefficients with the 8-point normalisation. For n = 1 that is the
// DC coefficient over 8: the block's mean.

// idctTable[n][i][u] is ½·C(u)·cos((2i+1)uπ/(2n)), for n = 2 and 4.
var idctTable = func() (t [5][4][4]float32) {
	for _, n := range []int{2, 4} {
		for i := range n {
			for u := range n {
				c := 1.0
				if u == 0 {
					c = 1 / math.Sqrt2
				}
				t[n][i][u] = float32(0.5 * c * math.Cos(float64((2*i+1)*u)*math.Pi/float64(2*n)))
			}
		}
	}
	return t
}()

// idctScaled writes the n×n pixels (n = 1, 2 or 4) of the block b,
// dequantised in natural order (only its top-left n×n coefficients are
// read), to dst with the given stride, level-shifted by 128 and clipped.
func idctScaled(b *block, n int, dst []byte, stride int) {
	if n == 1 {
		// Round half up, as the level shift below does.
		dst[0] = clip((b[0] + 4) >> 3)
		return
	}
	t := &idctTable[n]
	// Rows first: r[v][i] = Σ_u t[i][u]·F(u, v), F(u, v) = b[8v+u].
	var r [4][4]float32
	for v := range n {
		row := b[8*v : 8*v+n]
		for i := range n {
			var s float32
			for u, c := range row {
				s += t[i][u] * float32(c)
			}
			r[v][i] = s
		}
	}
	for j := range n {
		out := dst[j*stride : j*stride+n]
		for i := range n {
			var s float32
			for v := range n {
				s += t[j][v] * r[v][i]
			}
			out[i] = clip(int32(math.Floor(float64(s) + 0.5)))
		}
	}
}

// clip level-shifts a sample by 128 and clips it to a byte.
func clip(c int32) byte {
	switch {
	case c < -128:
		return 0
	case c > 127:
		return 255
	}
	return byte(c + 128)
}
