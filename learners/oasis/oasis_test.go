package oasis

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/internal/densetest"
	"github.com/bowline/bowline/learners/internal/hardtest"
	"github.com/bowline/bowline/learners/sparse"
)

func must[L any](l L, err error) L {
	if err != nil {
		panic(err)
	}
	return l
}

func TestParamsValidate(t *testing.T) {
	for _, tc := range []struct {
		c  float64
		ok bool
	}{
		{0.1, true}, {1e-9, true}, {100, true},
		{0, false}, {-1, false}, {math.NaN(), false}, {math.Inf(1), false},
	} {
		err := Params{C: tc.c}.Validate()
		if (err == nil) != tc.ok || err != nil && !strings.Contains(err.Error(), "C must be") {
			t.Errorf("C = %v: error %v", tc.c, err)
		}
		_, e1 := NewDiagonal(3, Params{C: tc.c})
		_, e2 := NewFull(3, Params{C: tc.c})
		if (e1 == nil) != tc.ok || (e2 == nil) != tc.ok {
			t.Errorf("C = %v: constructors: %v, %v", tc.c, e1, e2)
		}
	}
	if err := DefaultParams().Validate(); err != nil {
		t.Error(err)
	}
	for _, d := range []int{0, -1, maxFullDim + 1} {
		if _, err := NewFull(d, DefaultParams()); err == nil || !strings.Contains(err.Error(), "dimension") {
			t.Errorf("NewFull(%d): %v", d, err)
		}
	}
	if _, err := NewDiagonal(0, DefaultParams()); err == nil || !strings.Contains(err.Error(), "dimension") {
		t.Errorf("NewDiagonal(0): %v", err)
	}
}

// TestDiagonalSteps checks single steps by hand, with values whose
// arithmetic is exact.
func TestDiagonalSteps(t *testing.T) {
	type step struct {
		u    sparse.Vector
		loss float64
		w    []float64 // after the step
	}
	for _, tc := range []struct {
		name  string
		c     float64
		steps []step
	}{
		{"τ = L/‖u‖²", 4, []step{
			// w·u = 0.5, L = 0.5, ‖u‖² = 0.25, τ = 2: w_0 = 1 + 2·0.5.
			{sparse.Vector{Idx: []uint32{0}, Val: []float32{0.5}}, 0.5, []float64{2, 1, 1}},
			// The same triplet again has margin exactly 1: passive.
			{sparse.Vector{Idx: []uint32{0}, Val: []float32{0.5}}, 0, []float64{2, 1, 1}},
		}},
		{"τ = C", 0.5, []step{
			// w·u = 0.75, L = 0.25, ‖u‖² = 0.3125, L/‖u‖² = 0.8 > C = 0.5.
			{sparse.Vector{Idx: []uint32{0, 2}, Val: []float32{0.5, 0.25}}, 0.25, []float64{1.25, 1, 1.125}},
			// w·u = 0.625 + 0.28125; L = 0.09375, τ = 0.3.
			{sparse.Vector{Idx: []uint32{0, 2}, Val: []float32{0.5, 0.25}}, 0.09375, []float64{1.25 + 0.3*0.5, 1, 1.125 + 0.3*0.25}},
		}},
		{"negative u", 10, []step{
			// w·u = −0.5, L = 1.5, ‖u‖² = 0.25, τ = 6: w_1 = 1 − 3.
			{sparse.Vector{Idx: []uint32{1}, Val: []float32{-0.5}}, 1.5, []float64{1, -2, 1}},
		}},
		{"empty u", 1, []step{
			{sparse.Vector{}, 1, []float64{1, 1, 1}},
		}},
	} {
		d := must(NewDiagonal(3, Params{C: tc.c}))
		for k, s := range tc.steps {
			if got := d.Update(s.u); math.Abs(got-s.loss) > 1e-15 {
				t.Errorf("%s step %d: loss %v, want %v", tc.name, k, got, s.loss)
			}
			if got := d.State().Vectors[0]; !approxEqual(got, s.w, 1e-15) {
				t.Errorf("%s step %d: w = %v, want %v", tc.name, k, got, s.w)
			}
		}
		if d.Steps() != int64(len(tc.steps)) {
			t.Errorf("%s: Steps() = %d", tc.name, d.Steps())
		}
	}
}

func approxEqual(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !(math.Abs(a[i]-b[i]) <= tol) {
			return false
		}
	}
	return true
}

