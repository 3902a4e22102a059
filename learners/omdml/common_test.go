package omdml

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/bowline/bowline/learners"
)

// constructors builds either learner, so that behaviour both share is tested
// on both.
var constructors = []struct {
	name string
	new  func(dims []int, p Params) (Learner, error)
}{
	{"omdml", func(d []int, p Params) (Learner, error) { return NewOMDML(d, p) }},
	{"lomdml", func(d []int, p Params) (Learner, error) { return NewLOMDML(d, p) }},
}

func mustNew(t testing.TB, ctor func([]int, Params) (Learner, error), dims []int, p Params) Learner {
	t.Helper()
	l, err := ctor(dims, p)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// uniformSample returns a sample with entries uniform in [0, 1), the
// paper's feature scaling.
func uniformSample(r *rand.Rand, dims []int) Sample {
	s := make(Sample, len(dims))
	for i, n := range dims {
		s[i] = make([]float64, n)
		for j := range s[i] {
			s[i][j] = r.Float64()
		}
	}
	return s
}

type triplet struct{ p, pos, neg Sample }

func uniformTriplets(seed uint64, dims []int, n int) []triplet {
	r := rand.New(rand.NewPCG(seed, 7))
	ts := make([]triplet, n)
	for k := range ts {
		ts[k] = triplet{uniformSample(r, dims), uniformSample(r, dims), uniformSample(r, dims)}
	}
	return ts
}

// toyDims are the modalities of toyTriplets: modality 0 carries the class,
// modalities 1 and 2 are noise.
var toyDims = []int{5, 6, 3}

// toyTriplets returns n triplets over 4 classes. In modality 0 the first two
// coordinates are the class centre (±1, ±1) plus N(0, spread²) and the other
// three are nuisance N(0, 3²) whatever the class, so that the Euclidean
// metric ranks many triplets wrongly and a learnt one separates the classes
// (for a small spread). Modalities 1 and 2 are N(0, 1.5²) for every class:
// they rank triplets at random.
func toyTriplets(seed uint64, n int, spread float64) []triplet {
	r := rand.New(rand.NewPCG(seed, 11))
	draw := func(class int) Sample {
		s := Sample{make([]float64, 5), make([]float64, 6), make([]float64, 3)}
		s[0][0] = float64(2*(class&1)-1) + spread*r.NormFloat64()
		s[0][1] = float64(2*(class>>1)-1) + spread*r.NormFloat64()
		for j := 2; j < 5; j++ {
			s[0][j] = 3 * r.NormFloat64()
		}
		for _, v := range s[1:] {
			for j := range v {
				v[j] = 1.5 * r.NormFloat64()
			}
		}
		return s
	}
	ts := make([]triplet, n)
	for k := range ts {
		c := r.IntN(4)
		o := (c + 1 + r.IntN(3)) % 4
		ts[k] = triplet{draw(c), draw(c), draw(o)}
	}
	return ts
}

// minEig returns the smallest eigenvalue and the spectral norm of m.
func minEig(t testing.TB, m mat.Symmetric) (lo, norm float64) {
	t.Helper()
	var e mat.EigenSym
	if !e.Factorize(m, false) {
		t.Fatal("eigendecomposition failed")
	}
	v := e.RawValues()
	return v[0], max(math.Abs(v[0]), math.Abs(v[len(v)-1]))
}

func TestCheckSample(t *testing.T) {
	dims := []int{3, 2}
	ok := Sample{{1, 2, 3}, {4, 5}}
	for _, c := range constructors {
		l := mustNew(t, c.new, dims, DefaultParams())
		check := l.CheckSample
		if err := check(ok); err != nil {
			t.Errorf("%s: CheckSample(valid) = %v", c.name, err)
		}
		for _, tc := range []struct {
			name string
			s    Sample
			want string
		}{
			{"too few modalities", Sample{{1, 2, 3}}, "1 modalities, want 2"},
			{"too many modalities", Sample{{1, 2, 3}, {4, 5}, {6}}, "3 modalities, want 2"},
			{"short modality", Sample{{1, 2, 3}, {4}}, "modality 1 has 1 values, want 2"},
			{"long modality", Sample{{1, 2, 3, 4}, {4, 5}}, "modality 0 has 4 values, want 3"},
			{"NaN", Sample{{1, math.NaN(), 3}, {4, 5}}, "modality 0 value 1 is NaN"},
			{"+Inf", Sample{{1, 2, 3}, {4, math.Inf(1)}}, "modality 1 value 1 is +Inf"},
			{"nil", nil, "0 modalities"},
		} {
			err := check(tc.s)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), c.name+": ") {
				t.Errorf("%s: CheckSample(%s) = %v, want an error containing %q", c.name, tc.name, err, tc.want)
			}
		}
	}
}

