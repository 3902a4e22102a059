package kmeans

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/bowline/bowline/transforms/nn"
)

// objective is the exact k-means objective of cent on data: the mean
// squared distance from each point to its nearest centroid.
func objective(data []float32, dim int, cent []float32) float64 {
	n := len(data) / dim
	labels, dist := make([]int32, n), make([]float32, n)
	nn.NewExact(cent, dim).Assign(data, labels, dist, nil)
	var t float64
	for _, d := range dist {
		t += float64(d)
	}
	return t / float64(n)
}

// TestWeightedKMeansPPCopies checks that a point of weight w counts as w
// copies: on integer coordinates (exact distances and sums), the weighted
// seeding chooses what the unit-weighted seeding of the expanded points
// chooses with the same random draws, and points of weight 0 are never
// chosen while any weighted point is left uncovered.
func TestWeightedKMeansPPCopies(t *testing.T) {
	const dim, n, k = 3, 40, 12
	rng := rand.New(rand.NewPCG(3, 4))
	data := make([]float32, n*dim)
	for i := range data {
		data[i] = float32(rng.IntN(50))
	}
	weight := make([]float64, n)
	var exp []float32
	var ones []float64
	for i := range n {
		weight[i] = float64(rng.IntN(4)) // a quarter of the points weigh 0
		for range int(weight[i]) {
			exp = append(exp, data[i*dim:(i+1)*dim]...)
			ones = append(ones, 1)
		}
	}
	for seed := range uint64(20) {
		got := WeightedKMeansPP(data, dim, k, weight, rand.New(rand.NewPCG(seed, 1)))
		want := WeightedKMeansPP(exp, dim, k, ones, rand.New(rand.NewPCG(seed, 1)))
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: weighted points chose\n%v\nexpanded copies chose\n%v", seed, got, want)
		}
		for j := range k {
			c := got[j*dim : (j+1)*dim]
			zero := true
			for i := range n {
				if weight[i] > 0 && slices.Equal(c, data[i*dim:(i+1)*dim]) {
					zero = false
				}
			}
			if zero {
				t.Fatalf("seed %d: centroid %d %v is a point of weight 0", seed, j, c)
			}
		}
	}
	for _, bad := range [][]float64{make([]float64, n), make([]float64, n-1), append(slices.Clone(weight[1:]), -1)} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("weights %v did not panic", bad)
				}
			}()
			WeightedKMeansPP(data, dim, 1, bad, rand.New(rand.NewPCG(1, 1)))
		}()
	}
}

// TestKMeansParallelDeterministic checks that k-means‖ depends on the
// seed only, not on the goroutines, with exact and with IVF updates.
func TestKMeansParallelDeterministic(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n, dim   int
		k        int
		rounds   int
		oversamp float64
	}{
		{"exact updates", 3 * kmeansPPGrain, 8, 60, 5, 2},
		{"IVF updates", 3 * kmeansPPGrain, 8, 2500, 2, 2}, // ℓ = 5,000 > parallelIVFMin
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := uniform(rand.New(rand.NewPCG(7, 8)), tc.n, tc.dim)
			a := KMeansParallel(data, tc.dim, tc.k, 1, tc.rounds, tc.oversamp)
			if len(a) != tc.k*tc.dim {
				t.Fatalf("%d centroid values, want %d", len(a), tc.k*tc.dim)
			}
			prev := runtime.GOMAXPROCS(1)
			one := KMeansParallel(data, tc.dim, tc.k, 1, tc.rounds, tc.oversamp)
			runtime.GOMAXPROCS(prev)
			if !slices.Equal(a, one) {
				t.Error("one goroutine chose other centroids than GOMAXPROCS")
			}
			if b := KMeansParallel(data, tc.dim, tc.k, 1, tc.rounds, tc.oversamp); !slices.Equal(a, b) {
				t.Error("the same seed chose other centroids")
			}
			if c := KMeansParallel(data, tc.dim, tc.k, 2, tc.rounds, tc.oversamp); slices.Equal(a, c) {
				t.Error("seeds 1 and 2 chose the same centroids")
			}
		})
	}
}

// TestKMeansParallelFewDistinct checks the top-up when the rounds cannot
// draw k candidates: 3 distinct points, k = 5, every centroid a point.
func TestKMeansParallelFewDistinct(t *testing.T) {
	const dim = 2
	var data []float32
	for i := range 30 {
		data = append(data, float32(i%3), float32(i%3)*2)
	}
	cent := KMeansParallel(data, dim, 5, 1, 5, 2)
	seen := map[[2]float32]bool{}
	for j := range 5 {
		c := [2]float32{cent[2*j], cent[2*j+1]}
		if c[1] != 2*c[0] || c[0] < 0 || c[0] > 2 {
			t.Fatalf("centroid %d = %v is not a data point", j, c)
		}
		seen[c] = true
	}
	if len(seen) != 3 {
		t.Errorf("%d distinct centroids, want all 3 distinct points", len(seen))
	}
}

