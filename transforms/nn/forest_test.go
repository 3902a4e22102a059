package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/transforms/internal/testkit"
)

func uniform(rng *rand.Rand, n, dim int) []float32 {
	x := make([]float32, n*dim)
	for i := range x {
		x[i] = rng.Float32()
	}
	return x
}

func TestNewForestErrors(t *testing.T) {
	ok := ForestOptions{Trees: 2, LeafSize: 4, Checks: 8}
	nan := float32(math.NaN())
	for _, tc := range []struct {
		name string
		cent []float32
		dim  int
		opt  ForestOptions
		want string
	}{
		{"zero trees", []float32{1, 2}, 1, ForestOptions{LeafSize: 1, Checks: 1}, "Trees = 0"},
		{"zero leaf", []float32{1, 2}, 1, ForestOptions{Trees: 1, Checks: 1}, "LeafSize = 0"},
		{"negative checks", []float32{1, 2}, 1, ForestOptions{Trees: 1, LeafSize: 1, Checks: -3}, "Checks = -3"},
		{"zero dim", []float32{1, 2}, 0, ok, "dimension 0"},
		{"ragged", []float32{1, 2, 3}, 2, ok, "multiple"},
		{"empty", nil, 2, ok, "multiple"},
		{"NaN", []float32{1, 2, 3, nan}, 2, ok, "centroid 1 coordinate 1"},
		{"Inf", []float32{float32(math.Inf(-1)), 2}, 2, ok, "centroid 0 coordinate 0"},
	} {
		f, err := NewForest(tc.cent, tc.dim, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) || f != nil {
			t.Errorf("%s: (%v, %v), want an error mentioning %q", tc.name, f, err, tc.want)
		}
	}
}