// TestUpdatePanicsOnBadInput checks that Update and Distance reject what
// CheckSample rejects, and that a rejected Update leaves the model as it
// was.
func TestUpdatePanicsOnBadInput(t *testing.T) {
	dims := []int{3, 2}
	ok := Sample{{1, 2, 3}, {4, 5}}
	bad := map[string]Sample{
		"dimension mismatch": {{1, 2, 3}, {4, 5, 6}},
		"missing modality":   {{1, 2, 3}},
		"NaN":                {{1, 2, 3}, {math.NaN(), 5}},
	}
	for _, c := range constructors {
		for name, s := range bad {
			l := mustNew(t, c.new, dims, DefaultParams())
			before := l.State()
			for pos, call := range []func(){
				func() { l.Update(s, ok, ok) },
				func() { l.Update(ok, s, ok) },
				func() { l.Update(ok, ok, s) },
				func() { l.Distance(ok, s) },
			} {
				msg := func() (msg any) {
					defer func() { msg = recover() }()
					call()
					return nil
				}()
				if msg == nil {
					t.Errorf("%s: %s in argument %d: no panic", c.name, name, pos)
					continue
				}
				if s, _ := msg.(string); !strings.HasPrefix(s, c.name+".") {
					t.Errorf("%s: %s: panic %v does not name the learner and method", c.name, name, msg)
				}
			}
			if after := l.State(); !reflect.DeepEqual(before, after) {
				t.Errorf("%s: %s: a rejected Update changed the model", c.name, name)
			}
		}
	}
}

// TestDistanceMatchesLoss checks Update's loss against Distance before each
// step, Distance(a, a) = 0, symmetry and non-negativity.
func TestDistanceMatchesLoss(t *testing.T) {
	dims := []int{4, 3, 6}
	p := DefaultParams()
	p.Rank = 2
	for _, c := range constructors {
		l := mustNew(t, c.new, dims, p)
		for k, tr := range uniformTriplets(3, dims, 60) {
			dPos, dNeg := l.Distance(tr.p, tr.pos), l.Distance(tr.p, tr.neg)
			if dPos < 0 || dNeg < 0 {
				t.Fatalf("%s step %d: negative distance %v, %v", c.name, k, dPos, dNeg)
			}
			if d := l.Distance(tr.pos, tr.p); math.Abs(d-dPos) > 1e-12*max(1, dPos) {
				t.Fatalf("%s step %d: Distance not symmetric: %v vs %v", c.name, k, d, dPos)
			}
			if d := l.Distance(tr.p, tr.p); d != 0 {
				t.Fatalf("%s step %d: Distance(p, p) = %v", c.name, k, d)
			}
			want := max(0, dPos-dNeg+p.Gamma)
			if got := l.Update(tr.p, tr.pos, tr.neg); math.Abs(got-want) > 1e-9*max(1, dPos+dNeg) {
				t.Fatalf("%s step %d: Update = %v, want max(0, d(p,p⁺) − d(p,p⁻) + γ) = %v", c.name, k, got, want)
			}
		}
		if l.Steps() != 60 {
			t.Errorf("%s: Steps = %d, want 60", c.name, l.Steps())
		}
	}
}

