package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bowline/bowline/transforms/internal/testkit"
	"github.com/bowline/bowline/transforms/sift"
)

// assign is the scalar oracle of Exact.Assign: Nearest point by point.
func assign(centroids []float32, dim int, data []float32, labels []int32, dist []float32) (changed int) {
	for i := range labels {
		c, d := Nearest(centroids, dim, data[i*dim:(i+1)*dim])
		if labels[i] != int32(c) {
			labels[i] = int32(c)
			changed++
		}
		dist[i] = d
	}
	return changed
}

// lloyd is a plain Lloyd's k-means for the tests, which cannot use package
// kmeans (it imports this one): k distinct points drawn by seed, then iters
// updates to the means of exact assignments; empty clusters keep their
// centroid.
func lloyd(x []float32, dim, k, iters int, seed uint64) []float32 {
	n := len(x) / dim
	rng := rand.New(rand.NewPCG(seed, 1))
	cent := make([]float32, 0, k*dim)
	for _, i := range rng.Perm(n)[:k] {
		cent = append(cent, x[i*dim:(i+1)*dim]...)
	}
	labels, dist := make([]int32, n), make([]float32, n)
	sum, count := make([]float64, k*dim), make([]int, k)
	for range iters {
		NewExact(cent, dim).Assign(x, labels, dist, nil)
		clear(sum)
		clear(count)
		for i, c := range labels {
			count[c]++
			for j, v := range x[i*dim : (i+1)*dim] {
				sum[int(c)*dim+j] += float64(v)
			}
		}
		for c, m := range count {
			for j := range dim {
				if m > 0 {
					cent[c*dim+j] = float32(sum[c*dim+j] / float64(m))
				}
			}
		}
	}
	return cent
}

// newIVF is NewIVF with coarse centroids from lloyd: ten iterations over at
// most 64·Lists of the words, drawn by opt.Seed, as kmeans.TrainIVF draws
// and clusters them (with its own generator and empty-cell rule).
func newIVF(cent []float32, dim int, opt IVFOptions) (*IVF, error) {
	k, err := CheckIVF(cent, dim, opt)
	if err != nil {
		return nil, err
	}
	lists := opt.Lists
	if lists == 0 {
		lists = DefaultLists(k, opt.Probes)
	}
	lists = min(lists, k)
	rng := rand.New(rand.NewPCG(opt.Seed, 2))
	var sample []float32
	for _, i := range rng.Perm(k)[:min(k, 64*lists)] {
		sample = append(sample, cent[i*dim:(i+1)*dim]...)
	}
	return NewIVF(cent, dim, lloyd(sample, dim, lists, 10, opt.Seed), opt)
}

func TestNearest(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, dim := range []int{1, 3, 16, 37, 128} {
		const k = 50
		cent := make([]float32, k*dim)
		for i := range cent {
			cent[i] = float32(rng.NormFloat64())
		}
		inf := float32(math.Inf(1))
		for range 100 {
			x := make([]float32, dim)
			for j := range x {
				x[j] = float32(rng.NormFloat64())
			}
			got, gd := Nearest(cent, dim, x)
			want, wd := 0, inf
			for c := range k {
				if d := sqDist(cent[c*dim:(c+1)*dim], x, inf); d < wd {
					want, wd = c, d
				}
			}
			if got != want || gd != wd {
				t.Fatalf("dim %d: Nearest = (%d, %v), want (%d, %v)", dim, got, gd, want, wd)
			}
			var ref float64
			for j := range x {
				d := float64(cent[got*dim+j]) - float64(x[j])
				ref += d * d
			}
			if math.Abs(float64(gd)-ref) > 1e-5*ref {
				t.Fatalf("dim %d: distance %v, float64 reference %v", dim, gd, ref)
			}
		}
	}
}

func TestNearestTies(t *testing.T) {
	// Centroids 1 and 3 are both at distance 1 from x = (0,0); 2 is a
	// duplicate of 1.
	cent := []float32{5, 5, 1, 0, 1, 0, 0, -1}
	if c, d := Nearest(cent, 2, []float32{0, 0}); c != 1 || d != 1 {
		t.Errorf("Nearest = (%d, %v), want (1, 1)", c, d)
	}
	if c, d := Nearest(cent, 2, []float32{5, 5}); c != 0 || d != 0 {
		t.Errorf("Nearest = (%d, %v), want (0, 0)", c, d)
	}
}

