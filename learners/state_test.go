package learners

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/learners/sparse"
)

func TestAverage(t *testing.T) {
	negZero := math.Copysign(0, -1)
	one := State{Learner: "x", Steps: 7, Vectors: [][]float64{{1, negZero, 0.1}, {3}}}
	got, err := Average([]State{one})
	if err != nil {
		t.Fatal(err)
	}
	// The average of one state is that state, bit for bit (−0 included).
	if got.Learner != "x" || got.Steps != 7 || len(got.Vectors) != 2 ||
		!slices.Equal(got.Vectors[1], []float64{3}) || got.Vectors[0][0] != 1 || got.Vectors[0][2] != 0.1 ||
		!math.Signbit(got.Vectors[0][1]) {
		t.Fatalf("Average of one state = %+v", got)
	}
	got.Vectors[0][0] = 42 // no aliasing
	if one.Vectors[0][0] != 1 {
		t.Fatal("Average shares memory with its input")
	}

	for _, tc := range []struct {
		steps []int64
		want  int64
	}{
		{[]int64{4, 6}, 5},
		{[]int64{4, 5}, 5},    // 4.5 rounds up
		{[]int64{0, 0, 1}, 1}, // any step taken ⇒ ≥ 1
		{[]int64{0, 0, 0}, 0},
		{[]int64{math.MaxInt64, math.MaxInt64}, math.MaxInt64},              // no overflow
		{[]int64{math.MaxInt64, math.MaxInt64 - 1, 1}, 6148914691236517205}, // ⌈(2⁶⁴ − 2)/3⌉
	} {
		states := make([]State, len(tc.steps))
		for j, s := range tc.steps {
			states[j] = State{Learner: "x", Steps: s, Vectors: [][]float64{{float64(j)}}}
		}
		got, err := Average(states)
		if err != nil {
			t.Fatal(err)
		}
		if got.Steps != tc.want {
			t.Errorf("steps %v: average %d, want %d", tc.steps, got.Steps, tc.want)
		}
	}

	a := State{Learner: "x", Steps: 2, Vectors: [][]float64{{1, 2, -3}, {0.5}}}
	b := State{Learner: "x", Steps: 4, Vectors: [][]float64{{3, 2, 3}, {1.5}}}
	got, err = Average([]State{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Vectors[0], []float64{2, 2, 0}) || !slices.Equal(got.Vectors[1], []float64{1}) || got.Steps != 3 {
		t.Errorf("Average of two = %+v", got)
	}
}

func TestAverageErrors(t *testing.T) {
	ok := State{Learner: "x", Vectors: [][]float64{{1, 2}, {3}}}
	for _, tc := range []struct {
		name   string
		states []State
		want   string
	}{
		{"none", nil, "no states"},
		{"names", []State{ok, {Learner: "y", Vectors: [][]float64{{1, 2}, {3}}}}, `"y"`},
		{"vector count", []State{ok, {Learner: "x", Vectors: [][]float64{{1, 2}}}}, "1 vectors"},
		{"lengths", []State{ok, {Learner: "x", Vectors: [][]float64{{1, 2}, {3, 4}}}}, "vector 1 has length 2"},
		{"steps", []State{ok, {Learner: "x", Steps: -1, Vectors: [][]float64{{1, 2}, {3}}}}, "-1 steps"},
	} {
		if _, err := Average(tc.states); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestCheckState(t *testing.T) {
	good := State{Learner: "x", Steps: 1, Vectors: [][]float64{{1, 2}, {3}}}
	if err := CheckState(good, "x", 2, 1); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		st   State
		want string
	}{
		{State{Learner: "y", Vectors: good.Vectors}, `"y"`},
		{State{Learner: "x", Steps: -2, Vectors: good.Vectors}, "negative step count"},
		{State{Learner: "x", Vectors: good.Vectors[:1]}, "1 vectors, want 2"},
		{State{Learner: "x", Vectors: [][]float64{{1}, {3}}}, "vector 0 has length 1, want 2"},
		{State{Learner: "x", Vectors: [][]float64{{1, math.Inf(1)}, {3}}}, "vector 0 element 1 is +Inf"},
		{State{Learner: "x", Vectors: [][]float64{{1, 2}, {math.NaN()}}}, "NaN"},
	} {
		if err := CheckState(tc.st, "x", 2, 1); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "x: ") {
			t.Errorf("%+v: error %v, want one containing %q", tc.st, err, tc.want)
		}
	}
}

// constant is a trivial Stateful for the registry tests.
type constant struct {
	dim int
	c   float64
}

func (l *constant) Name() string                   { return "test-constant" }
func (l *constant) Dim() int                       { return l.dim }
func (l *constant) Update(u sparse.Vector) float64 { return 0 }
func (l *constant) Weights(dst []float32) []float32 {
	return append(dst[:0], make([]float32, l.dim)...)
}
func (l *constant) Params() map[string]float64 { return map[string]float64{"c": l.c} }
func (l *constant) State() State               { return State{Learner: l.Name()} }
func (l *constant) SetState(State) error       { return nil }

func TestRegistry(t *testing.T) {
	Register("test-constant", func(dim int, params map[string]float64) (Stateful, error) {
		l := &constant{dim: dim, c: 0.5}
		if err := AssignParams(map[string]*float64{"c": &l.c}, params); err != nil {
			return nil, err
		}
		return l, nil
	})
	if !slices.Contains(Names(), "test-constant") || !slices.IsSorted(Names()) {
		t.Errorf("Names() = %v", Names())
	}
	l, err := New("test-constant", 3, nil)
	if err != nil || l.Dim() != 3 || l.Params()["c"] != 0.5 {
		t.Fatalf("New with defaults: %v, %v", l, err)
	}
	if l, err = New("test-constant", 3, map[string]float64{"c": 2}); err != nil || l.Params()["c"] != 2 {
		t.Fatalf("New with c = 2: %v, %v", l, err)
	}
	if _, err := New("test-constant", 3, map[string]float64{"z": 1, "c": 1, "a": 2}); err == nil ||
		!strings.Contains(err.Error(), `unknown parameter "a", "z" (want c)`) {
		t.Errorf("unknown parameters: %v", err)
	}
	if _, err := New("no-such", 3, nil); err == nil || !strings.Contains(err.Error(), `"no-such"`) || !strings.Contains(err.Error(), "test-constant") {
		t.Errorf("unknown learner: %v", err)
	}
	for _, tc := range []struct {
		name string
		f    Factory
	}{
		{"test-constant", func(int, map[string]float64) (Stateful, error) { return nil, nil }},
		{"", func(int, map[string]float64) (Stateful, error) { return nil, nil }},
		{"test-nil", nil},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q, …) did not panic", tc.name)
				}
			}()
			Register(tc.name, tc.f)
		}()
	}
}

func TestAssignParams(t *testing.T) {
	a, b := 1.0, 2.0
	fields := map[string]*float64{"a": &a, "b": &b}
	if err := AssignParams(fields, map[string]float64{"b": 5}); err != nil || a != 1 || b != 5 {
		t.Errorf("AssignParams: %v, a=%v b=%v", err, a, b)
	}
	// An unknown name stores nothing.
	if err := AssignParams(fields, map[string]float64{"a": 9, "x": 1}); err == nil || a != 1 {
		t.Errorf("AssignParams with an unknown name: %v, a=%v", err, a)
	}
}
