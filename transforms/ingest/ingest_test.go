package ingest

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/setting"
)

func TestParseLabels(t *testing.T) {
	csv := "image_id,path,label,tags\n" +
		"a,img/a.jpg,cat,fluffy | small\n" +
		",img/b.png,dog,\n" +
		"c,,dog,\n" +
		"a,img/a2.jpg,cat,\n" +
		"d,gs://bucket/d.jpg,,\n" +
		"e,img/a.jpg,dog,\n"
	images, dead, err := ParseLabels(strings.NewReader(csv), "/data", DefaultColumns())
	if err != nil {
		t.Fatal(err)
	}
	want := []formats.Image{
		{ImageID: "a", URI: filepath.Join("/data", "img/a.jpg"), Label: "cat", Tags: []string{"fluffy", "small"}},
		{ImageID: "img/b.png", URI: filepath.Join("/data", "img/b.png"), Label: "dog"},
		{ImageID: "d", URI: "gs://bucket/d.jpg"},
		{ImageID: "e", URI: filepath.Join("/data", "img/a.jpg"), Label: "dog"},
	}
	if !reflect.DeepEqual(images, want) {
		t.Errorf("images =\n%+v\nwant\n%+v", images, want)
	}
	if len(dead) != 2 || dead[0].ImageID != "c" {
		t.Fatalf("dead letters = %+v, want an empty path for c and a duplicate a", dead)
	}
	// The duplicate's dead letter must not carry the kept image's id (an
	// anti-join of images with dead letters would drop the kept image),
	// and it says which row was kept.
	dup := dead[1]
	if dup.ImageID == "a" || !strings.Contains(dup.Reason, `duplicate image id "a"`) ||
		!strings.Contains(dup.Reason, "kept line 2 (img/a.jpg)") || dup.URI != filepath.Join("/data", "img/a2.jpg") {
		t.Errorf("duplicate's dead letter = %+v", dup)
	}
	shared := SharedPaths(images)
	if len(shared) != 1 || shared[0].URI != filepath.Join("/data", "img/a.jpg") || !reflect.DeepEqual(shared[0].IDs, []string{"a", "e"}) {
		t.Errorf("SharedPaths = %+v, want img/a.jpg under a and e", shared)
	}
}

func TestParseLabelsOtherColumnsAndGCSBase(t *testing.T) {
	csv := "image_id,path,object,category\napple1-000-000,images/apple/apple1-000-000.jpg,apple1,apple\n"
	cols := DefaultColumns()
	cols.Label = "category"
	images, _, err := ParseLabels(strings.NewReader(csv), "gs://b/eth80/", cols)
	if err != nil {
		t.Fatal(err)
	}
	if len(images) != 1 || images[0].Label != "apple" || images[0].URI != "gs://b/eth80/images/apple/apple1-000-000.jpg" {
		t.Errorf("images = %+v", images)
	}
	if _, _, err := ParseLabels(strings.NewReader(csv), "", DefaultColumns()); err == nil || !strings.Contains(err.Error(), `"label"`) {
		t.Errorf("missing label column: err = %v, want it named", err)
	}
}

