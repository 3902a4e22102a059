package nn

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"

	"github.com/bowline/bowline/transforms/internal/finite"
	"github.com/bowline/bowline/transforms/internal/splitmix"
)

// IVFOptions configures an IVF.
type IVFOptions struct {
	// Lists is the number of coarse cells the words are divided into. A
	// search scores every coarse centroid and then the words of Probes
	// lists, about Lists + Probes·K/Lists distances, least at
	// Lists = √(Probes·K). 0 chooses DefaultLists(K, Probes) in
	// kmeans.TrainIVF; NewIVF takes the number of its coarse centroids.
	Lists int

	// Probes is the number of lists searched for each point, the ones
	// whose coarse centroids are nearest (FAISS's nprobe). More probes
	// miss the nearest word less often; Probes ≥ Lists searches every
	// word, and the answers are then Nearest's.
	Probes int

	// Batch is the number of points searched together: their probes are
	// grouped by list so that each list's words are read once for all the
	// batch's points that probe it. The scratch grows with it (see
	// IVFScratch). 0 means 8,192.
	Batch int

	// Seed seeds the coarse k-means. The same words, options and seed
	// give the same lists.
	Seed uint64
}

// DefaultIVFOptions returns the IVF used when none is given: 8 probes,
// which on real SIFT descriptors against 10⁴ trained words found the
// nearest word for 95% of them in a seventh of the default forest's time
// (cmd/akmbench -mode assign).
func DefaultIVFOptions() IVFOptions {
	return IVFOptions{Probes: 8}
}

// defaultBatch is IVFOptions.Batch when zero: at 10⁶ words in 2,828
// lists, 8 probes, batches of 8,192 real SIFT descriptors cost 8–10% less
// CPU a descriptor than batches of 4,096, and 20–25% less than 2,048, as
// each list's words are read once for more points.
const defaultBatch = 8192

// DefaultLists returns the number of lists of an IVF over k words searched
// with the given probes when IVFOptions.Lists is 0: √(probes·k), which
// balances the coarse scan against the lists' words, at most k.
func DefaultLists(k, probes int) int {
	return min(k, max(1, int(math.Round(math.Sqrt(float64(probes)*float64(k))))))
}

// Validate reports whether o is usable, independently of any centroids.
func (o IVFOptions) Validate() error {
	switch {
	case o.Lists < 0:
		return fmt.Errorf("nn: IVF Lists = %d, want 0 (the default) or more", o.Lists)
	case o.Probes < 1:
		return fmt.Errorf("nn: IVF Probes = %d, want at least 1", o.Probes)
	case o.Batch < 0:
		return fmt.Errorf("nn: IVF Batch = %d, want 0 (the default) or more", o.Batch)
	}
	return nil
}

// ForIteration returns o with the seed of Lloyd iteration iter, as
// ForestOptions.ForIteration does for forests: each iteration's coarse
// cells are cut differently, so that a point the lists of one iteration
// miss is unlikely to be missed the same way at the next.
func (o IVFOptions) ForIteration(iter int) IVFOptions {
	o.Seed = splitmix.Mix64(o.Seed ^ splitmix.Mix64(uint64(iter)))
	return o
}

// IVF answers approximate nearest-centroid queries with an inverted file
// (Jégou, Douze & Schmid, "Product quantization for nearest neighbor
// search", PAMI 2011, as FAISS's IndexIVFFlat): the words are divided
// among Lists coarse cells by k-means over the words, and a point is
// compared with the coarse centroids and then with the words of the Probes
// lists whose coarse centroids are nearest.
//
// Both steps are Exact's tiled kernel: the coarse centroids are one Exact,
// each list's words another (packed into panels of 16 words), and a batch
// of points is grouped by list, so that a list's words are read once for
// all the points that probe it and scored as a matrix product. The points
// are widened to float32 and measured once a batch, and the kernel reads
// them from their rows (panelFMARows): packing them into strips for each
// list they probe cost more than the lists' scores on real descriptors. Within a
// list the kernel's scores are re-checked as Exact re-checks them, so the
// answer for a point is exactly Nearest over the words of its probed lists:
// the same distance to the last bit, ties to the lower index. With
// Probes ≥ Lists it is Nearest. Which lists are probed depends on the
// kernel's float32 scores, so a coarse near-tie may be probed differently
// by the AVX2 and the portable kernel; the result never depends on the
// batch or on the number of goroutines.
//
// The result is approximate: the returned word can be farther than the
// nearest one, never nearer. An IVF is immutable and safe for concurrent
// use; each goroutine needs its own IVFScratch.
type IVF struct {
	centroids []float32
	k, dim    int
	opt       IVFOptions // Lists resolved to the number of non-empty lists

	coarse *Exact  // the coarse centroids of the non-empty lists
	start  []int32 // list l holds the words ids[start[l]:start[l+1]]
	ids    []int32 // word indices, list by list, ascending within a list
	lists  []Exact // each list's words packed, as views of packed
	packed *Exact  // every list's panels, each list padded to whole panels
}

