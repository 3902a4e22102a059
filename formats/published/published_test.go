package published

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bowline/bowline/formats/blob"
	"github.com/bowline/bowline/formats/gcstest"
)

// roots returns a local directory and a gs:// prefix on an emulator.
func roots(t *testing.T) map[string]string {
	gcstest.Start(t, "bucket")
	return map[string]string{"local": t.TempDir(), "gcs": "gs://bucket/root"}
}

func run(id string) Run {
	return Run{Run: RunsDir + "/" + id, RunURI: "gs://b/r/runs/" + id, PublishedAt: time.Date(2026, 11, 25, 7, 15, 0, 0, time.UTC),
		Images: 96, MAP: map[string]float64{"tfidf": 0.69, "solis-ada": 0.96}, ServingLearner: "solis-ada"}
}

func TestPublishAndRead(t *testing.T) {
	ctx := context.Background()
	for name, root := range roots(t) {
		t.Run(name, func(t *testing.T) {
			if _, err := ReadPublished(ctx, root); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("nothing published: %v, want fs.ErrNotExist", err)
			}
			first := run("20261125T071500Z-3f9a")
			if err := Publish(ctx, root, first, 0); err != nil {
				t.Fatal(err)
			}
			got, gen, err := Read(ctx, root)
			if err != nil || gen == 0 {
				t.Fatalf("read: gen %d, %v", gen, err)
			}
			if fmt.Sprint(got) != fmt.Sprint(first) || got.ID() != "20261125T071500Z-3f9a" || got.Dir(root) != blob.Join(root, "runs/20261125T071500Z-3f9a") {
				t.Fatalf("read %+v, published %+v", got, first)
			}
			// A second publish from a stale generation (0: "nothing
			// published") fails and leaves the first in place.
			second := run("20261126T071500Z-0b1c")
			second.Previous = first.Run
			if err := Publish(ctx, root, second, 0); !errors.Is(err, ErrRace) || !errors.Is(err, blob.ErrPrecondition) {
				t.Fatalf("publish from a stale generation: %v, want ErrRace", err)
			}
			if got, _ := ReadPublished(ctx, root); got.Run != first.Run {
				t.Fatalf("after the refused publish: %s, want %s", got.Run, first.Run)
			}
			if err := Publish(ctx, root, second, gen); err != nil {
				t.Fatal(err)
			}
			if got, _ := ReadPublished(ctx, root); got.Run != second.Run || got.Previous != first.Run {
				t.Fatalf("after the second publish: %+v", got)
			}
		})
	}
}

// TestRace: publishers that all read the same generation race to
// publish; exactly one wins, and published.json names the winner.
func TestRace(t *testing.T) {
	ctx := context.Background()
	for name, root := range roots(t) {
		t.Run(name, func(t *testing.T) {
			if err := Publish(ctx, root, run("20261125T071500Z-0000"), 0); err != nil {
				t.Fatal(err)
			}
			_, gen, err := Read(ctx, root)
			if err != nil {
				t.Fatal(err)
			}
			const n = 4
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = Publish(ctx, root, run(fmt.Sprintf("20261126T071500Z-000%d", i)), gen)
				}()
			}
			wg.Wait()
			winner := -1
			for i, err := range errs {
				switch {
				case err == nil && winner >= 0:
					t.Fatalf("publishers %d and %d both won", winner, i)
				case err == nil:
					winner = i
				case !errors.Is(err, ErrRace):
					t.Fatalf("publisher %d: %v, want ErrRace", i, err)
				}
			}
			if winner < 0 {
				t.Fatalf("no publisher won: %v", errs)
			}
			got, err := ReadPublished(ctx, root)
			if err != nil || got.Run != run(fmt.Sprintf("20261126T071500Z-000%d", winner)).Run {
				t.Fatalf("published %+v (%v), winner %d", got, err, winner)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	ok := run("20261125T071500Z-3f9a")
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "runs/", "runs/a/b", "other/x", "runs/..", "/runs/x"} {
		r := ok
		r.Run = bad
		if err := r.Validate(); err == nil {
			t.Errorf("run %q accepted", bad)
		}
	}
	r := ok
	r.ServingLearner = ""
	if err := r.Validate(); err == nil {
		t.Error("no serving learner accepted")
	}
	if _, err := Parse([]byte(`{"run": "runs/x"}`)); err == nil {
		t.Error("published.json without a serving learner or time parsed")
	}
}

// TestPublishOwnWrite: a publish that finds published.json already holding
// exactly its run (its own write, when Cloud Storage retried an upload
// whose answer was lost) succeeds on either backend; any other content is
// a race.
func TestPublishOwnWrite(t *testing.T) {
	ctx := context.Background()
	for name, root := range roots(t) {
		t.Run(name, func(t *testing.T) {
			r := run("20261125T071500Z-3f9a")
			if err := Publish(ctx, root, r, 0); err != nil {
				t.Fatal(err)
			}
			if err := Publish(ctx, root, r, 0); err != nil {
				t.Fatalf("the same publish again: %v, want its own write recognised", err)
			}
			other := r
			other.Images++
			if err := Publish(ctx, root, other, 0); !errors.Is(err, ErrRace) {
				t.Fatalf("another publish from the same generation: %v, want ErrRace", err)
			}
		})
	}
}

// TestLockIsNoRace: a lock that stops the publish of an unchanged
// published.json is reported as the lock, with the command that clears
// it, never as another night's publish; CheckLock says the same before.
func TestLockIsNoRace(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	if err := Publish(ctx, root, run("20261125T071500Z-3f9a"), 0); err != nil {
		t.Fatal(err)
	}
	_, gen, err := Read(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	lock := Path(root) + ".lock"
	old := time.Now().Add(-time.Minute)
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{"CheckLock": CheckLock(ctx, root), "Publish": Publish(ctx, root, run("20261126T071500Z-0b1c"), gen)} {
		if !errors.Is(err, blob.ErrStaleLock) || errors.Is(err, ErrRace) || !strings.Contains(err.Error(), "rm "+lock) {
			t.Errorf("%s past an empty lock: %v, want the stale lock and rm %s, no race", what, err, lock)
		}
	}
	if err := CheckLock(ctx, "gs://bucket/root"); err != nil {
		t.Errorf("CheckLock of a gs:// root: %v", err)
	}
}
