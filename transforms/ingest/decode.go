package ingest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"strings"

	"golang.org/x/image/webp"
)

// Errors that Decode's errors wrap, one per kind of refusal, so that callers
// can count dead letters by cause with errors.Is. The error's own text is
// the reason meant for a data engineer; these sentinels only classify it.
// The decoder's original error, when there is one, is wrapped too.
var (
	// ErrEmpty reports a file of zero bytes or an image of zero pixels.
	ErrEmpty = errors.New("empty file or image")
	// ErrUnknownFormat reports data that is not an image in any format
	// Decode recognises: often an HTML error page or a text file saved
	// under an image's name.
	ErrUnknownFormat = errors.New("unrecognised format")
	// ErrUnsupported reports an image in a format Decode recognises but does
	// not decode (TIFF, HEIC, AVIF…), or one that uses a feature of a
	// decoded format the decoder lacks (arithmetic-coded JPEG, animated WebP…).
	ErrUnsupported = errors.New("unsupported format or feature")
	// ErrTooLarge reports an image whose header declares more pixels than
	// allowed, or a JPEG with so many scans that decoding it would take a
	// worker's time for one image.
	ErrTooLarge = errors.New("image too large")
	// ErrTruncated reports an image whose data ends before the image does.
	ErrTruncated = errors.New("truncated image")
	// ErrCorrupt reports an image that is malformed in any other way,
	// including one on which a decoder panicked.
	ErrCorrupt = errors.New("corrupt image")
)

// decodeError is the error Decode returns: a readable reason that wraps its
// kind (one of the Err* sentinels) and the decoder's error, if any.
type decodeError struct {
	kind error
	err  error
	msg  string
}

func (e *decodeError) Error() string { return e.msg }

func (e *decodeError) Unwrap() []error {
	if e.err == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.err}
}

// failf returns a decodeError of the given kind wrapping err (may be nil).
func failf(kind, err error, format string, args ...any) error {
	return &decodeError{kind: kind, err: err, msg: fmt.Sprintf(format, args...)}
}

// A decoderPanic is the value a format's decoder panicked with, turned into
// an error: a decoder that panics on malformed input has a bug, but the
// input is what is wrong, so it becomes one image's dead letter.
type decoderPanic struct{ value any }

func (p decoderPanic) Error() string { return fmt.Sprintf("decoder panic: %v", p.value) }

// A codec is one format Decode accepts. Decode calls the codecs directly
// rather than image.Decode, so that a format registered with package image
// by some other import (TIFF, BMP…) is not decoded without the checks and
// tests this package has for the formats it names.
type codec struct {
	name   string // as image.Decode names it: "jpeg"
	title  string // as a reason names it: "JPEG"
	magic  string // the signature; '?' matches any byte
	config func(io.Reader) (image.Config, error)
	decode func(io.Reader) (image.Image, error)
	// trailer reports whether data ends the way a complete file does, to
	// tell a truncated file from a corrupt one when the decoder ran out of
	// data.
	trailer func(data []byte) bool
}

var codecs = []*codec{
	{name: "jpeg", title: "JPEG", magic: "\xff\xd8", config: jpeg.DecodeConfig, decode: jpeg.Decode,
		trailer: func(d []byte) bool { return bytes.HasSuffix(d, []byte{0xff, 0xd9}) }},
	{name: "png", title: "PNG", magic: "\x89PNG\r\n\x1a\n", config: png.DecodeConfig, decode: png.Decode,
		trailer: func(d []byte) bool { return bytes.HasSuffix(d, []byte("IEND\xaeB`\x82")) }},
	{name: "gif", title: "GIF", magic: "GIF8?a", config: gif.DecodeConfig, decode: gif.Decode,
		// The last block's terminator, then the trailer.
		trailer: func(d []byte) bool { return bytes.HasSuffix(d, []byte{0x00, 0x3b}) }},
	{name: "webp", title: "WebP", magic: "RIFF????WEBPVP8", config: webp.DecodeConfig, decode: webp.Decode,
		trailer: func(d []byte) bool {
			// The RIFF header's size counts the bytes after its first 8.
			return len(d) >= 8 && int64(binary.LittleEndian.Uint32(d[4:]))+8 <= int64(len(d))
		}},
}

// match reports whether data starts with magic, '?' matching any byte.
func match(magic string, data []byte) bool {
	if len(data) < len(magic) {
		return false
	}
	for i := range len(magic) {
		if magic[i] != '?' && magic[i] != data[i] {
			return false
		}
	}
	return true
}

