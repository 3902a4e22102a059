package kmeans

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/bowline/bowline/transforms/nn"
)

// KMeansParallel chooses k initial centroids from the n = len(data)/dim
// points by k-means‖ (Bahmani et al., "Scalable K-Means++", VLDB 2012):
//
//  1. One point, chosen by seed, is the first candidate; D²(x) is the
//     squared distance from x to its nearest candidate and φ = Σ D²(x).
//  2. Each of rounds rounds keeps point x as a new candidate with
//     probability min(1, ℓ·D²(x)/φ), ℓ = oversampling·k, so that about ℓ
//     are drawn a round, mostly where the candidates explain the data
//     worst; then D² is lowered to the new candidates and φ summed anew.
//     Rounds stop early once φ = 0.
//  3. If fewer than k candidates were drawn (tiny data, or few distinct
//     points), the points farthest from them are added.
//  4. Each candidate is weighted by the number of points nearest to it and
//     WeightedKMeansPP chooses the k centroids among the candidates.
//
// Bahmani et al. prove a constant-factor approximation after O(log φ₀)
// rounds and find about five rounds of ℓ = 2k as good as k-means++ in
// practice. A round is a map over the points plus a sum (φ) and a
// concatenation (the candidates): each point's draw is a hash of (seed,
// round, point index), not a shared random stream, so the points can be
// split among workers in any way and give the same candidates. D² is
// updated by nn.Exact's matrix-product kernel over each round's new
// candidates, or by an IVF over them (TrainIVF) when they exceed
// parallelIVFMin, which can leave D² a little above the exact distance;
// the draws only need it to be roughly proportional.
//
// The work is about n·ℓ·rounds distance computations in the blocked
// kernel (or an IVF's fraction of them) plus k·(ℓ·rounds) for the final
// k-means++, against k-means++'s n·k one at a time. The result depends
// only on data, k, seed, rounds and oversampling, not on the number of
// goroutines. It panics if dim < 1, len(data) is not a positive multiple
// of dim, k is not in [1, n], rounds < 1 or oversampling ≤ 0.
func KMeansParallel(data []float32, dim, k int, seed uint64, rounds int, oversampling float64) []float32 {
	return kmeansParallel(data, dim, Options{K: k, Seed: seed, SeedRounds: rounds, SeedOversampling: oversampling})
}

// parallelIVFMin is the most new candidates of a round whose D² update
// compares every point with every one of them; above it the update
// searches an IVF over them, whose cost grows as √candidates.
const parallelIVFMin = 4096

// kmeansParallel is KMeansParallel with the parameters of opt (zero rounds
// or oversampling taking the defaults), reporting to opt.Progress.
func kmeansParallel(data []float32, dim int, opt Options) []float32 {
	n, err := checkData(data, dim)
	if err != nil {
		panic(err)
	}
	k, rounds, over := opt.K, opt.SeedRounds, opt.SeedOversampling
	if rounds == 0 {
		rounds = DefaultSeedRounds
	}
	if over == 0 {
		over = DefaultSeedOversampling
	}
	if k < 1 || k > n || rounds < 1 || !(over > 0) {
		panic("kmeans: KMeansParallel needs 1 ≤ k ≤ n points, rounds ≥ 1 and oversampling > 0")
	}
	ell := over * float64(k)
	s := newSeeder(data, dim, n, opt.Seed)
	s.add([]int32{int32(pointHash(opt.Seed, 0, 0) % uint64(n))})
	for r := 1; r <= rounds; r++ {
		phi := s.phi()
		if phi == 0 {
			break
		}
		s.add(s.sample(r, ell/phi))
		opt.report(Progress{Seeding: true, K: k, Round: r, Rounds: rounds, Candidates: len(s.cand)})
	}
	if len(s.cand) < k {
		s.add(s.farthest(k - len(s.cand)))
	}
	weight := make([]float64, len(s.cand))
	for _, c := range s.label {
		weight[c]++
	}
	pts := make([]float32, 0, len(s.cand)*dim)
	for _, i := range s.cand {
		pts = append(pts, data[int(i)*dim:(int(i)+1)*dim]...)
	}
	var seeded func(int)
	if opt.Progress != nil {
		seeded = func(j int) { opt.report(Progress{Seeding: true, Seeded: j, K: k}) }
	}
	rng := rand.New(rand.NewPCG(opt.Seed, pcgStream))
	return kmeansPP(pts, dim, k, weight, rng, seeded)
}

