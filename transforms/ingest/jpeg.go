package ingest

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// DefaultMaxJPEGScans is the most scans Decoder lets image/jpeg decode
// unless told otherwise. Every progressive scan walks over every block of
// the image, yet a scan that skips all blocks with end-of-band runs takes a
// few bytes: a valid 150-kilobyte 16-megapixel JPEG with 3,000 such scans
// takes image/jpeg about 26 s (libjpeg-turbo's report on the JPEG
// standard calls this LJT-01-003, and recommends limiting scans). Encoders
// write about 10 scans; 500 is the limit NVIDIA DALI chose for
// libjpeg-turbo.
const DefaultMaxJPEGScans = 500

// jpegScans counts the scans (SOS segments) of a JPEG.
func jpegScans(data []byte) int {
	n := 0
	jpegSegments(data, func(marker byte, _ []byte) bool {
		if marker == 0xda {
			n++
		}
		return true
	})
	return n
}

// jpegSegments calls fn with the marker and the payload (without the length
// bytes) of each marker segment of a JPEG in order, until fn returns false
// or the image ends (EOI). The payload of an SOS segment is the scan header;
// the entropy-coded data after it is skipped. Between segments it skips
// what image/jpeg skips — bytes other than 0xff, "\xff\x00", restart
// markers and fill bytes — so that it sees the segments image/jpeg will
// decode: a scan hidden from this walk would escape the scan limit. It
// stops quietly at anything malformed: the decoder, not this walk, reports
// broken files.
func jpegSegments(data []byte, fn func(marker byte, payload []byte) bool) {
	if len(data) < 2 || data[0] != 0xff || data[1] != 0xd8 {
		return
	}
	i := 2
	for {
		j := bytes.IndexByte(data[i:], 0xff)
		if j < 0 || i+j+1 >= len(data) {
			return
		}
		i += j
		marker := data[i+1]
		switch {
		case marker == 0xff: // a fill byte before the marker
			i++
			continue
		case marker == 0x00 || marker >= 0xd0 && marker <= 0xd7: // out of place, ignored
			i += 2
			continue
		case marker == 0xd9: // EOI
			return
		}
		if i+4 > len(data) {
			return
		}
		n := int(binary.BigEndian.Uint16(data[i+2:])) // counts its own 2 bytes
		if n < 2 || i+2+n > len(data) {
			return
		}
		if !fn(marker, data[i+4:i+2+n]) {
			return
		}
		i += 2 + n
		if marker == 0xda {
			i = skipEntropyCoded(data, i)
		}
	}
}

// skipEntropyCoded returns the index of the marker that ends the
// entropy-coded data starting at i, or len(data). Inside that data an 0xff
// byte is followed by 0 (a stuffed 0xff), a restart marker or more 0xff
// fill bytes; anything else is the next marker.
func skipEntropyCoded(data []byte, i int) int {
	for {
		j := bytes.IndexByte(data[i:], 0xff)
		if j < 0 || i+j+1 >= len(data) {
			return len(data)
		}
		i += j
		switch b := data[i+1]; {
		case b == 0x00 || b >= 0xd0 && b <= 0xd7:
			i += 2
		case b == 0xff:
			i++
		default:
			return i
		}
	}
}

// jpegOrientation returns the Exif Orientation (1–8) of a JPEG, or 0 if it
// has none that can be read. Malformed Exif data is not an error: the
// pixels are fine, so the image is used as stored.
func jpegOrientation(data []byte) int {
	o := 0
	jpegSegments(data, func(marker byte, seg []byte) bool {
		if marker == 0xda {
			return false // metadata comes before the first scan
		}
		// APP1 also carries XMP; the Exif one starts "Exif\0" and a pad byte
		// (normally 0, 0xff in some writers' files).
		if marker != 0xe1 || len(seg) < 6 || string(seg[:5]) != "Exif\x00" {
			return true
		}
		o = exifOrientation(seg[6:])
		return false // the first Exif segment is the one readers use
	})
	return o
}

// exifOrientation returns the Orientation tag (1–8) of IFD0 of the TIFF
// structure tiff, or 0 if there is none that can be read. Every offset is
// checked against len(tiff) before use.
func exifOrientation(tiff []byte) int {
	if len(tiff) < 8 {
		return 0
	}
	var bo binary.ByteOrder
	switch string(tiff[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 0
	}
	if bo.Uint16(tiff[2:]) != 42 {
		return 0
	}
	ifd := int64(bo.Uint32(tiff[4:]))
	if ifd < 8 || ifd+2 > int64(len(tiff)) {
		return 0
	}
	n := int64(bo.Uint16(tiff[ifd:]))
	const (
		tagOrientation = 0x0112
		typeShort      = 3
		typeLong       = 4
		entrySize      = 12 // tag, type, count, then the value or its offset
	)
	for k := range n {
		e := ifd + 2 + k*entrySize
		if e+entrySize > int64(len(tiff)) {
			return 0
		}
		entry := tiff[e : e+entrySize]
		if bo.Uint16(entry) != tagOrientation {
			continue
		}
		if bo.Uint32(entry[4:]) != 1 {
			return 0
		}
		// A value of up to 4 bytes sits in the entry itself, left-aligned.
		var v uint32
		switch bo.Uint16(entry[2:]) {
		case typeShort:
			v = uint32(bo.Uint16(entry[8:]))
		case typeLong: // not the spec's type, but written by some tools
			v = bo.Uint32(entry[8:])
		default:
			return 0
		}
		if v < 1 || v > 8 {
			return 0
		}
		return int(v)
	}
	return 0
}

// jpegProcess names the coding process of a JPEG whose frame (SOF) marker
// image/jpeg does not decode, or returns "".
func jpegProcess(data []byte) string {
	process := ""
	jpegSegments(data, func(marker byte, _ []byte) bool {
		switch marker {
		case 0xda:
			return false
		case 0xc0, 0xc1, 0xc2: // baseline, extended sequential, progressive
			return false
		case 0xc3:
			process = "lossless coding (SOF3)"
		case 0xc5, 0xc6, 0xc7:
			process = fmt.Sprintf("hierarchical coding (SOF%d)", marker-0xc0)
		case 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf:
			process = fmt.Sprintf("arithmetic coding (SOF%d)", marker-0xc0)
		default:
			return true
		}
		return false
	})
	return process
}
