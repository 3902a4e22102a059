package learners

import (
	"errors"
	"fmt"
	"math"
)

// State is a learner's model as plain data: everything that defines its
// weights besides the hyper-parameters, so that a sharded trainer can ship
// it between workers, average the states of several shards and restore the
// average into the learners of the next round (package doc, "Sharded
// training"). Its fields are exported and of plain
// types so that Beam's coders encode it.
//
// Each learner documents the layout of its Vectors (for example SOLIS-ADA's
// are the running subgradient sum s and the squared sum G). Vectors are
// averaged element-wise by Average, so a learner exports only quantities
// whose average is meaningful: weights that are up to date, and the
// accumulators that define them.
type State struct {
	// Learner is the Name of the learner that made the state.
	Learner string
	// Steps is the number of Updates that led to the state, zero-loss steps
	// included.
	Steps int64
	// Vectors are the learner's per-coordinate quantities, each of one
	// fixed length.
	Vectors [][]float64
}

// Stateful is an online learner whose model can be exported and imported,
// as sharded training needs.
type Stateful interface {
	Online
	// State returns a copy of the model; later Updates do not change it,
	// and changing it does not change the learner. It costs O(Dim()).
	State() State
	// SetState replaces the model by a copy of st, keeping the
	// hyper-parameters. It returns an error, and leaves the learner as it
	// was, unless st has the learner's Name, its layout of Vectors, and
	// values the learner could have reached by Updates or by averaging
	// such states.
	SetState(st State) error
}

// Average returns the element-wise mean of states, which must all come from
// the same learner and share the number and lengths of their Vectors:
//
//	Vectors[k][i] = (1/n) Σ_j states[j].Vectors[k][i],
//	Steps         = ⌈(1/n) Σ_j states[j].Steps⌉.
//
// The sums run in the order of states, so the result depends on it only
// through rounding; a caller that wants a reproducible model fixes the
// order. The average of one state is that state, bit for bit, which is what
// makes sharded training with one shard equal the sequential learner.
//
// Steps is rounded up, not to nearest, so that the average of states of
// which any took a step has taken one: learners whose weights divide by the
// step count (SOLIS-DA and SOLIS-ADA) reject a state with non-zero sums and
// zero steps. The result shares no memory with states.
func Average(states []State) (State, error) {
	if len(states) == 0 {
		return State{}, errors.New("learners: Average of no states")
	}
	first := states[0]
	var steps, carry int64 // Σ Steps = steps·n + carry, without overflow
	n := int64(len(states))
	for j, st := range states {
		if st.Learner != first.Learner {
			return State{}, fmt.Errorf("learners: Average: state %d is of learner %q, state 0 of %q", j, st.Learner, first.Learner)
		}
		if len(st.Vectors) != len(first.Vectors) {
			return State{}, fmt.Errorf("learners: Average: %s state %d has %d vectors, state 0 has %d", first.Learner, j, len(st.Vectors), len(first.Vectors))
		}
		for k, v := range st.Vectors {
			if len(v) != len(first.Vectors[k]) {
				return State{}, fmt.Errorf("learners: Average: %s state %d vector %d has length %d, state 0's has %d", first.Learner, j, k, len(v), len(first.Vectors[k]))
			}
		}
		if st.Steps < 0 {
			return State{}, fmt.Errorf("learners: Average: %s state %d has %d steps", first.Learner, j, st.Steps)
		}
		steps += st.Steps / n
		carry += st.Steps % n
		steps += carry / n
		carry %= n
	}
	if carry > 0 {
		steps++
	}
	out := State{Learner: first.Learner, Steps: steps, Vectors: make([][]float64, len(first.Vectors))}
	for k, v := range first.Vectors {
		sum := make([]float64, len(v))
		copy(sum, v) // not 0 + v, which would turn −0 into +0
		for _, st := range states[1:] {
			for i, x := range st.Vectors[k] {
				sum[i] += x
			}
		}
		if n > 1 {
			nf := float64(n)
			for i := range sum {
				sum[i] /= nf
			}
		}
		out.Vectors[k] = sum
	}
	return out, nil
}

// CheckState reports whether st could be restored into a learner named name
// whose Vectors have the lengths want: the name, a step count ≥ 0, the
// number and lengths of the vectors, and finite values. Learners call it
// first in SetState and then check what is particular to them.
func CheckState(st State, name string, want ...int) error {
	if st.Learner != name {
		return fmt.Errorf("%s: SetState: state is of learner %q", name, st.Learner)
	}
	if st.Steps < 0 {
		return fmt.Errorf("%s: SetState: negative step count %d", name, st.Steps)
	}
	if len(st.Vectors) != len(want) {
		return fmt.Errorf("%s: SetState: state has %d vectors, want %d", name, len(st.Vectors), len(want))
	}
	for k, v := range st.Vectors {
		if len(v) != want[k] {
			return fmt.Errorf("%s: SetState: state vector %d has length %d, want %d", name, k, len(v), want[k])
		}
		for i, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("%s: SetState: state vector %d element %d is %v", name, k, i, x)
			}
		}
	}
	return nil
}
