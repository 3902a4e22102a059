package evaluatebeam

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/formats"
)

// The geometry of a bag-of-words part is the file beside it of the same
// part; a run made before geometry files has none, which is a reason to
// leave the re-ranked rows out (logged), not an error.
func TestGeometryPaths(t *testing.T) {
	dir := t.TempDir()
	parts := []formats.Part{
		{Name: "bow", Part: 0, Parts: 2, Path: filepath.Join(dir, formats.ShardName("bow", 0, 2))},
		{Name: "bow", Part: 1, Parts: 2, Path: filepath.Join(dir, formats.ShardName("bow", 1, 2))},
	}
	want := []string{filepath.Join(dir, "geometry-00000-of-00002.parquet"), filepath.Join(dir, "geometry-00001-of-00002.parquet")}
	if err := os.WriteFile(want[0], []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	paths, missing, err := geometryPaths(context.Background(), parts)
	if err != nil || paths != nil || !strings.Contains(missing, want[1]) {
		t.Errorf("one geometry file of two: paths %v, missing %q, error %v; want no paths and %s named", paths, missing, err, want[1])
	}
	if err := os.WriteFile(want[1], []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	paths, missing, err = geometryPaths(context.Background(), parts)
	if err != nil || missing != "" || !slices.Equal(paths, want) {
		t.Errorf("both geometry files: paths %v, missing %q, error %v; want %v", paths, missing, err, want)
	}
}
