package mglp

import (
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/bowline/bowline/learners/itq"
)

// candidateFactor is how many Hamming-ranked candidates per wanted
// neighbour the approximate search re-ranks by exact distance.
const candidateFactor = 4

// neighbors returns, for every row i of X, the indices of k other rows in
// increasing Euclidean distance (ties by index). With lshBits = 0 the search
// is exact, O(n²d) (blocked, through matrix products). Otherwise it is
// approximate, as the paper allows (§3.4): rows are hashed with lshBits sign
// random projections (itq.TrainLSH; at most d of them), the
// candidateFactor·k rows nearest in Hamming distance are collected by a
// Hamming scan (O(n) popcounts per row, cheap next to O(nd) flops but not
// sub-linear), and those are re-ranked by exact distance. The sparse coding
// then picks among the k neighbours, so they need not be the exact nearest
// ones.
func neighbors(X *mat.Dense, k, lshBits int, seed uint64) ([][]int, error) {
	n, d := X.Dims()
	k = min(k, n-1)
	out := make([][]int, n)
	if lshBits == 0 {
		exactNeighbors(X, k, out)
		return out, nil
	}
	lsh, err := itq.TrainLSH(X, min(lshBits, d), itq.Options{Seed: seed})
	if err != nil {
		return nil, err
	}
	codes, err := lsh.EncodeAll(X)
	if err != nil {
		return nil, err
	}
	m := min(candidateFactor*k+1, n) // +1: the row itself ranks first
	for i := range n {
		cand := itq.Rank(codes[i], codes)[:m]
		x := X.RawRowView(i)
		top := newTopK(k)
		for _, j := range cand {
			if j == i {
				continue
			}
			var s float64
			for c, v := range X.RawRowView(j) {
				s += (v - x[c]) * (v - x[c])
			}
			top.push(j, s)
		}
		out[i] = top.indices()
	}
	return out, nil
}

// exactNeighbors fills out[i] with the k nearest other rows of row i, from
// squared distances ‖x_i‖² + ‖x_j‖² − 2x_iᵀx_j computed a block of rows at a
// time.
func exactNeighbors(X *mat.Dense, k int, out [][]int) {
	n, _ := X.Dims()
	sq := make([]float64, n)
	for i := range n {
		for _, v := range X.RawRowView(i) {
			sq[i] += v * v
		}
	}
	const block = 128
	var G mat.Dense
	for lo := 0; lo < n; lo += block {
		hi := min(lo+block, n)
		G.Reset()
		G.Mul(X.Slice(lo, hi, 0, X.RawMatrix().Cols), X.T())
		for i := lo; i < hi; i++ {
			g := G.RawRowView(i - lo)
			top := newTopK(k)
			for j := range n {
				if j != i {
					top.push(j, sq[i]+sq[j]-2*g[j])
				}
			}
			out[i] = top.indices()
		}
	}
}

// topK keeps the k smallest (distance, index) pairs seen, in order; ties go
// to the smaller index.
type topK struct {
	k    int
	idx  []int
	dist []float64
}

func newTopK(k int) *topK {
	return &topK{k: k, idx: make([]int, 0, k), dist: make([]float64, 0, k)}
}

func (t *topK) push(j int, d float64) {
	less := func(a int) bool { // is (d, j) before entry a?
		return d < t.dist[a] || (d == t.dist[a] && j < t.idx[a])
	}
	if len(t.idx) == t.k {
		if t.k == 0 || !less(t.k-1) {
			return
		}
		t.idx, t.dist = t.idx[:t.k-1], t.dist[:t.k-1]
	}
	pos := len(t.idx)
	for pos > 0 && less(pos-1) {
		pos--
	}
	t.idx = slices.Insert(t.idx, pos, j)
	t.dist = slices.Insert(t.dist, pos, d)
}

func (t *topK) indices() []int { return slices.Clone(t.idx) }