// TestHedgeConcentrates runs both learners on toyTriplets: θ must move to
// the informative modality 0, and the share of triplets ranked wrongly
// (f > 0, i.e. loss > γ, before the update) must fall over the stream.
func TestHedgeConcentrates(t *testing.T) {
	const n, early, late = 3000, 250, 1000
	stream := toyTriplets(5, n, 0.1)
	p := DefaultParams()
	// Hedge moves θ only on updating steps, and those stop once the
	// informative metric has been learnt; β = 0.8 concentrates θ within
	// that time (the default 0.99 moves it to about 0.6).
	p.Beta = 0.8
	p.Eta = 0.002 // ‖p − p′‖² is about 50 here (package doc on η)
	for _, c := range constructors {
		l := mustNew(t, c.new, toyDims, p)
		var wrongEarly, wrongLate int
		for k, tr := range stream {
			if l.Update(tr.p, tr.pos, tr.neg) > p.Gamma {
				switch {
				case k < early:
					wrongEarly++
				case k >= n-late:
					wrongLate++
				}
			}
		}
		theta := l.Weights()
		t.Logf("%s: θ = %.4f, wrong rankings: %d of the first %d, %d of the last %d", c.name, theta, wrongEarly, early, wrongLate, late)
		if theta[0] < 0.8 || theta[1] > 0.15 || theta[2] > 0.15 {
			t.Errorf("%s: θ = %v, want θ_0 ≥ 0.8 on the informative modality and ≤ 0.15 on the others", c.name, theta)
		}
		if sum := theta[0] + theta[1] + theta[2]; math.Abs(sum-1) > 1e-12 {
			t.Errorf("%s: Σθ = %v, want 1", c.name, sum)
		}
		rateEarly, rateLate := float64(wrongEarly)/early, float64(wrongLate)/late
		if rateEarly < 0.05 {
			t.Errorf("%s: only %d of the first %d triplets ranked wrongly; the toy problem is too easy to show anything", c.name, wrongEarly, early)
		}
		if rateLate > rateEarly/10 {
			t.Errorf("%s: the share of wrong rankings went from %.4f to %.4f, want at least a 10-fold fall", c.name, rateEarly, rateLate)
		}
	}
}

// TestLossFalls learns a single modality (Hedge has nothing to do) in which
// the Euclidean metric is dominated by nuisance coordinates: the mean loss
// must fall as the metric learns to ignore them. LOMDML runs with W₀ = I
// (rank ≥ n) and with a random rank-2 W₀.
func TestLossFalls(t *testing.T) {
	const n, early, late = 3000, 100, 1000
	full := toyTriplets(9, n, 0.1)
	stream := make([]triplet, n)
	for k, tr := range full {
		stream[k] = triplet{tr.p[:1], tr.pos[:1], tr.neg[:1]}
	}
	for _, tc := range []struct {
		ctor int
		rank int
	}{{0, 50}, {1, 50}, {1, 2}} {
		c := constructors[tc.ctor]
		p := DefaultParams()
		p.Rank = tc.rank
		p.Eta = 0.002
		l := mustNew(t, c.new, toyDims[:1], p)
		var lossEarly, lossLate float64
		for k, tr := range stream {
			loss := l.Update(tr.p, tr.pos, tr.neg)
			switch {
			case k < early:
				lossEarly += loss / early
			case k >= n-late:
				lossLate += loss / late
			}
		}
		t.Logf("%s rank %d: mean loss %.4f over the first %d triplets, %.4f over the last %d", c.name, tc.rank, lossEarly, early, lossLate, late)
		if lossEarly < 1 {
			t.Errorf("%s rank %d: early mean loss %v; the toy problem is too easy to show anything", c.name, tc.rank, lossEarly)
		}
		if lossLate > lossEarly/20 {
			t.Errorf("%s rank %d: mean loss went from %v to %v, want at least a 20-fold fall", c.name, tc.rank, lossEarly, lossLate)
		}
	}
}

