package reindex

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bowline/bowline/formats/blob"
	"github.com/bowline/bowline/formats/gcstest"
	"github.com/bowline/bowline/formats/published"
)

func TestNewRunID(t *testing.T) {
	at := time.Date(2026, 11, 25, 8, 15, 0, 0, time.FixedZone("CET", 3600))
	id, err := NewRunID(at, bytes.NewReader([]byte{0x3f, 0x9a}))
	if err != nil || id != "20261125T071500Z-3f9a" || !IsRunID(id) {
		t.Fatalf("run id %q (%v), want 20261125T071500Z-3f9a", id, err)
	}
	// Two nights started in the same second differ by their suffix; any
	// night sorts before one started a second later, whatever the
	// suffixes.
	a, _ := NewRunID(at, bytes.NewReader([]byte{0xff, 0xff}))
	b, _ := NewRunID(at, nil)
	later, _ := NewRunID(at.Add(time.Second), bytes.NewReader([]byte{0, 0}))
	if !IsRunID(b) || b[:16] != "20261125T071500Z" || a == id {
		t.Errorf("run ids %q %q %q", id, a, b)
	}
	if !(a < later && b < later) {
		t.Errorf("run ids do not sort by time: %q %q before %q", a, b, later)
	}
	for _, s := range []string{"", "20261125T071500Z", "20261125T071500Z-3F9A", "20261125-071500Z-3f9a", "x20261125T071500Z-3f9a"} {
		if IsRunID(s) {
			t.Errorf("IsRunID(%q)", s)
		}
	}
}

// TestPrune: the newest keep published runs stay, whatever else is under
// runs/; refused runs stay while newer than the published run; unfinished
// runs go once older than the published run, and are reported while not;
// nothing under runs/ that is not a run is touched.
func TestPrune(t *testing.T) {
	ctx := context.Background()
	gcstest.Start(t, "bucket")
	const (
		a     = "20261120T071500Z-aaaa" // published
		b     = "20261121T071500Z-bbbb" // refused
		c     = "20261121T120000Z-cccc" // killed: no manifest
		d     = "20261122T071500Z-dddd" // published, named by published.json
		e     = "20261123T071500Z-eeee" // refused since
		f     = "20261123T120000Z-ffff" // unfinished since: killed, or running
		night = "20261124T071500Z-9999"
	)
	for name, root := range map[string]string{"local": t.TempDir(), "gcs": "gs://bucket/root"} {
		t.Run(name, func(t *testing.T) {
			if got, err := Runs(ctx, root); err != nil || len(got) != 0 {
				t.Fatalf("runs of an empty root: %v, %v", got, err)
			}
			write := func(id, file, content string) {
				t.Helper()
				if err := blob.Write(ctx, blob.Join(RunDir(root, id), file), []byte(content)); err != nil {
					t.Fatal(err)
				}
			}
			for id, outcome := range map[string]string{a: OutcomePublished, b: OutcomeRefused, c: "", d: OutcomePublished, e: OutcomeRefused, f: ""} {
				write(id, "bow-00000-of-00001.parquet", id)
				if id == c || id == f {
					continue
				}
				write(id, "manifest.json", "{}")
				if err := writeGate(ctx, RunDir(root, id), GateFile{Run: RunRel(id), Outcome: outcome}); err != nil {
					t.Fatal(err)
				}
			}
			pub := published.Run{Run: RunRel(d), PublishedAt: time.Now(), ServingLearner: "solis-ada"}
			if err := published.Publish(ctx, root, pub, 0); err != nil {
				t.Fatal(err)
			}
			foreign := blob.Join(root, "runs/notes/readme.txt")
			if err := blob.Write(ctx, foreign, []byte("not a run")); err != nil {
				t.Fatal(err)
			}
			all := []string{a, b, c, d, e, f}
			if got, err := Runs(ctx, root); err != nil || !slices.Equal(got, all) {
				t.Fatalf("runs %v (%v), want %v", got, err, all)
			}
			if p, err := Prune(ctx, root, 0, night); err != nil || p.Removed != nil {
				t.Fatalf("keep 0 pruned %v (%v)", p, err)
			}
			// Keep 2: both published runs stay; the refused and the killed
			// run older than the published one go.
			p, err := Prune(ctx, root, 2, night)
			if err != nil || !slices.Equal(p.IDs(), []string{b, c}) {
				t.Fatalf("keep 2 pruned %v (%v), want %v", p.IDs(), err, []string{b, c})
			}
			if p.Removed[0].State != StateRefused || p.Removed[1].State != StateUnfinished || !strings.Contains(p.Removed[1].Why, "no manifest.json") {
				t.Errorf("removed %+v", p.Removed)
			}
			if len(p.Unfinished) != 1 || p.Unfinished[0].ID != f || !strings.Contains(p.Unfinished[0].Why, "may be a night still running") {
				t.Errorf("unfinished runs reported: %+v, want %s", p.Unfinished, f)
			}
			want := []string{a, d, e, f}
			if got, err := Runs(ctx, root); err != nil || !slices.Equal(got, want) {
				t.Fatalf("runs left %v (%v), want %v", got, err, want)
			}
			for _, id := range p.IDs() {
				if files, err := blob.List(ctx, RunDir(root, id)); err == nil && len(files) > 0 {
					t.Errorf("pruned run %s still has %v", id, files)
				}
			}
			if _, _, err := blob.Read(ctx, foreign); err != nil {
				t.Errorf("a foreign file under runs/ was removed: %v", err)
			}
			// Keep 1: the older published run goes, never the one
			// published.json names, even when it is not the newest run.
			if p, err := Prune(ctx, root, 1, night); err != nil || !slices.Equal(p.IDs(), []string{a}) {
				t.Fatalf("keep 1 pruned %v (%v), want %v", p.IDs(), err, []string{a})
			}
			if got, _ := Runs(ctx, root); !slices.Equal(got, []string{d, e, f}) {
				t.Fatalf("runs left %v", got)
			}
		})
	}
}
