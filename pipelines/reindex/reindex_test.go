package reindex

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/blob"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/formats/gcstest"
	"github.com/bowline/bowline/formats/published"
	"github.com/bowline/bowline/formats/run"
	"github.com/bowline/bowline/infra/prismretry"
	"github.com/bowline/bowline/pipelines/bowline"
	"github.com/bowline/bowline/pipelines/internal/shapestest"
	"github.com/bowline/bowline/transforms/report"
	"github.com/bowline/bowline/transforms/setting"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, prismretry.Runner) }

// shapes is the project's own labelled test set, made by cmd/mktestdata.
var shapes = shapestest.Labels

// options returns a night's options for the shapes set, scaled down, with
// a clock day days after a fixed start, so that run ids sort as the
// nights ran.
func options(input, root string, day int) Options {
	c := bowline.DefaultConfig()
	c.Input = input
	c.Vocab.K = 200
	c.Learning.Learners = []string{"solis-ada"}
	offset := time.Until(time.Date(2026, 11, 25+day, 7, 15, 0, 0, time.UTC))
	return Options{Job: c, Root: root, Incremental: true, ServingLearner: "solis-ada", Limits: DefaultLimits(), Keep: 5,
		Now: func() time.Time { return time.Now().Add(offset) }, Run: runPrism}
}

// runPrism runs the tests' jobs on in-process Prism, again if Prism's own
// race failed them, as cmd/reindex does.
func runPrism(ctx context.Context, p *beam.Pipeline) error {
	_, err := prismretry.Execute(ctx, p)
	return err
}

