package solis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
)

// sameState reports whether a and b are equal, bit for bit in value.
func sameState(a, b learners.State) bool {
	if a.Learner != b.Learner || a.Steps != b.Steps || len(a.Vectors) != len(b.Vectors) {
		return false
	}
	for k := range a.Vectors {
		if !slices.Equal(a.Vectors[k], b.Vectors[k]) {
			return false
		}
	}
	return true
}

// modState returns a deep copy of st changed by mod.
func modState(st learners.State, mod func(*learners.State)) learners.State {
	c := learners.State{Learner: st.Learner, Steps: st.Steps}
	for _, v := range st.Vectors {
		c.Vectors = append(c.Vectors, slices.Clone(v))
	}
	mod(&c)
	return c
}

// stateCases returns one constructor per learner, with λ > 0 so that TG and
// AFB owe shrinks at every snapshot.
func stateCases() []struct {
	name string
	make func(dim int) lazyLearner
} {
	return []struct {
		name string
		make func(dim int) lazyLearner
	}{
		{"solis-tg", func(d int) lazyLearner { return must(NewTG(d, TGParams{Eta: 0.5, Lambda: 0.01})) }},
		{"solis-da", func(d int) lazyLearner { return must(NewDA(d, DAParams{Lambda: 0.01, Gamma: 0.5, Rho: 0.1})) }},
		{"solis-afb", func(d int) lazyLearner { return must(NewAFB(d, AFBParams{Eta: 0.5, Lambda: 0.01, Delta: 1e-3})) }},
		{"solis-ada", func(d int) lazyLearner { return must(NewADA(d, ADAParams{Eta: 0.7, Lambda: 0.005, Delta: 0.01})) }},
	}
}

// sameWeights fails the test unless a and b have the same weights, bit for
// bit in float64 value, and the same Weights().
func sameWeights(t *testing.T, what string, a, b lazyLearner) {
	t.Helper()
	for i := range a.Dim() {
		if wa, wb := a.weight(i), b.weight(i); wa != wb {
			t.Fatalf("%s: w[%d] = %v vs %v", what, i, wa, wb)
		}
	}
	if !slices.Equal(a.Weights(nil), b.Weights(nil)) {
		t.Fatalf("%s: Weights differ", what)
	}
}

// TestStateRoundTrip: State followed by SetState into a fresh learner
// continues exactly as the original; State copies, in both directions.
func TestStateRoundTrip(t *testing.T) {
	const dim = 200
	for _, tc := range stateCases() {
		us := randomStream(rand.New(rand.NewPCG(3, 4)), dim, 800)
		a := tc.make(dim)
		for _, u := range us[:400] {
			a.Update(u)
		}
		st := a.State()
		if st.Learner != tc.name || st.Steps != 400 {
			t.Fatalf("%s: State() has learner %q, %d steps", tc.name, st.Learner, st.Steps)
		}
		b := tc.make(dim)
		if err := b.SetState(st); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !sameState(b.State(), st) {
			t.Fatalf("%s: State after SetState differs from the state set", tc.name)
		}
		// Scribbling on st changes neither learner.
		for _, v := range st.Vectors {
			for i := range v {
				v[i] = 1e9
			}
		}
		sameWeights(t, tc.name+" right after SetState", a, b)
		for step, u := range us[400:] {
			if la, lb := a.Update(u), b.Update(u); la != lb {
				t.Fatalf("%s step %d: losses %v != %v", tc.name, step, la, lb)
			}
			sameWeights(t, fmt.Sprintf("%s step %d", tc.name, step), a, b)
		}
		if !sameState(a.State(), b.State()) {
			t.Fatalf("%s: final states differ", tc.name)
		}
	}
}

// TestShardedOneShardIsSequential checks the learners package doc's
// "Sharded training":
// with S = 1 shard, R rounds of (fresh learner, SetState, Updates, State,
// Average of the one state) give exactly, bit for bit, the weights and the
// losses of one learner run over all the triplets without ever being
// snapshot.
func TestShardedOneShardIsSequential(t *testing.T) {
	const dim, steps = 200, 900
	for _, tc := range stateCases() {
		for _, rounds := range []int{1, 2, 7} {
			us := randomStream(rand.New(rand.NewPCG(8, uint64(rounds))), dim, steps)
			seq := tc.make(dim)
			var seqLoss []float64
			for _, u := range us {
				seqLoss = append(seqLoss, seq.Update(u))
			}
			st := tc.make(dim).State()
			step := 0
			for r := range rounds {
				l := tc.make(dim)
				if err := l.SetState(st); err != nil {
					t.Fatalf("%s round %d: %v", tc.name, r, err)
				}
				for ; step < (r+1)*steps/rounds; step++ {
					if got := l.Update(us[step]); got != seqLoss[step] {
						t.Fatalf("%s, %d rounds, step %d: loss %v, sequential %v", tc.name, rounds, step, got, seqLoss[step])
					}
				}
				var err error
				if st, err = learners.Average([]learners.State{l.State()}); err != nil {
					t.Fatal(err)
				}
			}
			final := tc.make(dim)
			if err := final.SetState(st); err != nil {
				t.Fatal(err)
			}
			sameWeights(t, fmt.Sprintf("%s, %d rounds", tc.name, rounds), final, seq)
		}
	}
}

