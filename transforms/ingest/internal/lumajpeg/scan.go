// Copyright 2012 The Go Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package lumajpeg

import (
	"bytes"
	"encoding/binary"
	"image"
)

// makeImg allocates and initializes the destination image.
func (d *decoder) makeImg(mxx, myy int) error {
	if d.nComp == 4 || d.nComp == 3 && d.isRGB() {
		return ErrNotLuma
	}
	h0, v0 := 1, 1
	if d.nComp != 1 {
		h0, v0 = d.comp[0].h, d.comp[0].v
	}
	// Whole blocks, as image/jpeg allocates them, each 8>>shift pixels a
	// side; the image is cut to the frame's size, rounded up.
	w, h := (8*h0*mxx)>>d.shift, (8*v0*myy)>>d.shift
	m := &image.Gray{Pix: newPixels(w * h), Stride: w, Rect: image.Rect(0, 0, w, h)}
	s := 1<<d.shift - 1
	d.gray = m.SubImage(image.Rect(0, 0, (d.width+s)>>d.shift, (d.height+s)>>d.shift)).(*image.Gray)
	return nil
}

// scanComponent is a component of a scan and its Huffman tables.
type scanComponent struct {
	compIndex uint8
	td        uint8 // DC table selector.
	ta        uint8 // AC table selector.
}

// lumaIn reports whether a scan of these components holds luma.
func lumaIn(scan []scanComponent) bool {
	for _, s := range scan {
		if s.compIndex == 0 {
			return true
		}
	}
	return false
}