// TestFullSteps checks single steps of Full by hand.
func TestFullSteps(t *testing.T) {
	x, pos, neg := []float64{1, 0}, []float64{0.5, 0}, []float64{0, 0.5}
	// W = I: xᵀW(pos − neg) = 0.5, L = 0.5; ‖x‖² = 1, ‖pos − neg‖² = 0.5.
	for _, tc := range []struct {
		c    float64
		want []float64 // W after one step, row-major
	}{
		{10, []float64{1.5, -0.5, 0, 1}},    // τ = L/(‖x‖²‖d‖²) = 1
		{0.5, []float64{1.25, -0.25, 0, 1}}, // τ = C
	} {
		f := must(NewFull(2, Params{C: tc.c}))
		if s := f.Similarity(x, pos); s != 0.5 {
			t.Errorf("S_I(x, pos) = %v, want 0.5", s)
		}
		if l := f.Update(x, pos, neg); l != 0.5 {
			t.Errorf("C=%v: loss %v, want 0.5", tc.c, l)
		}
		if got := f.Matrix().RawMatrix().Data; !slices.Equal(got, tc.want) {
			t.Errorf("C=%v: W = %v, want %v", tc.c, got, tc.want)
		}
	}
	// Matrix returns a copy.
	f := must(NewFull(2, Params{C: 1}))
	f.Matrix().Set(0, 0, 42)
	if got := f.Matrix().At(0, 0); got != 1 {
		t.Errorf("changing Matrix() changed W: W_00 = %v", got)
	}
	// With τ uncapped the triplet now has margin exactly 1: passive.
	f = must(NewFull(2, Params{C: 10}))
	f.Update(x, pos, neg)
	if got := f.Similarity(x, pos) - f.Similarity(x, neg); got != 1 {
		t.Errorf("margin after the step %v, want 1", got)
	}
	before := f.Matrix().RawMatrix().Data
	if l := f.Update(x, pos, neg); l != 0 || !slices.Equal(f.Matrix().RawMatrix().Data, before) {
		t.Errorf("zero-loss step: loss %v, W %v -> %v", l, before, f.Matrix().RawMatrix().Data)
	}
	// S_W(a, b) = aᵀWb with W = [[1.5, −0.5], [0, 1]].
	if got := f.Similarity([]float64{2, 3}, []float64{5, 7}); got != 2*(1.5*5-0.5*7)+3*7 {
		t.Errorf("Similarity = %v", got)
	}
	// V = 0 (pos = neg): loss 1, W unchanged.
	if l := f.Update(x, pos, pos); l != 1 || !slices.Equal(f.Matrix().RawMatrix().Data, before) {
		t.Errorf("pos = neg: loss %v, W %v", l, f.Matrix().RawMatrix().Data)
	}
}

// TestFullTauIdentity checks ‖x(x⁺−x⁻)ᵀ‖²_F = ‖x‖²‖x⁺−x⁻‖² against an
// explicit V, and that Update adds exactly τV with τ = min(C, L/‖V‖²_F)
// computed from it.
func TestFullTauIdentity(t *testing.T) {
	const d = 7
	r := rand.New(rand.NewPCG(1, 2))
	vec := func() []float64 {
		v := make([]float64, d)
		for i := range v {
			v[i] = r.NormFloat64()
		}
		return v
	}
	for trial := range 20 {
		c := []float64{1e-3, 1e6}[trial%2] // capped and uncapped steps
		f := must(NewFull(d, Params{C: c}))
		// Start from a random W so that the identity is not special.
		for range 5 {
			f.Update(vec(), vec(), vec())
		}
		x, pos, neg := vec(), vec(), vec()
		var vv, xx, dd float64
		V := make([]float64, d*d)
		for i := range d {
			xx += x[i] * x[i]
			dd += (pos[i] - neg[i]) * (pos[i] - neg[i])
			for j := range d {
				V[i*d+j] = x[i] * (pos[j] - neg[j])
				vv += V[i*d+j] * V[i*d+j]
			}
		}
		if math.Abs(vv-xx*dd) > 1e-12*vv {
			t.Fatalf("‖V‖²_F = %v, ‖x‖²‖x⁺−x⁻‖² = %v", vv, xx*dd)
		}
		W := f.Matrix().RawMatrix().Data
		// L from the explicit W: 1 − xᵀWx⁺ + xᵀWx⁻.
		var sp, sn float64
		for i := range d {
			for j := range d {
				sp += x[i] * W[i*d+j] * pos[j]
				sn += x[i] * W[i*d+j] * neg[j]
			}
		}
		want := max(0, 1-sp+sn)
		loss := f.Update(x, pos, neg)
		if math.Abs(loss-want) > 1e-12*(1+math.Abs(sp)+math.Abs(sn)) {
			t.Fatalf("trial %d: loss %v, want %v", trial, loss, want)
		}
		tau := min(c, want/vv)
		after := f.Matrix().RawMatrix().Data
		for k := range after {
			if math.Abs(after[k]-(W[k]+tau*V[k])) > 1e-12*(1+math.Abs(W[k])) {
				t.Fatalf("trial %d: W[%d] = %v, want %v + τ·V = %v", trial, k, after[k], W[k], W[k]+tau*V[k])
			}
		}
	}
}

