package ingest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"io"
	"math"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"

	"github.com/bowline/bowline/transforms/sift"
)

// grayOf is what the pipeline does with a decoded image: sift.FromImage's
// luma in [0,1], returned as width, height and rows.
func grayOf(img image.Image) *sift.Image { return sift.FromImage(img, nil) }

// meanIn is the mean gray level (0–255) of r in g.
func meanIn(g *sift.Image, r image.Rectangle) float64 {
	var s float64
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			s += float64(g.Pix[y*g.Width+x])
		}
	}
	return 255 * s / float64(r.Dx()*r.Dy())
}

// quadrantMeans returns the mean gray levels of g's quadrants (top-left,
// top-right, bottom-left, bottom-right), each shrunk by a margin so that
// JPEG ringing at the edges between them does not count.
func quadrantMeans(g *sift.Image) [4]float64 {
	w, h := g.Width, g.Height
	const m = 3
	return [4]float64{
		meanIn(g, image.Rect(m, m, w/2-m, h/2-m)),
		meanIn(g, image.Rect(w/2+m, m, w-m, h/2-m)),
		meanIn(g, image.Rect(m, h/2+m, w/2-m, h-m)),
		meanIn(g, image.Rect(w/2+m, h/2+m, w-m, h-m)),
	}
}

// refGray is the Rec. 601 luma of img's colours (at 16 bits, composited
// on black): what the pipeline's gray conversion should give, computed
// without it.
func refGray(img image.Image) *sift.Image {
	b := img.Bounds()
	g := &sift.Image{Width: b.Dx(), Height: b.Dy(), Pix: make([]float32, b.Dx()*b.Dy())}
	for y := range b.Dy() {
		for x := range b.Dx() {
			r, gr, bl, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
			g.Pix[y*g.Width+x] = float32((0.299*float64(r) + 0.587*float64(gr) + 0.114*float64(bl)) / 0xffff)
		}
	}
	return g
}

// colourQuadrants is a w×h image with a colour per quadrant, their lumas
// far apart.
func colourQuadrants(w, h int) *image.RGBA {
	colours := [4]color.RGBA{{250, 230, 210, 255}, {40, 200, 90, 255}, {200, 30, 160, 255}, {20, 40, 70, 255}}
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			q := 0
			if x >= w/2 {
				q++
			}
			if y >= h/2 {
				q += 2
			}
			m.SetRGBA(x, y, colours[q])
		}
	}
	return m
}

