package ingest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"runtime"
	"testing"

	"github.com/bowline/bowline/transforms/ingest/internal/lumajpeg"
)

// TestDecodeLumaFullSize: at Shift 0 DecodeLuma is Decode's Y plane, upright
// (the describe stage's SIFT input is unchanged for images it does not
// downscale); a large image comes reduced by the largest 1/2^s that keeps
// its longer side at minSide or more.
func TestDecodeLumaFullSize(t *testing.T) {
	src := toRGBA(quadrants(203, 141, 10, 80, 160, 240))
	jpg := withExif(encodeJPEG(t, src), exifTIFF(binary.LittleEndian, 6, 3))
	var d Decoder
	want, _, err := d.Decode(jpg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ minSide, shift int }{{0, 0}, {203, 0}, {101, 1}, {100, 1}, {50, 2}, {25, 3}, {1, 3}} {
		l, err := d.DecodeLuma(jpg, c.minSide)
		if err != nil {
			t.Fatal(err)
		}
		if l.Shift != c.shift || l.Width != 141 || l.Height != 203 || l.Format != "jpeg" {
			t.Errorf("minSide %d: shift %d, %dx%d %s; want shift %d, 141x203 (turned) jpeg", c.minSide, l.Shift, l.Width, l.Height, l.Format, c.shift)
		}
		g, ok := l.Image.(*image.Gray)
		if !ok {
			t.Fatalf("minSide %d: %T", c.minSide, l.Image)
		}
		if s := 1<<c.shift - 1; g.Bounds() != image.Rect(0, 0, (141+s)>>c.shift, (203+s)>>c.shift) {
			t.Errorf("minSide %d: bounds %v", c.minSide, g.Bounds())
		}
		if c.shift == 0 {
			y := want.(*image.YCbCr)
			for row := range 203 {
				if !bytes.Equal(g.Pix[row*g.Stride:][:141], y.Y[y.YOffset(0, row):][:141]) {
					t.Fatalf("row %d differs from Decode's Y plane", row)
				}
			}
		}
	}
}

// TestDecodeLumaFallback: a CMYK JPEG's grey needs every component, so
// DecodeLuma returns Decode's image; limits refuse as Decode's do.
func TestDecodeLumaFallback(t *testing.T) {
	cmyk := fourComponentJPEG(2, 2, 2, func(bx, by int) [4]uint8 { return [4]uint8{10, 20, 30, uint8(40 * bx)} })
	d := Decoder{}
	l, err := d.DecodeLuma(cmyk, 8)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := l.Image.(*image.CMYK); !ok || l.Shift != 0 {
		t.Errorf("CMYK: %T shift %d, want Decode's *image.CMYK", l.Image, l.Shift)
	}
	small := Decoder{MaxPixels: 100}
	if _, err := small.DecodeLuma(encodeJPEG(t, quadrants(64, 64, 0, 1, 2, 3)), 8); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over MaxPixels: %v, want ErrTooLarge", err)
	}
	if _, err := d.DecodeLuma(progressiveJPEG(64, 64, DefaultMaxJPEGScans+1), 8); !errors.Is(err, ErrTooLarge) {
		t.Errorf("too many scans: %v, want ErrTooLarge", err)
	}
}

// TestDecodeFull: DecodeFull is Decode's image, upright, at Shift 0 with
// its size and format; limits refuse as Decode's do.
func TestDecodeFull(t *testing.T) {
	jpg := withExif(encodeJPEG(t, toRGBA(quadrants(203, 141, 10, 80, 160, 240))), exifTIFF(binary.LittleEndian, 6, 3))
	var d Decoder
	want, _, err := d.Decode(jpg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := d.DecodeFull(jpg)
	if err != nil {
		t.Fatal(err)
	}
	if !sameImage(l.Image, want) || l.Shift != 0 || l.Width != 141 || l.Height != 203 || l.Format != "jpeg" {
		t.Errorf("%T shift %d, %dx%d %s; want Decode's %T, shift 0, 141x203 (turned) jpeg", l.Image, l.Shift, l.Width, l.Height, l.Format, want)
	}
	small := Decoder{MaxPixels: 100}
	if _, err := small.DecodeFull(jpg); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over MaxPixels: %v, want ErrTooLarge", err)
	}
}

// sameImage reports whether a and b have the same bounds and colours.
func sameImage(a, b image.Image) bool {
	if a.Bounds() != b.Bounds() {
		return false
	}
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if a.At(x, y) != b.At(x, y) {
				return false
			}
		}
	}
	return true
}

