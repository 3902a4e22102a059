package describe

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/global"
)

// shape is an image of the project's own test set.
var shape = filepath.Join("..", "..", "testdata", "shapes", "images", "class0", "class0-00.jpg")

// readFile reads local files, as the Beam wrapper's reader does.
func readFile(_ context.Context, uri string) ([]byte, error) { return os.ReadFile(uri) }

func TestDescribe(t *testing.T) {
	ctx := context.Background()
	opt := DefaultOptions().WithGlobal()
	d, err := NewDescriber(opt, readFile)
	if err != nil {
		t.Fatal(err)
	}
	f, dead := d.Describe(ctx, formats.Image{ImageID: "a", URI: shape, Label: "class0"})
	if dead != nil {
		t.Fatalf("dead letter for a good image: %+v", dead)
	}
	if f.ImageID != "a" || f.Label != "class0" || f.Width != 192 || f.Height != 192 {
		t.Errorf("features header = %q %q %dx%d", f.ImageID, f.Label, f.Width, f.Height)
	}
	n := len(f.X)
	if n < 20 || len(f.Y) != n || len(f.Scale) != n || len(f.Angle) != n || len(f.Descriptors) != n {
		t.Fatalf("%d keypoints with %d/%d/%d/%d coordinates and %d descriptors", n, len(f.Y), len(f.Scale), len(f.Angle), len(f.Descriptors), len(f.Descriptors))
	}
	for i, desc := range f.Descriptors {
		if len(desc) != formats.DescriptorSize {
			t.Fatalf("descriptor %d has %d bytes", i, len(desc))
		}
	}
	got := [][]float32{f.Colour, f.Edge, f.Gabor, f.LBP, f.GIST}
	for i, m := range global.Modalities() {
		if len(got[i]) != m.Dim {
			t.Errorf("%s: %d values, want %d", m.Name, len(got[i]), m.Dim)
		}
	}
}

func TestDescribeFailures(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "c.jpg")
	data, err := os.ReadFile(shape)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(corrupt, data[:len(data)/4], 0o644)
	empty := filepath.Join(dir, "e.png")
	os.WriteFile(empty, nil, 0o644)
	d, err := NewDescriber(DefaultOptions(), readFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ uri, stage string }{
		{filepath.Join(dir, "missing.jpg"), "read"},
		{corrupt, "decode"},
		{empty, "decode"},
	} {
		_, dead := d.Describe(ctx, formats.Image{ImageID: "x", URI: tc.uri})
		if dead == nil || dead.Stage != tc.stage || dead.Reason == "" || dead.URI != tc.uri {
			t.Errorf("%s: dead letter %+v, want stage %s with a reason", filepath.Base(tc.uri), dead, tc.stage)
		}
	}
	// The Describer still works after the failures.
	if _, dead := d.Describe(ctx, formats.Image{ImageID: "ok", URI: shape}); dead != nil {
		t.Errorf("good image after failures: %+v", dead)
	}
	if _, err := NewDescriber(Options{NoSIFT: true}, readFile); err == nil || !strings.Contains(err.Error(), "neither") {
		t.Errorf("nothing to extract accepted: %v", err)
	}
}

