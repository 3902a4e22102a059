package ingest

import (
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"math"
	"testing"
)

// exifSides is the Exif specification's table for the Orientation tag: the
// visual sides of the image that the stored image's first row and first
// column belong on. It is written out here independently of orient's
// arithmetic, so that the test checks the meaning, not the code.
var exifSides = [9]struct{ row0, col0 string }{
	1: {"top", "left"}, 2: {"top", "right"}, 3: {"bottom", "right"}, 4: {"bottom", "left"},
	5: {"left", "top"}, 6: {"right", "top"}, 7: {"right", "bottom"}, 8: {"left", "bottom"},
}

func opposite(side string) string {
	return map[string]string{"top": "bottom", "bottom": "top", "left": "right", "right": "left"}[side]
}

// quadrantAt returns the index (0 top-left, 1 top-right, 2 bottom-left, 3
// bottom-right) of the corner where a vertical and a horizontal side meet.
func quadrantAt(a, b string) int {
	q := 0
	for _, s := range []string{a, b} {
		switch s {
		case "right":
			q |= 1
		case "bottom":
			q |= 2
		}
	}
	return q
}

func TestDecodeOrientation(t *testing.T) {
	const w, h = 48, 32
	levels := [4]float64{240, 170, 100, 30} // stored top-left, top-right, bottom-left, bottom-right
	stored := quadrants(w, h, 240, 170, 100, 30)
	sources := []struct {
		name string
		jpg  []byte
	}{
		{"gray", encodeJPEG(t, stored)},
		{"colour 4:2:0", encodeJPEG(t, toRGBA(stored))},
	}
	orders := []struct {
		name string
		bo   binary.ByteOrder
	}{{"II", binary.LittleEndian}, {"MM", binary.BigEndian}}

	for o := 1; o <= 8; o++ {
		// Where each stored corner must land: corner (first or last row,
		// first or last column) goes to the corner of those rows' and
		// columns' visual sides.
		row0, col0 := exifSides[o].row0, exifSides[o].col0
		var want [4]float64
		for r, rowSide := range []string{row0, opposite(row0)} {
			for c, colSide := range []string{col0, opposite(col0)} {
				want[quadrantAt(rowSide, colSide)] = levels[2*r+c]
			}
		}
		wantW, wantH := w, h
		if o >= 5 {
			wantW, wantH = h, w
		}
		for _, src := range sources {
			for _, order := range orders {
				t.Run(fmt.Sprintf("%d/%s/%s", o, src.name, order.name), func(t *testing.T) {
					data := withExif(src.jpg, exifTIFF(order.bo, uint32(o), 3))
					if got := jpegOrientation(data); got != o {
						t.Fatalf("jpegOrientation = %d, want %d", got, o)
					}
					img, _, err := Decode(data, 0)
					if err != nil {
						t.Fatal(err)
					}
					g := grayOf(img)
					if g.Width != wantW || g.Height != wantH {
						t.Fatalf("decoded %dx%d, want %dx%d", g.Width, g.Height, wantW, wantH)
					}
					got := quadrantMeans(g)
					for i := range got {
						if math.Abs(got[i]-want[i]) > 6 {
							t.Fatalf("quadrant levels %.0f, want %.0f", got, want)
						}
					}

					kept, _, err := (&Decoder{KeepOrientation: true}).Decode(data)
					if err != nil {
						t.Fatal(err)
					}
					if b := kept.Bounds(); b.Dx() != w || b.Dy() != h {
						t.Errorf("with KeepOrientation: %v, want the stored %dx%d", b, w, h)
					}
				})
			}
		}
	}
}