// CheckIVF reports whether an IVF with options opt can be built over the
// centroids, and returns their number K: opt valid, dim at least 1, a
// positive whole number of at most 2³¹ − 1 centroids, every value finite.
func CheckIVF(centroids []float32, dim int, opt IVFOptions) (int, error) {
	if err := opt.Validate(); err != nil {
		return 0, err
	}
	return checkCentroids("IVF", centroids, dim)
}

// checkCentroids returns the number of centroids of dimension dim that an
// index (named by what, for the errors) can be built over: a positive
// whole number of at most 2³¹ − 1, every value finite.
func checkCentroids(what string, centroids []float32, dim int) (int, error) {
	if dim < 1 {
		return 0, fmt.Errorf("nn: %s of dimension %d, want at least 1", what, dim)
	}
	if len(centroids) == 0 || len(centroids)%dim != 0 {
		return 0, fmt.Errorf("nn: %s over %d centroid values, want a positive multiple of the dimension %d", what, len(centroids), dim)
	}
	k := len(centroids) / dim
	if k > math.MaxInt32 {
		return 0, fmt.Errorf("nn: %s over %d centroids, want at most %d", what, k, math.MaxInt32)
	}
	if i := finite.Index(centroids); i >= 0 {
		return 0, fmt.Errorf("nn: %s centroid %d coordinate %d is %v, want a finite value", what, i/dim, i%dim, centroids[i])
	}
	return k, nil
}

// NewIVF builds an IVF over the k = len(centroids)/dim centroids, row-major,
// whose lists are the cells of the coarse centroids (row-major, dim each):
// every word goes to the list of its nearest coarse centroid, and lists
// left empty are dropped, so the IVF may hold fewer lists than coarse
// centroids. opt.Lists is ignored: the coarse centroids are the lists. The
// coarse centroids are a clustering of the words, which kmeans.TrainIVF
// trains before it calls NewIVF, as FAISS's IndexIVF trains its quantiser
// with its Clustering.
//
// NewIVF keeps centroids without copying: the caller must not modify them
// while the IVF is in use. It adds a packed copy of the centroids (4·K·dim
// bytes, each list rounded up to 16 words) and 4·K bytes of word indices.
// Building costs about K·Lists·dim multiply-adds in Exact's kernel, on up
// to GOMAXPROCS goroutines; the result does not depend on their number.
func NewIVF(centroids []float32, dim int, coarse []float32, opt IVFOptions) (*IVF, error) {
	k, err := CheckIVF(centroids, dim, opt)
	if err != nil {
		return nil, err
	}
	if len(coarse) == 0 || len(coarse)%dim != 0 || len(coarse)/dim > k {
		return nil, fmt.Errorf("nn: IVF with %d coarse centroid values, want 1 to K = %d centroids of dimension %d", len(coarse), k, dim)
	}
	if i := finite.Index(coarse); i >= 0 {
		return nil, fmt.Errorf("nn: IVF coarse centroid %d coordinate %d is %v, want a finite value", i/dim, i%dim, coarse[i])
	}
	opt.Lists = len(coarse) / dim
	if opt.Batch == 0 {
		opt.Batch = defaultBatch
	}
	v := &IVF{centroids: centroids, k: k, dim: dim, opt: opt}

	// Every word to its nearest coarse centroid.
	labels := make([]int32, k)
	dist := make([]float32, k)
	ce := NewExact(coarse, dim)
	workers := max(1, min(runtime.GOMAXPROCS(0), k/1024))
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*k/workers, (w+1)*k/workers
		wg.Go(func() { ce.Assign(centroids[lo*dim:hi*dim], labels[lo:hi], dist[lo:hi], nil) })
	}
	wg.Wait()
	count := make([]int32, opt.Lists)
	for _, l := range labels {
		count[l]++
	}
	// Drop empty lists: renumber the others in order.
	renum := make([]int32, opt.Lists)
	var kept []float32
	nl := 0
	for l, c := range count {
		if c == 0 {
			renum[l] = -1
			continue
		}
		renum[l] = int32(nl)
		count[nl] = c
		kept = append(kept, coarse[l*dim:(l+1)*dim]...)
		nl++
	}
	v.opt.Lists = nl
	v.coarse = NewExact(kept, dim)
	v.start = make([]int32, nl+1)
	for l := range nl {
		v.start[l+1] = v.start[l] + count[l]
	}
	v.ids = make([]int32, k)
	next := slices.Clone(v.start[:nl])
	for i, l := range labels {
		l = renum[l]
		v.ids[next[l]] = int32(i)
		next[l]++
	}

	// Pack each list's words into whole panels of their own.
	pdim := (dim + 3) &^ 3
	slots := 0
	for l := range nl {
		slots += int(count[l]+panelCols-1) / panelCols * panelCols
	}
	p := &Exact{k: slots, dim: dim, pdim: pdim, panels: make([]float32, slots*pdim), norms: make([]float32, slots), expand: true}
	for i := range p.norms {
		p.norms[i] = float32(math.Inf(1))
	}
	v.lists = make([]Exact, nl)
	off := 0
	for l := range nl {
		words := v.ids[v.start[l]:v.start[l+1]]
		for j, c := range words {
			p.packRow(off+j, centroids[int(c)*dim:(int(c)+1)*dim])
		}
		n := (len(words) + panelCols - 1) / panelCols * panelCols
		v.lists[l] = Exact{k: len(words), dim: dim, pdim: pdim,
			panels: p.panels[off*pdim : (off+n)*pdim : (off+n)*pdim],
			norms:  p.norms[off : off+n : off+n]}
		off += n
	}
	p.cmax = math.Sqrt(p.cmx2)
	p.expand = p.expand && p.cmx2 < expandLimit
	for l := range v.lists {
		// The re-check bounds use the largest norm of all the words: an
		// upper bound for every list.
		v.lists[l].cmax, v.lists[l].cmx2, v.lists[l].expand = p.cmax, p.cmx2, p.expand
	}
	v.packed = p
	return v, nil
}

