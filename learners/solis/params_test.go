package solis

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/internal/densetest"
	"github.com/bowline/bowline/learners/sparse"
)

func TestNewParamsValidate(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	type check struct {
		name  string
		err   error  // from Validate
		nerr  error  // from the constructor
		wants string // substring of the error; "" for valid
	}
	tg := func(p TGParams, want string) check {
		_, nerr := NewTG(10, p)
		return check{"tg", p.Validate(), nerr, want}
	}
	da := func(p DAParams, want string) check {
		_, nerr := NewDA(10, p)
		return check{"da", p.Validate(), nerr, want}
	}
	afb := func(p AFBParams, want string) check {
		_, nerr := NewAFB(10, p)
		return check{"afb", p.Validate(), nerr, want}
	}
	for i, c := range []check{
		tg(DefaultTGParams(), ""),
		tg(TGParams{Eta: 0.1, Lambda: 0.5}, ""),
		tg(TGParams{Eta: 0, Lambda: 0}, "TG learning rate Eta"),
		tg(TGParams{Eta: -1, Lambda: 0}, "Eta"),
		tg(TGParams{Eta: nan, Lambda: 0}, "Eta"),
		tg(TGParams{Eta: inf, Lambda: 0}, "Eta"),
		tg(TGParams{Eta: 1, Lambda: -1e-9}, "TG regularisation Lambda"),
		tg(TGParams{Eta: 1, Lambda: nan}, "Lambda"),
		da(DefaultDAParams(), ""),
		da(DAParams{Lambda: 0.1, Gamma: 2, Rho: 3}, ""),
		da(DAParams{Lambda: -1, Gamma: 1}, "DA regularisation Lambda"),
		da(DAParams{Lambda: 0, Gamma: 0}, "DA proximal scale Gamma"),
		da(DAParams{Lambda: 0, Gamma: -1}, "Gamma"),
		da(DAParams{Lambda: 0, Gamma: nan}, "Gamma"),
		da(DAParams{Lambda: 0, Gamma: inf}, "Gamma"),
		da(DAParams{Lambda: 0, Gamma: 1, Rho: -0.5}, "DA sparsity Rho"),
		da(DAParams{Lambda: 0, Gamma: 1, Rho: nan}, "Rho"),
		afb(DefaultAFBParams(), ""),
		afb(AFBParams{Eta: 2, Lambda: 0.1, Delta: 0}, ""),
		afb(AFBParams{Eta: 0, Lambda: 0, Delta: 0}, "AFB learning rate Eta"),
		afb(AFBParams{Eta: nan, Lambda: 0, Delta: 0}, "Eta"),
		afb(AFBParams{Eta: 1, Lambda: -1, Delta: 0}, "AFB regularisation Lambda"),
		afb(AFBParams{Eta: 1, Lambda: 0, Delta: -1}, "AFB Delta"),
		afb(AFBParams{Eta: 1, Lambda: 0, Delta: inf}, "Delta"),
	} {
		switch {
		case c.wants == "" && (c.err != nil || c.nerr != nil):
			t.Errorf("%d %s: unexpected error %v / %v", i, c.name, c.err, c.nerr)
		case c.wants != "" && (c.err == nil || !strings.Contains(c.err.Error(), c.wants)):
			t.Errorf("%d %s: error %v, want one about %s", i, c.name, c.err, c.wants)
		case (c.err == nil) != (c.nerr == nil):
			t.Errorf("%d %s: constructor error %v disagrees with Validate %v", i, c.name, c.nerr, c.err)
		}
	}
	// All problems are reported at once.
	if err := (DAParams{Lambda: -1, Gamma: 0, Rho: nan}).Validate(); err == nil ||
		!strings.Contains(err.Error(), "Lambda") || !strings.Contains(err.Error(), "Gamma") || !strings.Contains(err.Error(), "Rho") {
		t.Errorf("want all three parameters named, got %v", err)
	}
	for _, dim := range []int{0, -1} {
		_, e1 := NewTG(dim, DefaultTGParams())
		_, e2 := NewDA(dim, DefaultDAParams())
		_, e3 := NewAFB(dim, DefaultAFBParams())
		for _, err := range []error{e1, e2, e3} {
			if err == nil || !strings.Contains(err.Error(), "dimension") {
				t.Errorf("dimension %d: error %v, want a dimension error", dim, err)
			}
		}
	}
}

