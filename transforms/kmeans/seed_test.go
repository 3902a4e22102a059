package kmeans

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bowline/bowline/transforms/nn"
)

// siftLike returns n points of dimension dim shaped like SIFT descriptors:
// non-negative integers, sparse and heavy-tailed, around clusters centres
// (groups of similar patches), so that k-means++ distances behave as on
// real descriptors (most far, a few near) rather than as on uniform data.
func siftLike(rng *rand.Rand, n, dim, clusters int) []float32 {
	centres := make([]float64, clusters*dim)
	for i := range centres {
		if rng.IntN(3) > 0 {
			centres[i] = 40 * rng.ExpFloat64()
		}
	}
	data := make([]float32, n*dim)
	for i := range n {
		c := centres[rng.IntN(clusters)*dim:]
		for j := range dim {
			v := c[j] + 12*rng.NormFloat64()
			data[i*dim+j] = float32(math.Round(math.Min(255, math.Max(0, v))))
		}
	}
	return data
}

// BenchmarkWeightedKMeansPP is k-means‖'s last step at the scale of a
// 10K-word vocabulary: about 2K candidates (DefaultSeedRounds rounds of ℓ
// = K) weighted by the points nearest each, K of them chosen.
func BenchmarkWeightedKMeansPP(b *testing.B) {
	const dim = 128
	for _, sz := range []struct{ n, k int }{{4000, 2000}, {20000, 10000}} {
		b.Run(fmt.Sprintf("n=%d/k=%d", sz.n, sz.k), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			data := siftLike(rng, sz.n, dim, 1000)
			weight := make([]float64, sz.n)
			for i := range weight {
				weight[i] = float64(1 + rng.IntN(20))
			}
			for b.Loop() {
				WeightedKMeansPP(data, dim, sz.k, weight, rand.New(rand.NewPCG(3, 4)))
			}
		})
	}
}

// plainKMeansPP is weighted k-means++ with every point's D² lowered by
// nn.LowerSqDist after every centre: the definition that kmeansPP's
// pruned update must reproduce bit for bit (its draws are kmeansPP's).
func plainKMeansPP(data []float32, dim, k int, weight []float64, rng *rand.Rand) []float32 {
	n := len(data) / dim
	w := func(i int) float64 { return weight[i] }
	draw := func(u float64, f func(int) float64) int { return drawIndex(n, u, f) }
	var wsum float64
	for _, x := range weight {
		wsum += x
	}
	cent := make([]float32, k*dim)
	d2 := make([]float32, n)
	for i := range d2 {
		d2[i] = float32(math.Inf(1))
	}
	p := draw(rng.Float64()*wsum, w)
	for j := range k {
		if j > 0 {
			var total float64
			for i := range n {
				total += w(i) * float64(d2[i])
			}
			if total > 0 {
				p = draw(rng.Float64()*total, func(i int) float64 { return w(i) * float64(d2[i]) })
			} else {
				p = rng.IntN(n)
			}
		}
		copy(cent[j*dim:], data[p*dim:(p+1)*dim])
		nn.LowerSqDist(data, dim, cent[j*dim:(j+1)*dim], d2)
	}
	return cent
}

// TestKMeansPPPruned checks that k-means++ with the triangle-inequality
// pruning of its D² update chooses the centroids of the plain update, bit
// for bit, on data where distances round (real-valued coordinates, of
// very different scales, tiny and huge), with duplicates, zero weights,
// dimensions that are and are not multiples of the vector kernel's 16,
// and non-finite values (which take the plain update).
func TestKMeansPPPruned(t *testing.T) {
	type tc struct {
		name string
		dim  int
		data []float32
	}
	rng := rand.New(rand.NewPCG(11, 12))
	gauss := func(n, dim int, scale float64) []float32 {
		x := make([]float32, n*dim)
		for i := range x {
			x[i] = float32(scale * rng.NormFloat64())
		}
		return x
	}
	var cases []tc
	for _, dim := range []int{1, 3, 16, 37, 128} {
		cases = append(cases,
			tc{fmt.Sprintf("gauss/dim=%d", dim), dim, gauss(600, dim, 1)},
			tc{fmt.Sprintf("tiny/dim=%d", dim), dim, gauss(300, dim, 1e-20)},
			tc{fmt.Sprintf("huge/dim=%d", dim), dim, gauss(300, dim, 1e18)},
		)
	}
	cases = append(cases, tc{"sift", 128, siftLike(rng, 3000, 128, 40)})
	// Clustered points with duplicates: many D² are 0 or exactly tied.
	dup := siftLike(rng, 200, 64, 5)
	for range 3 {
		dup = append(dup, dup[:100*64]...)
	}
	cases = append(cases, tc{"duplicates", 64, dup})
	// Points at nearly the pruning boundary: x, c_l and c on a line with
	// ‖c − c_l‖ = 2‖x − c_l‖ up to rounding.
	var line []float32
	for i := range 200 {
		a := float32(1 + i%7)
		line = append(line, 0, 0, a, 0, 2*a, 0, float32(i), 1)
	}
	cases = append(cases, tc{"boundary", 2, line})
	nonFinite := gauss(200, 8, 1)
	nonFinite[37] = float32(math.Inf(1))
	nonFinite[400] = float32(math.NaN())
	cases = append(cases, tc{"non-finite", 8, nonFinite})
	// Enough points for several goroutines.
	cases = append(cases, tc{"goroutines", 64, siftLike(rng, 3*kmeansPPGrain, 64, 30)})
	for _, c := range cases {
		n := len(c.data) / c.dim
		weight := make([]float64, n)
		for i := range weight {
			weight[i] = float64(rng.IntN(4)) // a quarter weigh 0
		}
		weight[0] = 1
		ks := []int{1, n / 10, n / 2, n}
		if n > 2000 {
			ks = []int{1, 300}
		}
		for _, k := range ks {
			if k < 1 {
				continue
			}
			for seed := range uint64(3) {
				want := plainKMeansPP(c.data, c.dim, k, weight, rand.New(rand.NewPCG(seed, 5)))
				got := WeightedKMeansPP(c.data, c.dim, k, weight, rand.New(rand.NewPCG(seed, 5)))
				if !slices.Equal(math32Bits(got), math32Bits(want)) {
					t.Fatalf("%s k=%d seed %d: pruned k-means++ chose other centroids than the plain update", c.name, k, seed)
				}
			}
		}
	}
}

// math32Bits returns the bit patterns of x, so that NaNs compare equal.
func math32Bits(x []float32) []uint32 {
	b := make([]uint32, len(x))
	for i, v := range x {
		b[i] = math.Float32bits(v)
	}
	return b
}
