// Package kmeans clusters dense float32 points with Lloyd's algorithm from a
// k-means++ start. Its centroids are the visual words of a bag-of-words
// vocabulary.
//
// Points are stored row-major in one flat slice: point i of dimension dim is
// data[i*dim : (i+1)*dim]. Centroids are stored the same way.
//
// One Lloyd iteration is split into exported pieces — Assign, Sums and
// Update — so that a distributed trainer can assign shards of the data and
// build partial Sums where the data lives, Merge them, and Update centrally.
// Train runs the same pieces on one machine.
package kmeans

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
)

// pcgStream is the second PCG seed word. Fixing it makes Options.Seed the
// only source of randomness, so equal seeds give identical vocabularies.
const pcgStream = 0x9e3779b97f4a7c15

// Options configures Train.
type Options struct {
	// K is the number of clusters. It must be at least 1 and at most the
	// number of points.
	K int

	// MaxIter bounds the number of Lloyd iterations (centroid updates). It
	// must be at least 1.
	MaxIter int

	// Tol stops training once an iteration lowers the objective by less than
	// Tol relative to its previous value: (J_prev − J) ≤ Tol·J_prev. Zero
	// runs until the assignment stops changing or MaxIter is reached.
	Tol float64

	// Seed seeds the k-means++ initialisation. Train is deterministic for a
	// given Seed and data.
	Seed uint64

	// Workers is the number of goroutines used for the assignment step;
	// 0 means runtime.GOMAXPROCS(0). The result does not depend on it.
	Workers int
}

// Validate reports whether o is usable, independently of any data.
func (o Options) Validate() error {
	switch {
	case o.K < 1:
		return fmt.Errorf("kmeans: K = %d, want at least 1", o.K)
	case o.MaxIter < 1:
		return fmt.Errorf("kmeans: MaxIter = %d, want at least 1", o.MaxIter)
	case !(o.Tol >= 0): // also rejects NaN
		return fmt.Errorf("kmeans: Tol = %v, want a non-negative number", o.Tol)
	case o.Workers < 0:
		return fmt.Errorf("kmeans: Workers = %d, want 0 (GOMAXPROCS) or more", o.Workers)
	}
	return nil
}

// Result is a trained clustering.
type Result struct {
	// Centroids holds K centroids of dimension Dim, row-major.
	Centroids []float32
	K, Dim    int

	// Objective is the mean squared Euclidean distance from each point to
	// its nearest centroid in Centroids: J = (1/n) Σ_i min_c ‖x_i − c‖².
	Objective float64

	// Iterations is the number of Lloyd updates performed (at most
	// Options.MaxIter).
	Iterations int

	// Converged reports whether training stopped because the assignment
	// reached a fixed point, the objective reached zero, or the relative
	// improvement fell to Options.Tol — rather than because it ran out of
	// iterations.
	Converged bool
}

// Train clusters the n = len(data)/dim points of data into opt.K clusters.
//
// Centroids start from k-means++ (KMeansPP) seeded by opt.Seed and are then
// refined by Lloyd iterations. A cluster left empty by an update is
// re-seeded with the point farthest from its assigned centroid (the
// largest-distance points, ties to the lower index, one per empty cluster in
// ascending cluster order), which is the point the current clustering
// explains worst.
//
// K greater than the number of points is an error rather than being clamped:
// callers size downstream structures (the vocabulary) by K, so silently
// returning fewer centroids would move the error somewhere harder to find.
// Data with fewer distinct points than K is accepted; some centroids are then
// duplicates and their clusters stay empty, and the objective is zero.
func Train(data []float32, dim int, opt Options) (Result, error) {
	if err := opt.Validate(); err != nil {
		return Result{}, err
	}
	n, err := checkData(data, dim)
	if err != nil {
		return Result{}, err
	}
	if opt.K > n {
		return Result{}, fmt.Errorf("kmeans: K = %d exceeds the number of points %d", opt.K, n)
	}
	for i, v := range data {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return Result{}, fmt.Errorf("kmeans: point %d coordinate %d is %v, want a finite value", i/dim, i%dim, v)
		}
	}
	workers := opt.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}

	rng := rand.New(rand.NewPCG(opt.Seed, pcgStream))
	t := &trainer{
		data:      data,
		dim:       dim,
		n:         n,
		workers:   min(workers, n),
		centroids: KMeansPP(data, dim, opt.K, rng),
		labels:    make([]int32, n),
		dist:      make([]float32, n),
		sums:      NewSums(opt.K, dim),
	}
	for i := range t.labels {
		t.labels[i] = -1
	}

	t.assign()
	t.accumulate()
	res := Result{K: opt.K, Dim: dim}
	obj := t.sums.SSE / float64(n)
	for obj > 0 && res.Iterations < opt.MaxIter {
		empty := Update(t.centroids, t.sums)
		t.reseed(empty)
		res.Iterations++
		changed := t.assign()
		t.accumulate()
		prev := obj
		obj = t.sums.SSE / float64(n)
		// Unchanged labels with no re-seeding mean the next update would
		// reproduce the same centroids: a fixed point, whatever Tol says.
		if (changed == 0 && len(empty) == 0) || prev-obj <= opt.Tol*prev {
			res.Converged = true
			break
		}
	}
	if obj == 0 {
		res.Converged = true
	}
	res.Centroids = t.centroids
	res.Objective = obj
	return res, nil
}

