package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/bowline/bowline/transforms/sift"
)

// ivfKernels runs f with the portable panel kernel and, where the CPU has
// it, the AVX2 one: the IVF's coarse and list searches use either.
func ivfKernels(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	saved := useFMA
	t.Cleanup(func() { useFMA = saved })
	useFMA = false
	t.Run("go", f)
	if saved {
		useFMA = true
		t.Run("fma", f)
	}
}

// checkIVFExact checks that v answers every point of data as Nearest does,
// bit for bit, through Assign, Nearest and (for byte-valued data)
// QuantizeBytes.
func checkIVFExact(t *testing.T, v *IVF, cent []float32, dim int, data []float32) {
	t.Helper()
	n := len(data) / dim
	wantL, wantD := make([]int32, n), make([]float32, n)
	assign(cent, dim, data, wantL, wantD)
	gotL, gotD := make([]int32, n), make([]float32, n)
	for i := range gotL {
		gotL[i] = -1
	}
	var s IVFScratch
	if changed := v.Assign(data, gotL, gotD, &s); changed != n {
		t.Errorf("changed = %d, want all %d labels (from −1)", changed, n)
	}
	for i := range n {
		if gotL[i] != wantL[i] || math.Float32bits(gotD[i]) != math.Float32bits(wantD[i]) {
			t.Fatalf("point %d of %d (K = %d, %d lists, dim %d): IVF gives centroid %d at %v, Nearest %d at %v",
				i, n, v.K(), v.Options().Lists, dim, gotL[i], gotD[i], wantL[i], wantD[i])
		}
	}
	checkAssignParallel(t, v, data, nil)
	for i := 0; i < n; i += 17 {
		if c, d := v.Nearest(data[i*dim:(i+1)*dim], &s); int32(c) != wantL[i] || d != wantD[i] {
			t.Fatalf("Nearest of point %d: (%d, %v), want (%d, %v)", i, c, d, wantL[i], wantD[i])
		}
	}
	bytes := make([]byte, len(data))
	for i, x := range data {
		if x != float32(byte(x)) {
			return
		}
		bytes[i] = byte(x)
	}
	words := v.QuantizeBytes(nil, bytes, &s)
	for i, w := range words {
		if int32(w) != wantL[i] {
			t.Fatalf("QuantizeBytes of point %d: word %d, Nearest %d", i, w, wantL[i])
		}
	}
}

// checkAssignParallel checks that AssignParallel on 2, 3 and 5 goroutines
// gives Assign's labels, distances (bit for bit) and count of changed
// labels, from the labels prev (−1 for each point when nil).
func checkAssignParallel(t *testing.T, v *IVF, data []float32, prev []int32) {
	t.Helper()
	n := len(data) / v.Dim()
	if prev == nil {
		prev = slices.Repeat([]int32{-1}, n)
	}
	wantL, wantD := slices.Clone(prev), make([]float32, n)
	wantC := v.Assign(data, wantL, wantD, nil)
	for _, w := range []int{2, 3, 5} {
		scratch := make([]*IVFScratch, w)
		for g := range scratch {
			scratch[g] = new(IVFScratch)
		}
		for range 2 { // the second time with the scratch grown
			gotL, gotD := slices.Clone(prev), make([]float32, n)
			if c := v.AssignParallel(data, gotL, gotD, scratch); c != wantC {
				t.Fatalf("AssignParallel on %d goroutines changed %d labels, Assign %d", w, c, wantC)
			}
			for i := range n {
				if gotL[i] != wantL[i] || math.Float32bits(gotD[i]) != math.Float32bits(wantD[i]) {
					t.Fatalf("point %d of %d (K = %d, %d lists, %d probes, batch %d): AssignParallel on %d goroutines gives centroid %d at %v, Assign %d at %v",
						i, n, v.K(), v.Options().Lists, v.Options().Probes, v.Options().Batch, w, gotL[i], gotD[i], wantL[i], wantD[i])
				}
			}
		}
	}
}