func (d *decoder) processSOS(n int) error {
	if d.nComp == 0 {
		return FormatError("missing SOF marker")
	}
	if n < 6 || 4+2*d.nComp < n || n%2 != 0 {
		return FormatError("SOS has wrong length")
	}
	if err := d.readFull(d.tmp[:n]); err != nil {
		return err
	}
	nComp := int(d.tmp[0])
	if n != 4+2*nComp {
		return FormatError("SOS length inconsistent with number of components")
	}
	var scan [maxComponents]scanComponent
	totalHV := 0
	for i := 0; i < nComp; i++ {
		cs := d.tmp[1+2*i] // Component selector.
		compIndex := -1
		for j, comp := range d.comp[:d.nComp] {
			if cs == comp.c {
				compIndex = j
			}
		}
		if compIndex < 0 {
			return FormatError("unknown component selector")
		}
		scan[i].compIndex = uint8(compIndex)
		// Section B.2.3 states that "the value of Cs_j shall be different from
		// the values of Cs_1 through Cs_(j-1)". Since we have previously
		// verified that a frame's component identifiers (C_i values in section
		// B.2.2) are unique, it suffices to check that the implicit indexes
		// into d.comp are unique.
		for j := 0; j < i; j++ {
			if scan[i].compIndex == scan[j].compIndex {
				return FormatError("repeated component selector")
			}
		}
		totalHV += d.comp[compIndex].h * d.comp[compIndex].v

		// The baseline t <= 1 restriction is specified in table B.3.
		scan[i].td = d.tmp[2+2*i] >> 4
		if t := scan[i].td; t > maxTh || (d.baseline && t > 1) {
			return FormatError("bad Td value")
		}
		scan[i].ta = d.tmp[2+2*i] & 0x0f
		if t := scan[i].ta; t > maxTh || (d.baseline && t > 1) {
			return FormatError("bad Ta value")
		}
	}
	// Section B.2.3 states that if there is more than one component then the
	// total H*V values in a scan must be <= 10.
	if d.nComp > 1 && totalHV > 10 {
		return FormatError("total sampling factors too large")
	}

	// zigStart and zigEnd are the spectral selection bounds.
	// ah and al are the successive approximation high and low values.
	// The spec calls these values Ss, Se, Ah and Al.
	//
	// For progressive JPEGs, these are the two more-or-less independent
	// aspects of progression. Spectral selection progression is when not
	// all of a block's 64 DCT coefficients are transmitted in one pass.
	// For example, three passes could transmit coefficient 0 (the DC
	// component), coefficients 1-5, and coefficients 6-63, in zig-zag
	// order. Successive approximation is when not all of the bits of a
	// band of coefficients are transmitted in one pass. For example,
	// three passes could transmit the 6 most significant bits, followed
	// by the second-least significant bit, followed by the least
	// significant bit.
	//
	// For sequential JPEGs, these parameters are hard-coded to 0/63/0/0, as
	// per table B.3.
	zigStart, zigEnd, ah, al := int32(0), int32(blockSize-1), uint32(0), uint32(0)
	if d.progressive {
		zigStart = int32(d.tmp[1+2*nComp])
		zigEnd = int32(d.tmp[2+2*nComp])
		ah = uint32(d.tmp[3+2*nComp] >> 4)
		al = uint32(d.tmp[3+2*nComp] & 0x0f)
		if (zigStart == 0 && zigEnd != 0) || zigStart > zigEnd || blockSize <= zigEnd {
			return FormatError("bad spectral selection bounds")
		}
		if zigStart != 0 && nComp != 1 {
			return FormatError("progressive AC coefficients for more than one component")
		}
		if ah != 0 && ah != al+1 {
			return FormatError("bad successive approximation values")
		}
	}

	// mxx and myy are the number of MCUs (Minimum Coded Units) in the image.
	h0, v0 := d.comp[0].h, d.comp[0].v // The h and v values from the Y components.
	mxx := (d.width + 8*h0 - 1) / (8 * h0)
	myy := (d.height + 8*v0 - 1) / (8 * v0)
	if d.gray == nil {
		if err := d.makeImg(mxx, myy); err != nil {
			return err
		}
	}
	// A table this JPEG has not defined is empty, as in a new decoder.
	for _, c := range scan[:nComp] {
		for _, h := range []*huffman{&d.huff[dcTable][c.td], &d.huff[acTable][c.ta]} {
			if !h.defined && h.nCodes != 0 {
				*h = huffman{}
			}
		}
	}
	// A scan of chroma alone is skipped unread (only luma is decoded), so
	// chroma's coefficients are never stored. End-of-band runs end with
	// their scan, as in libjpeg (image/jpeg carries a run past a scan's
	// last block into the next scan).
	d.eobRun = 0
	if !lumaIn(scan[:nComp]) {
		return d.skipScan()
	}
	if d.progressive && d.progCoeffs[0] == nil {
		d.progCoeffs[0] = make([]block, mxx*myy*d.comp[0].h*d.comp[0].v)
	}

	// A sequential scan's luma is dequantised as it is decoded; a
	// progressive one's once its last scan is read. Each coefficient c is
	// stored as (c<<al)·q, which in int32 is c·(q<<al).
	qt := &d.quant[d.comp[0].tq]
	if d.progressive {
		qt = &unitQuant
	} else if d.shift != 0 {
		sq := dequantTable(qt, d.filter, d.shift)
		qt = &sq
	}
	var qs block
	for i, q := range qt {
		qs[i] = q << al
	}

	// A sequential scan's luma at full size goes to idctAVX2, which takes
	// its coefficients transposed as well.
	d.transposed = !d.progressive && d.shift == 0 && useAVX2
	d.order = unzig8
	if d.transposed {
		d.order = unzigT8
	}

	d.bits = bits{}
	mcu, expectedRST := 0, uint8(rst0Marker)
	var (
		// coeffs is a sequential scan's luma block, in natural (not
		// zig-zag) order.
		coeffs block
		dc     [maxComponents]int32
		// bx and by are the location of the current block, in units of 8x8
		// blocks: the third block in the first row has (bx, by) = (2, 0).
		bx, by     int
		blockCount int
	)
	for my := 0; my < myy; my++ {
		for mx := 0; mx < mxx; mx++ {
			for i := 0; i < nComp; i++ {
				compIndex := scan[i].compIndex
				hi := d.comp[compIndex].h
				vi := d.comp[compIndex].v
				for j := 0; j < hi*vi; j++ {
					// The blocks are traversed one MCU at a time. For 4:2:0 chroma
					// subsampling, there are four Y 8x8 blocks in every 16x16 MCU.
					//
					// For a sequential 32x16 pixel image, the Y blocks visiting order is:
					//	0 1 4 5
					//	2 3 6 7
					//
					// For progressive images, the interleaved scans (those with nComp > 1)
					// are traversed as above, but non-interleaved scans are traversed left
					// to right, top to bottom:
					//	0 1 2 3
					//	4 5 6 7
					// Only DC scans (zigStart == 0) can be interleaved. AC scans must have
					// only one component.
					//
					// To further complicate matters, for non-interleaved scans, there is no
					// data for any blocks that are inside the image at the MCU level but
					// outside the image at the pixel level. For example, a 24x16 pixel 4:2:0
					// progressive image consists of two 16x16 MCUs. The interleaved scans
					// will process 8 Y blocks:
					//	0 1 4 5
					//	2 3 6 7
					// The non-interleaved scans will process only 6 Y blocks:
					//	0 1 2
					//	3 4 5
					if nComp != 1 {
						bx = hi*mx + j%hi
						by = vi*my + j/hi
					} else {
						q := mxx * hi
						bx = blockCount % q
						by = blockCount / q
						blockCount++
						if bx*8 >= d.width || by*8 >= d.height {
							continue
						}
					}

					// Luma's coefficients are decoded into b; chroma's are read
					// past (b == nil).
					var b *block
					if compIndex == 0 {
						if d.progressive {
							b = &d.progCoeffs[0][by*mxx*hi+bx]
						} else {
							b = &coeffs
							*b = block{}
						}
					}
					var (
						err  error
						rows uint8
					)
					if ah != 0 {
						err = d.refine(b, &d.huff[acTable][scan[i].ta], zigStart, zigEnd, 1<<al)
					} else {
						rows, err = d.decodeBlock(b, &qs, &d.huff[dcTable][scan[i].td], &d.huff[acTable][scan[i].ta], &dc[compIndex], zigStart, zigEnd)
					}
					if err != nil {
						if d.bits.n < d.bits.padded {
							// The data ended before the error: image/jpeg stops there.
							return d.bits.end
						}
						return err
					}
					if b != nil && !d.progressive {
						d.storeBlock(b, bx, by, rows)
					}
				} // for j
			} // for i
			if d.bits.n < d.bits.padded {
				// The MCU read past the end of the data: image/jpeg stops there.
				return d.bits.end
			}
			mcu++
			if d.ri > 0 && mcu%d.ri == 0 && mcu < mxx*myy {
				// For well-formed input, the RST[0-7] restart marker follows
				// immediately. For corrupt input, call findRST to try to
				// resynchronize.
				if err := d.readFull(d.tmp[:2]); err != nil {
					return err
				} else if d.tmp[0] != 0xff || d.tmp[1] != expectedRST {
					if err := d.findRST(expectedRST); err != nil {
						return err
					}
				}
				expectedRST++
				if expectedRST == rst7Marker+1 {
					expectedRST = rst0Marker
				}
				// Reset the Huffman decoder.
				d.bits = bits{}
				// Reset the DC components, as per section F.2.1.3.1.
				dc = [maxComponents]int32{}
				// Reset the progressive decoder state, as per section G.1.2.2.
				d.eobRun = 0
			}
		} // for mx
	} // for my
	if !d.progressive {
		d.lumaWritten = true
	}
	return nil
}