// TestFullLossFalls: on dense features whose classes differ in a few
// dimensions, buried under louder noise in the others, the loss falls.
func TestFullLossFalls(t *testing.T) {
	const d, classes, steps = 20, 4, 4000
	r := rand.New(rand.NewPCG(3, 4))
	protos := make([][]float64, classes)
	for c := range protos {
		protos[c] = make([]float64, d)
		for i := range 4 {
			protos[c][i] = 0.5 * r.NormFloat64()
		}
	}
	sample := func(c int) []float64 {
		v := make([]float64, d)
		for i := range v {
			v[i] = protos[c][i] + 0.1*r.NormFloat64()
			if i >= 4 {
				v[i] = 0.4 * r.NormFloat64()
			}
		}
		return v
	}
	f := must(NewFull(d, Params{C: 0.1}))
	var first, last float64
	for s := range steps {
		c := r.IntN(classes)
		o := (c + 1 + r.IntN(classes-1)) % classes
		l := f.Update(sample(c), sample(c), sample(o))
		if s < steps/5 {
			first += l
		}
		if s >= steps-steps/5 {
			last += l
		}
	}
	if !(last < 0.7*first) {
		t.Errorf("mean loss over the last 20%% %v, not well below the first 20%% %v", last/(steps/5), first/(steps/5))
	}
	t.Logf("mean loss first 20%% %.3f, last 20%% %.3f", first/(steps/5), last/(steps/5))
}

// TestDiagonalLossFalls: on triplets where some words always favour the
// positive and the others are noise, the loss falls and the informative
// words gain weight.
func TestDiagonalLossFalls(t *testing.T) {
	const vocab, k, steps = 100, 10, 4000
	r := rand.New(rand.NewPCG(5, 6))
	d := must(NewDiagonal(vocab, Params{C: 0.1}))
	var u sparse.Vector
	var first, last float64
	for s := range steps {
		u.Idx, u.Val = u.Idx[:0], u.Val[:0]
		seen := map[uint32]bool{}
		inf := uint32(r.IntN(k))
		seen[inf] = true
		for range 15 {
			seen[uint32(k+r.IntN(vocab-k))] = true
		}
		for i := range uint32(vocab) {
			if !seen[i] {
				continue
			}
			v := float32(0.3 * r.NormFloat64()) // noise: mean 0
			if i == inf {
				v = 0.1
			}
			u.Idx = append(u.Idx, i)
			u.Val = append(u.Val, v)
		}
		l := d.Update(u)
		if s < steps/5 {
			first += l
		}
		if s >= steps-steps/5 {
			last += l
		}
	}
	if !(last < 0.7*first) {
		t.Errorf("mean loss over the last 20%% %v, not well below the first 20%% %v", last/(steps/5), first/(steps/5))
	}
	w := d.Weights(nil)
	for i := range k {
		if !(w[i] > 1) {
			t.Errorf("informative word %d has weight %v, want > 1 (w₀ = 1)", i, w[i])
		}
	}
	t.Logf("mean loss first 20%% %.3f, last 20%% %.3f; informative w in [%.2f, %.2f]", first/(steps/5), last/(steps/5), slices.Min(w[:k]), slices.Max(w[:k]))
}

