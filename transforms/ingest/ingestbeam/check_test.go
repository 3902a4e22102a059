package ingestbeam

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/formats/gcstest"
	"github.com/bowline/bowline/transforms/ingest"
)

// TestCheckInputLabels: a labels CSV the job could not learn from is
// refused before the job, saying why; rows the job will refuse (wrong
// width, no path) are counted in warnings and do not stop it. A gs://
// CSV is read through the job's own reader (fileio), checked alike.
func TestCheckInputLabels(t *testing.T) {
	ctx := context.Background()
	gcstest.Start(t, "preflight-test")
	dir := t.TempDir()
	for _, c := range []struct {
		name, body string
		err        string   // "" for none
		warnings   []string // substrings, one a warning
	}{
		{"one-label.csv", "image_id,path,label\na,a.jpg,cat\nb,b.jpg,cat\nc,c.jpg,cat\n", `no training triplets: the 3 labelled images all carry one label ("cat")`, nil},
		{"header.csv", "image_id,path,label\n", "has no rows below its header", nil},
		{"empty.csv", "", "is empty: it has no header row (image_id,path,label), nor any row", nil},
		{"blank.csv", "\n\n", "is empty: it has no header row (image_id,path,label), nor any row", nil},
		{"no-paths.csv", "image_id,path,label\na,,cat\nb,,dog\n", "has no usable row: all 2 would be refused, the first because labels line 2: empty path", nil},
		{"singletons.csv", "image_id,path,label\na,a.jpg,cat\nb,b.jpg,dog\nc,c.jpg,\n", "none of the 2 labels has 2 or more images", nil},
		{"unlabelled.csv", "image_id,path,label\na,a.jpg,\nb,b.jpg,\n", "no labelled images to learn from", nil},
		{"wide.csv", "image_id,path,label,tags\na,a.jpg,cat,\nParis_Louvre_Courtyard,_Looking_West,x,_Looking_West.jpg,dog,\nb,b.jpg,cat,\nc,c.jpg,dog,\nd,,dog,\nx,y,dog\nd,d.jpg,dog,\n", "",
			[]string{"has 2 rows whose field count differs from its header's, the first: labels line 3: 6 fields, header has 4", "has 1 row without a path"}},
	} {
		local := filepath.Join(dir, c.name)
		if err := os.WriteFile(local, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		remote := "gs://preflight-test/" + c.name
		if err := fileio.WriteBytes(ctx, remote, []byte(c.body)); err != nil {
			t.Fatal(err)
		}
		for _, input := range []string{local, remote} {
			warnings, err := CheckInput(ctx, input, ingest.DefaultColumns(), "")
			switch {
			case c.err == "" && err != nil:
				t.Errorf("%s: %v", input, err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), input)):
				t.Errorf("%s: error %v, want one naming the CSV and saying %q", input, err, c.err)
			}
			if len(warnings) != len(c.warnings) {
				t.Errorf("%s: warnings %q, want %d", input, warnings, len(c.warnings))
				continue
			}
			for i, w := range c.warnings {
				if !strings.Contains(warnings[i], w) {
					t.Errorf("%s: warning %q, want it to say %q", input, warnings[i], w)
				}
			}
		}
	}
}

// folder makes a folder of files under dir: name → content.
func folder(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestCheckInputFolder: a folder is listed and its labels counted before
// the job, as a CSV is: a folder of one label, or of no image the job can
// read, is refused saying why; files it refuses or skips are counted by
// kind in a warning. A gs:// folder alike. (A folder of one label was
// described in full before the job found it had no triplet.)
func TestCheckInputFolder(t *testing.T) {
	ctx := context.Background()
	gcstest.Start(t, "folder-test")
	const jpeg = "\xff\xd8\xff\xe0"
	heic := "\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic"
	for _, c := range []struct {
		name    string
		files   map[string]string
		err     string
		warning string
	}{
		{"one-label", map[string]string{"a/1.jpg": "x", "a/2.jpg": "x", "a/3.jpg": "x"}, `no training triplets: the 3 labelled images all carry one label ("a")`, ""},
		{"root-only", map[string]string{"1.jpg": "x", "2.jpg": "x"},
			"has no image to describe: of its 2 files, refused 2 files as dead letters: 2 image directly in the input folder (no label)", ""},
		{"heic-only", map[string]string{"a/1.heic": heic, "b/2.heic": heic, "b/notes": "hello"},
			"has no image to describe: of its 3 files, refused 2 files as dead letters: 2 HEIC (unsupported image format); skipped 1 file: 1 not an image (text); the first refused: ", ""},
		{"text-only", map[string]string{"a/README": "hello"}, "has no image to describe: of its 1 file, skipped 1 file: 1 not an image (text)", ""},
		{"mixed", map[string]string{"a/1.jpg": "x", "a/2": jpeg, "b/3.png": "x", "b/4.heic": heic, "b/5.tif": "II*\x00\x08\x00", "6.jpg": "x", "b/notes.txt": "hello"}, "",
			"3 images taken; refused 3 files as dead letters: 1 HEIC (unsupported image format), 1 TIFF or a TIFF-based camera raw (DNG, NEF, CR2…) (unsupported image format), " +
				"1 image directly in the input folder (no label); skipped 1 file: 1 not an image (text)"},
	} {
		local := folder(t, filepath.Join(t.TempDir(), c.name), c.files)
		remote := "gs://folder-test/" + c.name
		for name, body := range c.files {
			if err := fileio.WriteBytes(ctx, remote+"/"+name, []byte(body)); err != nil {
				t.Fatal(err)
			}
		}
		for _, input := range []string{local, remote} {
			warnings, err := CheckInput(ctx, input, ingest.DefaultColumns(), "")
			switch {
			case c.err == "" && err != nil:
				t.Errorf("%s: %v", input, err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), input)):
				t.Errorf("%s: error %v, want one naming the folder and saying %q", input, err, c.err)
			}
			if c.warning == "" && len(warnings) > 0 || c.warning != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], c.warning)) {
				t.Errorf("%s: warnings %q, want %q", input, warnings, c.warning)
			}
		}
	}
	missing := filepath.Join(t.TempDir(), "missing")
	if _, err := CheckInput(ctx, missing, ingest.DefaultColumns(), ""); err == nil || !strings.Contains(err.Error(), "no such file or directory") {
		t.Errorf("a missing folder: %v", err)
	}
	empty := t.TempDir()
	if _, err := CheckInput(ctx, empty, ingest.DefaultColumns(), ""); err == nil || err.Error() != "ingest: no files under "+empty {
		t.Errorf("an empty folder: %v", err)
	}
}

