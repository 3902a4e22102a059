package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/formats"
)

// fullReport is a report with every section filled: a sweep, a comparison
// with an earlier run, dead letters, stages, settings of every type.
func fullReport() Report {
	pr := []float64{1, .9, .8, .7, .6, .5, .4, .3, .2, .1, 0}
	row := func(method, split string, mAP, sparsity float64) formats.ReportRow {
		m := formats.ReportRow{Method: method, Input: "bow", Relevance: "label", Split: split, Queries: 18,
			MAP: mAP, MAPLow: mAP - .05, MAPHigh: mAP + .05, PrecisionAt10: mAP, PrecisionAt10Low: mAP - .1, PrecisionAt10High: mAP + .1,
			NDCGAt10: mAP, Sparsity: sparsity, Vocabulary: 1000, IndexPostings: int64(10000 * (1 - sparsity)),
			TrainSeconds: .1, IndexSeconds: .2, QuerySeconds: .3, PR: pr, Labels: []string{"a", "b"}, LabelMAP: []float64{mAP, mAP}}
		if method != "tfidf" {
			m.Baseline, m.MAPDiff, m.MAPDiffLow, m.MAPDiffHigh, m.Significant = "tfidf", mAP-.5, mAP-.55, mAP-.45, true
		}
		return m
	}
	names := []string{"solis-ada-lambda-1e-07", "solis-ada-lambda-1e-05", "solis-ada-lambda-0.0001", "solis-ada-lambda-0.001"}
	values := []float64{1e-7, 1e-5, 1e-4, 1e-3}
	r := Report{
		Input: "in.csv", Output: "out",
		Config: Settings{"vocab": Setting(1000), "akm": Setting(false), "input": Setting("in.csv"), "query_fraction": Setting(0.2),
			"seed": Setting(uint64(1<<63 + 1)), "sweep": Setting("")},
		Params:      map[string]map[string]float64{"solis-ada": {"lambda": 1e-5}, "solis-ada-lambda-1e-05": {"lambda": 1e-5}},
		Counts:      Counts{Images: 100, DeadLetters: 1, Described: 99, Keypoints: 9000, Vocabulary: 1000, Triplets: 2000, DuplicatePaths: 1},
		Sweep:       &Sweep{Learner: "solis-ada", Param: "lambda", Values: values, Methods: names},
		DeadLetters: DeadLetters{Total: 1, Kinds: []DeadKind{{Stage: "decode", Example: "x.jpg: bad", Count: 1}}, First: deadRows{{ImageID: "x", URI: "x.jpg", Stage: "decode", Reason: "x.jpg: bad"}}},
		Split:       Split{TrainImages: 81, QueryImages: 18, QueryFraction: 0.2},
		Stages:      []Stage{{Name: "describe", Units: 1, RowsIn: 100, RowsOut: 99, WallSeconds: 1, StartMillis: 1, EndMillis: 1001}},
		PResolution: 0.002,
	}
	r.Methods = append(r.Methods, row("tfidf", "held-out", .5, 0), row("solis-ada", "held-out", .9, .5), row("tfidf", "training", .5, 0))
	for i, n := range names {
		r.Methods = append(r.Methods, row(n, "held-out", .9-float64(i)/10, 1-1/float64(10+i*1000)))
	}
	r.ComparedTo = &Earlier{Run: "runs/1", Methods: Rows{row("tfidf", "held-out", .4, 0)}}
	return r
}

// reportJSONDoc returns the report.json section of formats/doc.go.
func reportJSONDoc(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("../../formats/doc.go")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i := strings.Index(s, "// # report.json")
	if i < 0 {
		t.Fatal("formats/doc.go has no report.json section")
	}
	s = s[i+len("// # report.json"):]
	if j := strings.Index(s, "// # "); j >= 0 {
		s = s[:j]
	}
	return s
}

// walkKeys calls fn with every object key of v, a decoded JSON value,
// and its path; it does not descend into the values of the objects whose
// keys are data (flag and learner names).
func walkKeys(v any, path string, fn func(key, path string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			fn(k, path+"."+k)
			if k == "config" || k == "hyper_parameters" {
				continue
			}
			walkKeys(e, path+"."+k, fn)
		}
	case []any:
		for _, e := range x {
			walkKeys(e, path+"[]", fn)
		}
	}
}

