package solis

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bowline/bowline/learners/sparse"
)

// zipfPool returns n triplet features over dim words with about nnz
// non-zeros each. Word ranks are Zipf-distributed (s = 1.1) and mapped
// through a random permutation, so frequent words are scattered over the
// weight vector as the ids of a k-means vocabulary are. Values are of the
// size of products of L2-normalised BoW entries, 60% positive.
func zipfPool(seed uint64, dim, nnz, n int) []sparse.Vector {
	r := rand.New(rand.NewPCG(seed, 1))
	z := rand.NewZipf(r, 1.1, 1, uint64(dim-1))
	perm := r.Perm(dim)
	pool := make([]sparse.Vector, n)
	seen := make(map[uint32]bool, nnz)
	for j := range pool {
		clear(seen)
		idx := make([]uint32, 0, nnz)
		for len(idx) < nnz {
			w := uint32(perm[z.Uint64()])
			if !seen[w] {
				seen[w] = true
				idx = append(idx, w)
			}
		}
		slices.Sort(idx)
		val := make([]float32, nnz)
		for k := range val {
			v := float32(0.0005 + 0.004*r.Float64())
			if r.IntN(10) < 4 {
				v = -v
			}
			val[k] = v
		}
		pool[j] = sparse.Vector{Idx: idx, Val: val}
	}
	return pool
}

// BenchmarkADAUpdate measures SOLIS-ADA on a 1,000,000-word model with a
// cycled pool of 10,000 precomputed triplet features of 70 non-zeros. It
// reports triplets/s and the share of steps with a positive loss (those
// also write s and G; the others only read). The project's goal is
// ≥ 520,000 triplets/s on one core.
func BenchmarkADAUpdate(b *testing.B) {
	const dim, nnz, poolSize = 1_000_000, 70, 10_000
	pool := zipfPool(42, dim, nnz, poolSize)
	for _, p := range []ADAParams{
		DefaultADAParams(),
		{Eta: 1, Lambda: 1e-6, Delta: 1e-8},
	} {
		name := "lambda=0"
		if p.Lambda != 0 {
			name = "lambda=1e-6"
		}
		b.Run(name, func(b *testing.B) {
			a, err := NewADA(dim, p)
			if err != nil {
				b.Fatal(err)
			}
			violated := 0
			b.ReportAllocs()
			k := 0
			for b.Loop() {
				if a.Update(pool[k]) > 0 {
					violated++
				}
				if k++; k == poolSize {
					k = 0
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "triplets/s")
			b.ReportMetric(float64(violated)/float64(b.N), "violated/op")
		})
	}
}
