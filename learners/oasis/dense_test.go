package oasis

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/internal/densetest"
)

// mustDense makes "oasis-full" through the registry and checks its type.
func mustDense(t testing.TB, dims []int, params map[string]float64) *DenseFull {
	t.Helper()
	m, err := learners.NewDense("oasis-full", dims, params)
	if err != nil {
		t.Fatalf("NewDense(oasis-full, %v, %v) = %v", dims, params, err)
	}
	f, ok := m.(*DenseFull)
	if !ok {
		t.Fatalf("NewDense(oasis-full) is a %T, want *DenseFull", m)
	}
	return f
}

// denseTriplet is a triplet of concatenated modality vectors.
type denseTriplet struct{ x, pos, neg []float64 }

// randomTriplets returns n triplets of N(0, 1) vectors of d values.
func randomTriplets(seed uint64, d, n int) []denseTriplet {
	r := rand.New(rand.NewPCG(seed, 5))
	v := func() []float64 {
		x := make([]float64, d)
		for i := range x {
			x[i] = r.NormFloat64()
		}
		return x
	}
	ts := make([]denseTriplet, n)
	for k := range ts {
		ts[k] = denseTriplet{v(), v(), v()}
	}
	return ts
}

// trainDense runs Update on every triplet and fails the test on an error.
func trainDense(t testing.TB, f *DenseFull, ts []denseTriplet) {
	t.Helper()
	for _, tr := range ts {
		if _, err := f.Update(tr.x, tr.pos, tr.neg); err != nil {
			t.Fatalf("Update: %v", err)
		}
	}
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func TestDenseRegistered(t *testing.T) {
	for _, tc := range []struct {
		dims   []int
		params map[string]float64
		c      float64
		err    string
	}{
		{dims: []int{2, 3}, c: DefaultParams().C},
		{dims: []int{4}, params: map[string]float64{"c": 2}, c: 2},
		{dims: []int{2, 3}, params: map[string]float64{"C": 2}, err: `oasis-full: unknown parameter "C" (want c)`},
		{dims: []int{2, 3}, params: map[string]float64{"c": 0}, err: "aggressiveness C must be finite and > 0"},
		{dims: []int{2, 3}, params: map[string]float64{"c": math.NaN()}, err: "aggressiveness C"},
		{dims: []int{maxFullDim, 1}, err: "oasis-full: total dimension of modalities [32768 1] exceeds 32768"},
		{dims: []int{2, 0}, err: "modality 1 has dimension 0"},
	} {
		m, err := learners.NewDense("oasis-full", tc.dims, tc.params)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || m != nil {
				t.Errorf("NewDense(%v, %v) = %v, %v; want a nil model and an error containing %q", tc.dims, tc.params, m, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("NewDense(%v, %v) = %v", tc.dims, tc.params, err)
			continue
		}
		f, ok := m.(learners.DenseOnline)
		if !ok {
			t.Fatalf("a %T is not a learners.DenseOnline", m)
		}
		d := 0
		for _, n := range tc.dims {
			d += n
		}
		if f.Name() != "oasis-full" || !slices.Equal(f.Dims(), tc.dims) || f.Metric() != learners.Dot || !reflect.DeepEqual(f.Params(), map[string]float64{"c": tc.c}) {
			t.Errorf("NewDense(%v, %v): Name %q, Dims %v, Metric %v, Params %v", tc.dims, tc.params, f.Name(), f.Dims(), f.Metric(), f.Params())
		}
		// W₀ = I: both embeddings are x.
		x := randomTriplets(1, d, 1)[0].x
		if !slices.Equal(f.Item(nil, x), x) || !slices.Equal(f.Query(nil, x), x) {
			t.Errorf("NewDense(%v): the untrained embeddings are not x", tc.dims)
		}
	}
	if n := learners.DenseNames(); !slices.Contains(n, "oasis-full") || slices.Contains(learners.Names(), "oasis-full") {
		t.Errorf("oasis-full is not registered as a dense learner only: dense %v", n)
	}
}

// TestDenseStateRoundTrip restores a trained model's State into a fresh one:
// Item and Query must be those of the trained model bit for bit, and State
// must be a copy.
func TestDenseStateRoundTrip(t *testing.T) {
	dims := []int{3, 4}
	stream := randomTriplets(2, 7, 80)
	trained := mustDense(t, dims, nil)
	trainDense(t, trained, stream)
	st := trained.State()
	if st.Learner != "oasis-full" || st.Steps != 80 || len(st.Vectors) != 1 || len(st.Vectors[0]) != 49 {
		t.Fatalf("State: %q, %d steps, layout %d vectors", st.Learner, st.Steps, len(st.Vectors))
	}
	fresh := mustDense(t, dims, nil)
	if err := fresh.SetState(st); err != nil {
		t.Fatalf("SetState(State()) = %v", err)
	}
	st.Vectors[0][0] = math.NaN() // State must not alias either learner
	if !reflect.DeepEqual(fresh.State(), trained.State()) || fresh.Steps() != 80 {
		t.Error("State after SetState(State()) differs")
	}
	for _, tr := range randomTriplets(3, 7, 5) {
		if a, b := fresh.Item(nil, tr.x), trained.Item(nil, tr.x); !slices.Equal(a, b) {
			t.Errorf("Item after SetState(State()) = %v, want %v", a, b)
		}
		if a, b := fresh.Query(nil, tr.x), trained.Query(nil, tr.x); !slices.Equal(a, b) {
			t.Errorf("Query after SetState(State()) = %v, want %v", a, b)
		}
	}
}

func TestFullSetStateErrors(t *testing.T) {
	f := mustDense(t, []int{2}, nil)
	trainDense(t, f, randomTriplets(4, 2, 5))
	for _, tc := range []struct {
		name string
		st   learners.State
		want string
	}{
		{"other learner", learners.State{Learner: "oasis-diag", Vectors: [][]float64{make([]float64, 4)}}, `state is of learner "oasis-diag"`},
		{"negative steps", learners.State{Learner: "oasis-full", Steps: -1, Vectors: [][]float64{make([]float64, 4)}}, "negative step count"},
		{"no vectors", learners.State{Learner: "oasis-full"}, "state has 0 vectors, want 1"},
		{"short W", learners.State{Learner: "oasis-full", Vectors: [][]float64{make([]float64, 3)}}, "length 3, want 4"},
		{"Inf", learners.State{Learner: "oasis-full", Vectors: [][]float64{{1, 0, math.Inf(1), 1}}}, "element 2 is +Inf"},
	} {
		before := f.State()
		if err := f.SetState(tc.st); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SetState(%s) = %v, want an error containing %q", tc.name, err, tc.want)
		}
		if !reflect.DeepEqual(f.State(), before) {
			t.Errorf("a failed SetState(%s) changed the learner", tc.name)
		}
	}
}

// TestDenseUpdateErrors checks that Update rejects a wrong length or a
// non-finite value with an error naming the argument, and changes nothing,
// the step count included.
func TestDenseUpdateErrors(t *testing.T) {
	ok := []float64{1, 2, 3, 4, 5}
	with := func(i int, v float64) []float64 {
		x := slices.Clone(ok)
		x[i] = v
		return x
	}
	for _, tc := range []struct {
		what        string
		x, pos, neg []float64
		want        string
	}{
		{"short x", ok[:4], ok, ok, "oasis-full: Update: len(x) = 4, want 5"},
		{"long pos", ok, append(slices.Clone(ok), 6), ok, "len(pos) = 6, want 5"},
		{"nil neg", ok, ok, nil, "len(neg) = 0, want 5"},
		{"NaN in x", with(1, math.NaN()), ok, ok, "oasis-full: Update: x[1] is NaN"},
		{"Inf in pos", ok, with(4, math.Inf(1)), ok, "pos[4] is +Inf"},
		{"-Inf in neg", ok, ok, with(0, math.Inf(-1)), "neg[0] is -Inf"},
	} {
		f := mustDense(t, []int{2, 3}, nil)
		trainDense(t, f, randomTriplets(6, 5, 10))
		before := f.State()
		loss, err := f.Update(tc.x, tc.pos, tc.neg)
		if err == nil || !strings.Contains(err.Error(), tc.want) || loss != 0 {
			t.Errorf("Update(%s) = %v, %v; want 0 and an error containing %q", tc.what, loss, err, tc.want)
		}
		if !reflect.DeepEqual(f.State(), before) {
			t.Errorf("a rejected Update(%s) changed the model", tc.what)
		}
	}
}

// TestDenseEmbeddingIsSimilarity checks the identity the pipeline's index
// relies on, Query(a)·Item(b) = aᵀWb = Similarity(a, b), on a trained
// model whose W is far from symmetric.
func TestDenseEmbeddingIsSimilarity(t *testing.T) {
	dims := []int{3, 5}
	f := mustDense(t, dims, map[string]float64{"c": 1})
	trainDense(t, f, randomTriplets(7, 8, 200))
	w := f.Matrix()
	if asym := mat64Asymmetry(w.RawMatrix().Data, 8); asym < 0.1 {
		t.Fatalf("W is nearly symmetric (%v); the test would not tell Wᵀa from Wa", asym)
	}
	for _, tr := range randomTriplets(8, 8, 20) {
		a, b := tr.x, tr.pos
		got, want := dot(f.Query(nil, a), f.Item(nil, b)), f.Similarity(a, b)
		if math.Abs(got-want) > 1e-12*max(1, math.Abs(want)) {
			t.Errorf("Query(a)·Item(b) = %v, Similarity(a, b) = %v", got, want)
		}
	}
}

// mat64Asymmetry returns max |W_ij − W_ji| of a d×d row-major matrix.
func mat64Asymmetry(w []float64, d int) float64 {
	var m float64
	for i := range d {
		for j := range i {
			m = max(m, math.Abs(w[i*d+j]-w[j*d+i]))
		}
	}
	return m
}

// TestDenseAverage averages the states of two shards and restores the
// average, which must be the element-wise mean of the two W.
func TestDenseAverage(t *testing.T) {
	dims := []int{2, 2}
	var states []learners.State
	for shard := range 2 {
		f := mustDense(t, dims, nil)
		trainDense(t, f, randomTriplets(uint64(20+shard), 4, 30+shard))
		states = append(states, f.State())
	}
	avg, err := learners.Average(states)
	if err != nil {
		t.Fatal(err)
	}
	f := mustDense(t, dims, nil)
	if err := f.SetState(avg); err != nil {
		t.Fatalf("SetState(Average) = %v", err)
	}
	if f.Steps() != 31 {
		t.Errorf("Steps = %d after averaging 30 and 31, want 31", f.Steps())
	}
	w := f.Matrix().RawMatrix().Data
	for i := range w {
		if want := (states[0].Vectors[0][i] + states[1].Vectors[0][i]) / 2; w[i] != want {
			t.Errorf("averaged W[%d] = %v, want %v", i, w[i], want)
		}
	}
	trainDense(t, f, randomTriplets(22, 4, 10))
}

// toyDense returns n triplets of a two-class problem in two modalities:
// modality 0 (3 values) has the class in its first coordinate, ±0.5 plus
// N(0, 0.1²), and N(0, 1) noise in the others; modality 1 (4 values) is
// N(0, 1) noise for both classes. x and pos share a class, neg has the
// other.
func toyDense(seed uint64, n int) []denseTriplet {
	r := rand.New(rand.NewPCG(seed, 13))
	draw := func(class int) []float64 {
		x := make([]float64, 7)
		for j := range x {
			x[j] = r.NormFloat64()
		}
		x[0] = 0.5*float64(2*class-1) + 0.1*r.NormFloat64()
		return x
	}
	ts := make([]denseTriplet, n)
	for k := range ts {
		c := r.IntN(2)
		ts[k] = denseTriplet{draw(c), draw(c), draw(1 - c)}
	}
	return ts
}

// TestDenseLossFalls trains oasis-full, with the pipeline's default
// parameters, on a few hundred triplets of the toy problem: the mean loss
// over the last 100 must be well below that over the first 100 (over toy
// seeds 1–30 the ratio is at most 0.27; an untrained model's would be about
// 1), and W must weigh the informative coordinate most.
func TestDenseLossFalls(t *testing.T) {
	const n, window = 400, 100
	f := mustDense(t, []int{3, 4}, nil)
	var early, late float64
	for k, tr := range toyDense(17, n) {
		loss, err := f.Update(tr.x, tr.pos, tr.neg)
		if err != nil {
			t.Fatal(err)
		}
		if k < window {
			early += loss / window
		} else if k >= n-window {
			late += loss / window
		}
	}
	t.Logf("mean loss %.4f over the first %d triplets, %.4f over the last %d", early, window, late, window)
	if early < 0.5 {
		t.Errorf("early mean loss %v; the toy problem is too easy to show anything", early)
	}
	if late > 0.5*early {
		t.Errorf("mean loss went from %v to %v, want at least a 2-fold fall", early, late)
	}
	w := f.Matrix()
	for i := 1; i < 7; i++ {
		if w.At(0, 0) <= w.At(i, i) {
			t.Errorf("W_00 = %v ≤ W_%d%d = %v; the informative coordinate should weigh most", w.At(0, 0), i, i, w.At(i, i))
		}
	}
}

// TestDenseItem checks that Item and Query use a large enough dst, grow a
// short one, do not allocate, are safe for concurrent use, and panic on a
// wrong length.
func TestDenseItem(t *testing.T) {
	f := mustDense(t, []int{2, 2}, nil)
	trainDense(t, f, randomTriplets(9, 4, 20))
	x := []float64{1, -2, 3, 0.5}
	want := f.Query(nil, x)
	big := make([]float64, 10)
	if got := f.Query(big, x); &got[0] != &big[0] || !slices.Equal(got, want) {
		t.Errorf("Query into a large dst = %v, want %v in dst", got, want)
	}
	if got := f.Item(make([]float64, 1), x); !slices.Equal(got, x) {
		t.Errorf("Item into a short dst = %v, want %v", got, x)
	}
	if n := testing.AllocsPerRun(100, func() { big = f.Query(big, x) }); n != 0 {
		t.Errorf("Query: %v allocs", n)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				if got := f.Query(nil, x); !slices.Equal(got, want) {
					t.Errorf("concurrent Query = %v, want %v", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
	densetest.MustPanic(t, "Item", "Full.Item: len(x) = 3, want 4", func() { f.Item(nil, x[:3]) })
	densetest.MustPanic(t, "Query", "Full.Query: len(x) = 5, want 4", func() { f.Query(nil, append(x, 1)) })
}
