package nn

import (
	"fmt"
	"math"
)

// The blocked kernel scores a strip of stripRows points against a panel of
// panelCols centroids per call: twelve 8-float accumulators, two centroid
// vectors and two broadcasts fill the sixteen AVX registers. A tile of
// tileStrips strips (tileRows points, 48 kB of float32 at dim 128) meets
// every panel in turn, so each 8 kB panel is read once from memory per tile
// and then from L1 for all the tile's strips.
const (
	stripRows  = 6
	panelCols  = 16
	tileStrips = 16
	tileRows   = stripRows * tileStrips

	// maxCandidates bounds the centroids a point keeps for the exact
	// re-check; a point with more inside its window (as many near-equal
	// distances) falls back to Nearest.
	maxCandidates = 32
)

// Exact answers exact nearest-centroid queries for batches of points, with
// the same answers as Nearest — the same centroid, ties to the lower index,
// and the same distance to the last bit — but computed mostly as a matrix
// product: for every point x and centroid c it scores
//
//	A(c) = ‖c‖² − 2·x·c = ‖x − c‖² − ‖x‖²
//
// in float32 over cache-sized tiles with an AVX2/FMA kernel, then
// recomputes ‖x − c‖² as Nearest does for the few centroids whose A lies
// within a rounding-error bound of the smallest. Nearest's scalar loop
// does about one multiply-add per cycle; the kernel does sixteen. On CPUs
// without AVX2 and FMA, Exact answers with Nearest itself.
//
// # Why the answers are Nearest's
//
// A(c) differs from its exact value by at most E_A = 4u·‖c‖² + (2γ + 3u)·
// ‖x‖·‖c‖ (u = 2⁻²⁴, γ ≈ dim·u bounds a float32 dot product of dim terms,
// fused or not), and Nearest's ‖x − c‖² differs from the exact one by at
// most γ_S·‖x − c‖² (γ_S = (dim + 8)·u covers its four accumulators and
// their tails). Any centroid that Nearest could rank at or before the one
// with the smallest A, m, therefore has A(c) ≤ A(m) + 2E_A + 2.1·γ_S·‖x −
// m‖²; Exact keeps every centroid under twice that margin and re-checks
// them in index order with Nearest's own distance. For SIFT (‖x‖ ≈ 512)
// the margin is about 20 where squared distances are tens of thousands
// apart by hundreds: ETH-80 descriptors against 1K words re-check one
// centroid per point on average. Points or centroids so large that
// the expansion could overflow float32, or not finite, go to Nearest.
//
// An Exact is read-only once built and may be shared by goroutines, each
// with its own ExactScratch. It holds a packed copy of the centroids (4·K·dim
// bytes, rounded up to 16 centroids and 4 coordinates) and their norms.
type Exact struct {
	centroids  []float32 // k×dim, row-major, as given; for the re-check
	k, dim     int
	pdim       int       // dim rounded up to a multiple of 4, zero-padded
	panels     []float32 // panel p, coordinate j, lane l at (p·pdim + j)·16 + l
	norms      []float32 // ‖c‖², +Inf for the padding lanes of the last panel
	cmax, cmx2 float64   // the largest ‖c‖ and its square
	expand     bool      // false: every point goes to Nearest
}

// blocked reports whether Exact searches by tiles, which it does with the
// vector kernel only: the portable kernel (panelGo) measured half the speed
// of Nearest's early-exit loop on real SIFT descriptors (akmbench built
// with -tags purego: 15,500 against 29,600 descriptors per CPU-second at 1K
// words), so without AVX2 and FMA Exact answers through Nearest. The tests
// set it to run the tiled search with panelGo as well.
var blocked = useFMA

// expandLimit bounds (‖x‖ + max‖c‖)², which bounds |A(c)| and every
// partial dot product, far below float32's 3.4·10³⁸.
const expandLimit = 1e36

