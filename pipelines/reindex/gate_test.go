package reindex

import (
	"math"
	"strings"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/published"
	"github.com/bowline/bowline/transforms/report"
)

func TestGate(t *testing.T) {
	night := func(images, dead int64, heldOut, training float64) report.Report {
		r := report.Report{Counts: report.Counts{Images: images, DeadLetters: dead}}
		if heldOut >= 0 {
			r.Methods = append(r.Methods, formats.ReportRow{Method: "solis-ada", Split: "held-out", MAP: heldOut})
		}
		r.Methods = append(r.Methods, formats.ReportRow{Method: "solis-ada", Split: "training", MAP: training},
			formats.ReportRow{Method: "tfidf", Split: "held-out", MAP: 0.5})
		return r
	}
	pub := &published.Run{Run: "runs/20261124T071500Z-aaaa", Images: 100, MAP: map[string]float64{"solis-ada": 0.80, "tfidf": 0.6}}
	lim := Limits{MaxMAPDrop: 0.01, MaxDeadRate: 0.05, MaxShrink: 0.1}
	for _, tc := range []struct {
		name    string
		r       report.Report
		pub     *published.Run
		serving string
		pass    bool
		failed  string // the failed checks, comma-separated
	}{
		{"first night", night(100, 1, 0.2, 0.9), nil, "solis-ada", true, ""},
		{"first night, too many dead letters", night(100, 5, 0.9, 0.9), nil, "solis-ada", false, CheckDeadRate},
		{"first night without the serving learner", night(100, 0, 0.9, 0.9), nil, "oasis-diag", false, CheckMAPDrop},
		{"better", night(110, 0, 0.85, 0.5), pub, "solis-ada", true, ""},
		{"drop of exactly the limit", night(100, 0, 0.79, 0.9), pub, "solis-ada", true, ""},
		{"drop beyond the limit", night(100, 0, 0.7899, 0.9), pub, "solis-ada", false, CheckMAPDrop},
		// The held-out row is the headline: a good training mAP does not
		// hide a held-out fall.
		{"held-out fall, training rise", night(100, 0, 0.5, 0.99), pub, "solis-ada", false, CheckMAPDrop},
		// A run that held nothing out is judged on its training queries.
		{"nothing held out", night(100, 0, -1, 0.81), pub, "solis-ada", true, ""},
		{"dead rate just under", night(100, 4, 0.8, 0.8), pub, "solis-ada", true, ""},
		{"dead rate at the limit", night(100, 5, 0.8, 0.8), pub, "solis-ada", false, CheckDeadRate},
		{"shrink at the limit", night(90, 0, 0.8, 0.8), pub, "solis-ada", true, ""},
		{"shrink beyond the limit", night(89, 0, 0.8, 0.8), pub, "solis-ada", false, CheckShrink},
		{"everything wrong", night(50, 10, 0.1, 0.1), pub, "solis-ada", false, "map_drop,dead_rate,shrink"},
		{"published run without the serving learner", night(100, 0, 0.1, 0.1), pub, "tfidf", false, CheckMAPDrop},
		{"serving learner new since the published run", night(100, 0, 0.1, 0.1), &published.Run{Run: pub.Run, Images: 100, MAP: map[string]float64{"tfidf": 0.6}}, "solis-ada", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Gate(tc.r, tc.pub, tc.serving, lim)
			var failed []string
			for _, c := range v.Failed() {
				failed = append(failed, c.Name)
			}
			if v.Pass != tc.pass || strings.Join(failed, ",") != tc.failed {
				t.Fatalf("pass %v, failed %q; want %v, %q\n%+v", v.Pass, failed, tc.pass, tc.failed, v.Checks)
			}
			if len(v.Checks) != 3 {
				t.Fatalf("%d checks, want 3", len(v.Checks))
			}
			if (v.Reason() == "") != tc.pass {
				t.Errorf("reason %q for pass=%v", v.Reason(), tc.pass)
			}
			for _, c := range v.Checks {
				if c.Detail == "" {
					t.Errorf("check %s says nothing", c.Name)
				}
				if (c.Name == CheckShrink && c.Skipped != (tc.pub == nil)) || (c.Name == CheckDeadRate && c.Skipped) {
					t.Errorf("check %s skipped = %v", c.Name, c.Skipped)
				}
			}
		})
	}
}

func TestGateValues(t *testing.T) {
	pub := &published.Run{Run: "runs/x", Images: 200, MAP: map[string]float64{"solis-ada": 0.8}}
	r := report.Report{Counts: report.Counts{Images: 180, DeadLetters: 9},
		Methods: []formats.ReportRow{{Method: "solis-ada", Split: "held-out", MAP: 0.75}}}
	v := Gate(r, pub, "solis-ada", DefaultLimits())
	want := map[string][2]float64{CheckMAPDrop: {0.05, 0.01}, CheckDeadRate: {0.05, 0.05}, CheckShrink: {0.1, 0.1}}
	for _, c := range v.Checks {
		w := want[c.Name]
		if d := c.Value - w[0]; d > 1e-12 || d < -1e-12 || c.Limit != w[1] {
			t.Errorf("%s: value %v limit %v, want %v", c.Name, c.Value, c.Limit, w)
		}
	}
	if v.ComparedWith != "runs/x" || v.Pass {
		t.Errorf("verdict %+v", v)
	}
}

func TestLimitsValidate(t *testing.T) {
	if err := DefaultLimits().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, l := range []Limits{{MaxMAPDrop: -0.1}, {MaxMAPDrop: math.NaN()}, {MaxMAPDrop: math.Inf(1)}, {MaxDeadRate: 1.5}, {MaxDeadRate: math.NaN()}, {MaxShrink: -1}, {MaxShrink: math.NaN()}} {
		if l.Validate() == nil {
			t.Errorf("%+v accepted", l)
		}
	}
}
