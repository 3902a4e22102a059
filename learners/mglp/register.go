package mglp

import (
	"errors"
	"fmt"

	"github.com/bowline/bowline/learners"
)

// mGLP registers with learners.NewDense as "mglp", a DenseBatch model
// (Dense). Its parameters are bits (default min(DefaultBits, Σ dims)) and
// the fields of Params by their names lower-cased, defaulting to
// DefaultParams; integer ones must be whole numbers.
func init() {
	learners.RegisterDense("mglp", newFromParams)
}

// newFromParams applies params over the defaults and builds the learner.
func newFromParams(dims []int, params map[string]float64) (learners.DenseModel, error) {
	d, err := learners.Width("mglp", dims, 0)
	if err != nil {
		return nil, err
	}
	p := DefaultParams()
	bits := float64(min(DefaultBits, d))
	neighbors, lshbits, iterations := float64(p.Neighbors), float64(p.LSHBits), float64(p.Iterations)
	seed, codingiter := float64(p.Seed), float64(p.CodingIter)
	fields := map[string]*float64{
		"bits": &bits, "lambda": &p.Lambda, "eta": &p.Eta, "tau": &p.Tau,
		"neighbors": &neighbors, "lshbits": &lshbits, "reg": &p.Reg,
		"iterations": &iterations, "seed": &seed, "codingiter": &codingiter,
		"codingtol": &p.CodingTol,
	}
	if err := learners.AssignParams(fields, params); err != nil {
		return nil, fmt.Errorf("mglp: %w", err)
	}
	var b int
	for _, f := range []struct {
		name string
		v    float64
		dst  *int
	}{
		{"bits", bits, &b}, {"neighbors", neighbors, &p.Neighbors}, {"lshbits", lshbits, &p.LSHBits},
		{"iterations", iterations, &p.Iterations}, {"codingiter", codingiter, &p.CodingIter},
	} {
		if *f.dst, err = intParam(f.name, f.v); err != nil {
			return nil, fmt.Errorf("mglp: %w", err)
		}
	}
	s, err := intParam("seed", seed)
	if err != nil {
		return nil, fmt.Errorf("mglp: %w", err)
	}
	if s < 0 {
		return nil, errors.New(`mglp: parameter "seed" must be >= 0`)
	}
	p.Seed = uint64(s)
	l, err := NewDense(dims, b, p)
	if err != nil {
		return nil, err
	}
	return l, nil
}
