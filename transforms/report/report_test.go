package report

import (
	"encoding/json"
	"html"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
)

func TestReport(t *testing.T) {
	r := Report{
		Input: "in.csv", Output: "out",
		Config: Settings{"vocab": Setting(100)},
		Counts: Counts{Images: 10, DeadLetters: 1},
		Split:  Split{TrainImages: 8, QueryImages: 2, QueryFraction: 0.2},
		Methods: []formats.ReportRow{
			{Method: "solis-ada", Split: "training", MAP: 0.95},
			{Method: "solis-ada", Split: "held-out", MAP: 0.8, Sparsity: 0.5, Baseline: "tfidf", MAPDiff: 0.3, MAPDiffLow: 0.1, MAPDiffHigh: 0.5, Significant: true},
			{Method: string(learners.BaselineTFIDF), Split: "training", MAP: 0.55},
			{Method: string(learners.BaselineTFIDF), Split: "held-out", MAP: 0.5},
		},
	}
	r.Sort()
	if r.Methods[0].Method != string(learners.BaselineTFIDF) || r.Methods[0].Split != "held-out" || r.Methods[2].Split != "training" {
		t.Fatalf("not held-out rows first, each with the baseline first: %+v", r.Methods)
	}
	if len(r.Headline()) != 2 || len(r.Training()) != 2 || r.Headline()[1].MAP != 0.8 {
		t.Fatalf("headline %+v, training %+v", r.Headline(), r.Training())
	}
	js, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if m, ok := back.Method("solis-ada"); !ok || m.MAP != 0.8 {
		t.Fatalf("round trip lost solis-ada: %+v", back)
	}
	html, err := r.HTML()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<td>solis-ada</td>", "0.8000", "50.0%", "<code>in.csv</code>", "0.3000 *", "Training queries"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	var b strings.Builder
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"held-out queries: 2 images (20% of each label)", "+0.3000 [+0.1000, +0.5000] *", "+0.1500"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}

	// Nothing held out: the training rows are the headline, and both
	// the page and the table say the scores are on training images.
	r.Split, r.Methods = Split{TrainImages: 10}, r.Training()
	if len(r.Headline()) != 2 || r.Training() != nil {
		t.Fatalf("no held-out rows: headline %+v, training %+v", r.Headline(), r.Training())
	}
	b.Reset()
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	html, _ = r.HTML()
	if !strings.Contains(b.String(), "no held-out queries") || !strings.Contains(string(html), "No held-out queries") {
		t.Errorf("a run without held-out queries does not say so:\n%s", b.String())
	}
}

// The page draws a precision–recall chart, the headline learner's mAP per
// label against TF-IDF, and the stage times, inline.
func TestCharts(t *testing.T) {
	pr := func(top float64) []float64 {
		out := make([]float64, 11)
		for i := range out {
			out[i] = top * (1 - float64(i)/20)
		}
		return out
	}
	r := Report{
		Stages: []Stage{{Name: "describe", WallSeconds: 2, CPUSeconds: 3}, {Name: "train", WallSeconds: 1, CPUSeconds: 1}},
		Methods: []formats.ReportRow{
			{Method: "tfidf", Input: "bow", Split: "held-out", PR: pr(0.6), Labels: []string{"cat", "dog"}, LabelMAP: []float64{0.4, 0.5}},
			{Method: "oasis-diag", Input: "bow", Split: "held-out", PR: pr(0.7), Labels: []string{"cat", "dog"}, LabelMAP: []float64{0.6, 0.5}},
			{Method: "solis-ada", Input: "bow", Split: "held-out", PR: pr(0.8), Labels: []string{"dog", "cat"}, LabelMAP: []float64{0.7, 0.9}},
			{Method: "solis-ada", Input: "bow", Split: "training", PR: pr(0.9)},
		},
	}
	r.Sort()
	charts, err := r.Charts()
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, c := range charts {
		titles = append(titles, c.Title)
	}
	want := []string{"Precision–recall, bags of words", "mAP per label: solis-ada against tfidf", "Time per stage"}
	if !reflect.DeepEqual(titles, want) {
		t.Fatalf("charts %q, want %q", titles, want)
	}
	html, err := r.HTML()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(html), "<svg"); n != 3 {
		t.Errorf("report.html has %d inline SVGs, want 3", n)
	}
}

