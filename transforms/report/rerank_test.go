package report

import (
	"slices"
	"testing"

	"github.com/bowline/bowline/formats"
)

// The baseline's re-ranked and expanded rows follow the baseline, before
// the learners; a learner's follow it.
func TestSortReranked(t *testing.T) {
	var r Report
	for _, m := range []string{"solis-ada+sv", "tfidf+sv+qe", "solis-ada", "tfidf+sv", "solis-ada+sv+qe", "tfidf"} {
		r.Methods = append(r.Methods, formats.ReportRow{Method: m, Input: "bow", Split: heldOut})
	}
	r.Sort()
	var got []string
	for _, m := range r.Methods {
		got = append(got, m.Method)
	}
	if want := []string{"tfidf", "tfidf+sv", "tfidf+sv+qe", "solis-ada", "solis-ada+sv", "solis-ada+sv+qe"}; !slices.Equal(got, want) {
		t.Errorf("sorted %v, want %v", got, want)
	}
}
