package bowline

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	rundir "github.com/bowline/bowline/formats/run"
	"github.com/bowline/bowline/transforms/report"
)

// queryScores reads the per-query table of the run in dir, by method,
// input and query set, then image id, failing on a query listed twice.
func queryScores(t *testing.T, dir string) map[[3]string]map[string]formats.QueryScore {
	t.Helper()
	rows, err := fileio.ReadAll[formats.QueryScore](context.Background(), fileio.Join(dir, rundir.TablePattern(rundir.QueryScoresTable)))
	if err != nil || len(rows) == 0 {
		t.Fatalf("%s: %d per-query rows (%v)", dir, len(rows), err)
	}
	out := map[[3]string]map[string]formats.QueryScore{}
	for _, r := range rows {
		k := [3]string{r.Method, r.Input, r.Split}
		if out[k] == nil {
			out[k] = map[string]formats.QueryScore{}
		}
		if _, dup := out[k][r.ImageID]; dup {
			t.Errorf("%s: query %s listed twice under %v", dir, r.ImageID, k)
		}
		out[k][r.ImageID] = r
	}
	return out
}

// checkQueryScores checks that the run in dir lists every query of each
// report row once, under the row's method, input and query set, with the
// average precisions the row's mAP averages, and nothing else.
func checkQueryScores(t *testing.T, dir string, r report.Report) map[[3]string]map[string]formats.QueryScore {
	t.Helper()
	byRow := queryScores(t, dir)
	if len(byRow) != len(r.Methods) {
		t.Errorf("%s: per-query rows of %d methods and query sets, the report has %d rows", dir, len(byRow), len(r.Methods))
	}
	for _, m := range r.Methods {
		qs := byRow[[3]string{m.Method, m.Input, m.Split}]
		if int64(len(qs)) != m.Queries {
			t.Errorf("%s %s %s: %d queries in the per-query table, the report row has %d", dir, m.Method, m.Split, len(qs), m.Queries)
			continue
		}
		var sum, p10 float64
		for _, q := range qs {
			sum, p10 = sum+q.AP, p10+q.P10
		}
		if n := float64(len(qs)); math.Abs(sum/n-m.MAP) > 1e-12 || math.Abs(p10/n-m.PrecisionAt10) > 1e-12 {
			t.Errorf("%s %s %s: per-query mean AP %v, P@10 %v; report mAP %v, P@10 %v", dir, m.Method, m.Split, sum/n, p10/n, m.MAP, m.PrecisionAt10)
		}
	}
	return byRow
}

// checkPairedWithItself checks that a run compared with one identical to
// it pairs every query of every row and finds no change at all.
func checkPairedWithItself(t *testing.T, r report.Report) {
	t.Helper()
	e := r.ComparedTo
	if e == nil || len(e.Paired) != len(r.Methods) || e.Unpaired != "" {
		t.Fatalf("compared with an identical run: %+v, want every one of %d rows paired", e, len(r.Methods))
	}
	for _, c := range e.Paired {
		m, ok := r.MethodOn(c.Method, c.Split)
		if !ok || c.Queries != m.Queries || c.EarlierQueries != m.Queries || c.LaterQueries != m.Queries {
			t.Errorf("%s %s: paired %d of %d / %d queries, the row has %d", c.Method, c.Split, c.Queries, c.LaterQueries, c.EarlierQueries, m.Queries)
		}
		if c.MAPDiff != 0 || c.MAPDiffLow != 0 || c.MAPDiffHigh != 0 || c.MAPDiffP != 1 || c.Significant {
			t.Errorf("%s %s: change since an identical run %+v, want 0 [0, 0], p 1", c.Method, c.Split, c)
		}
	}
}

