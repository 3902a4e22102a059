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
// into dst, separably. src and dst must not overlap.
//
// Both passes are calls of convSym, which computes k[0]·centre +
// Σ k[i]·(left_i + right_i) for a whole row over contiguous memory with no
// border tests: the horizontal pass convolves a copy of the row padded by
// reflection, the vertical pass reflects row indices into the offsets of the
// rows it reads. The horizontally filtered rows live in a ring of 2r+B rows
// (e.tmp), filled just ahead of the vertical pass, so that the intermediate
// image never leaves the cache.
//
// The vertical pass makes blurRows output rows at a time, in strips of
// blurStrip columns: each output row reads 2r+1 rows of the ring, which for
// the larger kernels (r up to 13) is more than the L1 cache holds at full
// width, so that row after row the same ring rows came from L2, whose
// bandwidth then bounded the pass. A strip of the 2r+B rows stays in L1
// while the B rows are made from it. Every output is the same sum in the
// same order as before: only the order in which outputs are made changes.
func (e *Extractor) blur(src, dst []float32, w, h int, k []float32) {
	r := len(k) - 1
	ring := min(2*r+blurRows, h)
	e.tmp = grow(e.tmp, ring*w)
	tmp := e.tmp
	e.pad = grow(e.pad, w+2*r)
	pad := e.pad
	nOffs := 2 * r * (blurRows + 1)
	if cap(e.offs) < nOffs {
		e.offs = make([]int, nOffs)
	}
	hoffs := e.offs[:2*r]
	for i := 1; i <= r; i++ {
		hoffs[2*i-2], hoffs[2*i-1] = -i, i
	}
	// slot is the offset in tmp of filtered row y.
	slot := func(y int) int { return y % ring * w }

	next := 0 // next row to filter horizontally
	for y0 := 0; y0 < h; y0 += blurRows {
		y1 := min(y0+blurRows, h)
		// Rows y0−r..y1−1+r (reflected into the image) are needed; the
		// ring holds the 2r+B rows up to the last one filtered.
		for ; next <= min(h-1, y1-1+r); next++ {
			row := src[next*w : next*w+w]
			copy(pad[r:r+w], row)
			for t := 1; t <= r; t++ {
				pad[r-t] = row[reflect101(-t, w)]
				pad[r+w-1+t] = row[reflect101(w-1+t, w)]
			}
			s := slot(next)
			convSym(tmp[s:s+w], pad, r, hoffs, k)
		}
		// The ring offsets of each output row's taps, checked once for
		// the whole row: every strip lies inside it.
		for y := y0; y < y1; y++ {
			offs := e.offs[2*r*(1+y-y0) : 2*r*(2+y-y0)]
			c := slot(y)
			for i := 1; i <= r; i++ {
				ya, yb := y-i, y+i
				if ya < 0 || yb >= h {
					ya, yb = reflect101(ya, h), reflect101(yb, h)
				}
				offs[2*i-2], offs[2*i-1] = slot(ya)-c, slot(yb)-c
			}
			checkConvSym(w, tmp, c, offs, k)
		}
		for x0 := 0; x0 < w; x0 += blurStrip {
			x1 := min(x0+blurStrip, w)
			for y := y0; y < y1; y++ {
				offs := e.offs[2*r*(1+y-y0) : 2*r*(2+y-y0)]
				convSymUnchecked(dst[y*w+x0:y*w+x1], tmp, slot(y)+x0, offs, k)
			}
		}
	}
}

// blurRows and blurStrip are the rows and columns of a block of the
// vertical pass: 2r+blurRows ring rows of blurStrip floats (17 KB for r =
// 13) fit in L1 with room to spare.
const (
	blurRows  = 8
	blurStrip = 128
)

// convSym sets, for x in [0, len(out)),
//
//	out[x] = k[0]·src[c+x] + Σ_{i=1..r} k[i]·(src[c+x+offs[2i−2]] + src[c+x+offs[2i−1]])
//
// with r = len(k)−1, accumulating the taps in order of i and rounding every
// product to float32, so that the vector and the scalar code (convSymGo)
// give identical results. It panics if an offset reaches outside src.
func convSym(out, src []float32, c int, offs []int, k []float32) {
	checkConvSym(len(out), src, c, offs, k)
	convSymUnchecked(out, src, c, offs, k)
}

// checkConvSym panics unless convSym can compute n outputs with these
// arguments: the offsets match the kernel and reach only inside src.
func checkConvSym(n int, src []float32, c int, offs []int, k []float32) {
	if len(offs) != 2*(len(k)-1) {
		panic("sift: convSym: offsets do not match the kernel")
	}
	lo, hi := 0, 0
	for _, o := range offs {
		lo, hi = min(lo, o), max(hi, o)
	}
	if c+lo < 0 || c+hi+n > len(src) {
		panic("sift: convSym: offsets outside the source")
	}
}

// convSymUnchecked is convSym once checkConvSym has passed for len(out)
// outputs at c, or for more outputs starting at or before c.
func convSymUnchecked(out, src []float32, c int, offs []int, k []float32) {
	n := len(out)
	m := 0
	if useAVX {
		m = n &^ 7
		if m > 0 {
			convSymAVX(&out[0], &src[c], m, offs, k)
		}
	}
	if m < n {
		convSymGo(out[m:], src, c+m, offs, k)
	}
}

// convSymGo is convSym in Go. Taps are applied up to four per sweep over
// the row, which keeps the partial sum in a register across them instead of
// reloading and storing out for each; the explicit float32 conversions
// forbid fusing a product into the following addition (which some
// architectures would), so rounding is the same on every platform.
func convSymGo(out, src []float32, c int, offs []int, k []float32) {
	n := len(out)
	r := len(k) - 1
	ctr := src[c : c+n]
	at := func(i int) []float32 { o := c + offs[i]; return src[o : o+n] }
	k0 := k[0]
	i := 1
	if r >= 3 {
		a1, b1, a2, b2, a3, b3 := at(0), at(1), at(2), at(3), at(4), at(5)
		k1, k2, k3 := k[1], k[2], k[3]
		for x := range out {
			out[x] = float32(k0*ctr[x]) + float32(k1*(a1[x]+b1[x])) + float32(k2*(a2[x]+b2[x])) +
				float32(k3*(a3[x]+b3[x]))
		}
		i = 4
	} else {
		for x := range out {
			out[x] = k0 * ctr[x]
		}
	}
	for ; i+3 <= r; i += 4 {
		a1, b1, a2, b2 := at(2*i-2), at(2*i-1), at(2*i), at(2*i+1)
		a3, b3, a4, b4 := at(2*i+2), at(2*i+3), at(2*i+4), at(2*i+5)
		k1, k2, k3, k4 := k[i], k[i+1], k[i+2], k[i+3]
		for x := range out {
			out[x] = out[x] + float32(k1*(a1[x]+b1[x])) + float32(k2*(a2[x]+b2[x])) +
				float32(k3*(a3[x]+b3[x])) + float32(k4*(a4[x]+b4[x]))
		}
	}
	for ; i <= r; i++ {
		a, b := at(2*i-2), at(2*i-1)
		ki := k[i]
		for x := range out {
			out[x] = out[x] + float32(ki*(a[x]+b[x]))
		}
	}
}
