package lego

import (
	"fmt"

	"github.com/bowline/bowline/learners"
)

// LEGO registers with learners.NewDense as "lego", a learners.DenseOnline
// (*LEGO). It takes the parameters "eta", "target" and "margin" (Params), missing ones
// defaulting to DefaultParams; any other name is an error.
func init() {
	learners.RegisterDense(name, newFromParams)
}

// newFromParams applies params over the defaults and builds the learner.
func newFromParams(dims []int, params map[string]float64) (learners.DenseModel, error) {
	p := DefaultParams()
	if err := learners.AssignParams(map[string]*float64{"eta": &p.Eta, "target": &p.Target, "margin": &p.Margin}, params); err != nil {
		return nil, fmt.Errorf("lego: %w", err)
	}
	l, err := New(dims, p)
	if err != nil {
		return nil, err
	}
	return l, nil
}
