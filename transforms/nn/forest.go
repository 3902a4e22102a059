package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/bowline/bowline/transforms/internal/splitmix"
	"github.com/bowline/bowline/transforms/setting"
)

// ForestOptions configures a Forest.
type ForestOptions struct {
	// Trees is the number of randomised kd-trees searched together. Each
	// tree costs about 4·K bytes of leaf indices plus its nodes; more trees
	// make a bounded search less likely to miss the nearest centroid
	// because the trees' cells are cut differently.
	Trees int

	// LeafSize is the largest number of centroids in a leaf. Larger leaves
	// mean fewer priority-queue operations per distance computed.
	LeafSize int

	// Checks bounds the work of one search, as FLANN's "checks": the search
	// stops at the first leaf reached after Checks centroid distances have
	// been computed, so a search computes at most Checks + LeafSize − 1
	// distances (and at least one leaf's worth). Checks ≥ K makes the
	// search exhaustive and exact: it is then Nearest.
	Checks int

	// Seed seeds the random choices of the build: the order of the
	// centroids and the split dimensions. The same centroids, options and
	// seed give the same forest.
	Seed uint64
}

// DefaultForestOptions returns the forest used when none is given: 8 trees
// (as Philbin et al. used for AKM) of leaves of at most 8 centroids,
// searched with 256 checks. On SIFT descriptors against trained vocabularies
// (cmd/akmbench, ETH-80 with jittered copies up to 10⁶ descriptors) it
// found the exact nearest of 10⁴ words for 95% of the descriptors, 11×
// faster than Nearest's exhaustive scan, and of 10⁵ words for 96%, 95×
// faster (512 checks: 98%, 59×). Ten AKM iterations from the same start as
// exact Lloyd ended 0.12% below its objective at 10⁴ words (128 checks:
// 0.11% above, at half the time) and 0.40% above it at 10⁵ words (512
// checks: 0.02% below, at 1.8× the time). Per CPU second an iteration at
// 10⁵ words took 1/83 of exact Lloyd with Nearest and about 1/5.5 of one
// with a one-thread BLAS exhaustive search (FAISS); at 10⁴ words BLAS is
// within 1.3× (2.5× at 128 checks): the forest pays as K grows.
func DefaultForestOptions() ForestOptions {
	return ForestOptions{Trees: 8, LeafSize: 8, Checks: 256}
}

// Validate reports whether o is usable, independently of any centroids.
func (o ForestOptions) Validate() error {
	switch {
	case o.Trees < 1:
		return fmt.Errorf("nn: forest Trees = %d, want at least 1", o.Trees)
	case o.LeafSize < 1:
		return fmt.Errorf("nn: forest LeafSize = %d, want at least 1", o.LeafSize)
	case o.Checks < 1:
		return setting.Errorf("nn", "ForestOptions.Checks", o.Checks, "1 or more")
	}
	return nil
}

// ForIteration returns o with the seed of Lloyd iteration iter: the seed
// mixed with iter. Building each iteration's forest with its own seed, as
// AKM rebuilds its randomised forest at every iteration (Philbin et al.,
// 2007), decorrelates the misses of successive iterations: a point one
// forest misassigns is unlikely to be misassigned the same way again.
// kmeans.Train and the distributed trainer in kmeansbeam both use it, so
// they build the same forests.
func (o ForestOptions) ForIteration(iter int) ForestOptions {
	o.Seed = splitmix.Mix64(o.Seed ^ splitmix.Mix64(uint64(iter)))
	return o
}

// Forest answers approximate nearest-centroid queries with a forest of
// randomised kd-trees (Silpa-Anan & Hartley, 2008; Muja & Lowe, "Fast
// approximate nearest neighbors with automatic algorithm configuration",
// VISAPP 2009, as in FLANN's KDTreeIndex).
//
// Every tree holds all K centroids. A node splits its centroids on the
// dimension d with a cut at the mean c_d of a sample of at most 100 of them;
// d is drawn uniformly from the 5 dimensions of largest variance in that
// sample, so the trees differ while each still cuts where the centroids are
// spread out. A query descends every tree to a leaf, pushing each branch not
// taken onto one priority queue shared by all trees, keyed by
// mindist + (x_d − c_d)², FLANN's incremental estimate of the distance to the
// branch's cell; it then keeps popping the most promising branch until
// Checks distances have been computed or no branch can beat the best
// centroid found. Each centroid's distance is computed at most once per
// query, however many trees reach it.
//
// The result is approximate: the returned centroid can be farther than the
// nearest one, never nearer, and its distance is exact. A Forest is
// immutable and safe for concurrent use; each goroutine needs its own
// Search.
type Forest struct {
	centroids []float32
	k, dim    int
	opt       ForestOptions
	nodes     []node  // all trees' nodes; roots[t] is tree t's root
	roots     []int32 // one per tree
	perm      []int32 // centroid indices in leaf order, tree after tree
}

