package kmeans

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/transforms/nn"
)

// uniform returns n points of dimension dim uniform in the unit cube.
func uniform(rng *rand.Rand, n, dim int) []float32 {
	x := make([]float32, n*dim)
	for i := range x {
		x[i] = rng.Float32()
	}
	return x
}

// planted returns m points around each of k centres spread over a cube of
// side 100 in dim dimensions, with per-coordinate N(0, sigma²) noise.
func planted(rng *rand.Rand, k, m, dim int, sigma float64) (data, centres []float32) {
	centres = make([]float32, k*dim)
	for i := range centres {
		centres[i] = float32(100 * rng.Float64())
	}
	for c := range k {
		for range m {
			for j := range dim {
				data = append(data, centres[c*dim+j]+float32(sigma*rng.NormFloat64()))
			}
		}
	}
	// Shuffle points so clusters are not contiguous.
	n := k * m
	rng.Shuffle(n, func(a, b int) {
		for j := range dim {
			data[a*dim+j], data[b*dim+j] = data[b*dim+j], data[a*dim+j]
		}
	})
	return data, centres
}

func TestOptionsValidate(t *testing.T) {
	ok := Options{K: 2, MaxIter: 10}
	for _, tc := range []struct {
		name string
		mod  func(*Options)
		want string // substring of the error; "" for valid
	}{
		{"ok", func(*Options) {}, ""},
		{"tol and workers", func(o *Options) { o.Tol, o.Workers = 1e-4, 3 }, ""},
		{"zero K", func(o *Options) { o.K = 0 }, "K = 0"},
		{"negative K", func(o *Options) { o.K = -1 }, "K = -1"},
		{"zero MaxIter", func(o *Options) { o.MaxIter = 0 }, "MaxIter"},
		{"negative Tol", func(o *Options) { o.Tol = -1 }, "Tol"},
		{"NaN Tol", func(o *Options) { o.Tol = math.NaN() }, "Tol"},
		{"negative Workers", func(o *Options) { o.Workers = -2 }, "Workers"},
		{"approx", func(o *Options) { o.Approx, o.Forest = true, nn.DefaultForestOptions() }, ""},
		{"approx without forest", func(o *Options) { o.Approx = true }, "Trees"},
		{"forest ignored when exact", func(o *Options) { o.Forest = nn.ForestOptions{Trees: -1} }, ""},
		{"init", func(o *Options) { o.Init, o.InitSample = InitKMeansPP, 2 }, ""},
		{"bad init", func(o *Options) { o.Init = InitParallel + 1 }, "Init"},
		{"k-means||", func(o *Options) { o.Init, o.SeedRounds, o.SeedOversampling = InitParallel, 3, 0.5 }, ""},
		{"negative SeedRounds", func(o *Options) { o.SeedRounds = -1 }, "SeedRounds"},
		{"negative SeedOversampling", func(o *Options) { o.SeedOversampling = -1 }, "SeedOversampling"},
		{"NaN SeedOversampling", func(o *Options) { o.SeedOversampling = math.NaN() }, "SeedOversampling"},
		{"InitSample < K", func(o *Options) { o.InitSample = 1 }, "InitSample"},
		{"negative InitSample", func(o *Options) { o.InitSample = -1 }, "InitSample"},
		{"bad reseed", func(o *Options) { o.Reseed = -1 }, "Reseed"},
	} {
		o := ok
		tc.mod(&o)
		err := o.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

func TestTrainErrors(t *testing.T) {
	opt := Options{K: 2, MaxIter: 5}
	nan := float32(math.NaN())
	for _, tc := range []struct {
		name string
		data []float32
		dim  int
		opt  Options
		want string
	}{
		{"options", []float32{1, 2}, 1, Options{K: 2}, "MaxIter"},
		{"dim", []float32{1, 2}, 0, opt, "dimension"},
		{"ragged", []float32{1, 2, 3}, 2, opt, "whole number"},
		{"empty", nil, 2, opt, "no points"},
		{"K > n", []float32{1, 2}, 2, opt, "exceeds"},
		{"NaN", []float32{1, 2, nan, 4}, 2, opt, "point 1 coordinate 0"},
	} {
		_, err := Train(tc.data, tc.dim, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

// Exact and approximate training both recover planted clusters: each
// centroid near its centre and the objective near the noise energy. The
// objective is the mean squared distance to the returned centroids; AKM's
// bounds it from above, its assignments being no nearer than the nearest.
func TestTrainRecoversPlantedClusters(t *testing.T) {
	const (
		k, m, dim = 8, 400, 16
		sigma     = 1.0
	)
	for _, tc := range []struct {
		name string
		opt  Options
	}{
		{"exact", Options{K: k, MaxIter: 100, Seed: 1}},
		{"akm", Options{K: k, MaxIter: 100, Seed: 1, Approx: true, Forest: akmOptions}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 8))
			data, centres := planted(rng, k, m, dim, sigma)
			res, err := Train(data, dim, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if res.K != k || res.Dim != dim || len(res.Centroids) != k*dim {
				t.Fatalf("shape K=%d Dim=%d len=%d, want %d, %d, %d", res.K, res.Dim, len(res.Centroids), k, dim, k*dim)
			}
			if !res.Converged {
				t.Errorf("did not converge in %d iterations", res.Iterations)
			}
			// A centroid is the mean of m noisy points: its distance to the
			// true centre is about σ·√(dim/m) = 0.2.
			for c := range k {
				_, d := nn.Nearest(res.Centroids, dim, centres[c*dim:(c+1)*dim])
				if math.Sqrt(float64(d)) > 0.5 {
					t.Errorf("true centre %d: nearest centroid at distance %.3f", c, math.Sqrt(float64(d)))
				}
			}
			// The objective is the per-point noise energy dim·σ², less the
			// little the fitted means absorb.
			if want := dim * sigma * sigma; math.Abs(res.Objective-want) > 0.05*want {
				t.Errorf("objective %.3f, want ≈ %.3f", res.Objective, want)
			}
			var sse float64
			for i := 0; i < len(data); i += dim {
				_, d := nn.Nearest(res.Centroids, dim, data[i:i+dim])
				sse += float64(d)
			}
			exact := sse / float64(len(data)/dim)
			if !tc.opt.Approx && math.Abs(exact-res.Objective) > 1e-9*exact {
				t.Errorf("Objective %v, recomputed %v", res.Objective, exact)
			}
			if tc.opt.Approx && exact > res.Objective*(1+1e-9) {
				t.Errorf("exact objective %v above the approximate %v", exact, res.Objective)
			}
		})
	}
}

func TestTrainDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	// Overlapping clusters so that Lloyd runs many iterations and sums
	// carry real rounding.
	data, _ := planted(rng, 20, 150, 10, 15)
	base := Options{K: 20, MaxIter: 30, Seed: 42, Workers: 1}
	want, err := Train(data, 10, base)
	if err != nil {
		t.Fatal(err)
	}
	if want.Iterations < 3 {
		t.Fatalf("only %d iterations; test data too easy", want.Iterations)
	}
	for _, tc := range []struct {
		name string
		opt  Options
	}{
		{"same seed", base},
		{"workers 2", Options{K: 20, MaxIter: 30, Seed: 42, Workers: 2}},
		{"workers 4", Options{K: 20, MaxIter: 30, Seed: 42, Workers: 4}},
		{"workers 7", Options{K: 20, MaxIter: 30, Seed: 42, Workers: 7}},
		{"workers GOMAXPROCS", Options{K: 20, MaxIter: 30, Seed: 42}},
	} {
		got, err := Train(data, 10, tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Centroids, want.Centroids) || got.Objective != want.Objective || got.Iterations != want.Iterations {
			t.Errorf("%s: result differs from Workers=1 (objective %v vs %v, iterations %d vs %d)",
				tc.name, got.Objective, want.Objective, got.Iterations, want.Iterations)
		}
	}
	other, err := Train(data, 10, Options{K: 20, MaxIter: 30, Seed: 43})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(other.Centroids, want.Centroids) {
		t.Errorf("seeds 42 and 43 gave identical centroids")
	}
}

func TestTrainDegenerate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		data     []float32
		dim, k   int
		distinct int
	}{
		{"duplicates K > distinct", []float32{1, 1, 5, 5, 1, 1, 9, 9, 5, 5, 1, 1}, 2, 5, 3},
		{"all equal", []float32{2, 2, 2, 2}, 1, 3, 1},
		{"K = n", []float32{0, 1, 3, 6, 10, 15}, 1, 6, 6},
		{"K = n - 1", []float32{0, 1, 3, 6, 10, 15}, 1, 5, 6},
		{"K = 1", []float32{0, 1, 3, 6, 10, 15}, 1, 1, 1},
	} {
		small := nn.ForestOptions{Trees: 2, LeafSize: 1, Checks: 2, Seed: 3}
		for _, opt := range []Options{
			{K: tc.k, MaxIter: 20, Seed: 5, Workers: 1},
			{K: tc.k, MaxIter: 20, Seed: 5, Workers: 3},
			{K: tc.k, MaxIter: 20, Seed: 5, Workers: 3, Reseed: ReseedSplit},
			{K: tc.k, MaxIter: 20, Seed: 5, Workers: 1, Approx: true, Forest: small},
			{K: tc.k, MaxIter: 20, Seed: 5, Workers: 2, Approx: true, Forest: small, Init: InitRandom},
		} {
			res, err := Train(tc.data, tc.dim, opt)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			for i, v := range res.Centroids {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("%s: centroid value %d is %v", tc.name, i, v)
				}
			}
			if math.IsNaN(res.Objective) {
				t.Fatalf("%s: objective is NaN", tc.name)
			}
			if tc.distinct <= tc.k && tc.k > 1 && res.Objective != 0 {
				t.Errorf("%s, %+v: objective %v, want 0 with %d distinct points and K=%d", tc.name, opt, res.Objective, tc.distinct, tc.k)
			}
		}
	}
}