// AssignParallel answers as Assign does, whatever the goroutines, with
// few probes (where which lists each goroutine searches matters), ties
// between duplicate centroids in different lists, labels kept from a
// previous assignment and batches that leave some goroutines no tile.
func TestIVFAssignParallel(t *testing.T) {
	ivfKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(21, 22))
		const k, dim, n = 3000, 16, 2500
		cent := make([]float32, k*dim)
		for i := range cent {
			cent[i] = float32(rng.IntN(256))
		}
		// Pairs of centroids c and k−1−c = c + 2u, and points c + u
		// midway, at the same distance from both: ties, often between
		// lists, which the nearest-list search may find in either order.
		const pairs = 200
		mid := make([]float32, 0, pairs*dim)
		for c := range pairs {
			for j := range dim {
				u := float32(rng.IntN(41) - 20)
				cent[(k-1-c)*dim+j] = cent[c*dim+j] + 2*u
				mid = append(mid, cent[c*dim+j]+u)
			}
		}
		data := make([]float32, 0, n*dim)
		for i := range n {
			if i%3 == 0 {
				c := rng.IntN(pairs)
				data = append(data, mid[c*dim:(c+1)*dim]...)
				continue
			}
			for range dim {
				data = append(data, float32(rng.IntN(256)))
			}
		}
		prev := make([]int32, n)
		for i := range prev {
			prev[i] = int32(rng.IntN(k+1)) - 1
		}
		for _, tc := range []struct{ probes, batch int }{{1, 0}, {3, 0}, {8, 500}, {5, 50}, {2, 1}} {
			v, err := newIVF(cent, dim, IVFOptions{Lists: 60, Probes: tc.probes, Batch: tc.batch, Seed: 4})
			if err != nil {
				t.Fatal(err)
			}
			checkAssignParallel(t, v, data, nil)
			checkAssignParallel(t, v, data, prev)
		}
	})
}

// Probing every list is the exhaustive search, and its answers are
// Nearest's: duplicate centroids (ties to the lower index), dimensions that
// are and are not multiples of 4, batches that split tiles and strips.
func TestIVFProbeAllIsNearest(t *testing.T) {
	ivfKernels(t, func(t *testing.T) {
		for _, tc := range []struct {
			k, dim, lists, batch, n int
		}{
			{1, 5, 0, 0, 50},
			{37, 5, 4, 7, 200},
			{300, 12, 10, 100, 500},
			{500, 128, 20, 97, 400},
		} {
			rng := rand.New(rand.NewPCG(uint64(tc.k), 3))
			cent := make([]float32, tc.k*tc.dim)
			for i := range cent {
				cent[i] = float32(rng.IntN(256))
			}
			if tc.k > 8 {
				copy(cent[7*tc.dim:8*tc.dim], cent[3*tc.dim:4*tc.dim])
			}
			data := make([]float32, 0, tc.n*tc.dim)
			for i := range tc.n {
				if i%10 == 0 {
					// A centroid itself, and its duplicate's tie.
					c := rng.IntN(tc.k)
					if i%20 == 0 && tc.k > 8 {
						c = 7
					}
					data = append(data, cent[c*tc.dim:(c+1)*tc.dim]...)
					continue
				}
				for range tc.dim {
					data = append(data, float32(rng.IntN(256)))
				}
			}
			v, err := newIVF(cent, tc.dim, IVFOptions{Lists: tc.lists, Probes: 1 << 20, Batch: tc.batch, Seed: 9})
			if err != nil {
				t.Fatal(err)
			}
			checkIVFExact(t, v, cent, tc.dim, data)
		}
	})
}

// Real SIFT descriptors of ETH-80 photos against a vocabulary trained on
// some of them: at the default settings the IVF finds the exact nearest word
// of at least 97% of the descriptors (measured 98.8% on these 6,082, K =
// 500 words in 63 lists, 8 probed), never a
// nearer one than exists, and probing every list gives Nearest's answers.
func TestIVFRealDescriptors(t *testing.T) {
	const dim = sift.DescriptorSize
	desc, x, voc := realVocabulary(t, 12, 500, 2)
	n := len(desc) / dim

	wantL, wantD := make([]int32, n), make([]float32, n)
	NewExact(voc, dim).Assign(x, wantL, wantD, nil)
	ivfKernels(t, func(t *testing.T) {
		opt := DefaultIVFOptions()
		opt.Seed = 1
		v, err := newIVF(voc, dim, opt)
		if err != nil {
			t.Fatal(err)
		}
		words := v.QuantizeBytes(nil, desc, nil)
		hit := 0
		for i, w := range words {
			d := sqDist(voc[int(w)*dim:(int(w)+1)*dim], x[i*dim:(i+1)*dim], float32(math.Inf(1)))
			if d < wantD[i] {
				t.Fatalf("descriptor %d: word %d at %v, nearer than the nearest at %v", i, w, d, wantD[i])
			}
			if int32(w) == wantL[i] {
				hit++
			}
		}
		recall := float64(hit) / float64(n)
		t.Logf("%d descriptors, %d words, %d lists, %d probes: recall@1 %.4f", n, v.K(), v.Options().Lists, opt.Probes, recall)
		if recall < 0.97 {
			t.Errorf("recall@1 %.4f at the default settings, want ≥ 0.97", recall)
		}
		opt.Probes = v.Options().Lists
		all, err := newIVF(voc, dim, opt)
		if err != nil {
			t.Fatal(err)
		}
		checkIVFExact(t, all, voc, dim, x[:min(len(x), 1500*dim)])
	})
}