// checkPairedShared checks that a run compared with one of another seed
// (another split) pairs, method by method and set by set, exactly the
// queries both runs evaluated.
func checkPairedShared(t *testing.T, r report.Report, earlier, later map[[3]string]map[string]formats.QueryScore) {
	t.Helper()
	e := r.ComparedTo
	if e == nil || len(e.Paired) == 0 {
		t.Fatalf("compared with a run of another seed: %+v, want paired rows", e)
	}
	fewer := false
	for _, c := range e.Paired {
		k := [3]string{c.Method, c.Input, c.Split}
		shared := 0
		for id := range later[k] {
			if _, ok := earlier[k][id]; ok {
				shared++
			}
		}
		if c.Queries != int64(shared) || c.LaterQueries != int64(len(later[k])) || c.EarlierQueries != int64(len(earlier[k])) {
			t.Errorf("%v: paired %d of %d / %d queries, want the %d shared of %d / %d", k, c.Queries, c.LaterQueries, c.EarlierQueries, shared, len(later[k]), len(earlier[k]))
		}
		fewer = fewer || shared < len(later[k])
	}
	if !fewer {
		t.Errorf("another seed's run evaluated the same queries as this one: the test pairs nothing it would not pair anyway")
	}
}

// checkOldEarlier compares the run b with a copy of the run a as a run
// made before per-query files: its manifest lists none and the files are
// gone. The comparison is by the rows alone, as before them, and says so.
func checkOldEarlier(t *testing.T, a, b string, rb report.Report) {
	t.Helper()
	ctx := context.Background()
	old := filepath.Join(t.TempDir(), "old")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	m, err := fileio.RunDir(a).Manifest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var files []rundir.ManifestFile
	for _, f := range m.Files {
		if table, ok := rundir.ShardTable(f.Name); ok && table == rundir.QueryScoresTable {
			continue
		}
		files = append(files, f)
	}
	m.Files = files
	js, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := os.ReadFile(filepath.Join(a, rundir.ReportName))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{rundir.ManifestName: js, rundir.ReportName: rep} {
		if err := os.WriteFile(filepath.Join(old, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, err := report.LoadEarlier(ctx, fileio.RunDir(old))
	if err != nil {
		t.Fatal(err)
	}
	e = compareEarlier(ctx, e, b, queryScoreNames(t, b), 1)
	if len(e.QueryScores) != 0 || len(e.Paired) != 0 || !strings.Contains(e.Unpaired, "no per-query scores") {
		t.Fatalf("compared with a run without per-query files: %d files, %d paired, %q; want none, and why", len(e.QueryScores), len(e.Paired), e.Unpaired)
	}
	r := rb
	r.ComparedTo = e
	for _, m := range r.Methods {
		if d, p, ok := r.Change(m); !ok || d != 0 || p != 0 {
			t.Errorf("%s %s: change since the old run %v %v (compared %v), want exactly 0", m.Method, m.Split, d, p, ok)
		}
	}
	var w bytes.Buffer
	if err := r.WriteTable(&w); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(w.String(), "since earlier") || !strings.Contains(w.String(), "no query-by-query comparison: the earlier run has no per-query scores") {
		t.Errorf("table compared with an old run:\n%s", w.String())
	}
}

// checkEarlierInOutput compares the run in b with itself read before it
// ran, as --compare_to naming --output does: its per-query files are the
// run's own by then, and they are not paired.
func checkEarlierInOutput(t *testing.T, b string) {
	t.Helper()
	ctx := context.Background()
	e, err := report.LoadEarlier(ctx, fileio.RunDir(b))
	if err != nil || len(e.QueryScores) == 0 {
		t.Fatalf("earlier run %s: %+v, %v", b, e, err)
	}
	names := queryScoreNames(t, b)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(b, link); err != nil {
		t.Fatal(err)
	}
	// The same directory in other spellings: a trailing slash, a dot
	// element, a symbolic link.
	for _, out := range []string{b + "/", b + "/.", link} {
		got := compareEarlier(ctx, e, out, names, 1)
		if len(got.Paired) != 0 || !strings.Contains(got.Unpaired, "output directory") {
			t.Errorf("compared with the run in its own output %s: %d paired, %q; want none, and why", out, len(got.Paired), got.Unpaired)
		}
	}
}

// queryScoreNames returns the names of the per-query files in dir.
func queryScoreNames(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, rundir.TablePattern(rundir.QueryScoresTable)))
	if err != nil || len(paths) == 0 {
		t.Fatalf("%d per-query files in %s (%v)", len(paths), dir, err)
	}
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = filepath.Base(p)
	}
	return names
}
