// Copyright 2009 The Go Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package lumajpeg decodes the luma (Y) plane of a JPEG only, at full size
// or DCT-domain scaled by 1/2, 1/4 or 1/8 as libjpeg's scale_denom, for a
// detector that reads grey and a job that downscales large photos anyway.
//
// It is a fork of the Go standard library's image/jpeg decoder (Go 1.26:
// reader.go, huffman.go, scan.go, dct.go), under the Go project's BSD
// licence, whose text is in this directory's LICENSE file; the copyright
// lines at the top of each file are the Go Authors'. Its changes: only
// component 0 is dequantised, transformed and stored, into an
// *image.Gray; chroma blocks in a scan with luma are entropy-decoded only
// to pass them (the scan interleaves them), scans of chroma alone (a
// progressive JPEG's, or a sequential one's that codes its components
// apart) are skipped unread; the entropy decoder reads through a
// 64-bit accumulator with 10-bit tables that decode an AC code and its
// coefficient, or two such symbols when both fit, in one look-up, and
// reproduces image/jpeg's decoding bit for bit, its table quirks and its
// errors at the end of the data included; a sequential scan's luma is
// dequantised as it is decoded (at full size with AVX2, into the
// transposed block the assembly IDCT takes); a block with a DC
// coefficient alone, or (off that path) AC coefficients in its first row
// alone, is written without the full IDCT, with the values the IDCT gives
// it, and on amd64 with AVX2 the IDCT, level shift and clipping run in
// assembly (idct_amd64.s), the same int32 operations eight at a time;
// decoders are pooled with their Huffman tables (rebuilt only when a
// JPEG's differ), and an image handed back by Recycle is the next one's
// pixel buffer; a scaled decode transforms the block's top-left 4×4 or
// 2×2 coefficients with a 4- or 2-point integer inverse DCT (the 4×4 in
// assembly too, four int32 lanes at a time), or takes the DC coefficient
// alone (scaled.go); the encoder, the colour conversions and the image
// package registration are gone. At scale 1 the pixels are image/jpeg's Y plane
// exactly: the same integer IDCT. Where it departs from image/jpeg, on
// malformed JPEGs only, it follows libjpeg: it does not see errors in
// scans of chroma alone, and an end-of-band run ends with its scan.
//
// JPEG is defined in ITU-T T.81: https://www.w3.org/Graphics/JPEG/itu-t81.pdf.
package lumajpeg

import (
	"errors"
	"image"
	"image/jpeg"
	"io"
	"sync"
)

// FormatError is image/jpeg's, so that callers classify this decoder's
// errors as they classify image/jpeg's.
type FormatError = jpeg.FormatError

// UnsupportedError is image/jpeg's, for the same reason.
type UnsupportedError = jpeg.UnsupportedError

// ErrNotLuma reports a JPEG whose component 0 is not luma: a CMYK or YCCK
// JPEG (four components) or an RGB one (Adobe transform 0, or components
// named R, G, B). Its grey is a conversion of all its components, which
// image/jpeg and a colour path make.
var ErrNotLuma = errors.New("lumajpeg: component 0 is not luma")

var errUnsupportedSubsamplingRatio = UnsupportedError("luma/chroma subsampling ratio")

// Component specification, specified in section B.2.2.
type component struct {
	h  int   // Horizontal sampling factor.
	v  int   // Vertical sampling factor.
	c  uint8 // Component identifier.
	tq uint8 // Quantization table destination selector.
}

const (
	dcTable = 0
	acTable = 1
	maxTc   = 1
	maxTh   = 3
	maxTq   = 3

	maxComponents = 4
)

const (
	sof0Marker = 0xc0 // Start Of Frame (Baseline Sequential).
	sof1Marker = 0xc1 // Start Of Frame (Extended Sequential).
	sof2Marker = 0xc2 // Start Of Frame (Progressive).
	dhtMarker  = 0xc4 // Define Huffman Table.
	rst0Marker = 0xd0 // ReSTart (0).
	rst7Marker = 0xd7 // ReSTart (7).
	soiMarker  = 0xd8 // Start Of Image.
	eoiMarker  = 0xd9 // End Of Image.
	sosMarker  = 0xda // Start Of Scan.
	dqtMarker  = 0xdb // Define Quantization Table.
	driMarker  = 0xdd // Define Restart Interval.
	comMarker  = 0xfe // COMment.
	// "APPlication specific" markers aren't part of the JPEG spec per se,
	// but in practice, their use is described at
	// https://www.sno.phy.queensu.ca/~phil/exiftool/TagNames/JPEG.html
	app0Marker  = 0xe0
	app14Marker = 0xee
	app15Marker = 0xef
)

