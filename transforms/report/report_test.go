package report

import (
	"encoding/json"
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