func TestJPEGOrientationMalformed(t *testing.T) {
	jpg := encodeJPEG(t, quadrants(16, 16, 0, 50, 100, 150))
	le := binary.LittleEndian
	good := exifTIFF(le, 6, 3)
	cut := func(b []byte, n int) []byte { return b[:n] }
	set := func(at int, v ...byte) []byte {
		b := exifTIFF(le, 6, 3)
		copy(b[at:], v)
		return b
	}
	tests := []struct {
		name string
		data []byte
		want int
	}{
		{"valid, SHORT", withExif(jpg, good), 6},
		{"valid, LONG as some tools write", withExif(jpg, exifTIFF(le, 6, 4)), 6},
		{"no Exif", jpg, 0},
		{"value 0", withExif(jpg, exifTIFF(le, 0, 3)), 0},
		{"value 9", withExif(jpg, exifTIFF(le, 9, 3)), 0},
		{"value 0x10006 as LONG", withExif(jpg, exifTIFF(le, 0x10006, 4)), 0},
		{"type ASCII", withExif(jpg, exifTIFF(le, 6, 2)), 0},
		{"count 2", withExif(jpg, set(22+4, 2)), 0},
		{"bad byte order", withExif(jpg, set(0, 'I', 'M')), 0},
		{"bad magic", withExif(jpg, set(2, 43)), 0},
		{"IFD offset past the end", withExif(jpg, set(4, 0xff, 0xff, 0xff, 0xff)), 0},
		{"IFD offset inside the header", withExif(jpg, set(4, 4, 0, 0, 0)), 0},
		// Entries that are there are read even if the count promises more.
		{"entry count past the end", withExif(jpg, set(8, 0xff, 0xff)), 6},
		{"Orientation beyond the entry count", withExif(jpg, set(8, 1, 0)), 0},
		{"entry count past the end, Orientation cut", withExif(jpg, cut(set(8, 0xff, 0xff), 30)), 0},
		{"TIFF cut in the header", withExif(jpg, cut(good, 7)), 0},
		{"TIFF cut in the IFD", withExif(jpg, cut(good, 30)), 0},
		{"empty Exif", withExif(jpg, nil), 0},
		{"XMP, not Exif", withSegment(jpg, 0xe1, []byte("http://ns.adobe.com/xap/1.0/\x00<x/>")), 0},
		{"Exif after an APP0", withExif(withSegment(jpg, 0xe0, []byte("JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")), good), 6},
		{"first Exif wins", withExif(withExif(jpg, exifTIFF(le, 3, 3)), good), 6},
		{"fill bytes before a marker", append([]byte{0xff, 0xd8, 0xff, 0xff}, withExif(jpg, good)[2:]...), 6},
		{"segment length past the end", []byte{0xff, 0xd8, 0xff, 0xe1, 0xff, 0xff, 'E', 'x'}, 0},
		{"segment length 1", []byte{0xff, 0xd8, 0xff, 0xe1, 0x00, 0x01}, 0},
		{"Exif after the scan is ignored", append(append([]byte{}, jpg...), withExif([]byte{0xff, 0xd8}, good)[2:]...), 0},
	}
	for _, tt := range tests {
		if got := jpegOrientation(tt.data); got != tt.want {
			t.Errorf("%s: jpegOrientation = %d, want %d", tt.name, got, tt.want)
		}
		// Whatever the Exif data, the image itself decodes.
		if _, _, err := Decode(tt.data, 0); err != nil && len(tt.data) > len(jpg) {
			t.Errorf("%s: Decode: %v", tt.name, err)
		}
	}
}

// reference turns img upright by composing mirror images and a transpose,
// pixel by pixel through At: slow, but independent of orient's arithmetic.
func reference(img image.Image, o int) image.Image {
	b := img.Bounds()
	src := image.NewRGBA64(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			src.Set(x, y, img.At(b.Min.X+x, b.Min.Y+y))
		}
	}
	flipH := func(m *image.RGBA64) *image.RGBA64 {
		out := image.NewRGBA64(m.Rect)
		for y := 0; y < m.Rect.Dy(); y++ {
			for x := 0; x < m.Rect.Dx(); x++ {
				out.Set(m.Rect.Dx()-1-x, y, m.At(x, y))
			}
		}
		return out
	}
	flipV := func(m *image.RGBA64) *image.RGBA64 {
		out := image.NewRGBA64(m.Rect)
		for y := 0; y < m.Rect.Dy(); y++ {
			for x := 0; x < m.Rect.Dx(); x++ {
				out.Set(x, m.Rect.Dy()-1-y, m.At(x, y))
			}
		}
		return out
	}
	transpose := func(m *image.RGBA64) *image.RGBA64 {
		out := image.NewRGBA64(image.Rect(0, 0, m.Rect.Dy(), m.Rect.Dx()))
		for y := 0; y < m.Rect.Dy(); y++ {
			for x := 0; x < m.Rect.Dx(); x++ {
				out.Set(y, x, m.At(x, y))
			}
		}
		return out
	}
	switch o {
	case 2:
		return flipH(src)
	case 3:
		return flipH(flipV(src))
	case 4:
		return flipV(src)
	case 5:
		return transpose(src)
	case 6: // a quarter turn clockwise
		return flipH(transpose(src))
	case 7:
		return flipH(flipV(transpose(src)))
	case 8: // a quarter turn anticlockwise
		return flipV(transpose(src))
	}
	return src
}