// node is a kd-tree node. An internal node sends x to nodes[a] if
// x[dim] < cut and to nodes[b] otherwise; a leaf (dim < 0) holds the
// centroids perm[a:b].
type node struct {
	cut  float32
	dim  int32
	a, b int32
}

// NewForest builds a forest over the k = len(centroids)/dim centroids,
// row-major. The forest keeps centroids without copying: the caller must not
// modify them while the forest is in use. Building costs
// O(Trees · K · (log K + dim)) and runs one tree per goroutine, up to
// GOMAXPROCS; the result does not depend on the number of goroutines.
//
// Duplicate centroids are allowed: a cut that leaves all of a node's
// centroids on one side is moved to the middle of the node, so every tree
// has depth O(log K) even if all centroids are equal.
func NewForest(centroids []float32, dim int, opt ForestOptions) (*Forest, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	k, err := checkCentroids("forest", centroids, dim)
	if err != nil {
		return nil, err
	}
	f := &Forest{
		centroids: centroids,
		k:         k,
		dim:       dim,
		opt:       opt,
		roots:     make([]int32, opt.Trees),
		perm:      make([]int32, opt.Trees*k),
	}
	trees := make([][]node, opt.Trees)
	workers := min(runtime.GOMAXPROCS(0), opt.Trees)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			b := &builder{f: f, mean: make([]float64, dim), vari: make([]float64, dim), vals: make([]float32, k)}
			for t := w; t < opt.Trees; t += workers {
				trees[t] = b.build(t)
			}
		})
	}
	wg.Wait()
	n := 0
	for _, tr := range trees {
		n += len(tr)
	}
	f.nodes = make([]node, 0, n)
	for t, tr := range trees {
		off := int32(len(f.nodes))
		f.roots[t] = off
		for _, nd := range tr {
			if nd.dim >= 0 {
				nd.a += off
				nd.b += off
			}
			f.nodes = append(f.nodes, nd)
		}
	}
	return f, nil
}

// K returns the number of centroids.
func (f *Forest) K() int { return f.k }

// Dim returns the dimension of the centroids.
func (f *Forest) Dim() int { return f.dim }

// Centroids returns the centroids the forest was built over (not a copy).
func (f *Forest) Centroids() []float32 { return f.centroids }

// Options returns the options the forest was built with.
func (f *Forest) Options() ForestOptions { return f.opt }

// Bytes returns the memory the forest adds to its centroids, in bytes: the
// leaf indices and the nodes of every tree.
func (f *Forest) Bytes() int { return 4*len(f.perm) + 16*len(f.nodes) + 4*len(f.roots) }

// sampleSplit is the number of centroids a node's split statistics are
// computed from, and randDims the number of highest-variance dimensions the
// split dimension is drawn from; both are FLANN's values (SAMPLE_MEAN,
// RAND_DIM).
const (
	sampleSplit = 100
	randDims    = 5
)

// builder holds the scratch of one goroutine building trees.
type builder struct {
	f          *Forest
	mean, vari []float64
	vals       []float32 // the split coordinate of the node's centroids
	stack      []span
}

// span is a pending node over perm[lo:hi].
type span struct{ n, lo, hi int32 }