// Every key of report.json is snake_case and documented in formats/doc.go,
// and config holds typed values: checked on a report with every section
// filled, and on report.json files of real runs (testdata).
func TestReportJSONSchema(t *testing.T) {
	doc := reportJSONDoc(t)
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	check := func(name string, js []byte) {
		var v any
		if err := json.Unmarshal(js, &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		seen := map[string]bool{}
		walkKeys(v, "", func(k, path string) {
			if seen[k] {
				return
			}
			seen[k] = true
			if !snake.MatchString(k) {
				t.Errorf("%s: key %s is not snake_case", name, path)
			}
			if !regexp.MustCompile(`\b` + k + `\b`).MatchString(doc) {
				t.Errorf("%s: key %s is not documented in formats/doc.go's report.json section", name, path)
			}
		})
		cfg := v.(map[string]any)["config"].(map[string]any)
		if _, ok := cfg["vocab"].(float64); !ok {
			t.Errorf("%s: config.vocab is %#v, want a number", name, cfg["vocab"])
		}
	}
	js, err := fullReport().JSON()
	if err != nil {
		t.Fatal(err)
	}
	check("full report", js)
	files, _ := filepath.Glob("testdata/report-run-*.json")
	if len(files) == 0 {
		t.Fatal("no testdata/report-run-*.json")
	}
	for _, f := range files {
		js, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		check(f, js)
	}
}

// A round trip through JSON keeps every field, a 64-bit seed exactly.
func TestReportJSONRoundTrip(t *testing.T) {
	r := fullReport()
	js, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(js)
	if err != nil {
		t.Fatal(err)
	}
	js2, err := back.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(js) != string(js2) {
		t.Errorf("round trip changed report.json:\n%s\nthen\n%s", js, js2)
	}
	if s, _ := back.Config.Text("seed"); s != "9223372036854775809" {
		t.Errorf("seed read back as %s", s)
	}
	if m, _ := back.MethodOn("solis-ada", "held-out"); m.PrecisionAt10 != .9 || m.MAPDiffLow != .9-.55 || len(m.PR) != 11 {
		t.Errorf("solis-ada read back as %+v", m)
	}
}

// A baseline's row carries no comparison in report.json (not a Δ of 0
// against ""), a learner's does.
func TestBaselineRowHasNoComparison(t *testing.T) {
	js, err := fullReport().JSON()
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Methods []map[string]any }
	if err := json.Unmarshal(js, &v); err != nil {
		t.Fatal(err)
	}
	for _, m := range v.Methods {
		_, hasDiff := m["map_diff"]
		_, hasBase := m["baseline"]
		_, hasSig := m["significant"]
		if learner := m["method"] != "tfidf"; hasDiff != learner || hasBase != learner || hasSig != learner {
			t.Errorf("%v row: map_diff %v, baseline %v, significant %v", m["method"], hasDiff, hasBase, hasSig)
		}
	}
}

// A report.json written before the keys were snake_case (methods and
// dead letters under Go field names, config values as strings) reads the
// same, so that --compare_to and the nightly gate still read published
// runs.
func TestParseCamelCaseReport(t *testing.T) {
	js, err := os.ReadFile("testdata/report-camelcase.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse(js)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := r.Method("solis-ada")
	if !ok || m.MAP < 0.964 || m.MAP > 0.9641 || m.PrecisionAt10 < 0.98 || m.NDCGAt10 < 0.98 ||
		m.MAPDiffLow < 0.2 || m.Baseline != "tfidf" || !m.Significant || m.IndexPostings != 5104 || len(m.PR) != 11 || len(m.LabelMAP) != 6 {
		t.Errorf("solis-ada read as %+v", m)
	}
	if tr, ok := r.MethodOn("tfidf", "training"); !ok || tr.PrecisionAt10 < 0.7 {
		t.Errorf("tfidf training row read as %+v", tr)
	}
	if f := r.DeadLetters.First; len(f) != 1 || f[0].ImageID != "class9-01" || f[0].URI != "testdata/shapes/class9-01.png" {
		t.Errorf("dead letters read as %+v", f)
	}
	if v, ok := r.Config.Text("vocab"); !ok || v != "1000" {
		t.Errorf("config vocab read as %q", v)
	}
	// As the earlier run of a comparison.
	now := Report{Methods: Rows{m}}
	now.Methods[0].MAP += 0.01
	now.ComparedTo = &Earlier{Run: "old", Methods: r.Methods}
	if d, p, ok := now.Change(now.Methods[0]); !ok || d < 0.0099 || d > 0.0101 || p != 0 {
		t.Errorf("change since the old report: %v %v %v", d, p, ok)
	}
}

// A sweep's learners are ordered by value, not by their names as text
// (…-0.0001 before …-1e-05), in the rows, both tables and the chart.
func TestSweepOrderedByValue(t *testing.T) {
	r := fullReport()
	// As the sweep flag gave them, out of order.
	w := r.Sweep
	w.Values = []float64{1e-3, 1e-7, 1e-4, 1e-5}
	w.Methods = []string{"solis-ada-lambda-0.001", "solis-ada-lambda-1e-07", "solis-ada-lambda-0.0001", "solis-ada-lambda-1e-05"}
	r.Sort()
	want := []string{"tfidf", "solis-ada", "solis-ada-lambda-1e-07", "solis-ada-lambda-1e-05", "solis-ada-lambda-0.0001", "solis-ada-lambda-0.001"}
	var got []string
	for _, m := range r.Headline() {
		got = append(got, m.Method)
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
	table, html := renderings(t, r)
	for name, text := range map[string]string{"table": table, "html": html} {
		last := -1
		for _, m := range want[2:] {
			i := strings.Index(text, m)
			if i < last {
				t.Errorf("%s: %s comes before the smaller value before it", name, m)
			}
			last = i
		}
	}
	if !strings.Contains(string(html), "lambda 1e-07 … 0.001") {
		t.Error("the sweep chart's legend does not run from the smallest value to the largest")
	}
}