// See https://www.sno.phy.queensu.ca/~phil/exiftool/TagNames/JPEG.html#Adobe
const (
	adobeTransformUnknown = 0
	adobeTransformYCbCr   = 1
	adobeTransformYCbCrK  = 2
)

// unzig maps from the zig-zag ordering to the natural ordering. For example,
// unzig[3] is the column and row of the fourth element in zig-zag order. The
// value is 16, which means first column (16%8 == 0) and third row (16/8 == 2).
var unzig = [blockSize]int{
	0, 1, 8, 16, 9, 2, 3, 10,
	17, 24, 32, 25, 18, 11, 4, 5,
	12, 19, 26, 33, 40, 48, 41, 34,
	27, 20, 13, 6, 7, 14, 21, 28,
	35, 42, 49, 56, 57, 50, 43, 36,
	29, 22, 15, 23, 30, 37, 44, 51,
	58, 59, 52, 45, 38, 31, 39, 46,
	53, 60, 61, 54, 47, 55, 62, 63,
}

// Deprecated: Reader is not used by the [image/jpeg] package and should
// not be used by others. It is kept for compatibility.
type Reader interface {
	io.ByteReader
	io.Reader
}

// bits holds the unprocessed bits that have been taken from the
// entropy-coded data: the n most significant bits of acc, read from the
// top; the bits below them are zero.
type bits struct {
	acc uint64
	n   int32
	// padded counts the zero bits appended to acc after the data ended
	// (at a marker or at the end of the input), for the reason end.
	padded int32
	end    error
}

type decoder struct {
	r    io.Reader
	bits bits
	// bytes is a byte buffer, similar to a bufio.Reader; buf[i:j] are the
	// buffered bytes read from the underlying io.Reader that haven't yet
	// been passed further on.
	bytes struct {
		buf  [4096]byte
		i, j int
	}
	width, height int

	// gray is component 0, decoded at 1/2^shift of the image's size.
	gray  *image.Gray
	shift uint
	// filter is a scaled decode's (shift ≥ 1) reduced transform, and
	// scaledQuant the luma's dequantTable for it in a progressive JPEG.
	filter      Filter
	scaledQuant block

	ri    int // Restart Interval.
	nComp int

	// As per section 4.5, there are four modes of operation (selected by the
	// SOF? markers): sequential DCT, progressive DCT, lossless and
	// hierarchical, although this implementation does not support the latter
	// two non-DCT modes. Sequential DCT is further split into baseline and
	// extended, as per section 4.11.
	baseline    bool
	progressive bool

	jfif                bool
	adobeTransformValid bool
	adobeTransform      uint8
	eobRun              uint16 // End-of-Band run, specified in section G.1.2.2.

	comp       [maxComponents]component
	progCoeffs [maxComponents][]block // Saved state between progressive-mode scans.
	// huff are the Huffman tables, which a pooled decoder keeps from JPEG
	// to JPEG (processDHT rebuilds a table only if its codes change).
	huff  *[maxTc + 1][maxTh + 1]huffman
	quant [maxTq + 1]block // Quantization tables, in zig-zag order.
	tmp   [2 * blockSize]byte
	// discard takes the coefficients of the blocks read past.
	discard block
	// order is where the current scan stores each zig-zag index: unzig8,
	// or unzigT8 when transposed (storeBlock then gives the transposed
	// block to idctStoreT).
	order      [blockSize]uint8
	transposed bool
	// lumaWritten reports that a luma scan (sequential) or the progressive
	// reconstruction wrote every block of gray inside its bounds: a
	// recycled buffer holds no older pixels there.
	lumaWritten bool
}