// refine decodes a successive approximation refinement block, as specified in
// section G.1.2.
func (d *decoder) refine(b *block, h *huffman, zigStart, zigEnd, delta int32) error {
	// Refining a DC component is trivial.
	if zigStart == 0 {
		if zigEnd != 0 {
			panic("unreachable")
		}
		bit, err := d.decodeBit()
		if err != nil {
			return err
		}
		if bit && b != nil {
			b[0] |= delta
		}
		return nil
	}

	// Refining AC components is more complicated; see sections G.1.2.2 and G.1.2.3.
	zig := zigStart
	if d.eobRun == 0 {
	loop:
		for ; zig <= zigEnd; zig++ {
			z := int32(0)
			value, err := d.decodeHuffman(h)
			if err != nil {
				return err
			}
			val0 := value >> 4
			val1 := value & 0x0f

			switch val1 {
			case 0:
				if val0 != 0x0f {
					if err := d.readEOBRun(val0); err != nil {
						return err
					}
					break loop
				}
			case 1:
				z = delta
				bit, err := d.decodeBit()
				if err != nil {
					return err
				}
				if !bit {
					z = -z
				}
			default:
				return FormatError("unexpected Huffman code")
			}

			zig, err = d.refineNonZeroes(b, zig, zigEnd, int32(val0), delta)
			if err != nil {
				return err
			}
			if zig > zigEnd {
				return FormatError("too many coefficients")
			}
			if z != 0 {
				b[unzig[zig]] = z
			}
		}
	}
	if d.eobRun > 0 {
		d.eobRun--
		if _, err := d.refineNonZeroes(b, zig, zigEnd, -1, delta); err != nil {
			return err
		}
	}
	return nil
}

