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

func TestFromListing(t *testing.T) {
	files := []string{"/r/dogs/x.jpg", "/r/cats/y.PNG", "/r/z.gif", "/r/cats/notes.txt", "/r/other/x.webp", "/r/a/img1.jpg", "/r/b/img1.jpg"}
	images := FromListing("/r/", files)
	want := []formats.Image{
		{ImageID: "a/img1.jpg", URI: "/r/a/img1.jpg", Label: "a"},
		{ImageID: "b/img1.jpg", URI: "/r/b/img1.jpg", Label: "b"},
		{ImageID: "cats/y.PNG", URI: "/r/cats/y.PNG", Label: "cats"},
		{ImageID: "dogs/x.jpg", URI: "/r/dogs/x.jpg", Label: "dogs"},
		{ImageID: "other/x.webp", URI: "/r/other/x.webp", Label: "other"},
		{ImageID: "z.gif", URI: "/r/z.gif"},
	}
	if !reflect.DeepEqual(images, want) {
		t.Errorf("images = %+v, want %+v", images, want)
	}
	if dot := FromListing("./r", []string{"r/a/x.jpg"}); len(dot) != 1 || dot[0].ImageID != "a/x.jpg" {
		t.Errorf("listing of ./r = %+v, want id a/x.jpg", dot)
	}
	gcs := FromListing("gs://b/in", []string{"gs://b/in/c1/p.jpg", "gs://b/in/c2/p.jpg"})
	if len(gcs) != 2 || gcs[0].ImageID != "c1/p.jpg" || gcs[1].ImageID != "c2/p.jpg" || gcs[1].Label != "c2" {
		t.Errorf("gs:// listing = %+v", gcs)
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

	s, err := ScanLabels(strings.NewReader(csv), DefaultColumns())
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
	s, err := ScanLabels(strings.NewReader(csv), DefaultColumns())
	if err != nil {
		t.Fatal(err)
	}
	want := LabelsScan{Rows: 5, Usable: 4, Labels: map[string]int64{"cat": 2, "dog": 1, "": 1}, Refused: 1, FirstRefused: "labels line 4: empty path"}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("ScanLabels =\n%+v\nwant\n%+v", s, want)
	}
	if _, err := ScanLabels(strings.NewReader("image_id,path\na,b\n"), DefaultColumns()); !errors.As(err, new(*MissingColumnError)) {
		t.Errorf("no label column: %v", err)
	}
	if _, err := ScanLabels(strings.NewReader("image_id,path,label\na,\"b,cat\n"), DefaultColumns()); err == nil {
		t.Error("an unterminated quote: no error")
	}
}
