package nn

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bowline/bowline/transforms/internal/testkit"
)

// refKNN is the k-NN reference by full sort: every centroid's complete
// distance, ordered by (distance, index).
func refKNN(cent []float32, dim int, x []float32, k int) ([]int32, []float32) {
	type cd struct {
		c int32
		d float32
	}
	n := len(cent) / dim
	all := make([]cd, n)
	for c := range n {
		all[c] = cd{int32(c), sqDist(cent[c*dim:(c+1)*dim], x, float32(math.Inf(1)))}
	}
	slices.SortFunc(all, func(a, b cd) int {
		if r := cmp.Compare(a.d, b.d); r != 0 {
			return r
		}
		return cmp.Compare(a.c, b.c)
	})
	k = min(k, n)
	idx, dist := make([]int32, k), make([]float32, k)
	for i := range k {
		idx[i], dist[i] = all[i].c, all[i].d
	}
	return idx, dist
}

func TestNearestK(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, dim := range []int{1, 3, 16, 128} {
		const k = 60
		cent := make([]float32, k*dim)
		for i := range cent {
			// Few distinct values make equal distances, and so ties, common.
			cent[i] = float32(rng.IntN(4))
		}
		copy(cent[9*dim:10*dim], cent[2*dim:3*dim]) // an exact duplicate
		x := make([]float32, dim)
		for q := range 200 {
			for j := range x {
				x[j] = float32(rng.IntN(4))
			}
			if q == 0 {
				copy(x, cent[2*dim:3*dim])
			}
			for _, r := range []int{1, 2, 3, 7, k, k + 5} {
				idx, dist := make([]int32, r), make([]float32, r)
				n := NearestK(cent, dim, x, idx, dist)
				wi, wd := refKNN(cent, dim, x, r)
				if n != len(wi) || !slices.Equal(idx[:n], wi) || !slices.Equal(dist[:n], wd) {
					t.Fatalf("dim %d query %d r %d: NearestK = %v %v, want %v %v", dim, q, r, idx[:n], dist[:n], wi, wd)
				}
				if r == 1 {
					if c, d := Nearest(cent, dim, x); int32(c) != idx[0] || d != dist[0] {
						t.Fatalf("dim %d query %d: NearestK(1) = (%d, %v), Nearest = (%d, %v)", dim, q, idx[0], dist[0], c, d)
					}
				}
			}
		}
	}
	if n := NearestK([]float32{1, 2}, 1, []float32{0}, nil, nil); n != 0 {
		t.Errorf("NearestK with no room returned %d", n)
	}
}

// modal returns k centroids and q queries in [0, ∞)^dim drawn alike: each
// is one of 100 modes uniform in [0, 200)^dim plus N(0, noise²) per
// coordinate, clipped at 0. Centroids then crowd where queries are, as a
// trained vocabulary does around descriptors, so a query's second and third
// nearest centroids are close rivals of its nearest.
func modal(rng *rand.Rand, k, q, dim int, noise float64) (cent, qs []float32) {
	modes := make([]float32, 100*dim)
	for i := range modes {
		modes[i] = float32(rng.IntN(200))
	}
	gen := func(n int) []float32 {
		x := make([]float32, n*dim)
		for i := range n {
			m := rng.IntN(100)
			for j := range dim {
				x[i*dim+j] = max(0, modes[m*dim+j]+float32(noise*rng.NormFloat64()))
			}
		}
		return x
	}
	return gen(k), gen(q)
}

