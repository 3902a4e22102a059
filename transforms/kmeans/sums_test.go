package kmeans

import (
	"math"
	"testing"
)

// The stopping rule in its order: J = 0 first, then (after an update) a
// fixed point or a small relative improvement, then MaxIter.
func TestStop(t *testing.T) {
	o := Options{MaxIter: 3, Tol: 0.01}
	for _, tc := range []struct {
		name            string
		p               Progress
		prev            float64
		stop, converged bool
	}{
		{"start", Progress{Iteration: 0, Changed: 10, Objective: 5}, 0, false, false},
		{"start, J = 0", Progress{Iteration: 0, Changed: 10}, 0, true, true},
		{"start, nothing changed", Progress{Iteration: 0, Objective: 5}, 0, false, false},
		{"improving", Progress{Iteration: 1, Changed: 3, Objective: 5}, 6, false, false},
		{"fixed point", Progress{Iteration: 1, Objective: 5}, 6, true, true},
		{"unchanged labels, re-seeded", Progress{Iteration: 1, Reseeded: 1, Objective: 5}, 6, false, false},
		{"within Tol", Progress{Iteration: 2, Changed: 3, Objective: 5.96}, 6, true, true},
		{"worse", Progress{Iteration: 2, Changed: 3, Objective: 7}, 6, true, true},
		{"J = 0 after an update", Progress{Iteration: 2, Changed: 3}, 6, true, true},
		{"MaxIter", Progress{Iteration: 3, Changed: 3, Objective: 5}, 6, true, false},
		{"MaxIter, converged", Progress{Iteration: 3, Objective: 5}, 6, true, true},
		{"not a number", Progress{Iteration: 1, Changed: 3, Objective: math.NaN()}, 6, true, false},
	} {
		stop, converged := o.Stop(tc.p, tc.prev)
		if stop != tc.stop || converged != tc.converged {
			t.Errorf("%s: Stop = (%v, %v), want (%v, %v)", tc.name, stop, converged, tc.stop, tc.converged)
		}
	}
}