// checkData returns the number of points in data, or an error if data is not
// a non-empty whole number of points of dimension dim.
func checkData(data []float32, dim int) (int, error) {
	if dim < 1 {
		return 0, fmt.Errorf("kmeans: dimension %d, want at least 1", dim)
	}
	if len(data)%dim != 0 {
		return 0, fmt.Errorf("kmeans: %d values is not a whole number of %d-dimensional points", len(data), dim)
	}
	if len(data) == 0 {
		return 0, errors.New("kmeans: no points")
	}
	return len(data) / dim, nil
}

// trainer holds the state of one Train call.
type trainer struct {
	data      []float32
	dim, n    int
	workers   int
	centroids []float32
	labels    []int32   // labels[i] is the cluster of point i
	dist      []float32 // dist[i] is ‖x_i − centroid(labels[i])‖²
	sums      *Sums
	order     []int32 // scratch for reseed, allocated on first use
}

// assign runs Assign over contiguous shards of the points, one per worker.
// Each point's label depends only on that point and the centroids, so the
// sharding does not affect the result.
func (t *trainer) assign() (changed int) {
	if t.workers <= 1 {
		return Assign(t.centroids, t.dim, t.data, t.labels, t.dist)
	}
	counts := make([]int, t.workers)
	var wg sync.WaitGroup
	for w := range t.workers {
		lo, hi := w*t.n/t.workers, (w+1)*t.n/t.workers
		wg.Go(func() {
			counts[w] = Assign(t.centroids, t.dim, t.data[lo*t.dim:hi*t.dim], t.labels[lo:hi], t.dist[lo:hi])
		})
	}
	wg.Wait()
	for _, c := range counts {
		changed += c
	}
	return changed
}

// accumulate rebuilds t.sums from the current assignment.
//
// Floating-point addition is not associative, so per-worker partial sums
// over point ranges that depend on Workers would make the centroids depend
// on Workers in their last bits. Instead each worker owns a range of
// coordinates (columns) and adds every point in ascending order: each sum is
// formed in exactly the order Sums.Add uses, whatever the number of workers,
// and no K×Dim partial buffers are needed. This step costs O(n·Dim) against
// O(n·K·Dim) for assignment.
func (t *trainer) accumulate() {
	s := t.sums
	s.Reset()
	for i, c := range t.labels {
		s.Count[c]++
		s.SSE += float64(t.dist[i])
	}
	// Column ranges are multiples of 8 float64s (64 bytes) so that, for the
	// usual dimensions (multiples of 8, like SIFT's 128), workers do not
	// write to the same cache lines of s.Sum.
	const align = 8
	blocks := (t.dim + align - 1) / align
	w := min(t.workers, blocks)
	if w <= 1 {
		addColumns(s.Sum, t.dim, t.data, t.labels, 0, t.dim)
		return
	}
	var wg sync.WaitGroup
	for i := range w {
		lo, hi := i*blocks/w*align, min((i+1)*blocks/w*align, t.dim)
		wg.Go(func() { addColumns(s.Sum, t.dim, t.data, t.labels, lo, hi) })
	}
	wg.Wait()
}

// reseed moves the centroid of each empty cluster onto one of the points
// farthest from their assigned centroids: the i-th empty cluster (ascending)
// gets the i-th farthest point, ties broken by lower point index.
func (t *trainer) reseed(empty []int) {
	if len(empty) == 0 {
		return
	}
	if t.order == nil {
		t.order = make([]int32, t.n)
	}
	for i := range t.order {
		t.order[i] = int32(i)
	}
	dist := t.dist
	slices.SortFunc(t.order, func(a, b int32) int {
		switch {
		case dist[a] > dist[b]:
			return -1
		case dist[a] < dist[b]:
			return 1
		}
		return int(a) - int(b)
	})
	for j, c := range empty {
		p := int(t.order[j]) // len(empty) < K ≤ n
		copy(t.centroids[c*t.dim:(c+1)*t.dim], t.data[p*t.dim:(p+1)*t.dim])
	}
}