// seeder is the state of k-means‖'s rounds: the candidates (point
// indices, in the order added) and, for every point, D² and the position
// in cand of its nearest candidate.
type seeder struct {
	data    []float32
	dim, n  int
	seed    uint64
	workers int
	cand    []int32
	d2      []float32
	label   []int32
	// tmpL and tmpD hold a round's assignment to its new candidates.
	tmpL []int32
	tmpD []float32
}

func newSeeder(data []float32, dim, n int, seed uint64) *seeder {
	s := &seeder{data: data, dim: dim, n: n, seed: seed, workers: max(1, min(runtime.GOMAXPROCS(0), n/kmeansPPGrain)),
		d2: make([]float32, n), label: make([]int32, n), tmpL: make([]int32, n), tmpD: make([]float32, n)}
	inf := float32(math.Inf(1))
	for i := range s.d2 {
		s.d2[i] = inf
	}
	return s
}

// phi is Σ D², summed in point order.
func (s *seeder) phi() float64 {
	var t float64
	for _, d := range s.d2 {
		t += float64(d)
	}
	return t
}

// sample returns, in ascending order, the points that round r keeps: x
// with hash-uniform u < scale·D²(x).
func (s *seeder) sample(r int, scale float64) []int32 {
	var out []int32
	for i, d := range s.d2 {
		if d > 0 && unitHash(s.seed, r, i) < scale*float64(d) {
			out = append(out, int32(i))
		}
	}
	return out
}

// farthest returns the m points of largest D² that are not candidates,
// ties to the lower index, in ascending order.
func (s *seeder) farthest(m int) []int32 {
	is := make(map[int32]bool, len(s.cand))
	for _, c := range s.cand {
		is[c] = true
	}
	order := make([]int32, 0, s.n-len(s.cand))
	for i := range s.n {
		if !is[int32(i)] {
			order = append(order, int32(i))
		}
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		switch {
		case s.d2[a] > s.d2[b]:
			return -1
		case s.d2[a] < s.d2[b]:
			return 1
		}
		return 0
	})
	out := order[:m]
	slices.Sort(out)
	return out
}

// add appends the points idx to the candidates and lowers every point's
// D² (and moves its label) to the nearest of them where that is strictly
// nearer, so that ties stay with the earlier candidate.
func (s *seeder) add(idx []int32) {
	if len(idx) == 0 {
		return
	}
	d := s.dim
	base := int32(len(s.cand))
	s.cand = append(s.cand, idx...)
	cent := make([]float32, 0, len(idx)*d)
	for _, i := range idx {
		cent = append(cent, s.data[int(i)*d:(int(i)+1)*d]...)
	}
	var assign func(lo, hi int)
	if len(idx) > parallelIVFMin {
		opt := nn.DefaultIVFOptions()
		opt.Seed = s.seed + uint64(base)
		v, err := TrainIVF(cent, d, opt)
		if err != nil {
			// The candidates are points of checked, finite data.
			panic(err)
		}
		assign = func(lo, hi int) {
			var sc nn.IVFScratch
			v.Assign(s.data[lo*d:hi*d], s.tmpL[lo:hi], s.tmpD[lo:hi], &sc)
		}
	} else {
		e := nn.NewExact(cent, d)
		assign = func(lo, hi int) {
			var sc nn.ExactScratch
			e.Assign(s.data[lo*d:hi*d], s.tmpL[lo:hi], s.tmpD[lo:hi], &sc)
		}
	}
	update := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			s.tmpL[i] = -1
		}
		assign(lo, hi)
		for i := lo; i < hi; i++ {
			if s.tmpD[i] < s.d2[i] {
				s.d2[i], s.label[i] = s.tmpD[i], base+s.tmpL[i]
			}
		}
	}
	if s.workers <= 1 {
		update(0, s.n)
	} else {
		var wg sync.WaitGroup
		for w := range s.workers {
			lo, hi := w*s.n/s.workers, (w+1)*s.n/s.workers
			wg.Go(func() { update(lo, hi) })
		}
		wg.Wait()
	}
	// A candidate is its own nearest, whatever an approximate search found.
	for j, i := range idx {
		if s.d2[i] > 0 {
			s.d2[i], s.label[i] = 0, base+int32(j)
		}
	}
}

// pointHash is a hash of (seed, round, point) whose bits are uniform and
// independent across its arguments (SplitMix64's finaliser applied in
// turn), the per-point random draw of k-means‖.
func pointHash(seed uint64, round, i int) uint64 {
	return mix64(mix64(mix64(seed)^uint64(round)) ^ uint64(i))
}

// unitHash is pointHash as a uniform float64 in [0, 1).
func unitHash(seed uint64, round, i int) float64 {
	return float64(pointHash(seed, round, i)>>11) / (1 << 53)
}

// mix64 is SplitMix64's finaliser (Steele et al., 2014).
func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
