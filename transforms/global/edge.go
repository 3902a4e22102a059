package global

import (
	"image"
	"math"
)

// Parameters of the Canny detector used by Edge.
const (
	// edgeSigma is the standard deviation in pixels of the Gaussian that
	// smooths the luma before differentiation.
	edgeSigma = 1.0
	// edgeHigh and edgeLow are the hysteresis thresholds on the smoothed
	// gradient magnitude, in luma units per pixel. A Gaussian-blurred step of
	// height c peaks at about 0.38c, so edges are seeded by steps of about a
	// fifth of the full range (≈ 54 grey levels) and continued down to steps of
	// about 8% (≈ 20 grey levels). Fixed, not per-image, thresholds keep the
	// non-edge bin comparable across images.
	edgeHigh = 0.08
	edgeLow  = 0.03
	// edgeDirs is the number of direction bins, 10° each.
	edgeDirs = 36
)

// Edge returns the edge direction histogram of img, computed on the image
// resized to fit Side×Side, in dst[:EdgeDim], reusing dst's storage if it is
// large enough.
//
// The paper gives only the dimension, 37. The definition follows Vailaya,
// Jain and Zhang's edge direction histogram (1998), with 10° bins instead of
// their 5°: edges are found by Canny's detector on the luma (Gaussian σ = 1,
// Sobel gradient g = (g_x, g_y) in luma per pixel, non-maximum suppression,
// hysteresis between 0.03 and 0.08), and each edge pixel votes for the
// direction of its gradient,
//
//	θ = atan2(−g_y, g_x) ∈ [0°, 360°)   (y up, so angles are counter-clockwise as seen),
//
// in bin k = round(θ/10°) mod 36: bins are centred on multiples of 10°, so bin k
// covers [10k − 5°, 10k + 5°). The gradient points from dark to bright, so the
// two sides of an edge are told apart: a bright half-plane whose boundary runs
// at α° has its mass in the bin of α + 90° (or α − 90° if the dark side is the
// other one), and rotating the image by 90° moves it by 9 bins.
//
// Normalisation, as Vailaya et al.: entries 0–35 are divided by the number of
// edge pixels (they sum to 1, or are all 0 if there are no edges), and entry
// 36 is the fraction of all pixels that are not edges.
func (e *Extractor) Edge(img image.Image, dst []float32) ([]float32, error) {
	if err := e.prepare(img); err != nil {
		return nil, err
	}
	dst = resize(dst, EdgeDim)
	e.edge(dst)
	return dst, nil
}

// Edge pixel states during Canny's hysteresis.
const (
	edgeNone      = iota // below the low threshold or not a local maximum
	edgeCandidate        // local maximum above the low threshold
	edgeYes              // edge
)

// edge computes the edge direction histogram of the prepared image into dst.
func (e *Extractor) edge(dst []float32) {
	w, h := e.w, e.h
	n := w * h
	e.smooth = grow(e.smooth, n)
	e.blurTmp = grow(e.blurTmp, n)
	gaussianBlur(e.y[:n], e.smooth, e.blurTmp, w, h, edgeSigma)
	e.gx, e.gy, e.mag = grow(e.gx, n), grow(e.gy, n), grow(e.mag, n)
	sobel(e.smooth, e.gx, e.gy, e.mag, w, h)

	// Non-maximum suppression: keep pixels whose magnitude is a maximum along
	// the gradient direction, quantised to 0°, 45°, 90°, 135°. The comparison
	// is strict on one side only (as OpenCV's), so a two-pixel-wide plateau
	// keeps one pixel rather than none.
	st := grow(e.edgeState, n)
	e.edgeState = st
	e.stack = e.stack[:0]
	mag, gx, gy := e.mag, e.gx, e.gy
	const tan22, tan67 = 0.41421356, 2.41421356
	at := func(x, y int) float32 {
		if x < 0 || x >= w || y < 0 || y >= h {
			return 0
		}
		return mag[y*w+x]
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := y*w + x
			m := mag[i]
			st[i] = edgeNone
			if m < edgeLow {
				continue
			}
			ax, ay := abs32(gx[i]), abs32(gy[i])
			var m1, m2 float32
			switch {
			case ay <= ax*tan22: // horizontal gradient
				m1, m2 = at(x-1, y), at(x+1, y)
			case ay >= ax*tan67: // vertical gradient
				m1, m2 = at(x, y-1), at(x, y+1)
			case (gx[i] > 0) == (gy[i] > 0): // towards lower right (y down)
				m1, m2 = at(x-1, y-1), at(x+1, y+1)
			default:
				m1, m2 = at(x+1, y-1), at(x-1, y+1)
			}
			if m > m1 && m >= m2 {
				st[i] = edgeCandidate
				if m >= edgeHigh {
					st[i] = edgeYes
					e.stack = append(e.stack, int32(i))
				}
			}
		}
	}
	// Hysteresis: grow edges from the strong pixels through 8-connected
	// candidates.
	for len(e.stack) > 0 {
		i := int(e.stack[len(e.stack)-1])
		e.stack = e.stack[:len(e.stack)-1]
		x, y := i%w, i/w
		for dy := -1; dy <= 1; dy++ {
			for dx := -1; dx <= 1; dx++ {
				xx, yy := x+dx, y+dy
				if xx < 0 || xx >= w || yy < 0 || yy >= h {
					continue
				}
				if j := yy*w + xx; st[j] == edgeCandidate {
					st[j] = edgeYes
					e.stack = append(e.stack, int32(j))
				}
			}
		}
	}

	var hist [edgeDirs]int
	edges := 0
	for i, s := range st {
		if s != edgeYes {
			continue
		}
		edges++
		deg := math.Atan2(-float64(gy[i]), float64(gx[i])) * 180 / math.Pi
		k := int(math.Floor(deg/10+0.5)) % edgeDirs
		if k < 0 {
			k += edgeDirs
		}
		hist[k]++
	}
	if edges > 0 {
		for k, c := range hist {
			dst[k] = float32(float64(c) / float64(edges))
		}
	}
	dst[edgeDirs] = float32(float64(n-edges) / float64(n))
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}