// FuzzDecodeLuma checks that DecodeLuma never panics, returns at most
// fuzzMaxPixels pixels, explains every failure with one of the package's
// errors, and reduces only as far as minSide allows. Run it with
//
//	go test -run '^$' -fuzz FuzzDecodeLuma -fuzztime 3m ./transforms/ingest/
func FuzzDecodeLuma(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed, 16)
	}
	kinds := []error{ErrEmpty, ErrUnknownFormat, ErrUnsupported, ErrTooLarge, ErrTruncated, ErrCorrupt}
	f.Fuzz(func(t *testing.T, data []byte, minSide int) {
		d := Decoder{MaxPixels: fuzzMaxPixels}
		l, err := d.DecodeLuma(data, minSide)
		if err != nil {
			known := false
			for _, k := range kinds {
				known = known || errors.Is(err, k)
			}
			if !known || err.Error() == "" {
				t.Fatalf("error %q wraps none of the package's errors", err)
			}
			return
		}
		b := l.Image.Bounds()
		if b.Empty() || int64(b.Dx())*int64(b.Dy()) > fuzzMaxPixels || l.Shift < 0 || l.Shift > 3 {
			t.Fatalf("a %v %s image at shift %d", b, l.Format, l.Shift)
		}
		if l.Shift > 0 && max(l.Width, l.Height)>>l.Shift < minSide {
			t.Fatalf("%dx%d reduced by 2^%d, below minSide %d", l.Width, l.Height, l.Shift, minSide)
		}
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				l.Image.At(x, y).RGBA()
			}
		}
	})
}

// TestLumaRelease: a Luma released hands its pixels to the next
// DecodeLuma, which then allocates far less than the image and decodes
// the same pixels as into a new image.
func TestLumaRelease(t *testing.T) {
	jpg := encodeJPEG(t, toRGBA(quadrants(640, 480, 10, 80, 160, 240)))
	var d Decoder
	first, err := d.DecodeLuma(jpg, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]byte(nil), first.Image.(*image.Gray).Pix...)
	l := first
	var m0, m1 runtime.MemStats
	const n = 10
	runtime.ReadMemStats(&m0)
	for range n {
		l.Release()
		if l, err = d.DecodeLuma(jpg, 0); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&m1)
	if per, size := (m1.TotalAlloc-m0.TotalAlloc)/n, uint64(len(want)); per > size/2 {
		t.Errorf("DecodeLuma after Release allocates %d bytes; the image has %d", per, size)
	}
	if got := l.Image.(*image.Gray).Pix; !bytes.Equal(got, want) {
		t.Error("pixels decoded into a released image differ from a new image's")
	}
}

// TestLumaFilter: DecodeLuma reduces a JPEG through the 2^s×2^s mean
// when the reduced image is minSide on its longer side, and through the
// sharper filter made for a further area downscale otherwise.
func TestLumaFilter(t *testing.T) {
	// Stripes 3 pixels wide, whose detail the filters treat differently.
	g := image.NewGray(image.Rect(0, 0, 256, 192))
	for i := range g.Pix {
		g.Pix[i] = uint8(60 + 120*((i%256+i/256)/3%2))
	}
	jpg := encodeJPEG(t, g)
	var d Decoder
	for _, c := range []struct {
		minSide, shift int
		filter         lumajpeg.Filter
	}{{128, 1, lumajpeg.Box}, {120, 1, lumajpeg.Sharpen}, {64, 2, lumajpeg.Box}, {100, 1, lumajpeg.Sharpen}} {
		if f := lumaFilter(256, 192, c.minSide, c.shift); f != c.filter {
			t.Errorf("lumaFilter(256, 192, %d, %d) = %d, want %d", c.minSide, c.shift, f, c.filter)
		}
		l, err := d.DecodeLuma(jpg, c.minSide)
		if err != nil {
			t.Fatal(err)
		}
		if l.Shift != c.shift {
			t.Fatalf("minSide %d: shift %d, want %d", c.minSide, l.Shift, c.shift)
		}
		for _, f := range []lumajpeg.Filter{lumajpeg.Box, lumajpeg.Sharpen} {
			want, err := lumajpeg.Decode(bytes.NewReader(jpg), c.shift, f)
			if err != nil {
				t.Fatal(err)
			}
			if same := bytes.Equal(l.Image.(*image.Gray).Pix, want.Pix); same != (f == c.filter) {
				t.Errorf("minSide %d: the decode equals filter %d's: %v", c.minSide, f, same)
			}
		}
	}
}