// TestThreeNights plays the three nights against a GCS emulator,
// the job on Prism in-process: a first full night on 84 of the 96 shapes
// images, published; a second with all 96, starting from the first,
// published; a third where half of the 12 images new on the second night
// are replaced by corrupt files, refused by the gate, published.json still
// naming the second night.
func TestThreeNights(t *testing.T) {
	ctx := context.Background()
	gcstest.Start(t, "bucket")
	root := "gs://bucket/root"
	dir := t.TempDir()
	rows := shapestest.Rows(t)
	night := func(input string, day int) (Result, error) {
		o := options(input, root, day)
		// 18 held-out queries make the mAP noisy (±0.1 is its 95%
		// interval): the gate on mAP is TestGate's and
		// TestNightAroundTheJob's; these nights are judged on their dead
		// letters and image counts.
		o.Limits.MaxMAPDrop = 0.1
		return Night(ctx, o)
	}

	// Night 1: the first 14 images of each label (14 of 16, 87.5%).
	var first, added [][]string
	for _, r := range rows[1:] {
		if n := r[0][len(r[0])-2:]; n == "14" || n == "15" {
			added = append(added, r)
		} else {
			first = append(first, r)
		}
	}
	if len(first) != 84 || len(added) != 12 {
		t.Fatalf("%d and %d images: the shapes set changed", len(first), len(added))
	}
	in1 := shapestest.WriteCSV(t, dir, "night1.csv", append([][]string{rows[0]}, first...))
	start := time.Now()
	r1, err := night(in1, 0)
	t1 := time.Since(start).Round(time.Millisecond)
	if err != nil {
		t.Fatalf("night 1: %v", err)
	}
	if r1.Previous != nil || r1.Incremental || r1.Published == nil || !r1.Verdict.Pass {
		t.Fatalf("night 1: %+v", r1)
	}
	pub, gen1, err := published.Read(ctx, root)
	if err != nil || pub.Run != "runs/"+r1.ID || pub.RunURI != root+"/runs/"+r1.ID || pub.Images != 84 || pub.Previous != "" || pub.ServingLearner != "solis-ada" {
		t.Fatalf("published after night 1: %+v (%v)", pub, err)
	}
	if m, ok := r1.Report.Method("solis-ada"); !ok || pub.MAP["solis-ada"] != m.MAP || pub.MAP["tfidf"] == 0 {
		t.Errorf("published mAP %v, report %+v", pub.MAP, m)
	}
	checkGate(t, r1.Dir, OutcomePublished, "")

	// Night 2: every image, 12 more (+14%).
	in2 := shapestest.WriteCSV(t, dir, "night2.csv", rows)
	start = time.Now()
	r2, err := night(in2, 1)
	t2 := time.Since(start).Round(time.Millisecond)
	if err != nil {
		t.Fatalf("night 2: %v", err)
	}
	if r2.Previous == nil || r2.Previous.Run != pub.Run || r2.Published == nil || r2.Verdict.ComparedWith != pub.Run {
		t.Fatalf("night 2: %+v", r2)
	}
	pub2, gen2, err := published.Read(ctx, root)
	if err != nil || pub2.Run != "runs/"+r2.ID || pub2.Previous != pub.Run || pub2.Images != 96 || gen2 == gen1 {
		t.Fatalf("published after night 2: %+v gen %d (night 1's %d) (%v)", pub2, gen2, gen1, err)
	}
	// Night 2 started from night 1: it described only the 12 new images
	// and carried the 84 others over, with night 1's vocabulary.
	l := r2.Lineage
	if !r2.Incremental || l == nil || l.Previous != pub.RunURI || l.FullReason != "" {
		t.Fatalf("night 2: incremental %v, lineage %+v, want started from %s", r2.Incremental, l, pub.RunURI)
	}
	if l.Images.Listed != 96 || l.Images.Described != 12 || l.Images.Carried != 84 || !l.Vocabulary.Kept {
		t.Errorf("night 2 images %+v, vocabulary %+v; want 96 listed, 12 described, 84 carried over, the vocabulary kept", l.Images, l.Vocabulary)
	}
	if r1.Lineage == nil || r1.Lineage.Images.Described != 84 || r1.Lineage.Images.Carried != 0 {
		t.Errorf("night 1 lineage %+v, want 84 images described", r1.Lineage)
	}
	t.Logf("night 1: %v, %d images described; night 2: %v, %d described, %d carried over, warm-started %v",
		t1, r1.Lineage.Images.Described, t2, l.Images.Described, l.Images.Carried, l.WarmStarted)
	checkGate(t, r2.Dir, OutcomePublished, "")
	// The report compares itself with the published run.
	if r2.Report.ComparedTo == nil || r2.Report.ComparedTo.Run != r1.Dir {
		t.Errorf("night 2's report compared with %+v, want %s", r2.Report.ComparedTo, r1.Dir)
	}

	// Night 3: half the new images replaced by truncated copies: 6 dead
	// letters of 96 images, over the 5% limit.
	night3 := slices.Clone(rows)
	broken := 0
	for i, r := range night3 {
		if i == 0 || !slices.ContainsFunc(added, func(a []string) bool { return a[0] == r[0] }) || broken == len(added)/2 {
			continue
		}
		data, err := os.ReadFile(r[1])
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "broken-"+filepath.Base(r[1]))
		if err := os.WriteFile(p, data[:len(data)/3], 0o644); err != nil {
			t.Fatal(err)
		}
		night3[i] = []string{r[0], p, r[2], r[3]}
		broken++
	}
	in3 := shapestest.WriteCSV(t, dir, "night3.csv", night3)
	r3, err := night(in3, 2)
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("night 3: %v, want refused by the gate", err)
	}
	t.Logf("night 3: %v", err)
	if r3.Published != nil || r3.Verdict.Pass || r3.Report.Counts.DeadLetters != 6 {
		t.Fatalf("night 3: %+v", r3)
	}
	if !strings.Contains(err.Error(), "6 dead letters of 96 images") || !strings.Contains(err.Error(), r3.Dir) || !strings.Contains(err.Error(), pub2.Run) {
		t.Errorf("night 3's error does not say why, where the run is and what is published: %v", err)
	}
	after, gen3, err := published.Read(ctx, root)
	if err != nil || gen3 != gen2 || fmt.Sprint(after) != fmt.Sprint(pub2) {
		t.Fatalf("published.json changed by a refused night: %+v gen %d, was %+v gen %d (%v)", after, gen3, pub2, gen2, err)
	}
	checkGate(t, r3.Dir, OutcomeRefused, CheckDeadRate)
	if _, err := fileio.RunDir(r3.Dir).Manifest(ctx); err != nil {
		t.Errorf("the refused run was not kept whole: %v", err)
	}
	if ids, err := Runs(ctx, root); err != nil || !slices.Equal(ids, []string{r1.ID, r2.ID, r3.ID}) {
		t.Errorf("runs %v (%v), want the three nights'", ids, err)
	}
}