// NewExact packs the k = len(centroids)/dim centroids (row-major) for
// batched exact search. Exact keeps centroids without copying for the
// re-check; the caller must not modify them while it is in use. NewExact
// costs O(K·dim). It panics, as Nearest does, if dim < 1 or len(centroids)
// is not a positive multiple of dim.
func NewExact(centroids []float32, dim int) *Exact {
	if dim < 1 || len(centroids) == 0 || len(centroids)%dim != 0 {
		panic(fmt.Sprintf("nn: NewExact with dim %d and %d centroid values", dim, len(centroids)))
	}
	k := len(centroids) / dim
	pdim := (dim + 3) &^ 3
	np := (k + panelCols - 1) / panelCols
	e := &Exact{
		centroids: centroids,
		k:         k,
		dim:       dim,
		pdim:      pdim,
		panels:    make([]float32, np*pdim*panelCols),
		norms:     make([]float32, np*panelCols),
		expand:    true,
	}
	for i := range e.norms[k:] {
		e.norms[k+i] = float32(math.Inf(1))
	}
	for c := range k {
		e.packRow(c, centroids[c*dim:(c+1)*dim])
	}
	e.cmax = math.Sqrt(e.cmx2)
	if !e.expand || !(e.cmx2 < expandLimit) {
		e.expand = false
	}
	return e
}

// packRow writes row into lane c of the panels and its squared norm into
// norms[c], and folds the norm into cmx2 and expand (cmax is left to the
// caller, once every row is in).
func (e *Exact) packRow(c int, row []float32) {
	base := c / panelCols * e.pdim * panelCols
	l := c % panelCols
	var n2 float64
	for j, v := range row {
		e.panels[base+j*panelCols+l] = v
		n2 += float64(v) * float64(v)
	}
	if math.IsNaN(n2) || math.IsInf(n2, 0) {
		e.expand = false
	}
	e.norms[c] = float32(n2)
	e.cmx2 = max(e.cmx2, n2)
}

// K returns the number of centroids.
func (e *Exact) K() int { return e.k }

// Dim returns the dimension of the centroids.
func (e *Exact) Dim() int { return e.dim }

// Centroids returns the centroids e searches (not a copy).
func (e *Exact) Centroids() []float32 { return e.centroids }

// ExactScratch is the working memory of one goroutine's Exact searches: a
// tile of packed points and their candidates, about 80 kB at dim 128
// whatever the number of points or centroids. The zero value is ready to
// use.
type ExactScratch struct {
	xs   []float32         // the tile, strip by strip: strip s, coordinate j, point r at (s·pdim + j)·6 + r
	thr  [tileRows]float32 // each point's current threshold on A; −Inf for padding and fallback
	row  [tileRows]rowState
	cand [tileRows * maxCandidates]candidate
	out  [stripRows * panelCols]float32 // the kernel's A values for one strip and panel
	x    []float32                      // one byte point widened, for the re-check
}

// rowState is what the search knows about one point of the tile.
type rowState struct {
	xn, xn2  float64 // ‖x‖, ‖x‖²
	amin     float32 // the smallest A so far
	n        int32   // candidates kept
	fallback bool    // resolve with Nearest
}

// candidate is a centroid whose A was under the point's threshold when
// scored.
type candidate struct {
	c int32
	a float32
}

// Assign sets labels[i] to the index of the centroid nearest to point i of
// data and dist[i] to its squared distance, exactly as Nearest does, and
// returns how many labels changed from their previous value (set them to
// −1 to count every point): the assignment step of exact Lloyd.
// It does not allocate once scratch has grown; scratch may be nil. It
// panics if the lengths of data, labels and dist disagree with Dim().
func (e *Exact) Assign(data []float32, labels []int32, dist []float32, scratch *ExactScratch) (changed int) {
	if len(data)%e.dim != 0 || len(labels) != len(data)/e.dim || len(dist) != len(labels) {
		panic(fmt.Sprintf("nn: Exact.Assign with dim %d, %d data values, %d labels, %d distances", e.dim, len(data), len(labels), len(dist)))
	}
	if scratch == nil {
		scratch = new(ExactScratch)
	}
	s := scratch
	d := e.dim
	if !blocked {
		for i := range labels {
			c, dd := Nearest(e.centroids, d, data[i*d:(i+1)*d])
			if labels[i] != int32(c) {
				labels[i] = int32(c)
				changed++
			}
			dist[i] = dd
		}
		return changed
	}
	for lo := 0; lo < len(labels); lo += tileRows {
		n := min(tileRows, len(labels)-lo)
		e.pack(s, n, data[lo*d:(lo+n)*d], nil)
		e.search(s, n)
		for i := range n {
			c, dd := e.resolve(s, i, data[(lo+i)*d:(lo+i+1)*d])
			if labels[lo+i] != int32(c) {
				labels[lo+i] = int32(c)
				changed++
			}
			dist[lo+i] = dd
		}
	}
	return changed
}

