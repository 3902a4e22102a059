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
// The horizontal pass is made of calls of convSym, which computes
// k[0]·centre + Σ k[i]·(left_i + right_i) over contiguous memory with no
// border tests: on the row itself, but for the r or a few more samples at
// either end, which convolve a copy of the samples around them padded by
// reflection (rather than copying whole rows), the parts cut so
// that the vector code does all the work. The horizontally filtered rows
// live in a ring of 2r+4 rows (e.tmp), filled just ahead of the vertical
// pass, so that the intermediate image never leaves the cache. The
// vertical pass makes four rows at a time (convSym4), with the row indices
// reflected into the offsets of the rows it reads, and loads each of those
// rows once for all four: the ring, larger than L1 for all but the
// smallest kernels, is read from L2, where a pass of one row at a time
// would be bound by its two loads per tap and vector.
func (e *Extractor) blur(src, dst []float32, w, h int, k []float32) {
	e.blurFrom(src, nil, dst, w, h, k)
}

// blurFrom is blur of the rows of src, or, if up is not nil, of those that
// up makes.
func (e *Extractor) blurFrom(src []float32, up *upRows, dst []float32, w, h int, k []float32) {
	r := len(k) - 1
	ring := min(2*r+4, h)
	// The ring's rows are an odd number of 64-byte lines apart, so that
	// the same column of all of them falls in different cache sets: rows
	// a power of two apart (2048 floats at 1024×768) all fell in one L1
	// set, and the vertical pass missed on nearly every load.
	stride := ((w+15)/16 | 1) * 16
	e.tmp = grow(e.tmp, (ring-1)*stride+w)
	tmp := e.tmp
	e.pad = grow(e.pad, w+4*r+16)
	pad := e.pad
	if cap(e.offs) < 2*r+4 {
		e.offs = make([]int, 2*r+4)
	}
	// slot is the offset in tmp of filtered row y.
	slot := func(y int) int { return y % ring * stride }

	next := 0 // next row to filter horizontally
	// fill filters the rows up to last (at most h−1) into the ring.
	fill := func(last int) {
		offs := e.offs[:2*r]
		for i := 1; i <= r; i++ {
			offs[2*i-2], offs[2*i-1] = -i, i
		}
		for ; next <= min(h-1, last); next++ {
			var row []float32
			if up != nil {
				row = up.row(next)
			} else {
				row = src[next*w : next*w+w]
			}
			out := tmp[slot(next):][:w]
			if w < 4*r+16 {
				copy(pad[r:r+w], row)
				for t := 1; t <= r; t++ {
					pad[r-t] = row[reflect101(-t, w)]
					pad[r+w-1+t] = row[reflect101(w-1+t, w)]
				}
				convSym(out, pad, r, offs, k)
				continue
			}
			// Only the r samples at either end reach past the row: the
			// first el and the last er samples (el, er ≥ r, chosen so that
			// every part is a multiple of 8 long, as far as w allows)
			// convolve a copy of the samples around them, reflected at the
			// end of the row, the rest the row itself.
			el := (r + 7) &^ 7
			er := w - el - (w-el-r)&^7
			left := pad[:el+2*r]
			copy(left[r:], row[:el+r])
			right := pad[el+2*r : el+er+4*r]
			copy(right, row[w-er-r:])
			for t := 1; t <= r; t++ {
				left[r-t] = row[t]
				right[er+r-1+t] = row[w-1-t]
			}
			convSym(out[:el], left, r, offs, k)
			convSym(out[el:w-er], row, el, offs, k)
			convSym(out[w-er:], right, r, offs, k)
		}
	}
	// Rows y−r … y+3+r (reflected into the image) make rows y … y+3; the
	// ring holds the 2r+4 rows up to the last one filtered.
	y := 0
	for ; y+3 < h; y += 4 {
		fill(y + 3 + r)
		rows := e.offs[:2*r+4]
		for t := range rows {
			rows[t] = slot(reflect101(y-r+t, h))
		}
		convSym4(dst[y*w:(y+4)*w], w, w, tmp, rows, k)
	}
	for ; y < h; y++ { // the last h mod 4 rows
		fill(y + r)
		offs := e.offs[:2*r]
		c := slot(y)
		for i := 1; i <= r; i++ {
			offs[2*i-2], offs[2*i-1] = slot(reflect101(y-i, h))-c, slot(reflect101(y+i, h))-c
		}
		convSym(dst[y*w:y*w+w], tmp, c, offs, k)
	}
}