// TestAverageTwoStates: restoring the average of two states gives the
// learner whose model vectors (the up-to-date weights for TG and AFB, and
// every accumulator) are the averages of the two.
func TestAverageTwoStates(t *testing.T) {
	const dim = 200
	model := map[string]int{"solis-tg": 1, "solis-da": 1, "solis-afb": 2, "solis-ada": 2} // leading model vectors
	for _, tc := range stateCases() {
		us := randomStream(rand.New(rand.NewPCG(9, 9)), dim, 600)
		a, b := tc.make(dim), tc.make(dim)
		for _, u := range us[:200] {
			a.Update(u)
		}
		for _, u := range us[200:] {
			b.Update(u)
		}
		sa, sb := a.State(), b.State()
		avg, err := learners.Average([]learners.State{sa, sb})
		if err != nil {
			t.Fatal(err)
		}
		if avg.Steps != 300 {
			t.Errorf("%s: average of 200 and 400 steps is %d", tc.name, avg.Steps)
		}
		c := tc.make(dim)
		if err := c.SetState(avg); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := c.State()
		for k := range model[tc.name] {
			for i := range dim {
				if want := (sa.Vectors[k][i] + sb.Vectors[k][i]) / 2; got.Vectors[k][i] != want {
					t.Fatalf("%s: vector %d[%d] = %v, want the average %v", tc.name, k, i, got.Vectors[k][i], want)
				}
			}
		}
		if tc.name == "solis-tg" || tc.name == "solis-afb" {
			for i := range dim {
				if w := c.weight(i); w != avg.Vectors[0][i] {
					t.Fatalf("%s: w[%d] = %v, want the average %v", tc.name, i, w, avg.Vectors[0][i])
				}
			}
		}
	}
}

func TestSetStateErrors(t *testing.T) {
	const dim = 4
	u := sparse.Vector{Idx: []uint32{0, 3}, Val: []float32{0.5, -0.25}}
	for _, tc := range stateCases() {
		a := tc.make(dim)
		a.Update(u)
		good := a.State()
		bad := []struct {
			name string
			st   learners.State
		}{
			{"zero value", learners.State{}},
			{"other learner", modState(good, func(s *learners.State) { s.Learner = "solis-xyz" })},
			{"negative steps", modState(good, func(s *learners.State) { s.Steps = -1 })},
			{"missing vector", modState(good, func(s *learners.State) { s.Vectors = s.Vectors[:len(s.Vectors)-1] })},
			{"extra vector", modState(good, func(s *learners.State) { s.Vectors = append(s.Vectors, make([]float64, dim)) })},
			{"short vector", modState(good, func(s *learners.State) { s.Vectors[0] = s.Vectors[0][:dim-1] })},
			{"NaN", modState(good, func(s *learners.State) { s.Vectors[len(s.Vectors)-1][1] = math.NaN() })},
			{"Inf", modState(good, func(s *learners.State) { s.Vectors[0][2] = math.Inf(1) })},
		}
		switch tc.name {
		case "solis-da":
			bad = append(bad, struct {
				name string
				st   learners.State
			}{"steps=0 with s≠0", modState(good, func(s *learners.State) { s.Steps = 0 })})
		case "solis-afb":
			bad = append(bad,
				struct {
					name string
					st   learners.State
				}{"negative G", modState(good, func(s *learners.State) { s.Vectors[1][0] = -1 })},
				struct {
					name string
					st   learners.State
				}{"w≠0 with G=0", modState(good, func(s *learners.State) { s.Vectors[0][1] = 0.5 })})
		}
		for _, b := range bad {
			l := tc.make(dim)
			l.Update(sparse.Vector{Idx: []uint32{2}, Val: []float32{1}})
			before := l.State()
			if err := l.SetState(b.st); err == nil {
				t.Errorf("%s, %s: no error", tc.name, b.name)
			} else if !strings.Contains(err.Error(), tc.name) {
				t.Errorf("%s, %s: error %q does not name the learner", tc.name, b.name, err)
			}
			if !sameState(l.State(), before) {
				t.Errorf("%s, %s: failed SetState changed the learner", tc.name, b.name)
			}
		}
		if err := a.SetState(good); err != nil {
			t.Errorf("%s: own state rejected: %v", tc.name, err)
		}
	}
}
