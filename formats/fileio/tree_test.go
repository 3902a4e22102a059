package fileio

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/bowline/bowline/formats/gcstest"
)

// TestTreeHolds: a directory holds itself and what lies beneath it however
// either is spelt — relative or absolute, with a trailing slash, through a
// symbolic link, not yet existing — and not a sibling whose name it
// starts; gs:// paths compare by prefix, element by element.
func TestTreeHolds(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "ds")
	os.MkdirAll(filepath.Join(ds, "images"), 0o755)
	os.WriteFile(filepath.Join(ds, "labels.csv"), []byte("x"), 0o644)
	os.Mkdir(filepath.Join(dir, "ds2"), 0o755)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(ds, link); err != nil {
		t.Fatal(err)
	}
	csvLink := filepath.Join(dir, "labels-link.csv")
	if err := os.Symlink(filepath.Join(ds, "labels.csv"), csvLink); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir, path string
		want      bool
	}{
		{"ds", "ds/labels.csv", true},
		{"./ds/", filepath.Join(ds, "labels.csv"), true},
		{ds, "ds", true},
		{"ds", "ds/images", true},
		{"ds", "ds/images/new/x.jpg", true}, // not there yet
		{"link", "ds/labels.csv", true},
		{"ds", "link/images/a.jpg", true},
		{"ds", csvLink, true},
		{"ds", "ds2/labels.csv", false},
		{"ds/images", "ds/labels.csv", false},
		{"out", "ds/labels.csv", false},
		{"gs://b/run", "gs://b/run/labels.csv", true},
		{"gs://b/run/", "gs://b/run", true},
		{"gs://b/run", "gs://b/run2/labels.csv", false},
		{"gs://b/run", "ds/labels.csv", false},
		{"ds", "gs://b/ds/labels.csv", false},
	} {
		if got := TreeOf(c.dir).Holds(c.path); got != c.want {
			t.Errorf("TreeOf(%q).Holds(%q) = %v, want %v", c.dir, c.path, got, c.want)
		}
	}
}

// TestReadHeads: the first n bytes of each file, or all of a shorter one,
// local and gs://, and an error for a file that cannot be read.
func TestReadHeads(t *testing.T) {
	ctx := context.Background()
	gcstest.Start(t, "heads-test")
	dir := t.TempDir()
	bodies := map[string]string{"long": "0123456789abcdef", "short": "abc", "empty": ""}
	for _, root := range []string{dir, "gs://heads-test/in"} {
		var paths []string
		for _, name := range []string{"long", "short", "empty"} {
			p := Join(root, name)
			if err := WriteBytes(ctx, p, []byte(bodies[name])); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
		paths = append(paths, Join(root, "missing"))
		heads, errs := ReadHeads(ctx, paths, 8)
		got := []string{string(heads[0]), string(heads[1]), string(heads[2])}
		if want := []string{"01234567", "abc", ""}; !reflect.DeepEqual(got, want) || errs[0] != nil || errs[1] != nil || errs[2] != nil {
			t.Errorf("%s: heads %q (errors %v), want %q", root, got, errs[:3], want)
		}
		if errs[3] == nil {
			t.Errorf("%s: a missing file read without error", root)
		}
	}
}
