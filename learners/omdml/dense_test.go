package omdml

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/internal/densetest"
)

// denseNames are the registered names of the two dense adapters.
var denseNames = []string{"omdml", "lomdml"}

// mustDense makes a registered dense learner and checks its type.
func mustDense(t testing.TB, name string, dims []int, params map[string]float64) *Dense {
	t.Helper()
	m, err := learners.NewDense(name, dims, params)
	if err != nil {
		t.Fatalf("NewDense(%q, %v, %v) = %v", name, dims, params, err)
	}
	d, ok := m.(*Dense)
	if !ok {
		t.Fatalf("NewDense(%q) is a %T, want *Dense", name, m)
	}
	return d
}

// concat joins the modalities of s into one vector, the dense pipeline's
// input.
func concat(s Sample) []float64 {
	var x []float64
	for _, v := range s {
		x = append(x, v...)
	}
	return x
}

// cut splits x into modalities of dimensions dims.
func cut(x []float64, dims []int) Sample {
	s := make(Sample, len(dims))
	for i, n := range dims {
		s[i], x = x[:n], x[n:]
	}
	return s
}

// denseTriplet is a triplet of concatenated vectors.
type denseTriplet struct{ x, pos, neg []float64 }

func denseTriplets(seed uint64, dims []int, n int) []denseTriplet {
	ts := make([]denseTriplet, n)
	for k, tr := range uniformTriplets(seed, dims, n) {
		ts[k] = denseTriplet{concat(tr.p), concat(tr.pos), concat(tr.neg)}
	}
	return ts
}

// train runs Update on every triplet and fails the test on an error.
func train(t testing.TB, d *Dense, ts []denseTriplet) {
	t.Helper()
	for _, tr := range ts {
		if _, err := d.Update(tr.x, tr.pos, tr.neg); err != nil {
			t.Fatalf("%s: Update: %v", d.Name(), err)
		}
	}
}

// sqDist returns ‖a − b‖².
func sqDist(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return s
}

