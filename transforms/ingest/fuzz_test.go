package ingest

import (
	"encoding/binary"
	"errors"
	"image"
	"image/color/palette"
	"image/gif"
	"testing"
)

// fuzzMaxPixels keeps the fuzzer's images small, so that it spends its time
// on parsing rather than on pixels.
const fuzzMaxPixels = 1 << 16

// FuzzDecode checks that Decode never panics, never returns more than
// fuzzMaxPixels pixels, and explains every failure with one of the
// package's errors. Run it with
//
//	go test -run '^$' -fuzz FuzzDecode -fuzztime 3m ./transforms/ingest/
//
// Inputs it once failed on live in testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	kinds := []error{ErrEmpty, ErrUnknownFormat, ErrUnsupported, ErrTooLarge, ErrTruncated, ErrCorrupt}
	f.Fuzz(func(t *testing.T, data []byte) {
		img, format, err := Decode(data, fuzzMaxPixels)
		if err != nil {
			if img != nil {
				t.Fatalf("Decode returned an image and the error %v", err)
			}
			known := false
			for _, k := range kinds {
				known = known || errors.Is(err, k)
			}
			if !known || err.Error() == "" {
				t.Fatalf("error %q wraps none of the package's errors", err)
			}
			return
		}
		if img == nil {
			t.Fatal("Decode returned neither an image nor an error")
		}
		b := img.Bounds()
		if b.Empty() || int64(b.Dx())*int64(b.Dy()) > fuzzMaxPixels {
			t.Fatalf("Decode returned a %v %s image, limit %d pixels", b, format, fuzzMaxPixels)
		}
		switch format {
		case "jpeg", "png", "gif", "webp":
		default:
			t.Fatalf("format %q", format)
		}
		// Every pixel can be read; a bad Pix/Stride/Rect would panic here.
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				img.At(x, y).RGBA()
			}
		}
	})
}

// fuzzSeeds returns small valid images of every format and kind Decode
// handles, and broken variants of them.
func fuzzSeeds(tb testing.TB) [][]byte {
	q := quadrants(16, 12, 220, 160, 90, 20)
	rgba := toRGBA(q)
	gray16 := image.NewGray16(q.Rect)
	for i := range gray16.Pix {
		gray16.Pix[i] = uint8(i * 7)
	}
	nrgba := image.NewNRGBA(q.Rect)
	for i := range nrgba.Pix {
		nrgba.Pix[i] = uint8(i * 13)
	}
	pal := toPaletted(q)
	smallPal := image.NewPaletted(q.Rect, palette.WebSafe[:4])
	for i := range smallPal.Pix {
		smallPal.Pix[i] = uint8(i % 4)
	}
	jpg := encodeJPEG(tb, rgba)
	valid := [][]byte{
		jpg,
		encodeJPEG(tb, q),
		fourComponentJPEG(2, 2, 0, func(bx, by int) [4]uint8 { return [4]uint8{uint8(bx * 200), uint8(by * 90), 30, 250} }),
		fourComponentJPEG(1, 1, 2, func(int, int) [4]uint8 { return [4]uint8{128, 100, 150, 0} }),
		encodePNG(tb, q),
		encodePNG(tb, rgba),
		encodePNG(tb, gray16),
		encodePNG(tb, nrgba),
		encodePNG(tb, pal),
		encodePNG(tb, smallPal),
		encodeGIF(tb, &gif.GIF{Image: []*image.Paletted{pal}, Delay: []int{0}}),
		encodeGIF(tb, &gif.GIF{Image: []*image.Paletted{smallPal, pal}, Delay: []int{5, 5}}),
		tinyGIF(2, 1, 2, 1),
		quadrantWebP(),
		webpFile(vp8x(0, 8, 8), riffChunk("VP8L", vp8l(8, 8, 1, 200, func(x, y int) bool { return x == y }))),
	}
	for o := uint32(1); o <= 8; o++ {
		bo := binary.ByteOrder(binary.LittleEndian)
		if o%2 == 0 {
			bo = binary.BigEndian
		}
		valid = append(valid, withExif(encodeJPEG(tb, quadrants(16, 8, 0, 80, 160, 240)), exifTIFF(bo, o, 3)))
	}
	seeds := append([][]byte{}, valid...)
	for _, v := range valid {
		// Truncated at a few points, and with a byte flipped in the
		// header and in the body.
		for _, n := range []int{len(v) / 8, len(v) / 2, len(v) - 3} {
			seeds = append(seeds, v[:n])
		}
		for _, at := range []int{len(v) / 16, len(v) / 3} {
			b := append([]byte{}, v...)
			b[at] ^= 0x5a
			seeds = append(seeds, b)
		}
	}
	seeds = append(seeds,
		nil,
		[]byte("<html><body>Not Found</body></html>"),
		pngHeaderOnly(0, 3),
		pngHeaderOnly(1<<20, 1<<20),
		tinyGIF(0, 0, 0, 0),
		tinyGIF(4, 4, 0, 0),
		webpFile(vp8x(1<<1, 4, 4)),
		webpFile(riffChunk("VP8L", vp8lHeader(16384, 16384))),
		webpFile(vp8x(0x10, 4, 4), riffChunk("ALPH", []byte{0, 1, 2, 3}), riffChunk("VP8 ", make([]byte, 12))),
	)
	return seeds
}

// FuzzMetadata drives the hand-written parsers — the JPEG segment walk,
// the Exif (TIFF) reader and the header size readers — without decoding,
// which lets the fuzzer reach far more of their inputs per second than
// FuzzDecode does.
func FuzzMetadata(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	for o := uint32(0); o <= 9; o++ {
		f.Add(exifTIFF(binary.LittleEndian, o, 3))
		f.Add(exifTIFF(binary.BigEndian, o, 4))
	}
	f.Add(progressiveJPEG(16, 16, 4))
	f.Fuzz(func(t *testing.T, data []byte) {
		if o := jpegOrientation(data); o < 0 || o > 8 {
			t.Fatalf("jpegOrientation = %d", o)
		}
		if o := exifOrientation(data); o < 0 || o > 8 {
			t.Fatalf("exifOrientation = %d", o)
		}
		if n := jpegScans(data); n < 0 || n > len(data)/4 {
			t.Fatalf("jpegScans = %d for %d bytes", n, len(data))
		}
		jpegProcess(data)
		for _, c := range codecs {
			declaredSize(c.name, data)
		}
		unknownFormat(data)
	})
}
