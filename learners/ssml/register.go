package ssml

import (
	"fmt"
	"math"

	"github.com/bowline/bowline/learners"
)

// SSML registers with learners.NewDense as "ssml", a DenseBatch model
// (Dense). Its parameters are the fields of Params by their names
// lower-cased (alpha, beta, epsilon, maxiter, tol, zerotol), defaulting to
// DefaultParams; maxiter must be a whole number.
func init() {
	learners.RegisterDense("ssml", newFromParams)
}

// newFromParams applies params over the defaults and builds the learner.
func newFromParams(dims []int, params map[string]float64) (learners.DenseModel, error) {
	p := DefaultParams()
	maxIter := float64(p.MaxIter)
	fields := map[string]*float64{
		"alpha": &p.Alpha, "beta": &p.Beta, "epsilon": &p.Epsilon,
		"maxiter": &maxIter, "tol": &p.Tol, "zerotol": &p.ZeroTol,
	}
	if err := learners.AssignParams(fields, params); err != nil {
		return nil, fmt.Errorf("ssml: %w", err)
	}
	if maxIter != math.Trunc(maxIter) || math.Abs(maxIter) > 1<<53 {
		return nil, fmt.Errorf("ssml: parameter \"maxiter\" must be an integer of magnitude at most 2^53, got %v", maxIter)
	}
	p.MaxIter = int(maxIter)
	l, err := NewDense(dims, p)
	if err != nil {
		return nil, err
	}
	return l, nil
}