// prefixOf reports whether data, shorter than magic, could be its start.
func prefixOf(data []byte, magic string) bool {
	if len(data) >= len(magic) {
		return false
	}
	for i, b := range data {
		if magic[i] != '?' && magic[i] != b {
			return false
		}
	}
	return true
}

// A Decoder decodes images defensively: it reads the header first and
// refuses what it should not decode before allocating for the pixels, turns
// a decoder panic into an error, explains every refusal in words a data
// engineer can act on, and returns JPEGs upright. The zero Decoder has no
// pixel limit and DefaultMaxJPEGScans. A Decoder is safe for concurrent use.
type Decoder struct {
	// MaxPixels refuses images whose header declares more pixels than
	// this, so that a decompression bomb costs a header read, not the
	// worker's memory. 0 means no limit, which only trusted input should
	// get: a 100-byte file can declare gigapixels.
	MaxPixels int64
	// MaxJPEGScans refuses JPEGs with more scans than this, before
	// decoding them (0: DefaultMaxJPEGScans; negative: no limit).
	MaxJPEGScans int
	// KeepOrientation returns JPEG pixels as stored. By default the Exif
	// Orientation tag is applied, so that a photo taken with the camera
	// on its side is described the way people see it.
	KeepOrientation bool
	// ReducedIDCT makes DecodeLuma's DCT-scaled decodes libjpeg's reduced
	// IDCT (lumajpeg.Reduced) rather than lumaFilter's choice, as
	// describe.Options.DCTVersion 0 describes.
	ReducedIDCT bool
}

// Decode decodes a JPEG, PNG, GIF (its first frame) or WebP image with
// (&Decoder{MaxPixels: maxPixels}).Decode: see Decoder.
func Decode(data []byte, maxPixels int64) (image.Image, string, error) {
	d := Decoder{MaxPixels: maxPixels}
	return d.Decode(data)
}

// Decode decodes data and returns the image and the format's name as
// image.Decode names it ("jpeg", "png", "gif" or "webp"). It never panics,
// and the image it returns has at least one and at most MaxPixels pixels.
//
// JPEGs are returned rotated and flipped as their Exif Orientation tag says
// unless KeepOrientation is set; a colour JPEG so turned comes back as an
// *image.YCbCr with 4:4:4 sampling, whatever its stored subsampling.
// CMYK and YCCK JPEGs (with an Adobe APP14 marker) come back as
// *image.CMYK, 16-bit PNGs as *image.Gray16, *image.RGBA64 or
// *image.NRGBA64, and a GIF's first frame as an *image.Paletted whose bounds
// are that frame's place on the GIF's screen, so they need not start at (0, 0).
//
// Every error wraps one of ErrEmpty, ErrUnknownFormat, ErrUnsupported,
// ErrTooLarge, ErrTruncated and ErrCorrupt, and the decoder's own error if
// there is one.
func (d *Decoder) Decode(data []byte) (img image.Image, format string, err error) {
	c, cfg, err := d.check(data)
	if err != nil {
		return nil, c.nameOrEmpty(), err
	}
	return d.decodeWith(c, cfg, data, c.decode)
}

// nameOrEmpty is c's name, or "" for no codec.
func (c *codec) nameOrEmpty() string {
	if c == nil {
		return ""
	}
	return c.name
}

// check finds data's codec and refuses, from its header, what Decode must
// not decode: every limit is checked here, before any pixel is decoded.
func (d *Decoder) check(data []byte) (*codec, image.Config, error) {
	if len(data) == 0 {
		return nil, image.Config{}, failf(ErrEmpty, nil, "empty file (0 bytes)")
	}
	var c *codec
	for _, cc := range codecs {
		if match(cc.magic, data) {
			c = cc
			break
		}
	}
	if c == nil {
		return nil, image.Config{}, unknownFormat(data)
	}

	r := &sliceReader{data: data}
	cfg, err := callConfig(c, r)
	if err != nil {
		if w, h, ok := declaredSize(c.name, data); ok {
			if err := d.checkSize(c, w, h); err != nil {
				return c, cfg, err
			}
		}
		return c, cfg, failure(c, data, r.hitEOF, "inside the header", err)
	}
	if err := d.checkSize(c, int64(cfg.Width), int64(cfg.Height)); err != nil {
		return c, cfg, err
	}
	if limit := d.maxJPEGScans(); c.name == "jpeg" && limit >= 0 {
		if n := jpegScans(data); n > limit {
			return c, cfg, failf(ErrTooLarge, nil, "%v: the JPEG has %d scans, limit %d; a normal progressive JPEG has about 10, and each costs a pass over all the %dx%d pixels",
				ErrTooLarge, n, limit, cfg.Width, cfg.Height)
		}
	}
	if c.name == "webp" && webpAnimated(data) {
		// x/image/webp reads still images only; without this check an
		// animation fails as an unexplained "invalid format".
		return c, cfg, failf(ErrUnsupported, nil, "unsupported WebP feature: animation; only still WebP images are decoded")
	}

	return c, cfg, nil
}