// TestDecodeFormats decodes every format and pixel layout Decode handles
// and checks the pipeline's gray conversion of the result, quadrant by
// quadrant, against the colours that were encoded.
func TestDecodeFormats(t *testing.T) {
	const w, h = 48, 32
	rgba := colourQuadrants(w, h)
	gray := quadrants(w, h, 240, 170, 100, 30)
	gray16 := image.NewGray16(gray.Rect)
	rgba64 := image.NewRGBA64(rgba.Rect)
	for y := range h {
		for x := range w {
			gray16.SetGray16(x, y, color.Gray16{uint16(gray.GrayAt(x, y).Y)*0x101 + 0x42})
			c := rgba.RGBAAt(x, y)
			rgba64.SetRGBA64(x, y, color.RGBA64{uint16(c.R) * 0x101, uint16(c.G) * 0x101, uint16(c.B)*0x101 + 0x17, 0xffff})
		}
	}
	// Half transparent: the gray conversion composites it on black.
	nrgba := image.NewNRGBA(rgba.Rect)
	for i := range nrgba.Pix {
		nrgba.Pix[i] = rgba.Pix[i]
		if i%4 == 3 {
			nrgba.Pix[i] = 128
		}
	}
	pal := toPaletted(rgba)
	// The second GIF frame is the negative: only the first must come back.
	neg := image.NewPaletted(rgba.Rect, palette.Plan9)
	for y := range h {
		for x := range w {
			c := rgba.RGBAAt(x, y)
			neg.Set(x, y, color.RGBA{255 - c.R, 255 - c.G, 255 - c.B, 255})
		}
	}
	animated := encodeGIF(t, &gif.GIF{Image: []*image.Paletted{pal, neg}, Delay: []int{10, 10}})
	// What quadrantWebP encodes, drawn directly.
	webpSrc := image.NewNRGBA(image.Rect(0, 0, 32, 24))
	for y := range 24 {
		for x := range 32 {
			g := uint8(0x20)
			if x < 16 && y < 12 {
				g = 0xe0
			}
			webpSrc.SetNRGBA(x, y, color.NRGBA{0x80, g, 0x80, 0xff})
		}
	}

	tests := []struct {
		name, format string
		data         []byte
		src          image.Image // what was encoded
		wantType     image.Image
		tolerance    float64 // in gray levels of 255
	}{
		{"colour JPEG", "jpeg", encodeJPEG(t, rgba), rgba, &image.YCbCr{}, 4},
		{"gray JPEG", "jpeg", encodeJPEG(t, gray), gray, &image.Gray{}, 4},
		{"8-bit gray PNG", "png", encodePNG(t, gray), gray, &image.Gray{}, 0.01},
		{"16-bit gray PNG", "png", encodePNG(t, gray16), gray16, &image.Gray16{}, 0.01},
		{"16-bit colour PNG", "png", encodePNG(t, rgba64), rgba64, &image.RGBA64{}, 0.01},
		{"8-bit colour PNG", "png", encodePNG(t, rgba), rgba, &image.RGBA{}, 0.01},
		{"8-bit colour PNG with alpha", "png", encodePNG(t, nrgba), nrgba, &image.NRGBA{}, 0.01},
		{"paletted PNG", "png", encodePNG(t, pal), pal, &image.Paletted{}, 0.01},
		{"animated GIF, first frame", "gif", animated, pal, &image.Paletted{}, 0.01},
		{"lossless WebP", "webp", quadrantWebP(), webpSrc, &image.NRGBA{}, 0.01},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, format, err := Decode(tt.data, 1<<20)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if format != tt.format {
				t.Errorf("format = %q, want %q", format, tt.format)
			}
			if got, want := fmt.Sprintf("%T", img), fmt.Sprintf("%T", tt.wantType); got != want {
				t.Errorf("image type = %s, want %s", got, want)
			}
			g, want := grayOf(img), refGray(tt.src)
			if g.Width != want.Width || g.Height != want.Height {
				t.Fatalf("gray image is %dx%d, want %dx%d", g.Width, g.Height, want.Width, want.Height)
			}
			got, wantMeans := quadrantMeans(g), quadrantMeans(want)
			for i := range got {
				if math.Abs(got[i]-wantMeans[i]) > tt.tolerance {
					t.Errorf("quadrant %d: gray level %.2f, want %.2f ± %.2f", i, got[i], wantMeans[i], tt.tolerance)
				}
			}
		})
	}
}