// TestListFile: a folder's file is an image by its content, not its
// name; images are labelled by their sub-folder, and one directly in the
// folder is refused; other image formats are refused and other files
// skipped, each counted by kind (a .heic, a .tif and an extensionless
// JPEG were skipped without a word, and a root image took the empty label).
func TestListFile(t *testing.T) {
	jpg := encode(t, "jpeg", 8, 8)
	heic := []byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic")
	tiff := []byte("II*\x00\x08\x00\x00\x00")
	files := []struct {
		path string
		head []byte
		err  error
	}{
		{"/r/dogs/x.jpg", nil, nil}, // named as an image: not read
		{"/r/cats/y.PNG", nil, nil},
		{"/r/a/img1.jpg", nil, nil},
		{"/r/b/img1.jpg", nil, nil},
		{"/r/cats/IMG_0001", jpg[:SniffBytes], nil},
		{"/r/cats/photo.heic", heic, nil},
		{"/r/dogs/scan.tif", tiff, nil},
		{"/r/z.gif", nil, nil},
		{"/r/cats/notes.txt", []byte("a cat\n"), nil},
		{"/r/.keep", nil, nil},
		{"/r/dogs/locked", nil, errors.New("permission denied")},
	}
	var scan FolderScan
	var images []formats.Image
	var dead []formats.DeadLetter
	for _, f := range files {
		lf := ListFile("/r/", f.path, f.head, f.err)
		scan.Add(lf)
		switch {
		case lf.Image != nil:
			images = append(images, *lf.Image)
		case lf.Dead != nil:
			dead = append(dead, *lf.Dead)
		}
	}
	want := []formats.Image{
		{ImageID: "dogs/x.jpg", URI: "/r/dogs/x.jpg", Label: "dogs"},
		{ImageID: "cats/y.PNG", URI: "/r/cats/y.PNG", Label: "cats"},
		{ImageID: "a/img1.jpg", URI: "/r/a/img1.jpg", Label: "a"},
		{ImageID: "b/img1.jpg", URI: "/r/b/img1.jpg", Label: "b"},
		{ImageID: "cats/IMG_0001", URI: "/r/cats/IMG_0001", Label: "cats"},
	}
	if !reflect.DeepEqual(images, want) {
		t.Errorf("images = %+v, want %+v", images, want)
	}
	wantDead := []formats.DeadLetter{
		{ImageID: "cats/photo.heic", URI: "/r/cats/photo.heic", Stage: "ingest", Reason: "unsupported format: HEIC; only JPEG, PNG, GIF and WebP are decoded"},
		{ImageID: "dogs/scan.tif", URI: "/r/dogs/scan.tif", Stage: "ingest", Reason: "unsupported format: TIFF or a TIFF-based camera raw (DNG, NEF, CR2…); only JPEG, PNG, GIF and WebP are decoded"},
		{ImageID: "z.gif", URI: "/r/z.gif", Stage: "ingest", Reason: "directly in the input folder, not in a sub-folder: a folder's images are labelled by the name of the sub-folder that holds them"},
		{ImageID: "dogs/locked", URI: "/r/dogs/locked", Stage: "ingest", Reason: "cannot read the file: permission denied"},
	}
	if !reflect.DeepEqual(dead, wantDead) {
		t.Errorf("dead letters = %+v\nwant %+v", dead, wantDead)
	}
	if want := "refused 4 files as dead letters: 1 HEIC (unsupported image format), 1 TIFF or a TIFF-based camera raw (DNG, NEF, CR2…) (unsupported image format), " +
		"1 image directly in the input folder (no label), 1 unreadable file; skipped 2 files: 1 empty file, 1 not an image (text)"; scan.Summary() != want {
		t.Errorf("summary %q\nwant %q", scan.Summary(), want)
	}
	if scan.Files != 11 || scan.Images != 5 || !reflect.DeepEqual(scan.Labels, map[string]int64{"a": 1, "b": 1, "cats": 2, "dogs": 1}) || len(scan.FirstRefused) != 3 {
		t.Errorf("scan = %+v", scan)
	}
	if dot := ListFile("./r", "r/a/x.jpg", nil, nil); dot.Image == nil || dot.Image.ImageID != "a/x.jpg" {
		t.Errorf("listing of ./r = %+v, want id a/x.jpg", dot)
	}
	if gcs := ListFile("gs://b/in", "gs://b/in/c2/p.jpg", nil, nil); gcs.Image == nil || gcs.Image.ImageID != "c2/p.jpg" || gcs.Image.Label != "c2" {
		t.Errorf("gs:// listing = %+v", gcs)
	}
	if (FolderScan{}).Summary() != "" {
		t.Error("an empty scan has a summary")
	}
}

// TestSniff: Sniff tells images Decode reads (or the start of one) from
// images of other formats and from other files, by content alone.
func TestSniff(t *testing.T) {
	for _, c := range []struct {
		head []byte
		kind FileKind
		what string
	}{
		{encode(t, "jpeg", 8, 8)[:SniffBytes], KindImage, "JPEG"},
		{encode(t, "png", 8, 8)[:SniffBytes], KindImage, "PNG"},
		{[]byte("GIF89a"), KindImage, "GIF"},
		{[]byte("RIFF\x10\x00\x00\x00WEBPVP8 "), KindImage, "WebP"},
		{[]byte("\xff"), KindImage, "JPEG"}, // a truncated one: Decode says so
		{[]byte("\x00\x00\x00\x18ftypheic"), KindUnsupportedImage, "HEIC"},
		{[]byte("<svg xmlns='http://www.w3.org/2000/svg'>"), KindUnsupportedImage, "SVG, a vector image"},
		{[]byte("%PDF-1.7"), KindNotImage, "a PDF document"},
		{[]byte("PAR1\x15\x04"), KindNotImage, "unrecognised data"},
		{nil, KindEmpty, "empty file"},
	} {
		if kind, what := Sniff(c.head); kind != c.kind || what != c.what {
			t.Errorf("Sniff(%q) = %v, %q; want %v, %q", c.head, kind, what, c.kind, c.what)
		}
	}
}