// QuantizeBytes appends to words the index of the nearest centroid (as
// Nearest finds it) of each of the len(desc)/Dim() byte descriptors in desc
// (row-major, one byte per coordinate, as SIFT's), in order, and returns the
// extended slice. The bytes are widened to float32 once, as the tile is
// packed. It does not allocate once scratch has grown and words has the
// capacity; scratch may be nil. It panics if len(desc) is not a multiple of
// Dim().
func (e *Exact) QuantizeBytes(words []uint32, desc []byte, scratch *ExactScratch) []uint32 {
	if len(desc)%e.dim != 0 {
		panic(fmt.Sprintf("nn: Exact.QuantizeBytes of %d bytes, not a whole number of %d-byte descriptors", len(desc), e.dim))
	}
	if scratch == nil {
		scratch = new(ExactScratch)
	}
	s := scratch
	d := e.dim
	if cap(s.x) < d {
		s.x = make([]float32, d)
	}
	x := s.x[:d]
	total := len(desc) / d
	if !blocked {
		for i := range total {
			for j, b := range desc[i*d : (i+1)*d] {
				x[j] = float32(b)
			}
			c, _ := Nearest(e.centroids, d, x)
			words = append(words, uint32(c))
		}
		return words
	}
	for lo := 0; lo < total; lo += tileRows {
		n := min(tileRows, total-lo)
		e.pack(s, n, nil, desc[lo*d:(lo+n)*d])
		e.search(s, n)
		for i := range n {
			for j, b := range desc[(lo+i)*d : (lo+i+1)*d] {
				x[j] = float32(b)
			}
			c, _ := e.resolve(s, i, x)
			words = append(words, uint32(c))
		}
	}
	return words
}

// pack lays the n ≤ tileRows points of the next tile out strip by strip,
// from floats (fdata) or bytes (bdata), zero-padding the coordinates to
// pdim and the last strip to stripRows points, and resets their search.
func (e *Exact) pack(s *ExactScratch, n int, fdata []float32, bdata []byte) {
	strips := (n + stripRows - 1) / stripRows
	size := strips * stripRows * e.pdim
	if cap(s.xs) < tileRows*e.pdim {
		s.xs = make([]float32, tileRows*e.pdim)
	}
	xs := s.xs[:size]
	clear(xs)
	for i := range strips * stripRows {
		if i >= n {
			s.thr[i] = float32(math.Inf(-1))
			continue
		}
		base := i/stripRows*stripRows*e.pdim + i%stripRows
		var n2 float64
		if fdata != nil {
			for j, v := range fdata[i*e.dim : (i+1)*e.dim] {
				xs[base+j*stripRows] = v
				n2 += float64(v) * float64(v)
			}
		} else {
			var sq int64 // exact: at most dim·255²
			for j, b := range bdata[i*e.dim : (i+1)*e.dim] {
				xs[base+j*stripRows] = float32(b)
				sq += int64(b) * int64(b)
			}
			n2 = float64(sq)
		}
		xn := math.Sqrt(n2)
		r := &s.row[i]
		*r = rowState{xn: xn, xn2: n2, amin: float32(math.Inf(1))}
		// n2 is NaN or infinite for a point that is not finite.
		if !e.expand || !((xn+e.cmax)*(xn+e.cmax) < expandLimit) {
			r.fallback = true
			s.thr[i] = float32(math.Inf(-1))
			continue
		}
		s.thr[i] = math.MaxFloat32
	}
}

// search scores the first n points of the packed tile against every
// panel, keeping each point's candidates.
func (e *Exact) search(s *ExactScratch, n int) {
	strips := (n + stripRows - 1) / stripRows
	ps := e.pdim * panelCols
	xsz := e.pdim * stripRows
	fma := useFMA
	for p := range len(e.norms) / panelCols {
		panel := e.panels[p*ps : (p+1)*ps]
		norms := e.norms[p*panelCols : (p+1)*panelCols]
		for st := range strips {
			xs := s.xs[st*xsz : (st+1)*xsz]
			thr := s.thr[st*stripRows : (st+1)*stripRows]
			var mask uint64
			if fma {
				mask = panelFMA(&xs[0], &panel[0], e.pdim, &norms[0], &thr[0], &s.out[0])
			} else {
				mask = panelGo(xs, panel, norms, thr, &s.out)
			}
			for r := 0; mask != 0; r, mask = r+1, mask>>8 {
				if mask&0xff != 0 {
					e.hit(s, st*stripRows+r, p, s.out[r*panelCols:(r+1)*panelCols])
				}
			}
		}
	}
}

