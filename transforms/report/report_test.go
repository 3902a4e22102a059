package report

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
)

func TestReport(t *testing.T) {
	r := Report{
		Input: "in.csv", Output: "out",
		Config: map[string]string{"vocab": "100"},
		Counts: Counts{Images: 10, DeadLetters: 1},
		Methods: []formats.ReportRow{
			{Method: "solis-ada", MAP: 0.8, Sparsity: 0.5},
			{Method: string(learners.BaselineTFIDF), MAP: 0.5},
		},
	}
	r.Sort()
	if r.Methods[0].Method != string(learners.BaselineTFIDF) {
		t.Fatalf("baseline not first: %+v", r.Methods)
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
	for _, want := range []string{"<td>solis-ada</td>", "0.8000", "50.0%", "<code>in.csv</code>"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}

// MergeStages adds up the units of each stage: rows and worker time sum,
// wall time spans the first start to the last end, stages in start order.
func TestMergeStages(t *testing.T) {
	got := MergeStages([]Stage{
		Unit("bow", 10, 2, 5_000, 6_000),
		Unit("describe", 4, 3, 1_000, 3_000),
		Unit("bow", 20, 4, 5_500, 9_000),
		Unit("describe", 6, 6, 2_000, 4_500),
	})
	want := []Stage{
		{Name: "describe", Units: 2, RowsIn: 10, RowsOut: 9, WorkerSeconds: 4.5, WallSeconds: 3.5, StartMillis: 1_000, EndMillis: 4_500},
		{Name: "bow", Units: 2, RowsIn: 30, RowsOut: 6, WorkerSeconds: 4.5, WallSeconds: 4, StartMillis: 5_000, EndMillis: 9_000},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MergeStages =\n%+v\nwant\n%+v", got, want)
	}
	var b strings.Builder
	if err := (Report{Stages: got}).WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "describe") || !strings.Contains(b.String(), "3.5") {
		t.Errorf("table lacks the stages:\n%s", b.String())
	}
}