// TestKMeansParallelObjective compares k-means‖ with k-means++ on
// Gaussian blobs, over ten seeds: the objective of the seeds within 25% of
// k-means++'s on average, and after Lloyd within 2%.
func TestKMeansParallelObjective(t *testing.T) {
	const k, m, dim = 50, 40, 16
	data, _ := planted(rand.New(rand.NewPCG(11, 12)), k, m, dim, 3)
	var seedPP, seedPar, lloydPP, lloydPar float64
	for seed := range uint64(10) {
		for _, init := range []Init{InitKMeansPP, InitParallel} {
			opt := Options{K: k, MaxIter: 20, Seed: seed, Init: init, Workers: 1}
			cent, err := Initialize(data, dim, opt)
			if err != nil {
				t.Fatal(err)
			}
			res := must(TrainFrom(data, dim, cent, opt))
			if init == InitKMeansPP {
				seedPP += objective(data, dim, cent)
				lloydPP += res.Objective
			} else {
				seedPar += objective(data, dim, cent)
				lloydPar += res.Objective
			}
		}
	}
	t.Logf("mean objective over 10 seeds: seeds k-means++ %.2f, k-means|| %.2f; after Lloyd %.2f, %.2f", seedPP/10, seedPar/10, lloydPP/10, lloydPar/10)
	if seedPar > 1.25*seedPP {
		t.Errorf("k-means|| seeds' objective %.2f > 1.25 × k-means++'s %.2f", seedPar/10, seedPP/10)
	}
	if lloydPar > 1.02*lloydPP {
		t.Errorf("k-means|| objective after Lloyd %.2f > 1.02 × k-means++'s %.2f", lloydPar/10, lloydPP/10)
	}
}

// TestKMeansParallelProgress checks that every round and every centroid
// of the final k-means++ is reported.
func TestKMeansParallelProgress(t *testing.T) {
	data := uniform(rand.New(rand.NewPCG(1, 1)), 500, 4)
	var rounds, seeded []int
	opt := Options{K: 10, MaxIter: 1, Init: InitParallel, SeedRounds: 3, Progress: func(p Progress) {
		switch {
		case p.Round > 0:
			rounds = append(rounds, p.Round)
		case p.Seeding:
			seeded = append(seeded, p.Seeded)
		}
	}}
	if _, err := Initialize(data, 4, opt); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rounds, []int{1, 2, 3}) || len(seeded) != 10 || seeded[9] != 10 {
		t.Errorf("rounds %v and centroids %v reported, want rounds 1–3 and centroids 1–10", rounds, seeded)
	}
}

// TestKMeansParallelChunks checks that k-means‖ over the points cut into
// chunks, as a distributed seeding runs it, chooses the centroids of
// KMeansParallel over all of them, however they are cut: with exact and
// with IVF updates, and with the top-up of too few distinct points.
func TestKMeansParallelChunks(t *testing.T) {
	var few []float32
	for i := range 300 {
		few = append(few, float32(i%3), float32(i%3)*2, 1, 0)
	}
	for _, tc := range []struct {
		name     string
		data     []float32
		dim, k   int
		rounds   int
		oversamp float64
	}{
		{"exact updates", uniform(rand.New(rand.NewPCG(7, 8)), 3000, 8), 8, 60, 3, 2},
		{"IVF updates", uniform(rand.New(rand.NewPCG(7, 8)), 12000, 8), 8, 2500, 2, 2}, // ℓ = 5,000 > parallelIVFMin
		{"top-up", few, 4, 5, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := len(tc.data) / tc.dim
			opt := Options{K: tc.k, Seed: 5, SeedRounds: tc.rounds, SeedOversampling: tc.oversamp}
			want := KMeansParallel(tc.data, tc.dim, tc.k, 5, tc.rounds, tc.oversamp)
			for _, cuts := range [][]int{{n / 2}, {1, 2, n / 3, n - 1}, {17, 4000, 4001, 9000}} {
				var chunks []*ParallelChunk
				lo := 0
				for _, hi := range append(cuts, n) {
					hi = min(hi, n)
					if hi > lo {
						chunks = append(chunks, NewParallelChunk(tc.data[lo*tc.dim:hi*tc.dim], tc.dim, lo))
						lo = hi
					}
				}
				if got := seedChunks(chunks, n, opt); !slices.Equal(got, want) {
					t.Errorf("%d chunks chose other centroids than one", len(chunks))
				}
			}
		})
	}
}

// TestParallelPhiExact checks that φ does not depend on the order or the
// grouping of its sums, where a float64 running sum does.
func TestParallelPhiExact(t *testing.T) {
	vals := []float32{1e7, 3e-3, 1, 0, -2, 7.25e5, 1e-7, 3}
	var all ParallelPhi
	for _, v := range vals {
		all.Add(v)
	}
	var a, b ParallelPhi
	for i := len(vals) - 1; i >= 0; i-- {
		if i%2 == 0 {
			a.Add(vals[i])
		} else {
			b.Add(vals[i])
		}
	}
	b.Merge(a)
	if all.Value() != b.Value() {
		t.Errorf("φ %v in order, %v regrouped", all.Value(), b.Value())
	}
	if want := 1e7 + 3e-3 + 1 + 7.25e5 + 1e-7 + 3; math.Abs(all.Value()-want) > 1e-9*want {
		t.Errorf("φ = %v, want %v", all.Value(), want)
	}
}