// panelGo computes, for the stripRows points of the strip xs and the
// panelCols centroids of panel (both packed, pdim = len(xs)/stripRows
// coordinates), out[r·16 + l] = norms[l] − 2·x_r·c_l, and returns a mask
// whose bit 8r + l%8 is set if out[r·16 + l] ≤ thr[r]. It is the
// portable kernel and the reference for panelFMA.
func panelGo(xs, panel, norms, thr []float32, out *[stripRows * panelCols]float32) uint64 {
	pdim := len(xs) / stripRows
	xs = xs[:pdim*stripRows]
	panel = panel[:pdim*panelCols]
	// Two points by four centroids at a time: eight accumulators that the
	// compiler keeps in registers, six loads for eight multiply-adds.
	for r := 0; r < stripRows; r += 2 {
		for l := 0; l < panelCols; l += 4 {
			var a0, a1, a2, a3, b0, b1, b2, b3 float32
			for j := range pdim {
				x := xs[j*stripRows+r : j*stripRows+r+2 : j*stripRows+r+2]
				c := panel[j*panelCols+l : j*panelCols+l+4 : j*panelCols+l+4]
				x0, x1 := x[0], x[1]
				a0 += x0 * c[0]
				a1 += x0 * c[1]
				a2 += x0 * c[2]
				a3 += x0 * c[3]
				b0 += x1 * c[0]
				b1 += x1 * c[1]
				b2 += x1 * c[2]
				b3 += x1 * c[3]
			}
			o := out[r*panelCols+l : r*panelCols+l+4 : r*panelCols+l+4]
			o[0], o[1], o[2], o[3] = a0, a1, a2, a3
			o = out[(r+1)*panelCols+l : (r+1)*panelCols+l+4 : (r+1)*panelCols+l+4]
			o[0], o[1], o[2], o[3] = b0, b1, b2, b3
		}
	}
	return panelScores(out, norms, thr)
}

// panelGoRows is panelGo with the strip's stripRows points read from their
// own rows (each at least pdim = len(panel)/panelCols long) instead of a
// packed strip: the same operations in the same order, and so the same
// scores and mask. It is the portable kernel and the reference for
// panelFMARows.
func panelGoRows(rows [][]float32, panel, norms, thr []float32, out *[stripRows * panelCols]float32) uint64 {
	pdim := len(panel) / panelCols
	rows = rows[:stripRows]
	for r := 0; r < stripRows; r += 2 {
		xa, xb := rows[r][:pdim], rows[r+1][:pdim]
		for l := 0; l < panelCols; l += 4 {
			var a0, a1, a2, a3, b0, b1, b2, b3 float32
			for j := range pdim {
				c := panel[j*panelCols+l : j*panelCols+l+4 : j*panelCols+l+4]
				x0, x1 := xa[j], xb[j]
				a0 += x0 * c[0]
				a1 += x0 * c[1]
				a2 += x0 * c[2]
				a3 += x0 * c[3]
				b0 += x1 * c[0]
				b1 += x1 * c[1]
				b2 += x1 * c[2]
				b3 += x1 * c[3]
			}
			o := out[r*panelCols+l : r*panelCols+l+4 : r*panelCols+l+4]
			o[0], o[1], o[2], o[3] = a0, a1, a2, a3
			o = out[(r+1)*panelCols+l : (r+1)*panelCols+l+4 : (r+1)*panelCols+l+4]
			o[0], o[1], o[2], o[3] = b0, b1, b2, b3
		}
	}
	return panelScores(out, norms, thr)
}

// panelScores turns the Go kernels' dot products out into scores
// ‖c‖² − 2x·c, as the assembly kernels do, and returns the mask of the
// scores at or below their row's threshold: bit 8r+l%8 for row r, lane l.
func panelScores(out *[stripRows * panelCols]float32, norms, thr []float32) uint64 {
	var mask uint64
	for r := range stripRows {
		t := thr[r]
		for l := range panelCols {
			v := out[r*panelCols+l]
			a := norms[l] - (v + v)
			out[r*panelCols+l] = a
			if a <= t {
				mask |= 1 << (8*r + l%8)
			}
		}
	}
	return mask
}