// fill sets every pixel of m to a different colour, from a 5×3 grid of
// distinct values.
func fill(m interface {
	image.Image
	Set(x, y int, c color.Color)
}) {
	b := m.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			i := (y-b.Min.Y)*b.Dx() + (x - b.Min.X)
			m.Set(x, y, color.NRGBA64{uint16(i * 4001), uint16(65535 - i*3001), uint16(i * 997), uint16(30000 + i*2000)})
		}
	}
}

// sub returns the 5×3 part of m at (2, 1), so that orient must handle
// bounds that do not start at the origin and strides wider than a row.
func sub(m interface {
	image.Image
	SubImage(image.Rectangle) image.Image
}) image.Image {
	return m.SubImage(image.Rect(2, 1, 7, 4))
}

func TestOrient(t *testing.T) {
	r := image.Rect(0, 0, 9, 6)
	ycbcr := func(ratio image.YCbCrSubsampleRatio) image.Image {
		m := image.NewYCbCr(r, ratio)
		for i := range m.Y {
			m.Y[i] = uint8(i * 37)
		}
		for i := range m.Cb {
			m.Cb[i], m.Cr[i] = uint8(i*53), uint8(255-i*29)
		}
		return m.SubImage(image.Rect(2, 1, 7, 4))
	}
	images := map[string]func() image.Image{
		"Gray":        func() image.Image { m := image.NewGray(r); fill(m); return sub(m) },
		"Gray16":      func() image.Image { m := image.NewGray16(r); fill(m); return sub(m) },
		"Alpha":       func() image.Image { m := image.NewAlpha(r); fill(m); return sub(m) },
		"Alpha16":     func() image.Image { m := image.NewAlpha16(r); fill(m); return sub(m) },
		"RGBA":        func() image.Image { m := image.NewRGBA(r); fill(m); return sub(m) },
		"NRGBA":       func() image.Image { m := image.NewNRGBA(r); fill(m); return sub(m) },
		"RGBA64":      func() image.Image { m := image.NewRGBA64(r); fill(m); return sub(m) },
		"NRGBA64":     func() image.Image { m := image.NewNRGBA64(r); fill(m); return sub(m) },
		"CMYK":        func() image.Image { m := image.NewCMYK(r); fill(m); return sub(m) },
		"Paletted":    func() image.Image { m := image.NewPaletted(r, paletteOf(256)); fill(m); return sub(m) },
		"YCbCr 4:4:4": func() image.Image { return ycbcr(image.YCbCrSubsampleRatio444) },
		"YCbCr 4:2:0": func() image.Image { return ycbcr(image.YCbCrSubsampleRatio420) },
		"YCbCr 4:2:2": func() image.Image { return ycbcr(image.YCbCrSubsampleRatio422) },
		"NYCbCrA (At/Set)": func() image.Image {
			m := image.NewNYCbCrA(r, image.YCbCrSubsampleRatio420)
			for i := range m.Y {
				m.Y[i], m.A[i] = uint8(i*37), uint8(i*11)
			}
			return m.SubImage(image.Rect(2, 1, 7, 4))
		},
	}
	for name, mk := range images {
		for o := 1; o <= 8; o++ {
			src := mk()
			got := orient(src, o)
			want := reference(src, o)
			if o == 1 && got != src {
				t.Errorf("%s, 1: orient returned a new image for the identity", name)
			}
			if o > 1 && got.Bounds() != want.Bounds() {
				t.Errorf("%s, %d: bounds %v, want %v", name, o, got.Bounds(), want.Bounds())
				continue
			}
			if o > 1 && fmt.Sprintf("%T", got) != fmt.Sprintf("%T", src) && name != "NYCbCrA (At/Set)" {
				t.Errorf("%s, %d: orient returned a %T", name, o, got)
			}
			b := want.Bounds()
			for y := b.Min.Y; y < b.Max.Y; y++ {
				for x := b.Min.X; x < b.Max.X; x++ {
					gb := got.Bounds()
					g := color.RGBA64Model.Convert(got.At(gb.Min.X+x, gb.Min.Y+y))
					w := color.RGBA64Model.Convert(want.At(x, y))
					if g != w {
						t.Fatalf("%s, %d: pixel (%d, %d) = %v, want %v", name, o, x, y, g, w)
					}
				}
			}
		}
	}
}

// paletteOf is a palette of n distinct colours.
func paletteOf(n int) color.Palette {
	p := make(color.Palette, n)
	for i := range p {
		p[i] = color.RGBA{uint8(i), uint8(255 - i), uint8(i * 7), 255}
	}
	return p
}
