package omdml

import (
	"math"
	"strings"
	"testing"
)

func TestParamsValidate(t *testing.T) {
	if err := DefaultParams().Validate(); err != nil {
		t.Fatalf("DefaultParams().Validate() = %v", err)
	}
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name   string
		modify func(*Params)
		want   string // "" for valid
	}{
		{"C tiny", func(p *Params) { p.C = 1e-300 }, ""},
		{"gamma 0", func(p *Params) { p.Gamma = 0 }, ""},
		{"rank 1", func(p *Params) { p.Rank = 1 }, ""},
		{"C negative", func(p *Params) { p.C = -1 }, "C must be finite and > 0, got -1"},
		{"C zero", func(p *Params) { p.C = 0 }, "C must be finite and > 0, got 0"},
		{"C NaN", func(p *Params) { p.C = nan }, "C must be finite and > 0, got NaN"},
		{"C Inf", func(p *Params) { p.C = inf }, "C must be finite and > 0, got +Inf"},
		{"beta 0", func(p *Params) { p.Beta = 0 }, "Beta must be in (0, 1), got 0"},
		{"beta 1", func(p *Params) { p.Beta = 1 }, "Beta must be in (0, 1), got 1"},
		{"beta NaN", func(p *Params) { p.Beta = nan }, "Beta must be in (0, 1), got NaN"},
		{"beta negative", func(p *Params) { p.Beta = -0.5 }, "Beta must be in (0, 1), got -0.5"},
		{"gamma negative", func(p *Params) { p.Gamma = -1 }, "Gamma must be finite and >= 0, got -1"},
		{"gamma NaN", func(p *Params) { p.Gamma = nan }, "Gamma must be finite and >= 0, got NaN"},
		{"eta zero", func(p *Params) { p.Eta = 0 }, "Eta must be finite and > 0, got 0"},
		{"eta NaN", func(p *Params) { p.Eta = nan }, "Eta must be finite and > 0, got NaN"},
		{"rank 0", func(p *Params) { p.Rank = 0 }, "Rank must be >= 1, got 0"},
		{"rank negative", func(p *Params) { p.Rank = -3 }, "Rank must be >= 1, got -3"},
	} {
		p := DefaultParams()
		tc.modify(&p)
		err := p.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: Validate() = %v, want nil", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: Validate() = %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	// Every problem is reported, not only the first.
	err := Params{C: -1, Beta: 2, Gamma: -1, Eta: 0, Rank: 0}.Validate()
	if err == nil || strings.Count(err.Error(), "\n") != 4 {
		t.Errorf("Validate() of five bad fields = %v, want five errors", err)
	}
}

func TestParamsFromMap(t *testing.T) {
	p, err := ParamsFromMap(map[string]float64{"c": 0.5, "beta": 0.9, "gamma": 2, "eta": 0.1, "rank": 7, "seed": 42})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Params{C: 0.5, Beta: 0.9, Gamma: 2, Eta: 0.1, Rank: 7, Seed: 42}); p != want {
		t.Errorf("ParamsFromMap = %+v, want %+v", p, want)
	}
	if p, err := ParamsFromMap(nil); err != nil || p != DefaultParams() {
		t.Errorf("ParamsFromMap(nil) = %+v, %v, want the defaults", p, err)
	}
	for _, tc := range []struct {
		m    map[string]float64
		want string
	}{
		{map[string]float64{"lambda": 1}, `unknown parameter "lambda"`},
		{map[string]float64{"rank": 2.5}, "rank must be a whole number"},
		{map[string]float64{"rank": 0}, "rank must be a whole number"},
		{map[string]float64{"seed": -1}, "seed must be a whole number"},
		{map[string]float64{"beta": 1}, "Beta must be in (0, 1)"},
	} {
		if _, err := ParamsFromMap(tc.m); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParamsFromMap(%v) = %v, want an error containing %q", tc.m, err, tc.want)
		}
	}
	// What a learner reports is what ParamsFromMap reads back.
	in := Params{C: 0.25, Beta: 0.5, Gamma: 0.5, Eta: 0.03, Rank: 4, Seed: 9}
	o, err := NewOMDML([]int{2}, in)
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLOMDML([]int{2}, in)
	if err != nil {
		t.Fatal(err)
	}
	merged := o.Params()
	for k, v := range l.Params() {
		merged[k] = v
	}
	if back, err := ParamsFromMap(merged); err != nil || back != in {
		t.Errorf("ParamsFromMap(Params()) = %+v, %v, want %+v", back, err, in)
	}
}

func TestNewErrors(t *testing.T) {
	bad := DefaultParams()
	bad.Beta = 1.5
	for _, c := range constructors {
		for _, tc := range []struct {
			dims []int
			p    Params
			want string
		}{
			{nil, DefaultParams(), "at least one modality"},
			{[]int{3, 0}, DefaultParams(), "modality 1 has dimension 0"},
			{[]int{-2}, DefaultParams(), "modality 0 has dimension -2"},
			{[]int{3}, bad, "Beta must be in (0, 1)"},
		} {
			if _, err := c.new(tc.dims, tc.p); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: new(%v) = %v, want an error containing %q", c.name, tc.dims, err, tc.want)
			}
		}
	}
}
