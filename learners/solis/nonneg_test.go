package solis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/internal/hardtest"
	"github.com/bowline/bowline/learners/sparse"
)

// The tests of the package doc's "Non-negative weights".

// nonNegCases are the four learners by name with small λ, made through
// learners.New as the pipeline makes them, so that "nonneg" is read from
// params as a flag gives it.
var nonNegCases = []struct {
	name   string
	params map[string]float64
}{
	{"solis-tg", map[string]float64{"eta": 1, "lambda": 1e-4}},
	{"solis-da", map[string]float64{"gamma": 1, "lambda": 1e-4}},
	{"solis-afb", map[string]float64{"eta": 1, "lambda": 1e-4}},
	{"solis-ada", map[string]float64{"eta": 1, "lambda": 1e-4}},
}

// newCase returns learner name with params and nonneg (0 or 1).
func newCase(t *testing.T, name string, params map[string]float64, dim int, nonneg float64) lazyLearner {
	t.Helper()
	p := map[string]float64{"nonneg": nonneg}
	for k, v := range params {
		p[k] = v
	}
	l, err := learners.New(name, dim, p)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return l.(lazyLearner)
}

// TestNonNegKeepsWeightsNonNegative trains every learner on triplets with
// hard negatives, which push the query's background words negative: without
// nonneg a good share of them end up negative (so this test can fail), with
// nonneg no weight is ever negative, at any step, in float64 or in Weights,
// and every object word that the triplets favour ends up positive.
func TestNonNegKeepsWeightsNonNegative(t *testing.T) {
	us := hardtest.Stream(1, 3000)
	for _, tc := range nonNegCases {
		off, on := newCase(t, tc.name, tc.params, hardtest.Vocab, 0), newCase(t, tc.name, tc.params, hardtest.Vocab, 1)
		var w []float32
		for step, u := range us {
			off.Update(u)
			on.Update(u)
			for i := range hardtest.Vocab {
				if x := on.weight(i); x < 0 || math.IsNaN(x) {
					t.Fatalf("%s nonneg, step %d: w[%d] = %v", tc.name, step, i, x)
				}
			}
			if step%100 == 0 || step == len(us)-1 {
				w = on.Weights(w)
				for i, x := range w {
					if x < 0 || math.Signbit(float64(x)) {
						t.Fatalf("%s nonneg, step %d: Weights()[%d] = %v", tc.name, step, i, x)
					}
				}
			}
		}
		negOff, zeroOn := 0, 0
		for i := hardtest.Objects; i < hardtest.Vocab; i++ {
			if off.weight(i) < 0 {
				negOff++
			}
			if on.weight(i) == 0 {
				zeroOn++
			}
		}
		objects := 0
		for i := range hardtest.Objects {
			if on.weight(i) > 0 {
				objects++
			}
		}
		t.Logf("%s: background words negative without nonneg %d of %d; zero with it %d; object words positive with it %d of %d",
			tc.name, negOff, hardtest.Vocab-hardtest.Objects, zeroOn, objects, hardtest.Objects)
		if negOff < (hardtest.Vocab-hardtest.Objects)/2 {
			t.Errorf("%s without nonneg: %d of %d background words negative, want at least half (the triplets must push weights negative)",
				tc.name, negOff, hardtest.Vocab-hardtest.Objects)
		}
		if objects != hardtest.Objects {
			t.Errorf("%s nonneg: %d of %d object words positive, want all", tc.name, objects, hardtest.Objects)
		}
	}
}

// TestNonNegDeterministic: the same triplets give the same weights and
// state, bit for bit, in a second learner and after a State/SetState round
// trip halfway; and sharded training's average of two non-negative
// learners' states, restored, has no negative weight.
func TestNonNegDeterministic(t *testing.T) {
	us := hardtest.Stream(2, 1000)
	for _, tc := range nonNegCases {
		a, b, c := newCase(t, tc.name, tc.params, hardtest.Vocab, 1), newCase(t, tc.name, tc.params, hardtest.Vocab, 1), newCase(t, tc.name, tc.params, hardtest.Vocab, 1)
		for k, u := range us {
			if la, lb := a.Update(u), b.Update(u); la != lb {
				t.Fatalf("%s step %d: losses %v and %v", tc.name, k, la, lb)
			}
			if k == len(us)/2 {
				if err := c.SetState(a.State()); err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
			}
			if k >= len(us)/2 {
				if k > len(us)/2 {
					c.Update(u)
				}
			}
		}
		if !sameState(a.State(), b.State()) || !slices.Equal(a.Weights(nil), b.Weights(nil)) {
			t.Errorf("%s: two runs on the same triplets differ", tc.name)
		}
		sameWeights(t, tc.name+" restored halfway", a, c)

		// Two shards: the first and second halves, from w = 0, averaged.
		s1, s2 := newCase(t, tc.name, tc.params, hardtest.Vocab, 1), newCase(t, tc.name, tc.params, hardtest.Vocab, 1)
		for _, u := range us[:len(us)/2] {
			s1.Update(u)
		}
		for _, u := range us[len(us)/2:] {
			s2.Update(u)
		}
		avg, err := learners.Average([]learners.State{s1.State(), s2.State()})
		if err != nil {
			t.Fatal(err)
		}
		m := newCase(t, tc.name, tc.params, hardtest.Vocab, 1)
		if err := m.SetState(avg); err != nil {
			t.Fatalf("%s: the average of two non-negative states: %v", tc.name, err)
		}
		for _, u := range us[:100] {
			m.Update(u)
		}
		for i := range hardtest.Vocab {
			if x := m.weight(i); x < 0 {
				t.Errorf("%s: after averaging, w[%d] = %v", tc.name, i, x)
			}
		}
	}
}