// TestForestRecall bounds the fraction of queries for which the forest finds
// an exact nearest centroid (recall@1). Uniform random data is the hard case
// for kd-trees — no structure to exploit, and the harder the more
// dimensions — so the bounds are stated there, at about 0.03 below the
// values measured when the test was written (0.965, 0.947, 0.993).
// Clustered data, like descriptors against a trained vocabulary, is much
// easier.
func TestForestRecall(t *testing.T) {
	for _, tc := range []struct {
		name      string
		dim, k    int
		opt       ForestOptions
		clustered bool
		min       float64
	}{
		{"uniform 8-d", 8, 2000, ForestOptions{Trees: 8, LeafSize: 8, Checks: 128, Seed: 1}, false, 0.93},
		{"uniform 16-d", 16, 2000, ForestOptions{Trees: 8, LeafSize: 8, Checks: 256, Seed: 1}, false, 0.91},
		{"clustered 128-d", 128, 1000, ForestOptions{Trees: 8, LeafSize: 8, Checks: 32, Seed: 1}, true, 0.97},
	} {
		rng := rand.New(rand.NewPCG(1, 2))
		const q = 2000
		var cent, qs []float32
		if tc.clustered {
			cent, qs = make([]float32, tc.k*tc.dim), make([]float32, 0, q*tc.dim)
			for i := range cent {
				cent[i] = float32(100 * rng.Float64())
			}
			for range q {
				c := rng.IntN(tc.k)
				for j := range tc.dim {
					qs = append(qs, cent[c*tc.dim+j]+float32(10*rng.NormFloat64()))
				}
			}
		} else {
			cent, qs = uniform(rng, tc.k, tc.dim), uniform(rng, q, tc.dim)
		}
		f, err := NewForest(cent, tc.dim, tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		var s Search
		hit := 0
		for i := range q {
			x := qs[i*tc.dim : (i+1)*tc.dim]
			c, d := f.Nearest(x, &s)
			_, want := Nearest(cent, tc.dim, x)
			if d == want {
				hit++
			}
			if d < want || d != sqDist(cent[c*tc.dim:(c+1)*tc.dim], x, float32(math.Inf(1))) {
				t.Fatalf("%s: query %d: centroid %d at %v, exact nearest at %v", tc.name, i, c, d, want)
			}
			if s.Checked > tc.opt.Checks+tc.opt.LeafSize-1 {
				t.Fatalf("%s: %d distances computed, budget %d", tc.name, s.Checked, tc.opt.Checks)
			}
		}
		t.Logf("%s: recall@1 %.3f", tc.name, float64(hit)/q)
		if r := float64(hit) / q; r < tc.min {
			t.Errorf("%s: recall@1 %.3f, want ≥ %.2f", tc.name, r, tc.min)
		}
	}
}

// A budget covering every centroid must give exactly the package's Nearest,
// ties included.
func TestForestExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const k, dim = 50, 5
	cent := uniform(rng, k, dim)
	copy(cent[7*dim:8*dim], cent[3*dim:4*dim]) // a duplicate: ties go to 3
	f, err := NewForest(cent, dim, ForestOptions{Trees: 3, LeafSize: 2, Checks: k, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	qs := append(uniform(rng, 200, dim), cent[3*dim:4*dim]...)
	var s Search
	for i := 0; i < len(qs); i += dim {
		gc, gd := f.Nearest(qs[i:i+dim], &s)
		wc, wd := Nearest(cent, dim, qs[i:i+dim])
		if gc != wc || gd != wd {
			t.Fatalf("query %d: (%d, %v), want (%d, %v)", i/dim, gc, gd, wc, wd)
		}
	}
}

// Equal distances among the centroids examined go to the lowest index, even
// when early termination of a distance stops exactly at the bound.
func TestForestTies(t *testing.T) {
	// One leaf holds all three; 0 and 2 are duplicates at distance 1.
	// Seeds shuffle the leaf, so some examine 2 before 0.
	cent := []float32{0, 1, 5, 5, 0, 1}
	for seed := range uint64(8) {
		f, err := NewForest(cent, 2, ForestOptions{Trees: 2, LeafSize: 4, Checks: 1, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if c, d := f.Nearest([]float32{0, 0}, nil); c != 0 || d != 1 {
			t.Errorf("seed %d: Nearest = (%d, %v), want (0, 1)", seed, c, d)
		}
	}
}

// Duplicate centroids, up to all of them, must neither break the build nor
// unbalance the trees, and a query at a centroid must find it.
func TestForestDuplicates(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const dim = 16
	base := uniform(rng, 5, dim)
	for _, tc := range []struct {
		name string
		k    int
		pick func(i int) int // which base point centroid i copies
	}{
		{"all equal", 1000, func(int) int { return 0 }},
		{"five values", 1000, func(i int) int { return i % 5 }},
		{"one outlier", 999, func(i int) int { return min(i/998, 1) }},
	} {
		cent := make([]float32, 0, tc.k*dim)
		for i := range tc.k {
			cent = append(cent, base[tc.pick(i)*dim:(tc.pick(i)+1)*dim]...)
		}
		opt := ForestOptions{Trees: 4, LeafSize: 4, Checks: 16, Seed: 2}
		f, err := NewForest(cent, dim, opt)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		// Balanced splits give at most 2·⌈K/LeafSize⌉·2 nodes per tree
		// and depth ⌈log₂ K⌉; measure the depth directly.
		for tr, r := range f.roots {
			if d := depth(f, r); d > 12 {
				t.Errorf("%s: tree %d has depth %d, want ≤ 12 for K = %d", tc.name, tr, d, tc.k)
			}
		}
		var s Search
		for i := range tc.k {
			x := cent[i*dim : (i+1)*dim]
			if _, d := f.Nearest(x, &s); d != 0 {
				t.Fatalf("%s: query at centroid %d found distance %v", tc.name, i, d)
			}
		}
	}
}

func depth(f *Forest, n int32) int {
	nd := f.nodes[n]
	if nd.dim < 0 {
		return 1
	}
	return 1 + max(depth(f, nd.a), depth(f, nd.b))
}

// The same centroids, options and seed give the same forest whatever the
// number of goroutines that build it; another seed gives another forest.
func TestForestDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	cent := uniform(rng, 500, 12)
	opt := ForestOptions{Trees: 5, LeafSize: 3, Checks: 20, Seed: 11}
	a, err := NewForest(cent, 12, opt)
	if err != nil {
		t.Fatal(err)
	}
	prev := runtime.GOMAXPROCS(1)
	b, err := NewForest(cent, 12, opt)
	runtime.GOMAXPROCS(prev)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.nodes, b.nodes) || !slices.Equal(a.perm, b.perm) || !slices.Equal(a.roots, b.roots) {
		t.Error("forests built with 1 and GOMAXPROCS goroutines differ")
	}
	opt.Seed = 12
	c, _ := NewForest(cent, 12, opt)
	if slices.Equal(a.perm, c.perm) {
		t.Error("seeds 11 and 12 gave the same forest")
	}
	if a.Bytes() != 4*len(a.perm)+16*len(a.nodes)+4*len(a.roots) || a.K() != 500 || a.Dim() != 12 || a.Options() != (ForestOptions{Trees: 5, LeafSize: 3, Checks: 20, Seed: 11}) {
		t.Error("accessors disagree with the forest")
	}
}

func TestForestAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const k, dim = 2000, 128
	cent := uniform(rng, k, dim)
	f, err := NewForest(cent, dim, DefaultForestOptions())
	if err != nil {
		t.Fatal(err)
	}
	xs := uniform(rng, 64, dim)
	b := make([]byte, dim)
	labels, dist := make([]int32, 64), make([]float32, 64)
	var s Search
	f.Assign(xs, labels, dist, &s) // grow the scratch
	f.NearestBytes(b, &s)
	i := 0
	if a := testing.AllocsPerRun(100, func() { f.Nearest(xs[(i%64)*dim:(i%64+1)*dim], &s); i++ }); a != 0 {
		t.Errorf("Nearest allocates %v times per call", a)
	}
	if a := testing.AllocsPerRun(20, func() { f.Assign(xs, labels, dist, &s) }); a != 0 {
		t.Errorf("Assign allocates %v times per call", a)
	}
	if a := testing.AllocsPerRun(100, func() { f.NearestBytes(b, &s) }); a != 0 {
		t.Errorf("NearestBytes allocates %v times per call", a)
	}
}

func TestForestNearestBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 3))
	const k, dim = 300, 8
	cent := make([]float32, k*dim)
	for i := range cent {
		cent[i] = float32(rng.IntN(256))
	}
	f, _ := NewForest(cent, dim, ForestOptions{Trees: 4, LeafSize: 8, Checks: 64, Seed: 1})
	var s1, s2 Search
	for range 100 {
		b := make([]byte, dim)
		x := make([]float32, dim)
		for j := range b {
			b[j] = byte(rng.IntN(256))
			x[j] = float32(b[j])
		}
		c1, d1 := f.NearestBytes(b, &s1)
		c2, d2 := f.Nearest(x, &s2)
		if c1 != c2 || d1 != d2 {
			t.Fatalf("NearestBytes = (%d, %v), Nearest = (%d, %v)", c1, d1, c2, d2)
		}
	}
}

func TestForestQuantizeBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	const k, dim, n = 200, 16, 50
	cent := make([]float32, k*dim)
	for i := range cent {
		cent[i] = float32(rng.IntN(256))
	}
	f, _ := NewForest(cent, dim, ForestOptions{Trees: 4, LeafSize: 4, Checks: 32, Seed: 2})
	desc := make([]byte, n*dim)
	for i := range desc {
		desc[i] = byte(rng.IntN(256))
	}
	var s Search
	words := f.QuantizeBytes([]uint32{7}, desc, &s)
	if len(words) != n+1 || words[0] != 7 {
		t.Fatalf("QuantizeBytes returned %d words starting %v, want 7 then %d", len(words), words[:1], n)
	}
	for i := range n {
		if c, _ := f.NearestBytes(desc[i*dim:(i+1)*dim], &s); words[i+1] != uint32(c) {
			t.Fatalf("descriptor %d: word %d, NearestBytes %d", i, words[i+1], c)
		}
	}
	buf := make([]uint32, 0, n)
	if a := testing.AllocsPerRun(20, func() { buf = f.QuantizeBytes(buf[:0], desc, &s) }); a != 0 {
		t.Errorf("QuantizeBytes allocates %v times per call", a)
	}
}

func TestForestPanics(t *testing.T) {
	f, err := NewForest(make([]float32, 8), 2, ForestOptions{Trees: 1, LeafSize: 1, Checks: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		fn   func()
	}{
		{"Nearest short", func() { f.Nearest(make([]float32, 1), nil) }},
		{"NearestBytes long", func() { f.NearestBytes(make([]byte, 3), nil) }},
		{"QuantizeBytes ragged", func() { f.QuantizeBytes(nil, make([]byte, 3), nil) }},
		{"Assign labels", func() { f.Assign(make([]float32, 4), make([]int32, 3), make([]float32, 3), nil) }},
	} {
		testkit.MustPanic(t, tc.name, "", tc.fn)
	}
}

func TestForIteration(t *testing.T) {
	o := ForestOptions{Trees: 3, LeafSize: 2, Checks: 9, Seed: 4}
	a, b := o.ForIteration(1), o.ForIteration(2)
	if a.Seed == b.Seed || a.Seed == o.Seed || a != o.ForIteration(1) {
		t.Errorf("iteration seeds %d, %d from %d: want distinct and repeatable", a.Seed, b.Seed, o.Seed)
	}
	a.Seed = o.Seed
	if a != o {
		t.Errorf("ForIteration changed more than the seed: %+v", a)
	}
}

func BenchmarkForestNearest(b *testing.B) {
	for _, k := range []int{1000, 10000} {
		const dim = 128
		rng := rand.New(rand.NewPCG(1, 2))
		// SIFT-like byte-range clustered data: centroids and queries
		// around 100 shared modes.
		modes := make([]float32, 100*dim)
		for i := range modes {
			modes[i] = float32(rng.IntN(200))
		}
		gen := func(n int) []float32 {
			x := make([]float32, n*dim)
			for i := range n {
				m := rng.IntN(100)
				for j := range dim {
					x[i*dim+j] = max(0, modes[m*dim+j]+float32(20*rng.NormFloat64()))
				}
			}
			return x
		}
		cent, xs := gen(k), gen(256)
		f, err := NewForest(cent, dim, DefaultForestOptions())
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			var s Search
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				f.Nearest(xs[(i%256)*dim:(i%256+1)*dim], &s)
				i++
			}
		})
	}
}

func BenchmarkNewForest(b *testing.B) {
	const k, dim = 10000, 128
	rng := rand.New(rand.NewPCG(1, 2))
	cent := make([]float32, k*dim)
	for i := range cent {
		cent[i] = float32(rng.IntN(256))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewForest(cent, dim, DefaultForestOptions()); err != nil {
			b.Fatal(err)
		}
	}
}
