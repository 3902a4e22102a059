//go:build unix

package blob

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestLocalModeFollowsUmask: Write and WriteIf create files with 0666 less
// the umask, as os.Create does for the run's other files, so that a reader
// running as another user (cmd/serve) can read published.json.
func TestLocalModeFollowsUmask(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	ctx := context.Background()
	dir := t.TempDir()
	ref := filepath.Join(dir, "other.parquet")
	f, err := os.Create(ref)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	want, _ := os.Stat(ref)
	for name, write := range map[string]func(string) error{
		"Write":   func(p string) error { return Write(ctx, p, []byte("{}")) },
		"WriteIf": func(p string) error { return WriteIf(ctx, p, []byte("{}"), 0) },
	} {
		p := filepath.Join(dir, name+".json")
		if err := write(p); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o644 || st.Mode().Perm() != want.Mode().Perm() {
			t.Errorf("%s created mode %v; os.Create gives %v", name, st.Mode().Perm(), want.Mode().Perm())
		}
	}
}