// build builds tree t over the segment perm[t·K:(t+1)·K] and returns its
// nodes, with child indices relative to the tree's first node.
func (b *builder) build(t int) []node {
	f := b.f
	rng := rand.New(rand.NewPCG(f.opt.Seed, pcgStream+uint64(t)))
	base := t * f.k
	idx := f.perm[base : base+f.k]
	for i := range idx {
		idx[i] = int32(i)
	}
	// Shuffling makes the first sampleSplit centroids of every node a
	// uniform sample of it: partitioning preserves the relative order on
	// each side up to swaps, which do not depend on the centroids' indices.
	rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })

	nodes := make([]node, 1, 2*f.k/max(1, f.opt.LeafSize)+1)
	b.stack = append(b.stack[:0], span{0, 0, int32(f.k)})
	for len(b.stack) > 0 {
		s := b.stack[len(b.stack)-1]
		b.stack = b.stack[:len(b.stack)-1]
		ids := idx[s.lo:s.hi]
		if len(ids) <= f.opt.LeafSize {
			nodes[s.n] = node{dim: -1, a: int32(base) + s.lo, b: int32(base) + s.hi}
			continue
		}
		d, cut := b.split(ids, rng)
		// Gathering the split coordinate once turns the partition's
		// passes into sequential reads: the centroid rows are scattered,
		// and at a million words they are far larger than the caches.
		vals := b.vals[:len(ids)]
		for i, c := range ids {
			vals[i] = f.centroids[int(c)*f.dim+d]
		}
		m := int32(partition(ids, vals, cut))
		left := int32(len(nodes))
		nodes = append(nodes, node{}, node{})
		nodes[s.n] = node{cut: cut, dim: int32(d), a: left, b: left + 1}
		b.stack = append(b.stack, span{left + 1, s.lo + m, s.hi}, span{left, s.lo, s.lo + m})
	}
	return nodes
}

// split chooses the cut of a node over ids: a dimension drawn uniformly from
// the randDims of largest variance over the first sampleSplit centroids, and
// their mean along it.
func (b *builder) split(ids []int32, rng *rand.Rand) (dim int, cut float32) {
	f := b.f
	ids = ids[:min(len(ids), sampleSplit)]
	// One pass of sums and sums of squares: the rows are scattered, so
	// reading each once matters more than the textbook two-pass variance,
	// and float64 keeps E[x²] − E[x]² accurate enough to rank dimensions.
	mean, vari := b.mean[:f.dim], b.vari[:f.dim]
	clear(mean)
	clear(vari)
	for _, c := range ids {
		x := f.centroids[int(c)*f.dim : (int(c)+1)*f.dim]
		x = x[:len(mean)]
		for j, v := range x {
			w := float64(v)
			mean[j] += w
			vari[j] += w * w
		}
	}
	inv := 1 / float64(len(ids))
	for j := range mean {
		mean[j] *= inv
		vari[j] = vari[j]*inv - mean[j]*mean[j]
	}
	// Keep the randDims largest variances by insertion, ties to the lower
	// dimension, so the choice depends only on the data and rng.
	var top [randDims]int
	n := 0
	for j, v := range b.vari {
		if n < randDims {
			n++
		} else if v <= b.vari[top[n-1]] {
			continue
		}
		i := n - 1
		for ; i > 0 && v > b.vari[top[i-1]]; i-- {
			top[i] = top[i-1]
		}
		top[i] = j
	}
	dim = top[rng.IntN(n)]
	return dim, float32(b.mean[dim])
}

// partition reorders ids, with their split coordinates vals, so that those
// below cut come first, then those equal to it, then those above, and
// returns the size of the left child. Like FLANN's planeSplit it cuts at the boundary of the
// "below" or the "above" group when one of them holds more than half of the
// node, and otherwise in the middle of the node, which then falls inside the
// group equal to the cut. Either way the children are consistent with
// the cut (left ≤ cut ≤ right) and, when many centroids share the cut
// value, both are non-empty and balanced.
func partition(ids []int32, vals []float32, cut float32) int {
	vals = vals[:len(ids)]
	swap := func(i, j int) {
		ids[i], ids[j] = ids[j], ids[i]
		vals[i], vals[j] = vals[j], vals[i]
	}
	// First pass: [0, lim1) < cut.
	lo, hi := 0, len(ids)-1
	for {
		for lo <= hi && vals[lo] < cut {
			lo++
		}
		for lo <= hi && vals[hi] >= cut {
			hi--
		}
		if lo > hi {
			break
		}
		swap(lo, hi)
		lo++
		hi--
	}
	lim1 := lo
	// Second pass over the rest: [lim1, lim2) == cut.
	hi = len(ids) - 1
	for {
		for lo <= hi && vals[lo] <= cut {
			lo++
		}
		for lo <= hi && vals[hi] > cut {
			hi--
		}
		if lo > hi {
			break
		}
		swap(lo, hi)
		lo++
		hi--
	}
	lim2 := lo
	half := len(ids) / 2
	m := half
	switch {
	case lim1 > half:
		m = lim1
	case lim2 < half:
		m = lim2
	}
	// The cut is the mean of a subset of these centroids, so some lie on
	// each side of it and m is in [1, n−1]; clamping guards against a
	// rounding of the mean onto an extreme, which would otherwise recurse
	// forever on an unchanged node.
	return min(max(m, 1), len(ids)-1)
}

