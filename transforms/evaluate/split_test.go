package evaluate

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/bowline/bowline/formats"
)

func TestInterpolatedPrecision(t *testing.T) {
	for _, c := range []struct {
		rel   []bool
		total int
		want  []float64
	}{
		// Relevant at ranks 1 and 3 of 2: recall ½ at precision 1, recall 1
		// at precision ⅔.
		{[]bool{true, false, true}, 2, []float64{1, 1, 1, 1, 1, 1, 2.0 / 3, 2.0 / 3, 2.0 / 3, 2.0 / 3, 2.0 / 3}},
		// Precision rises from ½ (recall ⅓) to ⅔ (recall ⅔): interpolation
		// carries the later, higher precision back to recall ⅓'s levels.
		{[]bool{false, true, true, false}, 3, []float64{2.0 / 3, 2.0 / 3, 2.0 / 3, 2.0 / 3, 2.0 / 3, 2.0 / 3, 2.0 / 3, 0, 0, 0, 0}},
		// Truncated before all 4 relevant: the levels never reached are 0.
		{[]bool{true, true}, 4, []float64{1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0}},
		{nil, 0, make([]float64, RecallLevels)},
	} {
		got := InterpolatedPrecision([]float64{9}, c.rel, c.total)
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-12 {
				t.Errorf("InterpolatedPrecision(%v, %d) = %v, want %v", c.rel, c.total, got, c.want)
				break
			}
		}
	}
}

// scoresOf makes n queries, every third held out, with APs from ap(i).
func scoresOf(n int, ap func(i int) float64) []QueryScore {
	s := make([]QueryScore, n)
	for i := range s {
		s[i] = QueryScore{ID: fmt.Sprintf("q%03d", i), Label: fmt.Sprintf("l%d", i%4), Held: i%3 == 0, AP: ap(i), P10: ap(i) / 2,
			PR: slices.Repeat([]float64{ap(i)}, RecallLevels)}
	}
	return s
}

func TestRowsSplitsAndIntervals(t *testing.T) {
	scores := scoresOf(90, func(i int) float64 { return float64(i%10) / 10 })
	rows := Rows(formats.ReportRow{Method: "m"}, slices.Clone(scores), Options{Seed: 1})
	if len(rows) != 2 || rows[0].Split != HeldOut || rows[1].Split != Training {
		t.Fatalf("rows %+v: want a held-out row, then a training row", rows)
	}
	for _, r := range rows {
		var sum float64
		var n int
		for _, q := range scores {
			if q.Held == (r.Split == HeldOut) {
				sum += q.AP
				n++
			}
		}
		if r.Queries != int64(n) || math.Abs(r.MAP-sum/float64(n)) > 1e-12 {
			t.Errorf("%s: %d queries, mAP %v; want %d, %v", r.Split, r.Queries, r.MAP, n, sum/float64(n))
		}
		if !(r.MAPLow < r.MAP && r.MAP < r.MAPHigh) || !(r.PrecisionAt10Low < r.PrecisionAt10 && r.PrecisionAt10 < r.PrecisionAt10High) {
			t.Errorf("%s: intervals [%v, %v] and [%v, %v] do not surround mAP %v and P@10 %v", r.Split,
				r.MAPLow, r.MAPHigh, r.PrecisionAt10Low, r.PrecisionAt10High, r.MAP, r.PrecisionAt10)
		}
		if math.Abs(r.PR[0]-r.MAP) > 1e-12 || len(r.Labels) != 4 || len(r.LabelMAP) != 4 {
			t.Errorf("%s: PR %v, labels %v %v", r.Split, r.PR, r.Labels, r.LabelMAP)
		}
	}
	if none := Rows(formats.ReportRow{}, scoresOf(2, func(int) float64 { return 1 })[1:], Options{}); len(none) != 1 || none[0].Split != Training {
		t.Errorf("no held-out query: rows %+v, want the training row alone", none)
	}
}

func TestCompare(t *testing.T) {
	base := scoresOf(300, func(i int) float64 { return float64(i%7) / 10 })
	better := scoresOf(300, func(i int) float64 { return float64(i%7)/10 + 0.05 })
	same := scoresOf(300, func(i int) float64 { return float64(i%7) / 10 })
	rows := append(append(
		Rows(formats.ReportRow{Method: "tfidf", Input: "bow"}, slices.Clone(base), Options{}),
		Rows(formats.ReportRow{Method: "better", Input: "bow"}, slices.Clone(better), Options{})...),
		Rows(formats.ReportRow{Method: "same", Input: "bow"}, slices.Clone(same), Options{})...)
	scores := []Scores{{"tfidf", "bow", base}, {"better", "bow", better}, {"same", "bow", same}}
	if err := Compare(rows, scores, 1); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		switch r.Method {
		case "tfidf":
			if r.Baseline != "" {
				t.Errorf("the baseline is compared with %s", r.Baseline)
			}
		case "better":
			if r.Baseline != "tfidf" || math.Abs(r.MAPDiff-0.05) > 1e-9 || !r.Significant || r.MAPDiffP != 0 {
				t.Errorf("%s %s: %+v; want +0.05 over tfidf, significant", r.Method, r.Split, r)
			}
		case "same":
			if r.MAPDiff != 0 || r.Significant || r.MAPDiffP != 1 {
				t.Errorf("%s %s: diff %v significant %v p %v; want none", r.Method, r.Split, r.MAPDiff, r.Significant, r.MAPDiffP)
			}
		}
	}
	scores[1].Queries = scores[1].Queries[1:]
	if err := Compare(rows, scores, 1); err == nil {
		t.Error("methods scored on different queries compared without error")
	}
}
