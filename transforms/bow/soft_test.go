package bow

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/nn"

	"github.com/bowline/bowline/transforms/cpuclock"
	"github.com/bowline/bowline/transforms/internal/testkit"
)

func TestSoftWeights(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	w := make([]float64, 8)
	for trial := range 500 {
		r := 1 + rng.IntN(len(w))
		d := make([]float32, r)
		for j := range d {
			d[j] = float32(rng.IntN(200_000))
		}
		slices.Sort(d)
		sigma := []float64{10, DefaultSigma, 300}[trial%3]
		SoftWeights(w, d, sigma)
		var sum float64
		for j, v := range w[:r] {
			sum += v
			if !(v > 0) && d[j]-d[0] < 1000 {
				t.Fatalf("distances %v σ %v: weight %d is %v", d, sigma, j, v)
			}
			if j > 0 && (v > w[j-1] || (d[j] > d[j-1] && v == w[j-1] && v > 0)) {
				t.Fatalf("distances %v σ %v: weights %v do not fall with distance", d, sigma, w[:r])
			}
			// Against the formula itself, where it does not underflow.
			if float64(d[r-1])/(2*sigma*sigma) < 700 {
				var z float64
				for _, e := range d {
					z += math.Exp(-float64(e) / (2 * sigma * sigma))
				}
				if want := math.Exp(-float64(d[j])/(2*sigma*sigma)) / z; z > 0 && math.Abs(v-want) > 1e-12 {
					t.Fatalf("distances %v σ %v: weight %d = %v, formula %v", d, sigma, j, v, want)
				}
			}
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Fatalf("distances %v σ %v: weights %v sum to %v", d, sigma, w[:r], sum)
		}
	}
	// One word gets all of the weight, however far it is.
	SoftWeights(w, []float32{1e9}, 1)
	if w[0] != 1 {
		t.Errorf("single weight %v, want exactly 1", w[0])
	}
	// Far words would all underflow in the plain formula.
	SoftWeights(w, []float32{4e6, 4e6, 1.4e7}, 79)
	if w[0] != 0.5 || w[1] != 0.5 || w[2] != 0 {
		t.Errorf("far words: weights %v, want [0.5 0.5 0]", w[:3])
	}
	// Unsorted input: the weights follow the distances.
	SoftWeights(w, []float32{400, 0, 100}, 10)
	if !(w[1] > w[2] && w[2] > w[0]) {
		t.Errorf("unsorted distances: weights %v", w[:3])
	}
	testkit.MustPanic(t, "short w", "SoftWeights", func() { SoftWeights(w[:1], []float32{1, 2}, 1) })
	testkit.MustPanic(t, "zero sigma", "SoftWeights", func() { SoftWeights(w, []float32{1}, 0) })
	testkit.MustPanic(t, "NaN sigma", "SoftWeights", func() { SoftWeights(w, []float32{1}, math.NaN()) })
}

