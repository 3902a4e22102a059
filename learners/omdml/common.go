package omdml

import (
	"fmt"
	"math"

	"github.com/bowline/bowline/learners"
)

// Sample is one image as m modality vectors: Sample[i] ∈ R^{n_i} is the i-th
// feature type (e.g. colour histogram, GIST). A learner fixes m and every
// n_i when it is made; see CheckSample.
type Sample [][]float64

// Learner is what OMDML and LOMDML have in common. Implementations are not
// safe for concurrent use, except that Distance, Weights and Dims may be
// called concurrently with each other (they only read).
type Learner interface {
	// Name identifies the algorithm: "omdml" or "lomdml".
	Name() string
	// Dims returns n_1, …, n_m.
	Dims() []int
	// CheckSample reports why a sample cannot be given to Update or
	// Distance, which panic on it.
	CheckSample(Sample) error
	// Update learns from the triplet (p, pos, neg), p being more similar to
	// pos than to neg, and returns the hinge loss max(0, f + γ) suffered
	// before the update (package doc).
	Update(p, pos, neg Sample) float64
	// Distance returns d(a, b) = Σ_i θ_i d_i(a, b).
	Distance(a, b Sample) float64
	// Weights returns a copy of θ.
	Weights() []float64
	// Params returns the hyper-parameters the algorithm uses, by name.
	Params() map[string]float64
	// Steps returns the number of Updates so far.
	Steps() int64
	// State exports the model for averaging (learners.Average), and
	// SetState imports one; the layout of the Vectors is documented on
	// each learner's State method.
	State() learners.State
	SetState(learners.State) error
}

// core is the part of the model both algorithms share.
type core struct {
	name  string
	dims  []int
	theta []float64 // Hedge weights θ, on the simplex
	f     []float64 // scratch: f_i of the current step
	p     Params
	steps int64
}

func newCore(name string, dims []int, p Params) (core, error) {
	if err := p.Validate(); err != nil {
		return core{}, err
	}
	if len(dims) == 0 {
		return core{}, fmt.Errorf("%s: need at least one modality", name)
	}
	for i, n := range dims {
		if n <= 0 {
			return core{}, fmt.Errorf("%s: modality %d has dimension %d, want > 0", name, i, n)
		}
	}
	m := len(dims)
	c := core{
		name:  name,
		dims:  append([]int(nil), dims...),
		theta: make([]float64, m),
		f:     make([]float64, m),
		p:     p,
	}
	for i := range c.theta {
		c.theta[i] = 1 / float64(m)
	}
	return c, nil
}

// Name returns the algorithm's name.
func (c *core) Name() string { return c.name }

// Dims returns a copy of n_1, …, n_m.
func (c *core) Dims() []int { return append([]int(nil), c.dims...) }

// Weights returns a copy of θ.
func (c *core) Weights() []float64 { return append([]float64(nil), c.theta...) }

// Steps returns the number of Updates so far, zero-loss steps included.
func (c *core) Steps() int64 { return c.steps }

// CheckSample reports why s cannot be given to this learner: a number of
// modalities other than m, a modality whose length is not n_i, or a NaN or
// infinite value. Callers validate at the input boundary with it; Update and
// Distance panic on the same conditions.
func (c *core) CheckSample(s Sample) error {
	if err := c.sampleError(s); err != nil {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	return nil
}

// sampleError is CheckSample without the learner's name in front, for
// callers that put their own context there (Dense.Update).
func (c *core) sampleError(s Sample) error {
	if len(s) != len(c.dims) {
		return fmt.Errorf("sample has %d modalities, want %d", len(s), len(c.dims))
	}
	for i, v := range s {
		if len(v) != c.dims[i] {
			return fmt.Errorf("modality %d has %d values, want %d", i, len(v), c.dims[i])
		}
		for j, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("modality %d value %d is %v", i, j, x)
			}
		}
	}
	return nil
}

// mustCheck panics, naming the method and the argument, if CheckSample
// rejects any of ss. Passing unchecked data to Update is a programmer error,
// and checking here costs O(Σ n_i), less than the O(Σ n_i²) or O(Σ r_i n_i)
// of the step, while a NaN let through would silently poison the model.
func (c *core) mustCheck(method string, names []string, ss ...Sample) {
	for k, s := range ss {
		if err := c.CheckSample(s); err != nil {
			panic(fmt.Sprintf("%s.%s: %s: %v", c.name, method, names[k], err))
		}
	}
}

var (
	tripletNames = []string{"p", "pos", "neg"}
	pairNames    = []string{"a", "b"}
)

// combine returns f = Σ_i θ_i f_i over the current c.f.
func (c *core) combine() float64 {
	var f float64
	for i, fi := range c.f {
		f += c.theta[i] * fi
	}
	return f
}

// hedge performs Eq. (6) from the current c.f:
//
//	θ_i ← θ_i β^{z_i} / Σ_j θ_j β^{z_j},  z_i = [f_i > 0].
//
// When every z_i is equal the normalised weights are unchanged in exact
// arithmetic, so θ is left as it is rather than rounded through a
// multiplication and a division. If every weight underflowed to 0 (which
// would need β below about 1e-300) θ is left as it was.
func (c *core) hedge() {
	wrong := 0
	for _, fi := range c.f {
		if fi > 0 {
			wrong++
		}
	}
	if wrong == 0 || wrong == len(c.f) {
		return
	}
	var sum float64
	for i, fi := range c.f {
		if fi > 0 {
			sum += c.theta[i] * c.p.Beta
		} else {
			sum += c.theta[i]
		}
	}
	if !(sum > 0) {
		return
	}
	for i, fi := range c.f {
		if fi > 0 {
			c.theta[i] = c.theta[i] * c.p.Beta / sum
		} else {
			c.theta[i] /= sum
		}
	}
}

// checkState validates st with learners.CheckState (name, steps, number and
// lengths of the vectors, finite values; want[k] is the length of
// Vectors[k]) and checks that Vectors[0] is a usable θ.
func (c *core) checkState(st learners.State, want []int) error {
	if err := learners.CheckState(st, c.name, want...); err != nil {
		return err
	}
	var sum float64
	for i, t := range st.Vectors[0] {
		if t < 0 {
			return fmt.Errorf("%s: SetState: weight θ_%d = %v is negative", c.name, i, t)
		}
		sum += t
	}
	if !(sum > 0) {
		return fmt.Errorf("%s: SetState: weights θ are all zero", c.name)
	}
	return nil
}

// setTheta sets θ from a checked state. A θ within 1e-9 of the simplex (an
// average of states, whose sums round differently) is copied bit for bit, so
// that State followed by SetState changes nothing; any other is
// renormalised.
func (c *core) setTheta(theta []float64, steps int64) {
	var sum float64
	for _, t := range theta {
		sum += t
	}
	copy(c.theta, theta)
	if math.Abs(sum-1) > 1e-9 {
		for i := range c.theta {
			c.theta[i] /= sum
		}
	}
	c.steps = steps
}