// fill moves the unread bytes to the start of d.bytes.buf and reads more
// after them from the underlying io.Reader.
func (d *decoder) fill() error {
	d.bytes.j = copy(d.bytes.buf[:], d.bytes.buf[d.bytes.i:d.bytes.j])
	d.bytes.i = 0
	n, err := d.r.Read(d.bytes.buf[d.bytes.j:])
	d.bytes.j += n
	if n > 0 {
		return nil
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// readByte returns the next byte, whether buffered or not buffered. It does
// not care about byte stuffing.
func (d *decoder) readByte() (x byte, err error) {
	for d.bytes.i == d.bytes.j {
		if err = d.fill(); err != nil {
			return 0, err
		}
	}
	x = d.bytes.buf[d.bytes.i]
	d.bytes.i++
	return x, nil
}

// errMissingFF00 means that the entropy-coded data met an 0xff byte (a
// marker byte) that wasn't the expected byte-stuffed sequence 0xff, 0x00.
var errMissingFF00 = FormatError("missing 0xff00 sequence")

// readFull reads exactly len(p) bytes into p. It does not care about byte
// stuffing.
func (d *decoder) readFull(p []byte) error {
	for {
		n := copy(p, d.bytes.buf[d.bytes.i:d.bytes.j])
		p = p[n:]
		d.bytes.i += n
		if len(p) == 0 {
			break
		}
		if err := d.fill(); err != nil {
			return err
		}
	}
	return nil
}

// ignore ignores the next n bytes.
func (d *decoder) ignore(n int) error {
	for {
		m := d.bytes.j - d.bytes.i
		if m > n {
			m = n
		}
		d.bytes.i += m
		n -= m
		if n == 0 {
			break
		}
		if err := d.fill(); err != nil {
			return err
		}
	}
	return nil
}

// Specified in section B.2.2.
func (d *decoder) processSOF(n int) error {
	if d.nComp != 0 {
		return FormatError("multiple SOF markers")
	}
	switch n {
	case 6 + 3*1: // Grayscale image.
		d.nComp = 1
	case 6 + 3*3: // YCbCr or RGB image.
		d.nComp = 3
	case 6 + 3*4: // YCbCrK or CMYK image.
		d.nComp = 4
	default:
		return UnsupportedError("number of components")
	}
	if err := d.readFull(d.tmp[:n]); err != nil {
		return err
	}
	// We only support 8-bit precision.
	if d.tmp[0] != 8 {
		return UnsupportedError("precision")
	}
	d.height = int(d.tmp[1])<<8 + int(d.tmp[2])
	d.width = int(d.tmp[3])<<8 + int(d.tmp[4])
	if int(d.tmp[5]) != d.nComp {
		return FormatError("SOF has wrong length")
	}

	for i := 0; i < d.nComp; i++ {
		d.comp[i].c = d.tmp[6+3*i]
		// Section B.2.2 states that "the value of C_i shall be different from
		// the values of C_1 through C_(i-1)".
		for j := 0; j < i; j++ {
			if d.comp[i].c == d.comp[j].c {
				return FormatError("repeated component identifier")
			}
		}

		d.comp[i].tq = d.tmp[8+3*i]
		if d.comp[i].tq > maxTq {
			return FormatError("bad Tq value")
		}

		hv := d.tmp[7+3*i]
		h, v := int(hv>>4), int(hv&0x0f)
		if h < 1 || 4 < h || v < 1 || 4 < v {
			return FormatError("luma/chroma subsampling ratio")
		}
		if h == 3 || v == 3 {
			return errUnsupportedSubsamplingRatio
		}
		switch d.nComp {
		case 1:
			// If a JPEG image has only one component, section A.2 says "this data
			// is non-interleaved by definition" and section A.2.2 says "[in this
			// case...] the order of data units within a scan shall be left-to-right
			// and top-to-bottom... regardless of the values of H_1 and V_1". Section
			// 4.8.2 also says "[for non-interleaved data], the MCU is defined to be
			// one data unit". Similarly, section A.1.1 explains that it is the ratio
			// of H_i to max_j(H_j) that matters, and similarly for V. For grayscale
			// images, H_1 is the maximum H_j for all components j, so that ratio is
			// always 1. The component's (h, v) is effectively always (1, 1): even if
			// the nominal (h, v) is (2, 1), a 20x5 image is encoded in three 8x8
			// MCUs, not two 16x8 MCUs.
			h, v = 1, 1

		case 3:
			// For YCbCr images, we only support 4:4:4, 4:4:0, 4:2:2, 4:2:0,
			// 4:1:1 or 4:1:0 chroma subsampling ratios. This implies that the
			// (h, v) values for the Y component are either (1, 1), (1, 2),
			// (2, 1), (2, 2), (4, 1) or (4, 2), and the Y component's values
			// must be a multiple of the Cb and Cr component's values. We also
			// assume that the two chroma components have the same subsampling
			// ratio.
			switch i {
			case 0: // Y.
				// We have already verified, above, that h and v are both
				// either 1, 2 or 4, so invalid (h, v) combinations are those
				// with v == 4.
				if v == 4 {
					return errUnsupportedSubsamplingRatio
				}
			case 1: // Cb.
				if d.comp[0].h%h != 0 || d.comp[0].v%v != 0 {
					return errUnsupportedSubsamplingRatio
				}
			case 2: // Cr.
				if d.comp[1].h != h || d.comp[1].v != v {
					return errUnsupportedSubsamplingRatio
				}
			}

		case 4:
			// For 4-component images (either CMYK or YCbCrK), we only support two
			// hv vectors: [0x11 0x11 0x11 0x11] and [0x22 0x11 0x11 0x22].
			// Theoretically, 4-component JPEG images could mix and match hv values
			// but in practice, those two combinations are the only ones in use,
			// and it simplifies the applyBlack code below if we can assume that:
			//	- for CMYK, the C and K channels have full samples, and if the M
			//	  and Y channels subsample, they subsample both horizontally and
			//	  vertically.
			//	- for YCbCrK, the Y and K channels have full samples.
			switch i {
			case 0:
				if hv != 0x11 && hv != 0x22 {
					return errUnsupportedSubsamplingRatio
				}
			case 1, 2:
				if hv != 0x11 {
					return errUnsupportedSubsamplingRatio
				}
			case 3:
				if d.comp[0].h != h || d.comp[0].v != v {
					return errUnsupportedSubsamplingRatio
				}
			}
		}

		d.comp[i].h = h
		d.comp[i].v = v
	}
	return nil
}

// Specified in section B.2.4.1.
func (d *decoder) processDQT(n int) error {
loop:
	for n > 0 {
		n--
		x, err := d.readByte()
		if err != nil {
			return err
		}
		tq := x & 0x0f
		if tq > maxTq {
			return FormatError("bad Tq value")
		}
		switch x >> 4 {
		default:
			return FormatError("bad Pq value")
		case 0:
			if n < blockSize {
				break loop
			}
			n -= blockSize
			if err := d.readFull(d.tmp[:blockSize]); err != nil {
				return err
			}
			for i := range d.quant[tq] {
				d.quant[tq][i] = int32(d.tmp[i])
			}
		case 1:
			if n < 2*blockSize {
				break loop
			}
			n -= 2 * blockSize
			if err := d.readFull(d.tmp[:2*blockSize]); err != nil {
				return err
			}
			for i := range d.quant[tq] {
				d.quant[tq][i] = int32(d.tmp[2*i])<<8 | int32(d.tmp[2*i+1])
			}
		}
	}
	if n != 0 {
		return FormatError("DQT has wrong length")
	}
	return nil
}

// Specified in section B.2.4.4.
func (d *decoder) processDRI(n int) error {
	if n != 2 {
		return FormatError("DRI has wrong length")
	}
	if err := d.readFull(d.tmp[:2]); err != nil {
		return err
	}
	d.ri = int(d.tmp[0])<<8 + int(d.tmp[1])
	return nil
}

func (d *decoder) processApp0Marker(n int) error {
	if n < 5 {
		return d.ignore(n)
	}
	if err := d.readFull(d.tmp[:5]); err != nil {
		return err
	}
	n -= 5

	d.jfif = d.tmp[0] == 'J' && d.tmp[1] == 'F' && d.tmp[2] == 'I' && d.tmp[3] == 'F' && d.tmp[4] == '\x00'

	if n > 0 {
		return d.ignore(n)
	}
	return nil
}

func (d *decoder) processApp14Marker(n int) error {
	if n < 12 {
		return d.ignore(n)
	}
	if err := d.readFull(d.tmp[:12]); err != nil {
		return err
	}
	n -= 12

	if d.tmp[0] == 'A' && d.tmp[1] == 'd' && d.tmp[2] == 'o' && d.tmp[3] == 'b' && d.tmp[4] == 'e' {
		d.adobeTransformValid = true
		d.adobeTransform = d.tmp[11]
	}

	if n > 0 {
		return d.ignore(n)
	}
	return nil
}

// decode reads a JPEG image from r and returns it as an image.Image.
func (d *decoder) decode(r io.Reader, configOnly bool) (image.Image, error) {
	d.r = r

	// Check for the Start Of Image marker.
	if err := d.readFull(d.tmp[:2]); err != nil {
		return nil, err
	}
	if d.tmp[0] != 0xff || d.tmp[1] != soiMarker {
		return nil, FormatError("missing SOI marker")
	}

	// Process the remaining segments until the End Of Image marker.
	for {
		err := d.readFull(d.tmp[:2])
		if err != nil {
			return nil, err
		}
		for d.tmp[0] != 0xff {
			// Strictly speaking, this is a format error. However, libjpeg is
			// liberal in what it accepts. As of version 9, next_marker in
			// jdmarker.c treats this as a warning (JWRN_EXTRANEOUS_DATA) and
			// continues to decode the stream. Even before next_marker sees
			// extraneous data, jpeg_fill_bit_buffer in jdhuff.c reads as many
			// bytes as it can, possibly past the end of a scan's data. It
			// effectively puts back any markers that it overscanned (e.g. an
			// "\xff\xd9" EOI marker), but it does not put back non-marker data,
			// and thus it can silently ignore a small number of extraneous
			// non-marker bytes before next_marker has a chance to see them (and
			// print a warning).
			//
			// We are therefore also liberal in what we accept. Extraneous data
			// is silently ignored.
			//
			// This is similar to, but not exactly the same as, the restart
			// mechanism within a scan (the RST[0-7] markers).
			//
			// Note that extraneous 0xff bytes in e.g. SOS data are escaped as
			// "\xff\x00", and so are detected a little further down below.
			d.tmp[0] = d.tmp[1]
			d.tmp[1], err = d.readByte()
			if err != nil {
				return nil, err
			}
		}
		marker := d.tmp[1]
		if marker == 0 {
			// Treat "\xff\x00" as extraneous data.
			continue
		}
		for marker == 0xff {
			// Section B.1.1.2 says, "Any marker may optionally be preceded by any
			// number of fill bytes, which are bytes assigned code X'FF'".
			marker, err = d.readByte()
			if err != nil {
				return nil, err
			}
		}
		if marker == eoiMarker { // End Of Image.
			break
		}
		if rst0Marker <= marker && marker <= rst7Marker {
			// Figures B.2 and B.16 of the specification suggest that restart markers should
			// only occur between Entropy Coded Segments and not after the final ECS.
			// However, some encoders may generate incorrect JPEGs with a final restart
			// marker. That restart marker will be seen here instead of inside the processSOS
			// method, and is ignored as a harmless error. Restart markers have no extra data,
			// so we check for this before we read the 16-bit length of the segment.
			continue
		}

		// Read the 16-bit length of the segment. The value includes the 2 bytes for the
		// length itself, so we subtract 2 to get the number of remaining bytes.
		if err = d.readFull(d.tmp[:2]); err != nil {
			return nil, err
		}
		n := int(d.tmp[0])<<8 + int(d.tmp[1]) - 2
		if n < 0 {
			return nil, FormatError("short segment length")
		}

		switch marker {
		case sof0Marker, sof1Marker, sof2Marker:
			d.baseline = marker == sof0Marker
			d.progressive = marker == sof2Marker
			err = d.processSOF(n)
			if configOnly && d.jfif {
				return nil, err
			}
		case dhtMarker:
			if configOnly {
				err = d.ignore(n)
			} else {
				err = d.processDHT(n)
			}
		case dqtMarker:
			if configOnly {
				err = d.ignore(n)
			} else {
				err = d.processDQT(n)
			}
		case sosMarker:
			if configOnly {
				return nil, nil
			}
			err = d.processSOS(n)
		case driMarker:
			if configOnly {
				err = d.ignore(n)
			} else {
				err = d.processDRI(n)
			}
		case app0Marker:
			err = d.processApp0Marker(n)
		case app14Marker:
			err = d.processApp14Marker(n)
		default:
			if app0Marker <= marker && marker <= app15Marker || marker == comMarker {
				err = d.ignore(n)
			} else if marker < 0xc0 { // See Table B.1 "Marker code assignments".
				err = FormatError("unknown marker")
			} else {
				err = UnsupportedError("unknown marker")
			}
		}
		if err != nil {
			return nil, err
		}
	}

	if d.progressive {
		if err := d.reconstructProgressiveImage(); err != nil {
			return nil, err
		}
	}
	if d.gray == nil {
		return nil, FormatError("missing SOS marker")
	}
	if d.nComp == 3 && d.isRGB() {
		// An APP14 marker after the first scan still makes it RGB.
		return nil, ErrNotLuma
	}
	return d.gray, nil
}

// isRGB is image/jpeg's test for a three-component JPEG stored as RGB.
func (d *decoder) isRGB() bool {
	if d.jfif {
		return false
	}
	if d.adobeTransformValid && d.adobeTransform == adobeTransformUnknown {
		// https://www.sno.phy.queensu.ca/~phil/exiftool/TagNames/JPEG.html#Adobe
		// says that 0 means Unknown (and in practice RGB) and 1 means YCbCr.
		return true
	}
	return d.comp[0].c == 'R' && d.comp[1].c == 'G' && d.comp[2].c == 'B'
}

// MaxShift is the largest scale Decode takes: 1/2^3, one pixel a block.
const MaxShift = 3

// Decode decodes the luma plane of the JPEG r holds, scaled by 1/2^shift
// (shift 0..MaxShift) through the reduced transform f (unused at shift
// 0): the image is ⌈w/2^shift⌉×⌈h/2^shift⌉ for a w×h JPEG, pixel (x, y)
// standing for the 2^shift×2^shift pixels from (x·2^shift, y·2^shift). A
// grey JPEG's one component is its luma. It returns ErrNotLuma, once the
// frame and scan headers show it, for a JPEG whose component 0 is not
// luma.
func Decode(r io.Reader, shift int, f Filter) (*image.Gray, error) {
	if shift < 0 || shift > MaxShift || f >= nFilters {
		panic("lumajpeg: shift or filter out of range")
	}
	d := decoders.Get().(*decoder)
	*d = decoder{shift: uint(shift), filter: f, huff: d.huff}
	for tc := range d.huff {
		for th := range d.huff[tc] {
			d.huff[tc][th].defined = false
		}
	}
	img, err := d.decode(r, false)
	if err != nil && d.gray != nil {
		Recycle(d.gray)
	}
	if err == nil && !d.lumaWritten {
		clear(d.gray.Pix)
	}
	d.r, d.gray, d.progCoeffs = nil, nil, [maxComponents][]block{}
	decoders.Put(d)
	if err != nil {
		return nil, err
	}
	return img.(*image.Gray), nil
}

// decoders holds decoders between calls of Decode: a decoder's Huffman
// tables take about 90 KB, which allocating afresh each time costs the
// zeroing of new memory, the collector's work and the tables' building
// (most JPEGs define the same tables).
var decoders = sync.Pool{New: func() any {
	return &decoder{huff: new([maxTc + 1][maxTh + 1]huffman)}
}}

// pixels holds the pixel buffers handed back by Recycle, as *[]byte.
var pixels sync.Pool

// Recycle hands the pixels of g, an image Decode returned, back for a
// later Decode to write its image into: the caller must not use g
// afterwards. Calling it is optional (an image not recycled is collected
// as any other); it spares a decode the allocation of a fresh image,
// which on a large photo costs as much as a tenth of the decode.
func Recycle(g *image.Gray) {
	if p := g.Pix[:cap(g.Pix)]; len(p) > 0 {
		pixels.Put(&p)
	}
}

// newPixels returns a buffer of n bytes, a recycled one if Recycle left
// one large enough. Its bytes are not zeroed: the decoder writes every
// pixel inside the image's bounds (or clears them, lumaWritten).
func newPixels(n int) []byte {
	if p, ok := pixels.Get().(*[]byte); ok && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]byte, n)
}
