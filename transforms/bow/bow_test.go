package bow

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/internal/testkit"
	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/nn"
	"github.com/bowline/bowline/transforms/setting"
)

func vec(idx []uint32, val []float32) sparse.Vector { return sparse.Vector{Idx: idx, Val: val} }

func equal(a, b sparse.Vector) bool {
	return slices.Equal(a.Idx, b.Idx) && slices.Equal(a.Val, b.Val)
}

func TestQuantizeKnownCounts(t *testing.T) {
	// Four 2-D words; word 3 is never nearest.
	cent := []float32{0, 0, 10, 10, 0, 20, 200, 200}
	q, err := NewQuantizer(cent, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		desc []byte
		want sparse.Vector
	}{
		{"none", nil, vec([]uint32{}, []float32{})},
		{"one", []byte{9, 9}, vec([]uint32{1}, []float32{1})},
		{"mixed", []byte{1, 1, 9, 9, 0, 18, 2, 0, 10, 11, 11, 10}, vec([]uint32{0, 1, 2}, []float32{2, 3, 1})},
		// (5,5) is equidistant from words 0 and 1: the lower id wins.
		{"tie", []byte{5, 5, 5, 5, 0, 21}, vec([]uint32{0, 2}, []float32{2, 1})},
		{"byte range", []byte{255, 255, 12, 12}, vec([]uint32{1, 3}, []float32{1, 1})},
	} {
		got := q.Quantize(tc.desc)
		if !equal(got, tc.want) {
			t.Errorf("%s: Quantize = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// randomWords draws k words and n descriptors of dim uniform bytes.
func randomWords(r *rand.Rand, k, dim, n int) (centroids []float32, desc []byte) {
	centroids = make([]float32, k*dim)
	for i := range centroids {
		centroids[i] = float32(r.IntN(256))
	}
	desc = make([]byte, n*dim)
	for i := range desc {
		desc[i] = byte(r.IntN(256))
	}
	return centroids, desc
}

func TestQuantizeMatchesNearest(t *testing.T) {
	const k, dim, n = 40, 128, 300
	cent, desc := randomWords(rand.New(rand.NewPCG(1, 2)), k, dim, n)
	q, err := NewQuantizer(cent, dim)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]float32, k)
	x := make([]float32, dim)
	for i := range n {
		for j := range x {
			x[j] = float32(desc[i*dim+j])
		}
		w, _ := nn.Nearest(cent, dim, x)
		counts[w]++
	}
	got := q.Quantize(desc)
	if err := got.Validate(k); err != nil {
		t.Fatal(err)
	}
	var total float32
	for m, i := range got.Idx {
		if got.Val[m] != counts[i] {
			t.Errorf("word %d: count %v, want %v", i, got.Val[m], counts[i])
		}
		total += got.Val[m]
	}
	if total != n {
		t.Errorf("counts sum to %v, want %d", total, n)
	}
}

func TestQuantizeToReuses(t *testing.T) {
	q, err := NewQuantizer([]float32{0, 0, 10, 10, 0, 20}, 2)
	if err != nil {
		t.Fatal(err)
	}
	a := []byte{1, 1, 9, 9, 0, 18}
	b := []byte{9, 9}
	first := q.Quantize(a)
	second := q.Quantize(b)
	if !equal(first, vec([]uint32{0, 1, 2}, []float32{1, 1, 1})) || !equal(second, vec([]uint32{1}, []float32{1})) {
		t.Errorf("Quantize results %v, %v; want the first unchanged by the second call", first, second)
	}
	var dst sparse.Vector
	dst = q.QuantizeTo(dst, a)
	if allocs := testing.AllocsPerRun(100, func() { dst = q.QuantizeTo(dst, a) }); allocs != 0 {
		t.Errorf("QuantizeTo allocates %v times per call once grown", allocs)
	}
	if !equal(dst, first) {
		t.Errorf("QuantizeTo = %v, want %v", dst, first)
	}
}

func TestNewQuantizerErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cent []float32
		dim  int
		want string
	}{
		{"zero dim", []float32{1}, 0, "dimension 0"},
		{"no centroids", nil, 2, "positive whole number"},
		{"ragged", []float32{1, 2, 3}, 2, "positive whole number"},
		{"NaN", []float32{1, 2, 3, float32(math.NaN())}, 2, "centroid 1 coordinate 1"},
		{"Inf", []float32{float32(math.Inf(1)), 2}, 2, "centroid 0 coordinate 0"},
	} {
		_, err := NewQuantizer(tc.cent, tc.dim)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
	q, err := NewQuantizer(make([]float32, 6), 3)
	if err != nil || q.K() != 2 || q.Dim() != 3 {
		t.Errorf("NewQuantizer(6 values, 3) = K %d Dim %d, %v; want 2, 3, nil", q.K(), q.Dim(), err)
	}
}

func TestQuantizeRaggedPanics(t *testing.T) {
	q, err := NewQuantizer(make([]float32, 8), 4)
	if err != nil {
		t.Fatal(err)
	}
	testkit.MustPanic(t, "ragged", "whole number", func() { q.Quantize(make([]byte, 6)) })
}

func TestIDF(t *testing.T) {
	ln := math.Log
	for _, tc := range []struct {
		name string
		df   []int64
		n    int64
		want []float64
	}{
		{"hand", []int64{4, 2, 1, 0, 3}, 4, []float64{0, ln(2), ln(4), 0, ln(4.0 / 3)}},
		{"empty collection", []int64{0, 0}, 0, []float64{0, 0}},
		{"no words", nil, 7, []float64{}},
	} {
		got := IDF(tc.df, tc.n)
		if len(got) != len(tc.want) {
			t.Fatalf("%s: %d weights, want %d", tc.name, len(got), len(tc.want))
		}
		for i := range got {
			if got[i] != float32(tc.want[i]) {
				t.Errorf("%s: idf[%d] = %v, want %v", tc.name, i, got[i], float32(tc.want[i]))
			}
		}
	}
	testkit.MustPanic(t, "df > n", "outside [0, 4]", func() { IDF([]int64{1, 5}, 4) })
	testkit.MustPanic(t, "negative df", "outside [0, 4]", func() { IDF([]int64{-1}, 4) })
	testkit.MustPanic(t, "negative n", "-1 documents", func() { IDF(nil, -1) })
}

func TestTFIDF(t *testing.T) {
	idf := []float32{0, 1, 2, 0.5, 3}
	// Weights: word 0 → 3·0 (dropped), 1 → 1, 2 → 4, 3 → 2.5; word 4 unused.
	norm := math.Sqrt(1 + 16 + 6.25)
	for _, tc := range []struct {
		name   string
		counts sparse.Vector
		want   sparse.Vector
	}{
		{"hand", vec([]uint32{0, 1, 2, 3}, []float32{3, 1, 2, 5}),
			vec([]uint32{1, 2, 3}, []float32{float32(1 / norm), float32(4 / norm), float32(2.5 / norm)})},
		{"single", vec([]uint32{4}, []float32{7}), vec([]uint32{4}, []float32{1})},
		{"only zero idf", vec([]uint32{0}, []float32{9}), vec([]uint32{}, []float32{})},
		{"zero count", vec([]uint32{1, 2}, []float32{0, 1}), vec([]uint32{2}, []float32{1})},
		{"empty", vec(nil, nil), vec([]uint32{}, []float32{})},
	} {
		in := vec(slices.Clone(tc.counts.Idx), slices.Clone(tc.counts.Val))
		got := TFIDF(tc.counts, idf)
		if !equal(got, tc.want) {
			t.Errorf("%s: TFIDF = %v, want %v", tc.name, got, tc.want)
		}
		if !equal(tc.counts, in) {
			t.Errorf("%s: TFIDF modified its input", tc.name)
		}
		if err := got.Validate(len(idf)); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if got.Len() > 0 {
			if n := sparse.Norm(got); math.Abs(n-1) > 1e-6 {
				t.Errorf("%s: norm %v, want 1", tc.name, n)
			}
		}
		if slices.Contains(got.Val, 0) {
			t.Errorf("%s: result stores a zero: %v", tc.name, got)
		}
	}
	testkit.MustPanic(t, "out of vocabulary", "outside the vocabulary of 5", func() {
		TFIDF(vec([]uint32{2, 5}, []float32{1, 1}), idf)
	})
	testkit.MustPanic(t, "ragged", "2 indices and 1 values", func() {
		TFIDF(vec([]uint32{2, 3}, []float32{1}), idf)
	})
}

// TFIDFWith weights the term frequencies before IDF and the norm, so a
// burst of one word (16 of its descriptors) no longer swamps the word seen
// once; raw is TFIDF bit for bit.
func TestTFIDFWith(t *testing.T) {
	idf := []float32{0, 1, 2, 0.5}
	counts := vec([]uint32{0, 1, 2, 3}, []float32{3, 16, 1, 0.25})
	for _, tc := range []struct {
		tf   TF
		want [3]float64 // the weights of words 1, 2, 3 before the norm
	}{
		{TFRaw, [3]float64{16, 2, 0.125}},
		{"", [3]float64{16, 2, 0.125}},
		{TFSqrt, [3]float64{4, 2, 0.25}},
		{TFLog, [3]float64{math.Log(17), 2 * math.Log(2), 0.5 * math.Log(1.25)}},
	} {
		in := vec(slices.Clone(counts.Idx), slices.Clone(counts.Val))
		got := TFIDFWith(in, idf, tc.tf)
		norm := math.Sqrt(tc.want[0]*tc.want[0] + tc.want[1]*tc.want[1] + tc.want[2]*tc.want[2])
		want := vec([]uint32{1, 2, 3}, []float32{float32(tc.want[0] / norm), float32(tc.want[1] / norm), float32(tc.want[2] / norm)})
		if !equal(got, want) {
			t.Errorf("%q: %v, want %v", tc.tf, got, want)
		}
		if !equal(in, counts) {
			t.Errorf("%q: modified its input", tc.tf)
		}
	}
	rng := rand.New(rand.NewPCG(4, 4))
	idf = make([]float32, 50)
	for i := range idf {
		idf[i] = rng.Float32() * 3
	}
	for range 100 {
		var c sparse.Vector
		for w := range uint32(50) {
			if rng.IntN(3) == 0 {
				c.Idx, c.Val = append(c.Idx, w), append(c.Val, float32(rng.IntN(40))+rng.Float32())
			}
		}
		if a, b := TFIDF(c, idf), TFIDFWith(c, idf, TFRaw); !slices.Equal(a.Idx, b.Idx) || !slices.Equal(a.Val, b.Val) {
			t.Fatalf("raw %v, TFIDF %v", b, a)
		}
	}
	testkit.MustPanic(t, "unknown tf", `TF = "sqr"`, func() {
		TFIDFWith(vec([]uint32{1}, []float32{1}), idf, "sqr")
	})
	testkit.MustPanic(t, "negative count", "sqrt of a negative count", func() {
		TFIDFWith(vec([]uint32{1}, []float32{-1}), idf, TFSqrt)
	})
}

func TestTFValidate(t *testing.T) {
	for _, tf := range []TF{"", TFRaw, TFSqrt, TFLog} {
		if err := tf.Validate(); err != nil {
			t.Errorf("%q: %v", tf, err)
		}
	}
	for _, tf := range []TF{"Sqrt", "power", " raw"} {
		var e *setting.Error
		if err := tf.Validate(); !errors.As(err, &e) || e.Name() != "bow.TF" || e.Must != "raw, sqrt or log" {
			t.Errorf("%q: %v", tf, err)
		}
	}
}

func TestTFIDFCosine(t *testing.T) {
	idf := []float32{1, 2, 0.5}
	a := TFIDF(vec([]uint32{0, 1, 2}, []float32{1, 2, 3}), idf)
	if d := sparse.Dot(a, a); math.Abs(d-1) > 1e-6 {
		t.Errorf("self similarity %v, want 1", d)
	}
	b := TFIDF(vec([]uint32{0}, []float32{4}), idf)
	// a = (1, 4, 1.5)/‖·‖, b = e₀: cosine = 1/√(1+16+2.25).
	if d, want := sparse.Dot(a, b), 1/math.Sqrt(19.25); math.Abs(d-want) > 1e-6 {
		t.Errorf("cosine %v, want %v", d, want)
	}
}

func BenchmarkQuantize(b *testing.B) {
	const k, dim, n = 1000, 128, 500
	cent, desc := randomWords(rand.New(rand.NewPCG(1, 2)), k, dim, n)
	q, err := NewQuantizer(cent, dim)
	if err != nil {
		b.Fatal(err)
	}
	var dst sparse.Vector
	b.ReportAllocs()
	for b.Loop() {
		dst = q.QuantizeTo(dst, desc)
	}
}

// With Checks ≥ k the forest search is exhaustive, so the forest quantiser
// must count exactly what the exact one counts; with fewer checks it may
// miss, but rarely on clustered data.
func TestForestQuantizer(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const k, dim, n = 64, 128, 400
	centroids := make([]float32, k*dim)
	for i := range centroids {
		centroids[i] = float32(r.IntN(256))
	}
	desc := make([]byte, n*dim)
	for i := 0; i < n; i++ {
		c := r.IntN(k)
		for j := 0; j < dim; j++ {
			v := float64(centroids[c*dim+j]) + r.NormFloat64()*10
			desc[i*dim+j] = byte(math.Max(0, math.Min(255, v)))
		}
	}
	exact, err := NewQuantizer(centroids, dim)
	if err != nil {
		t.Fatal(err)
	}
	want := exact.Quantize(desc)
	for _, checks := range []int{k, 16} {
		f, err := nn.NewForest(centroids, dim, nn.ForestOptions{Trees: 4, LeafSize: 4, Checks: checks, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		got := NewForestQuantizer(f).Quantize(desc)
		if checks >= k && !reflect.DeepEqual(got, want) {
			t.Fatalf("exhaustive forest counts %v, exact %v", got, want)
		}
		var total float32
		for _, c := range got.Val {
			total += c
		}
		if total != n {
			t.Fatalf("checks %d: %v descriptors counted, want %d", checks, total, n)
		}
	}
}

// A quantiser with an IVF counts the IVF's words; probing every list, the
// exact quantiser's counts.
func TestIVFQuantizer(t *testing.T) {
	const k, dim, n = 300, 128, 500
	centroids, desc := randomWords(rand.New(rand.NewPCG(7, 8)), k, dim, n)
	exact, err := NewQuantizer(centroids, dim)
	if err != nil {
		t.Fatal(err)
	}
	want := exact.Quantize(desc)
	for _, probes := range []int{1, k} {
		v, err := kmeans.TrainIVF(centroids, dim, nn.IVFOptions{Lists: 20, Probes: probes, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		q, err := NewQuantizer(centroids, dim)
		if err != nil {
			t.Fatal(err)
		}
		q.SetIVF(v)
		got := q.Quantize(desc)
		words := v.QuantizeBytes(nil, desc, nil)
		slices.Sort(words)
		var byIVF sparse.Vector
		for i, w := range words {
			if i == 0 || w != words[i-1] {
				byIVF.Idx = append(byIVF.Idx, w)
				byIVF.Val = append(byIVF.Val, 0)
			}
			byIVF.Val[len(byIVF.Val)-1]++
		}
		if !reflect.DeepEqual(got, byIVF) {
			t.Fatalf("probes %d: counts %v, the IVF's words give %v", probes, got, byIVF)
		}
		if probes >= k && !reflect.DeepEqual(got, want) {
			t.Fatalf("IVF probing every list counts %v, exact %v", got, want)
		}
		if probes == 1 && reflect.DeepEqual(got, want) {
			t.Fatal("one probe of 20 lists counted exactly: the test says nothing")
		}
	}
}
