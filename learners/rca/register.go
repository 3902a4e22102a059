package rca

import (
	"fmt"

	"github.com/bowline/bowline/learners"
)

// RCA registers with learners.NewDense as "rca", a learners.DenseBatch
// (*Model). It takes the parameter "epsilon" (Params), defaulting to
// DefaultParams; any other name is an error.
func init() {
	learners.RegisterDense(name, newFromParams)
}

// newFromParams applies params over the defaults and builds the model.
func newFromParams(dims []int, params map[string]float64) (learners.DenseModel, error) {
	p := DefaultParams()
	if err := learners.AssignParams(map[string]*float64{"epsilon": &p.Epsilon}, params); err != nil {
		return nil, fmt.Errorf("rca: %w", err)
	}
	m, err := New(dims, p)
	if err != nil {
		return nil, err
	}
	return m, nil
}