// TestDescribeUnless: an image whose content identity is known comes back
// carried, with only its id and content, and the content identity is the
// hash of the file's bytes, whatever its path.
func TestDescribeUnless(t *testing.T) {
	ctx := context.Background()
	d, err := NewDescriber(DefaultOptions(), readFile)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(shape)
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(t.TempDir(), "copy.jpg")
	if err := os.WriteFile(copied, data, 0o644); err != nil {
		t.Fatal(err)
	}
	img := formats.Image{ImageID: "a", URI: copied, Label: "class0"}
	f, carried, dead := d.DescribeUnless(ctx, img, nil)
	if dead != nil || carried || f.Content != formats.ContentOf(data) || len(f.Descriptors) == 0 {
		t.Fatalf("no known images: carried %v, content %q, %d descriptors, dead %+v; want described with content %q", carried, f.Content, len(f.Descriptors), dead, formats.ContentOf(data))
	}
	var asked []string
	known := func(id, content string) bool {
		asked = append(asked, id+" "+content)
		return id == "a" && content == f.Content
	}
	g, carried, dead := d.DescribeUnless(ctx, img, known)
	if dead != nil || !carried || g.ImageID != "a" || g.Content != f.Content || len(g.Descriptors) != 0 || len(asked) != 1 {
		t.Errorf("known image: carried %v, %+v, dead %+v, asked %v; want carried with id and content only", carried, g, dead, asked)
	}
	// Other bytes under the same id are described again.
	if err := os.WriteFile(copied, append(data, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	h, carried, dead := d.DescribeUnless(ctx, img, known)
	if dead != nil || carried || h.Content == f.Content || len(h.Descriptors) == 0 {
		t.Errorf("changed bytes: carried %v, content %q (was %q), dead %+v; want described again", carried, h.Content, f.Content, dead)
	}
}

// TestLumaDecodeKeepsFeatures: without global features a JPEG is decoded
// to its luma plane alone; a photo larger than MaxSide must still give
// the keypoints and descriptors of the full colour decode, so that a run
// carries its features forward unchanged whichever path described them.
func TestLumaDecodeKeepsFeatures(t *testing.T) {
	path := bigJPEG(t)
	describe := func(global bool) formats.Features {
		return describeBig(t, path, func(o *Options) { o.Global, o.DCTScale = global, false })
	}
	luma, colour := describe(false), describe(true)
	if len(luma.X) == 0 || len(luma.X) != len(colour.X) {
		t.Fatalf("%d keypoints from the luma decode, %d from the colour decode", len(luma.X), len(colour.X))
	}
	for i := range luma.X {
		if luma.X[i] != colour.X[i] || luma.Y[i] != colour.Y[i] || luma.Scale[i] != colour.Scale[i] ||
			luma.Angle[i] != colour.Angle[i] || !bytes.Equal(luma.Descriptors[i], colour.Descriptors[i]) {
			t.Fatalf("keypoint %d differs: luma (%v, %v, %v), colour (%v, %v, %v)", i,
				luma.X[i], luma.Y[i], luma.Scale[i], colour.X[i], colour.Y[i], colour.Scale[i])
		}
	}
}

// TestDCTScale: with DCTScale a photo of at least twice MaxSide is
// decoded DCT-domain scaled: its features are the full photo's, in its
// coordinates, close to the full decode's in number but not the same.
func TestDCTScale(t *testing.T) {
	path := bigJPEG(t)
	full := describeBig(t, path, func(o *Options) { o.DCTScale = false })
	scaled := describeBig(t, path, func(o *Options) { o.DCTScale = true })
	if scaled.Width != full.Width || scaled.Height != full.Height {
		t.Errorf("DCTScale: %dx%d, full decode %dx%d", scaled.Width, scaled.Height, full.Width, full.Height)
	}
	n, m := len(scaled.X), len(full.X)
	if n < m*9/10 || n > m*11/10 {
		t.Errorf("DCTScale: %d keypoints, full decode %d", n, m)
	}
	var maxX, maxY float32
	for i := range scaled.X {
		maxX, maxY = max(maxX, scaled.X[i]), max(maxY, scaled.Y[i])
	}
	if maxX < float32(full.Width)*3/4 || maxY < float32(full.Height)*3/4 {
		t.Errorf("DCTScale: keypoints reach (%v, %v) of a %dx%d photo", maxX, maxY, full.Width, full.Height)
	}
	same := n == m
	for i := 0; same && i < n; i++ {
		same = scaled.X[i] == full.X[i] && bytes.Equal(scaled.Descriptors[i], full.Descriptors[i])
	}
	if same {
		t.Errorf("DCTScale: the full decode's features; want the scaled decode's")
	}
}

// describeBig describes the photo at path with the default options, set
// changed and MaxSide 400: under half the width of bigJPEG's photo, so
// that a DCT-scaled decode at 1/2 is allowed.
func describeBig(t *testing.T, path string, set func(*Options)) formats.Features {
	t.Helper()
	opt := DefaultOptions()
	opt.SIFT.MaxSide = 400
	set(&opt)
	d, err := NewDescriber(opt, readFile)
	if err != nil {
		t.Fatal(err)
	}
	f, dead := d.Describe(context.Background(), formats.Image{ImageID: "big", URI: path, Label: "x"})
	if dead != nil {
		t.Fatalf("dead letter %+v", dead)
	}
	return f
}

// bigJPEG writes a 960×768 JPEG (quality 90) of 5×4 tiles of a 192×192
// shape photo, each shifted in colour, and returns its path.
func bigJPEG(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(shape)
	if err != nil {
		t.Fatal(err)
	}
	tile, err := jpeg.Decode(bytes.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	// 5×4 tiles of a 192×192 shape photo, each shifted in colour:
	// 960×768.
	b := tile.Bounds()
	big := image.NewRGBA(image.Rect(0, 0, 5*b.Dx(), 4*b.Dy()))
	for ty := range 4 {
		for tx := range 5 {
			for y := range b.Dy() {
				for x := range b.Dx() {
					r, g, bl, _ := tile.At(b.Min.X+x, b.Min.Y+y).RGBA()
					k := uint32(tx*9 + ty*5)
					big.Set(tx*b.Dx()+x, ty*b.Dy()+y, color.RGBA{uint8(min(r>>8+k, 255)), uint8(g >> 8), uint8(bl >> 8), 255})
				}
			}
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, big, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "big.jpg")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// DCT-scaled decoding is on by default and for SIFT alone: global
// features read colour at full size, so options asking for both are
// refused, and WithGlobal turns it off.
func TestDCTScaleNeedsSIFTAlone(t *testing.T) {
	if o := DefaultOptions(); !o.DCTScale || o.Validate() != nil {
		t.Errorf("default options: DCTScale %v, %v; want on and valid", o.DCTScale, o.Validate())
	}
	if o := DefaultOptions().WithGlobal(); !o.Global || o.DCTScale || o.Validate() != nil {
		t.Errorf("WithGlobal: Global %v, DCTScale %v, %v; want global features decoded at full size", o.Global, o.DCTScale, o.Validate())
	}
	for _, set := range []func(*Options){
		func(o *Options) { o.Global = true },
		func(o *Options) { o.Global, o.NoSIFT = true, true },
	} {
		opt := DefaultOptions()
		opt.DCTScale = true
		set(&opt)
		if err := opt.Validate(); err == nil || !strings.Contains(err.Error(), "DCT-scaled decoding is for SIFT alone") {
			t.Errorf("DCTScale, Global %v, NoSIFT %v: %v", opt.Global, opt.NoSIFT, err)
		}
	}
}

// Options.Decode decodes as the options describe: colour at full size for
// global features, a JPEG's luma for SIFT alone, DCT-domain scaled with
// DCTScale.
func TestOptionsDecode(t *testing.T) {
	data, err := os.ReadFile(bigJPEG(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		global, dctScale bool
		grey             bool
		shift            int
	}{{false, false, true, 0}, {false, true, true, 1}, {true, false, false, 0}} {
		opt := DefaultOptions()
		opt.SIFT.MaxSide, opt.Global, opt.DCTScale = 400, c.global, c.dctScale
		l, err := opt.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		_, grey := l.Image.(*image.Gray)
		if grey != c.grey || l.Shift != c.shift || l.Width != 960 || l.Height != 768 {
			t.Errorf("Global %v, DCTScale %v: %T at shift %d, %dx%d; want grey %v, shift %d, 960x768",
				c.global, c.dctScale, l.Image, l.Shift, l.Width, l.Height, c.grey, c.shift)
		}
	}
}

// TestSameFeatures checks SameFeatures against description itself, on a
// 960×768 JPEG: a change of DCTScale leaves its features alike where
// neither option DCT-scales it (MaxSide above half its longer side) and
// changes them where one does; with both on, a change of MaxSide is
// SIFT's to judge.
func TestSameFeatures(t *testing.T) {
	path := bigJPEG(t)
	for _, c := range []struct {
		name               string
		prevDCT, nextDCT   bool
		prevSide, nextSide int
		same               bool
	}{
		{"dct_scale on, max_side 400", false, true, 400, 400, false},
		{"dct_scale off, max_side 400", true, false, 400, 400, false},
		{"dct_scale on, max_side 500", false, true, 500, 500, true},
		{"dct_scale on, max_side 481", false, true, 481, 481, true},
		{"dct_scale on, max_side 480", false, true, 480, 480, false},
		{"dct_scale on both, max_side 400", true, true, 400, 400, true},
		{"dct_scale on, max_side 1024 and 2048", false, true, 1024, 2048, true},
		{"dct_scale on both, max_side 400 and 500", true, true, 400, 500, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			set := func(dct bool, side int) func(*Options) {
				return func(o *Options) { o.DCTScale, o.SIFT.MaxSide = dct, side }
			}
			prev, next := DefaultOptions(), DefaultOptions()
			set(c.prevDCT, c.prevSide)(&prev)
			set(c.nextDCT, c.nextSide)(&next)
			if got := next.SameFeatures(prev, 960, 768); got != c.same {
				t.Fatalf("SameFeatures(960x768) = %v, want %v", got, c.same)
			}
			a, b := describeBig(t, path, set(c.prevDCT, c.prevSide)), describeBig(t, path, set(c.nextDCT, c.nextSide))
			equal := len(a.X) == len(b.X)
			for i := 0; equal && i < len(a.X); i++ {
				equal = a.X[i] == b.X[i] && a.Y[i] == b.Y[i] && bytes.Equal(a.Descriptors[i], b.Descriptors[i])
			}
			if equal != c.same {
				t.Fatalf("described alike %v (%d and %d keypoints), SameFeatures says %v", equal, len(a.X), len(b.X), c.same)
			}
		})
	}
	if o := DefaultOptions(); o.SameFeatures(o, 0, 0) != true {
		t.Errorf("equal options, unknown size: not the same features")
	}
	prev, next := DefaultOptions(), DefaultOptions()
	prev.DCTScale, next.DCTScale = false, true
	if next.SameFeatures(prev, 0, 0) {
		t.Errorf("dct_scale changed, unknown size: the same features")
	}
}

// TestSameFeaturesDCTVersion: on a 960×768 JPEG, the reduced transforms'
// version changes the features where DCTScale scales it (max_side 400),
// and SameFeatures says so, not where it decodes at full size (500).
func TestSameFeaturesDCTVersion(t *testing.T) {
	path := bigJPEG(t)
	for _, c := range []struct {
		side int
		same bool
	}{{400, false}, {500, true}} {
		set := func(version int) func(*Options) {
			return func(o *Options) { o.DCTScale, o.DCTVersion, o.SIFT.MaxSide = true, version, c.side }
		}
		prev, next := DefaultOptions(), DefaultOptions()
		set(0)(&prev)
		set(DCTVersion)(&next)
		if got := next.SameFeatures(prev, 960, 768); got != c.same {
			t.Errorf("max_side %d: SameFeatures(960x768) = %v, want %v", c.side, got, c.same)
		}
		a, b := describeBig(t, path, set(0)), describeBig(t, path, set(DCTVersion))
		equal := len(a.X) == len(b.X)
		for i := 0; equal && i < len(a.X); i++ {
			equal = a.X[i] == b.X[i] && a.Y[i] == b.Y[i] && bytes.Equal(a.Descriptors[i], b.Descriptors[i])
		}
		if equal != c.same {
			t.Errorf("max_side %d: described alike %v (%d and %d keypoints), want %v", c.side, equal, len(a.X), len(b.X), c.same)
		}
		if next.SameFeatures(prev, 0, 0) {
			t.Errorf("dct_version changed, unknown size: the same features")
		}
	}
}