// TestRegistered: every learner is registered under its Name with
// its Params names, and New(Name, Dim, Params) remakes it.
func TestRegistered(t *testing.T) {
	for _, tc := range []struct {
		l      learners.Stateful
		params []string
	}{
		{must(NewTG(5, TGParams{Eta: 0.25, Lambda: 0.5})), []string{"eta", "lambda", "nonneg"}},
		{must(NewDA(5, DAParams{Lambda: 0.25, Gamma: 0.5, Rho: 2, NonNeg: true})), []string{"lambda", "gamma", "rho", "nonneg"}},
		{must(NewAFB(5, AFBParams{Eta: 0.25, Lambda: 0.5, Delta: 2})), []string{"eta", "lambda", "delta", "nonneg"}},
		{must(NewADA(5, ADAParams{Eta: 0.25, Lambda: 0.5, Delta: 2, NonNeg: true})), []string{"eta", "lambda", "delta", "nonneg"}},
	} {
		name := tc.l.Name()
		p := tc.l.Params()
		if len(p) != len(tc.params) {
			t.Errorf("%s: Params() = %v, want keys %v", name, p, tc.params)
		}
		for _, k := range tc.params {
			if _, ok := p[k]; !ok {
				t.Errorf("%s: Params() = %v lacks %q", name, p, k)
			}
		}
		l, err := learners.New(name, tc.l.Dim(), p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if l.Name() != name || l.Dim() != 5 || !mapsEqual(l.Params(), p) {
			t.Errorf("%s: New made %s dim %d params %v", name, l.Name(), l.Dim(), l.Params())
		}
		if _, err := learners.New(name, 5, map[string]float64{"etta": 1}); err == nil || !strings.Contains(err.Error(), `"etta"`) {
			t.Errorf("%s: misspelt parameter: error %v", name, err)
		}
		if _, err := learners.New(name, 0, nil); err == nil {
			t.Errorf("%s: dimension 0 accepted", name)
		}
		if l, err := learners.New(name, 5, map[string]float64{tc.params[0]: -1}); err == nil || l != nil {
			t.Errorf("%s: negative %s: learner %v, error %v", name, tc.params[0], l, err)
		}
	}
	for _, tc := range []struct {
		name string
		want map[string]float64
	}{
		{"solis-tg", map[string]float64{"eta": 1, "lambda": 0, "nonneg": 0}},
		{"solis-da", map[string]float64{"lambda": 0, "gamma": 0.01, "rho": 0, "nonneg": 0}},
		{"solis-afb", map[string]float64{"eta": 1, "lambda": 0, "delta": 1e-8, "nonneg": 0}},
		{"solis-ada", map[string]float64{"eta": 1, "lambda": 0, "delta": 1e-8, "nonneg": 0}},
	} {
		l, err := learners.New(tc.name, 3, map[string]float64{"lambda": 0})
		if err != nil || !mapsEqual(l.Params(), tc.want) {
			t.Errorf("New(%q) with defaults: %v, %v; want params %v", tc.name, l, err, tc.want)
		}
	}
}

func mapsEqual(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestBadInputPanics: an index ≥ Dim or mismatched lengths is a programmer
// error; Update panics before touching any state, for every learner.
func TestBadInputPanics(t *testing.T) {
	for _, tc := range stateCases() {
		a := tc.make(10)
		a.Update(sparse.Vector{Idx: []uint32{1, 9}, Val: []float32{1, -1}})
		before := a.State()
		densetest.MustPanic(t, tc.name+" index = Dim", "out of range", func() {
			a.Update(sparse.Vector{Idx: []uint32{1, 2, 10}, Val: []float32{1, 1, 1}})
		})
		densetest.MustPanic(t, tc.name+" index ≫ Dim", "out of range", func() {
			a.Update(sparse.Vector{Idx: []uint32{math.MaxUint32}, Val: []float32{1}})
		})
		densetest.MustPanic(t, tc.name+" lengths", "values", func() {
			a.Update(sparse.Vector{Idx: []uint32{1, 2}, Val: []float32{1}})
		})
		if !sameState(a.State(), before) {
			t.Fatalf("%s: state changed by a rejected Update", tc.name)
		}
		// The empty triplet is valid: w·u = 0, loss 1.
		if loss := a.Update(sparse.Vector{}); loss != 1 {
			t.Fatalf("%s: empty u: loss %v", tc.name, loss)
		}
	}
}

func TestUpdatesDoNotAllocate(t *testing.T) {
	const dim = 1000
	us := randomStream(rand.New(rand.NewPCG(5, 6)), dim, 100)
	for _, tc := range stateCases() {
		a := tc.make(dim)
		k := 0
		if n := testing.AllocsPerRun(1000, func() {
			a.Update(us[k%len(us)])
			k++
		}); n != 0 {
			t.Errorf("%s: Update: %v allocs per run, want 0", tc.name, n)
		}
		w := make([]float32, dim)
		if n := testing.AllocsPerRun(10, func() { w = a.Weights(w) }); n != 0 {
			t.Errorf("%s: Weights into a big enough dst: %v allocs per run, want 0", tc.name, n)
		}
		if w := a.Weights(make([]float32, 2, 3)); len(w) != dim {
			t.Errorf("%s: Weights(short) has length %d", tc.name, len(w))
		}
	}
}

// TestInitialWeightsZero: every SOLIS learner starts at w = 0 (TG, DA, AFB,
// ADA: Algorithms 1–4, line "Initialize w₁ = 0"), so its first loss is 1.
func TestInitialWeightsZero(t *testing.T) {
	for _, tc := range stateCases() {
		a := tc.make(7)
		if w := a.Weights(nil); len(w) != 7 || learners.Sparsity(w) != 1 {
			t.Errorf("%s: initial weights %v", tc.name, w)
		}
		if l := a.Update(sparse.Vector{Idx: []uint32{3}, Val: []float32{0.5}}); l != 1 {
			t.Errorf("%s: first loss %v, want 1", tc.name, l)
		}
		if !(a.weight(3) > 0) {
			t.Errorf("%s: after one violated step on u_3 = 0.5, w_3 = %v, want > 0", tc.name, a.weight(3))
		}
	}
}
