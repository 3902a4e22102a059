package solis

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
)

// TestSeparableToyAll checks the package doc's departure 1 for TG, DA and
// AFB (and ADA on the second problem; TestSeparableToy covers it on the
// first): on a separable problem the loss falls, informative words get
// positive weights and, with λ > 0, pure-noise words get exactly zero.
//
// The two problems differ in what makes a word noise, because the two
// families of learners truncate different things. On the first, noise words
// have the informative words' magnitudes and a mean-zero sign: DA and ADA
// threshold the average subgradient ḡ_i, which tends to 0 there, so λ > 0
// zeroes them. TG and AFB truncate each step's result by a fixed amount
// instead, and zero a word exactly only while its per-step push |g_i| stays
// below λ (TG: |ηu_i| ≤ ηλ; AFB: (η/H)|g_i| ≤ λη/H); noise words as loud as
// the signal keep the weight of their last push, so on that problem the test
// asks TG and AFB only for a falling loss and positive informative words.
// On the second problem noise words are ten times quieter than the
// informative ones, which every learner zeroes with λ > 0.
func TestSeparableToyAll(t *testing.T) {
	type toy struct {
		name         string
		vocab, k     int
		noise        float32
		steps        int
		checkNoise   bool // with λ > 0, noise words must be exactly zero
		lambdaIsZero bool // λ = 0: most noise words must be non-zero
	}
	loud := toy{name: "loud noise", vocab: 200, k: 40, noise: 1, steps: 10000}
	quiet := toy{name: "quiet noise", vocab: 200, k: 10, noise: 0.1, steps: 3000}
	withNoise := func(t toy) toy { t.checkNoise = true; return t }
	zeroLambda := func(t toy) toy { t.lambdaIsZero = true; return t }
	for _, tc := range []struct {
		toy  toy
		name string
		make func(dim int) learners.Stateful
	}{
		{zeroLambda(loud), "da λ=0", func(d int) learners.Stateful { return must(NewDA(d, DAParams{Lambda: 0, Gamma: 1})) }},
		{withNoise(loud), "da λ=0.005 γ=0.5", func(d int) learners.Stateful { return must(NewDA(d, DAParams{Lambda: 0.005, Gamma: 0.5})) }},
		{withNoise(loud), "da λ=0.005 γ=0.5 ρ=0.05", func(d int) learners.Stateful {
			return must(NewDA(d, DAParams{Lambda: 0.005, Gamma: 0.5, Rho: 0.05}))
		}},
		{loud, "tg λ=0.01", func(d int) learners.Stateful { return must(NewTG(d, TGParams{Eta: 1, Lambda: 0.01})) }},
		{loud, "afb λ=0.01", func(d int) learners.Stateful { return must(NewAFB(d, AFBParams{Eta: 1, Lambda: 0.01, Delta: 1e-8})) }},

		{zeroLambda(quiet), "tg λ=0", func(d int) learners.Stateful { return must(NewTG(d, TGParams{Eta: 1})) }},
		{withNoise(quiet), "tg λ=0.02", func(d int) learners.Stateful { return must(NewTG(d, TGParams{Eta: 1, Lambda: 0.02})) }},
		{zeroLambda(quiet), "afb λ=0", func(d int) learners.Stateful { return must(NewAFB(d, AFBParams{Eta: 1, Delta: 1e-8})) }},
		{withNoise(quiet), "afb λ=0.02", func(d int) learners.Stateful { return must(NewAFB(d, AFBParams{Eta: 1, Lambda: 0.02, Delta: 1e-8})) }},
		{withNoise(quiet), "da λ=0.004", func(d int) learners.Stateful { return must(NewDA(d, DAParams{Lambda: 0.004, Gamma: 1})) }},
		{withNoise(quiet), "ada λ=0.004", func(d int) learners.Stateful { return must(NewADA(d, ADAParams{Eta: 1, Lambda: 0.004, Delta: 1e-8})) }},
	} {
		for seed := uint64(1); seed <= 3; seed++ {
			name := tc.toy.name + ", " + tc.name
			a := tc.make(tc.toy.vocab)
			r := rand.New(rand.NewPCG(seed, 11))
			var u sparse.Vector
			n := tc.toy.steps
			var first, last float64
			zeroLoss := 0
			for s := range n {
				u = toyTriplet(r, tc.toy.vocab, tc.toy.k, tc.toy.noise, u)
				l := a.Update(u)
				if s < n/5 {
					first += l
				}
				if s >= n-n/5 {
					last += l
				}
				if l == 0 {
					zeroLoss++
				}
			}
			if !(last < first) || zeroLoss == 0 {
				t.Errorf("%s seed %d: summed loss over the last 20%% %v, not below the first 20%% %v; %d zero-loss steps", name, seed, last, first, zeroLoss)
			}
			w := a.Weights(nil)
			k := tc.toy.k
			for i := range k {
				if !(w[i] > 0) {
					t.Errorf("%s seed %d: informative word %d has weight %v, want > 0", name, seed, i, w[i])
				}
			}
			nonzero := 0
			for _, x := range w[k:] {
				if x != 0 {
					nonzero++
				}
			}
			if tc.toy.checkNoise && nonzero != 0 {
				t.Errorf("%s seed %d: %d noise words have non-zero weight, want 0", name, seed, nonzero)
			}
			// Without ℓ1 the noise words keep non-zero weights: it is λ that
			// zeroes them, not the data.
			if tc.toy.lambdaIsZero && nonzero < (tc.toy.vocab-k)/2 {
				t.Errorf("%s seed %d: only %d noise words non-zero; the problem does not exercise λ", name, seed, nonzero)
			}
			if seed == 1 {
				t.Logf("%s: mean loss first 20%% %.4f, last 20%% %.4f; %d zero-loss steps; informative w in [%.3f, %.3f]; %d non-zero noise words; sparsity %.3f",
					name, first/float64(n/5), last/float64(n/5), zeroLoss, slices.Min(w[:k]), slices.Max(w[:k]), nonzero, learners.Sparsity(w))
			}
		}
	}
}
