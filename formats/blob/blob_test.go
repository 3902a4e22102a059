package blob

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"testing"

	"github.com/bowline/bowline/formats/gcstest"
)

// roots returns a local directory and a gs:// prefix on an emulator.
func roots(t *testing.T) map[string]string {
	gcstest.Start(t, "bucket")
	return map[string]string{"local": t.TempDir(), "gcs": "gs://bucket/root"}
}

func TestReadWriteListRemove(t *testing.T) {
	ctx := context.Background()
	for name, root := range roots(t) {
		t.Run(name, func(t *testing.T) {
			p := Join(root, "runs/a/x.json")
			if _, _, err := Read(ctx, p); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("read of a missing object: %v, want ErrNotExist", err)
			}
			if g, err := Generation(ctx, p); err != nil || g != 0 {
				t.Fatalf("generation of a missing object: %d, %v", g, err)
			}
			if err := Write(ctx, p, []byte("one")); err != nil {
				t.Fatal(err)
			}
			if err := Write(ctx, Join(root, "runs/b/y.json"), []byte("two")); err != nil {
				t.Fatal(err)
			}
			data, gen, err := Read(ctx, p)
			if err != nil || string(data) != "one" || gen == 0 {
				t.Fatalf("read: %q gen %d, %v", data, gen, err)
			}
			if g, _ := Generation(ctx, p); g != gen {
				t.Errorf("generation %d, read gave %d", g, gen)
			}
			all, err := List(ctx, Join(root, "runs"))
			if err != nil {
				t.Fatal(err)
			}
			want := []string{Join(root, "runs/a/x.json"), Join(root, "runs/b/y.json")}
			if fmt.Sprint(all) != fmt.Sprint(want) {
				t.Errorf("list: %v, want %v", all, want)
			}
			if err := RemoveAll(ctx, Join(root, "runs/a")); err != nil {
				t.Fatal(err)
			}
			if all, _ := List(ctx, Join(root, "runs")); fmt.Sprint(all) != fmt.Sprint(want[1:]) {
				t.Errorf("after remove: %v, want %v", all, want[1:])
			}
			if err := RemoveAll(ctx, Join(root, "runs/none")); err != nil {
				t.Errorf("remove of a missing directory: %v", err)
			}
		})
	}
}

// TestWriteIfRace starts writers from the same generation: exactly one
// must win, and the object must hold its content.
func TestWriteIfRace(t *testing.T) {
	ctx := context.Background()
	for name, root := range roots(t) {
		t.Run(name, func(t *testing.T) {
			p := Join(root, "published.json")
			for round, gen := 0, int64(0); round < 3; round++ {
				const writers = 6
				var wg sync.WaitGroup
				errs := make([]error, writers)
				for i := range writers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						errs[i] = WriteIf(ctx, p, fmt.Appendf(nil, "round %d writer %d", round, i), gen)
					}()
				}
				wg.Wait()
				won := -1
				for i, err := range errs {
					switch {
					case err == nil && won >= 0:
						t.Fatalf("round %d: writers %d and %d both won", round, won, i)
					case err == nil:
						won = i
					case !errors.Is(err, ErrPrecondition):
						t.Fatalf("round %d: writer %d: %v, want ErrPrecondition", round, i, err)
					}
				}
				if won < 0 {
					t.Fatalf("round %d: nobody won: %v", round, errs)
				}
				data, g, err := Read(ctx, p)
				if err != nil || string(data) != fmt.Sprintf("round %d writer %d", round, won) {
					t.Fatalf("round %d: read %q, %v; writer %d won", round, data, err, won)
				}
				if g == gen {
					t.Fatalf("round %d: generation unchanged (%d)", round, g)
				}
				if err := WriteIf(ctx, p, []byte("stale"), gen); !errors.Is(err, ErrPrecondition) {
					t.Fatalf("round %d: a stale write: %v, want ErrPrecondition", round, err)
				}
				gen = g
			}
			if name == "local" {
				if left, _ := filepath.Glob(filepath.Join(root, ".tmp-*")); len(left) > 0 {
					t.Errorf("temporary files left: %v", left)
				}
			}
		})
	}
}