// K returns the number of centroids.
func (v *IVF) K() int { return v.k }

// Dim returns the dimension of the centroids.
func (v *IVF) Dim() int { return v.dim }

// Centroids returns the centroids the IVF was built over (not a copy).
func (v *IVF) Centroids() []float32 { return v.centroids }

// Options returns the options in force: Lists is the number of non-empty
// lists, and Batch is resolved.
func (v *IVF) Options() IVFOptions { return v.opt }

// Bytes returns the memory the IVF adds to its centroids, in bytes.
func (v *IVF) Bytes() int {
	return 4*(len(v.packed.panels)+len(v.packed.norms)+len(v.ids)+len(v.start)) +
		4*(len(v.coarse.panels)+len(v.coarse.norms)+len(v.coarse.centroids))
}

// IVFScratch is the working memory of one goroutine's IVF searches: a
// tile's state (an ExactScratch and the tile's rows, about 31 kB, and
// 768·Probes bytes of its probes), a batch's probes and answers,
// 8·Batch·Probes + 25·Batch bytes plus 4 bytes a list, and the batch
// widened to float32 (4·Batch·dim bytes, none for float points of a
// dimension that is a multiple of 4): about 5 MB at the defaults for SIFT
// bytes, whatever the number of points searched. A goroutine that helps
// another in AssignParallel shares the batch's state with it and holds
// only its tile's state and 8·Batch bytes of its own nearest words: about
// 0.1 MB at the defaults. The zero value is ready to use; it grows on
// first use with an IVF.
type IVFScratch struct {
	ex     ExactScratch
	probe  []int32   // the lists of point i: probe[i·P : (i+1)·P], −1 past the last
	order  []int32   // the batch's points grouped by list, the probes counted by count
	count  []int32   // count[l] is where list l's points start in order
	best   []int32   // point i's nearest word so far, −1 for none
	bestD  []float32 // and its distance
	top    []uint64  // the tile's rows' probes so far as coarseKeys, ascending
	nearer []bool    // the point must fall back to Nearest

	// The batch's points are widened to float32 and measured once, not
	// once for each list they probe: the kernel reads them from their rows.
	xf   []float32           // the batch's points, pdim apart, zero past dim (bytes, or floats of a dim not a multiple of 4)
	xn   []float64           // ‖x‖ of each point of the batch
	xn2  []float64           // ‖x‖², as Exact.pack computes it
	rows [tileRows][]float32 // the tile's points; padding rows are zero
	zero []float32           // pdim zeros for the padding rows

	// A helper goroutine's own nearest words and distances of the batch's
	// points in AssignParallel's search of their farther lists.
	ownBest  []int32
	ownBestD []float32
}