// convSym4 sets four rows, for j = 0 … 3, x in [0, n) and r = len(k)−1,
//
//	dst[j·stride+x] = k[0]·src[rows[r+j]+x] + Σ_{i=1..r} k[i]·(src[rows[r+j−i]+x] + src[rows[r+j+i]+x])
//
// that is, convSym of the consecutive rows y … y+3 when rows[t] is the
// offset of row y−r+t (t = 0 … 2r+3), bit for bit; the vector code loads
// every row once for all four. It panics if an offset reaches outside src.
func convSym4(dst []float32, stride, n int, src []float32, rows []int, k []float32) {
	if n == 0 {
		return
	}
	_ = dst[3*stride+n-1]
	if len(rows) != 2*len(k)+2 {
		panic("sift: convSym4: rows do not match the kernel")
	}
	for _, o := range rows {
		if o < 0 || o+n > len(src) {
			panic("sift: convSym4: row outside the source")
		}
	}
	m := 0
	if useAVX {
		m = n &^ 7
		if m > 0 {
			convSym4AVX(&dst[0], stride, &src[0], m, rows, k)
		}
	}
	if m < n {
		convSym4Go(dst[m:], stride, n-m, src[m:], rows, k)
	}
}

// convSym4Go is convSym4 in Go, row by row, with convSymGo's sums.
func convSym4Go(dst []float32, stride, n int, src []float32, rows []int, k []float32) {
	r := len(k) - 1
	var buf [32]int // the default options' kernels need at most 26
	o := buf[:0]
	if 2*r > len(buf) {
		o = make([]int, 2*r)
	}
	o = o[:2*r]
	for j := range 4 {
		c := rows[r+j]
		for i := 1; i <= r; i++ {
			o[2*i-2], o[2*i-1] = rows[r+j-i]-c, rows[r+j+i]-c
		}
		convSymGo(dst[j*stride:j*stride+n], src, c, o, k)
	}
}

// convSym sets, for x in [0, len(out)),
//
//	out[x] = k[0]·src[c+x] + Σ_{i=1..r} k[i]·(src[c+x+offs[2i−2]] + src[c+x+offs[2i−1]])
//
// with r = len(k)−1, accumulating the taps in order of i and rounding every
// product to float32, so that the vector and the scalar code (convSymGo)
// give identical results. It panics if an offset reaches outside src.
func convSym(out, src []float32, c int, offs []int, k []float32) {
	n := len(out)
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

// convRows sets, for each t and x in [0, 8), with r = len(k)−1,
//
//	dst[8t+x] = k[0]·src[rows[t]+x] + Σ_{i=1..r} k[i]·(src[rows[t]+x−i] + src[rows[t]+x+i])
//
// that is, convSym of 8 samples of each of the rows, bit for bit: what the
// horizontal pass of the blur gives those samples, away from the ends of
// their rows. It panics if a row reaches outside src.
func convRows(dst, src []float32, rows []int, k []float32) {
	r := len(k) - 1
	if len(rows) == 0 {
		return
	}
	_ = dst[8*len(rows)-1]
	for _, o := range rows {
		if o-r < 0 || o+7+r >= len(src) {
			panic("sift: convRows: row outside the source")
		}
	}
	t0 := 0
	if useAVX {
		t0 = len(rows) &^ 3
		if t0 > 0 {
			convRowsAVX(&dst[0], &src[0], rows[:t0], k)
		}
	}
	if t0 == len(rows) {
		return
	}
	var buf [32]int // the default options' kernels need at most 26
	offs := buf[:0]
	if 2*r > len(buf) {
		offs = make([]int, 2*r)
	}
	offs = offs[:2*r]
	for i := 1; i <= r; i++ {
		offs[2*i-2], offs[2*i-1] = -i, i
	}
	for t := t0; t < len(rows); t++ {
		convSymGo(dst[8*t:8*t+8], src, rows[t], offs, k)
	}
}