// reflect101 maps an index outside [0, n) back inside by mirroring about the
// edge samples without repeating them (…2 1 | 0 1 2 … n−1 | n−2 …), repeated
// for kernels wider than the image; with n = 1 every index maps to 0.
func reflect101(p, n int) int {
	if n == 1 {
		return 0
	}
	for p < 0 || p >= n {
		if p < 0 {
			p = -p
		} else {
			p = 2*(n-1) - p
		}
	}
	return p
}

// gaussianKernel returns the normalised Gaussian of standard deviation sigma,
// radius ⌈3σ⌉, as its right half (centre first).
func gaussianKernel(sigma float64) []float32 {
	r := int(math.Ceil(3 * sigma))
	full := make([]float64, r+1)
	sum := 0.0
	for i := range full {
		full[i] = math.Exp(-float64(i*i) / (2 * sigma * sigma))
		sum += full[i]
		if i > 0 {
			sum += full[i]
		}
	}
	k := make([]float32, r+1)
	for i := range k {
		k[i] = float32(full[i] / sum)
	}
	return k
}

// gaussianBlur convolves the w×h plane src with a Gaussian of standard
// deviation sigma into dst, separably through tmp, with reflect-101 borders
// so that the border of the image makes no edge of its own.
func gaussianBlur(src, dst, tmp []float32, w, h int, sigma float64) {
	k := gaussianKernel(sigma)
	r := len(k) - 1
	for y := 0; y < h; y++ {
		row := src[y*w : y*w+w]
		out := tmp[y*w : y*w+w]
		for x := range out {
			s := k[0] * row[x]
			if x >= r && x+r < w {
				for t := 1; t <= r; t++ {
					s += k[t] * (row[x-t] + row[x+t])
				}
			} else {
				for t := 1; t <= r; t++ {
					s += k[t] * (row[reflect101(x-t, w)] + row[reflect101(x+t, w)])
				}
			}
			out[x] = s
		}
	}
	for y := 0; y < h; y++ {
		out := dst[y*w : y*w+w]
		c := tmp[y*w : y*w+w]
		for x := range out {
			out[x] = k[0] * c[x]
		}
		for t := 1; t <= r; t++ {
			a := tmp[reflect101(y-t, h)*w:][:w]
			b := tmp[reflect101(y+t, h)*w:][:w]
			kt := k[t]
			for x := range out {
				out[x] += kt * (a[x] + b[x])
			}
		}
	}
}

// sobel computes the Sobel gradient of the w×h plane src, divided by 8 so
// that a ramp of slope a gives a, and its magnitude, with reflect-101
// borders.
func sobel(src, gx, gy, mag []float32, w, h int) {
	for y := 0; y < h; y++ {
		up := src[reflect101(y-1, h)*w:][:w]
		mid := src[y*w:][:w]
		dn := src[reflect101(y+1, h)*w:][:w]
		for x := 0; x < w; x++ {
			xl, xr := reflect101(x-1, w), reflect101(x+1, w)
			dx := (up[xr] - up[xl]) + 2*(mid[xr]-mid[xl]) + (dn[xr] - dn[xl])
			dy := (dn[xl] - up[xl]) + 2*(dn[x]-up[x]) + (dn[xr] - up[xr])
			dx, dy = dx/8, dy/8
			i := y*w + x
			gx[i], gy[i] = dx, dy
			mag[i] = float32(math.Sqrt(float64(dx*dx + dy*dy)))
		}
	}
}
