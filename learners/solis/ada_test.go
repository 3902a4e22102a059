package solis

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
)

// naiveADA is the reference: the paper's Algorithm 4 loop with dense vectors,
// as corrected in the package doc's departures 1 and 2 (true subgradient
// g = −u when L > 0; ḡ over all steps), re-materialising every weight from
// the closed form (22a) after every step.
type naiveADA struct {
	p    ADAParams
	t    int64
	s, G []float64 // Σ g, Σ g²
	w    []float64 // dense w_t
}

func newNaiveADA(dim int, p ADAParams) *naiveADA {
	n := &naiveADA{p: p, s: make([]float64, dim), G: make([]float64, dim), w: make([]float64, dim)}
	n.materialise()
	return n
}

func sgn(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// materialise sets every w_i = sign(−ḡ_i)·(η t/H_ii)·max(0, |ḡ_i| − λ), or
// with NonNeg (η t/H_ii)·max(0, −ḡ_i − λ), with ḡ = s/t and
// H_ii = δ + √G_i (0 where s_i = 0 or H_ii = 0).
func (n *naiveADA) materialise() {
	t := float64(n.t)
	for i := range n.w {
		H := n.p.Delta + math.Sqrt(n.G[i])
		if n.s[i] == 0 || H == 0 {
			n.w[i] = 0
			continue
		}
		gbar := n.s[i] / t
		if n.p.NonNeg {
			n.w[i] = (n.p.Eta * t / H) * math.Max(0, -gbar-n.p.Lambda)
			continue
		}
		n.w[i] = sgn(-gbar) * (n.p.Eta * t / H) * math.Max(0, math.Abs(gbar)-n.p.Lambda)
	}
}

func (n *naiveADA) update(u sparse.Vector) float64 {
	ud := make([]float64, len(n.w))
	for k, i := range u.Idx {
		ud[i] = float64(u.Val[k])
	}
	var dot float64
	for i := range n.w {
		dot += float64(n.w[i] * ud[i])
	}
	loss := math.Max(0, 1-dot)
	g := make([]float64, len(n.w)) // subgradient: −u if L > 0, else 0
	if loss > 0 {
		for i := range g {
			g[i] = -ud[i]
		}
	}
	for i := range g {
		n.s[i] += g[i]
		n.G[i] += float64(g[i] * g[i])
	}
	n.t++
	n.materialise()
	return loss
}

// randomU returns a random sparse vector with about nnz non-zeros of mixed
// sign below dim.
func randomU(r *rand.Rand, dim, nnz int) sparse.Vector {
	var u sparse.Vector
	p := float64(nnz) / float64(dim)
	for i := 0; i < dim; i++ {
		if r.Float64() < p {
			v := float32(r.NormFloat64()*0.5 + 0.2)
			if r.IntN(10) == 0 {
				v = float32(r.IntN(5)-2) / 4 // exact quarters, to get exact cancellations in s
			}
			if v == 0 {
				continue
			}
			u.Idx = append(u.Idx, uint32(i))
			u.Val = append(u.Val, v)
		}
	}
	return u
}

func scaled(u sparse.Vector, f float32) sparse.Vector {
	v := sparse.Vector{Idx: slices.Clone(u.Idx), Val: slices.Clone(u.Val)}
	for k := range v.Val {
		v.Val[k] *= f
	}
	return v
}

// randomStream returns n triplet features over dim coordinates: fresh random
// ones and repeats of earlier ones scaled up (mostly easy, so that L = 0
// happens once the learner has seen them) or negated, all on the first
// dim−20 coordinates. The next 10 coordinates each get one pair of
// single-word triplets {i: v}, {i: −v}: both have a positive loss (w_i = 0
// before the first, w_i·(−v) ≤ 0 before the second), so s_i returns to
// exactly 0 with G_i > 0. The last 10 are never touched (G_i = 0, so
// H_ii = 0 when δ = 0).
func randomStream(r *rand.Rand, dim, n int) []sparse.Vector {
	var us, fresh []sparse.Vector
	cancel := dim - 20
	for len(us) < n {
		switch k := r.IntN(20); {
		case len(fresh) > 10 && k < 8:
			us = append(us, scaled(fresh[r.IntN(len(fresh))], float32(5+r.IntN(20))))
		case len(fresh) > 10 && k == 8:
			us = append(us, scaled(fresh[r.IntN(len(fresh))], -1))
		case k == 9 && cancel < dim-10 && len(us)+2 <= n:
			v := float32(0.25 + r.Float64())
			us = append(us,
				sparse.Vector{Idx: []uint32{uint32(cancel)}, Val: []float32{v}},
				sparse.Vector{Idx: []uint32{uint32(cancel)}, Val: []float32{-v}})
			cancel++
		default:
			fresh = append(fresh, randomU(r, dim-20, 4+r.IntN(30)))
			us = append(us, fresh[len(fresh)-1])
		}
	}
	return us
}

var lazyVsNaiveParams = []ADAParams{
	{Eta: 1, Lambda: 0, Delta: 0},
	{Eta: 0.5, Lambda: 0.01, Delta: 1e-3},
	{Eta: 2, Lambda: 0.1, Delta: 1},
	{Eta: 0.1, Lambda: 0.003, Delta: 0},
}

// TestZeroLossStepShrinks pins the decision that every step, zero-loss ones
// included, redefines w (adaptive RDA), unlike Algorithm 4, which writes w
// only when L > 0: with λ > 0 a zero-loss step shrinks |w_i| by ηλ/H_ii.
func TestZeroLossStepShrinks(t *testing.T) {
	p := ADAParams{Eta: 1, Lambda: 0.01, Delta: 0}
	a, err := NewADA(3, p)
	if err != nil {
		t.Fatal(err)
	}
	u := sparse.Vector{Idx: []uint32{0, 2}, Val: []float32{0.5, 0.25}}
	if loss := a.Update(u); loss != 1 {
		t.Fatalf("first loss = %v, want 1", loss)
	}
	// t = 1, s = (−0.5, 0, −0.25), G = (0.25, 0, 0.0625): w_0 = 1/0.5·(0.5−0.01) = 0.98.
	if got := a.weight(0); math.Abs(got-0.98) > 1e-15 {
		t.Fatalf("w_0 = %v, want 0.98", got)
	}
	// A triplet scaled so that w·u ≥ 1: zero loss, s and G unchanged, t = 2.
	big := sparse.Vector{Idx: []uint32{0}, Val: []float32{4}}
	if loss := a.Update(big); loss != 0 {
		t.Fatalf("loss = %v, want 0", loss)
	}
	if got, want := a.weight(0), 1/0.5*(0.5-2*0.01); math.Abs(got-want) > 1e-15 {
		t.Fatalf("after a zero-loss step w_0 = %v, want %v (shrunk by ηλ/H = 0.02)", got, want)
	}
	if a.weight(1) != 0 {
		t.Fatalf("untouched w_1 = %v, want 0", a.weight(1))
	}
}

// toyTriplet draws a triplet over a vocabulary where words 0..k-1 are
// informative and words k..V-1 are noise. The query has one informative word,
// which its positive shares and its negative does not (the negative has
// another one), and 20 noise words; the positive and the negative each keep
// every one of those with probability 1/2 and add 10 random noise words. So
// u is positive on the informative word and of either sign, with mean 0, on
// the noise words. Word values are drawn from [0.5, 1], times noise for the
// noise words.
func toyTriplet(r *rand.Rand, vocab, k int, noise float32, dst sparse.Vector) sparse.Vector {
	words := func(ids []int) sparse.Vector {
		slices.Sort(ids)
		ids = slices.Compact(ids)
		var v sparse.Vector
		for _, i := range ids {
			x := float32(0.5 + 0.5*r.Float64())
			if i >= k {
				x *= noise
			}
			v.Idx = append(v.Idx, uint32(i))
			v.Val = append(v.Val, x)
		}
		return v
	}
	perm := r.Perm(k)
	x := []int{perm[0]}
	pos := []int{perm[0]}
	neg := []int{perm[1]}
	for range 20 {
		w := k + r.IntN(vocab-k)
		x = append(x, w)
		if r.IntN(2) == 0 {
			pos = append(pos, w)
		}
		if r.IntN(2) == 0 {
			neg = append(neg, w)
		}
	}
	for range 10 {
		pos = append(pos, k+r.IntN(vocab-k))
		neg = append(neg, k+r.IntN(vocab-k))
	}
	return sparse.TripletFeature(dst, words(x), words(pos), words(neg))
}

// TestSeparableToy checks the package doc's departure 1 on a separable
// problem: the loss falls, informative words get positive weights and, with
// λ > 0, pure noise words get exactly zero.
func TestSeparableToy(t *testing.T) {
	const vocab, k, steps = 200, 40, 10000
	for _, tc := range []struct {
		lambda float64
		seed   uint64
	}{{0, 1}, {0, 2}, {0.004, 1}, {0.004, 2}, {0.004, 3}, {0.004, 4}, {0.004, 5}, {0.004, 6}} {
		lambda := tc.lambda
		p := ADAParams{Eta: 1, Lambda: lambda, Delta: 1e-8}
		a, err := NewADA(vocab, p)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(tc.seed, 11))
		var u sparse.Vector
		losses := make([]float64, steps)
		zeroLoss := 0
		for s := range steps {
			u = toyTriplet(r, vocab, k, 1, u)
			losses[s] = a.Update(u)
			if losses[s] == 0 {
				zeroLoss++
			}
		}
		mean := func(xs []float64) float64 {
			var m float64
			for _, x := range xs {
				m += x
			}
			return m / float64(len(xs))
		}
		first, last := mean(losses[:steps/5]), mean(losses[steps-steps/5:])
		if !(last < first) {
			t.Errorf("λ=%v: mean loss over the last 20%% %v, not below the first 20%% %v", lambda, last, first)
		}
		if zeroLoss == 0 {
			t.Errorf("λ=%v: loss never reached 0", lambda)
		}
		w := a.Weights(nil)
		for i := range k {
			if !(w[i] > 0) {
				t.Errorf("λ=%v: informative word %d has weight %v, want > 0", lambda, i, w[i])
			}
		}
		nonzeroNoise, maxNoise := 0, float32(0)
		for i := k; i < vocab; i++ {
			if w[i] != 0 {
				nonzeroNoise++
			}
			maxNoise = max(maxNoise, w[i], -w[i])
		}
		if lambda > 0 && nonzeroNoise != 0 {
			t.Errorf("λ=%v: %d noise words have non-zero weight, want 0", lambda, nonzeroNoise)
		}
		// Without ℓ1 the noise words keep non-zero weights: it is λ that
		// zeroes them, not the data.
		if lambda == 0 && nonzeroNoise < (vocab-k)/2 {
			t.Errorf("λ=0: only %d noise words non-zero; the toy problem does not exercise λ", nonzeroNoise)
		}
		t.Logf("λ=%v: mean loss first 20%% %.4f, last 20%% %.4f; %d zero-loss steps; informative w in [%.3f, %.3f]; %d non-zero noise words, max |w| %.3f; sparsity %.3f",
			lambda, first, last, zeroLoss, slices.Min(w[:k]), slices.Max(w[:k]), nonzeroNoise, maxNoise, learners.Sparsity(w))
	}
}