// KMeansPP chooses k initial centroids from the n = len(data)/dim points by
// k-means++ seeding (Arthur & Vassilvitskii, 2007): the first uniformly at
// random, each next one with probability proportional to D(x)², the squared
// distance from x to the nearest centroid chosen so far. When every point
// already coincides with a chosen centroid (D ≡ 0) the next one is drawn
// uniformly, so duplicates appear only if the data has fewer than k distinct
// points. It returns the k×dim centroids, row-major.
//
// The choice depends only on data and the state of rng. KMeansPP panics if
// dim < 1, len(data) is not a positive multiple of dim, or k is not in
// [1, n].
func KMeansPP(data []float32, dim, k int, rng *rand.Rand) []float32 {
	n, err := checkData(data, dim)
	if err != nil {
		panic(err)
	}
	if k < 1 || k > n {
		panic(fmt.Sprintf("kmeans: KMeansPP k = %d, want 1 ≤ k ≤ %d points", k, n))
	}
	cent := make([]float32, k*dim)
	d2 := make([]float32, n)
	copy(cent, data[rng.IntN(n)*dim:])
	inf := float32(math.Inf(1))
	var total float64
	for i := range n {
		d2[i] = sqDist(data[i*dim:(i+1)*dim], cent[:dim], inf)
		total += float64(d2[i])
	}
	for j := 1; j < k; j++ {
		p := -1
		if total > 0 {
			u := rng.Float64() * total
			var acc float64
			for i, d := range d2 {
				acc += float64(d)
				if acc > u {
					p = i
					break
				}
			}
			if p < 0 {
				// Rounding left u beyond the running sum: take the last
				// point that has any weight.
				for p = n - 1; d2[p] == 0; p-- {
				}
			}
		} else {
			p = rng.IntN(n)
		}
		c := cent[j*dim : (j+1)*dim]
		copy(c, data[p*dim:(p+1)*dim])
		total = 0
		for i := range n {
			// Bounding by the current D² lets most distances stop early.
			if d := sqDist(data[i*dim:(i+1)*dim], c, d2[i]); d < d2[i] {
				d2[i] = d
			}
			total += float64(d2[i])
		}
	}
	return cent
}

// Nearest returns the index of the centroid closest to x in squared
// Euclidean distance, and that distance. Ties go to the lowest index.
// centroids holds len(centroids)/dim centroids row-major. Nearest does not
// allocate. It panics if dim < 1, len(x) ≠ dim, or len(centroids) is not a
// positive multiple of dim.
func Nearest(centroids []float32, dim int, x []float32) (int, float32) {
	if dim < 1 || len(x) != dim || len(centroids) == 0 || len(centroids)%dim != 0 {
		panic(fmt.Sprintf("kmeans: Nearest with dim %d, %d centroid values and a point of length %d", dim, len(centroids), len(x)))
	}
	best, bd := 0, sqDist(centroids[:dim], x, float32(math.Inf(1)))
	for c, off := 1, dim; off < len(centroids) && bd > 0; c, off = c+1, off+dim {
		if d := sqDist(centroids[off:off+dim], x, bd); d < bd {
			best, bd = c, d
		}
	}
	return best, bd
}

