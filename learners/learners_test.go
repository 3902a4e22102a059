package learners

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestSparsity(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	for _, tc := range []struct {
		w    []float32
		want float64
	}{
		{nil, 0},
		{[]float32{}, 0},
		{[]float32{0, 0, 0, 0}, 1},
		{[]float32{1, -2, 3}, 0},
		{[]float32{0, 1, 0, -1}, 0.5},
		{[]float32{negZero, 1, 1, 1}, 0.25},
		{[]float32{1e-45, 0}, 0.5}, // the smallest subnormal is not zero
	} {
		if got := Sparsity(tc.w); got != tc.want {
			t.Errorf("Sparsity(%v) = %v, want %v", tc.w, got, tc.want)
		}
	}
}

func TestModelDiagonal(t *testing.T) {
	for _, c := range []struct {
		m       Model
		want    []float32
		wantErr bool
	}{
		{m: BaselineModel(BaselineTFIDF, nil), want: nil},
		{m: Model{Learner: "solis-ada", Weights: []float32{0, 2}}, want: []float32{0, 2}},
		{m: Model{Learner: "solis-ada"}, wantErr: true}, // learned, but no weights: not TF-IDF
		{m: BaselineModel(BaselineEuclidean, []int{3}), wantErr: true},
		{m: Model{Learner: "lomdml", Dims: []int{3}}, wantErr: true},
	} {
		got, err := c.m.Diagonal()
		if (err != nil) != c.wantErr || !slices.Equal(got, c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("%s (baseline %q): Diagonal = %v, %v; want %v, error %v", c.m.Learner, c.m.Baseline, got, err, c.want, c.wantErr)
		}
	}
}

func TestWidth(t *testing.T) {
	for _, c := range []struct {
		dims []int
		max  int
		want int
		err  string
	}{
		{[]int{3, 4}, 0, 7, ""},
		{[]int{3, 4}, 7, 7, ""},
		{[]int{3, 4}, 6, 0, "x: total dimension of modalities [3 4] exceeds 6"},
		{nil, 0, 0, "x: no modalities"},
		{[]int{3, 0}, 0, 0, "x: modality 1 has dimension 0, want > 0"},
		{[]int{1, math.MaxInt}, 10, 0, "exceeds 10"},
	} {
		d, err := Width("x", c.dims, c.max)
		if c.err == "" && (err != nil || d != c.want) {
			t.Errorf("Width(%v, %d) = %d, %v; want %d", c.dims, c.max, d, err, c.want)
		}
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("Width(%v, %d) error %v, want %q", c.dims, c.max, err, c.err)
		}
	}
}

func TestSwitch(t *testing.T) {
	for _, tc := range []struct {
		v      float64
		on, ok bool
	}{
		{0, false, true}, {1, true, true}, {math.Copysign(0, -1), false, true},
		{0.5, false, false}, {2, false, false}, {-1, false, false}, {math.NaN(), false, false}, {math.Inf(1), false, false},
	} {
		on, err := Switch("solis-ada", "nonneg", tc.v)
		if on != tc.on || (err == nil) != tc.ok || err != nil && !strings.Contains(err.Error(), "solis-ada: nonneg must be 0 (off) or 1 (on)") {
			t.Errorf("Switch(%v) = %v, %v", tc.v, on, err)
		}
		if tc.ok && SwitchValue(on) != tc.v {
			t.Errorf("SwitchValue(%v) = %v, want %v", on, SwitchValue(on), tc.v)
		}
	}
}

// AssignSwitched sets numbers and switches from one params map, keeps the
// defaults of those not given, and names the learner in its errors.
func TestAssignSwitched(t *testing.T) {
	eta, on := 1.0, true
	fields, switches := map[string]*float64{"eta": &eta}, map[string]*bool{"nonneg": &on}
	if err := AssignSwitched("solis-ada", fields, switches, map[string]float64{"eta": 3}); err != nil || eta != 3 || !on {
		t.Errorf("eta given: eta %v, nonneg %v, error %v; want 3, true (the default), nil", eta, on, err)
	}
	if err := AssignSwitched("solis-ada", fields, switches, map[string]float64{"nonneg": 0}); err != nil || eta != 3 || on {
		t.Errorf("nonneg=0: eta %v, nonneg %v, error %v; want 3, false, nil", eta, on, err)
	}
	for _, params := range []map[string]float64{{"nonneg": 0.5}, {"lambda": 1}} {
		err := AssignSwitched("solis-ada", fields, switches, params)
		if err == nil || !strings.HasPrefix(err.Error(), "solis-ada: ") {
			t.Errorf("%v: error %v, want one naming solis-ada", params, err)
		}
	}
	if len(fields) != 1 {
		t.Errorf("fields grew to %d entries: the switches must not be added to the caller's map", len(fields))
	}
}
