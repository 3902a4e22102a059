package ingest

// Fixture builders: every test image is generated here, byte by byte where
// the standard library cannot write the format (Exif segments, CMYK JPEGs,
// lossless WebP), so the tests need no third-party files.

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"
)

// quadrants returns a w×h gray image whose quadrants have the levels
// tl, tr, bl, br: asymmetric under every flip and turn.
func quadrants(w, h int, tl, tr, bl, br uint8) *image.Gray {
	m := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			v := tl
			switch {
			case x >= w/2 && y < h/2:
				v = tr
			case x < w/2 && y >= h/2:
				v = bl
			case x >= w/2 && y >= h/2:
				v = br
			}
			m.SetGray(x, y, color.Gray{v})
		}
	}
	return m
}

// toRGBA copies img into an *image.RGBA, so that encoders write colour.
func toRGBA(img image.Image) *image.RGBA {
	b := img.Bounds()
	m := image.NewRGBA(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			m.Set(x, y, img.At(x, y))
		}
	}
	return m
}

func encodeJPEG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func encodePNG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func encodeGIF(t testing.TB, g *gif.GIF) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := gif.EncodeAll(&buf, g); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// exifTIFF returns the TIFF structure of an Exif segment whose IFD0 holds a
// Make tag and then the Orientation tag with value v, of TIFF type typ
// (3 is SHORT), in byte order bo.
func exifTIFF(bo binary.ByteOrder, v uint32, typ uint16) []byte {
	b := make([]byte, 8+2+2*12+4)
	if bo == binary.ByteOrder(binary.LittleEndian) {
		copy(b, "II")
	} else {
		copy(b, "MM")
	}
	bo.PutUint16(b[2:], 42)
	bo.PutUint32(b[4:], 8) // IFD0 right after the header
	bo.PutUint16(b[8:], 2) // two entries
	e := b[10:]
	bo.PutUint16(e[0:], 0x010f) // Make, ASCII, 4 bytes inline
	bo.PutUint16(e[2:], 2)
	bo.PutUint32(e[4:], 4)
	copy(e[8:], "Cam\x00")
	e = b[22:]
	bo.PutUint16(e[0:], 0x0112) // Orientation
	bo.PutUint16(e[2:], typ)
	bo.PutUint32(e[4:], 1)
	if typ == 3 {
		bo.PutUint16(e[8:], uint16(v))
	} else {
		bo.PutUint32(e[8:], v)
	}
	// The next-IFD offset, 0: none, is already zero.
	return b
}

// withSegment returns jpg with a marker segment inserted after SOI.
func withSegment(jpg []byte, marker byte, payload []byte) []byte {
	if len(payload)+2 > 0xffff {
		panic("segment too long")
	}
	out := append([]byte{}, jpg[:2]...)
	out = append(out, 0xff, marker, byte((len(payload)+2)>>8), byte(len(payload)+2))
	out = append(out, payload...)
	return append(out, jpg[2:]...)
}

// withExif returns jpg with an APP1 Exif segment holding tiff.
func withExif(jpg, tiff []byte) []byte {
	return withSegment(jpg, 0xe1, append([]byte("Exif\x00\x00"), tiff...))
}

// msbWriter writes bits most significant first, as JPEG entropy-coded data
// is laid out, stuffing a zero after every 0xff byte.
type msbWriter struct {
	out  []byte
	acc  uint32
	nacc uint
}

func (w *msbWriter) write(v uint32, n uint) {
	for i := int(n) - 1; i >= 0; i-- {
		w.acc = w.acc<<1 | v>>uint(i)&1
		w.nacc++
		if w.nacc == 8 {
			w.out = append(w.out, byte(w.acc))
			if byte(w.acc) == 0xff {
				w.out = append(w.out, 0)
			}
			w.acc, w.nacc = 0, 0
		}
	}
}

// flush pads the last byte with 1 bits, as the JPEG standard asks.
func (w *msbWriter) flush() []byte {
	for w.nacc != 0 {
		w.write(1, 1)
	}
	return w.out
}

