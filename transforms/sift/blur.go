package sift

import "math"

// gaussianKernel returns the right half (centre first) of the normalised
// Gaussian kernel OpenCV's GaussianBlur uses for float images: size
// round(8σ+1)|1, i.e. a radius of about 4σ, which truncates less than 1e-4 of
// the mass.
func gaussianKernel(sigma float64) []float32 {
	size := int(math.RoundToEven(sigma*8+1)) | 1
	r := size / 2
	full := make([]float64, size)
	sum := 0.0
	for i := range full {
		x := float64(i - r)
		full[i] = math.Exp(-x * x / (2 * sigma * sigma))
		sum += full[i]
	}
	k := make([]float32, r+1)
	for i := range k {
		k[i] = float32(full[r+i] / sum)
	}
	return k
}

// reflect101 maps an index outside [0, n) back inside by mirroring about the
// edge samples without repeating them (…2 1 | 0 1 2 … n−2 n−1 | n−2 …),
// OpenCV's default border; repeated for kernels wider than the image.
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

// blur convolves src (w×h) with the symmetric kernel k (half, centre first)
// into dst, separably: rows into e.tmp, then columns into dst. src and dst
// must not overlap.
//
// Both passes compute k[0]·centre + Σ k[i]·(left_i + right_i) for a whole
// row at a time (convRow), so the inner loops run over contiguous memory with
// no border tests; borders are handled by building a reflected copy of each
// row (horizontal pass) or by reflecting row indices (vertical pass).
func (e *Extractor) blur(src, dst []float32, w, h int, k []float32) {
	r := len(k) - 1
	tmp := e.tmp[:w*h]
	e.pad = grow(e.pad, w+2*r)
	pad := e.pad
	var loBuf, hiBuf [32][]float32
	lo, hi := loBuf[:0], hiBuf[:0]
	if r+1 > len(loBuf) {
		lo, hi = make([][]float32, 0, r+1), make([][]float32, 0, r+1)
	}
	lo, hi = lo[:r+1], hi[:r+1]

	for i := 1; i <= r; i++ {
		lo[i] = pad[r-i : r-i+w]
		hi[i] = pad[r+i : r+i+w]
	}
	for y := 0; y < h; y++ {
		row := src[y*w : y*w+w]
		copy(pad[r:r+w], row)
		for t := 1; t <= r; t++ {
			pad[r-t] = row[reflect101(-t, w)]
			pad[r+w-1+t] = row[reflect101(w-1+t, w)]
		}
		convRow(tmp[y*w:y*w+w], pad[r:r+w], lo, hi, k)
	}

	for y := 0; y < h; y++ {
		for i := 1; i <= r; i++ {
			ya, yb := y-i, y+i
			if ya < 0 || yb >= h {
				ya, yb = reflect101(ya, h), reflect101(yb, h)
			}
			lo[i] = tmp[ya*w : ya*w+w]
			hi[i] = tmp[yb*w : yb*w+w]
		}
		convRow(dst[y*w:y*w+w], tmp[y*w:y*w+w], lo, hi, k)
	}
}

// convRow sets out[x] = k[0]·c[x] + Σ_{i=1..r} k[i]·(lo[i][x] + hi[i][x]).
// Taps are applied four per sweep over the row, which keeps the partial sum
// in a register across them instead of reloading and storing out for each.
func convRow(out, c []float32, lo, hi [][]float32, k []float32) {
	n := len(out)
	r := len(k) - 1
	c = c[:n]
	k0 := k[0]
	i := 1
	if r >= 3 {
		a1, b1, a2, b2, a3, b3 := lo[1][:n], hi[1][:n], lo[2][:n], hi[2][:n], lo[3][:n], hi[3][:n]
		k1, k2, k3 := k[1], k[2], k[3]
		for x := range out {
			out[x] = k0*c[x] + k1*(a1[x]+b1[x]) + k2*(a2[x]+b2[x]) + k3*(a3[x]+b3[x])
		}
		i = 4
	} else {
		for x := range out {
			out[x] = k0 * c[x]
		}
	}
	for ; i+3 <= r; i += 4 {
		a1, b1, a2, b2 := lo[i][:n], hi[i][:n], lo[i+1][:n], hi[i+1][:n]
		a3, b3, a4, b4 := lo[i+2][:n], hi[i+2][:n], lo[i+3][:n], hi[i+3][:n]
		k1, k2, k3, k4 := k[i], k[i+1], k[i+2], k[i+3]
		for x := range out {
			out[x] += k1*(a1[x]+b1[x]) + k2*(a2[x]+b2[x]) + k3*(a3[x]+b3[x]) + k4*(a4[x]+b4[x])
		}
	}
	for ; i <= r; i++ {
		a, b := lo[i][:n], hi[i][:n]
		ki := k[i]
		for x := range out {
			out[x] += ki * (a[x] + b[x])
		}
	}
}
