package kmeans

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// initialize is Initialize on checked arguments.
func initialize(data []float32, dim, n int, opt Options) []float32 {
	rng := rand.New(rand.NewPCG(opt.Seed, pcgStream))
	switch opt.InitMethod() {
	case InitRandom:
		idx := distinctSample(n, opt.K, rng)
		cent := make([]float32, opt.K*dim)
		for j, i := range idx {
			copy(cent[j*dim:(j+1)*dim], data[int(i)*dim:])
		}
		opt.report(Progress{Seeding: true, Seeded: opt.K, K: opt.K})
		return cent
	case InitParallel:
		return kmeansParallel(data, dim, opt)
	default:
		seeded := func(j int) { opt.report(Progress{Seeding: true, Seeded: j, K: opt.K}) }
		if opt.Progress == nil {
			seeded = nil
		}
		if opt.InitSample == 0 || opt.InitSample >= n {
			// Drawing nothing before KMeansPP keeps the centroids of
			// earlier versions, which always seeded on every point.
			return kmeansPP(data, dim, opt.K, nil, rng, seeded)
		}
		idx := distinctSample(n, opt.InitSample, rng)
		// Ascending order reads data sequentially; the sample is a set.
		slices.Sort(idx)
		sub := make([]float32, len(idx)*dim)
		for j, i := range idx {
			copy(sub[j*dim:(j+1)*dim], data[int(i)*dim:])
		}
		return kmeansPP(sub, dim, opt.K, nil, rng, seeded)
	}
}

// distinctSample returns m distinct indices in [0, n) drawn uniformly, in
// the order drawn, by a partial Fisher–Yates shuffle.
func distinctSample(n, m int, rng *rand.Rand) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	for i := range m {
		j := i + rng.IntN(n-i)
		p[i], p[j] = p[j], p[i]
	}
	return p[:m:m]
}

// KMeansPP chooses k initial centroids from the n = len(data)/dim points by
// k-means++ seeding (Arthur & Vassilvitskii, 2007): the first uniformly at
// random, each next one with probability proportional to D(x)², the squared
// distance from x to the nearest centroid chosen so far. When every point
// already coincides with a chosen centroid (D ≡ 0) the next one is drawn
// uniformly, so duplicates appear only if the data has fewer than k distinct
// points. It returns the k×dim centroids, row-major.
//
// The choice depends only on data and the state of rng, not on the number
// of goroutines that compute the distances (up to GOMAXPROCS, with at least
// 4,096 points each). After each choice every point's D² is lowered to its
// distance to the new centroid where that is smaller; a point is compared
// in full only where its distance on the data's principal axes does not
// already rule the centroid out, which leaves the D², and so the choices,
// those of comparing every point in full (see lowering). KMeansPP panics if dim < 1, len(data) is not a
// positive multiple of dim, or k is not in [1, n].
func KMeansPP(data []float32, dim, k int, rng *rand.Rand) []float32 {
	return kmeansPP(data, dim, k, nil, rng, nil)
}

// WeightedKMeansPP is KMeansPP where point i stands for weight[i] copies
// of itself: the first centroid is drawn with probability proportional to
// the weights and each next one proportional to weight·D(x)², so that a
// point of integer weight w is chosen as w adjacent copies of it would be,
// by the same draws of rng. Points of weight 0 are drawn only when every
// weighted point coincides with a chosen centroid, uniformly then. It
// panics as KMeansPP does, and if len(weight) ≠ n or a weight is negative,
// not finite, or all are zero.
func WeightedKMeansPP(data []float32, dim, k int, weight []float64, rng *rand.Rand) []float32 {
	return kmeansPP(data, dim, k, weight, rng, nil)
}

// kmeansPP is KMeansPP, weighted by weight unless it is nil, that calls
// seeded (if not nil) with the number of centroids chosen after each.
func kmeansPP(data []float32, dim, k int, weight []float64, rng *rand.Rand, seeded func(int)) []float32 {
	n, err := checkData(data, dim)
	if err != nil {
		panic(err)
	}
	if k < 1 || k > n {
		panic(fmt.Sprintf("kmeans: KMeansPP k = %d, want 1 ≤ k ≤ %d points", k, n))
	}
	var wsum float64
	if weight != nil {
		if len(weight) != n {
			panic(fmt.Sprintf("kmeans: WeightedKMeansPP with %d weights for %d points", len(weight), n))
		}
		for i, w := range weight {
			if !(w >= 0) || math.IsInf(w, 1) {
				panic(fmt.Sprintf("kmeans: WeightedKMeansPP weight %d is %v, want a finite non-negative number", i, w))
			}
			wsum += w
		}
		if wsum == 0 {
			panic("kmeans: WeightedKMeansPP weights are all zero")
		}
	}
	// w is the weight of point i.
	w := func(i int) float64 {
		if weight == nil {
			return 1
		}
		return weight[i]
	}
	draw := func(u float64, f func(int) float64) int { return drawIndex(n, u, f) }
	cent := make([]float32, k*dim)
	first := 0
	if weight == nil {
		first = rng.IntN(n)
	} else {
		first = draw(rng.Float64()*wsum, w)
	}
	copy(cent, data[first*dim:])
	lw := newLowering(data, dim, k)
	lw.lower(first)
	d2 := lw.d2
	wd2 := func(i int) float64 { return w(i) * float64(d2[i]) }
	var total float64
	for i := range d2 {
		total += wd2(i)
	}
	if seeded != nil {
		seeded(1)
	}
	for j := 1; j < k; j++ {
		var p int
		if total > 0 {
			p = draw(rng.Float64()*total, wd2)
		} else {
			p = rng.IntN(n)
		}
		copy(cent[j*dim:(j+1)*dim], data[p*dim:(p+1)*dim])
		lw.lower(p)
		// The total is summed in point order so that it, and every later
		// choice, does not depend on which distances were computed or on
		// the number of goroutines.
		total = 0
		for i := range d2 {
			total += wd2(i)
		}
		if seeded != nil {
			seeded(j + 1)
		}
	}
	return cent
}

// drawIndex returns the point of the n where the running sum of f over
// the points first exceeds u (< the total of f), or the last point where
// f is positive if rounding left u beyond the running sum.
func drawIndex(n int, u float64, f func(int) float64) int {
	var acc float64
	for i := range n {
		acc += f(i)
		if acc > u {
			return i
		}
	}
	p := n - 1
	for f(p) == 0 {
		p--
	}
	return p
}

// kmeansPPGrain is the fewest points per goroutine in KMeansPP: below it the
// cost of starting goroutines for every centre outweighs the distances.
const kmeansPPGrain = 4096
