package kmeans

import (
	"fmt"
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

// lowerGrain is the fewest points per goroutine of ParallelChunk.Lower:
// each point is compared with a whole round of candidates, so even a few
// hundred points outweigh starting a goroutine.
const lowerGrain = 256

// ParallelSeeding returns the rounds and the expected candidates a round
// draws, ℓ = SeedOversampling·K, of InitParallel under o (zero fields
// taking DefaultSeedRounds and DefaultSeedOversampling). It panics unless
// 1 ≤ K, rounds ≥ 1 and the oversampling is positive.
func (o Options) ParallelSeeding() (rounds int, ell float64) {
	rounds, over := o.SeedRounds, o.SeedOversampling
	if rounds == 0 {
		rounds = DefaultSeedRounds
	}
	if over == 0 {
		over = DefaultSeedOversampling
	}
	if o.K < 1 || rounds < 1 || !(over > 0) {
		panic("kmeans: KMeansParallel needs 1 ≤ k ≤ n points, rounds ≥ 1 and oversampling > 0")
	}
	return rounds, over * float64(o.K)
}

// kmeansParallel is KMeansParallel with the parameters of opt (zero rounds
// or oversampling taking the defaults), reporting to opt.Progress. It
// runs the pieces a distributed seeding runs (see ParallelChunk) on one
// chunk holding every point.
func kmeansParallel(data []float32, dim int, opt Options) []float32 {
	n, err := checkData(data, dim)
	if err != nil {
		panic(err)
	}
	if opt.K > n {
		panic("kmeans: KMeansParallel needs 1 ≤ k ≤ n points, rounds ≥ 1 and oversampling > 0")
	}
	return seedChunks([]*ParallelChunk{NewParallelChunk(data, dim, 0)}, n, opt)
}

// seedChunks is k-means‖ over the n points cut into chunks (in order of
// their offsets), as a distributed seeding runs it.
func seedChunks(chunks []*ParallelChunk, n int, opt Options) []float32 {
	k, dim := opt.K, chunks[0].Dim
	rounds, ell := opt.ParallelSeeding()
	var cand []int32
	var pts []float32
	add := func(idx []int32, p []float32) {
		if len(idx) == 0 {
			return
		}
		cs := NewParallelCandidates(p, dim, idx, len(cand), opt.Seed)
		for _, c := range chunks {
			c.Lower(cs)
		}
		cand, pts = append(cand, idx...), append(pts, p...)
	}
	// draw concatenates the chunks' shares of a round's candidates.
	draw := func(share func(*ParallelChunk) []int32) {
		var idx []int32
		var p []float32
		for _, c := range chunks {
			s := share(c)
			idx, p = append(idx, s...), append(p, c.Points(s)...)
		}
		add(idx, p)
	}
	draw(func(c *ParallelChunk) []int32 { return c.First(n, opt.Seed) })
	for r := 1; r <= rounds; r++ {
		var phi ParallelPhi
		for _, c := range chunks {
			phi.Merge(c.Phi())
		}
		if phi.Value() == 0 {
			break
		}
		draw(func(c *ParallelChunk) []int32 { return c.Sample(opt.Seed, r, ell/phi.Value()) })
		opt.report(Progress{Seeding: true, K: k, Round: r, Rounds: rounds, Candidates: len(cand)})
	}
	if m := k - len(cand); m > 0 {
		var far []ParallelFar
		for _, c := range chunks {
			far = append(far, c.Farthest(m)...)
		}
		top := TopFarthest(far, m)
		draw(func(c *ParallelChunk) []int32 {
			var s []int32
			for _, g := range top {
				if int(g) >= c.Offset && int(g) < c.Offset+len(c.D2) {
					s = append(s, g)
				}
			}
			return s
		})
	}
	weight := make([]float64, len(cand))
	for _, c := range chunks {
		c.Count(weight)
	}
	var seeded func(int)
	if opt.Progress != nil {
		seeded = func(j int) { opt.report(Progress{Seeding: true, Seeded: j, K: k}) }
	}
	return ParallelFinish(pts, dim, k, weight, opt.Seed, seeded)
}

// ParallelFinish is k-means‖'s last step: WeightedKMeansPP, with the
// random draws of seed, choosing k centroids among the candidates (in the
// order they were added) weighted by the points nearest to each; seeded,
// if not nil, is told the number of centroids chosen after each.
func ParallelFinish(cand []float32, dim, k int, weight []float64, seed uint64, seeded func(int)) []float32 {
	return kmeansPP(cand, dim, k, weight, rand.New(rand.NewPCG(seed, pcgStream)), seeded)
}

// ParallelChunk is k-means‖'s state over a run of the points, the unit a
// distributed seeding works on: the points Data (row-major, Dim wide),
// the first of which is point Offset of all of them; for each point D2,
// its squared distance to the nearest candidate so far, and Label, that
// candidate's position among all candidates in the order added; and Cand,
// the (global, ascending) indices of the chunk's points that are
// candidates.
//
// A round is: Phi of every chunk merged into φ; Sample of every chunk
// with ℓ/φ, concatenated in chunk order (ascending index), the round's new
// candidates; then Lower of every chunk to them. Every step is a map over
// the points or an exact sum, so however the points are cut into chunks
// the candidates, labels and weights, and so the centroids of
// ParallelFinish, are those of KMeansParallel.
type ParallelChunk struct {
	Data   []float32
	Dim    int
	Offset int
	D2     []float32
	Label  []int32
	Cand   []int32
}

// NewParallelChunk returns the chunk of data, starting at point offset,
// before any candidate: D² = +∞.
func NewParallelChunk(data []float32, dim, offset int) *ParallelChunk {
	n := len(data) / dim
	c := &ParallelChunk{Data: data, Dim: dim, Offset: offset, D2: make([]float32, n), Label: make([]int32, n)}
	inf := float32(math.Inf(1))
	for i := range c.D2 {
		c.D2[i] = inf
	}
	return c
}

// Points returns a copy of the chunk's points of global indices idx.
func (c *ParallelChunk) Points(idx []int32) []float32 {
	d := c.Dim
	out := make([]float32, 0, len(idx)*d)
	for _, g := range idx {
		i := int(g) - c.Offset
		out = append(out, c.Data[i*d:(i+1)*d]...)
	}
	return out
}

// First returns the first candidate of k-means‖ over n points under seed,
// if the chunk holds it, as a one-index slice; else nil.
func (c *ParallelChunk) First(n int, seed uint64) []int32 {
	i := int(pointHash(seed, 0, 0) % uint64(n))
	if i >= c.Offset && i < c.Offset+len(c.D2) {
		return []int32{int32(i)}
	}
	return nil
}

// Phi returns Σ D² over the chunk's points, exactly.
func (c *ParallelChunk) Phi() ParallelPhi {
	var p ParallelPhi
	for _, d := range c.D2 {
		p.Add(d)
	}
	return p
}

// Sample returns, in ascending order, the global indices of the chunk's
// points that round r keeps: x with hash-uniform u(seed, r, x) < scale·D²(x).
func (c *ParallelChunk) Sample(seed uint64, r int, scale float64) []int32 {
	var out []int32
	for i, d := range c.D2 {
		if d > 0 && unitHash(seed, r, c.Offset+i) < scale*float64(d) {
			out = append(out, int32(c.Offset+i))
		}
	}
	return out
}

// ParallelFar is a point and its D², as Farthest returns them.
type ParallelFar struct {
	Index int32
	D2    float32
}

// farther orders by D² descending, then index ascending.
func farther(a, b ParallelFar) int {
	switch {
	case a.D2 > b.D2:
		return -1
	case a.D2 < b.D2:
		return 1
	}
	return int(a.Index) - int(b.Index)
}

// Farthest returns the chunk's m non-candidate points of largest D² (ties
// to the lower index), farthest first: TopFarthest of every chunk's
// Farthest(m) is the m farthest of all points.
func (c *ParallelChunk) Farthest(m int) []ParallelFar {
	is := make(map[int32]bool, len(c.Cand))
	for _, g := range c.Cand {
		is[g] = true
	}
	var out []ParallelFar
	for i, d := range c.D2 {
		if g := int32(c.Offset + i); !is[g] {
			out = append(out, ParallelFar{g, d})
		}
	}
	slices.SortFunc(out, farther)
	return out[:min(m, len(out))]
}

// TopFarthest returns, in ascending order, the indices of the m farthest
// of far (D² descending, ties to the lower index): the points that top up
// the candidates when the rounds drew fewer than K.
func TopFarthest(far []ParallelFar, m int) []int32 {
	far = slices.Clone(far)
	slices.SortFunc(far, farther)
	out := make([]int32, 0, m)
	for _, f := range far[:min(m, len(far))] {
		out = append(out, f.Index)
	}
	slices.Sort(out)
	return out
}

// Count adds to weight[j] the number of the chunk's points nearest to
// candidate j.
func (c *ParallelChunk) Count(weight []float64) {
	for _, l := range c.Label {
		weight[l]++
	}
}

// ParallelCandidates are a round's new candidates, searchable: through
// nn.Exact, or above parallelIVFMin of them an IVF over them, seeded by
// the seed and the candidates already drawn, so that every chunk that
// builds it builds the same.
type ParallelCandidates struct {
	base  int32
	idx   []int32
	exact *nn.Exact
	ivf   *nn.IVF
}

// NewParallelCandidates indexes the new candidates pts (row-major, dim
// wide), the points of global indices idx (ascending), which follow base
// candidates drawn before them. It panics if pts is not len(idx) points.
func NewParallelCandidates(pts []float32, dim int, idx []int32, base int, seed uint64) *ParallelCandidates {
	if len(pts) != len(idx)*dim || len(idx) == 0 {
		panic(fmt.Sprintf("kmeans: %d candidate values for %d candidates of dimension %d", len(pts), len(idx), dim))
	}
	c := &ParallelCandidates{base: int32(base), idx: idx}
	if len(idx) > parallelIVFMin {
		opt := nn.DefaultIVFOptions()
		opt.Seed = seed + uint64(base)
		v, err := TrainIVF(pts, dim, opt)
		if err != nil {
			// The candidates are points of checked, finite data.
			panic(err)
		}
		c.ivf = v
	} else {
		c.exact = nn.NewExact(pts, dim)
	}
	return c
}

// Lower lowers every point's D² (and moves its label) to the nearest of
// the candidates cs where that is strictly nearer, so that ties stay with
// the earlier candidate; a candidate is its own nearest, whatever an
// approximate search found.
func (c *ParallelChunk) Lower(cs *ParallelCandidates) {
	d, n := c.Dim, len(c.D2)
	workers := max(1, min(runtime.GOMAXPROCS(0), n/lowerGrain))
	update := func(lo, hi int) {
		l, dist := make([]int32, hi-lo), make([]float32, hi-lo)
		for i := range l {
			l[i] = -1
		}
		if cs.ivf != nil {
			var sc nn.IVFScratch
			cs.ivf.Assign(c.Data[lo*d:hi*d], l, dist, &sc)
		} else {
			var sc nn.ExactScratch
			cs.exact.Assign(c.Data[lo*d:hi*d], l, dist, &sc)
		}
		for i := range l {
			if dist[i] < c.D2[lo+i] {
				c.D2[lo+i], c.Label[lo+i] = dist[i], cs.base+l[i]
			}
		}
	}
	if workers <= 1 {
		update(0, n)
	} else {
		var wg sync.WaitGroup
		for w := range workers {
			lo, hi := w*n/workers, (w+1)*n/workers
			wg.Go(func() { update(lo, hi) })
		}
		wg.Wait()
	}
	for j, g := range cs.idx {
		if i := int(g) - c.Offset; i >= 0 && i < n {
			c.Cand = append(c.Cand, g)
			if c.D2[i] > 0 {
				c.D2[i], c.Label[i] = 0, cs.base+int32(j)
			}
		}
	}
}

// ParallelPhi is an exact sum of non-negative float32 values, φ = Σ D²:
// Sum[e] adds the 24-bit significands of the values of float32 exponent
// e, so that partial sums merge in any order and grouping to the same
// total, which is what makes the candidates independent of how the points
// are cut into chunks. Values ≤ 0 add nothing. Each bucket holds 2³⁹
// values before it could overflow.
type ParallelPhi struct {
	Sum []int64
}

// Add adds v to p.
func (p *ParallelPhi) Add(v float32) {
	if !(v > 0) {
		return
	}
	if p.Sum == nil {
		p.Sum = make([]int64, 256)
	}
	b := math.Float32bits(v)
	e, m := b>>23, int64(b&(1<<23-1))
	if e > 0 {
		m |= 1 << 23
	}
	p.Sum[e] += m
}

// Merge adds q to p.
func (p *ParallelPhi) Merge(q ParallelPhi) {
	if q.Sum == nil {
		return
	}
	if p.Sum == nil {
		p.Sum = make([]int64, 256)
	}
	for e, v := range q.Sum {
		p.Sum[e] += v
	}
}

// Value returns the sum as a float64, a function of the exact bucket
// totals only.
func (p ParallelPhi) Value() float64 {
	var t float64
	for e, v := range p.Sum {
		if v != 0 {
			// A value of exponent e is m·2^(max(e,1)−150).
			t += math.Ldexp(float64(v), max(e, 1)-150)
		}
	}
	return t
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