// grow sizes s for v.
func (s *IVFScratch) grow(v *IVF) {
	b, p := v.opt.Batch, min(v.opt.Probes, v.opt.Lists)
	if cap(s.probe) < b*p {
		s.probe, s.order = make([]int32, b*p), make([]int32, b*p)
	}
	if cap(s.count) < v.opt.Lists+1 {
		s.count = make([]int32, v.opt.Lists+1)
	}
	if cap(s.best) < b {
		s.best, s.bestD, s.nearer = make([]int32, b), make([]float32, b), make([]bool, b)
	}
	if cap(s.top) < tileRows*p {
		s.top = make([]uint64, tileRows*p)
	}
	if cap(s.xn) < b {
		s.xn, s.xn2 = make([]float64, b), make([]float64, b)
	}
	if pdim := v.packed.pdim; len(s.zero) != pdim {
		s.zero = make([]float32, pdim)
	}
}

// growHelper sizes s for a goroutine that helps another in
// AssignParallel: only what it owns, its tile's probes and its own
// nearest words of the batch's points, as the rest is the other's.
func (s *IVFScratch) growHelper(v *IVF) {
	b, p := v.opt.Batch, min(v.opt.Probes, v.opt.Lists)
	if cap(s.top) < tileRows*p {
		s.top = make([]uint64, tileRows*p)
	}
	if cap(s.ownBest) < b {
		s.ownBest, s.ownBestD = make([]int32, b), make([]float32, b)
	}
}

// QuantizeBytes appends to words the index of an approximately nearest
// centroid of each of the len(desc)/Dim() byte descriptors in desc
// (row-major, one byte per coordinate, as SIFT's), in order, and returns the
// extended slice. It does not allocate once scratch has grown and words has
// the capacity; scratch may be nil. It panics if len(desc) is not a
// multiple of Dim().
func (v *IVF) QuantizeBytes(words []uint32, desc []byte, scratch *IVFScratch) []uint32 {
	if len(desc)%v.dim != 0 {
		panic(fmt.Sprintf("nn: IVF.QuantizeBytes of %d bytes, not a whole number of %d-byte descriptors", len(desc), v.dim))
	}
	if scratch == nil {
		scratch = new(IVFScratch)
	}
	s := scratch
	s.grow(v)
	d := v.dim
	total := len(desc) / d
	for lo := 0; lo < total; lo += v.opt.Batch {
		n := min(v.opt.Batch, total-lo)
		v.batch(s, n, nil, desc[lo*d:(lo+n)*d])
		for _, c := range s.best[:n] {
			words = append(words, uint32(c))
		}
	}
	return words
}

// Nearest returns the index of an approximately nearest centroid to x and
// its squared Euclidean distance, which is Nearest's for the centroid
// returned. Searching points one at a time forgoes the batch's sharing of
// the lists; Assign and QuantizeBytes search many. It panics if
// len(x) ≠ Dim().
func (v *IVF) Nearest(x []float32, scratch *IVFScratch) (int, float32) {
	if len(x) != v.dim {
		panic(fmt.Sprintf("nn: IVF.Nearest with a point of length %d, want %d", len(x), v.dim))
	}
	if scratch == nil {
		scratch = new(IVFScratch)
	}
	scratch.grow(v)
	v.batch(scratch, 1, x, nil)
	return int(scratch.best[0]), scratch.bestD[0]
}

// Assign is Exact.Assign with the IVF's approximate search: it
// sets labels[i] and dist[i] for each point i of data and returns how many
// labels changed. As in Forest.Assign, a label already in [0, K) on entry
// is kept unless the search finds a strictly nearer centroid, which makes
// approximate Lloyd iterations monotone; set the labels to −1 for a plain
// search. It does not allocate once scratch has grown. It panics if the
// lengths of data, labels and dist disagree with each other or with Dim().
func (v *IVF) Assign(data []float32, labels []int32, dist []float32, scratch *IVFScratch) (changed int) {
	if len(data) != len(labels)*v.dim || len(dist) != len(labels) {
		panic(fmt.Sprintf("nn: IVF.Assign with dim %d: %d data values, %d labels, %d distances", v.dim, len(data), len(labels), len(dist)))
	}
	if scratch == nil {
		scratch = new(IVFScratch)
	}
	scratch.grow(v)
	return v.assign(data, labels, dist, func(n int, fdata []float32) { v.batch(scratch, n, fdata, nil) }, scratch)
}