// CompareTo shows each method's change since an earlier run, on the same
// query set, and "new" for a method it lacks.
func TestCompareTo(t *testing.T) {
	earlier := Report{Methods: []formats.ReportRow{
		{Method: "tfidf", Input: "bow", Split: "held-out", MAP: 0.5, PrecisionAt10: 0.4},
		{Method: "solis-ada", Input: "bow", Split: "training", MAP: 0.9},
	}}
	r := Report{Split: Split{QueryImages: 3}, Methods: []formats.ReportRow{
		{Method: "tfidf", Input: "bow", Split: "held-out", MAP: 0.55, PrecisionAt10: 0.3},
		{Method: "solis-ada", Input: "bow", Split: "held-out", MAP: 0.7},
	}}
	r.ComparedTo = &Earlier{Run: "gs://b/runs/1", Methods: earlier.Methods}
	if d, p, ok := r.Change(r.Methods[0]); !ok || math.Abs(d-0.05) > 1e-12 || math.Abs(p+0.1) > 1e-12 {
		t.Errorf("tfidf change %v %v %v, want +0.05, -0.1", d, p, ok)
	}
	if _, _, ok := r.Change(r.Methods[1]); ok {
		t.Error("solis-ada held-out compared with its earlier training row")
	}
	table, html := renderings(t, r)
	for _, out := range []string{table, html} {
		for _, want := range []string{"0.0500", "new", "gs://b/runs/1"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	}
	js, _ := r.JSON()
	back, err := Parse(js)
	if err != nil || back.ComparedTo == nil || back.ComparedTo.Run != "gs://b/runs/1" || len(back.ComparedTo.Methods) != 2 {
		t.Errorf("round trip of compared_to: %+v, %v", back.ComparedTo, err)
	}
}

// CompareTo query by query shows each paired change with its interval,
// p-value and the queries paired, and says why where nothing paired.
func TestCompareToPaired(t *testing.T) {
	r := Report{Split: Split{QueryImages: 3}, PResolution: 0.002, Methods: []formats.ReportRow{
		{Method: "tfidf", Input: "bow", Split: "held-out", MAP: 0.55},
		{Method: "solis-ada", Input: "bow", Split: "held-out", MAP: 0.7},
	}}
	r.ComparedTo = &Earlier{Run: "runs/1", Methods: r.Methods, Paired: []PairedChange{
		{Method: "solis-ada", Input: "bow", Split: "held-out", Queries: 17, EarlierQueries: 18, LaterQueries: 19,
			MAPDiff: 0.0321, MAPDiffLow: 0.0105, MAPDiffHigh: 0.0533, MAPDiffP: 0.004, Significant: true},
		{Method: "tfidf", Input: "bow", Split: "held-out", EarlierQueries: 18, LaterQueries: 19},
	}}
	r.Sort()
	if p := r.ComparedTo.Paired; p[0].Method != "tfidf" || p[1].Method != "solis-ada" {
		t.Errorf("paired changes in the order %s, %s; want their rows' (the baseline first)", p[0].Method, p[1].Method)
	}
	table, page := renderings(t, r)
	page = html.UnescapeString(page)
	for _, out := range []string{table, page} {
		for _, want := range []string{"+0.0321", "[+0.0105, +0.0533]", "0.004", "no query in common"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	}
	if !strings.Contains(table, "[+0.0105, +0.0533] *") || !strings.Contains(page, "+0.0321 *") {
		t.Errorf("the significant change is not starred:\n%s\n%s", table, page)
	}
	if !strings.Contains(table, "17 of 19 / 18") || !strings.Contains(page, "17 (19 / 18)") {
		t.Errorf("the queries paired are missing:\n%s\n%s", table, page)
	}
	// The headline's "queries" is a count: the paired tables' column is
	// the set the queries came from.
	if !strings.Contains(table, "  query set  ") || !strings.Contains(page, "<th>Query set</th>") {
		t.Errorf("the paired tables do not name the query-set column \"query set\":\n%s\n%s", table, page)
	}
	js, _ := r.JSON()
	back, err := Parse(js)
	if err != nil || !reflect.DeepEqual(back.ComparedTo.Paired, r.ComparedTo.Paired) {
		t.Errorf("round trip of compared_to.paired: %+v, %v", back.ComparedTo, err)
	}
	r.ComparedTo.Paired, r.ComparedTo.Unpaired = nil, "the query sets differ entirely"
	table, page = renderings(t, r)
	for _, out := range []string{table, page} {
		if !strings.Contains(out, "No query-by-query comparison: the query sets differ entirely") && !strings.Contains(out, "no query-by-query comparison: the query sets differ entirely") {
			t.Errorf("output does not say why nothing paired:\n%s", out)
		}
		if !strings.Contains(out, "0.0000") {
			t.Errorf("output lacks the change of the means:\n%s", out)
		}
	}
}

// renderings returns r as the terminal table and as report.html.
func renderings(t *testing.T, r Report) (table, html string) {
	t.Helper()
	var b strings.Builder
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	h, err := r.HTML()
	if err != nil {
		t.Fatal(err)
	}
	return b.String(), string(h)
}