// TestOutputMayNotHoldTheInput: an output directory that holds the labels
// CSV, the input folder or any image the CSV names is refused however it
// is spelt, before anything is created; one beside the input is not. (--overwrite removed
// the CSV it read, and a folder's top-level photos.)
func TestOutputMayNotHoldTheInput(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ds := folder(t, filepath.Join(dir, "ds"), map[string]string{
		"labels.csv":     "image_id,path,label\na,images/a/1.jpg,a\nb,images/a/2.jpg,a\nc,images/b/3.jpg,b\n",
		"images/a/1.jpg": "x", "images/a/2.jpg": "x", "images/b/3.jpg": "x",
	})
	elsewhere := folder(t, filepath.Join(dir, "elsewhere"), map[string]string{
		"labels.csv": "image_id,path,label\na," + filepath.Join(ds, "images/a/1.jpg") + ",a\nb,../ds/images/a/2.jpg,a\nc,../ds/images/b/3.jpg,b\n",
	})
	for _, c := range []struct {
		input, output string
		want          string // "" for no refusal
	}{
		{filepath.Join(ds, "labels.csv"), ds, "--output " + ds + " holds the input labels CSV " + filepath.Join(ds, "labels.csv")},
		{filepath.Join(ds, "labels.csv"), ds + "/./", "holds the input labels CSV"},
		{filepath.Join(ds, "images"), ds, "--output " + ds + " holds the input folder " + filepath.Join(ds, "images")},
		{filepath.Join(ds, "images"), filepath.Join(ds, "images"), "holds the input folder"},
		{filepath.Join(elsewhere, "labels.csv"), filepath.Join(ds, "images", "a"), "holds 2 images the labels CSV " + filepath.Join(elsewhere, "labels.csv") +
			" names, the first at labels line 2: " + filepath.Join(ds, "images/a/1.jpg")},
		{filepath.Join(elsewhere, "labels.csv"), filepath.Join(ds, "images"), "holds 3 images the labels CSV"},
		{filepath.Join(ds, "labels.csv"), filepath.Join(dir, "out"), ""},
		{filepath.Join(ds, "labels.csv"), filepath.Join(ds, "images", "out"), ""},
		{filepath.Join(ds, "images"), filepath.Join(dir, "ds-out"), ""},
	} {
		_, err := CheckInput(ctx, c.input, ingest.DefaultColumns(), c.output)
		var inOut *ingest.InputInOutputError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("input %s, output %s: %v", c.input, c.output, err)
		case c.want != "" && (!errors.As(err, &inOut) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("input %s, output %s: error %v, want an *InputInOutputError saying %q", c.input, c.output, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Errorf("the checks made an output directory: %v", err)
	}
	// gs:// by prefix.
	gcstest.Start(t, "inout-test")
	if err := fileio.WriteBytes(ctx, "gs://inout-test/ds/labels.csv", []byte("image_id,path,label\na,a/1.jpg,a\nb,a/2.jpg,a\nc,b/3.jpg,b\n")); err != nil {
		t.Fatal(err)
	}
	for output, refused := range map[string]bool{"gs://inout-test/ds": true, "gs://inout-test/ds/a/": true, "gs://inout-test/ds2": false} {
		_, err := CheckInput(ctx, "gs://inout-test/ds/labels.csv", ingest.DefaultColumns(), output)
		if got := errors.As(err, new(*ingest.InputInOutputError)); got != refused {
			t.Errorf("gs:// output %s: error %v, want refused %v", output, err, refused)
		}
	}
}