// refineNonZeroes refines non-zero entries of b in zig-zag order. If nz >= 0,
// the first nz zero entries are skipped over.
func (d *decoder) refineNonZeroes(b *block, zig, zigEnd, nz, delta int32) (int32, error) {
	for ; zig <= zigEnd; zig++ {
		u := unzig[zig]
		if b[u] == 0 {
			if nz == 0 {
				break
			}
			nz--
			continue
		}
		bit, err := d.decodeBit()
		if err != nil {
			return 0, err
		}
		if !bit {
			continue
		}
		if b[u] >= 0 {
			b[u] += delta
		} else {
			b[u] -= delta
		}
	}
	return zig, nil
}

func (d *decoder) reconstructProgressiveImage() error {
	// The h0, mxx, by and bx variables have the same meaning as in the
	// processSOS method.
	if d.shift != 0 {
		d.scaledQuant = dequantTable(&d.quant[d.comp[0].tq], d.filter, d.shift)
	}
	h0 := d.comp[0].h
	mxx := (d.width + 8*h0 - 1) / (8 * h0)
	for i := 0; i < 1; i++ { // luma only
		if d.progCoeffs[i] == nil {
			continue
		}
		d.lumaWritten = true
		v := 8 * d.comp[0].v / d.comp[i].v
		h := 8 * d.comp[0].h / d.comp[i].h
		stride := mxx * d.comp[i].h
		for by := 0; by*v < d.height; by++ {
			for bx := 0; bx*h < d.width; bx++ {
				d.reconstructBlock(&d.progCoeffs[i][by*stride+bx], bx, by)
			}
		}
	}
	return nil
}

// reconstructBlock dequantizes a progressive JPEG's luma block, performs
// the inverse DCT and stores the block to the image.
func (d *decoder) reconstructBlock(b *block, bx, by int) {
	qt := &d.quant[d.comp[0].tq]
	n := 8 >> d.shift
	if d.shift != 0 {
		// Only the top-left n×n coefficients are used: dequantise those.
		var rows uint8
		for zig := 0; zig < blockSize; zig++ {
			if k := unzig[zig]; k%8 < n && k/8 < n {
				b[k] *= d.scaledQuant[zig]
				if zig > 0 && b[k] != 0 {
					rows |= zigRow[zig]
				}
			}
		}
		d.storeBlock(b, bx, by, rows)
		return
	}
	var rows uint8
	b[0] *= qt[0]
	for zig := 1; zig < blockSize; zig++ {
		if c := b[unzig[zig]]; c != 0 {
			b[unzig[zig]] = c * qt[zig]
			rows |= zigRow[zig]
		}
	}
	d.storeBlock(b, bx, by, rows)
}

// storeBlock performs the inverse DCT of a dequantised luma block and
// stores it to the image. rows has bit r set if row r of b may hold a
// non-zero AC coefficient: b's other rows are zero but for the DC. With
// d.transposed, b holds the block transposed, and rows is only 0 or not.
func (d *decoder) storeBlock(b *block, bx, by int, rows uint8) {
	n := 8 >> d.shift
	stride := d.gray.Stride
	dst := d.gray.Pix[n*(by*stride+bx):]
	if d.shift != 0 {
		idctScaled(b, n, dst, stride, rows)
		return
	}
	if rows == 0 {
		// A DC coefficient alone: idct's row pass makes every row value
		// DC<<17, its column pass (DC<<17 + 1<<19)>>20 (TestStoreBlock).
		p := level((b[0]<<17 + 1<<19) >> 20)
		for y := 0; y < 8; y++ {
			row := dst[y*stride : y*stride+8]
			for x := range row {
				row[x] = p
			}
		}
		return
	}
	if rows == 1 && !d.transposed {
		// Only row 0 is non-zero after the row pass: a column holding x
		// alone there is (x + 1<<19)>>20 all down (TestStoreBlock).
		idctRowsSparse(b, rows)
		var p [8]uint8
		for x := range p {
			p[x] = level((b[x] + 1<<19) >> 20)
		}
		for y := 0; y < 8; y++ {
			copy(dst[y*stride:y*stride+8], p[:])
		}
		return
	}
	idctStore(b, dst, stride, d.transposed)
}

