package ingestbeam

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/infra/prismretry"
	"github.com/bowline/bowline/transforms/ingest"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, prismretry.Runner) }

func init() { beam.RegisterFunction(partRows) }

func partRows(p formats.Part) int { return int(p.Rows) }

// touch creates the files under dir (listing reads no image bytes).
func touch(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestImagesFromDirectory: two class folders with the same file names are
// twelve images of two labels, none refused.
func TestImagesFromDirectory(t *testing.T) {
	dir := t.TempDir()
	var want []any
	for _, class := range []string{"a", "b"} {
		for _, f := range []string{"img1.jpg", "img2.jpg", "img3.jpg", "img4.jpg", "img5.jpg", "img6.jpg"} {
			touch(t, dir, class+"/"+f)
			want = append(want, formats.Image{ImageID: class + "/" + f, URI: filepath.Join(dir, class, f), Label: class})
		}
	}
	touch(t, dir, "a/notes.txt")
	out := t.TempDir()
	p, s := beam.NewPipelineWithRoot()
	parts, dead, shared := Images(s, dir, ingest.DefaultColumns(), 5, out)
	passert.Empty(s, dead)
	passert.Equals(s, shared, 0)
	passert.Equals(s, stats.Sum(s, beam.ParDo(s, partRows, parts)), 12)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	checkList(t, out, want)
}

// checkList checks that the image list written under dir holds want.
func checkList(t *testing.T, dir string, want []any) {
	t.Helper()
	got, err := fileio.ReadAll[formats.Image](context.Background(), fileio.Join(dir, Name+"-*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	var g []any
	for _, img := range got {
		img.Tags = nil
		g = append(g, img)
	}
	key := func(x any) string { return x.(formats.Image).ImageID }
	slices.SortFunc(g, func(a, b any) int { return strings.Compare(key(a), key(b)) })
	slices.SortFunc(want, func(a, b any) int { return strings.Compare(key(a), key(b)) })
	if !reflect.DeepEqual(g, want) {
		t.Errorf("image list %+v\nwant %+v", g, want)
	}
}

// TestWriteParts: every image is written once, in the part its id hashes
// to, sorted by id within it; empty parts are not written.
func TestWriteParts(t *testing.T) {
	dir := t.TempDir()
	var images []formats.Image
	for i := range 23 {
		images = append(images, formats.Image{ImageID: fmt.Sprintf("im%02d", 22-i), Label: "l"})
	}
	parts, err := WriteParts(context.Background(), slices.Clone(images), 4, dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, p := range parts {
		if p.Parts != 6 || (i > 0 && parts[i-1].Part >= p.Part) {
			t.Fatalf("parts %+v: want increasing parts of 6", parts)
		}
		rows, err := fileio.ReadFile[formats.Image](context.Background(), p.Path)
		if err != nil || int64(len(rows)) != p.Rows || len(rows) == 0 {
			t.Fatalf("part %d: %d rows (%v), recorded %d", p.Part, len(rows), err, p.Rows)
		}
		for k, r := range rows {
			if formats.ShardOf(r.ImageID, 6) != p.Part || (k > 0 && rows[k-1].ImageID >= r.ImageID) || seen[r.ImageID] {
				t.Errorf("part %d: image %s out of place", p.Part, r.ImageID)
			}
			seen[r.ImageID] = true
		}
	}
	if len(seen) != len(images) {
		t.Errorf("%d of %d images written", len(seen), len(images))
	}
}

// TestImagesFromCSV: a labels CSV's rows become images with paths relative
// to the CSV; a duplicate id is a dead letter that does not carry the kept
// id; a file under two ids is counted.
func TestImagesFromCSV(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "labels.csv")
	body := "image_id,path,label\nx,img/x.jpg,cat\ny,img/y.jpg,dog\nx,img/z.jpg,dog\nw,img/x.jpg,dog\n"
	if err := os.WriteFile(csv, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	p, s := beam.NewPipelineWithRoot()
	_, dead, shared := Images(s, csv, ingest.DefaultColumns(), 1000, out)
	passert.Equals(s, dead, formats.DeadLetter{URI: filepath.Join(dir, "img/z.jpg"), Stage: "ingest",
		Reason: `labels line 4: duplicate image id "x"; kept line 2 (img/x.jpg)`})
	passert.Equals(s, shared, 1)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	checkList(t, out, []any{
		formats.Image{ImageID: "x", URI: filepath.Join(dir, "img/x.jpg"), Label: "cat"},
		formats.Image{ImageID: "y", URI: filepath.Join(dir, "img/y.jpg"), Label: "dog"},
		formats.Image{ImageID: "w", URI: filepath.Join(dir, "img/x.jpg"), Label: "dog"}})
}

// TestNoImagesFails: an input without a usable image fails the pipeline at
// the listing, saying so, instead of running every stage on nothing.
func TestNoImagesFails(t *testing.T) {
	dir := t.TempDir()
	headerOnly := filepath.Join(dir, "header.csv")
	allRefused := filepath.Join(dir, "refused.csv")
	os.WriteFile(headerOnly, []byte("image_id,path,label\n"), 0o644)
	os.WriteFile(allRefused, []byte("image_id,path,label\na,,cat\n"), 0o644)
	noImageFiles := filepath.Join(dir, "docs")
	touch(t, noImageFiles, "readme.txt")
	for _, c := range []struct{ input, want string }{
		{headerOnly, "no images in " + headerOnly},
		{allRefused, "all 1 rows were refused, the first because labels line 2: empty path"},
		{noImageFiles, "no images in " + noImageFiles},
	} {
		p, s := beam.NewPipelineWithRoot()
		Images(s, c.input, ingest.DefaultColumns(), 1000, t.TempDir())
		err := ptest.Run(p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one saying %q", filepath.Base(c.input), err, c.want)
		}
	}
	if _, _, err := List(context.Background(), filepath.Join(dir, "missing"), ingest.DefaultColumns()); err == nil {
		t.Error("listing a missing directory succeeded")
	}
}

// TestListSynthetic: a synthetic corpus lists its images without touching
// any file system.
func TestListSynthetic(t *testing.T) {
	images, dead, err := List(context.Background(), "synthetic:5?labels=2", ingest.DefaultColumns())
	if err != nil || len(images) != 5 || len(dead) != 0 || images[4].ImageID != "syn-000000004" || images[4].Label != "label-000" {
		t.Errorf("List = %+v, %v, %v", images, dead, err)
	}
	if _, _, err := List(context.Background(), "synthetic:5?labels=9", ingest.DefaultColumns()); err == nil {
		t.Error("more labels than images was accepted")
	}
}

// TestRefusedLine: the log line of a refused row says it was refused and
// why, and names the image id and file only when the dead letter has
// them: a duplicate row's has no id, and its line read "ingest:  (path)".
func TestRefusedLine(t *testing.T) {
	for _, c := range []struct {
		d    formats.DeadLetter
		want string
	}{
		{formats.DeadLetter{URI: "/d/img/z.jpg", Stage: "ingest", Reason: `labels line 4: duplicate image id "x"; kept line 2 (img/x.jpg)`},
			`ingest: row refused, a dead letter: labels line 4: duplicate image id "x"; kept line 2 (img/x.jpg) [file /d/img/z.jpg]`},
		{formats.DeadLetter{ImageID: "c", Stage: "ingest", Reason: "labels line 3: empty path"},
			`ingest: row refused, a dead letter: labels line 3: empty path [image id "c"]`},
		{formats.DeadLetter{Stage: "ingest", Reason: "labels line 5: 6 fields, header has 4 (quote a field that holds a comma)"},
			"ingest: row refused, a dead letter: labels line 5: 6 fields, header has 4 (quote a field that holds a comma)"},
	} {
		if got := refusedLine("row", c.d); got != c.want {
			t.Errorf("refusedLine(%+v) =\n%q, want\n%q", c.d, got, c.want)
		}
	}
}