// TestDecodeCMYK checks the Adobe CMYK and YCCK JPEGs that Photoshop writes,
// which image/jpeg decodes but cannot encode: image/jpeg undoes Adobe's
// inversion (255 means no ink) whenever an APP14 marker is present, and
// refuses four components without one. The pipeline's gray conversion of
// the resulting *image.CMYK must match the colour the inks make.
func TestDecodeCMYK(t *testing.T) {
	// Inks (C, M, Y, K) of the four 8×8 blocks of a 16×16 image.
	inks := [4][4]uint8{
		{0, 0, 0, 0},      // paper white
		{255, 0, 0, 0},    // cyan
		{0, 40, 220, 30},  // a yellow
		{30, 60, 90, 200}, // near black
	}
	block := func(bx, by int) [4]uint8 { return inks[2*by+bx] }
	wantGray := func(k [4]uint8) float64 {
		r, g, b, _ := color.CMYK{k[0], k[1], k[2], k[3]}.RGBA()
		return (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(b)) / 257
	}
	tests := []struct {
		name      string
		adobe     int
		stored    func(ink [4]uint8) [4]uint8
		tolerance float64
	}{
		{"Adobe CMYK", 0, func(k [4]uint8) [4]uint8 {
			return [4]uint8{255 - k[0], 255 - k[1], 255 - k[2], 255 - k[3]}
		}, 1},
		// Adobe YCCK stores the inverted C, M, Y as "RGB" in YCbCr, and K
		// inverted; image/jpeg's inverse of the two cancels for C, M, Y.
		{"Adobe YCCK", 2, func(k [4]uint8) [4]uint8 {
			y, cb, cr := color.RGBToYCbCr(k[0], k[1], k[2])
			return [4]uint8{y, cb, cr, 255 - k[3]}
		}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := fourComponentJPEG(2, 2, tt.adobe, func(bx, by int) [4]uint8 { return tt.stored(block(bx, by)) })
			img, format, err := Decode(data, 0)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			cmyk, ok := img.(*image.CMYK)
			if format != "jpeg" || !ok {
				t.Fatalf("got %s %T, want a jpeg *image.CMYK", format, img)
			}
			g := grayOf(img)
			for i, k := range inks {
				bx, by := i%2, i/2
				r := image.Rect(8*bx, 8*by, 8*bx+8, 8*by+8)
				if got, want := meanIn(g, r), wantGray(k); math.Abs(got-want) > tt.tolerance {
					c := cmyk.CMYKAt(8*bx+4, 8*by+4)
					t.Errorf("block %d, inks %v: gray %.1f, want %.1f (decoded inks %v)", i, k, got, want, c)
				}
			}
		})
	}

	_, _, err := Decode(fourComponentJPEG(2, 2, -1, block), 0)
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "APP14") {
		t.Errorf("CMYK JPEG without Adobe APP14: err = %v, want ErrUnsupported naming APP14", err)
	}
}

