package solis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
)

// lazyLearner is what the tests need of every learner of the package: the
// interface, and w_i in float64.
type lazyLearner interface {
	learners.Stateful
	weight(i int) float64
}

// reference is a naive dense implementation: update returns the loss and
// weights the dense w after the step.
type reference interface {
	update(u sparse.Vector) float64
	weights() []float64
}

func (n *naiveADA) weights() []float64 { return n.w }

// lazyCase pairs a learner with its reference for one parameter setting.
type lazyCase struct {
	name  string
	lazy  func(dim int) lazyLearner
	naive func(dim int) reference
	// shrinks is true for TG and AFB with λ > 0: their lazy form pays k
	// owed shrinks of size α as one subtraction |w| − kα, where the dense
	// loop subtracts α k times, and the two round differently (see
	// TestLazyMatchesNaive). Everything else is evaluated by the same
	// float64 expressions in the same order and must agree bit for bit.
	shrinks bool
}

func must[L any](l L, err error) L {
	if err != nil {
		panic(err)
	}
	return l
}

// bothSigns returns ps followed by a copy of each with nonneg applied.
func bothSigns[P any](ps []P, nonneg func(*P)) []P {
	out := append([]P(nil), ps...)
	for _, p := range ps {
		nonneg(&p)
		out = append(out, p)
	}
	return out
}

func lazyCases() []lazyCase {
	var cs []lazyCase
	// Each setting runs with weights of either sign and with NonNeg.
	for _, p := range bothSigns([]TGParams{{Eta: 1}, {Eta: 0.5, Lambda: 0.01}, {Eta: 2, Lambda: 0.1}, {Eta: 0.1, Lambda: 0.003}}, func(p *TGParams) { p.NonNeg = true }) {
		cs = append(cs, lazyCase{
			name:    fmt.Sprintf("tg %+v", p),
			lazy:    func(dim int) lazyLearner { return must(NewTG(dim, p)) },
			naive:   func(dim int) reference { return newNaiveTG(dim, p) },
			shrinks: p.Lambda > 0,
		})
	}
	for _, p := range bothSigns([]DAParams{{Gamma: 1}, {Lambda: 0.01, Gamma: 0.5, Rho: 0.1}, {Lambda: 0.1, Gamma: 2}, {Lambda: 0.003, Gamma: 1, Rho: 1}}, func(p *DAParams) { p.NonNeg = true }) {
		cs = append(cs, lazyCase{
			name:  fmt.Sprintf("da %+v", p),
			lazy:  func(dim int) lazyLearner { return must(NewDA(dim, p)) },
			naive: func(dim int) reference { return newNaiveDA(dim, p) },
		})
	}
	for _, p := range bothSigns([]AFBParams{{Eta: 1}, {Eta: 0.5, Lambda: 0.01, Delta: 1e-3}, {Eta: 2, Lambda: 0.1, Delta: 1}, {Eta: 0.1, Lambda: 0.003}}, func(p *AFBParams) { p.NonNeg = true }) {
		cs = append(cs, lazyCase{
			name:    fmt.Sprintf("afb %+v", p),
			lazy:    func(dim int) lazyLearner { return must(NewAFB(dim, p)) },
			naive:   func(dim int) reference { return newNaiveAFB(dim, p) },
			shrinks: p.Lambda > 0,
		})
	}
	for _, p := range bothSigns(lazyVsNaiveParams, func(p *ADAParams) { p.NonNeg = true }) {
		cs = append(cs, lazyCase{
			name:  fmt.Sprintf("ada %+v", p),
			lazy:  func(dim int) lazyLearner { return must(NewADA(dim, p)) },
			naive: func(dim int) reference { return newNaiveADA(dim, p) },
		})
	}
	return cs
}