// assign is Assign with the search of each batch of n points of fdata by
// batch, which leaves their words and distances in s.
func (v *IVF) assign(data []float32, labels []int32, dist []float32, batch func(n int, fdata []float32), s *IVFScratch) (changed int) {
	d := v.dim
	for lo := 0; lo < len(labels); lo += v.opt.Batch {
		n := min(v.opt.Batch, len(labels)-lo)
		batch(n, data[lo*d:(lo+n)*d])
		for i := range n {
			c, dd := s.best[i], s.bestD[i]
			prev := labels[lo+i]
			x := data[(lo+i)*d : (lo+i+1)*d]
			if prev >= 0 && int(prev) < v.k && prev != c {
				row := v.centroids[int(prev)*d : int(prev+1)*d]
				dp := sqDist(row, x, dd)
				if dp == dd {
					dp = sqDist(row, x, float32(math.Inf(1)))
				}
				if dp <= dd {
					c, dd = prev, dp
				}
			}
			if prev != c {
				labels[lo+i] = c
				changed++
			}
			dist[lo+i] = dd
		}
	}
	return changed
}

// AssignParallel is Assign on len(scratch) goroutines, the calling one
// among them, each with its own scratch: labels, distances and the count
// are Assign's, whatever the number of goroutines. They share each batch
// rather than split the points: the coarse step is split by points, the
// lists by word, so that a list's words are read once for all the batch's
// points that probe it, as on one goroutine. Splitting the points instead
// halves the points that share a list's reading, which at 10⁶ words cost
// 15–20% more CPU a point. A batch's work is spread when it is cut, so
// the goroutines may wait for each other at the end of each of its steps:
// the coarse step, the nearest lists, the other lists (with Probes > 1)
// and the fallback to Nearest, four points of a batch, three with one
// probe. It panics as Assign does, or if scratch is empty.
func (v *IVF) AssignParallel(data []float32, labels []int32, dist []float32, scratch []*IVFScratch) (changed int) {
	if len(scratch) == 0 {
		panic("nn: IVF.AssignParallel without a scratch")
	}
	if len(scratch) == 1 {
		return v.Assign(data, labels, dist, scratch[0])
	}
	if len(data) != len(labels)*v.dim || len(dist) != len(labels) {
		panic(fmt.Sprintf("nn: IVF.AssignParallel with dim %d: %d data values, %d labels, %d distances", v.dim, len(data), len(labels), len(dist)))
	}
	scratch[0].grow(v)
	for _, h := range scratch[1:] {
		h.growHelper(v)
	}
	changed = v.assign(data, labels, dist, func(n int, fdata []float32) { v.batchParallel(scratch, n, fdata) }, scratch[0])
	// Each goroutine has its own scratch: the helpers keep none of the
	// first's batch state.
	for _, h := range scratch[1:] {
		h.xf, h.xn, h.xn2, h.zero = nil, nil, nil, nil
		h.probe, h.order, h.count, h.nearer = nil, nil, nil, nil
		h.best, h.bestD = nil, nil
	}
	return changed
}

// batchParallel is batch of float points on the goroutines of
// AssignParallel, one for each scratch; scratch[0] holds the batch's
// results.
func (v *IVF) batchParallel(scratch []*IVFScratch, n int, fdata []float32) {
	s, w := scratch[0], len(scratch)
	d := v.dim
	p := min(v.opt.Probes, v.opt.Lists)
	for i := range n {
		s.best[i], s.bestD[i], s.nearer[i] = -1, float32(math.Inf(1)), false
	}
	v.widen(s, n, fdata, nil)
	// The helpers read the batch's points and write their probes where
	// scratch[0] keeps them; each has its own tile and kernel state.
	for _, h := range scratch[1:] {
		h.xf, h.xn, h.xn2, h.zero = s.xf, s.xn, s.xn2, s.zero
		h.probe, h.order, h.count, h.nearer = s.probe, s.order, s.count, s.nearer
		h.best, h.bestD = s.best, s.bestD
	}
	run := func(fn func(g int, h *IVFScratch)) {
		var wg sync.WaitGroup
		for g, h := range scratch[1:] {
			wg.Go(func() { fn(g+1, h) })
		}
		fn(0, s)
		wg.Wait()
	}
	// The coarse step, tiles dealt to the goroutines in turn.
	tiles := (n + tileRows - 1) / tileRows
	run(func(g int, h *IVFScratch) {
		for t := g; t < tiles; t += w {
			lo := t * tileRows
			m := min(tileRows, n-lo)
			v.tile(h, v.coarse, m, lo, nil, fdata)
			v.probes(h, m, p, s.probe[lo*p:(lo+m)*p])
			for r := range m {
				s.nearer[lo+r] = h.ex.row[r].fallback
			}
		}
	})
	// Each point's nearest list: a point is in one list, so the goroutines
	// write the words of different points.
	cut := v.groupProbes(s, n, p, 0, 1, w)
	run(func(g int, h *IVFScratch) { v.searchLists(h, cut[g], cut[g+1], fdata) })
	if p > 1 {
		// The other lists: a point may be in lists of several goroutines,
		// so each helper keeps its own nearest words, from the nearest
		// list's, and the nearest of them all wins, ties to the lower word
		// as within a list.
		for _, h := range scratch[1:] {
			h.ownBest, h.ownBestD = h.ownBest[:n], h.ownBestD[:n]
			copy(h.ownBest, s.best[:n])
			copy(h.ownBestD, s.bestD[:n])
			h.best, h.bestD = h.ownBest, h.ownBestD
		}
		cut = v.groupProbes(s, n, p, 1, p, w)
		run(func(g int, h *IVFScratch) { v.searchLists(h, cut[g], cut[g+1], fdata) })
		for _, h := range scratch[1:] {
			for i := range n {
				c, dd := h.ownBest[i], h.ownBestD[i]
				if c >= 0 && (s.best[i] < 0 || dd < s.bestD[i] || dd == s.bestD[i] && c < s.best[i]) {
					s.best[i], s.bestD[i] = c, dd
				}
			}
		}
	}
	run(func(g int, h *IVFScratch) {
		for i := g; i < n; i += w {
			if !s.nearer[i] {
				continue
			}
			c, dd := Nearest(v.centroids, d, v.point(s, i, fdata))
			s.best[i], s.bestD[i] = int32(c), dd
		}
	})
}

