package global

import (
	"image"
	"math"
)

// Layout of the colour descriptor.
const (
	colourBins    = 72 // 8 hues × 3 saturations × 3 values
	colourMoments = 9  // (mean, std, skew) × (H, S, V)
)

// Colour returns the colour descriptor of img, computed on the image resized
// to fit Side×Side, in dst[:ColourDim], reusing dst's storage if it is large
// enough.
//
// The paper names "color histogram and color moments (n = 81)" and no colour
// space. The split chosen is the classic 72 + 9, both in HSV:
//
// Entries 0–71 are the 72-colour HSV histogram L = 9·h + 3·s + v with the
// widely used non-uniform quantisation (hue bins follow colour names, and red
// straddles 0°):
//
//	h: 0 for H ∈ [316°, 360°) ∪ [0°, 20°], 1 (20°, 40°], 2 (40°, 75°], 3 (75°, 155°],
//	   4 (155°, 190°], 5 (190°, 270°], 6 (270°, 295°], 7 (295°, 316°)
//	s: 0 for S ∈ [0, 0.2], 1 (0.2, 0.7], 2 (0.7, 1]      v: likewise for V
//
// normalised to sum to 1. V = max(R,G,B), S = (V − min)/V (0 when V = 0) and H
// is the usual hexcone hue (0 when S = 0).
//
// Entries 72–80 are the Stricker–Orengo colour moments of H/360°, S and V in
// that order, three per channel c:
//
//	μ_c = E[c],   σ_c = (E[(c − μ_c)²])^{1/2},   s_c = ∛E[(c − μ_c)³]
//
// over all pixels. The third moment is the cube root of the third central
// moment, as Stricker and Orengo define it, not the standardised skewness: it
// has the units of c, and is 0, not 0/0, for a uniform image. Hue is treated
// as a linear quantity in [0, 1), as there too.
func (e *Extractor) Colour(img image.Image, dst []float32) ([]float32, error) {
	if err := e.prepare(img); err != nil {
		return nil, err
	}
	dst = resize(dst, ColourDim)
	e.colour(dst)
	return dst, nil
}

// colour computes the colour descriptor of the prepared image into dst.
func (e *Extractor) colour(dst []float32) {
	n := e.w * e.h
	H, S, V := grow(e.hsv[0], n), grow(e.hsv[1], n), grow(e.hsv[2], n)
	e.hsv = [3][]float32{H, S, V}
	var hist [colourBins]int
	R, G, B := e.r[:n], e.g[:n], e.b[:n]
	for i := range H {
		h, s, v := hsv(R[i], G[i], B[i])
		H[i], S[i], V[i] = h/360, s, v
		hist[9*hueBin(h)+3*levelBin(s)+levelBin(v)]++
	}
	for i, c := range hist {
		dst[i] = float32(float64(c) / float64(n))
	}
	for c, plane := range e.hsv {
		mu, sigma, skew := moments(plane)
		dst[colourBins+3*c] = float32(mu)
		dst[colourBins+3*c+1] = float32(sigma)
		dst[colourBins+3*c+2] = float32(skew)
	}
}

// hsv converts r, g, b in [0, 1] to hue in degrees [0, 360), saturation and
// value in [0, 1].
func hsv(r, g, b float32) (h, s, v float32) {
	mx := max(r, g, b)
	mn := min(r, g, b)
	v = mx
	d := mx - mn
	if mx <= 0 || d <= 0 {
		return 0, 0, v
	}
	s = d / mx
	switch mx {
	case r:
		h = 60 * (g - b) / d
		if h < 0 {
			h += 360
		}
	case g:
		h = 60*(b-r)/d + 120
	default:
		h = 60*(r-g)/d + 240
	}
	if h >= 360 {
		h -= 360
	}
	return h, s, v
}

// hueBin quantises a hue in degrees to the 8 non-uniform bins of Colour.
func hueBin(h float32) int {
	switch {
	case h >= 316 || h <= 20:
		return 0
	case h <= 40:
		return 1
	case h <= 75:
		return 2
	case h <= 155:
		return 3
	case h <= 190:
		return 4
	case h <= 270:
		return 5
	case h <= 295:
		return 6
	default:
		return 7
	}
}

// levelBin quantises a saturation or value in [0, 1] to 3 bins.
func levelBin(x float32) int {
	switch {
	case x <= 0.2:
		return 0
	case x <= 0.7:
		return 1
	default:
		return 2
	}
}

// moments returns the mean, standard deviation and cube root of the third
// central moment of x, accumulated in float64 in two passes so that the
// central moments do not suffer the cancellation of E[x²] − E[x]².
func moments(x []float32) (mu, sigma, skew float64) {
	if len(x) == 0 {
		return 0, 0, 0
	}
	var sum float64
	for _, v := range x {
		sum += float64(v)
	}
	mu = sum / float64(len(x))
	var m2, m3 float64
	for _, v := range x {
		d := float64(v) - mu
		d2 := d * d
		m2 += d2
		m3 += d2 * d
	}
	m2 /= float64(len(x))
	m3 /= float64(len(x))
	return mu, math.Sqrt(m2), math.Cbrt(m3)
}