// fourComponentJPEG hand-writes a baseline JPEG with four components and no
// subsampling, which image/jpeg cannot encode. Every 8×8 block is flat:
// block(bx, by) gives its four stored sample values, in the file's own
// convention (for Adobe CMYK, 255 means no ink). adobe is the APP14
// transform flag (0: CMYK, 2: YCCK), or -1 for no APP14 segment.
//
// With flat blocks only the DC coefficients are non-zero, so the Huffman
// tables are tiny: DC categories 0–11 all get 4-bit codes and the AC table
// has one symbol, end-of-block.
func fourComponentJPEG(bw, bh int, adobe int, block func(bx, by int) [4]uint8) []byte {
	var b bytes.Buffer
	seg := func(marker byte, payload ...byte) {
		b.Write([]byte{0xff, marker, byte((len(payload) + 2) >> 8), byte(len(payload) + 2)})
		b.Write(payload)
	}
	b.Write([]byte{0xff, 0xd8})
	if adobe >= 0 {
		seg(0xee, append([]byte("Adobe"), 0, 100, 0, 0, 0, 0, byte(adobe))...)
	}
	dqt := make([]byte, 65) // table 0, 8-bit, every step 1
	for i := 1; i < len(dqt); i++ {
		dqt[i] = 1
	}
	seg(0xdb, dqt...)
	w, h := 8*bw, 8*bh
	sof := []byte{8, byte(h >> 8), byte(h), byte(w >> 8), byte(w), 4}
	for c := range 4 {
		sof = append(sof, byte(c+1), 0x11, 0)
	}
	seg(0xc0, sof...)
	dht := []byte{0x00, 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	dht = append(dht, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
	dht = append(dht, 0x10, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00)
	seg(0xc4, dht...)
	seg(0xda, 4, 1, 0x00, 2, 0x00, 3, 0x00, 4, 0x00, 0, 63, 0)

	var bits msbWriter
	var pred [4]int
	for by := range bh {
		for bx := range bw {
			v := block(bx, by)
			for c := range 4 {
				// A flat block of value v has DC coefficient 8(v−128).
				dc := 8 * (int(v[c]) - 128)
				diff := dc - pred[c]
				pred[c] = dc
				size, mag := uint(0), diff
				if mag < 0 {
					mag = -mag
				}
				for mag>>size != 0 {
					size++
				}
				bits.write(uint32(size), 4) // the DC code of category size
				if diff < 0 {
					diff += 1<<size - 1
				}
				bits.write(uint32(diff), size)
				bits.write(0, 1) // end of block
			}
		}
	}
	b.Write(bits.flush())
	b.Write([]byte{0xff, 0xd9})
	return b.Bytes()
}

// lsbWriter writes bits least significant first, as VP8L does.
type lsbWriter struct {
	out  []byte
	acc  uint64
	nacc uint
}

func (w *lsbWriter) write(v uint32, n uint) {
	w.acc |= uint64(v) << w.nacc
	w.nacc += n
	for w.nacc >= 8 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
		w.nacc -= 8
	}
}

func (w *lsbWriter) flush() []byte {
	if w.nacc > 0 {
		w.out = append(w.out, byte(w.acc))
		w.acc, w.nacc = 0, 0
	}
	return w.out
}

// vp8l hand-writes a lossless WebP bitstream (the VP8L chunk's payload) of
// a w×h two-level image: pixel (x, y) is green level g1 where on(x, y) and
// g0 elsewhere, red and blue 0x80, opaque. The encoding is the simplest
// VP8L allows: no transforms, no colour cache, one prefix-code group whose
// codes are all "simple" — green with two 1-bit codes, the rest with one
// 0-bit code — so each pixel costs exactly one bit.
func vp8l(w, h int, g0, g1 uint8, on func(x, y int) bool) []byte {
	var bits lsbWriter
	bits.write(0x2f, 8) // signature
	bits.write(uint32(w-1), 14)
	bits.write(uint32(h-1), 14)
	bits.write(0, 1) // alpha is not used
	bits.write(0, 3) // version
	bits.write(0, 1) // no transform
	bits.write(0, 1) // no colour cache
	bits.write(0, 1) // no meta prefix codes
	// Green: simple, two 8-bit symbols.
	bits.write(1, 1)
	bits.write(1, 1)
	bits.write(1, 1)
	bits.write(uint32(g0), 8)
	bits.write(uint32(g1), 8)
	// Red, blue, alpha: simple, one 8-bit symbol.
	for _, v := range []uint32{0x80, 0x80, 0xff} {
		bits.write(1, 1)
		bits.write(0, 1)
		bits.write(1, 1)
		bits.write(v, 8)
	}
	// Distance: simple, one 1-bit symbol, 0; never used.
	bits.write(1, 1)
	bits.write(0, 1)
	bits.write(0, 1)
	bits.write(0, 1)
	for y := range h {
		for x := range w {
			if on(x, y) {
				bits.write(1, 1)
			} else {
				bits.write(0, 1)
			}
		}
	}
	return bits.flush()
}

// vp8lHeader is the 5-byte start of a VP8L bitstream declaring w×h, enough
// for DecodeConfig without writing out the pixels of a huge image.
func vp8lHeader(w, h int) []byte {
	var bits lsbWriter
	bits.write(0x2f, 8)
	bits.write(uint32(w-1), 14)
	bits.write(uint32(h-1), 14)
	bits.write(0, 4)
	return bits.flush()
}

// riffChunk returns a RIFF chunk, padded to an even length.
func riffChunk(fourcc string, payload []byte) []byte {
	out := append([]byte(fourcc), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(out[4:], uint32(len(payload)))
	out = append(out, payload...)
	if len(payload)%2 == 1 {
		out = append(out, 0)
	}
	return out
}

// webpFile wraps chunks in a RIFF WEBP container.
func webpFile(chunks ...[]byte) []byte {
	body := []byte("WEBP")
	for _, c := range chunks {
		body = append(body, c...)
	}
	out := append([]byte("RIFF"), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(out[4:], uint32(len(body)))
	return append(out, body...)
}

// vp8x returns a VP8X chunk with the given flags and canvas size.
func vp8x(flags byte, w, h int) []byte {
	p := make([]byte, 10)
	p[0] = flags
	p[4], p[5], p[6] = byte(w-1), byte((w-1)>>8), byte((w-1)>>16)
	p[7], p[8], p[9] = byte(h-1), byte((h-1)>>8), byte((h-1)>>16)
	return riffChunk("VP8X", p)
}

// quadrantWebP is a 32×24 lossless WebP, its top-left quadrant bright.
func quadrantWebP() []byte {
	return webpFile(riffChunk("VP8L", vp8l(32, 24, 0x20, 0xe0, func(x, y int) bool { return x < 16 && y < 12 })))
}

// pngChunk returns a PNG chunk with its CRC.
func pngChunk(typ string, data []byte) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	out = append(out, typ...)
	out = append(out, data...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[4:]))
}

// pngHeaderOnly returns a PNG signature, an IHDR chunk declaring a w×h
// 8-bit gray image, and IEND: enough for DecodeConfig.
func pngHeaderOnly(w, h uint32) []byte {
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 0, 0, 0, 0) // depth 8, gray, deflate, filter 0, no interlace
	out := []byte("\x89PNG\r\n\x1a\n")
	out = append(out, pngChunk("IHDR", ihdr)...)
	return append(out, pngChunk("IEND", nil)...)
}