// zigRow[zig] is the bit of the row that the zig-zag index zig is in, for
// the AC coefficients (zigRow[0] is 0).
var zigRow = func() (t [blockSize]uint8) {
	for zig := 1; zig < blockSize; zig++ {
		t[zig] = 1 << (unzig[zig] / 8)
	}
	return t
}()

// unzig8 is unzig in bytes, for indexes the compiler sees are below 64.
var unzig8 = func() (t [blockSize]uint8) {
	for i, k := range unzig {
		t[i] = uint8(k)
	}
	return t
}()

// unzigT8 is unzig8 transposed: the position of each zig-zag index in
// the transpose of the natural order.
var unzigT8 = func() (t [blockSize]uint8) {
	for i, k := range unzig8 {
		t[i] = k%8*8 + k/8
	}
	return t
}()

// unitQuant dequantises nothing: a progressive scan's coefficients are
// stored as decoded, and dequantised once the last scan is read.
var unitQuant = func() (t block) {
	for i := range t {
		t[i] = 1
	}
	return t
}()

// level level-shifts an IDCT output by 128 and clips it to a byte, as clip
// does, without branches.
func level(c int32) uint8 {
	return uint8(min(max(c+128, 0), 255))
}

// findRST advances past the next RST restart marker that matches expectedRST.
// Other than I/O errors, it is also an error if we encounter an {0xFF, M}
// two-byte marker sequence where M is not 0x00, 0xFF or the expectedRST.
//
// This is similar to libjpeg's jdmarker.c's next_marker function.
// https://github.com/libjpeg-turbo/libjpeg-turbo/blob/2dfe6c0fe9e18671105e94f7cbf044d4a1d157e6/jdmarker.c#L892-L935
//
// Precondition: d.tmp[:2] holds the next two bytes of JPEG-encoded input
// (input in the d.readFull sense).
func (d *decoder) findRST(expectedRST uint8) error {
	for {
		// i is the index such that, at the bottom of the loop, we read 2-i
		// bytes into d.tmp[i:2], maintaining the invariant that d.tmp[:2]
		// holds the next two bytes of JPEG-encoded input. It is either 0 or 1,
		// so that each iteration advances by 1 or 2 bytes (or returns).
		i := 0

		if d.tmp[0] == 0xff {
			if d.tmp[1] == expectedRST {
				return nil
			} else if d.tmp[1] == 0xff {
				i = 1
			} else if d.tmp[1] != 0x00 {
				// libjpeg's jdmarker.c's jpeg_resync_to_restart does something
				// fancy here, treating RST markers within two (modulo 8) of
				// expectedRST differently from RST markers that are 'more
				// distant'. Until we see evidence that recovering from such
				// cases is frequent enough to be worth the complexity, we take
				// a simpler approach for now. Any marker that's not 0x00, 0xff
				// or expectedRST is a fatal FormatError.
				return FormatError("bad RST marker")
			}

		} else if d.tmp[1] == 0xff {
			d.tmp[0] = 0xff
			i = 1
		}

		if err := d.readFull(d.tmp[i:2]); err != nil {
			return err
		}
	}
}

// skipScan advances past a scan's entropy-coded data, to the marker (other
// than a restart marker) that ends it.
func (d *decoder) skipScan() error {
	for {
		buf := d.bytes.buf[d.bytes.i:d.bytes.j]
		k := bytes.IndexByte(buf, 0xff)
		if k < 0 || k+1 == len(buf) {
			if k < 0 {
				d.bytes.i = d.bytes.j
			} else {
				d.bytes.i += k
			}
			if err := d.fill(); err != nil {
				return err
			}
			continue
		}
		if m := buf[k+1]; m != 0x00 && (m < rst0Marker || m > rst7Marker) {
			d.bytes.i += k
			return nil
		}
		d.bytes.i += k + 2
	}
}

