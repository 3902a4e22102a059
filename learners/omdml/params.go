package omdml

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Params are the hyper-parameters of OMDML and LOMDML. Each algorithm reads
// only its own fields (OMDML: C, Beta, Gamma; LOMDML: Beta, Gamma, Eta, Rank,
// Seed), but Validate checks all of them, so start from DefaultParams and
// change what you need.
type Params struct {
	// C (> 0) caps OMDML's passive-aggressive step τ = min(C, ℓ_i/‖V‖²_F);
	// it binds when ‖V‖_F is small, where the uncapped step would overfit
	// one triplet.
	C float64
	// Beta (β ∈ (0, 1)) is the Hedge discount: a modality that ranks an
	// updating triplet wrongly has its weight multiplied by β before the
	// weights are renormalised. Smaller β concentrates θ faster.
	Beta float64
	// Gamma (γ ≥ 0) is the margin: a step updates when f + γ > 0, and the
	// losses are ℓ = max(0, f + γ) and ℓ_i = max(0, f_i + γ) (package doc,
	// "Margin").
	Gamma float64
	// Eta (η > 0) is LOMDML's learning rate, W_i ← W_i − η∇ℓ_i.
	Eta float64
	// Rank (≥ 1) is LOMDML's r: W_i has min(Rank, n_i) rows.
	Rank int
	// Seed selects LOMDML's random W₀ (package doc); the same Seed gives
	// the same learner.
	Seed uint64
}

// DefaultParams returns a starting point for tuning; the paper picks C, β,
// γ and η per data set by cross-validation.
//
//   - C = 1, the usual passive-aggressive (PA-I) cap.
//   - β = 0.99: Theorem 1's β = √T/(√T + √ln m) is 0.987 for the paper's
//     10⁴ triplets and m = 5 modalities.
//   - γ = 1, the paper's margin (Eq. 2).
//   - η = 0.01. To first order a step changes f_i by −η‖∇ℓ_i‖²_F, which
//     is −4η‖V‖²_F while W_iᵀW_i = I (V as in OMDML), so η = ℓ_i/(4‖V‖²_F)
//     would fix the triplet in one step as OMDML's τ does. η = 0.01 suits
//     differences ‖p − p′‖² of order 1 to 10 (features scaled to [0, 1]
//     per entry, as the paper's are); η should shrink as they grow.
//   - Rank = 50, the paper's r (§5.2).
//   - Seed = 1.
func DefaultParams() Params {
	return Params{C: 1, Beta: 0.99, Gamma: 1, Eta: 0.01, Rank: 50, Seed: 1}
}

// Validate reports every parameter out of range: C and Eta must be finite
// and > 0, Beta must lie in the open interval (0, 1), Gamma must be finite
// and ≥ 0, and Rank must be ≥ 1. NaN is always an error.
func (p Params) Validate() error {
	var errs []error
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	if !finite(p.C) || p.C <= 0 {
		errs = append(errs, fmt.Errorf("omdml: aggressiveness C must be finite and > 0, got %v", p.C))
	}
	if !(p.Beta > 0 && p.Beta < 1) { // also false for NaN
		errs = append(errs, fmt.Errorf("omdml: Hedge discount Beta must be in (0, 1), got %v", p.Beta))
	}
	if !finite(p.Gamma) || p.Gamma < 0 {
		errs = append(errs, fmt.Errorf("omdml: margin Gamma must be finite and >= 0, got %v", p.Gamma))
	}
	if !finite(p.Eta) || p.Eta <= 0 {
		errs = append(errs, fmt.Errorf("omdml: learning rate Eta must be finite and > 0, got %v", p.Eta))
	}
	if p.Rank < 1 {
		errs = append(errs, fmt.Errorf("omdml: Rank must be >= 1, got %d", p.Rank))
	}
	return errors.Join(errs...)
}

// paramNames maps the names used by Params() and ParamsFromMap to setters.
var paramNames = map[string]func(*Params, float64) error{
	"c":     func(p *Params, v float64) error { p.C = v; return nil },
	"beta":  func(p *Params, v float64) error { p.Beta = v; return nil },
	"gamma": func(p *Params, v float64) error { p.Gamma = v; return nil },
	"eta":   func(p *Params, v float64) error { p.Eta = v; return nil },
	"rank": func(p *Params, v float64) error {
		if v != math.Trunc(v) || v < 1 || v > math.MaxInt32 {
			return fmt.Errorf("omdml: rank must be a whole number in [1, 2³¹), got %v", v)
		}
		p.Rank = int(v)
		return nil
	},
	"seed": func(p *Params, v float64) error {
		// 2⁵³ bounds the integers a float64 holds exactly.
		if v != math.Trunc(v) || v < 0 || v > 1<<53 {
			return fmt.Errorf("omdml: seed must be a whole number in [0, 2⁵³], got %v", v)
		}
		p.Seed = uint64(v)
		return nil
	},
}

// ParamsFromMap returns DefaultParams with the named values replaced, using
// the names that the learners' Params methods return ("c", "beta", "gamma",
// "eta", "rank", "seed"), and validates the result. An unknown name is an
// error, so that a misspelt flag does not silently keep a default.
func ParamsFromMap(m map[string]float64) (Params, error) {
	p := DefaultParams()
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names) // the first error reported does not depend on map order
	for _, k := range names {
		set, ok := paramNames[k]
		if !ok {
			return Params{}, fmt.Errorf("omdml: unknown parameter %q (want c, beta, gamma, eta, rank or seed)", k)
		}
		if err := set(&p, m[k]); err != nil {
			return Params{}, err
		}
	}
	if err := p.Validate(); err != nil {
		return Params{}, err
	}
	return p, nil
}