// sqDist returns ‖a − b‖², or some value ≥ bound as soon as the partial sum
// reaches bound; len(b) must be at least len(a).
//
// Early exit is exact for nearest-neighbour search: every term is
// non-negative and rounding is monotone, so the complete sum can only be at
// least the partial one. Four accumulators break the dependency chain of
// the additions.
func sqDist(a, b []float32, bound float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+16 <= len(a); i += 16 {
		x := a[i : i+16 : i+16]
		y := b[i : i+16 : i+16]
		d0, d1, d2, d3 := x[0]-y[0], x[1]-y[1], x[2]-y[2], x[3]-y[3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
		d0, d1, d2, d3 = x[4]-y[4], x[5]-y[5], x[6]-y[6], x[7]-y[7]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
		d0, d1, d2, d3 = x[8]-y[8], x[9]-y[9], x[10]-y[10], x[11]-y[11]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
		d0, d1, d2, d3 = x[12]-y[12], x[13]-y[13], x[14]-y[14], x[15]-y[15]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
		if s := (s0 + s1) + (s2 + s3); s >= bound {
			return s
		}
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

// Assign sets labels[i] to the index of the centroid nearest to point i of
// data and dist[i] to its squared distance, as Nearest does, and returns how
// many labels changed from their previous value (initialise labels to −1 to
// count every point). It does not allocate. It panics if the lengths of
// data, labels and dist disagree or dim and centroids are inconsistent.
func Assign(centroids []float32, dim int, data []float32, labels []int32, dist []float32) (changed int) {
	if dim < 1 || len(data)%dim != 0 || len(labels) != len(data)/dim || len(dist) != len(labels) {
		panic(fmt.Sprintf("kmeans: Assign with dim %d, %d data values, %d labels, %d distances", dim, len(data), len(labels), len(dist)))
	}
	for i := range labels {
		c, d := Nearest(centroids, dim, data[i*dim:(i+1)*dim])
		if labels[i] != int32(c) {
			labels[i] = int32(c)
			changed++
		}
		dist[i] = d
	}
	return changed
}

// Sums holds the sufficient statistics of an assignment: per-cluster sums of
// the assigned points, their counts, and the total squared distance. Partial
// Sums over disjoint sets of points Merge into the Sums of their union. The
// fields are exported so that Sums can be encoded as a combiner accumulator.
type Sums struct {
	// K and Dim are the number of clusters and the dimension.
	K, Dim int

	// Sum[c*Dim+j] = Σ_{i ∈ cluster c} x_ij, kept in float64 so that large
	// clusters do not lose the low-order bits of their members.
	Sum []float64

	// Count[c] is the number of points assigned to cluster c.
	Count []int64

	// SSE = Σ_i ‖x_i − centroid(i)‖², the unnormalised objective.
	SSE float64
}

// NewSums returns zeroed Sums for k clusters of dimension dim.
// It panics if k or dim is less than 1.
func NewSums(k, dim int) *Sums {
	if k < 1 || dim < 1 {
		panic(fmt.Sprintf("kmeans: NewSums(%d, %d), want positive sizes", k, dim))
	}
	return &Sums{K: k, Dim: dim, Sum: make([]float64, k*dim), Count: make([]int64, k)}
}

// Reset zeroes s, keeping its storage.
func (s *Sums) Reset() {
	clear(s.Sum)
	clear(s.Count)
	s.SSE = 0
}

// Add accumulates the points of data with their labels and squared distances
// (as filled by Assign), in ascending point order. It does not allocate.
// It panics on inconsistent lengths or a label outside [0, K).
func (s *Sums) Add(data []float32, labels []int32, dist []float32) {
	if len(data) != len(labels)*s.Dim || len(dist) != len(labels) {
		panic(fmt.Sprintf("kmeans: Sums.Add with dim %d: %d data values, %d labels, %d distances", s.Dim, len(data), len(labels), len(dist)))
	}
	for i, c := range labels {
		s.Count[c]++
		s.SSE += float64(dist[i])
	}
	addColumns(s.Sum, s.Dim, data, labels, 0, s.Dim)
}

// addColumns adds columns [lo, hi) of each point to the row of sum given by
// its label, in ascending point order.
func addColumns(sum []float64, dim int, data []float32, labels []int32, lo, hi int) {
	for i, c := range labels {
		x := data[i*dim+lo : i*dim+hi]
		row := sum[int(c)*dim+lo : int(c)*dim+hi]
		row = row[:len(x)]
		for j, v := range x {
			row[j] += float64(v)
		}
	}
}

// Merge adds o into s. It panics if their shapes differ.
func (s *Sums) Merge(o *Sums) {
	if s.K != o.K || s.Dim != o.Dim {
		panic(fmt.Sprintf("kmeans: merging Sums of shape %d×%d into %d×%d", o.K, o.Dim, s.K, s.Dim))
	}
	for i, v := range o.Sum {
		s.Sum[i] += v
	}
	for i, v := range o.Count {
		s.Count[i] += v
	}
	s.SSE += o.SSE
}

// Update sets each centroid with a non-empty cluster to the mean of its
// points, Sum[c]/Count[c], and returns the clusters that are empty in
// ascending order (nil if none). Empty clusters keep their centroid; the
// caller decides how to re-seed them. It panics if len(centroids) ≠ K·Dim.
func Update(centroids []float32, s *Sums) (empty []int) {
	if len(centroids) != s.K*s.Dim {
		panic(fmt.Sprintf("kmeans: Update of %d centroid values with Sums of shape %d×%d", len(centroids), s.K, s.Dim))
	}
	for c, cnt := range s.Count {
		if cnt == 0 {
			empty = append(empty, c)
			continue
		}
		n := float64(cnt)
		row := centroids[c*s.Dim : (c+1)*s.Dim]
		sum := s.Sum[c*s.Dim : (c+1)*s.Dim]
		for j := range row {
			row[j] = float32(sum[j] / n)
		}
	}
	return empty
}