// checkGate checks the gate.json of the run in dir: its outcome and which
// check failed ("" for none).
func checkGate(t *testing.T, dir, outcome, failed string) {
	t.Helper()
	g, err := LoadGate(context.Background(), dir)
	if err != nil {
		t.Fatalf("gate.json: %v", err)
	}
	var names []string
	for _, c := range g.Failed() {
		names = append(names, c.Name)
	}
	if g.Outcome != outcome || strings.Join(names, ",") != failed || len(g.Checks) != 3 || g.Run != "runs/"+filepath.Base(dir) {
		t.Errorf("gate.json of %s: %+v, want outcome %s, failed %q", dir, g, outcome, failed)
	}
	for _, c := range g.Checks {
		if c.Detail == "" || (c.Name == CheckDeadRate && c.Limit != DefaultLimits().MaxDeadRate) {
			t.Errorf("gate.json check %+v", c)
		}
	}
}

// fakeRun returns a Run that runs no pipeline but leaves, in the newest
// run under the local root, the files of a finished run whose report is r, and then
// calls then (if not nil): a night in a test that is about what happens
// around the job.
func fakeRun(root string, r report.Report, then func()) func(context.Context, *beam.Pipeline) error {
	return func(ctx context.Context, _ *beam.Pipeline) error {
		ids, err := Runs(ctx, root) // a local root: the new run's directory exists
		if err != nil || len(ids) == 0 {
			return fmt.Errorf("no run under %s: %v", root, err)
		}
		dir := RunDir(root, ids[len(ids)-1])
		js, err := r.JSON()
		if err != nil {
			return err
		}
		if err := blob.Write(ctx, blob.Join(dir, run.ReportName), js); err != nil {
			return err
		}
		m, _ := json.Marshal(run.Manifest{Job: "bowline", Finished: time.Now(), Files: []run.ManifestFile{{Name: run.ReportName, Bytes: int64(len(js))}}})
		if err := blob.Write(ctx, blob.Join(dir, run.ManifestName), m); err != nil {
			return err
		}
		if then != nil {
			then()
		}
		return nil
	}
}

func fakeReport(images, dead int64, mAP float64) report.Report {
	return report.Report{Counts: report.Counts{Images: images, DeadLetters: dead, Described: images - dead},
		Methods: []formats.ReportRow{{Method: "tfidf", Split: "held-out", MAP: mAP / 2}, {Method: "solis-ada", Split: "held-out", MAP: mAP}}}
}

// TestNightAroundTheJob runs nights whose job is faked (fakeRun) on a
// local root: the publish, the gate on mAP, the race, and the pruning.
func TestNightAroundTheJob(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	night := func(day int, r report.Report, then func()) (Result, error) {
		o := options(shapes, root, day)
		o.Keep = 2
		o.Run = fakeRun(root, r, then)
		return Night(ctx, o)
	}
	r1, err := night(0, fakeReport(100, 0, 0.8), nil)
	if err != nil || r1.Published == nil {
		t.Fatalf("night 1: %+v, %v", r1, err)
	}
	// A fall of 0.02 in mAP is refused.
	r2, err := night(1, fakeReport(100, 0, 0.78), nil)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "solis-ada mAP 0.7800, published 0.8000") {
		t.Fatalf("night 2: %v, want refused for its mAP", err)
	}
	checkGate(t, r2.Dir, OutcomeRefused, CheckMAPDrop)

	// Night 3 passes, but night 4, started from the same published run,
	// publishes while night 3's job runs: night 3 loses.
	var r4 Result
	var err4 error
	r3, err := night(2, fakeReport(100, 0, 0.81), func() {
		r4, err4 = night(3, fakeReport(101, 0, 0.82), nil)
	})
	if err4 != nil || r4.Published == nil {
		t.Fatalf("night 4: %+v, %v", r4, err4)
	}
	if !errors.Is(err, published.ErrRace) || r3.Published != nil {
		t.Fatalf("night 3: %v, want the publish race lost", err)
	}
	if p, err := published.ReadPublished(ctx, root); err != nil || p.Run != "runs/"+r4.ID || p.Previous != "runs/"+r1.ID {
		t.Fatalf("published %+v (%v), want night 4 after night 1", p, err)
	}
	// Night 4 published while night 3, older, had not been judged: night
	// 3 could no longer publish (published.json changed since it
	// started), so night 4 removed its run as unfinished, with night 2's,
	// refused before it; night 1, published, stays (keep 2 counts
	// published runs), and night 3 says what became of its run.
	if !strings.Contains(err.Error(), "removed by a later night that published") {
		t.Errorf("night 3: %v", err)
	}
	if got := r4.Pruned.IDs(); !slices.Equal(got, []string{r2.ID, r3.ID}) {
		t.Errorf("night 4 pruned %v, want nights 2 and 3 (%s, %s)", got, r2.ID, r3.ID)
	}
	if ids, _ := Runs(ctx, root); !slices.Equal(ids, []string{r1.ID, r4.ID}) {
		t.Errorf("runs left %v", ids)
	}
}