// Search is the scratch space of one query at a time: the priority queue of
// unexplored branches and the marks of centroids already examined. Its zero
// value is ready to use; it grows on first use with a forest and is reused
// without allocating after that. A Search may be used with different
// forests but not by two goroutines at once.
type Search struct {
	// Checked is the number of centroid distances the last query computed.
	Checked int

	heap  []branch
	seen  []uint32 // seen[c] == epoch iff centroid c was examined by this query
	epoch uint32
	x     []float32 // the converted descriptor of NearestBytes

	best  float32
	label int32

	// The k-NN list of NearestK: the caller's buffers during a query, and
	// the number of entries held.
	kidx  []int32
	kdist []float32
	kn    int
}

// branch is an unexplored subtree and its priority.
type branch struct {
	d float32
	n int32
}

// Nearest returns the index of an approximately nearest centroid to x and its
// squared Euclidean distance, which is exact for the centroid returned. Among
// the centroids examined, ties go to the lowest index, as in
// Nearest. scratch may be nil, in which case a Search is allocated; with a
// reused scratch Nearest does not allocate. It panics if len(x) ≠ Dim().
func (f *Forest) Nearest(x []float32, scratch *Search) (int, float32) {
	if len(x) != f.dim {
		panic(fmt.Sprintf("nn: Forest.Nearest with a point of length %d, want %d", len(x), f.dim))
	}
	s := scratch
	if s == nil {
		s = new(Search)
	}
	if f.opt.Checks >= f.k {
		// A budget that covers every centroid is better spent on a plain
		// scan than on the queue.
		c, d := Nearest(f.centroids, f.dim, x)
		s.Checked = f.k
		return c, d
	}
	s.start(f.k)
	s.best, s.label = float32(math.Inf(1)), -1
	for _, r := range f.roots {
		f.descend(r, 0, x, s)
	}
	for len(s.heap) > 0 && s.Checked < f.opt.Checks {
		b := s.pop()
		if b.d >= s.best {
			// The queue is ordered, so no branch left is more promising.
			break
		}
		f.descend(b.n, b.d, x, s)
	}
	return int(s.label), s.best
}

// NearestBytes is Nearest for a point of bytes, such as a SIFT descriptor,
// converted to float32 in scratch's storage. It does not allocate once
// scratch has grown. It panics if len(x) ≠ Dim().
func (f *Forest) NearestBytes(x []byte, scratch *Search) (int, float32) {
	if len(x) != f.dim {
		panic(fmt.Sprintf("nn: Forest.NearestBytes with a point of length %d, want %d", len(x), f.dim))
	}
	if scratch == nil {
		scratch = new(Search)
	}
	if cap(scratch.x) < f.dim {
		scratch.x = make([]float32, f.dim)
	}
	p := scratch.x[:f.dim]
	for j, v := range x {
		p[j] = float32(v)
	}
	return f.Nearest(p, scratch)
}

// QuantizeBytes appends to words the index of an approximately nearest
// centroid of each of the len(desc)/Dim() byte descriptors in desc
// (row-major, one byte per coordinate, as SIFT's), in order, and returns the
// extended slice. It is the search a bag-of-words quantiser needs; it does
// not allocate once scratch has grown and words has the capacity. It panics
// if len(desc) is not a multiple of Dim().
func (f *Forest) QuantizeBytes(words []uint32, desc []byte, scratch *Search) []uint32 {
	if len(desc)%f.dim != 0 {
		panic(fmt.Sprintf("nn: Forest.QuantizeBytes of %d bytes, not a whole number of %d-byte descriptors", len(desc), f.dim))
	}
	if scratch == nil {
		scratch = new(Search)
	}
	for off := 0; off < len(desc); off += f.dim {
		c, _ := f.NearestBytes(desc[off:off+f.dim], scratch)
		words = append(words, uint32(c))
	}
	return words
}

