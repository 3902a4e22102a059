package solis

import (
	"fmt"

	"github.com/bowline/bowline/learners"
)

// The four learners register with learners.New under their names, taking
// their hyper-parameters by the names their Params methods return; "nonneg"
// is a switch (learners.Switch: 0 or 1) and the others are numbers.
func init() {
	learners.Register("solis-tg", func(dim int, params map[string]float64) (learners.Stateful, error) {
		p := DefaultTGParams()
		if err := assign("solis-tg", map[string]*float64{"eta": &p.Eta, "lambda": &p.Lambda}, params, &p.NonNeg); err != nil {
			return nil, err
		}
		return stateful(NewTG(dim, p))
	})
	learners.Register("solis-da", func(dim int, params map[string]float64) (learners.Stateful, error) {
		p := DefaultDAParams()
		if err := assign("solis-da", map[string]*float64{"lambda": &p.Lambda, "gamma": &p.Gamma, "rho": &p.Rho}, params, &p.NonNeg); err != nil {
			return nil, err
		}
		return stateful(NewDA(dim, p))
	})
	learners.Register("solis-afb", func(dim int, params map[string]float64) (learners.Stateful, error) {
		p := DefaultAFBParams()
		if err := assign("solis-afb", map[string]*float64{"eta": &p.Eta, "lambda": &p.Lambda, "delta": &p.Delta}, params, &p.NonNeg); err != nil {
			return nil, err
		}
		return stateful(NewAFB(dim, p))
	})
	learners.Register("solis-ada", func(dim int, params map[string]float64) (learners.Stateful, error) {
		p := DefaultADAParams()
		if err := assign("solis-ada", map[string]*float64{"eta": &p.Eta, "lambda": &p.Lambda, "delta": &p.Delta}, params, &p.NonNeg); err != nil {
			return nil, err
		}
		return stateful(NewADA(dim, p))
	})
}

// assign applies params over a learner's defaults: the numbers into
// fields, and "nonneg" into the switch *nonneg.
func assign(name string, fields map[string]*float64, params map[string]float64, nonneg *bool) error {
	v := learners.SwitchValue(*nonneg)
	fields["nonneg"] = &v
	if err := learners.AssignParams(fields, params); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	on, err := learners.Switch(name, "nonneg", v)
	if err != nil {
		return err
	}
	*nonneg = on
	return nil
}

// stateful converts a constructor's result, keeping a failed one a nil
// interface rather than an interface holding a nil pointer.
func stateful[L learners.Stateful](l L, err error) (learners.Stateful, error) {
	if err != nil {
		return nil, err
	}
	return l, nil
}