// TestKeepCountsPublishedRuns plays issue 21's nights with --keep 2: a
// night published, a killed night's folder, two refused nights (dead
// letters, shrink), then a good night. The good night keeps the run its
// published.json names as "previous" and removes the refused and killed
// runs, which are older than it, reporting each; a second good night
// then removes the oldest published run.
func TestKeepCountsPublishedRuns(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	var log bytes.Buffer
	night := func(day int, r report.Report) (Result, error) {
		o := options(shapes, root, day)
		o.Keep = 2
		o.Run = fakeRun(root, r, nil)
		o.Log = &log
		return Night(ctx, o)
	}
	a, err := night(0, fakeReport(100, 0, 0.8))
	if err != nil {
		t.Fatalf("night 1: %v", err)
	}
	// A night killed during its job: part of its files, no manifest.
	killed := "20261125T120000Z-dead"
	if err := blob.Write(ctx, blob.Join(RunDir(root, killed), "features-00000-of-00004.parquet"), make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	b, err := night(1, fakeReport(100, 10, 0.8))
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("night 2: %v, want refused for its dead letters", err)
	}
	// Nothing was published since the killed night started: it might be
	// running still, so it is reported, not removed.
	if len(b.Pruned.Removed) != 0 || len(b.Pruned.Unfinished) != 1 || b.Pruned.Unfinished[0].ID != killed {
		t.Errorf("night 2 pruned %+v, want the killed run reported", b.Pruned)
	}
	c, err := night(2, fakeReport(50, 0, 0.8))
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("night 3: %v, want refused for its shrink", err)
	}
	d, err := night(3, fakeReport(100, 0, 0.8))
	if err != nil || d.Published == nil || d.Published.Previous != RunRel(a.ID) {
		t.Fatalf("night 4: %+v, %v; want published after night 1", d.Published, err)
	}
	if _, err := fileio.RunDir(RunDir(root, a.ID)).Manifest(ctx); err != nil {
		t.Errorf("the run published.json names as previous is gone: %v", err)
	}
	if got, want := d.Pruned.IDs(), []string{killed, b.ID, c.ID}; !slices.Equal(got, want) {
		t.Errorf("night 4 pruned %v, want %v", got, want)
	}
	if ids, _ := Runs(ctx, root); !slices.Equal(ids, []string{a.ID, d.ID}) {
		t.Errorf("runs left %v, want the two published", ids)
	}
	if !strings.Contains(log.String(), "removed run "+killed+": unfinished (no manifest.json") {
		t.Errorf("the killed run's removal was not logged:\n%s", log.String())
	}
	e, err := night(4, fakeReport(100, 0, 0.8))
	if err != nil || !slices.Equal(e.Pruned.IDs(), []string{a.ID}) {
		t.Fatalf("night 5 pruned %v (%v), want night 1's run", e.Pruned.IDs(), err)
	}
	if ids, _ := Runs(ctx, root); !slices.Equal(ids, []string{d.ID, e.ID}) {
		t.Errorf("runs left %v", ids)
	}
}