// decodeWith decodes data, which check accepted as c's with header cfg,
// with decode, and returns it upright.
func (d *Decoder) decodeWith(c *codec, cfg image.Config, data []byte, decode func(io.Reader) (image.Image, error)) (image.Image, string, error) {
	r := &sliceReader{data: data}
	img, err := callDecode(decode, r)
	if err != nil {
		return nil, c.name, failure(c, data, r.hitEOF, fmt.Sprintf("before the %dx%d image is complete", cfg.Width, cfg.Height), err)
	}
	b := img.Bounds()
	if b.Empty() {
		return nil, c.name, failf(ErrEmpty, nil, "empty image: the decoded %s has %dx%d pixels", c.title, b.Dx(), b.Dy())
	}
	// The header was checked, but a decoder that returned more pixels than
	// its header declared must not get past the limit either.
	if px := int64(b.Dx()) * int64(b.Dy()); d.MaxPixels > 0 && px > d.MaxPixels {
		return nil, c.name, failf(ErrTooLarge, nil, "%v: the decoded %s is %dx%d, %d pixels, though its header declares %dx%d; limit %d",
			ErrTooLarge, c.title, b.Dx(), b.Dy(), px, cfg.Width, cfg.Height, d.MaxPixels)
	}
	if c.name == "jpeg" && !d.KeepOrientation {
		if o := jpegOrientation(data); o > 1 {
			img = orient(img, o)
		}
	}
	return img, c.name, nil
}

func (d *Decoder) maxJPEGScans() int {
	switch {
	case d.MaxJPEGScans == 0:
		return DefaultMaxJPEGScans
	case d.MaxJPEGScans < 0:
		return -1
	}
	return d.MaxJPEGScans
}

// checkSize refuses a declared size that is empty or above the limit.
func (d *Decoder) checkSize(c *codec, w, h int64) error {
	if w <= 0 || h <= 0 {
		return failf(ErrEmpty, nil, "empty image: the %s header declares %dx%d pixels", c.title, w, h)
	}
	if px := w * h; d.MaxPixels > 0 && px > d.MaxPixels {
		return failf(ErrTooLarge, nil, "%v: the %s header declares %dx%d, %d pixels; limit %d",
			ErrTooLarge, c.title, w, h, px, d.MaxPixels)
	}
	return nil
}

// callConfig runs c's config decoder, recovering from a panic.
func callConfig(c *codec, r io.Reader) (cfg image.Config, err error) {
	defer func() {
		if p := recover(); p != nil {
			cfg, err = image.Config{}, decoderPanic{p}
		}
	}()
	return c.config(r)
}

// callDecode runs a decoder, recovering from a panic.
func callDecode(decode func(io.Reader) (image.Image, error), r io.Reader) (img image.Image, err error) {
	defer func() {
		if p := recover(); p != nil {
			img, err = nil, decoderPanic{p}
		}
	}()
	img, err = decode(r)
	if err == nil && img == nil {
		err = errors.New("decoder returned no image and no error")
	}
	return img, err
}