// sofOffset returns the index of the SOF0 marker in a JPEG from image/jpeg.
func sofOffset(t testing.TB, jpg []byte) int {
	t.Helper()
	i := bytes.Index(jpg, []byte{0xff, 0xc0})
	if i < 0 {
		t.Fatal("no SOF0 marker")
	}
	return i
}

// tinyGIF hand-writes a GIF89a with a 2-colour global table and one frame
// of the given size, all pixels 0, so that tests can declare sizes the
// encoder refuses (a 0×0 frame).
func tinyGIF(screenW, screenH, frameW, frameH int) []byte {
	b := []byte("GIF89a")
	b = binary.LittleEndian.AppendUint16(b, uint16(screenW))
	b = binary.LittleEndian.AppendUint16(b, uint16(screenH))
	b = append(b, 0x80, 0, 0)             // global colour table of 2 entries
	b = append(b, 0, 0, 0, 255, 255, 255) // black, white
	b = append(b, 0x2c, 0, 0, 0, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(frameW))
	b = binary.LittleEndian.AppendUint16(b, uint16(frameH))
	b = append(b, 0)
	// LZW, minimum code size 2: for each pixel the code 0, in 3-bit codes
	// after a clear code (4), ending with end-of-information (5). With at
	// most 2 pixels the code width stays 3 bits.
	var bits lsbWriter
	bits.write(4, 3)
	for range frameW * frameH {
		bits.write(0, 3)
	}
	bits.write(5, 3)
	data := bits.flush()
	b = append(b, 2, byte(len(data)))
	b = append(b, data...)
	return append(b, 0, 0x3b)
}

// progressiveJPEG hand-writes a progressive gray JPEG, flat mid-gray, with
// one DC scan and scans−1 AC scans that each skip every block with
// end-of-band runs: a few bytes per scan, however large the image. This is
// the shape of a JPEG "scan bomb".
func progressiveJPEG(w, h, scans int) []byte {
	var b bytes.Buffer
	seg := func(marker byte, payload ...byte) {
		b.Write([]byte{0xff, marker, byte((len(payload) + 2) >> 8), byte(len(payload) + 2)})
		b.Write(payload)
	}
	b.Write([]byte{0xff, 0xd8})
	dqt := make([]byte, 65)
	for i := 1; i < len(dqt); i++ {
		dqt[i] = 1
	}
	seg(0xdb, dqt...)
	seg(0xc2, 8, byte(h>>8), byte(h), byte(w>>8), byte(w), 1, 1, 0x11, 0)
	// DC table 0: category 0 only, code "0". AC table 0: EOB0…EOB14
	// (symbols n<<4, a run of 2^n plus n extra bits), 4-bit codes.
	dht := []byte{0x00, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00}
	dht = append(dht, 0x10, 0, 0, 0, 15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	for n := range 15 {
		dht = append(dht, byte(n<<4))
	}
	seg(0xc4, dht...)
	blocks := ((w + 7) / 8) * ((h + 7) / 8)

	seg(0xda, 1, 1, 0x00, 0, 0, 0) // DC first scan
	var dc msbWriter
	for range blocks {
		dc.write(0, 1)
	}
	b.Write(dc.flush())
	for s := 1; s < scans; s++ {
		band := byte(1 + (s-1)%63)
		seg(0xda, 1, 1, 0x00, band, band, 0)
		var ac msbWriter
		for left := blocks; left > 0; {
			run := min(left, 1<<15-1)
			n := 0
			for 1<<(n+1) <= run {
				n++
			}
			ac.write(uint32(n), 4) // the code of symbol n<<4 is n
			ac.write(uint32(run-1<<n), uint(n))
			left -= run
		}
		b.Write(ac.flush())
	}
	b.Write([]byte{0xff, 0xd9})
	return b.Bytes()
}
