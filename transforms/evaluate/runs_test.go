package evaluate

import (
	"errors"
	"math"
	"testing"

	"github.com/bowline/bowline/formats"
)

// rowsOf returns the rows as a RowsFunc.
func rowsOf(rows []formats.QueryScore) RowsFunc {
	return func(fn func(*formats.QueryScore) error) error {
		for i := range rows {
			if err := fn(&rows[i]); err != nil {
				return err
			}
		}
		return nil
	}
}

func TestQueryScoreRow(t *testing.T) {
	q := QueryScore{ID: "a", Label: "cat", Held: true, AP: 0.5, P10: 0.3, NDCG10: 0.4, Seconds: 2}
	want := formats.QueryScore{Method: "tfidf+sv", Input: "bow", Split: HeldOut, ImageID: "a", Label: "cat", AP: 0.5, P10: 0.3, NDCG10: 0.4}
	if got := q.Row("tfidf+sv", "bow"); got != want {
		t.Errorf("held-out row %+v, want %+v", got, want)
	}
	q.Held = false
	if got := q.Row("tfidf", "bow"); got.Split != Training {
		t.Errorf("training query's row in set %q", got.Split)
	}
}

func TestCompareRuns(t *testing.T) {
	row := func(method, split, id string, ap float64) formats.QueryScore {
		return formats.QueryScore{Method: method, Input: "bow", Split: split, ImageID: id, AP: ap}
	}
	earlier := []formats.QueryScore{
		row("tfidf", HeldOut, "a", 0.5), row("tfidf", HeldOut, "b", 0.25), row("tfidf", HeldOut, "c", 1),
		row("solis-ada", HeldOut, "x", 0.5),
		row("tfidf", Training, "t", 0.5),
	}
	later := []formats.QueryScore{
		// b and c shared, d new: the later run's tfidf is up by 0.25 on b
		// and unchanged on c.
		row("tfidf", HeldOut, "d", 0), row("tfidf", HeldOut, "c", 1), row("tfidf", HeldOut, "b", 0.5),
		row("solis-ada", HeldOut, "y", 0.5),
		row("oasis", HeldOut, "a", 0.5),
		row("tfidf", Training, "t", 0.5),
	}
	got, err := CompareRuns(rowsOf(earlier), rowsOf(later), 7)
	if err != nil {
		t.Fatal(err)
	}
	// oasis is new: left out. Sorted by method, input and set.
	if len(got) != 3 {
		t.Fatalf("%d changes, want 3: %+v", len(got), got)
	}
	s, tf, tr := got[0], got[1], got[2]
	if s.Method != "solis-ada" || s.Queries != 0 || s.EarlierQueries != 1 || s.LaterQueries != 1 || s.MAPDiff != 0 {
		t.Errorf("solis-ada, no query in common: %+v", s)
	}
	if tf.Method != "tfidf" || tf.Split != HeldOut || tf.Queries != 2 || tf.EarlierQueries != 3 || tf.LaterQueries != 3 || math.Abs(tf.MAPDiff-0.125) > 1e-15 {
		t.Errorf("tfidf held-out: %+v, want 2 of 3 / 3 paired, +0.125", tf)
	}
	want, _ := PairedBootstrap([]float64{0.25, 1}, []float64{0.5, 1}, Resamples, 7, Level)
	if tf.MAPDiff != want.Diff || tf.MAPDiffLow != want.Lo || tf.MAPDiffHigh != want.Hi || tf.MAPDiffP != want.P || tf.Significant != want.Significant {
		t.Errorf("tfidf held-out: %+v, want PairedBootstrap's %+v over b and c in id order", tf, want)
	}
	if tr.Split != Training || tr.Queries != 1 || tr.MAPDiff != 0 || tr.MAPDiffLow != 0 || tr.MAPDiffHigh != 0 || tr.MAPDiffP != 1 || tr.Significant {
		t.Errorf("tfidf training, unchanged: %+v, want 0 [0, 0], p 1", tr)
	}

	twice := append([]formats.QueryScore{row("tfidf", HeldOut, "c", 0)}, later...)
	if _, err := CompareRuns(rowsOf(earlier), rowsOf(twice), 7); err == nil {
		t.Error("a query scored twice in the later run compared")
	}
	if _, err := CompareRuns(rowsOf(twice), rowsOf(later), 7); err == nil {
		t.Error("a query scored twice in the earlier run compared")
	}
	bad := errors.New("unreadable")
	if _, err := CompareRuns(func(func(*formats.QueryScore) error) error { return bad }, rowsOf(later), 7); !errors.Is(err, bad) {
		t.Errorf("unreadable earlier run: %v", err)
	}
}