// decodeBlock decodes a block's coefficients zigStart..zigEnd of a
// sequential scan or a progressive scan's first pass (Ah = 0), specified
// in sections F.2.2.1, F.2.2.2 and G.1.2.2, into b in natural order,
// multiplied by qt (in zig-zag order: the quantisation table shifted left
// by the scan's successive approximation Al); with b nil it reads past
// them. It returns the rows (bit r for row r) in which it may have
// stored AC coefficients: 0 if none, else all unless decodeBlockSlow
// stored them. dc is the component's DC predictor. It decodes what
// image/jpeg decodes, with the tables alone while at least 32 bits
// of data remain (a code and its extra bits take at most 32), the AC
// codes and coefficients in one look-up, else by decodeBlockSlow.
func (d *decoder) decodeBlock(b *block, qt *block, dcH, acH *huffman, dc *int32, zigStart, zigEnd int32) (rows uint8, err error) {
	if b == nil {
		// Stores to a block nobody reads cost less than testing for nil.
		b = &d.discard
	}
	zig := zigStart
	if zig > 0 && d.eobRun > 0 {
		d.eobRun--
		return 0, nil
	}
	acc, n := d.bits.acc, d.bits.n
	for ; zig <= zigEnd; zig++ {
		if n < 32 {
			// refill, its common case inlined: 8 buffered bytes without
			// an 0xff.
			if i := d.bytes.i; i+8 <= d.bytes.j && noFF(binary.BigEndian.Uint64(d.bytes.buf[i:])) {
				k := (64 - n) >> 3
				acc |= binary.BigEndian.Uint64(d.bytes.buf[i:]) >> (64 - 8*k) << (64 - 8*k) >> n
				n += 8 * k
				d.bytes.i = i + int(k)
			} else {
				d.bits.acc, d.bits.n = acc, n
				d.refill()
				acc, n = d.bits.acc, d.bits.n
			}
			// Padding bits enter acc only in refill: while none has,
			// every bit in acc is data.
			if n-d.bits.padded < 32 {
				d.bits.acc, d.bits.n = acc, n
				r, err := d.decodeBlockSlow(b, qt, dcH, acH, dc, zig, zigEnd)
				return rows | r, err
			}
		}
		x := acc >> (64 - lutSize)
		if zig == 0 {
			// The DC coefficient, as specified in section F.2.2.1.
			var value uint8
			if v := dcH.lut[x]; v != 0 {
				// The length is at most 16: v&63 is it.
				acc <<= v & 63
				n -= int32(v & 63)
				value = uint8(v >> 8)
			} else {
				d.bits.acc, d.bits.n = acc, n
				if value, err = d.decodeHuffmanSlow(dcH); err != nil {
					return 0, err
				}
				acc, n = d.bits.acc, d.bits.n
			}
			if value > 16 {
				return 0, UnsupportedError("excessive DC component")
			}
			if t := uint32(value); t != 0 {
				*dc += extend(int32(acc>>((64-t)&63)), t)
				acc <<= t
				n -= int32(t)
			}
			b[0] = *dc * qt[0]
			if zig < zigEnd && d.eobRun > 0 {
				d.eobRun--
				break
			}
			continue
		}
		if e := acH.fastAC[x]; e != 0 {
			z1 := zig + int32(e>>fastACRun1&0x7f)
			z2 := z1 + int32(e>>fastACStep2&0x1f)
			if z2 <= zigEnd {
				// One or two coefficients: the second is stored first, so
				// that an entry of one symbol (z2 = z1) stores its own.
				acc <<= e & 63
				n -= int32(e & 63)
				z := z2 & 63
				k := d.order[z]
				b[k&63] = int32(int64(e)>>fastACCoeff2) * qt[z]
				z = z1 & 63
				k = d.order[z]
				b[k&63] = int32(int16(e>>fastACCoeff1)) * qt[z]
				rows = 0xff
				zig = z2
				continue
			}
			if z1 > zigEnd {
				// An end of block (whose run of 1 image/jpeg counts down
				// to 0 at once), or a run past the band, where image/jpeg
				// stops before the coefficient's bits.
				l := uint32(e>>fastACCode1) & 0x0f
				acc <<= l
				n -= int32(l)
				break
			}
			// The first symbol alone: the second is past the band.
			l := uint32(e>>fastACLen1) & 63
			acc <<= l
			n -= int32(l)
			z := z1 & 63
			k := d.order[z]
			b[k&63] = int32(int16(e>>fastACCoeff1)) * qt[z]
			rows = 0xff
			zig = z1
			continue
		}
		var value uint8
		if v := acH.lut[x]; v != 0 {
			acc <<= v & 63
			n -= int32(v & 63)
			value = uint8(v >> 8)
		} else {
			d.bits.acc, d.bits.n = acc, n
			var err error
			if value, err = d.decodeHuffmanSlow(acH); err != nil {
				return 0, err
			}
			acc, n = d.bits.acc, d.bits.n
		}
		val0 := int32(value >> 4)
		val1 := uint32(value & 0x0f)
		if val1 != 0 {
			zig += val0
			if zig > zigEnd {
				break
			}
			// At least 16 bits of data remain.
			c := extend(int32(acc>>((64-val1)&63)), val1)
			acc <<= val1
			n -= int32(val1)
			z := zig & 63
			k := d.order[z]
			b[k&63] = c * qt[z]
			rows = 0xff
			continue
		}
		if val0 != 0x0f {
			eobRun := uint16(1) << val0
			if val0 != 0 {
				eobRun |= uint16(acc >> (64 - val0))
				acc <<= uint32(val0)
				n -= val0
			}
			d.eobRun = eobRun - 1
			break
		}
		zig += 0x0f
	}
	d.bits.acc, d.bits.n = acc, n
	return rows, nil
}

