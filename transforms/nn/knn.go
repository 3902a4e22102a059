package nn

import (
	"fmt"
	"math"
)

// NearestK finds the k = len(idx) centroids nearest to x in squared
// Euclidean distance, the exact reference for Forest.NearestK: it writes
// their indices to idx and their distances to dist in ascending order of
// distance, ties to the lower index, and returns how many it wrote,
// min(k, len(centroids)/dim). centroids holds len(centroids)/dim centroids
// row-major. Soft assignment of a descriptor to several visual words needs
// its few nearest words, not just the nearest; with k = 1 the result is
// exactly Nearest's.
//
// The buffers belong to the caller, so NearestK does not allocate. It
// panics if dim < 1, len(x) ≠ dim, len(centroids) is not a positive multiple
// of dim, or len(dist) ≠ len(idx).
func NearestK(centroids []float32, dim int, x []float32, idx []int32, dist []float32) int {
	if dim < 1 || len(x) != dim || len(centroids) == 0 || len(centroids)%dim != 0 || len(dist) != len(idx) {
		panic(fmt.Sprintf("nn: NearestK with dim %d, %d centroid values, a point of length %d, %d indices and %d distances", dim, len(centroids), len(x), len(idx), len(dist)))
	}
	k := len(idx)
	if k == 0 {
		return 0
	}
	n := 0
	inf := float32(math.Inf(1))
	for c, off := 0, 0; off < len(centroids); c, off = c+1, off+dim {
		bound := inf
		if n == k {
			bound = dist[k-1]
		}
		// Centroids come in ascending index order, so one at exactly the
		// bound loses the tie to those already kept: only a strictly
		// smaller distance, which is then complete, enters the list.
		if d := sqDist(centroids[off:off+dim], x, bound); n < k || d < bound {
			n = insertK(idx, dist, n, int32(c), d)
		}
	}
	return n
}

// insertK inserts centroid c at squared distance d into the n sorted
// entries of idx and dist — ascending distance, ties to the lower index —
// dropping the last entry if the list is full, and returns the new length.
// The caller has checked that (d, c) belongs in the list.
func insertK(idx []int32, dist []float32, n int, c int32, d float32) int {
	if n < len(idx) {
		n++
	}
	p := n - 1
	for ; p > 0 && (dist[p-1] > d || (dist[p-1] == d && idx[p-1] > c)); p-- {
		idx[p], dist[p] = idx[p-1], dist[p-1]
	}
	idx[p], dist[p] = c, d
	return n
}

// NearestK is NearestK (the function) through the forest: it writes to idx
// and dist an approximation of the k = len(idx) centroids nearest to x,
// ascending by squared distance with ties to the lower index among the
// centroids examined, and returns how many it wrote, min(k, K()). Every
// distance is exact for its centroid, and the i-th distance returned is
// never below the exact i-th nearest distance.
//
// The search is Nearest's, bounded by the k-th best distance found instead
// of the best: a branch is explored only if its cell may hold a centroid
// nearer than the current k-th. It stops at the first leaf reached once
// both Checks distances have been computed and k centroids are held, so it
// computes at most max(Checks, k) + LeafSize − 1 distances, and with
// Checks ≥ K it is exhaustive and returns exactly what NearestK (the function) returns.
// With k = 1 it returns exactly what Nearest returns.
//
// scratch may be nil, in which case a Search is allocated; with a reused
// scratch and the caller's buffers NearestK does not allocate. It panics if
// len(x) ≠ Dim() or len(dist) ≠ len(idx).
func (f *Forest) NearestK(x []float32, idx []int32, dist []float32, scratch *Search) int {
	if len(x) != f.dim || len(dist) != len(idx) {
		panic(fmt.Sprintf("nn: Forest.NearestK with a point of length %d (want %d), %d indices and %d distances", len(x), f.dim, len(idx), len(dist)))
	}
	s := scratch
	if s == nil {
		s = new(Search)
	}
	if len(idx) == 0 {
		s.Checked = 0
		return 0
	}
	if f.opt.Checks >= f.k {
		s.Checked = f.k
		return NearestK(f.centroids, f.dim, x, idx, dist)
	}
	s.start(f.k)
	s.kidx, s.kdist, s.kn = idx, dist, 0
	for _, r := range f.roots {
		f.descendK(r, 0, x, s)
	}
	for len(s.heap) > 0 && (s.Checked < f.opt.Checks || s.kn < len(idx)) {
		b := s.pop()
		if b.d >= s.kbound() {
			// The queue is ordered, so no branch left is more promising.
			break
		}
		f.descendK(b.n, b.d, x, s)
	}
	n := s.kn
	// Do not keep the caller's buffers alive through the scratch.
	s.kidx, s.kdist = nil, nil
	return n
}