// batch searches the n ≤ Batch points of fdata (floats) or bdata (bytes)
// and leaves their words and distances in s.best and s.bestD.
func (v *IVF) batch(s *IVFScratch, n int, fdata []float32, bdata []byte) {
	d := v.dim
	p := min(v.opt.Probes, v.opt.Lists)
	for i := range n {
		s.best[i], s.bestD[i], s.nearer[i] = -1, float32(math.Inf(1)), false
	}
	v.widen(s, n, fdata, bdata)
	// The coarse step: each point's p nearest lists by the kernel's score.
	for lo := 0; lo < n; lo += tileRows {
		m := min(tileRows, n-lo)
		v.tile(s, v.coarse, m, lo, nil, fdata)
		v.probes(s, m, p, s.probe[lo*p:(lo+m)*p])
		for r := range m {
			s.nearer[lo+r] = s.ex.row[r].fallback
		}
	}
	// Each point's nearest list first, then its other lists: the word found
	// in the nearest list is usually the answer, and the windows it sets
	// keep the other lists' words from being re-checked.
	v.searchProbes(s, n, p, 0, 1, fdata)
	if p > 1 {
		v.searchProbes(s, n, p, 1, p, fdata)
	}
	for i := range n {
		if !s.nearer[i] {
			continue
		}
		x := v.point(s, i, fdata)
		c, dd := Nearest(v.centroids, d, x)
		s.best[i], s.bestD[i] = int32(c), dd
	}
}

// searchProbes searches, list by list, the probes j0 ≤ j < j1 of each of
// the batch's n points (its j-th nearest lists), grouping them by list
// with a counting sort that keeps point order.
func (v *IVF) searchProbes(s *IVFScratch, n, p, j0, j1 int, fdata []float32) {
	v.groupProbes(s, n, p, j0, j1, 0)
	v.searchLists(s, 0, len(v.lists), fdata)
}

// groupProbes groups the probes j0 ≤ j < j1 of each of the batch's n
// points by list in s.order, list l's points from s.count[l−1] (0 for the
// first) to s.count[l], in point order. With w > 0 it also cuts the lists
// into w ranges of about equal work, points times words, range g from
// list cut[g] to cut[g+1].
func (v *IVF) groupProbes(s *IVFScratch, n, p, j0, j1, w int) (cut []int) {
	count := s.count[:v.opt.Lists+1]
	clear(count)
	for i := range n {
		for _, l := range s.probe[i*p+j0 : i*p+j1] {
			if l >= 0 {
				count[l+1]++
			}
		}
	}
	for l := 1; l < len(count); l++ {
		count[l] += count[l-1]
	}
	for i := range n {
		for _, l := range s.probe[i*p+j0 : i*p+j1] {
			if l >= 0 {
				s.order[count[l]] = int32(i)
				count[l]++
			}
		}
	}
	// count[l] is now where list l+1 starts.
	if w == 0 {
		return nil
	}
	work := func(l int) int64 {
		lo := int32(0)
		if l > 0 {
			lo = count[l-1]
		}
		return int64(count[l]-lo) * int64(v.start[l+1]-v.start[l])
	}
	var total int64
	for l := range v.lists {
		total += work(l)
	}
	cut = make([]int, w+1)
	cut[w] = len(v.lists)
	var sum int64
	g := 1
	for l := range v.lists {
		for g < w && sum >= total*int64(g)/int64(w) {
			cut[g] = l
			g++
		}
		sum += work(l)
	}
	for ; g < w; g++ {
		cut[g] = len(v.lists)
	}
	return cut
}