// TestDeterminism runs each learner twice on the same stream: the states
// must be identical bit for bit.
func TestDeterminism(t *testing.T) {
	dims := []int{7, 3, 5}
	stream := uniformTriplets(21, dims, 80)
	p := DefaultParams()
	p.Rank = 3
	for _, c := range constructors {
		var states [2]learners.State
		for run := range states {
			l := mustNew(t, c.new, dims, p)
			for _, tr := range stream {
				l.Update(tr.p, tr.pos, tr.neg)
			}
			states[run] = l.State()
		}
		if !reflect.DeepEqual(states[0], states[1]) {
			t.Errorf("%s: two runs on the same stream differ", c.name)
		}
	}
}

// TestStateRoundTrip checks that exporting the state into a fresh learner
// and going on gives exactly the uninterrupted run (what the sharded trainer
// needs with one shard), and that State returns a copy.
func TestStateRoundTrip(t *testing.T) {
	dims := []int{4, 6}
	stream := uniformTriplets(33, dims, 120)
	p := DefaultParams()
	p.C = 5 // large steps, so that OMDML projects
	p.Rank = 3
	for _, c := range constructors {
		whole := mustNew(t, c.new, dims, p)
		first := mustNew(t, c.new, dims, p)
		for _, tr := range stream {
			whole.Update(tr.p, tr.pos, tr.neg)
		}
		for _, tr := range stream[:60] {
			first.Update(tr.p, tr.pos, tr.neg)
		}
		st := first.State()
		second := mustNew(t, c.new, dims, p)
		if err := second.SetState(st); err != nil {
			t.Fatalf("%s: SetState(State()) = %v", c.name, err)
		}
		for _, v := range st.Vectors { // State must not alias the model
			for j := range v {
				v[j] = math.NaN()
			}
		}
		for _, tr := range stream[60:] {
			second.Update(tr.p, tr.pos, tr.neg)
		}
		if got, want := second.State(), whole.State(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: State, SetState and 60 more steps differ from 120 uninterrupted steps", c.name)
		}
	}
}

func TestSetStateErrors(t *testing.T) {
	dims := []int{2, 3}
	p := DefaultParams()
	p.Rank = 2
	for _, c := range constructors {
		l := mustNew(t, c.new, dims, p)
		good := l.State()
		clone := func() learners.State {
			s := good
			s.Vectors = make([][]float64, len(good.Vectors))
			for k, v := range good.Vectors {
				s.Vectors[k] = append([]float64(nil), v...)
			}
			return s
		}
		cases := []struct {
			name   string
			modify func(*learners.State)
			want   string
		}{
			{"other learner", func(s *learners.State) { s.Learner = "solis-ada" }, `SetState: state is of learner "solis-ada"`},
			{"negative steps", func(s *learners.State) { s.Steps = -1 }, "negative step count -1"},
			{"missing vector", func(s *learners.State) { s.Vectors = s.Vectors[:len(s.Vectors)-1] }, "vectors, want"},
			{"short θ", func(s *learners.State) { s.Vectors[0] = s.Vectors[0][:1] }, "state vector 0 has length 1, want 2"},
			{"short matrix", func(s *learners.State) { s.Vectors[2] = s.Vectors[2][:3] }, "state vector 2 has length 3"},
			{"NaN", func(s *learners.State) { s.Vectors[1][0] = math.NaN() }, "state vector 1 element 0 is NaN"},
			{"negative θ", func(s *learners.State) { s.Vectors[0][1] = -0.5 }, "SetState: weight θ_1 = -0.5 is negative"},
			{"zero θ", func(s *learners.State) { s.Vectors[0][0], s.Vectors[0][1] = 0, 0 }, "SetState: weights θ are all zero"},
		}
		if c.name == "omdml" {
			cases = append(cases,
				struct {
					name   string
					modify func(*learners.State)
					want   string
				}{"asymmetric M", func(s *learners.State) { s.Vectors[2][1] = 0.5 }, "SetState: M_1 is not symmetric at (0,1)"},
				struct {
					name   string
					modify func(*learners.State)
					want   string
				}{"bound above the diagonal", func(s *learners.State) { s.Vectors[3][0] = 2 }, "SetState: bound L_0 = 2 exceeds"},
			)
		}
		for _, tc := range cases {
			s := clone()
			tc.modify(&s)
			before := l.State()
			err := l.SetState(s)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: SetState(%s) = %v, want an error containing %q", c.name, tc.name, err, tc.want)
			}
			if !reflect.DeepEqual(before, l.State()) {
				t.Errorf("%s: SetState(%s) failed but changed the learner", c.name, tc.name)
			}
		}
		// θ off the simplex is renormalised.
		s := clone()
		s.Vectors[0][0], s.Vectors[0][1] = 3, 1
		if err := l.SetState(s); err != nil {
			t.Fatalf("%s: SetState(θ = (3, 1)) = %v", c.name, err)
		}
		if got := l.Weights(); got[0] != 0.75 || got[1] != 0.25 {
			t.Errorf("%s: θ = (3, 1) was set as %v, want (0.75, 0.25)", c.name, got)
		}
	}
}