// A hand-computed case: 1-D words at 0, 10, 20 and 100, σ = 10.
func TestSoftQuantizeKnown(t *testing.T) {
	q, err := NewQuantizer([]float32{0, 10, 20, 100}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.SetSoft(SoftOptions{R: 3, Sigma: 10}); err != nil {
		t.Fatal(err)
	}
	// Descriptor 4: squared distances 16, 36, 256 → exp(−d²/200).
	a, b, c := math.Exp(-16.0/200), math.Exp(-36.0/200), math.Exp(-256.0/200)
	// Descriptor 10 sits on word 1: 0, 100, 100 → ties to the lower id.
	e0, e1 := 1.0, math.Exp(-100.0/200)
	got := q.Quantize([]byte{4, 10})
	want := vec([]uint32{0, 1, 2}, []float32{
		float32(a/(a+b+c) + e1/(e0+2*e1)),
		float32(b/(a+b+c) + e0/(e0+2*e1)),
		float32(c/(a+b+c) + e1/(e0+2*e1)),
	})
	for i := range want.Val {
		if got.Idx[i] != want.Idx[i] || math.Abs(float64(got.Val[i]-want.Val[i])) > 1e-6 {
			t.Fatalf("Quantize = %v, want %v", got, want)
		}
	}
	if s := got.Val[0] + got.Val[1] + got.Val[2]; math.Abs(float64(s)-2) > 1e-6 {
		t.Errorf("term frequencies sum to %v, want 2 descriptors", s)
	}
}

// sift-like byte descriptors around 30 modes, and a vocabulary of k words
// drawn the same way, so that descriptors have close second and third words.
func modalBytes(rng *rand.Rand, k, n, dim int, noise float64) (cent []float32, desc []byte) {
	modes := make([]float64, 30*dim)
	for i := range modes {
		modes[i] = float64(rng.IntN(200))
	}
	draw := func(put func(i int, v float64), m int) {
		for i := range m {
			mo := rng.IntN(30)
			for j := range dim {
				put(i*dim+j, min(max(math.Round(modes[mo*dim+j]+noise*rng.NormFloat64()), 0), 255))
			}
		}
	}
	cent = make([]float32, k*dim)
	draw(func(i int, v float64) { cent[i] = float32(v) }, k)
	desc = make([]byte, n*dim)
	draw(func(i int, v float64) { desc[i] = byte(v) }, n)
	return cent, desc
}

// refSoft is soft assignment by definition: every distance, a full sort,
// the formula's weights, sums in descriptor order.
func refSoft(cent []float32, dim int, desc []byte, r int, sigma float64) map[uint32]float64 {
	tf := map[uint32]float64{}
	k := len(cent) / dim
	x := make([]float32, dim)
	type cd struct {
		c uint32
		d float64
	}
	for off := 0; off < len(desc); off += dim {
		for j := range x {
			x[j] = float32(desc[off+j])
		}
		all := make([]cd, k)
		for c := range k {
			var s float64
			for j := range dim {
				v := float64(cent[c*dim+j]) - float64(x[j])
				s += v * v
			}
			all[c] = cd{uint32(c), s}
		}
		slices.SortFunc(all, func(a, b cd) int {
			if o := cmp.Compare(a.d, b.d); o != 0 {
				return o
			}
			return cmp.Compare(a.c, b.c)
		})
		all = all[:min(r, k)]
		var z float64
		for _, e := range all {
			z += math.Exp(-(e.d - all[0].d) / (2 * sigma * sigma))
		}
		for _, e := range all {
			tf[e.c] += math.Exp(-(e.d-all[0].d)/(2*sigma*sigma)) / z
		}
	}
	return tf
}

func TestSoftQuantizeMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	const k, dim, n = 120, 128, 300
	cent, desc := modalBytes(rng, k, n, dim, 25)
	for _, r := range []int{2, 3, 5} {
		for _, sigma := range []float64{0, 40} {
			q, err := NewQuantizer(cent, dim)
			if err != nil {
				t.Fatal(err)
			}
			if err := q.SetSoft(SoftOptions{R: r, Sigma: sigma}); err != nil {
				t.Fatal(err)
			}
			got := q.Quantize(desc)
			if err := got.Validate(k); err != nil {
				t.Fatal(err)
			}
			s := sigma
			if s == 0 {
				s = DefaultSigma
			}
			want := refSoft(cent, dim, desc, r, s)
			for i, w := range want {
				if float32(w) == 0 {
					// Far third words of another mode: too light for
					// float32, so left out.
					delete(want, i)
				}
			}
			if len(got.Idx) != len(want) {
				t.Fatalf("r %d σ %v: %d words, want %d", r, sigma, len(got.Idx), len(want))
			}
			var total float64
			for m, i := range got.Idx {
				if w := want[i]; math.Abs(float64(got.Val[m])-w) > 1e-5*max(w, 1) {
					t.Fatalf("r %d σ %v: word %d weight %v, want %v", r, sigma, i, got.Val[m], w)
				}
				total += float64(got.Val[m])
			}
			if math.Abs(total-n) > 1e-3 {
				t.Errorf("r %d σ %v: term frequencies sum to %v, want %d", r, sigma, total, n)
			}
		}
	}
}