// decodeBlockSlow is decodeBlock from coefficient zig on through
// decodeHuffman and receiveExtend, which check each read against the
// data's end. Past the DC coefficient, the block's end-of-band run was
// looked at already.
func (d *decoder) decodeBlockSlow(b *block, qt *block, dcH, acH *huffman, dc *int32, zig, zigEnd int32) (rows uint8, err error) {
	if zig == 0 {
		zig++
		// Decode the DC coefficient, as specified in section F.2.2.1.
		value, err := d.decodeHuffman(dcH)
		if err != nil {
			return 0, err
		}
		if value > 16 {
			return 0, UnsupportedError("excessive DC component")
		}
		dcDelta, err := d.receiveExtend(value)
		if err != nil {
			return 0, err
		}
		*dc += dcDelta
		if b != nil {
			b[0] = *dc * qt[0]
		}
		if zig > zigEnd {
			return 0, nil
		}
		if d.eobRun > 0 {
			d.eobRun--
			return 0, nil
		}
	}
	for ; zig <= zigEnd; zig++ {
		value, err := d.decodeHuffman(acH)
		if err != nil {
			return 0, err
		}
		val0 := value >> 4
		val1 := value & 0x0f
		if val1 != 0 {
			zig += int32(val0)
			if zig > zigEnd {
				break
			}
			ac, err := d.receiveExtend(val1)
			if err != nil {
				return 0, err
			}
			if b != nil {
				b[d.order[zig]] = ac * qt[zig]
				rows |= zigRow[zig]
			}
		} else {
			if val0 != 0x0f {
				if err := d.readEOBRun(val0); err != nil {
					return 0, err
				}
				d.eobRun--
				break
			}
			zig += 0x0f
		}
	}
	return rows, nil
}

// readEOBRun sets d.eobRun to the end-of-band run of an EOBn symbol,
// 2^n plus the n bits that follow it (section G.1.2.2).
func (d *decoder) readEOBRun(n uint8) error {
	d.eobRun = uint16(1 << n)
	if n != 0 {
		bits, err := d.decodeBits(int32(n))
		if err != nil {
			return err
		}
		d.eobRun |= uint16(bits)
	}
	return nil
}
