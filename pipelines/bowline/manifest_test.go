package bowline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/formats/fileio"
	rundir "github.com/bowline/bowline/formats/run"
)

func TestIsOwnFile(t *testing.T) {
	for name, want := range map[string]bool{
		"bow-00000-of-00004.parquet":             true,
		"model-solis-ada-00000-of-00001.parquet": true,
		"dead-letters-00000-of-00001.parquet":    true,
		"report.json":                            true,
		"manifest.json":                          true,
		".tmp-0123456789abcdef-bow.parquet":      true,
		"holiday.jpg":                            false,
		"bow.parquet":                            false,
		"notes-00000-of-00001.parquet.txt":       false,
		"Model-solis-ada-00000-of-00001.parquet": false,
	} {
		if got := IsOwnFile(name); got != want {
			t.Errorf("IsOwnFile(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestPrepareOutput(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := PrepareOutput(ctx, filepath.Join(dir, "new"), false); err != nil {
		t.Errorf("a new directory: %v", err)
	}
	// An earlier run's directory is fine; its manifest and report go first,
	// so that a killed re-run never looks finished.
	run := filepath.Join(dir, "run")
	os.MkdirAll(run, 0o755)
	for _, n := range []string{"bow-00000-of-00001.parquet", rundir.ManifestName, rundir.ReportName, rundir.ReportHTMLName} {
		os.WriteFile(filepath.Join(run, n), []byte("x"), 0o644)
	}
	if err := PrepareOutput(ctx, run, false); err != nil {
		t.Fatal(err)
	}
	for n, want := range map[string]bool{rundir.ManifestName: false, rundir.ReportName: false, "bow-00000-of-00001.parquet": true} {
		if _, err := os.Stat(filepath.Join(run, n)); (err == nil) != want {
			t.Errorf("%s present = %v after PrepareOutput, want %v", n, err == nil, want)
		}
	}
	// Scratch files a killed job left are no reason to refuse the
	// directory, and go.
	left := filepath.Join(run, rundir.ScratchName, "vocabulary-0123456789abcdef", "chunk-000000001.desc")
	os.MkdirAll(filepath.Dir(left), 0o755)
	os.WriteFile(left, []byte("x"), 0o644)
	if err := PrepareOutput(ctx, run, false); err != nil {
		t.Fatalf("a run with scratch files left: %v", err)
	}
	if _, err := os.Stat(filepath.Join(run, rundir.ScratchName)); !os.IsNotExist(err) {
		t.Errorf("the scratch files a killed job left are still there (%v)", err)
	}
	// A directory of something else is refused, naming what is there,
	// unless the run may replace it.
	photos := filepath.Join(dir, "photos")
	os.MkdirAll(filepath.Join(photos, "2024"), 0o755)
	os.WriteFile(filepath.Join(photos, "holiday.jpg"), []byte("x"), 0o644)
	err := PrepareOutput(ctx, photos, false)
	if err == nil || !strings.Contains(err.Error(), "2024/, holiday.jpg") || !strings.Contains(err.Error(), "--overwrite") {
		t.Errorf("a foreign directory: err = %v", err)
	}
	if err := PrepareOutput(ctx, photos, true); err != nil {
		t.Errorf("with overwrite: %v", err)
	}
}

// TestRerunReplacesTheRun: a re-run into a directory holding an earlier
// run leaves exactly its own files — none of a learner no longer trained,
// of another shard count, of a killed run's temporary files or of the
// run's scratch files — and its manifest lists them with their sizes.
func TestRerunReplacesTheRun(t *testing.T) {
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "out")
	c := testConfig(shapes, out)
	c.Vocab.K = 50
	c.Learning.Learners = []string{"solis-ada", "oasis-diag"}
	if err := PrepareOutput(ctx, out, false); err != nil {
		t.Fatal(err)
	}
	run(t, c)
	if _, err := os.Stat(filepath.Join(out, "model-oasis-diag-00000-of-00001.parquet")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(out, ".tmp-0123456789abcdef-bow-00000-of-00002.parquet"), []byte("killed"), 0o644)

	c.Learning.Learners = []string{"solis-ada"}
	c.Describe.PartImages = 40 // 96 images: 3 parts, not 1
	c.Vocab.Chunks = 2         // trained over chunks in scratch files, gone by the end
	if err := PrepareOutput(ctx, out, false); err != nil {
		t.Fatal(err)
	}
	run(t, c)
	m, err := fileio.RunDir(out).Manifest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	es, _ := os.ReadDir(out)
	var present, listed []string
	for _, e := range es {
		if e.Name() != rundir.ManifestName {
			present = append(present, e.Name())
		}
	}
	for _, f := range m.Files {
		listed = append(listed, f.Name)
		if st, err := os.Stat(filepath.Join(out, f.Name)); err != nil || st.Size() != f.Bytes {
			t.Errorf("%s: listed with %d bytes, on disk %v", f.Name, f.Bytes, err)
		}
	}
	if !slices.Equal(present, listed) {
		t.Errorf("the directory holds %q\nthe manifest lists %q", present, listed)
	}
	for _, n := range present {
		if strings.Contains(n, "oasis-diag") || strings.HasPrefix(n, ".tmp-") || strings.HasPrefix(n, "bow-") && !strings.HasSuffix(n, "-of-00003.parquet") {
			t.Errorf("%s survived the re-run", n)
		}
	}
	if m.Job != "bowline" || !slices.Contains(listed, rundir.ReportName) || !slices.Contains(listed, "bow-00002-of-00003.parquet") {
		t.Errorf("manifest %+v", m)
	}
}
