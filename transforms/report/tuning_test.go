package report

import (
	"strings"
	"testing"
)

// TestTuningRendered checks that report.json keeps the tuning section and
// that the table and the page show each learner's chosen values, the page
// every grid point.
func TestTuningRendered(t *testing.T) {
	r := Report{Input: "in.csv", Output: "out", Split: Split{TrainImages: 8, QueryImages: 2, QueryFraction: 0.2},
		Tuning: &Tuning{Share: 0.2, ValidationImages: 3, Queries: 3, TrainImages: 8, TargetSparsity: 0.95, Baseline: "tfidf", BaselineMAP: 0.4321, Learners: []TunedLearner{{
			Learner: "solis-ada", Axes: []string{"lambda"},
			Points: []TunePoint{
				{Method: "solis-ada-lambda-1e-05", Params: map[string]float64{"eta": 10, "lambda": 1e-5}, ValidationMAP: 0.61, Sparsity: 0.4},
				{Method: "solis-ada-lambda-0.0001", Params: map[string]float64{"eta": 10, "lambda": 1e-4}, ValidationMAP: 0.57, Sparsity: 0.96},
			},
			Chosen: 1, Params: map[string]float64{"eta": 10, "lambda": 1e-4}, TargetMet: true, Why: "the best validation mAP of 1 point at 95% zeros or more",
		}}}}
	js, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(js)
	if err != nil {
		t.Fatal(err)
	}
	if back.Tuning == nil || len(back.Tuning.Learners) != 1 || back.Tuning.Learners[0].ChosenPoint().ValidationMAP != 0.57 || back.Tuning.TargetSparsity != 0.95 {
		t.Fatalf("round trip: %+v", back.Tuning)
	}
	for _, key := range []string{`"tuning"`, `"validation_map"`, `"target_met"`, `"chosen"`} {
		if !strings.Contains(string(js), key) {
			t.Errorf("report.json lacks %s", key)
		}
	}
	table, html := renderings(t, r)
	if !strings.Contains(table, "solis-ada: eta=10, lambda=0.0001") || !strings.Contains(table, "target sparsity 95.0%") || !strings.Contains(table, "validation mAP of tfidf 0.4321") {
		t.Errorf("table lacks the choice:\n%s", table)
	}
	for _, want := range []string{"<h2>Tuning</h2>", "<strong>lambda=0.0001</strong>", "<td>lambda=1e-05</td>", "0.6100", "96.0%", "tfidf's validation mAP, on the same queries over the same images: 0.4321"} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}