// TestNonNegSetStateRefusesNegativeWeights: TG and AFB, whose state holds
// the weights, refuse a negative one with nonneg (no Update reaches it) and
// accept it without; DA and ADA hold sums of either sign whatever the
// setting, and accept the same state either way.
func TestNonNegSetStateRefusesNegativeWeights(t *testing.T) {
	us := hardtest.Stream(3, 300)
	for _, tc := range nonNegCases {
		off := newCase(t, tc.name, tc.params, hardtest.Vocab, 0)
		for _, u := range us {
			off.Update(u)
		}
		st := off.State()
		on := newCase(t, tc.name, tc.params, hardtest.Vocab, 1)
		err := on.SetState(st)
		switch tc.name {
		case "solis-tg", "solis-afb":
			if err == nil || !strings.Contains(err.Error(), "negative") || !strings.Contains(err.Error(), "nonneg") {
				t.Errorf("%s nonneg: SetState of a state with negative weights: %v, want an error naming nonneg", tc.name, err)
			}
			if !sameState(on.State(), newCase(t, tc.name, tc.params, hardtest.Vocab, 1).State()) {
				t.Errorf("%s nonneg: a refused SetState changed the learner", tc.name)
			}
		default:
			if err != nil {
				t.Errorf("%s nonneg: SetState of sums: %v", tc.name, err)
			}
			for i := range hardtest.Vocab {
				if x := on.weight(i); x < 0 {
					t.Errorf("%s nonneg: w[%d] = %v read from an unconstrained learner's sums", tc.name, i, x)
				}
			}
		}
		if err := newCase(t, tc.name, tc.params, hardtest.Vocab, 0).SetState(st); err != nil {
			t.Errorf("%s: SetState of its own kind of state: %v", tc.name, err)
		}
	}
}

// TestNonNegParams: "nonneg" is a parameter of every learner, recorded by
// Params as 0 or 1 (so model and state files say which), remade by New,
// and anything but 0 or 1 is an error naming it.
func TestNonNegParams(t *testing.T) {
	for _, tc := range nonNegCases {
		for _, v := range []float64{0, 1} {
			l := newCase(t, tc.name, tc.params, 5, v)
			if got := l.Params()["nonneg"]; got != v {
				t.Errorf("%s nonneg=%v: Params()[nonneg] = %v", tc.name, v, got)
			}
			again, err := learners.New(tc.name, 5, l.Params())
			if err != nil || !mapsEqual(again.Params(), l.Params()) {
				t.Errorf("%s nonneg=%v: New(Params()) = %v, %v", tc.name, v, again, err)
			}
		}
		if l, err := learners.New(tc.name, 5, nil); err != nil || l.Params()["nonneg"] != 0 {
			t.Errorf("%s: the default: %v, %v; want nonneg 0", tc.name, l, err)
		}
		for _, bad := range []float64{0.5, -1, 2, math.NaN()} {
			l, err := learners.New(tc.name, 5, map[string]float64{"nonneg": bad})
			if err == nil || l != nil || !strings.Contains(err.Error(), "nonneg must be 0 (off) or 1 (on)") || !strings.Contains(err.Error(), tc.name) {
				t.Errorf("%s nonneg=%v: learner %v, error %v", tc.name, bad, l, err)
			}
		}
	}
}

// argminConvex returns the minimiser of f, convex on [lo, hi], by golden
// section search to the last bits of float64: a brute-force minimisation
// that knows nothing of the closed forms.
func argminConvex(f func(float64) float64, lo, hi float64) float64 {
	const invPhi = 0.6180339887498949
	a, b := lo, hi
	for range 400 {
		c, d := b-invPhi*(b-a), a+invPhi*(b-a)
		if f(c) <= f(d) {
			b = d
		} else {
			a = c
		}
	}
	// The ends too: the minimiser of a convex f may be the boundary 0.
	m := (a + b) / 2
	if f(lo) <= f(m) {
		return lo
	}
	return m
}