func TestDenseRegistered(t *testing.T) {
	dims := []int{3, 4}
	for _, tc := range []struct {
		name   string
		params map[string]float64
		want   map[string]float64 // Params() overriding the defaults
		err    string
	}{
		{name: "omdml"},
		{name: "omdml", params: map[string]float64{"c": 2, "beta": 0.5, "gamma": 0.25}, want: map[string]float64{"c": 2, "beta": 0.5, "gamma": 0.25}},
		{name: "omdml", params: map[string]float64{"eta": 0.1}, err: `omdml: unknown parameter "eta" (want beta, c, gamma)`},
		{name: "omdml", params: map[string]float64{"C": 1, "rank": 2}, err: `unknown parameter "C", "rank"`},
		{name: "omdml", params: map[string]float64{"c": 0}, err: "C must be finite and > 0"},
		{name: "lomdml"},
		{name: "lomdml", params: map[string]float64{"beta": 0.5, "gamma": 2, "eta": 0.1, "rank": 2, "seed": 7}, want: map[string]float64{"beta": 0.5, "gamma": 2, "eta": 0.1, "rank": 2, "seed": 7}},
		{name: "lomdml", params: map[string]float64{"c": 1}, err: `lomdml: unknown parameter "c" (want beta, eta, gamma, rank, seed)`},
		{name: "lomdml", params: map[string]float64{"rank": 1.5}, err: "rank must be a whole number"},
	} {
		m, err := learners.NewDense(tc.name, dims, tc.params)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || m != nil {
				t.Errorf("NewDense(%q, %v) = %v, %v; want a nil model and an error containing %q", tc.name, tc.params, m, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("NewDense(%q, %v) = %v", tc.name, tc.params, err)
			continue
		}
		if _, ok := m.(learners.DenseOnline); !ok {
			t.Errorf("%s: a %T is not a learners.DenseOnline", tc.name, m)
		}
		if m.Name() != tc.name || !slices.Equal(m.Dims(), dims) || m.Metric() != learners.Euclidean {
			t.Errorf("%s: Name %q, Dims %v, Metric %v", tc.name, m.Name(), m.Dims(), m.Metric())
		}
		// The defaults are the package's, overridden by params.
		var def map[string]float64
		if tc.name == "omdml" {
			def = must(NewOMDML(dims, DefaultParams())).Params()
		} else {
			def = must(NewLOMDML(dims, DefaultParams())).Params()
		}
		for k, v := range tc.want {
			def[k] = v
		}
		if got := m.Params(); !reflect.DeepEqual(got, def) {
			t.Errorf("%s: Params() = %v, want %v", tc.name, got, def)
		}
		// What a model reports makes the same model.
		if again, err := learners.NewDense(tc.name, dims, m.Params()); err != nil || !reflect.DeepEqual(again.State(), m.State()) {
			t.Errorf("%s: NewDense(Params()) = %v, or a different model", tc.name, err)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestDenseStateRoundTrip restores a trained model's State into a fresh one
// whose embedding was already computed: Item and Query must be those of
// the trained model bit for bit, so SetState must invalidate the cache.
func TestDenseStateRoundTrip(t *testing.T) {
	dims := []int{4, 6}
	params := map[string]map[string]float64{"omdml": {"c": 5}, "lomdml": {"rank": 3}}
	r := rand.New(rand.NewPCG(3, 3))
	xs := make([][]float64, 5)
	for k := range xs {
		xs[k] = concat(uniformSample(r, dims))
	}
	for _, name := range denseNames {
		trained := mustDense(t, name, dims, params[name])
		train(t, trained, denseTriplets(33, dims, 60))
		fresh := mustDense(t, name, dims, params[name])
		before := fresh.Item(nil, xs[0])
		if err := fresh.SetState(trained.State()); err != nil {
			t.Fatalf("%s: SetState(State()) = %v", name, err)
		}
		if !reflect.DeepEqual(fresh.State(), trained.State()) {
			t.Errorf("%s: State after SetState(State()) differs", name)
		}
		for _, x := range xs {
			if a, b := fresh.Item(nil, x), trained.Item(nil, x); !slices.Equal(a, b) {
				t.Errorf("%s: Item after SetState(State()) = %v, want %v", name, a, b)
			}
			if a, b := fresh.Query(nil, x), trained.Query(nil, x); !slices.Equal(a, b) {
				t.Errorf("%s: Query after SetState(State()) = %v, want %v", name, a, b)
			}
		}
		if slices.Equal(before, fresh.Item(nil, xs[0])) {
			t.Errorf("%s: training left Item unchanged; the test shows nothing", name)
		}
	}
}

// TestDenseUpdateErrors checks that Update rejects a wrong length or a
// non-finite value with an error naming the argument, and changes nothing.
func TestDenseUpdateErrors(t *testing.T) {
	dims := []int{3, 2}
	ok := []float64{1, 2, 3, 4, 5}
	with := func(i int, v float64) []float64 {
		x := slices.Clone(ok)
		x[i] = v
		return x
	}
	for _, name := range denseNames {
		for _, tc := range []struct {
			what         string
			x, pos, neg  []float64
			want         string
			wantInMiddle bool
		}{
			{what: "short x", x: ok[:4], pos: ok, neg: ok, want: name + ": Update: len(x) = 4, want 5"},
			{what: "long pos", x: ok, pos: append(slices.Clone(ok), 6), neg: ok, want: "len(pos) = 6, want 5"},
			{what: "nil neg", x: ok, pos: ok, neg: nil, want: "len(neg) = 0, want 5"},
			{what: "NaN in x", x: with(1, math.NaN()), pos: ok, neg: ok, want: name + ": Update: x: modality 0 value 1 is NaN"},
			{what: "Inf in neg", x: ok, pos: ok, neg: with(4, math.Inf(-1)), want: "Update: neg: modality 1 value 1 is -Inf"},
		} {
			d := mustDense(t, name, dims, nil)
			train(t, d, denseTriplets(5, dims, 10))
			before := d.State()
			item := d.Item(nil, ok)
			loss, err := d.Update(tc.x, tc.pos, tc.neg)
			if err == nil || !strings.Contains(err.Error(), tc.want) || loss != 0 {
				t.Errorf("%s: Update(%s) = %v, %v; want 0 and an error containing %q", name, tc.what, loss, err, tc.want)
			}
			if !reflect.DeepEqual(d.State(), before) || !slices.Equal(d.Item(nil, ok), item) {
				t.Errorf("%s: a rejected Update(%s) changed the model", name, tc.what)
			}
			for _, s := range d.args {
				for _, v := range s {
					if v != nil {
						t.Fatalf("%s: Update(%s) kept a reference to its arguments", name, tc.what)
					}
				}
			}
		}
	}
}

// TestDenseEmbeddingIsDistance checks the identity the pipeline's index
// relies on, ‖Item(a) − Item(b)‖² = Distance(a, b), after random updates,
// and again after more updates (which must invalidate the embedding). OMDML
// runs with a large C so that projections clip eigenvalues to 0; LOMDML
// with a rank below and above the modalities' dimensions.
func TestDenseEmbeddingIsDistance(t *testing.T) {
	dims := []int{5, 3, 8}
	for _, tc := range []struct {
		name    string
		params  map[string]float64
		itemDim int
	}{
		{"omdml", map[string]float64{"c": 5}, 16},
		{"omdml", nil, 16},
		{"lomdml", map[string]float64{"rank": 4}, 4 + 3 + 4},
		{"lomdml", map[string]float64{"rank": 50, "eta": 0.05}, 16},
	} {
		d := mustDense(t, tc.name, dims, tc.params)
		r := rand.New(rand.NewPCG(8, 1))
		for round, seed := range []uint64{70, 71} {
			train(t, d, denseTriplets(seed, dims, 100))
			for range 20 {
				a, b := concat(uniformSample(r, dims)), concat(uniformSample(r, dims))
				ea, eb := d.Item(nil, a), d.Item(nil, b)
				if len(ea) != tc.itemDim {
					t.Fatalf("%s %v: len(Item) = %d, want %d", tc.name, tc.params, len(ea), tc.itemDim)
				}
				if q := d.Query(nil, a); !slices.Equal(q, ea) {
					t.Errorf("%s %v: Query ≠ Item", tc.name, tc.params)
				}
				got, want := sqDist(ea, eb), d.Learner().Distance(cut(a, dims), cut(b, dims))
				if math.Abs(got-want) > 1e-12*max(1, want) {
					t.Errorf("%s %v round %d: ‖Item(a) − Item(b)‖² = %v, Distance = %v", tc.name, tc.params, round, got, want)
				}
			}
		}
		if o, ok := d.Learner().(*OMDML); ok && tc.params["c"] == 5 {
			if done, _ := o.Projections(); done == 0 {
				t.Errorf("omdml with C = 5 never projected; the clipping is untested")
			}
		}
	}
}

// TestDenseAverage averages the states of two shards and restores the
// average: it must be accepted, keep the embedding identity, and go on
// learning.
func TestDenseAverage(t *testing.T) {
	dims := []int{3, 6}
	params := map[string]map[string]float64{"omdml": {"c": 5}, "lomdml": {"rank": 2}}
	for _, name := range denseNames {
		var states []learners.State
		for shard := range 2 {
			d := mustDense(t, name, dims, params[name])
			train(t, d, denseTriplets(uint64(90+shard), dims, 40+shard))
			states = append(states, d.State())
		}
		avg, err := learners.Average(states)
		if err != nil {
			t.Fatal(err)
		}
		d := mustDense(t, name, dims, params[name])
		if err := d.SetState(avg); err != nil {
			t.Fatalf("%s: SetState(Average) = %v", name, err)
		}
		if d.Steps() != 41 {
			t.Errorf("%s: Steps = %d after averaging 40 and 41, want 41", name, d.Steps())
		}
		r := rand.New(rand.NewPCG(4, 4))
		for range 10 {
			a, b := concat(uniformSample(r, dims)), concat(uniformSample(r, dims))
			got, want := sqDist(d.Item(nil, a), d.Item(nil, b)), d.Learner().Distance(cut(a, dims), cut(b, dims))
			if math.Abs(got-want) > 1e-12*max(1, want) {
				t.Errorf("%s: averaged model: ‖Item(a) − Item(b)‖² = %v, Distance = %v", name, got, want)
			}
		}
		train(t, d, denseTriplets(99, dims, 10))
	}
}

// toyDense returns n triplets of a two-class problem in two modalities:
// modality 0 (3 values) has the class in its first coordinate, 0.5 ± 0.25
// plus N(0, 0.1²), and uniform [0, 1) noise in the others; modality 1
// (4 values) is uniform [0, 1) noise for both classes. p and pos share a
// class, neg has the other.
func toyDense(seed uint64, n int) []denseTriplet {
	r := rand.New(rand.NewPCG(seed, 13))
	draw := func(class int) []float64 {
		x := make([]float64, 7)
		for j := range x {
			x[j] = r.Float64()
		}
		x[0] = 0.5 + 0.25*float64(2*class-1) + 0.1*r.NormFloat64()
		return x
	}
	ts := make([]denseTriplet, n)
	for k := range ts {
		c := r.IntN(2)
		ts[k] = denseTriplet{draw(c), draw(c), draw(1 - c)}
	}
	return ts
}

var toyDenseDims = []int{3, 4}

// TestDenseLossFalls trains each learner, with the pipeline's default
// parameters, on a few hundred triplets of the toy problem: the mean loss
// over the last 100 must be well below that over the first 100. (Over toy
// seeds 1–30 the ratio is at most 0.48 for OMDML and 0.38 for LOMDML; an
// untrained model's would be about 1.)
func TestDenseLossFalls(t *testing.T) {
	const n, window = 400, 100
	stream := toyDense(17, n)
	for _, name := range denseNames {
		d := mustDense(t, name, toyDenseDims, nil)
		var early, late float64
		for k, tr := range stream {
			loss, err := d.Update(tr.x, tr.pos, tr.neg)
			if err != nil {
				t.Fatal(err)
			}
			if k < window {
				early += loss / window
			} else if k >= n-window {
				late += loss / window
			}
		}
		t.Logf("%s: mean loss %.4f over the first %d triplets, %.4f over the last %d; θ = %v", name, early, window, late, window, d.Learner().Weights())
		if early < 0.3 {
			t.Errorf("%s: early mean loss %v; the toy problem is too easy to show anything", name, early)
		}
		if th := d.Learner().Weights(); th[0] <= th[1] {
			t.Errorf("%s: θ = %v, want the informative modality 0 to weigh more", name, th)
		}
		if late > 0.6*early {
			t.Errorf("%s: mean loss went from %v to %v, want a fall by at least 40%%", name, early, late)
		}
	}
}

// TestDenseConcurrentItem has several goroutines compute the invalidated
// embedding at once after training (the race detector checks the locking):
// each must get the sequential result.
func TestDenseConcurrentItem(t *testing.T) {
	dims := []int{4, 5}
	r := rand.New(rand.NewPCG(6, 6))
	xs := make([][]float64, 8)
	for k := range xs {
		xs[k] = concat(uniformSample(r, dims))
	}
	for _, name := range denseNames {
		seq := mustDense(t, name, dims, nil)
		par := mustDense(t, name, dims, nil)
		stream := denseTriplets(12, dims, 50)
		train(t, seq, stream)
		train(t, par, stream)
		want := make([][]float64, len(xs))
		for k, x := range xs {
			want[k] = seq.Item(nil, x)
		}
		densetest.ConcurrentEmbeddings(t, par, xs, want)
	}
}

// TestDenseItem checks that Item and Query use a large enough dst, grow a
// short one, and panic on a wrong length.
func TestDenseItem(t *testing.T) {
	dims := []int{4, 5}
	x := concat(uniformSample(rand.New(rand.NewPCG(2, 2)), dims))
	for _, name := range denseNames {
		d := mustDense(t, name, dims, nil)
		want := d.Item(nil, x)
		big := make([]float64, 20)
		if got := d.Item(big, x); &got[0] != &big[0] || !slices.Equal(got, want) {
			t.Errorf("%s: Item into a large dst: %v, want %v in dst", name, got, want)
		}
		if got := d.Query(make([]float64, 1), x); !slices.Equal(got, want) {
			t.Errorf("%s: Query into a short dst = %v, want %v", name, got, want)
		}
		for _, f := range []struct {
			name string
			call func([]float64, []float64) []float64
		}{{"Item", d.Item}, {"Query", d.Query}} {
			msg := func() (msg any) {
				defer func() { msg = recover() }()
				f.call(nil, x[1:])
				return nil
			}()
			if s, _ := msg.(string); !strings.Contains(s, name+": Dense."+f.name+": len(x) = 8, want 9") {
				t.Errorf("%s: %s of a short x: panic %v", name, f.name, msg)
			}
		}
	}
}

// TestDenseNoAllocs checks that LOMDML's Update through Dense allocates
// nothing, and that Item into a large enough dst allocates nothing once
// the embedding is computed.
func TestDenseNoAllocs(t *testing.T) {
	dims := []int{5, 9}
	stream := denseTriplets(60, dims, 200)
	d := mustDense(t, "lomdml", dims, map[string]float64{"rank": 3, "eta": 1e-3})
	k := 0
	if n := testing.AllocsPerRun(100, func() {
		tr := stream[k%len(stream)]
		k++
		if _, err := d.Update(tr.x, tr.pos, tr.neg); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("lomdml: Dense.Update: %v allocs", n)
	}
	for _, name := range denseNames {
		d := mustDense(t, name, dims, nil)
		train(t, d, stream[:20])
		dst := d.Item(nil, stream[0].x)
		if n := testing.AllocsPerRun(100, func() { dst = d.Item(dst, stream[1].x) }); n != 0 {
			t.Errorf("%s: Item: %v allocs", name, n)
		}
	}
}