func TestDecodeRefusals(t *testing.T) {
	jpg := encodeJPEG(t, toRGBA(quadrants(32, 32, 200, 100, 50, 0)))
	sof := sofOffset(t, jpg)
	patch := func(data []byte, at int, b ...byte) []byte {
		out := bytes.Clone(data)
		copy(out[at:], b)
		return out
	}
	var bmpData, tiffData bytes.Buffer
	if err := bmp.Encode(&bmpData, quadrants(8, 8, 0, 1, 2, 3)); err != nil {
		t.Fatal(err)
	}
	if err := tiff.Encode(&tiffData, quadrants(8, 8, 0, 1, 2, 3), nil); err != nil {
		t.Fatal(err)
	}
	pngOK := encodePNG(t, quadrants(16, 16, 0, 80, 160, 240))
	idat := bytes.Index(pngOK, []byte("IDAT"))
	pngBadZlib := patch(pngOK, idat+4, 0xff) // the zlib header
	pngBadCRC := bytes.Clone(pngOK)
	pngBadCRC[idat+4+int(binary.BigEndian.Uint32(pngOK[idat-4:]))] ^= 0xff

	const limit = 50_000_000
	tests := []struct {
		name    string
		data    []byte
		want    error
		wantMsg string
	}{
		{"zero bytes", nil, ErrEmpty, "empty file (0 bytes)"},
		{"HTML error page", []byte("<!DOCTYPE html>\n<html><head><title>404 Not Found</title>"), ErrUnknownFormat, "looks like HTML"},
		{"text", []byte("hello, world, this is text"), ErrUnknownFormat, "looks like text"},
		{"JSON", []byte(` {"error": "forbidden"}`), ErrUnknownFormat, "looks like JSON"},
		{"PDF", []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"), ErrUnknownFormat, "a PDF document"},
		{"gzip", []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3}, ErrUnknownFormat, "gzip"},
		{"binary", []byte{0, 1, 2, 3, 0xfe, 0x80, 0x81, 7, 9}, ErrUnknownFormat, "starts with bytes 00 01 02 03 fe 80 81 07"},
		{"TIFF", tiffData.Bytes(), ErrUnsupported, "unsupported format: TIFF"},
		{"BMP", bmpData.Bytes(), ErrUnsupported, "unsupported format: BMP"},
		{"HEIC", []byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic"), ErrUnsupported, "unsupported format: HEIC"},
		{"AVIF", []byte("\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1"), ErrUnsupported, "unsupported format: AVIF"},
		{"SVG", []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>`), ErrUnsupported, "SVG"},
		{"MP4", []byte("\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2"), ErrUnknownFormat, "MP4"},
		{"12-bit JPEG", patch(jpg, sof+4, 12), ErrUnsupported, "unsupported JPEG feature: precision"},
		{"arithmetic-coded JPEG", patch(jpg, sof+1, 0xc9), ErrUnsupported, "unsupported JPEG feature: arithmetic coding (SOF9)"},
		{"animated WebP", webpFile(vp8x(1<<1, 16, 16), riffChunk("ANIM", make([]byte, 6))), ErrUnsupported, "animation"},
		{"WebP with a foreign first chunk", webpFile(riffChunk("ICCP", make([]byte, 8))), ErrCorrupt, `first chunk is "ICCP"`},

		{"GIF screen 0x0", tinyGIF(0, 0, 0, 0), ErrEmpty, "GIF header declares 0x0 pixels"},
		{"GIF frame 0x0", tinyGIF(4, 4, 0, 0), ErrEmpty, "decoded GIF has 0x0 pixels"},
		{"PNG width 0", pngHeaderOnly(0, 16), ErrEmpty, "PNG header declares 0x16 pixels"},
		{"JPEG height 0", patch(jpg, sof+5, 0, 0), ErrEmpty, "JPEG header declares 32x0 pixels"},

		{"GIF bomb", patch(encode(t, "gif", 8, 8), 6, 0x60, 0xea, 0x60, 0xea), ErrTooLarge, "GIF header declares 60000x60000, 3600000000 pixels; limit 50000000"},
		{"PNG bomb", pngHeaderOnly(100_000, 100_000), ErrTooLarge, "PNG header declares 100000x100000"},
		{"PNG bomb past image/png's overflow check", pngHeaderOnly(1<<31-1, 1<<31-1), ErrTooLarge, "PNG header declares 2147483647x2147483647"},
		{"JPEG bomb", patch(jpg, sof+5, 0xff, 0xff, 0xff, 0xff), ErrTooLarge, "JPEG header declares 65535x65535"},
		{"lossless WebP bomb", webpFile(riffChunk("VP8L", vp8lHeader(16384, 16384))), ErrTooLarge, "WebP header declares 16384x16384"},
		{"WebP VP8X bomb past x/image's overflow check", webpFile(vp8x(0, 1<<24, 1<<24), riffChunk("VP8L", vp8l(16, 16, 0, 0, func(int, int) bool { return false }))), ErrTooLarge, "WebP header declares 16777216x16777216"},

		{"PNG with a bad checksum", pngBadCRC, ErrCorrupt, "corrupt PNG: invalid checksum"},
		{"PNG with a bad zlib header", pngBadZlib, ErrCorrupt, "corrupt PNG: zlib: invalid header"},
		{"WebP canvas and bitstream disagree", webpFile(vp8x(0, 20, 20), riffChunk("VP8L", vp8l(16, 16, 0, 0, func(int, int) bool { return false }))), ErrCorrupt, "corrupt WebP: invalid format"},
		{"GIF with an unknown block", append(encode(t, "gif", 8, 8)[:13+3*256], '!', 0x99, 1, 0, 0), ErrCorrupt, "corrupt GIF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, _, err := Decode(tt.data, limit)
			if img != nil || !errors.Is(err, tt.want) {
				t.Fatalf("Decode = %T, %v; want nil and %v", img, err, tt.want)
			}
			t.Logf("%v", err)
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("err = %q, want it to contain %q", err, tt.wantMsg)
			}
		})
	}
}

// TestDecodeTruncated cuts a valid image of every format at several
// points: each cut must be refused as truncated, with its size in the
// reason.
func TestDecodeTruncated(t *testing.T) {
	// Texture, so that most of each file is pixel data, not header.
	q := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for y := range 48 {
		for x := range 64 {
			q.Set(x, y, color.RGBA{uint8(x * x * 7), uint8(y * 13), uint8(x * y), 255})
		}
	}
	gifData := encodeGIF(t, &gif.GIF{Image: []*image.Paletted{toPaletted(q)}, Delay: []int{0}})
	webpData := quadrantWebP()
	files := []struct {
		format string
		data   []byte
		// end is how much of the file the image needs: a GIF's trailer
		// byte is not needed to decode its first frame, nor the byte that
		// pads an odd-length WebP chunk.
		end int
	}{
		{"JPEG", encodeJPEG(t, q), 0},
		{"PNG", encodePNG(t, q), 0},
		{"GIF", gifData, len(gifData) - 1},
		{"WebP", webpData, 20 + int(binary.LittleEndian.Uint32(webpData[16:]))},
	}
	for _, f := range files {
		end := f.end
		if end == 0 {
			end = len(f.data)
		}
		for _, cut := range []int{1, 4, 11, 20, 30, end / 4, end / 2, 3 * end / 4, end - 1} {
			data := f.data[:cut]
			img, _, err := Decode(data, 1<<20)
			if img != nil || !errors.Is(err, ErrTruncated) {
				t.Errorf("%s cut to %d of %d bytes: got %T, %v; want ErrTruncated", f.format, cut, len(f.data), img, err)
				continue
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "truncated "+f.format) || !strings.Contains(msg, byteCount(cut)) {
				t.Errorf("%s cut to %d bytes: reason %q does not say truncated %s and how long", f.format, cut, msg, f.format)
			}
		}
	}
	// The reasons read like this.
	jpg := files[0].data
	_, _, err := Decode(jpg[:len(jpg)/2], 0)
	t.Logf("e.g. %v", err)
}

func toPaletted(img image.Image) *image.Paletted {
	p := image.NewPaletted(img.Bounds(), palette.Plan9)
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			p.Set(x, y, img.At(x, y))
		}
	}
	return p
}

// TestDecodeBombsAllocateLittle checks that a refused decompression bomb
// costs a header read, not the memory its pixels would take.
func TestDecodeBombsAllocateLittle(t *testing.T) {
	jpg := encodeJPEG(t, quadrants(16, 16, 0, 1, 2, 3))
	sof := sofOffset(t, jpg)
	jpg[sof+5], jpg[sof+6], jpg[sof+7], jpg[sof+8] = 0xff, 0xff, 0xff, 0xff
	bombs := map[string][]byte{
		"JPEG": jpg,
		"PNG":  pngHeaderOnly(60_000, 60_000),
		"WebP": webpFile(riffChunk("VP8L", vp8lHeader(16384, 16384))),
	}
	for name, data := range bombs {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _, err := Decode(data, 1_000_000)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: err = %v, want ErrTooLarge", name, err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
			t.Errorf("%s: refusing the bomb allocated %d bytes", name, n)
		}
	}
}

// fakeCodec registers a codec for magic for the duration of the test, to
// reach the paths that the real decoders should never take.
func fakeCodec(t *testing.T, magic string, config func(io.Reader) (image.Config, error), decode func(io.Reader) (image.Image, error)) {
	t.Helper()
	saved := codecs
	codecs = append(codecs[:len(codecs):len(codecs)], &codec{name: "fake", title: "Fake", magic: magic,
		config: config, decode: decode, trailer: func([]byte) bool { return false }})
	t.Cleanup(func() { codecs = saved })
}

func TestDecodeDefendsAgainstDecoderBugs(t *testing.T) {
	okConfig := func(io.Reader) (image.Config, error) { return image.Config{Width: 2, Height: 2}, nil }
	fakeCodec(t, "PANIC-CONFIG", func(r io.Reader) (image.Config, error) {
		var s []int
		_ = s[len("index out of range")] // a runtime panic, like a decoder bug's
		return image.Config{}, nil
	}, nil)
	fakeCodec(t, "PANIC-DECODE", okConfig, func(io.Reader) (image.Image, error) { panic("decoder bug") })
	fakeCodec(t, "LIAR", okConfig, func(io.Reader) (image.Image, error) { return image.NewGray(image.Rect(0, 0, 100, 100)), nil })
	fakeCodec(t, "NOTHING", okConfig, func(io.Reader) (image.Image, error) { return nil, nil })

	tests := []struct {
		data    string
		want    error
		wantMsg string
	}{
		{"PANIC-CONFIG", ErrCorrupt, "corrupt Fake: the Fake decoder panicked on malformed data: runtime error: index out of range"},
		{"PANIC-DECODE", ErrCorrupt, "decoder panicked on malformed data: decoder bug"},
		{"LIAR", ErrTooLarge, "the decoded Fake is 100x100, 10000 pixels, though its header declares 2x2; limit 10"},
		{"NOTHING", ErrCorrupt, "no image"},
	}
	for _, tt := range tests {
		img, _, err := Decode([]byte(tt.data), 10)
		if img != nil || !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.wantMsg) {
			t.Errorf("%s: Decode = %T, %v; want nil and %v containing %q", tt.data, img, err, tt.want, tt.wantMsg)
		}
	}
}

func TestDecodeKeepsDecoderErrors(t *testing.T) {
	jpg := encodeJPEG(t, quadrants(16, 16, 0, 1, 2, 3))
	_, _, err := Decode(jpg[:len(jpg)-40], 0)
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("err = %v, want ErrTruncated", err)
	}
	var de *decodeError
	if !errors.As(err, &de) || de.err == nil {
		t.Errorf("err = %#v, want the decoder's error wrapped", err)
	}
}

// TestDecodeScanLimit checks the defence against JPEG scan bombs: many
// progressive scans of a few bytes each, each a pass over the whole image.
func TestDecodeScanLimit(t *testing.T) {
	tests := []struct {
		name    string
		scans   int
		limit   int
		wantErr bool
	}{
		{"a normal progressive JPEG", 10, 0, false},
		{"at the default limit", DefaultMaxJPEGScans, 0, false},
		{"past the default limit", DefaultMaxJPEGScans + 1, 0, true},
		{"past a lower limit", 11, 10, true},
		{"no limit", DefaultMaxJPEGScans + 1, -1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decoder{MaxJPEGScans: tt.limit}
			img, _, err := d.Decode(progressiveJPEG(32, 24, tt.scans))
			if tt.wantErr {
				if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), fmt.Sprintf("%d scans", tt.scans)) {
					t.Errorf("err = %v, want ErrTooLarge naming %d scans", err, tt.scans)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g := img.(*image.Gray).GrayAt(5, 5).Y; g != 128 || img.Bounds() != image.Rect(0, 0, 32, 24) {
				t.Errorf("decoded %v, gray %d; want 32x24, 128", img.Bounds(), g)
			}
		})
	}
}

func TestJPEGScans(t *testing.T) {
	sos := []byte{0xff, 0xda, 0, 8, 1, 1, 0, 0, 63, 0}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	soi, eoi := []byte{0xff, 0xd8}, []byte{0xff, 0xd9}
	tests := []struct {
		name string
		data []byte
		want int
	}{
		{"image/jpeg's baseline", encodeJPEG(t, quadrants(16, 16, 0, 1, 2, 3)), 1},
		{"hand-made progressive", progressiveJPEG(16, 16, 7), 7},
		{"SOS bytes inside an APP segment do not count", cat(soi, []byte{0xff, 0xe1, 0, 6, 0xff, 0xda, 0xff, 0xda}, sos, []byte{1, 2}, eoi), 1},
		{"stuffed bytes, restarts and fill bytes in the scan", cat(soi, sos, []byte{0xff, 0x00, 0xda, 0xff, 0xd0, 0xff, 0xff, 0xda}, []byte{0, 8, 1, 1, 0, 0, 63, 0, 7}, eoi), 2},
		{"a scan cut short", cat(soi, sos, []byte{1, 2, 0xff}), 1},
		// image/jpeg skips these between segments, so the count must too.
		{"extraneous bytes between segments", cat(soi, []byte{1, 2, 3}, sos, []byte{7}, eoi), 1},
		{"stuffed bytes and restarts between segments", cat(soi, []byte{0xff, 0x00, 0xff, 0xd3}, sos, sos, eoi), 2},
		{"nothing after EOI counts", cat(soi, sos, eoi, sos), 1},
		{"not a JPEG", sos, 0},
	}
	for _, tt := range tests {
		if got := jpegScans(tt.data); got != tt.want {
			t.Errorf("%s: jpegScans = %d, want %d", tt.name, got, tt.want)
		}
	}
}