// kernelRows is the unpacked panel kernel in force: panelFMARows with
// AVX2, else panelGoRows. rows holds a strip's stripRows points.
func kernelRows(rows [][]float32, panel []float32, pdim int, norms, thr []float32, out *[stripRows * panelCols]float32) uint64 {
	if useFMA {
		rows = rows[:stripRows]
		for _, x := range rows {
			_ = x[pdim-1] // the assembly reads pdim coordinates of each row
		}
		return panelFMARows(&rows[0], &panel[0], pdim, &norms[0], &thr[0], &out[0])
	}
	return panelGoRows(rows, panel, norms, thr, out)
}

// searchRows is search for a tile whose points were not packed: rows[r]
// holds point r (pdim coordinates, zero past dim), and s.row and s.thr
// were set as pack sets them.
func (e *Exact) searchRows(s *ExactScratch, rows *[tileRows][]float32, n int) {
	strips := (n + stripRows - 1) / stripRows
	ps := e.pdim * panelCols
	for p := range len(e.norms) / panelCols {
		panel := e.panels[p*ps : (p+1)*ps]
		norms := e.norms[p*panelCols : (p+1)*panelCols]
		for st := range strips {
			thr := s.thr[st*stripRows : (st+1)*stripRows]
			mask := kernelRows(rows[st*stripRows:(st+1)*stripRows], panel, e.pdim, norms, thr, &s.out)
			for r := 0; mask != 0; r, mask = r+1, mask>>8 {
				if mask&0xff != 0 {
					e.hit(s, st*stripRows+r, p, s.out[r*panelCols:(r+1)*panelCols])
				}
			}
		}
	}
}

// hit records the A values of point i against panel p, some of which are
// under its threshold: it lowers the point's smallest A and threshold and
// keeps the centroids under the threshold.
func (e *Exact) hit(s *ExactScratch, i, p int, a []float32) {
	r := &s.row[i]
	m := r.amin
	for _, v := range a {
		m = min(m, v)
	}
	if m < r.amin {
		r.amin = m
		s.thr[i] = e.threshold(r, m)
	}
	t := s.thr[i]
	cand := s.cand[i*maxCandidates : (i+1)*maxCandidates]
	for l, v := range a {
		if !(v <= t) {
			continue
		}
		if r.n == maxCandidates {
			// Candidates kept under an older, higher threshold may be out
			// of the window now.
			k := int32(0)
			for _, c := range cand {
				if c.a <= t {
					cand[k] = c
					k++
				}
			}
			r.n = k
			if k == maxCandidates {
				r.fallback = true
				s.thr[i] = float32(math.Inf(-1))
				return
			}
		}
		cand[r.n] = candidate{c: int32(p*panelCols + l), a: v}
		r.n++
	}
}

// threshold returns the largest A a centroid can have and still be at
// least as near to the point as the centroid with A = m, as Nearest
// measures it: m plus twice the error bound of Exact's documentation, the
// rounding to float32 taken upwards.
func (e *Exact) threshold(r *rowState, m float32) float32 {
	const u = 0x1p-24
	gamma := 1.01 * float64(e.pdim+2) * u
	errA := 4*u*e.cmx2 + (2*gamma+3*u)*r.xn*e.cmax
	dHi := max(0, r.xn2+float64(m)+errA) // ≥ ‖x − m‖²
	gammaS := 1.01 * float64(e.dim+8) * u
	t := float64(m) + 2*(2*errA+2.1*gammaS*dHi)
	t32 := float32(t)
	if float64(t32) < t {
		t32 = math.Nextafter32(t32, float32(math.Inf(1)))
	}
	return t32
}

// resolve returns point i's nearest centroid and its distance as Nearest
// computes them, x being the point: the candidates still under the final
// threshold, in index order, measured with Nearest's distance.
func (e *Exact) resolve(s *ExactScratch, i int, x []float32) (int, float32) {
	r := &s.row[i]
	if r.fallback {
		return Nearest(e.centroids, e.dim, x)
	}
	t := s.thr[i]
	best, bd := -1, float32(math.Inf(1))
	for _, c := range s.cand[i*maxCandidates : i*maxCandidates+int(r.n)] {
		if c.a > t {
			continue
		}
		off := int(c.c) * e.dim
		if d := sqDist(e.centroids[off:off+e.dim], x, bd); d < bd || best < 0 {
			best, bd = int(c.c), d
		}
	}
	if best < 0 {
		// Unreachable: the centroid with the smallest A is under its own
		// threshold. Nearest is the answer by definition.
		return Nearest(e.centroids, e.dim, x)
	}
	return best, bd
}