// The same words, options and seed give the same lists whatever the number
// of goroutines that build them, answers do not depend on the batch, and
// another seed cuts other lists.
func TestIVFDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const k, dim, n = 2000, 16, 3000
	cent, data := uniform(rng, k, dim), uniform(rng, n, dim)
	opt := IVFOptions{Lists: 40, Probes: 3, Seed: 11}
	a, err := newIVF(cent, dim, opt)
	if err != nil {
		t.Fatal(err)
	}
	prev := runtime.GOMAXPROCS(1)
	b, err := newIVF(cent, dim, opt)
	runtime.GOMAXPROCS(prev)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.ids, b.ids) || !slices.Equal(a.start, b.start) || !slices.Equal(a.coarse.centroids, b.coarse.centroids) {
		t.Error("IVFs built with 1 and GOMAXPROCS goroutines differ")
	}
	label := func(v *IVF) []int32 {
		l, d := make([]int32, n), make([]float32, n)
		for i := range l {
			l[i] = -1
		}
		v.Assign(data, l, d, nil)
		return l
	}
	want := label(a)
	for _, batch := range []int{1, 13, 96, 97, 5000} {
		o := opt
		o.Batch = batch
		v, err := newIVF(cent, dim, o)
		if err != nil {
			t.Fatal(err)
		}
		if got := label(v); !slices.Equal(got, want) {
			t.Errorf("Batch %d: labels differ from Batch %d's", batch, a.Options().Batch)
		}
	}
	opt.Seed = 12
	c, err := newIVF(cent, dim, opt)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(a.ids, c.ids) {
		t.Error("seeds 11 and 12 gave the same lists")
	}
	if a.K() != k || a.Dim() != dim || a.Options().Probes != 3 || a.Options().Lists > 40 || a.Bytes() < 4*k*dim {
		t.Error("accessors disagree with the IVF")
	}
}