// TestLazyMatchesNaive checks the package doc's departure 4 for every
// learner: the O(nnz) lazy learner gives the losses and weights of the
// dense loop after every step, on random data with zero-loss steps, exact
// cancellations and untouched coordinates.
//
// DA and ADA, and TG and AFB with λ = 0, must agree bit for bit. TG and AFB
// with λ > 0 pay k owed shrinks as fl(|w| − fl(kα)) while the dense loop
// rounds after each of k subtractions; each of those roundings is at most
// half an ulp of a number ≤ |w|, so one payment differs by at most
// (k + 2)·2⁻⁵³·|w|, and gradient steps and truncations are 1-Lipschitz, so
// differences add up and do not grow. The test therefore allows
//
//	|w_lazy − w_naive| ≤ 4·(K + 1)·2⁻⁵³·W,
//
// K the number of steps with L > 0 so far and W the largest |w_i| the
// reference has had, and the same bound times (‖u‖₁ + 1) on the loss. It
// also requires that both take the same steps (L > 0 for both or neither)
// and reports how many weights differ at all.
func TestLazyMatchesNaive(t *testing.T) {
	const dim, steps = 300, 600
	for _, tc := range lazyCases() {
		for seed := uint64(1); seed <= 4; seed++ {
			r := rand.New(rand.NewPCG(seed, 7))
			us := randomStream(r, dim, steps)
			lazy, naive := tc.lazy(dim), tc.naive(dim)
			var w []float32
			zeroLoss, violated, differ := 0, 0, 0
			maxW, maxErr := 0.0, 0.0
			for step, u := range us {
				got, want := lazy.Update(u), naive.update(u)
				nw := naive.weights()
				for _, x := range nw {
					maxW = max(maxW, math.Abs(x))
				}
				tol := 0.0
				if tc.shrinks {
					tol = 4 * float64(violated+2) * 0x1p-53 * maxW
				}
				var l1 float64
				for _, v := range u.Val {
					l1 += math.Abs(float64(v))
				}
				if (got > 0) != (want > 0) || math.Abs(got-want) > tol*(l1+1) || math.IsNaN(got) {
					t.Fatalf("%s seed %d step %d: loss %v (lazy) vs %v (naive)", tc.name, seed, step, got, want)
				}
				if want == 0 {
					zeroLoss++
				} else {
					violated++
				}
				w = lazy.Weights(w)
				if len(w) != dim {
					t.Fatalf("len(Weights) = %d, want %d", len(w), dim)
				}
				for i := range dim {
					lw := lazy.weight(i)
					if d := math.Abs(lw - nw[i]); !(d <= tol) {
						t.Fatalf("%s seed %d step %d: w[%d] = %v (lazy) vs %v (naive), tolerance %g", tc.name, seed, step, i, lw, nw[i], tol)
					} else if d > 0 {
						differ++
						maxErr = max(maxErr, d)
					}
					if w[i] != float32(lw) || math.Signbit(float64(w[i])) && w[i] == 0 {
						t.Fatalf("%s seed %d step %d: Weights()[%d] = %v != float32(%v) (or −0)", tc.name, seed, step, i, w[i], lw)
					}
				}
			}
			zeroW := 0
			for _, x := range w {
				if x == 0 {
					zeroW++
				}
			}
			// The data must exercise zero-loss steps, and both zero and
			// non-zero weights, or the comparison proves little.
			if zeroLoss < steps/20 || violated < steps/4 {
				t.Errorf("%s seed %d: %d zero-loss and %d violated steps of %d", tc.name, seed, zeroLoss, violated, steps)
			}
			if zeroW == 0 || zeroW == dim {
				t.Errorf("%s seed %d: %d of %d weights are zero; want some of each", tc.name, seed, zeroW, dim)
			}
			if seed == 1 {
				t.Logf("%s: %d zero-loss steps, sparsity %.2f, max |w| %.3g, %d weight comparisons inexact (max error %.2g)",
					tc.name, zeroLoss, learners.Sparsity(w), maxW, differ, maxErr)
			}
		}
	}
}

// TestOwedShrinks pins the lazy truncation of TG and AFB on a hand-computed
// case: a weight untouched by three violated steps has shrunk three times.
func TestOwedShrinks(t *testing.T) {
	a := must(NewTG(3, TGParams{Eta: 1, Lambda: 0.125}))
	// Step 1: w = 0, L = 1; v_0 = 0 + 1·1 = 1, w_0 = 1 − 0.125 = 0.875.
	if l := a.Update(sparse.Vector{Idx: []uint32{0}, Val: []float32{1}}); l != 1 {
		t.Fatalf("loss %v", l)
	}
	// Steps 2–4 violate on word 1 only; w_0 owes three shrinks.
	for range 3 {
		a.Update(sparse.Vector{Idx: []uint32{1}, Val: []float32{0.25}})
	}
	if got, want := a.weight(0), 0.875-3*0.125; got != want {
		t.Errorf("TG w_0 = %v, want %v", got, want)
	}
	// A zero-loss step shrinks nothing: w_0·8 = 4 ≥ 1.
	if l := a.Update(sparse.Vector{Idx: []uint32{0}, Val: []float32{8}}); l != 0 {
		t.Fatalf("loss %v, want 0", l)
	}
	if got := a.weight(0); got != 0.5 {
		t.Errorf("TG w_0 after a zero-loss step = %v, want 0.5", got)
	}
	// Five more violated steps elsewhere: 0.5 − 5·0.125 < 0 is clipped at 0.
	for range 5 {
		a.Update(sparse.Vector{Idx: []uint32{2}, Val: []float32{0.25}})
	}
	if got := a.weight(0); got != 0 {
		t.Errorf("TG w_0 after more shrinks than it has = %v, want 0", got)
	}

	b := must(NewAFB(2, AFBParams{Eta: 1, Lambda: 0.125, Delta: 0}))
	// Step 1: G_0 = 0.25, H = 0.5, r = 2; v = 0 + 2·0.5 = 1; w_0 = 1 − 0.25 = 0.75.
	b.Update(sparse.Vector{Idx: []uint32{0}, Val: []float32{0.5}})
	if got := b.weight(0); got != 0.75 {
		t.Fatalf("AFB w_0 = %v, want 0.75", got)
	}
	// Two violated steps on word 1: w_0 owes two shrinks of λη/H = 0.25.
	b.Update(sparse.Vector{Idx: []uint32{1}, Val: []float32{0.5}})
	b.Update(sparse.Vector{Idx: []uint32{1}, Val: []float32{-0.5}})
	if got := b.weight(0); got != 0.25 {
		t.Errorf("AFB w_0 = %v, want 0.25", got)
	}
}