// R = 1 runs the soft path with k-nearest searches of one word and weights
// of exactly 1: it must reproduce hard assignment bit for bit, exhaustive
// or through a forest with a small budget, ties included.
func TestSoftR1EqualsHard(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	const k, dim, n = 300, 128, 500
	cent, desc := modalBytes(rng, k, n, dim, 30)
	copy(cent[7*dim:8*dim], cent[100*dim:101*dim]) // a duplicate word
	for j := range dim {
		desc[j] = byte(cent[100*dim+j]) // a descriptor on it
	}
	hand := []float32{0, 0, 10, 10, 0, 20, 200, 200}
	handDesc := []byte{1, 1, 9, 9, 0, 18, 2, 0, 10, 11, 11, 10, 5, 5, 5, 5, 0, 21, 255, 255}
	for _, tc := range []struct {
		name   string
		cent   []float32
		dim    int
		desc   []byte
		forest *nn.ForestOptions
	}{
		{"hand exact", hand, 2, handDesc, nil},
		{"hand forest", hand, 2, handDesc, &nn.ForestOptions{Trees: 2, LeafSize: 1, Checks: 1, Seed: 1}},
		{"modal exact", cent, dim, desc, nil},
		{"modal forest 8 checks", cent, dim, desc, &nn.ForestOptions{Trees: 4, LeafSize: 4, Checks: 8, Seed: 2}},
		{"modal forest default", cent, dim, desc, &nn.ForestOptions{Trees: 8, LeafSize: 8, Checks: 256, Seed: 3}},
	} {
		mk := func() *Quantizer {
			if tc.forest == nil {
				q, err := NewQuantizer(tc.cent, tc.dim)
				if err != nil {
					t.Fatal(err)
				}
				return q
			}
			f, err := nn.NewForest(tc.cent, tc.dim, *tc.forest)
			if err != nil {
				t.Fatal(err)
			}
			return NewForestQuantizer(f)
		}
		hard, soft := mk(), mk()
		if err := soft.SetSoft(SoftOptions{R: 1, Sigma: 5}); err != nil {
			t.Fatal(err)
		}
		want, got := hard.Quantize(tc.desc), soft.Quantize(tc.desc)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: R = 1 gives %v, hard %v", tc.name, got, want)
		}
	}
}

// Soft assignment spreads each descriptor over more words, the result does
// not depend on the Quantizer's history, and an exhaustive forest gives the
// exact quantiser's output.
func TestSoftQuantizeProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	const k, dim, n = 400, 128, 300
	cent, desc := modalBytes(rng, k, n, dim, 30)
	_, other := modalBytes(rng, k, 50, dim, 30)
	exact, err := NewQuantizer(cent, dim)
	if err != nil {
		t.Fatal(err)
	}
	hard := exact.Quantize(desc)
	if err := exact.SetSoft(SoftOptions{R: 3}); err != nil {
		t.Fatal(err)
	}
	soft := exact.Quantize(desc)
	if len(soft.Idx) <= len(hard.Idx) {
		t.Errorf("soft assignment gives %d words, hard %d: want more", len(soft.Idx), len(hard.Idx))
	}
	exact.Quantize(other)
	if again := exact.Quantize(desc); !reflect.DeepEqual(again, soft) {
		t.Error("soft Quantize depends on the previous call")
	}
	var dst sparse.Vector
	if dst = exact.QuantizeTo(dst, desc); !reflect.DeepEqual(dst, soft) {
		t.Error("QuantizeTo differs from Quantize")
	}
	full, err := nn.NewForest(cent, dim, nn.ForestOptions{Trees: 2, LeafSize: 8, Checks: k, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	fq := NewForestQuantizer(full)
	if err := fq.SetSoft(SoftOptions{R: 3}); err != nil {
		t.Fatal(err)
	}
	if got := fq.Quantize(desc); !reflect.DeepEqual(got, soft) {
		t.Error("exhaustive forest soft assignment differs from exact")
	}
	// Back to hard assignment.
	if err := exact.SetSoft(SoftOptions{}); err != nil || exact.Soft() != (SoftOptions{}) {
		t.Fatal(err)
	}
	if got := exact.Quantize(desc); !reflect.DeepEqual(got, hard) {
		t.Error("SetSoft(SoftOptions{}) does not restore hard assignment")
	}
	// More words asked for than the vocabulary has: all of them.
	small, _ := NewQuantizer(cent[:2*dim], dim)
	if err := small.SetSoft(SoftOptions{R: 3, Sigma: 1e4}); err != nil {
		t.Fatal(err)
	}
	if got := small.Quantize(desc[:dim]); len(got.Idx) != 2 || math.Abs(float64(got.Val[0]+got.Val[1])-1) > 1e-6 {
		t.Errorf("R = 3 over 2 words: %v", got)
	}
	if got := small.Quantize(nil); got.Len() != 0 {
		t.Errorf("no descriptors: %v", got)
	}
	testkit.MustPanic(t, "ragged soft", "whole number", func() { small.Quantize(make([]byte, dim+1)) })
}

func TestSoftQuantizeToAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	const k, dim, n = 500, 128, 100
	cent, desc := modalBytes(rng, k, n, dim, 30)
	exact, _ := NewQuantizer(cent, dim)
	f, err := nn.NewForest(cent, dim, nn.DefaultForestOptions())
	if err != nil {
		t.Fatal(err)
	}
	for name, q := range map[string]*Quantizer{"exact": exact, "forest": NewForestQuantizer(f)} {
		if err := q.SetSoft(SoftOptions{R: 3}); err != nil {
			t.Fatal(err)
		}
		var dst sparse.Vector
		dst = q.QuantizeTo(dst, desc)
		if a := testing.AllocsPerRun(10, func() { dst = q.QuantizeTo(dst, desc) }); a != 0 {
			t.Errorf("%s: soft QuantizeTo allocates %v times per call once grown", name, a)
		}
	}
}