func TestParamsValidate(t *testing.T) {
	if err := DefaultADAParams().Validate(); err != nil {
		t.Fatalf("default params: %v", err)
	}
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		p    ADAParams
		want string // substring of the error; "" for valid
	}{
		{ADAParams{Eta: 1, Lambda: 0, Delta: 0}, ""},
		{ADAParams{Eta: 0.1, Lambda: 0.5, Delta: 2}, ""},
		{ADAParams{Eta: -1, Lambda: 0, Delta: 0}, "Eta"},
		{ADAParams{Eta: 0, Lambda: 0, Delta: 0}, "Eta"},
		{ADAParams{Eta: nan, Lambda: 0, Delta: 0}, "Eta"},
		{ADAParams{Eta: inf, Lambda: 0, Delta: 0}, "Eta"},
		{ADAParams{Eta: 1, Lambda: nan, Delta: 0}, "Lambda"},
		{ADAParams{Eta: 1, Lambda: -0.1, Delta: 0}, "Lambda"},
		{ADAParams{Eta: 1, Lambda: 0, Delta: -1}, "Delta"},
		{ADAParams{Eta: 1, Lambda: 0, Delta: nan}, "Delta"},
	} {
		err := tc.p.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: unexpected error %v", tc.p, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: error %v, want one about %s", tc.p, err, tc.want)
		}
		if _, nerr := NewADA(10, tc.p); (nerr == nil) != (err == nil) {
			t.Errorf("%+v: NewADA error %v disagrees with Validate %v", tc.p, nerr, err)
		}
	}
	// All problems are reported at once.
	if err := (ADAParams{Eta: -1, Lambda: nan, Delta: -1}).Validate(); err == nil ||
		!strings.Contains(err.Error(), "Eta") || !strings.Contains(err.Error(), "Lambda") || !strings.Contains(err.Error(), "Delta") {
		t.Errorf("want all three parameters named, got %v", err)
	}
	for _, dim := range []int{0, -3} {
		if _, err := NewADA(dim, DefaultADAParams()); err == nil || !strings.Contains(err.Error(), "dimension") {
			t.Errorf("NewADA(%d): error %v, want a dimension error", dim, err)
		}
	}
}