// NearestKBytes is NearestK for a point of bytes, such as a SIFT
// descriptor, converted to float32 in scratch's storage. It does not
// allocate once scratch has grown. It panics if len(x) ≠ Dim() or
// len(dist) ≠ len(idx).
func (f *Forest) NearestKBytes(x []byte, idx []int32, dist []float32, scratch *Search) int {
	if len(x) != f.dim {
		panic(fmt.Sprintf("nn: Forest.NearestKBytes with a point of length %d, want %d", len(x), f.dim))
	}
	if scratch == nil {
		scratch = new(Search)
	}
	return f.NearestK(scratch.bytesToFloat(x), idx, dist, scratch)
}

// bytesToFloat converts x into s.x, growing it if needed, and returns it.
func (s *Search) bytesToFloat(x []byte) []float32 {
	if cap(s.x) < len(x) {
		s.x = make([]float32, len(x))
	}
	p := s.x[:len(x)]
	for j, v := range x {
		p[j] = float32(v)
	}
	return p
}

// start prepares s for a query over k centroids: a new epoch of marks, an
// empty queue and no distances computed.
func (s *Search) start(k int) {
	if len(s.seen) < k {
		s.seen = make([]uint32, k)
		s.epoch = 0
	}
	s.epoch++
	if s.epoch == 0 {
		// After 2³² queries the marks wrap around; start them afresh.
		clear(s.seen)
		s.epoch = 1
	}
	s.heap = s.heap[:0]
	s.Checked = 0
}

// kbound is the distance a centroid must beat to enter the k-NN list: the
// k-th best so far, or +Inf while fewer than k are held.
func (s *Search) kbound() float32 {
	if s.kn < len(s.kidx) {
		return float32(math.Inf(1))
	}
	return s.kdist[s.kn-1]
}

// descendK is descend for NearestK: the bound is the k-th best distance,
// and every centroid of a leaf that beats it enters the list.
func (f *Forest) descendK(n int32, mind float32, x []float32, s *Search) {
	bound := s.kbound()
	nd := &f.nodes[n]
	for nd.dim >= 0 {
		diff := x[nd.dim] - nd.cut
		near, far := nd.a, nd.b
		if diff >= 0 {
			near, far = nd.b, nd.a
		}
		if fd := mind + diff*diff; fd < bound {
			s.push(branch{fd, far})
		}
		nd = &f.nodes[near]
	}
	k := len(s.kidx)
	if s.Checked >= f.opt.Checks && s.kn == k {
		return
	}
	dim := f.dim
	inf := float32(math.Inf(1))
	for _, c := range f.perm[nd.a:nd.b] {
		if s.seen[c] == s.epoch {
			continue
		}
		s.seen[c] = s.epoch
		s.Checked++
		row := f.centroids[int(c)*dim : int(c)*dim+dim]
		d := sqDist(row, x, bound)
		switch {
		case d < bound || s.kn < k:
		case d == bound && c < s.kidx[k-1]:
			// sqDist may have stopped early at exactly the bound; only a
			// complete distance equal to it is a tie, won by the lower
			// index.
			if d = sqDist(row, x, inf); d != bound {
				continue
			}
		default:
			continue
		}
		s.kn = insertK(s.kidx, s.kdist, s.kn, c, d)
		bound = s.kbound()
	}
}