// searchLists searches the lists l0 ≤ l < l1 for the points groupProbes
// grouped by list in s.
func (v *IVF) searchLists(s *IVFScratch, l0, l1 int, fdata []float32) {
	count := s.count
	for l := l0; l < l1; l++ {
		lo := int32(0)
		if l > 0 {
			lo = count[l-1]
		}
		if lo < count[l] {
			v.searchList(s, l, s.order[lo:count[l]], fdata)
		}
	}
}

// widen measures the n points of the batch, fdata (floats) or bdata
// (bytes), as Exact.pack would, and copies them as floats into s.xf unless
// the kernel can read them where they are (floats of a dimension that is a
// multiple of 4).
func (v *IVF) widen(s *IVFScratch, n int, fdata []float32, bdata []byte) {
	d, pd := v.dim, v.packed.pdim
	if (bdata != nil || d != pd) && cap(s.xf) < v.opt.Batch*pd {
		s.xf = make([]float32, v.opt.Batch*pd)
	}
	for i := range n {
		var n2 float64
		if fdata != nil {
			x := fdata[i*d : (i+1)*d]
			for _, f := range x {
				n2 += float64(f) * float64(f)
			}
			if d != pd {
				// The padding past d is never written: it stays zero.
				copy(s.xf[i*pd:i*pd+d], x)
			}
		} else {
			var sq int64 // exact: at most dim·255²
			x := s.xf[i*pd : i*pd+d]
			for j, b := range bdata[i*d : (i+1)*d] {
				x[j] = float32(b)
				sq += int64(b) * int64(b)
			}
			n2 = float64(sq)
		}
		s.xn2[i], s.xn[i] = n2, math.Sqrt(n2)
	}
}

// row returns point i of the batch as the kernel reads it: pdim floats,
// zero past dim.
func (v *IVF) row(s *IVFScratch, i int, fdata []float32) []float32 {
	if pd := v.packed.pdim; fdata == nil || v.dim != pd {
		return s.xf[i*pd : (i+1)*pd]
	}
	return fdata[i*v.dim : (i+1)*v.dim]
}

// point returns point i of the batch as floats, dim long.
func (v *IVF) point(s *IVFScratch, i int, fdata []float32) []float32 {
	return v.row(s, i, fdata)[:v.dim]
}

// tile prepares the m ≤ tileRows points of the batch lo, lo+1, … (or
// idx[0], idx[1], … when idx is not nil) for a search of e, as e.pack
// prepares a tile but without packing them: their rows in s.rows, fresh
// search states and thresholds in s.ex, padding up to whole strips.
func (v *IVF) tile(s *IVFScratch, e *Exact, m, lo int, idx []int32, fdata []float32) {
	ex := &s.ex
	strips := (m + stripRows - 1) / stripRows
	for r := range strips * stripRows {
		if r >= m {
			s.rows[r] = s.zero
			ex.thr[r] = float32(math.Inf(-1))
			continue
		}
		i := lo + r
		if idx != nil {
			i = int(idx[r])
		}
		s.rows[r] = v.row(s, i, fdata)
		xn, n2 := s.xn[i], s.xn2[i]
		row := &ex.row[r]
		*row = rowState{xn: xn, xn2: n2, amin: float32(math.Inf(1))}
		// n2 is NaN or infinite for a point that is not finite.
		if !e.expand || !((xn+e.cmax)*(xn+e.cmax) < expandLimit) {
			row.fallback = true
			ex.thr[r] = float32(math.Inf(-1))
			continue
		}
		ex.thr[r] = math.MaxFloat32
	}
}

