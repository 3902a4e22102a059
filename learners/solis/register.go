package solis

import (
	"github.com/bowline/bowline/learners"
)

// The four learners register with learners.New under their names, taking
// their hyper-parameters by the names their Params methods return; "nonneg"
// is a switch (learners.Switch: 0 or 1) and the others are numbers.
func init() {
	learners.Register("solis-tg", func(dim int, params map[string]float64) (learners.Stateful, error) {
		p := DefaultTGParams()
		if err := learners.AssignSwitched("solis-tg", map[string]*float64{"eta": &p.Eta, "lambda": &p.Lambda}, map[string]*bool{"nonneg": &p.NonNeg}, params); err != nil {
			return nil, err
		}
		return stateful(NewTG(dim, p))
	})
	learners.Register("solis-da", func(dim int, params map[string]float64) (learners.Stateful, error) {
		p := DefaultDAParams()
		if err := learners.AssignSwitched("solis-da", map[string]*float64{"lambda": &p.Lambda, "gamma": &p.Gamma, "rho": &p.Rho}, map[string]*bool{"nonneg": &p.NonNeg}, params); err != nil {
			return nil, err
		}
		return stateful(NewDA(dim, p))
	})
	learners.Register("solis-afb", func(dim int, params map[string]float64) (learners.Stateful, error) {
		p := DefaultAFBParams()
		if err := learners.AssignSwitched("solis-afb", map[string]*float64{"eta": &p.Eta, "lambda": &p.Lambda, "delta": &p.Delta}, map[string]*bool{"nonneg": &p.NonNeg}, params); err != nil {
			return nil, err
		}
		return stateful(NewAFB(dim, p))
	})
	learners.Register("solis-ada", func(dim int, params map[string]float64) (learners.Stateful, error) {
		p := DefaultADAParams()
		if err := learners.AssignSwitched("solis-ada", map[string]*float64{"eta": &p.Eta, "lambda": &p.Lambda, "delta": &p.Delta}, map[string]*bool{"nonneg": &p.NonNeg}, params); err != nil {
			return nil, err
		}
		return stateful(NewADA(dim, p))
	})
}

// stateful converts a constructor's result, keeping a failed one a nil
// interface rather than an interface holding a nil pointer.
func stateful[L learners.Stateful](l L, err error) (learners.Stateful, error) {
	if err != nil {
		return nil, err
	}
	return l, nil
}