// TestAverage checks that learners.Average of states of learners trained on
// different streams restores into a valid model: θ on the simplex, and for
// OMDML PSD matrices whose bounds L_i lie below λ_min.
func TestAverage(t *testing.T) {
	dims := []int{3, 6}
	p := DefaultParams()
	p.C = 5
	p.Rank = 2
	for _, c := range constructors {
		var states []learners.State
		for shard := range 3 {
			l := mustNew(t, c.new, dims, p)
			for _, tr := range uniformTriplets(uint64(40+shard), dims, 50) {
				l.Update(tr.p, tr.pos, tr.neg)
			}
			states = append(states, l.State())
		}
		avg, err := learners.Average(states)
		if err != nil {
			t.Fatal(err)
		}
		l := mustNew(t, c.new, dims, p)
		if err := l.SetState(avg); err != nil {
			t.Fatalf("%s: SetState(average) = %v", c.name, err)
		}
		var sum float64
		for _, th := range l.Weights() {
			sum += th
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("%s: Σθ = %v after averaging", c.name, sum)
		}
		if o, ok := l.(*OMDML); ok {
			for i := range dims {
				lo, norm := minEig(t, o.m[i])
				if lo < -1e-9*max(1, norm) || o.lb[i] > lo+1e-9*max(1, norm) {
					t.Errorf("averaged M_%d: λ_min = %v, bound %v", i, lo, o.lb[i])
				}
			}
		}
		// The learner goes on learning from the average.
		for _, tr := range uniformTriplets(50, dims, 20) {
			if loss := l.Update(tr.p, tr.pos, tr.neg); math.IsNaN(loss) {
				t.Fatalf("%s: NaN loss after averaging", c.name)
			}
		}
	}
}

// TestNoAllocs checks the hot paths that promise not to allocate:
// Distance for both learners, and LOMDML's Update.
func TestNoAllocs(t *testing.T) {
	dims := []int{5, 9}
	p := DefaultParams()
	p.Rank = 3
	p.Eta = 1e-3
	stream := uniformTriplets(60, dims, 200)
	for _, c := range constructors {
		l := mustNew(t, c.new, dims, p)
		k := 0
		if n := testing.AllocsPerRun(100, func() {
			tr := stream[k%len(stream)]
			k++
			l.Distance(tr.p, tr.neg)
		}); n != 0 {
			t.Errorf("%s: Distance allocates %v times per call", c.name, n)
		}
		if c.name != "lomdml" {
			continue
		}
		if n := testing.AllocsPerRun(100, func() {
			tr := stream[k%len(stream)]
			k++
			l.Update(tr.p, tr.pos, tr.neg)
		}); n != 0 {
			t.Errorf("%s: Update allocates %v times per call", c.name, n)
		}
	}
}