// TestForestNearestKRecall bounds recall@r of the forest's k-NN: the
// fraction of the exact r nearest centroids (NearestK) that Forest.NearestK
// returns, averaged over queries, for r = 3 as soft assignment uses it. As
// in TestForestRecall, uniform data is the hard case; the bounds are about
// 0.03 below the values measured when the test was written (uniform 8-d
// 0.946, uniform 16-d 0.920, modal 128-d 0.878; recall@1 on the modal data
// is 0.892, so the second and third words cost little extra). The planted
// clusters of TestForestRecall are left out on purpose: there every query
// has one near centroid and all others far and nearly equidistant, so its
// 2nd and 3rd nearest are arbitrary (recall@3 0.50 with 64 checks) — and
// would get negligible soft-assignment weight anyway. It also checks what
// holds for every query: distances ascending, exact for their centroids and
// never below the exact ones rank for rank, distinct centroids, and the
// work bound.
func TestForestNearestKRecall(t *testing.T) {
	const r, q = 3, 2000
	for _, tc := range []struct {
		name   string
		dim, k int
		opt    ForestOptions
		modal  bool
		min    float64
	}{
		{"uniform 8-d", 8, 2000, ForestOptions{Trees: 8, LeafSize: 8, Checks: 128, Seed: 1}, false, 0.91},
		{"uniform 16-d", 16, 2000, ForestOptions{Trees: 8, LeafSize: 8, Checks: 256, Seed: 1}, false, 0.89},
		{"modal 128-d", 128, 2000, ForestOptions{Trees: 8, LeafSize: 8, Checks: 64, Seed: 1}, true, 0.85},
	} {
		rng := rand.New(rand.NewPCG(1, 2))
		var cent, qs []float32
		if tc.modal {
			cent, qs = modal(rng, tc.k, q, tc.dim, 40)
		} else {
			cent, qs = uniform(rng, tc.k, tc.dim), uniform(rng, q, tc.dim)
		}
		f, err := NewForest(cent, tc.dim, tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		var s Search
		idx, dist := make([]int32, r), make([]float32, r)
		wi, wd := make([]int32, r), make([]float32, r)
		hit := 0
		for i := range q {
			x := qs[i*tc.dim : (i+1)*tc.dim]
			if n := f.NearestK(x, idx, dist, &s); n != r {
				t.Fatalf("%s: query %d: %d neighbours, want %d", tc.name, i, n, r)
			}
			NearestK(cent, tc.dim, x, wi, wd)
			for j, c := range idx {
				if slices.Contains(wi, c) {
					hit++
				}
				if d := sqDist(cent[int(c)*tc.dim:(int(c)+1)*tc.dim], x, float32(math.Inf(1))); d != dist[j] {
					t.Fatalf("%s: query %d: centroid %d reported at %v, is at %v", tc.name, i, c, dist[j], d)
				}
				if dist[j] < wd[j] || (j > 0 && (dist[j] < dist[j-1] || slices.Contains(idx[:j], c))) {
					t.Fatalf("%s: query %d: %v at %v, exact %v at %v", tc.name, i, idx, dist, wi, wd)
				}
			}
			if lim := max(tc.opt.Checks, r) + tc.opt.LeafSize - 1; s.Checked > lim {
				t.Fatalf("%s: %d distances computed, bound %d", tc.name, s.Checked, lim)
			}
		}
		rec := float64(hit) / (r * q)
		t.Logf("%s: recall@%d %.3f", tc.name, r, rec)
		if rec < tc.min {
			t.Errorf("%s: recall@%d %.3f, want ≥ %.2f", tc.name, r, rec, tc.min)
		}
	}
}

// With k = 1 the k-NN search must be Nearest's search exactly, bounded
// budget included; with a budget covering every centroid it must be the
// exact NearestK.
func TestForestNearestKConsistent(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	const k, dim = 700, 16
	cent := make([]float32, k*dim)
	for i := range cent {
		cent[i] = float32(rng.IntN(8)) // many ties
	}
	copy(cent[5*dim:6*dim], cent[400*dim:401*dim])
	qs := append(uniform(rng, 300, dim), cent[400*dim:401*dim]...)
	for i := range qs {
		qs[i] *= 8
	}
	for _, checks := range []int{1, 16, 64, k} {
		f, err := NewForest(cent, dim, ForestOptions{Trees: 4, LeafSize: 4, Checks: checks, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		var s1, s2 Search
		idx, dist := make([]int32, 1), make([]float32, 1)
		idx5, dist5 := make([]int32, 5), make([]float32, 5)
		for i := 0; i < len(qs); i += dim {
			x := qs[i : i+dim]
			c, d := f.Nearest(x, &s1)
			if n := f.NearestK(x, idx, dist, &s2); n != 1 || idx[0] != int32(c) || dist[0] != d || s1.Checked != s2.Checked {
				t.Fatalf("checks %d query %d: NearestK(1) = (%d, %v) after %d checks, Nearest = (%d, %v) after %d", checks, i/dim, idx[0], dist[0], s2.Checked, c, d, s1.Checked)
			}
			n := f.NearestK(x, idx5, dist5, &s2)
			if checks >= k {
				wi, wd := refKNN(cent, dim, x, 5)
				if n != 5 || !slices.Equal(idx5, wi) || !slices.Equal(dist5, wd) {
					t.Fatalf("exhaustive query %d: %v %v, want %v %v", i/dim, idx5, dist5, wi, wd)
				}
			}
			// Here the 5-NN search also finds what Nearest finds. That is
			// not guaranteed in general: its looser bound queues more
			// branches, which can spend the budget elsewhere.
			if n != 5 || dist5[0] > d {
				t.Fatalf("checks %d query %d: k-NN %v %v misses Nearest's (%d, %v)", checks, i/dim, idx5, dist5, c, d)
			}
		}
	}
}

// Fewer centroids than requested give all of them; a search with fewer
// checks than neighbours still fills the list.
func TestForestNearestKSmall(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	const dim = 4
	for _, k := range []int{1, 3, 40} {
		cent := uniform(rng, k, dim)
		f, err := NewForest(cent, dim, ForestOptions{Trees: 2, LeafSize: 2, Checks: 1, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []int{1, 5, 50} {
			idx, dist := make([]int32, r), make([]float32, r)
			x := uniform(rng, 1, dim)
			n := f.NearestK(x, idx, dist, nil)
			if n != min(r, k) {
				t.Fatalf("K %d r %d: %d neighbours, want %d", k, r, n, min(r, k))
			}
			if r >= k {
				wi, wd := refKNN(cent, dim, x, r)
				if !slices.Equal(idx[:n], wi) || !slices.Equal(dist[:n], wd) {
					t.Fatalf("K %d r %d: %v %v, want all centroids %v %v", k, r, idx[:n], dist[:n], wi, wd)
				}
			}
		}
	}
}

func TestForestNearestKBytesAndAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	const k, dim, r = 2000, 128, 3
	cent := make([]float32, k*dim)
	for i := range cent {
		cent[i] = float32(rng.IntN(256))
	}
	f, err := NewForest(cent, dim, DefaultForestOptions())
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, dim)
	x := make([]float32, dim)
	var s1, s2 Search
	i1, d1 := make([]int32, r), make([]float32, r)
	i2, d2 := make([]int32, r), make([]float32, r)
	for range 50 {
		for j := range b {
			b[j] = byte(rng.IntN(256))
			x[j] = float32(b[j])
		}
		f.NearestKBytes(b, i1, d1, &s1)
		f.NearestK(x, i2, d2, &s2)
		if !slices.Equal(i1, i2) || !slices.Equal(d1, d2) {
			t.Fatalf("NearestKBytes = %v %v, NearestK = %v %v", i1, d1, i2, d2)
		}
	}
	if a := testing.AllocsPerRun(100, func() { f.NearestK(x, i2, d2, &s2) }); a != 0 {
		t.Errorf("Forest.NearestK allocates %v times per call", a)
	}
	if a := testing.AllocsPerRun(100, func() { f.NearestKBytes(b, i1, d1, &s1) }); a != 0 {
		t.Errorf("Forest.NearestKBytes allocates %v times per call", a)
	}
	if a := testing.AllocsPerRun(20, func() { NearestK(cent, dim, x, i2, d2) }); a != 0 {
		t.Errorf("NearestK allocates %v times per call", a)
	}
}

func TestNearestKPanics(t *testing.T) {
	f, err := NewForest(make([]float32, 8), 2, ForestOptions{Trees: 1, LeafSize: 1, Checks: 1})
	if err != nil {
		t.Fatal(err)
	}
	three := make([]int32, 3)
	for _, tc := range []struct {
		name string
		fn   func()
	}{
		{"NearestK short x", func() { NearestK(make([]float32, 4), 2, make([]float32, 1), three, make([]float32, 3)) }},
		{"NearestK ragged", func() { NearestK(make([]float32, 5), 2, make([]float32, 2), three, make([]float32, 3)) }},
		{"NearestK buffers", func() { NearestK(make([]float32, 4), 2, make([]float32, 2), three, make([]float32, 2)) }},
		{"Forest.NearestK short x", func() { f.NearestK(make([]float32, 1), three, make([]float32, 3), nil) }},
		{"Forest.NearestK buffers", func() { f.NearestK(make([]float32, 2), three, make([]float32, 1), nil) }},
		{"Forest.NearestKBytes long", func() { f.NearestKBytes(make([]byte, 3), three, make([]float32, 3), nil) }},
	} {
		testkit.MustPanic(t, tc.name, "", tc.fn)
	}
}

// BenchmarkForestNearestK compares one r-NN query with one nearest query
// on the SIFT-like data of BenchmarkForestNearest.
func BenchmarkForestNearestK(b *testing.B) {
	const k, dim = 10000, 128
	cent, xs := modal(rand.New(rand.NewPCG(1, 2)), k, 256, dim, 20)
	f, err := NewForest(cent, dim, DefaultForestOptions())
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range []int{1, 3} {
		b.Run(fmt.Sprintf("r=%d", r), func(b *testing.B) {
			var s Search
			idx, dist := make([]int32, r), make([]float32, r)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				f.NearestK(xs[(i%256)*dim:(i%256+1)*dim], idx, dist, &s)
				i++
			}
		})
	}
}