// A label kept from the previous iteration stays unless the IVF finds a
// strictly nearer centroid, so that approximate Lloyd never moves a point
// farther.
func TestIVFAssignKeepsNearerLabel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const k, dim, n = 400, 8, 1000
	cent, data := uniform(rng, k, dim), uniform(rng, n, dim)
	v, err := newIVF(cent, dim, IVFOptions{Lists: 50, Probes: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	exL, exD := make([]int32, n), make([]float32, n)
	assign(cent, dim, data, exL, exD)
	labels, dist := slices.Clone(exL), make([]float32, n)
	if changed := v.Assign(data, labels, dist, nil); changed != 0 {
		t.Errorf("%d labels changed from the exact ones, want 0", changed)
	}
	if !slices.Equal(labels, exL) || !slices.Equal(dist, exD) {
		t.Error("starting from the exact labels, Assign did not keep them with their distances")
	}
}

func TestIVFErrors(t *testing.T) {
	cent := []float32{1, 2, 3, 4}
	for _, tc := range []struct {
		name string
		cent []float32
		dim  int
		opt  IVFOptions
	}{
		{"probes", cent, 2, IVFOptions{}},
		{"lists", cent, 2, IVFOptions{Lists: -1, Probes: 1}},
		{"batch", cent, 2, IVFOptions{Probes: 1, Batch: -1}},
		{"dim", cent, 0, IVFOptions{Probes: 1}},
		{"ragged", cent, 3, IVFOptions{Probes: 1}},
		{"empty", nil, 2, IVFOptions{Probes: 1}},
		{"nan", []float32{1, float32(math.NaN())}, 2, IVFOptions{Probes: 1}},
	} {
		if _, err := newIVF(tc.cent, tc.dim, tc.opt); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func TestIVFAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const k, dim, n = 2000, 128, 500
	cent := make([]float32, k*dim)
	for i := range cent {
		cent[i] = float32(rng.IntN(256))
	}
	desc := make([]byte, n*dim)
	for i := range desc {
		desc[i] = byte(rng.IntN(256))
	}
	v, err := newIVF(cent, dim, DefaultIVFOptions())
	if err != nil {
		t.Fatal(err)
	}
	var s IVFScratch
	words := v.QuantizeBytes(nil, desc, &s)
	if a := testing.AllocsPerRun(3, func() { words = v.QuantizeBytes(words[:0], desc, &s) }); a != 0 {
		t.Errorf("QuantizeBytes allocates %v times a call", a)
	}
}

// AssignParallel's helpers size only what they own, the batch's state
// being the first scratch's, which they do not keep after the call, and a
// reused scratch allocates nothing that
// grows with the batch, even for fewer points than a batch: what is left
// is the goroutines' start, a few hundred bytes a call.
func TestIVFAssignParallelAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	const k, dim, batch, probes, w = 2000, 16, 4096, 3, 3
	cent := make([]float32, k*dim)
	for i := range cent {
		cent[i] = float32(rng.IntN(256))
	}
	v, err := newIVF(cent, dim, IVFOptions{Probes: probes, Batch: batch})
	if err != nil {
		t.Fatal(err)
	}
	// The bytes a call of f allocates, on average over runs calls.
	bytes := func(runs int, f func()) uint64 {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for range runs {
			f()
		}
		runtime.ReadMemStats(&m1)
		return (m1.TotalAlloc - m0.TotalAlloc) / uint64(runs)
	}
	for _, n := range []int{batch, batch - 1000, 100} {
		data := make([]float32, n*dim)
		for i := range data {
			data[i] = float32(rng.IntN(256))
		}
		labels, dist := make([]int32, n), make([]float32, n)
		scratch := make([]*IVFScratch, w)
		for g := range scratch {
			scratch[g] = new(IVFScratch)
		}
		v.Assign(data, labels, dist, scratch[0])
		// A helper's own: its tile's probes and nearest words (the rest of
		// a tile's state is in the IVFScratch itself), and a few kB for
		// the goroutines.
		own := uint64(8*tileRows*probes + 8*batch)
		if b := bytes(1, func() { v.AssignParallel(data, labels, dist, scratch) }); b > (w-1)*own+4096 {
			t.Errorf("%d points: the helpers' first AssignParallel allocates %d bytes, want at most %d", n, b, (w-1)*own+4096)
		}
		for g, h := range scratch[1:] {
			if h.probe != nil || h.order != nil || h.count != nil || h.nearer != nil || h.best != nil ||
				h.bestD != nil || h.xf != nil || h.xn != nil || h.xn2 != nil || h.zero != nil {
				t.Errorf("%d points: helper %d still holds the batch's state after AssignParallel", n, g+1)
			}
		}
		if b := bytes(5, func() { v.AssignParallel(data, labels, dist, scratch) }); b >= 4096 {
			t.Errorf("%d points: AssignParallel on a reused scratch allocates %d bytes a call, want under 4,096", n, b)
		}
	}
}

// BenchmarkIVFNearest is BenchmarkForestNearest's search (the same
// clustered byte-range data) through a default IVF, a batch of 1,024
// points at a time as QuantizeBytes searches them; ns/point is per point.
// cmd/akmbench measures recall and speed on real descriptors.
func BenchmarkIVFNearest(b *testing.B) {
	for _, k := range []int{1000, 10000, 100000} {
		const dim, n = 128, 1024
		rng := rand.New(rand.NewPCG(1, 2))
		modes := make([]float32, 100*dim)
		for i := range modes {
			modes[i] = float32(rng.IntN(200))
		}
		cent := make([]float32, k*dim)
		for i := range k {
			m := rng.IntN(100)
			for j := range dim {
				cent[i*dim+j] = max(0, modes[m*dim+j]+float32(20*rng.NormFloat64()))
			}
		}
		desc := make([]byte, n*dim)
		for i := range n {
			m := rng.IntN(100)
			for j := range dim {
				desc[i*dim+j] = byte(min(255, max(0, math.Round(float64(modes[m*dim+j])+20*rng.NormFloat64()))))
			}
		}
		v, err := newIVF(cent, dim, DefaultIVFOptions())
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			var s IVFScratch
			words := make([]uint32, 0, n)
			b.ReportAllocs()
			for b.Loop() {
				words = v.QuantizeBytes(words[:0], desc, &s)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/point")
		})
	}
}

