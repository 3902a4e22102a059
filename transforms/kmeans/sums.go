package kmeans

import (
	"container/heap"
	"fmt"
	"math"
)

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
// (as nn.Exact.Assign fills them), in ascending point order. It does not allocate.
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
// apply it to merged Sums and get what Train gets. It is deterministic and
// allocates O(K). It panics if len(centroids) ≠ len(count)·dim or an empty
// index is out of range.
func Split(centroids []float32, dim int, count []int64, empty []int) {
	if dim < 1 || len(centroids) != len(count)*dim {
		panic(fmt.Sprintf("kmeans: Split of %d centroid values with dim %d and %d counts", len(centroids), dim, len(count)))
	}
	if len(empty) == 0 {
		return
	}
	h := make(sizeHeap, 0, len(count))
	for c, n := range count {
		if n > 1 {
			h = append(h, clusterSize{n, int32(c)})
		}
	}
	heap.Init(&h)
	for _, e := range empty {
		if e < 0 || e >= len(count) {
			panic(fmt.Sprintf("kmeans: Split of empty cluster %d of %d", e, len(count)))
		}
		if len(h) == 0 {
			return
		}
		top := heap.Pop(&h).(clusterSize)
		m := int(top.c)
		src := centroids[m*dim : (m+1)*dim]
		dst := centroids[e*dim : (e+1)*dim]
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
		// Each half is expected to get half of the points: offer them to
		// the next empty clusters in that proportion.
		if a := top.n - top.n/2; a > 1 {
			heap.Push(&h, clusterSize{a, int32(m)})
		}
		if b := top.n / 2; b > 1 {
			heap.Push(&h, clusterSize{b, int32(e)})
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
