package bowline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/pipelines/internal/shapestest"
)

// TestDirectoryWithSameFileNames: two class folders holding files of the
// same names are twelve images of two labels. Ids used to be file names,
// so six images became dead letters, one label was left, no triplet was
// drawn, and every method scored mAP 1.
func TestDirectoryWithSameFileNames(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	for class, folder := range []string{"a", "b"} {
		if err := os.MkdirAll(filepath.Join(in, folder), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 6; i++ {
			src := filepath.Join(filepath.Dir(shapes), "images", fmt.Sprintf("class%d", class), fmt.Sprintf("class%d-%02d.jpg", class, i))
			data, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(in, folder, fmt.Sprintf("img%d.jpg", i)), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	c := testConfig(in, filepath.Join(dir, "out"))
	c.Vocab.K = 50
	r := run(t, c)
	if r.Counts.Images != 12 || r.Counts.Described != 12 || r.Counts.DeadLetters != 0 || r.Counts.Triplets == 0 {
		t.Errorf("counts = %+v, want 12 images described, no dead letter, some triplets", r.Counts)
	}
	// Of each folder's 6 images round(0.2·6) = 1 is held out.
	if m, ok := r.Method("solis-ada"); !ok || m.Split != "held-out" || m.Queries != 2 {
		t.Errorf("solis-ada row = %+v (present %v), want 2 held-out queries", m, ok)
	}
	// Two classes of 5 training images each can be ranked perfectly: 3
	// of 16 vocabularies (seeds 1–8, k-means++ and k-means‖) gave a
	// training mAP of 1.
	if m, ok := r.MethodOn("solis-ada", "training"); !ok || m.Queries != 10 || !(m.MAP > 0 && m.MAP <= 1) {
		t.Errorf("solis-ada training row = %+v (present %v), want 10 queries and a mAP in (0, 1]", m, ok)
	}
}

// TestNoImageDescribed: a job whose every image is a dead letter — a folder
// of empty or wrong files named as images, a CSV naming files that are not
// there — ends in one error saying no image could be described, how many
// dead letters there are and their reasons, not in the runner's "got 0
// values, want one value for Singleton side input".
func TestNoImageDescribed(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	for name, body := range map[string]string{"a/1.jpg": "", "a/2.jpg": "", "b/3.jpg": "", "b/4.jpg": "junk"} {
		p := filepath.Join(in, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	missing := shapestest.WriteCSV(t, dir, "missing.csv", [][]string{{"image_id", "path", "label"},
		{"a1", "gone/a1.jpg", "a"}, {"a2", "gone/a2.jpg", "a"}, {"b1", "gone/b1.jpg", "b"}})
	for _, c := range []struct{ input, want string }{
		{in, "describe: no image could be described: 4 dead letters (3 at decode, e.g. empty file (0 bytes); 1 at decode, e.g. not an image: the data looks like text"},
		{missing, "describe: no image could be described: 3 dead letters (3 at "},
	} {
		cfg := testConfig(c.input, filepath.Join(t.TempDir(), "out"))
		cfg.Vocab.K = 20
		p, s := beam.NewPipelineWithRoot()
		if err := Build(s, cfg); err != nil {
			t.Fatal(err)
		}
		err := ptest.Run(p)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "Singleton") {
			t.Errorf("%s: err = %v\nwant one saying %q", filepath.Base(c.input), err, c.want)
		}
	}
}

// TestFolderByContent: the job takes a folder's images by their content
// and its labels by sub-folder: an extensionless JPEG is described; a
// HEIC, a TIFF and an image directly in the folder are dead letters with
// their reasons; a text file is skipped. (The HEIC, TIFF and extensionless
// JPEG were skipped without a word, and the root image took the empty
// label.)
func TestFolderByContent(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	img := func(class, i int) []byte {
		data, err := os.ReadFile(filepath.Join(filepath.Dir(shapes), "images", fmt.Sprintf("class%d", class), fmt.Sprintf("class%d-%02d.jpg", class, i)))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	files := map[string][]byte{
		"a/1.jpg": img(0, 1), "a/2.jpg": img(0, 2), "a/IMG_0003": img(0, 3),
		"b/4.jpg": img(1, 4), "b/5.jpg": img(1, 5), "b/6.jpg": img(1, 6),
		"b/7.heic": []byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic"), "b/8.tif": []byte("II*\x00\x08\x00\x00\x00"),
		"9.jpg": img(0, 9), "a/notes.txt": []byte("a note\n"),
	}
	for name, body := range files {
		p := filepath.Join(in, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := testConfig(in, filepath.Join(dir, "out"))
	c.Vocab.K = 50
	r := run(t, c)
	if r.Counts.Images != 6 || r.Counts.Described != 6 || r.Counts.DeadLetters != 3 {
		t.Errorf("counts = %+v, want 6 images described and 3 dead letters", r.Counts)
	}
	dead, err := fileio.ReadAll[formats.DeadLetter](context.Background(), filepath.Join(dir, "out", "dead-letters-*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, d := range dead {
		reasons[d.ImageID] = d.Reason
	}
	for id, want := range map[string]string{"b/7.heic": "unsupported format: HEIC", "b/8.tif": "unsupported format: TIFF", "9.jpg": "directly in the input folder"} {
		if !strings.HasPrefix(reasons[id], want) {
			t.Errorf("dead letter of %s: %q, want %q…", id, reasons[id], want)
		}
	}
}
