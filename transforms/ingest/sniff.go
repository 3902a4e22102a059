package ingest

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// unsupportedImages are signatures of image formats Decode does not decode,
// named so that a dead letter says what the file is rather than that it is
// nothing. Magic strings use '?' for any byte.
var unsupportedImages = []struct{ magic, name string }{
	{"II*\x00", "TIFF or a TIFF-based camera raw (DNG, NEF, CR2…)"},
	{"MM\x00*", "TIFF or a TIFF-based camera raw (DNG, NEF, CR2…)"},
	{"IIRO", "Olympus ORF camera raw"},
	{"IIU\x00", "Panasonic RW2 camera raw"},
	{"FUJIFILMCCD-RAW", "Fujifilm RAF camera raw"},
	{"????ftypheic", "HEIC"},
	{"????ftypheix", "HEIC"},
	{"????ftyphevc", "HEIF"},
	{"????ftyphevx", "HEIF"},
	{"????ftypheim", "HEIF"},
	{"????ftypheis", "HEIF"},
	{"????ftypmif1", "HEIF"},
	{"????ftypmsf1", "HEIF"},
	{"????ftypavif", "AVIF"},
	{"????ftypavis", "AVIF"},
	{"????ftypcrx ", "Canon CR3 camera raw"},
	{"\x00\x00\x00\x0cjP  \r\n\x87\n", "JPEG 2000"},
	{"\xff\x4f\xff\x51", "JPEG 2000 codestream"},
	{"\x00\x00\x00\x0cJXL \r\n\x87\n", "JPEG XL"},
	{"\xff\x0a", "JPEG XL"},
	{"8BPS", "Photoshop PSD"},
	{"\x00\x00\x01\x00", "ICO"},
	{"\x76\x2f\x31\x01", "OpenEXR"},
	{"#?RADIANCE", "Radiance HDR"},
	{"qoif", "QOI"},
	{"DDS ", "DirectDraw Surface (DDS)"},
}

// notImages are signatures of common files that are not images at all.
var notImages = []struct{ magic, name string }{
	{"%PDF-", "a PDF document"},
	{"\x1f\x8b", "gzip-compressed data, perhaps a download saved without undoing its Content-Encoding"},
	{"PK\x03\x04", "a ZIP archive"},
	{"????ftyp", "an ISO media file such as an MP4 or MOV video"},
	{"RIFF????AVI ", "an AVI video"},
	{"RIFF????WAVE", "a WAV audio file"},
	{"\x1aE\xdf\xa3", "a Matroska/WebM video"},
	{"ID3", "an MP3 audio file"},
	{"OggS", "an Ogg media file"},
}

// unknownFormat explains data that no decoder accepts.
func unknownFormat(data []byte) error {
	for _, c := range codecs {
		if prefixOf(data, c.magic) {
			return failf(ErrTruncated, nil, "truncated %s: the file has only %s, fewer than the %s signature", c.title, byteCount(len(data)), c.title)
		}
	}
	if match("RIFF????WEBP", data) {
		// The image package's WebP signature also requires the first
		// chunk to be VP8, VP8L or VP8X.
		chunk := data[12:min(len(data), 16)]
		return failf(ErrCorrupt, nil, "corrupt WebP: the first chunk is %q, not VP8, VP8L or VP8X", chunk)
	}
	switch name, kind := foreign(data); {
	case kind == ErrUnsupported:
		return failf(ErrUnsupported, nil, "unsupported format: %s; only JPEG, PNG, GIF and WebP are decoded", name)
	case name != "":
		return failf(ErrUnknownFormat, nil, "not an image: the data looks like %s; it starts with %s", name, head(data))
	}
	return failf(ErrUnknownFormat, nil, "unrecognised format: the data starts with bytes % x, which is no JPEG, PNG, GIF or WebP signature",
		data[:min(len(data), 8)])
}

