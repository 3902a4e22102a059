package itq

import (
	"fmt"

	"github.com/bowline/bowline/learners"
)

// ITQ, CCA-ITQ and LSH register with learners.NewDense under their kinds,
// as DenseBatch models (Dense). Parameters by name: bits (default
// min(DefaultBits, Σ dims)) and seed for all three, iterations for itq and
// cca-itq, reg for cca-itq; the defaults of the others are DefaultOptions'.
// Integer parameters must be whole numbers.
func init() {
	for _, kind := range []string{"itq", "cca-itq", "lsh"} {
		learners.RegisterDense(kind, func(dims []int, params map[string]float64) (learners.DenseModel, error) {
			return newFromParams(kind, dims, params)
		})
	}
}

// newFromParams applies params over the defaults and builds the learner.
func newFromParams(kind string, dims []int, params map[string]float64) (learners.DenseModel, error) {
	d, err := learners.Width(kind, dims, 0)
	if err != nil {
		return nil, err
	}
	opt := DefaultOptions()
	bits, iters, seed, reg := float64(min(DefaultBits, d)), float64(opt.Iterations), float64(opt.Seed), opt.Reg
	fields := map[string]*float64{"bits": &bits, "seed": &seed}
	if kind != "lsh" {
		fields["iterations"] = &iters
	}
	if kind == "cca-itq" {
		fields["reg"] = &reg
	}
	if err := learners.AssignParams(fields, params); err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	b, err := intParam("bits", bits)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	if opt.Iterations, err = intParam("iterations", iters); err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	if opt.Seed, err = seedParam(seed); err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	opt.Reg = reg
	l, err := NewDense(kind, dims, b, opt)
	if err != nil {
		return nil, err
	}
	return l, nil
}