// Assign is Exact.Assign with the forest's approximate Nearest: it
// sets labels[i] and dist[i] for each point i of data and returns how many
// labels changed.
//
// A label already in [0, K) on entry — the point's cluster in the previous
// Lloyd iteration — is kept unless the search finds a strictly nearer
// centroid. That costs one distance per point and makes approximate Lloyd
// iterations monotone like exact ones: the update step cannot raise the
// objective for fixed labels, and no point then moves to a farther
// centroid, so the objective falls until it settles instead of jittering
// with each forest's misses, and relative-change stopping rules work. Set
// the labels to −1 for a plain search.
//
// Assign does not allocate once scratch has grown. It panics if the lengths
// of data, labels and dist disagree with each other or with Dim().
func (f *Forest) Assign(data []float32, labels []int32, dist []float32, scratch *Search) (changed int) {
	if len(data) != len(labels)*f.dim || len(dist) != len(labels) {
		panic(fmt.Sprintf("nn: Forest.Assign with dim %d: %d data values, %d labels, %d distances", f.dim, len(data), len(labels), len(dist)))
	}
	if scratch == nil {
		scratch = new(Search)
	}
	for i, prev := range labels {
		x := data[i*f.dim : (i+1)*f.dim]
		c, d := f.Nearest(x, scratch)
		if prev >= 0 && int(prev) < f.k && int(prev) != c {
			// The bound makes this cheap when the search did better; a
			// result equal to it may be a partial sum, so complete it.
			row := f.centroids[int(prev)*f.dim : int(prev+1)*f.dim]
			dp := sqDist(row, x, d)
			if dp == d {
				dp = sqDist(row, x, float32(math.Inf(1)))
			}
			if dp <= d {
				c, d = int(prev), dp
			}
		}
		if prev != int32(c) {
			labels[i] = int32(c)
			changed++
		}
		dist[i] = d
	}
	return changed
}

// descend follows x from node n, whose cell is estimated at squared distance
// mind, down to a leaf, queueing the branches not taken, and examines the
// leaf's centroids unless the check budget is spent.
func (f *Forest) descend(n int32, mind float32, x []float32, s *Search) {
	nd := &f.nodes[n]
	for nd.dim >= 0 {
		diff := x[nd.dim] - nd.cut
		near, far := nd.a, nd.b
		if diff >= 0 {
			near, far = nd.b, nd.a
		}
		if fd := mind + diff*diff; fd < s.best {
			s.push(branch{fd, far})
		}
		nd = &f.nodes[near]
	}
	if s.Checked >= f.opt.Checks && s.label >= 0 {
		return
	}
	dim := f.dim
	for _, c := range f.perm[nd.a:nd.b] {
		if s.seen[c] == s.epoch {
			continue
		}
		s.seen[c] = s.epoch
		s.Checked++
		row := f.centroids[int(c)*dim : int(c)*dim+dim]
		d := sqDist(row, x, s.best)
		switch {
		case d < s.best:
			s.best, s.label = d, c
		case d == s.best && c < s.label:
			// sqDist may have stopped early at exactly the bound; only a
			// complete distance equal to the best is a tie.
			if sqDist(row, x, float32(math.Inf(1))) == s.best {
				s.label = c
			}
		}
	}
}

// push adds b to the min-heap s.heap.
func (s *Search) push(b branch) {
	s.heap = append(s.heap, b)
	h := s.heap
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h[p].d <= b.d {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = b
}

// pop removes and returns the branch of smallest priority; the heap must
// not be empty.
func (s *Search) pop() branch {
	h := s.heap
	top := h[0]
	last := h[len(h)-1]
	h = h[:len(h)-1]
	s.heap = h
	if len(h) == 0 {
		return top
	}
	i := 0
	for {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && h[c+1].d < h[c].d {
			c++
		}
		if last.d <= h[c].d {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = last
	return top
}