// foreign names what data is when it is neither an image Decode decodes
// nor the start of one: an image of another format (the format's name and
// ErrUnsupported), or something else (what it looks like, "" if nothing
// known, and ErrUnknownFormat).
func foreign(data []byte) (name string, kind error) {
	if len(data) >= 2 && data[0] == 'B' && data[1] == 'M' && isBMP(data) {
		return "BMP", ErrUnsupported
	}
	for _, u := range unsupportedImages {
		if match(u.magic, data) {
			return u.name, ErrUnsupported
		}
	}
	for _, n := range notImages {
		if match(n.magic, data) {
			return n.name, ErrUnknownFormat
		}
	}
	if kind := textKind(data); kind == "SVG" {
		return "SVG, a vector image", ErrUnsupported
	} else if kind != "" {
		return kind, ErrUnknownFormat
	}
	return "", ErrUnknownFormat
}

// SniffBytes is how much of the start of a file Sniff wants: the longest
// signature it tells apart, with room to spare, so that a listing reads a
// few bytes of a file rather than the file.
const SniffBytes = 64

// FileKind is what the start of a file says it is (Sniff).
type FileKind int

const (
	// KindImage is an image of a format Decode decodes, or the start of
	// one: whether it decodes is Decode's to say.
	KindImage FileKind = iota
	// KindUnsupportedImage is an image of a format Decode does not
	// decode (HEIC, TIFF, BMP…).
	KindUnsupportedImage
	// KindNotImage is anything else: text, a document, an archive, a
	// video, unrecognised bytes.
	KindNotImage
	// KindEmpty is a file of no bytes.
	KindEmpty
)

// Sniff tells what a file holds from head, its first SniffBytes bytes (or
// the whole file, if shorter), and names it: the format of an image
// ("JPEG", "HEIC"), or what the data looks like ("text", "a PDF
// document"; "unrecognised data" if nothing known). It decides by content
// only, as Decode does: a file's name may say anything.
func Sniff(head []byte) (FileKind, string) {
	if len(head) == 0 {
		return KindEmpty, "empty file"
	}
	for _, c := range codecs {
		if match(c.magic, head) || prefixOf(head, c.magic) {
			return KindImage, c.title
		}
	}
	if match("RIFF????WEBP", head) {
		return KindImage, "WebP"
	}
	name, kind := foreign(head)
	switch {
	case kind == ErrUnsupported:
		return KindUnsupportedImage, name
	case name == "":
		return KindNotImage, "unrecognised data"
	}
	return KindNotImage, name
}

// isBMP checks the size of a BMP's info header, since "BM" alone begins
// plenty of text files.
func isBMP(data []byte) bool {
	if len(data) < 18 {
		return false
	}
	switch uint32(data[14]) | uint32(data[15])<<8 | uint32(data[16])<<16 | uint32(data[17])<<24 {
	case 12, 16, 40, 52, 56, 64, 108, 124:
		return true
	}
	return false
}

// textKind names the kind of text data holds, or returns "" if its start
// is not text.
func textKind(data []byte) string {
	s := data[:min(len(data), 1024)]
	// A cut in the middle of a multi-byte character is still text.
	for i := 0; i < utf8.UTFMax && len(s) > 0 && !utf8.Valid(s); i++ {
		s = s[:len(s)-1]
	}
	if len(s) == 0 || !utf8.Valid(s) {
		return ""
	}
	for _, r := range string(s) {
		if r < ' ' && r != '\t' && r != '\n' && r != '\r' && r != '\f' {
			return ""
		}
	}
	t := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(string(s), "\ufeff")))
	switch {
	case strings.Contains(t, "<svg"):
		return "SVG"
	case hasAnyPrefix(t, "<!doctype html", "<html", "<head", "<body", "<!--", "<meta", "<title", "<script"):
		return "HTML, perhaps an error or login page saved in place of the image"
	case strings.HasPrefix(t, "<?xml"), strings.HasPrefix(t, "<"):
		return "XML"
	case strings.HasPrefix(t, "{"), strings.HasPrefix(t, "["):
		return "JSON"
	}
	return "text"
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// byteCount is n bytes, in words.
func byteCount(n int) string {
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

// head quotes the start of data for a reason.
func head(data []byte) string {
	const n = 24
	if len(data) <= n {
		return fmt.Sprintf("%q", data)
	}
	return fmt.Sprintf("%q…", data[:n])
}