// The unpacked kernels read a strip's points from their own rows and must
// score them exactly as the packed kernels score the packed strip: the same
// values and mask bit for bit, whatever the rows hold past pdim.
func TestPanelRowsKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, pdim := range []int{4, 8, 128, 132} {
		for trial := range 20 {
			rows := make([][]float32, stripRows)
			xs := make([]float32, stripRows*pdim)
			for r := range rows {
				rows[r] = make([]float32, pdim+3)
				if trial%2 == 1 && r == stripRows-1 {
					continue // a zero padding row
				}
				for j := range rows[r] {
					rows[r][j] = float32(rng.IntN(256))
					if j < pdim {
						xs[j*stripRows+r] = rows[r][j]
					}
				}
			}
			panel := make([]float32, panelCols*pdim)
			for i := range panel {
				panel[i] = float32(rng.Float64() * 255)
			}
			norms := make([]float32, panelCols)
			for l := range norms {
				for j := range pdim {
					norms[l] += panel[j*panelCols+l] * panel[j*panelCols+l]
				}
			}
			norms[panelCols-1] = float32(math.Inf(1))
			thr := make([]float32, stripRows)
			var ref [stripRows * panelCols]float32
			panelGo(xs, panel, norms, []float32{math.MaxFloat32, math.MaxFloat32, math.MaxFloat32, math.MaxFloat32, math.MaxFloat32, math.MaxFloat32}, &ref)
			for r := range thr {
				// Thresholds among the scores, so that masks are partial.
				thr[r] = ref[r*panelCols+rng.IntN(panelCols-1)]
			}
			thr[trial%stripRows] = float32(math.Inf(-1))
			type kernelOut struct {
				mask uint64
				out  [stripRows * panelCols]float32
			}
			var goP, goR, fmaP, fmaR kernelOut
			goP.mask = panelGo(xs, panel, norms, thr, &goP.out)
			goR.mask = panelGoRows(rows, panel, norms, thr, &goR.out)
			if goP.mask == 0 || goP.mask == 1<<48-1 {
				t.Fatalf("pdim %d: mask %#x: the thresholds test nothing", pdim, goP.mask)
			}
			pairs := [][2]*kernelOut{{&goP, &goR}}
			if useFMA {
				fmaP.mask = panelFMA(&xs[0], &panel[0], pdim, &norms[0], &thr[0], &fmaP.out[0])
				fmaR.mask = panelFMARows(&rows[0], &panel[0], pdim, &norms[0], &thr[0], &fmaR.out[0])
				pairs = append(pairs, [2]*kernelOut{&fmaP, &fmaR})
			}
			for k, pr := range pairs {
				if pr[0].mask != pr[1].mask {
					t.Errorf("pdim %d kernel %d: mask %#x packed, %#x from rows", pdim, k, pr[0].mask, pr[1].mask)
				}
				for i := range pr[0].out {
					if math.Float32bits(pr[0].out[i]) != math.Float32bits(pr[1].out[i]) {
						t.Fatalf("pdim %d kernel %d: point %d centroid %d scored %v packed, %v from rows", pdim, k, i/panelCols, i%panelCols, pr[0].out[i], pr[1].out[i])
					}
				}
			}
		}
	}
}