func encode(t *testing.T, format string, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(x * 7), uint8(y * 5), 90, 255})
		}
	}
	var buf bytes.Buffer
	var err error
	switch format {
	case "jpeg":
		err = jpeg.Encode(&buf, img, nil)
	case "png":
		err = png.Encode(&buf, img)
	case "gif":
		err = gif.Encode(&buf, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDecode(t *testing.T) {
	for _, f := range []string{"jpeg", "png", "gif"} {
		img, format, err := Decode(encode(t, f, 40, 30), 0)
		if err != nil || format != f || img.Bounds().Dx() != 40 || img.Bounds().Dy() != 30 {
			t.Errorf("%s: got %v %q %v", f, img.Bounds(), format, err)
		}
	}
	jpg := encode(t, "jpeg", 64, 64)
	bad := map[string][]byte{
		"empty":     nil,
		"not image": []byte("hello, world, this is text"),
		"truncated": jpg[:len(jpg)/2],
	}
	for name, data := range bad {
		if _, _, err := Decode(data, 0); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
}

func TestDecodeRefusesBombBeforeDecoding(t *testing.T) {
	g := encode(t, "gif", 8, 8)
	// The GIF logical screen size sits at bytes 6..9, little endian; declare
	// 60000×60000 while the data stays tiny.
	g[6], g[7], g[8], g[9] = 0x60, 0xEA, 0x60, 0xEA
	_, _, err := Decode(g, 50_000_000)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if _, _, err := Decode(encode(t, "png", 100, 100), 100*100); err != nil {
		t.Fatalf("an image at the limit was refused: %v", err)
	}
}

// TestParseLabelsWrongFieldCount: a row with an unquoted comma in its id
// and path (6 fields under a 4-column header) is a dead letter naming its
// line and field count (and no id or path: they may be fragments), not an
// image whose id and path are fragments of its fields; the
// rows around it, a quoted comma and a field spanning lines included, are
// images.
func TestParseLabelsWrongFieldCount(t *testing.T) {
	csv := "image_id,path,label,tags\n" +
		"a,img/a.jpg,cat,\n" +
		"Paris_Louvre_Courtyard,_Looking_West,img/Paris_Louvre_Courtyard,_Looking_West.jpg,building,\n" +
		"\"b,c\",\"img/b,c.jpg\",dog,\"two\nlines\"\n" +
		"short,img/short.jpg,dog\n" +
		"d,img/d.jpg,dog,\n"
	images, dead, err := ParseLabels(strings.NewReader(csv), "/data", DefaultColumns())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, img := range images {
		ids = append(ids, img.ImageID)
	}
	if want := []string{"a", "b,c", "d"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("images %q, want %q", ids, want)
	}
	want := []formats.DeadLetter{
		{Stage: "ingest", Reason: "labels line 3: 6 fields, header has 4 (quote a field that holds a comma)"},
		{Stage: "ingest", Reason: "labels line 6: 3 fields, header has 4 (quote a field that holds a comma)"},
	}
	if !reflect.DeepEqual(dead, want) {
		t.Errorf("dead letters\n%+v\nwant\n%+v", dead, want)
	}

	s, err := ScanLabels(strings.NewReader(csv), DefaultColumns(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Rows != 5 || s.Usable != 3 || s.Refused != 2 || s.Wide != 2 || s.FirstWide != want[0].Reason {
		t.Errorf("ScanLabels = %+v, want 5 rows, 3 usable, 2 refused for their width, the first at line 3", s)
	}
}

// TestScanLabels: ScanLabels counts what ParseLabels would make of each
// row, by label, and fails where it fails.
func TestScanLabels(t *testing.T) {
	csv := "image_id,path,label\n" +
		"a,img/a.jpg,cat\n" +
		"b,img/b.jpg,cat\n" +
		"c,,dog\n" +
		"d,img/d.jpg,dog\n" +
		"e,img/e.jpg,\n"
	s, err := ScanLabels(strings.NewReader(csv), DefaultColumns(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := LabelsScan{Rows: 5, Usable: 4, Labels: map[string]int64{"cat": 2, "dog": 1, "": 1}, Refused: 1, FirstRefused: "labels line 4: empty path"}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("ScanLabels =\n%+v\nwant\n%+v", s, want)
	}
	for _, empty := range []string{"", "\n\n"} {
		if _, err := ScanLabels(strings.NewReader(empty), DefaultColumns(), "", nil); !errors.Is(err, ErrEmptyLabels) {
			t.Errorf("ScanLabels(%q): err = %v, want ErrEmptyLabels", empty, err)
		}
		if _, _, err := ParseLabels(strings.NewReader(empty), "", DefaultColumns()); !errors.Is(err, ErrEmptyLabels) {
			t.Errorf("ParseLabels(%q): err = %v, want ErrEmptyLabels", empty, err)
		}
	}
	if _, err := ScanLabels(strings.NewReader("image_id,path\na,b\n"), DefaultColumns(), "", nil); !errors.As(err, new(*MissingColumnError)) {
		t.Errorf("no label column: %v", err)
	}
	if _, err := ScanLabels(strings.NewReader("image_id,path,label\na,\"b,cat\n"), DefaultColumns(), "", nil); err == nil {
		t.Error("an unterminated quote: no error")
	}
}

func TestColumnsValidate(t *testing.T) {
	if err := DefaultColumns().Validate(); err != nil {
		t.Fatalf("default columns: %v", err)
	}
	noTags := DefaultColumns()
	noTags.Tags = ""
	if err := noTags.Validate(); err != nil {
		t.Errorf("no tags column: %v", err)
	}
	for field, set := range map[string]func(*Columns){
		"ingest.Columns.ID":    func(c *Columns) { c.ID = "" },
		"ingest.Columns.Path":  func(c *Columns) { c.Path = " " },
		"ingest.Columns.Label": func(c *Columns) { c.Label = "" },
	} {
		c := DefaultColumns()
		set(&c)
		var e *setting.Error
		if err := c.Validate(); !errors.As(err, &e) || e.Name() != field {
			t.Errorf("%+v: %v, want a setting error of %s", c, err, field)
		}
	}
}