func TestDiagonalState(t *testing.T) {
	const dim = 50
	r := rand.New(rand.NewPCG(7, 8))
	us := make([]sparse.Vector, 300)
	for k := range us {
		for i := range uint32(dim) {
			if r.IntN(5) == 0 {
				us[k].Idx = append(us[k].Idx, i)
				us[k].Val = append(us[k].Val, float32(r.NormFloat64()))
			}
		}
	}
	p := Params{C: 0.3}
	a := must(NewDiagonal(dim, p))
	for _, u := range us[:150] {
		a.Update(u)
	}
	st := a.State()
	b := must(NewDiagonal(dim, p))
	if err := b.SetState(st); err != nil {
		t.Fatal(err)
	}
	st.Vectors[0][0] = 1e9 // State copies
	for k, u := range us[150:] {
		if la, lb := a.Update(u), b.Update(u); la != lb {
			t.Fatalf("step %d: loss %v vs %v", k, la, lb)
		}
	}
	if !slices.Equal(a.Weights(nil), b.Weights(nil)) || a.Steps() != b.Steps() {
		t.Fatal("round trip: learners differ")
	}
	// Averaging two states averages w.
	sa, sb := a.State(), must(NewDiagonal(dim, p)).State()
	avg, err := learners.Average([]learners.State{sa, sb})
	if err != nil {
		t.Fatal(err)
	}
	c := must(NewDiagonal(dim, p))
	if err := c.SetState(avg); err != nil {
		t.Fatal(err)
	}
	for i, w := range c.State().Vectors[0] {
		if want := (sa.Vectors[0][i] + 1) / 2; w != want {
			t.Fatalf("w[%d] = %v, want %v", i, w, want)
		}
	}
	if c.Steps() != 150 {
		t.Errorf("steps %d, want ⌈300/2⌉", c.Steps())
	}
	for _, bad := range []learners.State{
		{},
		{Learner: "solis-tg", Vectors: [][]float64{make([]float64, dim)}},
		{Learner: "oasis-diag", Vectors: [][]float64{make([]float64, dim-1)}},
		{Learner: "oasis-diag", Steps: -1, Vectors: [][]float64{make([]float64, dim)}},
		{Learner: "oasis-diag", Vectors: [][]float64{append(make([]float64, dim-1), math.NaN())}},
	} {
		before := c.State()
		if err := c.SetState(bad); err == nil {
			t.Errorf("SetState(%v…) accepted", bad.Learner)
		}
		if after := c.State(); !slices.Equal(after.Vectors[0], before.Vectors[0]) || after.Steps != before.Steps {
			t.Error("failed SetState changed the learner")
		}
	}
}