func TestADASetStateErrors(t *testing.T) {
	const dim = 4
	a, _ := NewADA(dim, DefaultADAParams())
	a.Update(sparse.Vector{Idx: []uint32{0, 3}, Val: []float32{0.5, -0.25}})
	good := a.State()
	for _, tc := range []struct {
		name string
		st   learners.State
	}{
		{"wrong learner", modState(good, func(s *learners.State) { s.Learner = "solis-da" })},
		{"short s", modState(good, func(s *learners.State) { s.Vectors[0] = s.Vectors[0][:dim-1] })},
		{"long G", modState(good, func(s *learners.State) { s.Vectors[1] = append(s.Vectors[1], 0) })},
		{"one vector", modState(good, func(s *learners.State) { s.Vectors = s.Vectors[:1] })},
		{"zero value", learners.State{}},
		{"negative steps", modState(good, func(s *learners.State) { s.Steps = -1 })},
		{"NaN s", modState(good, func(s *learners.State) { s.Vectors[0][1] = math.NaN() })},
		{"Inf s", modState(good, func(s *learners.State) { s.Vectors[0][1] = math.Inf(-1) })},
		{"negative G", modState(good, func(s *learners.State) { s.Vectors[1][2] = -1 })},
		{"NaN G", modState(good, func(s *learners.State) { s.Vectors[1][2] = math.NaN() })},
		{"steps=0 with s≠0", modState(good, func(s *learners.State) { s.Steps = 0 })},
		{"G=0 with s≠0", modState(good, func(s *learners.State) { s.Vectors[1][0] = 0 })},
	} {
		b, _ := NewADA(dim, DefaultADAParams())
		b.Update(sparse.Vector{Idx: []uint32{2}, Val: []float32{1}})
		before := b.State()
		if err := b.SetState(tc.st); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
		if !sameState(b.State(), before) {
			t.Errorf("%s: failed SetState changed the learner", tc.name)
		}
	}
	if err := a.SetState(good); err != nil {
		t.Errorf("own state rejected: %v", err)
	}
}

func TestInterface(t *testing.T) {
	p := ADAParams{Eta: 0.5, Lambda: 0.25, Delta: 0.125}
	var l learners.Online
	l, err := NewADA(7, p)
	if err != nil {
		t.Fatal(err)
	}
	if l.Name() != "solis-ada" || l.Dim() != 7 {
		t.Fatalf("Name %q Dim %d", l.Name(), l.Dim())
	}
	if got := l.Params(); len(got) != 4 || got["nonneg"] != 0 || got["eta"] != 0.5 || got["lambda"] != 0.25 || got["delta"] != 0.125 {
		t.Fatalf("Params() = %v", got)
	}
	// Weights starts at 0, grows a short dst and reuses a long one.
	w := l.Weights(make([]float32, 2, 3))
	if len(w) != 7 || learners.Sparsity(w) != 1 {
		t.Fatalf("initial weights %v", w)
	}
	long := make([]float32, 20)
	long[0] = 42
	if w := l.Weights(long); len(w) != 7 || &w[0] != &long[0] || w[0] != 0 {
		t.Fatalf("Weights(long) = %v", w)
	}
}