func TestSetSoftErrors(t *testing.T) {
	q, err := NewQuantizer(make([]float32, 8), 2)
	if err != nil {
		t.Fatal(err)
	}
	good := SoftOptions{R: 3, Sigma: 50}
	if err := q.SetSoft(good); err != nil || q.Soft() != good {
		t.Fatalf("SetSoft(%+v) = %v, Soft() = %+v", good, err, q.Soft())
	}
	for _, tc := range []struct {
		name string
		o    SoftOptions
		want string
	}{
		{"negative R", SoftOptions{R: -1}, "R = -1"},
		{"negative sigma", SoftOptions{R: 3, Sigma: -2}, "Sigma = -2"},
		{"NaN sigma", SoftOptions{R: 3, Sigma: math.NaN()}, "Sigma = NaN"},
		{"Inf sigma", SoftOptions{R: 3, Sigma: math.Inf(1)}, "Sigma = +Inf"},
	} {
		err := q.SetSoft(tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
		if q.Soft() != good {
			t.Errorf("%s: a rejected SetSoft changed the options to %+v", tc.name, q.Soft())
		}
	}
}

// BenchmarkQuantizeSoft measures quantisation throughput, in descriptors
// per second (desc/s, and desc/cpu-s per second of the process's CPU time,
// the figure to compare on a shared machine), of hard assignment and of
// soft assignment to the 3 nearest words, exhaustive and through the
// default forest, on SIFT-like byte descriptors around shared modes.
func BenchmarkQuantizeSoft(b *testing.B) {
	const dim, n = 128, 500
	for _, k := range []int{1000, 10000} {
		cent, desc := modalBytes(rand.New(rand.NewPCG(1, 2)), k, n, dim, 30)
		f, err := nn.NewForest(cent, dim, nn.DefaultForestOptions())
		if err != nil {
			b.Fatal(err)
		}
		for _, search := range []string{"exact", "forest"} {
			for _, r := range []int{0, 3} {
				name := fmt.Sprintf("K=%d/%s/hard", k, search)
				if r > 0 {
					name = fmt.Sprintf("K=%d/%s/soft%d", k, search, r)
				}
				b.Run(name, func(b *testing.B) {
					q := NewForestQuantizer(f)
					if search == "exact" {
						q, _ = NewQuantizer(cent, dim)
					}
					if err := q.SetSoft(SoftOptions{R: r}); err != nil {
						b.Fatal(err)
					}
					dst := q.QuantizeTo(sparse.Vector{}, desc) // grow the scratch
					b.ReportAllocs()
					cpu, _ := cpuclock.Process()
					for b.Loop() {
						dst = q.QuantizeTo(dst, desc)
					}
					b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "desc/s")
					if c, _ := cpuclock.Process(); c > cpu {
						b.ReportMetric(float64(n*b.N)/(c-cpu).Seconds(), "desc/cpu-s")
					}
				})
			}
		}
	}
}
