package kmeans

import (
	"container/heap"
	"fmt"
	"math"
	"slices"
)

// Sums holds the sufficient statistics of an assignment: per-cluster sums of
// the assigned points, their counts, and the total squared distance. Partial
// Sums over disjoint sets of points Merge into the Sums of their union. The
// fields are exported so that Sums can be encoded as a combiner accumulator.
//
// Sums may hold a range of the clusters, [Lo, Hi()) (NewRangeSums): they
// then see only the points assigned to that range, so that a vocabulary too
// large for one worker's float64 sums (1,032 bytes a word at D = 128) can be
// summed, merged and updated a word range at a time. The Sums of the ranges
// of a partition of [0, K) hold between them what the Sums of all clusters
// hold, and Update and PlanSplits on them give the same centroids, bit for
// bit.
type Sums struct {
	// K and Dim are the number of clusters and the dimension.
	K, Dim int

	// Lo is the first cluster held: row r of Sum and Count is cluster
	// Lo+r. It is 0, and the rows are K, for NewSums.
	Lo int

	// Sum[r*Dim+j] = Σ_{i ∈ cluster Lo+r} x_ij, kept in float64 so that
	// large clusters do not lose the low-order bits of their members.
	Sum []float64

	// Count[r] is the number of points assigned to cluster Lo+r.
	Count []int64

	// SSE = Σ_i ‖x_i − centroid(i)‖² over the points of the clusters
	// held: the unnormalised objective when they are all K.
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

// NewRangeSums returns zeroed Sums of the clusters [lo, hi) of k clusters of
// dimension dim. It panics unless 0 ≤ lo < hi ≤ k and dim ≥ 1.
func NewRangeSums(k, dim, lo, hi int) *Sums {
	if lo < 0 || hi <= lo || hi > k || dim < 1 {
		panic(fmt.Sprintf("kmeans: NewRangeSums(%d, %d, %d, %d), want 0 ≤ lo < hi ≤ k and a positive dim", k, dim, lo, hi))
	}
	n := hi - lo
	return &Sums{K: k, Dim: dim, Lo: lo, Sum: make([]float64, n*dim), Count: make([]int64, n)}
}

// Hi is one past the last cluster s holds.
func (s *Sums) Hi() int { return s.Lo + len(s.Count) }

// all reports whether s holds every cluster.
func (s *Sums) all() bool { return s.Lo == 0 && len(s.Count) == s.K }

// Reset zeroes s, keeping its storage.
func (s *Sums) Reset() {
	clear(s.Sum)
	clear(s.Count)
	s.SSE = 0
}

// Add accumulates the points of data with their labels and squared distances
// (as nn.Exact.Assign fills them), in ascending point order; Sums of a range
// skip the points of other clusters. It does not allocate. It panics on
// inconsistent lengths or a label outside [0, K).
func (s *Sums) Add(data []float32, labels []int32, dist []float32) {
	if len(data) != len(labels)*s.Dim || len(dist) != len(labels) {
		panic(fmt.Sprintf("kmeans: Sums.Add with dim %d: %d data values, %d labels, %d distances", s.Dim, len(data), len(labels), len(dist)))
	}
	if s.all() {
		for i, c := range labels {
			s.Count[c]++
			s.SSE += float64(dist[i])
		}
		addColumns(s.Sum, s.Dim, data, labels, 0, s.Dim)
		return
	}
	lo, hi := int32(s.Lo), int32(s.Hi())
	for i, c := range labels {
		if c < 0 || int(c) >= s.K {
			panic(fmt.Sprintf("kmeans: Sums.Add of label %d of %d clusters", c, s.K))
		}
		if c < lo || c >= hi {
			continue
		}
		s.Count[c-lo]++
		s.SSE += float64(dist[i])
		row := s.Sum[int(c-lo)*s.Dim : int(c-lo+1)*s.Dim]
		for j, v := range data[i*s.Dim : (i+1)*s.Dim] {
			row[j] += float64(v)
		}
	}
}

// AddCluster adds n points whose coordinates sum to sum to cluster c,
// which s holds: the merge of sums kept elsewhere as integers (exact in
// float64 below 2⁵³). It panics if c is not held or len(sum) ≠ Dim.
func (s *Sums) AddCluster(c int, n int64, sum []int64) {
	if c < s.Lo || c >= s.Hi() || len(sum) != s.Dim {
		panic(fmt.Sprintf("kmeans: Sums.AddCluster(%d, %d values) on clusters [%d, %d) of dim %d", c, len(sum), s.Lo, s.Hi(), s.Dim))
	}
	r := c - s.Lo
	s.Count[r] += n
	row := s.Sum[r*s.Dim : (r+1)*s.Dim]
	for j, v := range sum {
		row[j] += float64(v)
	}
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

// Merge adds o into s. It panics if their shapes or ranges differ.
func (s *Sums) Merge(o *Sums) {
	if s.K != o.K || s.Dim != o.Dim || s.Lo != o.Lo || len(s.Count) != len(o.Count) {
		panic(fmt.Sprintf("kmeans: merging Sums of shape %d×%d, clusters [%d, %d) into %d×%d, clusters [%d, %d)", o.K, o.Dim, o.Lo, o.Hi(), s.K, s.Dim, s.Lo, s.Hi()))
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
// caller decides how to re-seed them. centroids holds the clusters s holds,
// [Lo, Hi()), and the empty clusters are numbered among all K. It panics if
// len(centroids) ≠ (Hi−Lo)·Dim.
func Update(centroids []float32, s *Sums) (empty []int) {
	if len(centroids) != len(s.Count)*s.Dim {
		panic(fmt.Sprintf("kmeans: Update of %d centroid values with Sums of shape %d×%d, clusters [%d, %d)", len(centroids), s.K, s.Dim, s.Lo, s.Hi()))
	}
	for c, cnt := range s.Count {
		if cnt == 0 {
			empty = append(empty, s.Lo+c)
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

// splitEps is the relative perturbation that separates the two halves of a
// split cluster (FAISS's EPS = 1/1024): small against a cluster's radius, so
// the halves start inside the cluster, and large against float32 rounding.
const splitEps = 1.0 / 1024

// Split re-seeds the empty clusters of an update by splitting large ones,
// as FAISS does. It visits empty in the given order (Update returns it
// ascending); for each empty cluster e it takes the cluster m with the
// largest count — counting a cluster already split as two halves, ties to
// the lower index — copies m's centroid to e and pushes the two copies
// apart by ±δ_j in every coordinate j, with alternating signs:
//
//	c_e[j] = c_m[j] + s_j·δ_j,  c_m[j] −= s_j·δ_j,  s_j = (−1)^j,
//	δ_j = ε·max(|c_m[j]|, mean_j |c_m[j]|),  ε = 1/1024
//
// (δ_j = ε if the centroid is zero). The next assignment then divides m's
// points between the two. Clusters with at most one point are never split;
// if no cluster has two, the remaining empty clusters keep their centroids.
//
// Split needs only the counts of the update, so a distributed trainer can
// apply it to merged Sums and get what Train gets: it is PlanSplits on the
// counts, then ApplySplits on the centroids. It is deterministic and
// allocates O(K). It panics if len(centroids) ≠ len(count)·dim or an empty
// index is out of range.
func Split(centroids []float32, dim int, count []int64, empty []int) {
	if dim < 1 || len(centroids) != len(count)*dim {
		panic(fmt.Sprintf("kmeans: Split of %d centroid values with dim %d and %d counts", len(centroids), dim, len(count)))
	}
	ApplySplits(PlanSplits(count, empty), dim, func(c int) []float32 { return centroids[c*dim : (c+1)*dim] })
}

// SplitPair is one split of Split: the empty cluster E takes a perturbed
// copy of the centroid of cluster M, and M the opposite perturbation.
type SplitPair struct{ E, M int }

// PlanSplits returns the splits Split makes, in the order it makes them,
// from the counts of all clusters and the empty ones alone: a distributed
// trainer plans on one worker from K counts and applies the plan to the
// few centroids it touches (SplitRows) wherever they are. It panics if an
// empty index it visits is out of range.
func PlanSplits(count []int64, empty []int) []SplitPair {
	if len(empty) == 0 {
		return nil
	}
	h := make(sizeHeap, 0, len(count))
	for c, n := range count {
		if n > 1 {
			h = append(h, clusterSize{n, int32(c)})
		}
	}
	heap.Init(&h)
	var pairs []SplitPair
	for _, e := range empty {
		if e < 0 || e >= len(count) {
			panic(fmt.Sprintf("kmeans: Split of empty cluster %d of %d", e, len(count)))
		}
		if len(h) == 0 {
			break
		}
		top := heap.Pop(&h).(clusterSize)
		m := int(top.c)
		pairs = append(pairs, SplitPair{E: e, M: m})
		// Each half is expected to get half of the points: offer them to
		// the next empty clusters in that proportion.
		if a := top.n - top.n/2; a > 1 {
			heap.Push(&h, clusterSize{a, int32(m)})
		}
		if b := top.n / 2; b > 1 {
			heap.Push(&h, clusterSize{b, int32(e)})
		}
	}
	return pairs
}

// SplitRows returns the clusters whose centroids ApplySplits(pairs) reads
// or writes, ascending and distinct.
func SplitRows(pairs []SplitPair) []int {
	rows := make([]int, 0, 2*len(pairs))
	for _, p := range pairs {
		rows = append(rows, p.E, p.M)
	}
	slices.Sort(rows)
	return slices.Compact(rows)
}

// ApplySplits makes the splits of pairs in order (see Split), on the
// centroids of dimension dim that row returns for a cluster of
// SplitRows(pairs); it reads and writes no others.
func ApplySplits(pairs []SplitPair, dim int, row func(c int) []float32) {
	for _, p := range pairs {
		src, dst := row(p.M), row(p.E)
		if len(src) != dim || len(dst) != dim {
			panic(fmt.Sprintf("kmeans: ApplySplits with dim %d on rows of %d and %d values", dim, len(src), len(dst)))
		}
		var scale float64
		for _, v := range src {
			scale += math.Abs(float64(v))
		}
		scale /= float64(dim)
		for j, v := range src {
			d := splitEps * max(math.Abs(float64(v)), scale)
			if d == 0 {
				d = splitEps
			}
			if j%2 == 1 {
				d = -d
			}
			dst[j] = float32(float64(v) + d)
			src[j] = float32(float64(v) - d)
		}
	}
}

// clusterSize is a cluster and its (expected) number of points.
type clusterSize struct {
	n int64
	c int32
}

// sizeHeap is a max-heap of clusters by size, ties to the lower index, for
// container/heap. The order is total on distinct clusters, so the order of
// the pops does not depend on how the heap arranges its elements.
type sizeHeap []clusterSize

func (h sizeHeap) Len() int { return len(h) }

func (h sizeHeap) Less(i, j int) bool {
	return h[i].n > h[j].n || (h[i].n == h[j].n && h[i].c < h[j].c)
}

func (h sizeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }

func (h *sizeHeap) Push(x any) { *h = append(*h, x.(clusterSize)) }

func (h *sizeHeap) Pop() any {
	s := *h
	x := s[len(s)-1]
	*h = s[:len(s)-1]
	return x
}