func TestRegistered(t *testing.T) {
	l, err := learners.New("oasis-diag", 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.Name() != "oasis-diag" || l.Dim() != 4 || l.Params()["c"] != DefaultParams().C {
		t.Errorf("New: %s %d %v", l.Name(), l.Dim(), l.Params())
	}
	if w := l.Weights(nil); !slices.Equal(w, []float32{1, 1, 1, 1}) {
		t.Errorf("initial weights %v, want W₀ = I", w)
	}
	if l, err := learners.New("oasis-diag", 4, map[string]float64{"c": 2}); err != nil || l.Params()["c"] != 2 {
		t.Errorf("New with c = 2: %v, %v", l, err)
	}
	if _, err := learners.New("oasis-diag", 4, map[string]float64{"C": 2}); err == nil {
		t.Error("parameter \"C\" accepted; the name is \"c\"")
	}
	if l, err := learners.New("oasis-diag", 4, map[string]float64{"c": 0}); err == nil || l != nil {
		t.Errorf("c = 0: %v, %v", l, err)
	}
}

func TestBadInputPanics(t *testing.T) {
	d := must(NewDiagonal(5, DefaultParams()))
	densetest.MustPanic(t, "index = Dim", "out of range", func() { d.Update(sparse.Vector{Idx: []uint32{1, 5}, Val: []float32{1, 1}}) })
	densetest.MustPanic(t, "lengths", "values", func() { d.Update(sparse.Vector{Idx: []uint32{1}, Val: nil}) })
	if w := d.Weights(nil); !slices.Equal(w, []float32{1, 1, 1, 1, 1}) || d.Steps() != 0 {
		t.Errorf("rejected Updates changed the learner: %v", w)
	}
	f := must(NewFull(3, DefaultParams()))
	ok := []float64{1, 2, 3}
	densetest.MustPanic(t, "Full.Update x", "len(x) = 2", func() { f.Update(ok[:2], ok, ok) })
	densetest.MustPanic(t, "Full.Update neg", "len(neg) = 4", func() { f.Update(ok, ok, []float64{1, 2, 3, 4}) })
	densetest.MustPanic(t, "Full.Similarity", "len(b) = 0", func() { f.Similarity(ok, nil) })
	if f.Steps() != 0 {
		t.Error("rejected Update counted")
	}
}

func TestNoAllocs(t *testing.T) {
	d := must(NewDiagonal(100, DefaultParams()))
	u := sparse.Vector{Idx: []uint32{3, 50, 99}, Val: []float32{0.5, -0.25, 1}}
	if n := testing.AllocsPerRun(100, func() { d.Update(u) }); n != 0 {
		t.Errorf("Diagonal.Update: %v allocs", n)
	}
	f := must(NewFull(16, DefaultParams()))
	r := rand.New(rand.NewPCG(1, 1))
	x, p, q := make([]float64, 16), make([]float64, 16), make([]float64, 16)
	for i := range x {
		x[i], p[i], q[i] = r.NormFloat64(), r.NormFloat64(), r.NormFloat64()
	}
	if n := testing.AllocsPerRun(100, func() { f.Update(x, p, q) }); n != 0 {
		t.Errorf("Full.Update: %v allocs", n)
	}
	if n := testing.AllocsPerRun(100, func() { f.Similarity(x, p) }); n != 0 {
		t.Errorf("Full.Similarity: %v allocs", n)
	}
}

// TestDiagonalNonNeg: on triplets with hard negatives diagonal OASIS turns
// background words negative (so the test can fail); with nonneg no weight is
// ever negative, the object words still gain weight, the same triplets give
// the same weights twice, and the option is a parameter that Params records,
// New remakes and SetState enforces.
func TestDiagonalNonNeg(t *testing.T) {
	const dim = hardtest.Vocab
	us := hardtest.Stream(1, 3000)
	off := must(learners.New("oasis-diag", dim, map[string]float64{"c": 1}))
	on := must(learners.New("oasis-diag", dim, map[string]float64{"c": 1, "nonneg": 1}))
	again := must(NewDiagonal(dim, Params{C: 1, NonNeg: true}))
	for step, u := range us {
		off.Update(u)
		if a, b := on.Update(u), again.Update(u); a != b {
			t.Fatalf("step %d: losses %v and %v on the same triplets", step, a, b)
		}
		for i, x := range on.Weights(nil) {
			if x < 0 {
				t.Fatalf("nonneg, step %d: w[%d] = %v", step, i, x)
			}
		}
	}
	wOff, wOn := off.Weights(nil), on.Weights(nil)
	neg := 0
	background := hardtest.Vocab - hardtest.Objects
	for _, x := range wOff[hardtest.Objects:] {
		if x < 0 {
			neg++
		}
	}
	if neg < background/2 {
		t.Errorf("without nonneg %d of %d background weights are negative, want at least half", neg, background)
	}
	for i := range hardtest.Objects {
		if !(wOn[i] > 1) {
			t.Errorf("nonneg: object word %d has weight %v, want > 1 (w₀)", i, wOn[i])
		}
	}
	if !slices.Equal(wOn, again.Weights(nil)) {
		t.Error("two runs on the same triplets differ")
	}
	t.Logf("background weights negative without nonneg: %d of %d; zero with it: %d", neg, background, background-countPositive(wOn[hardtest.Objects:]))

	if on.Params()["nonneg"] != 1 || off.Params()["nonneg"] != 0 {
		t.Errorf("Params: %v and %v", on.Params(), off.Params())
	}
	if l, err := learners.New("oasis-diag", dim, on.Params()); err != nil || l.Params()["nonneg"] != 1 {
		t.Errorf("New(Params()): %v, %v", l, err)
	}
	if l, err := learners.New("oasis-diag", dim, map[string]float64{"nonneg": 0.5}); err == nil || l != nil || !strings.Contains(err.Error(), "nonneg must be 0 (off) or 1 (on)") {
		t.Errorf("nonneg = 0.5: %v, %v", l, err)
	}
	if err := on.SetState(off.State()); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("nonneg: SetState of a state with negative weights: %v", err)
	}
	if err := off.SetState(on.State()); err != nil {
		t.Errorf("SetState of a non-negative state without nonneg: %v", err)
	}
	if _, err := NewFull(3, Params{C: 1, NonNeg: true}); err == nil {
		t.Error("NewFull accepted NonNeg, which only Diagonal has")
	}
}

func countPositive(w []float32) int {
	n := 0
	for _, x := range w {
		if x > 0 {
			n++
		}
	}
	return n
}