// TestReseed plants a centroid far from every point so that its cluster is
// empty after the first assignment, and checks it is moved onto the point
// farthest from its own centroid.
func TestReseed(t *testing.T) {
	data := []float32{0, 1, 2, 10, 11, 20} // 1-D
	tr := &trainer{
		data: data, dim: 1, n: len(data), workers: 1,
		centroids: []float32{1, 11, 1000},
		labels:    []int32{-1, -1, -1, -1, -1, -1},
		dist:      make([]float32, len(data)),
		sums:      NewSums(3, 1),
	}
	tr.assign(0)
	tr.accumulate()
	empty := Update(tr.centroids, tr.sums)
	if !slices.Equal(empty, []int{2}) {
		t.Fatalf("empty clusters %v, want [2]", empty)
	}
	// Cluster 1 = {10, 11, 20}, mean 41/3; the point 20 is farthest.
	tr.reseed(empty)
	if tr.centroids[2] != 20 {
		t.Errorf("reseeded centroid %v, want 20", tr.centroids[2])
	}
	if tr.centroids[0] != 1 || tr.centroids[1] != float32(41.0/3) {
		t.Errorf("updated centroids %v, want [1 %v ...]", tr.centroids[:2], float32(41.0/3))
	}
}

func TestUpdateEmptyKeepsCentroid(t *testing.T) {
	s := NewSums(3, 2)
	s.Add([]float32{1, 2, 3, 4, 10, 10}, []int32{0, 0, 2}, []float32{0, 0, 0})
	cent := []float32{9, 9, 7, 7, 9, 9}
	empty := Update(cent, s)
	if !slices.Equal(empty, []int{1}) {
		t.Errorf("empty = %v, want [1]", empty)
	}
	if want := []float32{2, 3, 7, 7, 10, 10}; !slices.Equal(cent, want) {
		t.Errorf("centroids %v, want %v", cent, want)
	}
}

func TestSumsMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	const k, dim, n = 4, 3, 50
	data := make([]float32, n*dim)
	for i := range data {
		data[i] = float32(rng.IntN(100)) // integers: sums are exact in any order
	}
	labels := make([]int32, n)
	dist := make([]float32, n)
	for i := range labels {
		labels[i] = int32(rng.IntN(k))
		dist[i] = float32(rng.IntN(10))
	}
	whole := NewSums(k, dim)
	whole.Add(data, labels, dist)
	a, b := NewSums(k, dim), NewSums(k, dim)
	a.Add(data[:20*dim], labels[:20], dist[:20])
	b.Add(data[20*dim:], labels[20:], dist[20:])
	a.Merge(b)
	if !slices.Equal(a.Sum, whole.Sum) || !slices.Equal(a.Count, whole.Count) || a.SSE != whole.SSE {
		t.Errorf("merged %+v, want %+v", a, whole)
	}
	a.Reset()
	if slices.ContainsFunc(a.Sum, func(v float64) bool { return v != 0 }) || a.SSE != 0 {
		t.Errorf("Reset left %+v", a)
	}
}

func TestKMeansPPDistinct(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const n, dim = 30, 3
	data := make([]float32, n*dim)
	for i := range data {
		data[i] = float32(rng.NormFloat64())
	}
	// With k = n every point must be chosen exactly once: D² sampling gives
	// already-chosen points zero weight.
	c := KMeansPP(data, dim, n, rand.New(rand.NewPCG(1, 2)))
	seen := make(map[[dim]float32]bool)
	for i := 0; i < len(c); i += dim {
		seen[[dim]float32(c[i:i+dim])] = true
	}
	if len(seen) != n {
		t.Errorf("%d distinct centroids, want %d", len(seen), n)
	}
}