func TestNearestAllocs(t *testing.T) {
	cent := make([]float32, 100*128)
	x := make([]float32, 128)
	if a := testing.AllocsPerRun(100, func() { Nearest(cent, 128, x) }); a != 0 {
		t.Errorf("Nearest allocates %v times per call", a)
	}
}

func TestNearestPanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		cent []float32
		dim  int
		x    []float32
	}{
		{"short x", make([]float32, 4), 2, make([]float32, 1)},
		{"ragged centroids", make([]float32, 5), 2, make([]float32, 2)},
		{"no centroids", nil, 2, make([]float32, 2)},
		{"zero dim", make([]float32, 4), 0, nil},
	} {
		testkit.MustPanic(t, tc.name, "", func() { Nearest(tc.cent, tc.dim, tc.x) })
	}
}

// BenchmarkNearest is one point at a time through Nearest, at 1K and 10K
// words (BenchmarkNearestBatch is the same search through Exact).
func BenchmarkNearest(b *testing.B) {
	const dim = 128
	for _, k := range []int{1000, 10000} {
		rng := rand.New(rand.NewPCG(1, 2))
		// SIFT-like: non-negative byte-range coordinates.
		cent := make([]float32, k*dim)
		for i := range cent {
			cent[i] = float32(rng.IntN(256))
		}
		xs := make([][]float32, 64)
		for i := range xs {
			xs[i] = make([]float32, dim)
			for j := range xs[i] {
				xs[i][j] = float32(rng.IntN(256))
			}
		}
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				Nearest(cent, dim, xs[i%len(xs)])
				i++
			}
		})
	}
}

// LowerSqDist four points at a time (sqDist4AVX) must lower D² to exactly
// the values of sqDist one point at a time, whatever bounds stop the sums:
// the centres k-means++ chooses depend on every bit of them.
func TestLowerSqDistVector(t *testing.T) {
	if !useFMA {
		t.Skip("no AVX on this CPU")
	}
	saved := useFMA
	defer func() { useFMA = saved }()
	rng := rand.New(rand.NewPCG(4, 4))
	check := func(t *testing.T, data []float32, dim int, c, d2 []float32) {
		t.Helper()
		want, got := slices.Clone(d2), slices.Clone(d2)
		useFMA = false
		LowerSqDist(data, dim, c, want)
		useFMA = true
		LowerSqDist(data, dim, c, got)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("dim %d point %d: D² %v, sqDist gives %v (bound %v)", dim, i, got[i], want[i], d2[i])
			}
		}
	}
	for _, dim := range []int{16, 32, 128} {
		const n = 203
		data := make([]float32, n*dim)
		for i := range data {
			data[i] = float32(rng.IntN(256))
			if i%3 == 0 {
				data[i] += float32(rng.Float64())
			}
		}
		c := make([]float32, dim)
		for j := range c {
			c[j] = float32(rng.Float64() * 255)
		}
		d2 := make([]float32, n)
		for i := range d2 {
			switch i % 4 {
			case 0:
				d2[i] = float32(math.Inf(1))
			case 1:
				d2[i] = float32(rng.Float64() * 1000) // stops early
			default:
				d2[i] = sqDist(data[i*dim:(i+1)*dim], c, float32(math.Inf(1))) * float32(0.5+rng.Float64())
			}
		}
		check(t, data, dim, c, d2)
	}
	// Real descriptors, lowered towards 50 of them in turn as k-means++
	// lowers them towards the centres it chooses.
	t.Run("ETH-80", func(t *testing.T) {
		desc := eth80Descriptors(t, 1)
		x := make([]float32, len(desc))
		for i, b := range desc {
			x[i] = float32(b)
		}
		const dim = sift.DescriptorSize
		n := len(x) / dim
		d2 := slices.Repeat([]float32{float32(math.Inf(1))}, n)
		for j := range 50 {
			p := j * (n / 50)
			c := x[p*dim : (p+1)*dim]
			check(t, x, dim, c, d2)
			LowerSqDist(x, dim, c, d2)
		}
	})
}

func TestLowerSqDistPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"dim":    func() { LowerSqDist(make([]float32, 4), 0, nil, make([]float32, 1)) },
		"centre": func() { LowerSqDist(make([]float32, 4), 2, make([]float32, 3), make([]float32, 2)) },
		"data":   func() { LowerSqDist(make([]float32, 5), 2, make([]float32, 2), make([]float32, 2)) },
	} {
		testkit.MustPanic(t, name, "LowerSqDist", f)
	}
}