// With fewer probes than lists the answer for a point is Nearest over the
// words of the lists whose coarse scores (the kernel's, as Exact scores
// the coarse centroids) are the p smallest, ties to the lower list: here
// recomputed one point at a time from the packed kernel and compared bit
// for bit, for bytes and for floats of a dimension that is not a multiple
// of 4, through batches that split tiles and strips.
func TestIVFProbedListsAreNearest(t *testing.T) {
	ivfKernels(t, func(t *testing.T) {
		for _, tc := range []struct {
			k, dim, lists, probes, batch, n int
		}{
			{2000, 128, 0, 8, 0, 700},
			{600, 13, 30, 3, 101, 400},
			{300, 128, 17, 1, 7, 200},
		} {
			rng := rand.New(rand.NewPCG(uint64(tc.k), 5))
			modes := make([]float32, 20*tc.dim)
			for i := range modes {
				modes[i] = float32(rng.IntN(200))
			}
			near := func() []float32 {
				m := rng.IntN(20)
				x := make([]float32, tc.dim)
				for j := range x {
					x[j] = float32(min(255, max(0, math.Round(float64(modes[m*tc.dim+j])+30*rng.NormFloat64()))))
				}
				return x
			}
			var cent, data []float32
			for range tc.k {
				cent = append(cent, near()...)
			}
			for i := range tc.n {
				if i%25 == 0 {
					c := rng.IntN(tc.k)
					data = append(data, cent[c*tc.dim:(c+1)*tc.dim]...)
					continue
				}
				data = append(data, near()...)
			}
			v, err := newIVF(cent, tc.dim, IVFOptions{Lists: tc.lists, Probes: tc.probes, Batch: tc.batch, Seed: 4})
			if err != nil {
				t.Fatal(err)
			}
			p := min(tc.probes, v.Options().Lists)
			if p >= v.Options().Lists {
				t.Fatalf("%d probes of %d lists: every list probed", p, v.Options().Lists)
			}
			wantL, wantD := make([]int32, tc.n), make([]float32, tc.n)
			c := v.coarse
			xs := make([]float32, stripRows*c.pdim)
			inf := float32(math.Inf(1))
			thr := []float32{inf, inf, inf, inf, inf, inf}
			var out [stripRows * panelCols]float32
			type scored struct {
				a float32
				l int
			}
			for i := range tc.n {
				x := data[i*tc.dim : (i+1)*tc.dim]
				for j, f := range x {
					xs[j*stripRows] = f
				}
				var lists []scored
				for pn := range len(c.norms) / panelCols {
					panel := c.panels[pn*c.pdim*panelCols : (pn+1)*c.pdim*panelCols]
					norms := c.norms[pn*panelCols : (pn+1)*panelCols]
					if useFMA {
						panelFMA(&xs[0], &panel[0], c.pdim, &norms[0], &thr[0], &out[0])
					} else {
						panelGo(xs, panel, norms, thr, &out)
					}
					for l := range panelCols {
						if pn*panelCols+l < c.k {
							lists = append(lists, scored{out[l], pn*panelCols + l})
						}
					}
				}
				slices.SortStableFunc(lists, func(a, b scored) int {
					switch {
					case a.a < b.a:
						return -1
					case a.a > b.a:
						return 1
					}
					return 0
				})
				best, bd := int32(-1), inf
				for _, s := range lists[:p] {
					for _, w := range v.ids[v.start[s.l]:v.start[s.l+1]] {
						d := sqDist(cent[int(w)*tc.dim:(int(w)+1)*tc.dim], x, inf)
						if d < bd || (d == bd && w < best) || best < 0 {
							best, bd = w, d
						}
					}
				}
				wantL[i], wantD[i] = best, bd
			}
			gotL, gotD := make([]int32, tc.n), make([]float32, tc.n)
			for i := range gotL {
				gotL[i] = -1
			}
			var s IVFScratch
			v.Assign(data, gotL, gotD, &s)
			words := v.QuantizeBytes(nil, func() []byte {
				b := make([]byte, len(data))
				for i, f := range data {
					b[i] = byte(f)
				}
				return b
			}(), &s)
			for i := range tc.n {
				if gotL[i] != wantL[i] || math.Float32bits(gotD[i]) != math.Float32bits(wantD[i]) {
					t.Fatalf("K %d dim %d: point %d: IVF gives word %d at %v, Nearest over its %d probed lists %d at %v",
						tc.k, tc.dim, i, gotL[i], gotD[i], p, wantL[i], wantD[i])
				}
				if int32(words[i]) != wantL[i] {
					t.Fatalf("K %d dim %d: QuantizeBytes of point %d: word %d, want %d", tc.k, tc.dim, i, words[i], wantL[i])
				}
			}
		}
	})
}

// coarseKey must order lists as the coarse scores do, ties (−0 against +0
// among them) to the lower list, and keyScore must give the score back.
func TestCoarseKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	negZero := float32(math.Copysign(0, -1))
	scores := []float32{0, negZero, 1, -1, math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32,
		-math.SmallestNonzeroFloat32, float32(math.Inf(1)), float32(math.Inf(-1))}
	for range 200 {
		scores = append(scores, float32(rng.NormFloat64()*1e5), float32(rng.IntN(5)-2))
	}
	for i, a := range scores {
		if got := keyScore(coarseKey(a, i)); got != a {
			t.Errorf("keyScore(coarseKey(%v)) = %v", a, got)
		}
		for j, b := range scores {
			want := a < b || (a == b && i < j)
			if got := coarseKey(a, i) < coarseKey(b, j); got != want {
				t.Fatalf("coarseKey(%v, %d) < coarseKey(%v, %d) is %v, want %v", a, i, b, j, got, want)
			}
		}
	}
}
