package reindex

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/bowline/bowline/formats/blob"
	"github.com/bowline/bowline/formats/gcstest"
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

// TestPrune: --keep deletes the oldest runs beyond the newest N, never
// the published one, and nothing under runs/ that is not a run.
func TestPrune(t *testing.T) {
	ctx := context.Background()
	gcstest.Start(t, "bucket")
	ids := []string{"20261120T071500Z-aaaa", "20261121T071500Z-bbbb", "20261122T071500Z-cccc", "20261123T071500Z-dddd", "20261124T071500Z-eeee"}
	for name, root := range map[string]string{"local": t.TempDir(), "gcs": "gs://bucket/root"} {
		t.Run(name, func(t *testing.T) {
			if got, err := Runs(ctx, root); err != nil || len(got) != 0 {
				t.Fatalf("runs of an empty root: %v, %v", got, err)
			}
			for _, id := range ids {
				for _, f := range []string{"manifest.json", "bow-00000-of-00001.parquet"} {
					if err := blob.Write(ctx, blob.Join(RunDir(root, id), f), []byte(id)); err != nil {
						t.Fatal(err)
					}
				}
			}
			foreign := blob.Join(root, "runs/notes/readme.txt")
			if err := blob.Write(ctx, foreign, []byte("not a run")); err != nil {
				t.Fatal(err)
			}
			if got, err := Runs(ctx, root); err != nil || !slices.Equal(got, ids) {
				t.Fatalf("runs %v (%v), want %v", got, err, ids)
			}
			if gone, err := Prune(ctx, root, 0, ids[4]); err != nil || gone != nil {
				t.Fatalf("keep 0 pruned %v (%v)", gone, err)
			}
			if gone, err := Prune(ctx, root, 5, ids[4]); err != nil || gone != nil {
				t.Fatalf("keep 5 of 5 pruned %v (%v)", gone, err)
			}
			// Keep 2, the oldest published: runs 1 to 3 go but the first.
			gone, err := Prune(ctx, root, 2, ids[0])
			if err != nil || !slices.Equal(gone, ids[1:3]) {
				t.Fatalf("pruned %v (%v), want %v", gone, err, ids[1:3])
			}
			want := []string{ids[0], ids[3], ids[4]}
			if got, err := Runs(ctx, root); err != nil || !slices.Equal(got, want) {
				t.Fatalf("runs left %v (%v), want %v", got, err, want)
			}
			for _, id := range gone {
				if files, err := blob.List(ctx, RunDir(root, id)); err == nil && len(files) > 0 {
					t.Errorf("pruned run %s still has %v", id, files)
				}
			}
			if _, _, err := blob.Read(ctx, foreign); err != nil {
				t.Errorf("a foreign file under runs/ was removed: %v", err)
			}
			// Keep 1, the newest published: the oldest two go.
			if gone, err := Prune(ctx, root, 1, ids[4]); err != nil || !slices.Equal(gone, want[:2]) {
				t.Fatalf("pruned %v (%v), want %v", gone, err, want[:2])
			}
		})
	}
}