// failure explains err, which c's decoder returned for data; hitEOF reports
// whether the decoder asked for more bytes than data has, and where says
// where that would have been ("inside the header").
func failure(c *codec, data []byte, hitEOF bool, where string, err error) error {
	if p, ok := err.(decoderPanic); ok {
		return failf(ErrCorrupt, err, "corrupt %s: the %s decoder panicked on malformed data: %v", c.title, c.title, p.value)
	}
	var (
		jpegUnsupported jpeg.UnsupportedError
		pngUnsupported  png.UnsupportedError
		jpegFormat      jpeg.FormatError
		pngFormat       png.FormatError
	)
	switch {
	case errors.As(err, &jpegUnsupported):
		if process := jpegProcess(data); process != "" {
			// image/jpeg calls the frame marker of these "unknown".
			return failf(ErrUnsupported, err, "unsupported JPEG feature: %s; only baseline and progressive JPEGs are decoded", process)
		}
		return failf(ErrUnsupported, err, "unsupported JPEG feature: %s", string(jpegUnsupported))
	case errors.As(err, &pngUnsupported):
		return failf(ErrUnsupported, err, "unsupported PNG feature: %s", string(pngUnsupported))
	case hitEOF && !c.trailer(data):
		return failf(ErrTruncated, err, "truncated %s: the data ends after %s, %s (%v)", c.title, byteCount(len(data)), where, err)
	case hitEOF:
		return failf(ErrCorrupt, err, "corrupt %s: the decoder needed more than the file's %s though the file ends like a complete %s (%v)",
			c.title, byteCount(len(data)), c.title, err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return failf(ErrCorrupt, err, "corrupt %s: a part of the file is shorter than it declares (%v)", c.title, err)
	case errors.As(err, &jpegFormat):
		return failf(ErrCorrupt, err, "corrupt JPEG: %s", string(jpegFormat))
	case errors.As(err, &pngFormat):
		return failf(ErrCorrupt, err, "corrupt PNG: %s", string(pngFormat))
	}
	return failf(ErrCorrupt, err, "corrupt %s: %s", c.title, strings.TrimPrefix(err.Error(), c.name+": "))
}

// sliceReader reads data and records whether a decoder asked for more than
// there is. It is an io.ByteReader, so that image/gif uses it directly
// rather than through a bufio.Reader whose read-ahead would blur that
// record.
type sliceReader struct {
	data   []byte
	off    int
	hitEOF bool
}

func (r *sliceReader) Read(p []byte) (int, error) {
	if r.off >= len(r.data) {
		if len(p) > 0 {
			r.hitEOF = true
		}
		return 0, io.EOF
	}
	n := copy(p, r.data[r.off:])
	r.off += n
	return n, nil
}

func (r *sliceReader) ReadByte() (byte, error) {
	if r.off >= len(r.data) {
		r.hitEOF = true
		return 0, io.EOF
	}
	b := r.data[r.off]
	r.off++
	return b, nil
}

// declaredSize reads the image size a header declares, where that is easy
// to do by hand, so that a refusal can say "too large" or "empty" even when
// the format's decoder rejects the header for its own reasons (image/png
// calls huge dimensions an "overflow", x/image/webp "invalid format").
func declaredSize(format string, data []byte) (w, h int64, ok bool) {
	switch format {
	case "png":
		// Signature, then the IHDR chunk's length and type, then its data.
		if len(data) >= 24 && string(data[12:16]) == "IHDR" {
			return int64(binary.BigEndian.Uint32(data[16:])), int64(binary.BigEndian.Uint32(data[20:])), true
		}
	case "gif":
		if len(data) >= 10 {
			return int64(binary.LittleEndian.Uint16(data[6:])), int64(binary.LittleEndian.Uint16(data[8:])), true
		}
	case "webp":
		return webpSize(data)
	case "jpeg":
		var size struct{ w, h int64 }
		found := false
		jpegSegments(data, func(marker byte, seg []byte) bool {
			if marker == 0xda {
				return false // no frame header before the first scan
			}
			// SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC).
			if marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc && len(seg) >= 5 {
				size.h, size.w = int64(binary.BigEndian.Uint16(seg[1:])), int64(binary.BigEndian.Uint16(seg[3:]))
				found = true
				return false
			}
			return true
		})
		return size.w, size.h, found
	}
	return 0, 0, false
}

// webpSize reads the canvas size of a WebP's first chunk: VP8X, VP8L or
// VP8 (lossy), at byte 12 after the RIFF header.
func webpSize(data []byte) (w, h int64, ok bool) {
	if len(data) < 20 {
		return 0, 0, false
	}
	chunk := data[20:]
	switch string(data[12:16]) {
	case "VP8X":
		if len(chunk) >= 10 {
			w = int64(chunk[4]) | int64(chunk[5])<<8 | int64(chunk[6])<<16
			h = int64(chunk[7]) | int64(chunk[8])<<8 | int64(chunk[9])<<16
			return w + 1, h + 1, true
		}
	case "VP8L":
		if len(chunk) >= 5 && chunk[0] == 0x2f {
			bits := binary.LittleEndian.Uint32(chunk[1:])
			return int64(bits&0x3fff) + 1, int64(bits>>14&0x3fff) + 1, true
		}
	case "VP8 ":
		// A key frame: 3 bytes of frame tag, the start code 9d 01 2a, then
		// 14-bit width and height, each with 2 bits of scaling above.
		if len(chunk) >= 10 && chunk[3] == 0x9d && chunk[4] == 0x01 && chunk[5] == 0x2a {
			return int64(binary.LittleEndian.Uint16(chunk[6:]) & 0x3fff), int64(binary.LittleEndian.Uint16(chunk[8:]) & 0x3fff), true
		}
	}
	return 0, 0, false
}

// webpAnimated reports whether a WebP's VP8X header declares an animation.
func webpAnimated(data []byte) bool {
	const animationBit = 1 << 1
	return len(data) > 20 && string(data[12:16]) == "VP8X" && data[20]&animationBit != 0
}