// TestNonNegClosedFormsMinimiseConstrainedObjectives checks the package
// doc's derivation: each learner's weight under nonneg is the minimiser over
// w ≥ 0 of its own per-coordinate objective, found by brute force (golden
// section search on [0, B]). DA and ADA are checked through daWeight and
// adaWeight, TG and AFB through one Update of a one-word learner. The table
// holds edge cases (ḡ at 0, at ±λ, pushing either way) and random ones.
func TestNonNegClosedFormsMinimiseConstrainedObjectives(t *testing.T) {
	type tcase struct {
		name string
		gbar float64 // DA, ADA: the average subgradient; TG, AFB: the step's g = −u
		lam  float64 // λ (λ_t for DA)
		w0   float64 // TG, AFB: the weight before the step (≥ 0)
		t    float64 // steps
		k    float64 // DA: γ; ADA, AFB: η and δ + √G (see below); TG: η
	}
	cases := []tcase{
		{"pushed up", -0.3, 0.01, 0, 10, 0.5},
		{"pushed down", 0.3, 0.01, 0.2, 10, 0.5},
		{"at -λ", -0.01, 0.01, 0, 4, 1},
		{"at +λ", 0.01, 0.01, 0.5, 4, 1},
		{"inside the threshold", -0.005, 0.01, 0.1, 9, 2},
		{"no push", 0, 0.01, 0.3, 100, 0.1},
		{"λ = 0, up", -1e-3, 0, 0, 1000, 0.01},
		{"λ = 0, down", 1e-3, 0, 1e-4, 1000, 0.01},
	}
	r := rand.New(rand.NewPCG(11, 12))
	for i := range 60 {
		cases = append(cases, tcase{
			name: fmt.Sprintf("random %d", i),
			gbar: r.NormFloat64() * math.Pow(10, -3*r.Float64()),
			lam:  0.05 * r.Float64() * float64(r.IntN(2)),
			w0:   r.ExpFloat64() * float64(r.IntN(2)),
			t:    float64(1 + r.IntN(5000)),
			k:    math.Pow(10, 2-4*r.Float64()),
		})
	}
	check := func(what string, got float64, f func(float64) float64, hi float64) {
		t.Helper()
		want := argminConvex(f, 0, hi)
		// Positions agree to the search's resolution, and the closed form
		// is at least as low as what the search found.
		if got < 0 || math.Abs(got-want) > 1e-7*max(1, hi) || f(got) > f(want)+1e-12*max(1, math.Abs(f(want))) {
			t.Errorf("%s: closed form %v (f = %v), brute force %v (f = %v)", what, got, f(got), want, f(want))
		}
	}
	for _, c := range cases {
		// DA: f(w) = ḡw + λ_t|w| + (γ/2√t)w² with γ = k.
		gamma := c.k
		daC := math.Sqrt(c.t) / gamma
		daF := func(w float64) float64 { return c.gbar*w + c.lam*math.Abs(w) + gamma/(2*math.Sqrt(c.t))*w*w }
		check("DA "+c.name, daWeight(c.gbar*c.t, c.t, daC, c.lam, true), daF, 2*daC*(math.Abs(c.gbar)+c.lam)+1)

		// ADA: f(w) = ηḡw + ηλ|w| + (H/2t)w², η = 1, H = δ + √G with
		// δ = 0 and G = k².
		H, eta := c.k, 1.0
		adaF := func(w float64) float64 { return eta*c.gbar*w + eta*c.lam*math.Abs(w) + H/(2*c.t)*w*w }
		check("ADA "+c.name, adaWeight(c.gbar*c.t, H*H, c.t, eta*c.t, c.lam, 0, true), adaF,
			2*eta*c.t/H*(math.Abs(c.gbar)+c.lam)+1)

		// TG: one violated step from w₀ with u = −g, η = k:
		// f(w) = ½(w − (w₀ − ηg))² + ηλ|w|.
		tg := must(NewTG(1, TGParams{Eta: c.k, Lambda: c.lam, NonNeg: true}))
		if err := tg.SetState(learners.State{Learner: "solis-tg", Vectors: [][]float64{{c.w0}, {c.w0}, {0}}}); err != nil {
			t.Fatal(err)
		}
		u := sparse.Vector{Idx: []uint32{0}, Val: []float32{float32(-c.gbar)}}
		g := -float64(u.Val[0])
		if c.w0*float64(u.Val[0]) >= 1 {
			continue // no violated step to check
		}
		tg.Update(u)
		v := c.w0 - c.k*g
		tgF := func(w float64) float64 { return 0.5*(w-v)*(w-v) + c.k*c.lam*math.Abs(w) }
		check("TG "+c.name, tg.weight(0), tgF, math.Abs(v)+1)

		// AFB: one violated step from w₀ with G₀ = k², η = 1, δ = 0; after
		// it H = √(G₀ + g²) and f(w) = ηgw + ηλ|w| + (H/2)(w − w₀)².
		afb := must(NewAFB(1, AFBParams{Eta: 1, Lambda: c.lam, NonNeg: true}))
		G0 := c.k * c.k
		if err := afb.SetState(learners.State{Learner: "solis-afb", Vectors: [][]float64{{c.w0}, {G0}, {c.w0}, {0}}}); err != nil {
			t.Fatal(err)
		}
		afb.Update(u)
		Ha := math.Sqrt(G0 + g*g)
		afbF := func(w float64) float64 { return g*w + c.lam*math.Abs(w) + Ha/2*(w-c.w0)*(w-c.w0) }
		check("AFB "+c.name, afb.weight(0), afbF, c.w0+(math.Abs(g)+c.lam)/Ha+1)
	}
}