// TestLocksThatStopNights: a publish lock that would stop the night's
// publish — left by a killed process, empty (a writer killed while writing
// it, as `touch` leaves it), garbage, or held by a process on another host
// — stops the next night before its job, with what is known of it and the
// command that clears it, and is not called a publish by another night.
func TestLocksThatStopNights(t *testing.T) {
	ctx := context.Background()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true command:", err)
	}
	host, _ := os.Hostname()
	ago := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	for _, tc := range []struct {
		name, record string
		age          time.Duration // of the file, for a lock without a record
		want         error
		says         string
	}{
		{"killed process", fmt.Sprintf(`{"host": %q, "pid": %d, "time": %q}`, host, dead.Process.Pid, time.Now().UTC().Format(time.RFC3339)), 0, blob.ErrStaleLock, "is not running on this host"},
		{"empty, just touched", "", 0, blob.ErrStaleLock, "(the file is empty), is stale"},
		{"garbage", "{\"host\": \"vm\", \"pi", time.Minute, blob.ErrStaleLock, "(the file is not an owner record), is stale"},
		{"another host", fmt.Sprintf(`{"host": "elsewhere", "pid": 4242, "time": %q}`, ago), 0, blob.ErrLocked, "cannot tell whether process 4242 still runs on elsewhere"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			lock := published.Path(root) + ".lock"
			if err := os.WriteFile(lock, []byte(tc.record), 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.age > 0 {
				old := time.Now().Add(-tc.age)
				if err := os.Chtimes(lock, old, old); err != nil {
					t.Fatal(err)
				}
			}
			ran := false
			o := options(shapes, root, 0)
			o.Run = func(ctx context.Context, p *beam.Pipeline) error {
				ran = true
				return fakeRun(root, fakeReport(100, 0, 0.8), nil)(ctx, p)
			}
			_, err := Night(ctx, o)
			if !errors.Is(err, tc.want) || errors.Is(err, published.ErrRace) || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "rm "+lock) || ran {
				t.Fatalf("night with the lock: job ran %v, error %v; want refused before the job, %v saying %q and naming rm %s", ran, err, tc.want, tc.says, lock)
			}
			if err := os.Remove(lock); err != nil {
				t.Fatal(err)
			}
			if r, err := Night(ctx, o); err != nil || r.Published == nil {
				t.Fatalf("night after the lock was cleared: %v", err)
			}
		})
	}
}

// TestLockLeftDuringTheJob: a lock left while the night's job ran stops
// its publish; the night says so, and that nothing else was published,
// instead of calling it a race lost to another night.
func TestLockLeftDuringTheJob(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	lock := published.Path(root) + ".lock"
	o := options(shapes, root, 0)
	o.Run = fakeRun(root, fakeReport(100, 0, 0.8), func() {
		old := time.Now().Add(-time.Minute)
		if err := os.WriteFile(lock, nil, 0o644); err != nil {
			t.Error(err)
		}
		if err := os.Chtimes(lock, old, old); err != nil {
			t.Error(err)
		}
	})
	r, err := Night(ctx, o)
	if !errors.Is(err, blob.ErrStaleLock) || errors.Is(err, published.ErrRace) || !strings.Contains(err.Error(), "passed the gate but was not published") || !strings.Contains(err.Error(), "rm "+lock) {
		t.Fatalf("night whose publish met a lock: %v; want the lock named, not a race", err)
	}
	if g, gerr := LoadGate(ctx, r.Dir); gerr != nil || !strings.Contains(g.Outcome, "not published: ") || !strings.Contains(g.Outcome, "stale lock") {
		t.Errorf("gate.json: %+v, %v", g, gerr)
	}
	if _, err := published.ReadPublished(ctx, root); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("published.json after the refused publish: %v", err)
	}
}

func TestOptionsValidate(t *testing.T) {
	o := options(shapes, t.TempDir(), 0)
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := o
	bad.ServingLearner = "oasis-diag"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "oasis-diag") {
		t.Errorf("a serving learner not trained: %v", err)
	}
	bad = o
	bad.ServingLearner = "tfidf"
	if err := bad.Validate(); err != nil {
		t.Errorf("the TF-IDF baseline as serving learner: %v", err)
	}
	bad = o
	bad.Root = ""
	if err := bad.Validate(); err == nil {
		t.Error("no root accepted")
	}
	bad = o
	bad.Limits.MaxShrink = 2
	if err := bad.Validate(); err == nil {
		t.Error("max shrink 2 accepted")
	}
	bad = o
	bad.Keep = -1
	var e *setting.Error
	if err := bad.Validate(); !errors.As(err, &e) || e.Name() != "reindex.Keep" {
		t.Errorf("keep -1: %v, want a setting error of reindex.Keep", err)
	}
}
