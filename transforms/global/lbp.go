package global

import (
	"image"
	"math"
	"math/bits"
)

// LBP returns the uniform LBP(8,1) histogram of img, computed on the luma of
// the image resized to fit Side×Side, in dst[:LBPDim], reusing dst's storage
// if it is large enough.
//
// It follows Ojala, Pietikäinen and Mäenpää (2002) as implemented in
// Heikkilä and Ahonen's lbp.m with the 'u2' mapping, the implementation that
// made 59 the usual dimension. For a pixel with grey level g_c, the eight
// neighbours g_p, p = 0…7, lie on the circle of radius 1 at angles p·45°
// counter-clockwise from the +x axis (p = 0 east, 2 north, 4 west, 6 south);
// the diagonal ones fall between pixels and are interpolated bilinearly. The
// code is
//
//	LBP = Σ_p [g_p ≥ g_c]·2^p,
//
// with ties within 10⁻⁶ (in luma units, far below one 8-bit grey level)
// counted as ≥, so that interpolation rounding cannot flip a bit in a flat
// region. A code is uniform if its circular bit string has at most two 0/1
// transitions; the 58 uniform codes get bins 0–57 in increasing order of code
// (0 → bin 0, 255 → bin 57) and all others bin 58. A flat region has code 255.
//
// The histogram counts the pixels whose whole neighbourhood is inside the
// image, as lbp.m does, and is normalised to sum to 1. An image less than 3
// pixels wide or high has no such pixel; it then counts every pixel, with
// neighbours outside the image replaced by the nearest border pixel.
func (e *Extractor) LBP(img image.Image, dst []float32) ([]float32, error) {
	if err := e.prepare(img); err != nil {
		return nil, err
	}
	dst = resize(dst, LBPDim)
	e.lbp(dst)
	return dst, nil
}

// lbpTie is the tolerance below which a neighbour counts as equal to the
// centre.
const lbpTie = 1e-6

// Bilinear weights of the diagonal neighbours, at offset (±t, ±t) with
// t = 1/√2 from the centre: centre, horizontal, vertical and diagonal pixels.
var (
	lbpT  = 1 / math.Sqrt2
	lbpWc = float32((1 - lbpT) * (1 - lbpT))
	lbpWs = float32(lbpT * (1 - lbpT)) // horizontal and vertical alike
	lbpWd = float32(lbpT * lbpT)
)

// lbpUniform maps an 8-bit LBP code to its bin: 0–57 for the uniform codes in
// increasing order, 58 for the rest.
var lbpUniform = func() (t [256]uint8) {
	next := uint8(0)
	for c := range 256 {
		rot := uint8(c)<<1 | uint8(c)>>7
		if bits.OnesCount8(uint8(c)^rot) <= 2 {
			t[c] = next
			next++
		} else {
			t[c] = LBPDim - 1
		}
	}
	return t
}()

// lbpCode returns the LBP(8,1) code of the pixel whose 3×3 neighbourhood is
// n (row-major, y down, n[4] the centre).
func lbpCode(n *[9]float32) uint8 {
	c := n[4]
	// Diagonal samples: the corner towards which the sample lies, and the two
	// pixels beside it.
	ne := lbpWc*c + lbpWs*(n[5]+n[1]) + lbpWd*n[2]
	nw := lbpWc*c + lbpWs*(n[3]+n[1]) + lbpWd*n[0]
	sw := lbpWc*c + lbpWs*(n[3]+n[7]) + lbpWd*n[6]
	se := lbpWc*c + lbpWs*(n[5]+n[7]) + lbpWd*n[8]
	g := [8]float32{n[5], ne, n[1], nw, n[3], sw, n[7], se}
	var code uint8
	for p, v := range g {
		if v >= c-lbpTie {
			code |= 1 << p
		}
	}
	return code
}

// lbp computes the LBP histogram of the prepared image into dst.
func (e *Extractor) lbp(dst []float32) {
	w, h := e.w, e.h
	Y := e.y[:w*h]
	var hist [LBPDim]int
	count := 0
	var nb [9]float32
	if w >= 3 && h >= 3 {
		for y := 1; y < h-1; y++ {
			up, mid, dn := Y[(y-1)*w:][:w], Y[y*w:][:w], Y[(y+1)*w:][:w]
			for x := 1; x < w-1; x++ {
				nb = [9]float32{
					up[x-1], up[x], up[x+1],
					mid[x-1], mid[x], mid[x+1],
					dn[x-1], dn[x], dn[x+1],
				}
				hist[lbpUniform[lbpCode(&nb)]]++
			}
		}
		count = (w - 2) * (h - 2)
	} else {
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				for dy := -1; dy <= 1; dy++ {
					yy := min(max(y+dy, 0), h-1)
					for dx := -1; dx <= 1; dx++ {
						xx := min(max(x+dx, 0), w-1)
						nb[(dy+1)*3+dx+1] = Y[yy*w+xx]
					}
				}
				hist[lbpUniform[lbpCode(&nb)]]++
			}
		}
		count = w * h
	}
	for i, c := range hist {
		dst[i] = float32(float64(c) / float64(count))
	}
}