// probes sets the p lists of each of the m points of the tile (prepared
// by tile) to those of the p smallest coarse scores, ascending (ties to the
// lower list), −1 for a point that falls back to Nearest.
func (v *IVF) probes(s *IVFScratch, m, p int, probe []int32) {
	c := v.coarse
	ex := &s.ex
	const none = math.MaxUint64 // above every list's key
	top := s.top[:tileRows*p]
	for i := range top {
		top[i] = none
	}
	strips := (m + stripRows - 1) / stripRows
	ps := c.pdim * panelCols
	for pn := range len(c.norms) / panelCols {
		panel := c.panels[pn*ps : (pn+1)*ps]
		norms := c.norms[pn*panelCols : (pn+1)*panelCols]
		valid := uint32(1)<<min(panelCols, c.k-pn*panelCols) - 1 // the panel's real lists
		for st := range strips {
			thr := ex.thr[st*stripRows : (st+1)*stripRows]
			mask := kernelRows(s.rows[st*stripRows:(st+1)*stripRows], panel, c.pdim, norms, thr, &ex.out)
			for r := 0; mask != 0; r, mask = r+1, mask>>8 {
				b := uint32(mask & 0xff)
				if b == 0 {
					continue
				}
				i := st*stripRows + r
				t := top[i*p : (i+1)*p : (i+1)*p]
				out := ex.out[r*panelCols : (r+1)*panelCols : (r+1)*panelCols]
				// Bit l%8 of the row's mask is set when lane l or l±8 is
				// at or under the threshold: only those lanes can enter
				// the top p. Each goes into the sorted keys through a
				// min/max network, without branches: the largest key
				// drops out, the key itself if it is above them all.
				for lanes := (b | b<<8) & valid; lanes != 0; lanes &= lanes - 1 {
					l := bits.TrailingZeros32(lanes)
					key := coarseKey(out[l], pn*panelCols+l)
					for j := p - 1; j > 0; j-- {
						t[j] = max(t[j-1], min(key, t[j]))
					}
					t[0] = min(key, t[0])
				}
				if t[p-1] != none {
					ex.thr[i] = keyScore(t[p-1])
				}
			}
		}
	}
	for i := range m {
		pr := probe[i*p : (i+1)*p]
		for j, key := range top[i*p : (i+1)*p] {
			pr[j] = -1
			if key != none && !ex.row[i].fallback {
				pr[j] = int32(uint32(key))
			}
		}
	}
}

// coarseKey orders the coarse score a of list l as probes ranks lists:
// by score, ties (−0 and +0 among them) to the lower list. The high half
// is a's bits made to sort as unsigned integers in a's order.
func coarseKey(a float32, l int) uint64 {
	b := math.Float32bits(a)
	if b == 1<<31 {
		b = 0 // −0 ranks as +0
	}
	b ^= uint32(int32(b)>>31) | 1<<31
	return uint64(b)<<32 | uint64(uint32(l))
}

// keyScore returns the score of a coarseKey.
func keyScore(key uint64) float32 {
	b := uint32(key >> 32)
	if b>>31 == 1 {
		b ^= 1 << 31
	} else {
		b = ^b
	}
	return math.Float32frombits(b)
}

// searchList compares the points pts of the batch with the words of list
// l, a tile at a time, lowering their best words and distances.
func (v *IVF) searchList(s *IVFScratch, l int, pts []int32, fdata []float32) {
	e := &v.lists[l]
	d := v.dim
	words := v.ids[v.start[l]:v.start[l+1]]
	for lo := 0; lo < len(pts); lo += tileRows {
		tile := pts[lo:min(lo+tileRows, len(pts))]
		m := len(tile)
		v.tile(s, e, m, 0, tile, fdata)
		// A point that already has a word need only look for words at
		// least as near: start its window at that word's score.
		for r, i := range tile {
			row := &s.ex.row[r]
			if row.fallback || s.best[i] < 0 {
				continue
			}
			a := float32(float64(s.bestD[i]) - row.xn2)
			row.amin = a
			s.ex.thr[r] = e.threshold(row, a)
		}
		e.searchRows(&s.ex, &s.rows, m)
		for r, i := range tile {
			row := &s.ex.row[r]
			if !row.fallback && row.n == 0 {
				continue
			}
			x := v.point(s, int(i), fdata)
			best, bd := s.best[i], s.bestD[i]
			consider := func(c int32) {
				cr := v.centroids[int(c)*d : (int(c)+1)*d]
				dd := sqDist(cr, x, bd)
				switch {
				case dd < bd || best < 0:
					best, bd = c, dd
				case dd == bd && c < best:
					// sqDist may have stopped early at exactly the bound.
					if sqDist(cr, x, float32(math.Inf(1))) == bd {
						best = c
					}
				}
			}
			if row.fallback {
				for _, c := range words {
					consider(c)
				}
			} else {
				t := s.ex.thr[r]
				for _, c := range s.ex.cand[r*maxCandidates : r*maxCandidates+int(row.n)] {
					if c.a <= t {
						consider(words[c.c])
					}
				}
			}
			s.best[i], s.bestD[i] = best, bd
		}
	}
}
