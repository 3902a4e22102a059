package progress

import (
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 25, 16, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// A stage of 10 parts finishing one a second, with a period of 3 s, says
// its start, then at most one line per 3 s, then its end.
func TestRateLimit(t *testing.T) {
	tr := New(3 * time.Second)
	var got []string
	for i := 1; i <= 10; i++ {
		got = append(got, tr.Done(Unit{Stage: "describe", Noun: "parts", Of: 10, Rows: 8, Start: at(float64(i - 1))}, at(float64(i)))...)
	}
	want := []string{
		"describe: started at 16:00:00 UTC; 1 of 10 parts done, 8 rows in",
		"describe: 4 of 10 parts done, 32 rows in, 4s since it started",
		"describe: 7 of 10 parts done, 56 rows in, 7s since it started",
		"describe: finished 10 of 10 parts, 80 rows in, 10s since it started",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Stages are limited separately: a busy stage does not silence another.
func TestRateLimitPerStage(t *testing.T) {
	tr := New(time.Minute)
	n := 0
	for i := range 100 {
		n += len(tr.Done(Unit{Stage: "index", Noun: "parts", Start: at(0)}, at(float64(i))))
	}
	if n != 2 {
		t.Errorf("100 units in 99 s with a 1-minute period: %d lines, want 2 (start, one update)", n)
	}
	if l := tr.Done(Unit{Stage: "evaluate", Noun: "query shards", Start: at(98)}, at(99)); len(l) != 1 || !strings.HasPrefix(l[0], "evaluate: started") {
		t.Errorf("another stage's first unit: %q", l)
	}
}

// A stage run once per model knows its total once every model has been
// seen, says when each model's units are done, and finishes once.
func TestSources(t *testing.T) {
	tr := New(time.Hour)
	u := func(src string) Unit {
		return Unit{Stage: "index", Source: src, Noun: "parts", Of: 2, Sources: 2, Rows: 1, Start: at(0)}
	}
	steps := []struct {
		src  string
		want string
	}{
		{"a", "index: started at 16:00:00 UTC; 1 parts done, 1 rows in"},
		{"a", "index a: finished 2 parts; the stage has done 2 parts, 2 rows in, 2s since it started"},
		{"b", ""},
		{"b", "index: finished 4 of 4 parts, 4 rows in, 4s since it started"},
	}
	for i, st := range steps {
		got := strings.Join(tr.Done(u(st.src), at(float64(i+1))), "\n")
		if got != st.want {
			t.Errorf("unit %d of %s: %q, want %q", i, st.src, got, st.want)
		}
	}
}

// With an unknown number of sources, the count has no total and the stage
// never claims to have finished.
func TestUnknownSources(t *testing.T) {
	tr := New(time.Hour)
	var all []string
	for i, src := range []string{"tfidf", "tfidf", "solis-ada"} {
		all = append(all, tr.Done(Unit{Stage: "evaluate", Source: src, Noun: "query shards", Of: 2, Start: at(0)}, at(float64(i+1)))...)
	}
	for _, l := range all {
		if strings.Contains(l, "evaluate: finished") || strings.Contains(l, " of ") && !strings.Contains(l, "tfidf: finished") {
			t.Errorf("line %q claims a total", l)
		}
	}
	if len(all) != 2 {
		t.Errorf("lines %q, want the start and tfidf's end", all)
	}
}

// A record of several units (the vocabulary's chunks) counts them all.
func TestSeveralUnits(t *testing.T) {
	l := New(time.Hour).Done(Unit{Stage: "vocabulary", Noun: "chunks", Units: 8, Of: 8, Rows: 1000, Start: at(0)}, at(75))
	if len(l) != 1 || l[0] != "vocabulary: finished 8 of 8 chunks, 1000 rows in, 1m15s since it started" {
		t.Errorf("lines %q", l)
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		850 * time.Millisecond:                    "850ms",
		42 * time.Second:                          "42s",
		12*time.Minute + 5*time.Second:            "12m05s",
		3*time.Hour + 7*time.Minute + time.Second: "3h07m",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}

// A meter of 100 centroids chosen one a second, with a period of 20 s,
// says how far it has got every 20 s and when it is done, once.
func TestMeter(t *testing.T) {
	m := New(20*time.Second).Meter("vocabulary seeding", "centroids", 100, at(0))
	var got []string
	for i := int64(1); i <= 100; i++ {
		if line, ok := m.Done(i, at(float64(i))); ok {
			got = append(got, line)
		}
	}
	if _, ok := m.Done(100, at(200)); ok {
		t.Error("a finished meter spoke again")
	}
	want := []string{
		"vocabulary seeding: 20 of 100 centroids done, 20s since it started",
		"vocabulary seeding: 40 of 100 centroids done, 40s since it started",
		"vocabulary seeding: 60 of 100 centroids done, 1m00s since it started",
		"vocabulary seeding: 80 of 100 centroids done, 1m20s since it started",
		"vocabulary seeding: finished 100 centroids, 1m40s since it started",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