func BenchmarkTrain(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	data, _ := planted(rng, 50, 200, 32, 5)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Train(data, 32, Options{K: 50, MaxIter: 20, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// akmOptions is a small forest that leaves AKM approximate on the test
// data: few checks against tens of centroids.
var akmOptions = nn.ForestOptions{Trees: 4, LeafSize: 4, Checks: 8, Seed: 17}

// Overlapping clusters make many points nearly equidistant from two
// centroids, where a starved forest errs (recall@1 0.90 here); AKM must
// still land within 1% of exact Lloyd from the same start (measured: 4%
// below it, another local optimum).
func TestTrainApproxCloseToExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	data, _ := planted(rng, 40, 100, 10, 15)
	opt := Options{K: 40, MaxIter: 30, Tol: 1e-5, Seed: 42, Reseed: ReseedSplit}
	init, err := Initialize(data, 10, opt)
	if err != nil {
		t.Fatal(err)
	}
	exact, err := TrainFrom(data, 10, init, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Approx, opt.Forest = true, akmOptions
	approx, err := TrainFrom(data, 10, init, opt)
	if err != nil {
		t.Fatal(err)
	}
	if approx.Iterations < 3 {
		t.Fatalf("AKM ran %d iterations; data too easy", approx.Iterations)
	}
	if r := approx.Objective / exact.Objective; r > 1.01 {
		t.Errorf("AKM objective %.2f is %.2f%% above exact %.2f", approx.Objective, 100*(r-1), exact.Objective)
	}
	// The forest must actually have been approximate on this data, or the
	// comparison says nothing.
	f, _ := nn.NewForest(approx.Centroids, 10, akmOptions)
	miss := 0
	var s nn.Search
	for i := 0; i < len(data); i += 10 {
		_, a := f.Nearest(data[i:i+10], &s)
		if _, e := nn.Nearest(approx.Centroids, 10, data[i:i+10]); a != e {
			miss++
		}
	}
	if miss == 0 {
		t.Error("the forest found every exact nearest centroid: test forest too large")
	}
}

func TestTrainApproxDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	data, _ := planted(rng, 20, 150, 10, 15)
	base := Options{K: 20, MaxIter: 30, Seed: 42, Workers: 1, Approx: true, Forest: akmOptions}
	want, err := Train(data, 10, base)
	if err != nil {
		t.Fatal(err)
	}
	if want.Iterations < 3 {
		t.Fatalf("only %d iterations; test data too easy", want.Iterations)
	}
	init, err := Initialize(data, 10, base)
	if err != nil {
		t.Fatal(err)
	}
	keep := slices.Clone(init)
	from, err := TrainFrom(data, 10, init, base)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(init, keep) {
		t.Error("TrainFrom modified its initial centroids")
	}
	for _, tc := range []struct {
		name string
		got  Result
	}{
		{"Initialize + TrainFrom", from},
		{"workers 2", must(Train(data, 10, with(base, func(o *Options) { o.Workers = 2 })))},
		{"workers 5", must(Train(data, 10, with(base, func(o *Options) { o.Workers = 5 })))},
		{"same seed", must(Train(data, 10, base))},
	} {
		if !slices.Equal(tc.got.Centroids, want.Centroids) || tc.got.Objective != want.Objective || tc.got.Iterations != want.Iterations {
			t.Errorf("%s: result differs (objective %v vs %v, iterations %d vs %d)", tc.name, tc.got.Objective, want.Objective, tc.got.Iterations, want.Iterations)
		}
	}
	other := must(Train(data, 10, with(base, func(o *Options) { o.Forest.Seed++ })))
	if slices.Equal(other.Centroids, want.Centroids) {
		t.Error("another forest seed gave identical centroids")
	}
}

func must(r Result, err error) Result {
	if err != nil {
		panic(err)
	}
	return r
}

func with(o Options, f func(*Options)) Options {
	f(&o)
	return o
}

func TestTrainFromErrors(t *testing.T) {
	data := []float32{0, 1, 2, 3, 4, 5}
	opt := Options{K: 2, MaxIter: 3}
	for _, tc := range []struct {
		name string
		cent []float32
		opt  Options
		want string
	}{
		{"short", []float32{1}, opt, "want K×dim"},
		{"NaN", []float32{1, float32(math.NaN())}, opt, "initial centroid 1 coordinate 0"},
		{"options", []float32{1, 2}, Options{K: 2}, "MaxIter"},
	} {
		_, err := TrainFrom(data, 1, tc.cent, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

func TestInitialize(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	const n, dim, k = 400, 3, 30
	data := uniform(rng, n, dim)
	rows := make(map[[dim]float32]bool)
	for i := 0; i < len(data); i += dim {
		rows[[dim]float32(data[i:i+dim])] = true
	}
	for _, tc := range []struct {
		name string
		opt  Options
	}{
		{"k-means++", Options{K: k, MaxIter: 1, Seed: 1, Init: InitKMeansPP}},
		{"k-means++ on a sample", Options{K: k, MaxIter: 1, Seed: 1, Init: InitKMeansPP, InitSample: 60}},
		{"k-means||", Options{K: k, MaxIter: 1, Seed: 1}},
		{"random", Options{K: k, MaxIter: 1, Seed: 1, Init: InitRandom}},
		{"k-means||", Options{K: k, MaxIter: 1, Seed: 1, Init: InitParallel}},
	} {
		c, err := Initialize(data, dim, tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		// Each method picks K distinct data points.
		seen := make(map[[dim]float32]bool)
		for i := 0; i < len(c); i += dim {
			p := [dim]float32(c[i : i+dim])
			if !rows[p] || seen[p] {
				t.Errorf("%s: centroid %d is not a new data point", tc.name, i/dim)
			}
			seen[p] = true
		}
		again, _ := Initialize(data, dim, tc.opt)
		if !slices.Equal(again, c) {
			t.Errorf("%s: not deterministic", tc.name)
		}
	}
	full, _ := Initialize(data, dim, Options{K: k, MaxIter: 1, Seed: 1, Init: InitKMeansPP})
	if want := KMeansPP(data, dim, k, rand.New(rand.NewPCG(1, pcgStream))); !slices.Equal(full, want) {
		t.Error("k-means++ on all points is not KMeansPP seeded as before")
	}
	for _, tc := range []struct {
		opt  Options
		want Init
	}{
		{Options{K: KMeansPPMaxK - 1}, InitParallel},
		{Options{K: KMeansPPMaxK}, InitRandom},
		{Options{K: 5, Init: InitRandom}, InitRandom},
		{Options{K: 1 << 20, Init: InitKMeansPP}, InitKMeansPP},
	} {
		if got := tc.opt.InitMethod(); got != tc.want {
			t.Errorf("K=%d Init=%d resolves to %d, want %d", tc.opt.K, tc.opt.Init, got, tc.want)
		}
	}
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		count []int64
		empty []int
		near  []int // the original centroid each empty one lands next to, −1 if none
	}{
		// 10 splits into 5 + 5 (clusters 2 and 1); the next empty cluster
		// takes the lower-indexed half, itself next to the original 2.
		{"largest first", []int64{3, 0, 10, 0}, []int{1, 3}, []int{2, 2}},
		{"halves", []int64{10, 0, 0, 4}, []int{1, 2}, []int{0, 0}},
		{"ties to lower index", []int64{0, 6, 6}, []int{0}, []int{1}},
		{"then the next largest", []int64{4, 0, 0, 3}, []int{1, 2}, []int{0, 3}},
		{"singletons are not split", []int64{1, 0, 1, 0}, []int{1, 3}, []int{-1, -1}},
		{"runs out", []int64{2, 0, 0}, []int{1, 2}, []int{0, -1}},
	} {
		const dim = 4
		k := len(tc.count)
		cent := make([]float32, k*dim)
		for c := range k {
			for j := range dim {
				cent[c*dim+j] = float32(10*c + j)
			}
		}
		orig := slices.Clone(cent)
		Split(cent, dim, tc.count, tc.empty)
		for i, e := range tc.empty {
			got := cent[e*dim : (e+1)*dim]
			if tc.near[i] < 0 {
				if !slices.Equal(got, orig[e*dim:(e+1)*dim]) {
					t.Errorf("%s: empty cluster %d moved to %v", tc.name, e, got)
				}
				continue
			}
			// Each split moves a centroid by ε·max(|c_j|, mean |c|) per
			// coordinate; two splits by at most twice that.
			src := orig[tc.near[i]*dim : (tc.near[i]+1)*dim]
			var mean float64
			for _, v := range src {
				mean += math.Abs(float64(v)) / dim
			}
			for j := range dim {
				tol := 2.01 * splitEps * max(math.Abs(float64(src[j])), mean)
				if math.Abs(float64(got[j]-src[j])) > tol {
					t.Errorf("%s: empty cluster %d coordinate %d = %v, want within %g of %v", tc.name, e, j, got[j], tol, src[j])
				}
			}
		}
		// Splitting must leave no two centroids equal (all start distinct).
		for a := range k {
			for b := a + 1; b < k; b++ {
				if slices.Equal(cent[a*dim:(a+1)*dim], cent[b*dim:(b+1)*dim]) {
					t.Errorf("%s: clusters %d and %d coincide at %v", tc.name, a, b, cent[a*dim:(a+1)*dim])
				}
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Split with inconsistent lengths did not panic")
		}
	}()
	Split(make([]float32, 5), 2, make([]int64, 2), []int{0})
}

func BenchmarkTrainApprox(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	data, _ := planted(rng, 50, 200, 32, 5)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Train(data, 32, Options{K: 50, MaxIter: 20, Seed: 1, Approx: true, Forest: nn.DefaultForestOptions()}); err != nil {
			b.Fatal(err)
		}
	}
}

// A forest whose budget covers every centroid searches exhaustively, so AKM
// must reproduce exact Lloyd (with the same re-seeding) on data without
// ties.
func TestTrainApproxExhaustiveIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 4))
	data, _ := planted(rng, 12, 60, 6, 20)
	opt := Options{K: 12, MaxIter: 25, Seed: 2, Reseed: ReseedSplit}
	exact := must(Train(data, 6, opt))
	opt.Approx, opt.Forest = true, nn.ForestOptions{Trees: 2, LeafSize: 3, Checks: 12, Seed: 1}
	approx := must(Train(data, 6, opt))
	if !slices.Equal(exact.Centroids, approx.Centroids) || exact.Iterations != approx.Iterations || exact.Objective != approx.Objective {
		t.Errorf("AKM with Checks = K: objective %v after %d iterations, exact %v after %d", approx.Objective, approx.Iterations, exact.Objective, exact.Iterations)
	}
}

// KMeansPP computes distances on several goroutines for large inputs; the
// centres must not depend on how many.
func TestKMeansPPGoroutines(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	data := uniform(rng, 3*kmeansPPGrain, 4)
	want := KMeansPP(data, 4, 40, rand.New(rand.NewPCG(1, 1)))
	prev := runtime.GOMAXPROCS(3)
	got := KMeansPP(data, 4, 40, rand.New(rand.NewPCG(1, 1)))
	runtime.GOMAXPROCS(1)
	one := KMeansPP(data, 4, 40, rand.New(rand.NewPCG(1, 1)))
	runtime.GOMAXPROCS(prev)
	if !slices.Equal(got, want) || !slices.Equal(one, want) {
		t.Error("KMeansPP depends on GOMAXPROCS")
	}
}

// TestProgress: Options.Progress is told every centroid k-means++ chooses
// (on all points or on a sample), a random start once, and every Lloyd
// iteration with its objective — the last one Result's — and telling it
// does not change the result.
func TestProgress(t *testing.T) {
	const k, dim = 6, 3
	data, _ := planted(rand.New(rand.NewPCG(4, 5)), k, 50, dim, 0.3)
	n := len(data) / dim
	for _, tc := range []struct {
		name  string
		opt   Options
		seeds []int // the Seeded values told while seeding
	}{
		{"k-means++", Options{K: k, MaxIter: 20, Seed: 1, Init: InitKMeansPP}, []int{1, 2, 3, 4, 5, 6}},
		{"k-means++ on a sample", Options{K: k, MaxIter: 20, Seed: 1, Init: InitKMeansPP, InitSample: 40}, []int{1, 2, 3, 4, 5, 6}},
		// Two rounds (Seeded 0), then the k-means++ of the candidates.
		{"k-means||", Options{K: k, MaxIter: 20, Seed: 1}, []int{0, 0, 1, 2, 3, 4, 5, 6}},
		{"random", Options{K: k, MaxIter: 20, Seed: 1, Init: InitRandom}, []int{6}},
		// Two rounds (Seeded 0), then the k-means++ of the candidates.
		{"k-means||", Options{K: k, MaxIter: 20, Seed: 1, Init: InitParallel}, []int{0, 0, 1, 2, 3, 4, 5, 6}},
		{"approximate", Options{K: k, MaxIter: 20, Seed: 1, Init: InitKMeansPP, Approx: true, Index: IndexIVF, IVF: nn.DefaultIVFOptions()}, []int{1, 2, 3, 4, 5, 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seeds []int
			var iters []Progress
			opt := tc.opt
			opt.Progress = func(p Progress) {
				if p.K != k {
					t.Errorf("told K = %d, want %d", p.K, k)
				}
				if p.Seeding {
					seeds = append(seeds, p.Seeded)
					if len(iters) > 0 {
						t.Error("told seeding after an iteration")
					}
					return
				}
				iters = append(iters, p)
			}
			got := must(Train(data, dim, opt))
			if !slices.Equal(seeds, tc.seeds) {
				t.Errorf("seeding told %v, want %v", seeds, tc.seeds)
			}
			if len(iters) != got.Iterations+1 {
				t.Fatalf("told %d iterations, want %d (the initial assignment and %d updates)", len(iters), got.Iterations+1, got.Iterations)
			}
			for i, p := range iters {
				if p.Iteration != i || p.Objective <= 0 {
					t.Errorf("iteration %d told %+v", i, p)
				}
			}
			if iters[0].Changed != n || iters[len(iters)-1].Objective != got.Objective {
				t.Errorf("told first %+v, last %+v; want %d points changed first, the result's objective %v last", iters[0], iters[len(iters)-1], n, got.Objective)
			}
			if want := must(Train(data, dim, tc.opt)); !slices.Equal(want.Centroids, got.Centroids) || want.Iterations != got.Iterations {
				t.Error("telling the progress changed the result")
			}
			seeds, iters = nil, nil
			init, err := Initialize(data, dim, opt)
			if err != nil || !slices.Equal(seeds, tc.seeds) || len(iters) > 0 {
				t.Errorf("Initialize told %v (%v), want %v", seeds, err, tc.seeds)
			}
			if want, _ := Initialize(data, dim, tc.opt); !slices.Equal(init, want) {
				t.Error("telling the progress changed the initial centroids")
			}
		})
	}
}
