// Copyright 2009 The Go Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package lumajpeg

import (
	"encoding/binary"
	"io"
)

// maxCodeLength is the maximum (inclusive) number of bits in a Huffman code.
const maxCodeLength = 16

// maxNCodes is the maximum (inclusive) number of codes in a Huffman tree.
const maxNCodes = 256

// lutSize is the log-2 size of the Huffman decoder's look-up tables.
const lutSize = 10

// huffman is a Huffman decoder, specified in section C.
type huffman struct {
	// length is the number of codes in the tree.
	nCodes int32
	// lut is the look-up table for the next lutSize bits in the
	// bit-stream: the high 8 bits of the uint16 are the decoded value, the
	// low 8 bits the code's length, or 0 if the code is longer. Its
	// entries are image/jpeg's decoding of those bits (its 8-bit table,
	// then its bit-by-bit search), whatever the table's codes, so that an
	// over-subscribed table decodes as there too.
	lut [1 << lutSize]uint16
	// fastAC holds, for an AC table, the symbols whose code and extra bits
	// fit in lutSize bits decoded whole, and, where the symbol after such
	// a symbol fits in the rest of those bits too, that symbol with it;
	// 0 otherwise. An entry e holds (fastAC* are the bit offsets):
	//   - the length of the code(s) and extra bits together, in bits 0-5,
	//     so that e itself is the shift count;
	//   - the first symbol's length, code and extra bits, in bits 6-11,
	//     and its code's length in bits 12-15;
	//   - the first symbol's zero run in bits 16-22 (eobRun for the
	//     end-of-block symbol, 0x00, which ends any block);
	//   - the second symbol's zero run plus one in bits 24-28, 0 for an
	//     entry of one symbol;
	//   - the first symbol's coefficient (before the successive
	//     approximation shift), an int16, in bits 32-47, the second's in
	//     bits 48-63 (0 for an entry of one symbol).
	fastAC [1 << lutSize]uint64
	// vals are the decoded values, sorted by their encoding; the values
	// past nCodes are zero.
	vals [maxNCodes]uint8
	// counts are the DHT's numbers of codes of each length, whose table
	// this is with vals.
	counts [maxCodeLength]uint8
	// defined reports that a DHT of the JPEG being decoded defined the
	// table: a table a pooled decoder keeps from an earlier JPEG is not,
	// and a scan that selects it finds it empty, as image/jpeg would.
	defined bool
	// minCodes[i] is the minimum code of length i, or -1 if there are no
	// codes of that length.
	minCodes [maxCodeLength]int32
	// maxCodes[i] is the maximum code of length i, or -1 if there are no
	// codes of that length.
	maxCodes [maxCodeLength]int32
	// valsIndices[i] is the index into vals of minCodes[i].
	valsIndices [maxCodeLength]int32
}

// eobRun is fastAC's zero run for the end-of-block symbol: past the last
// coefficient from any position.
const eobRun = blockSize

// errShortHuffmanData means that an unexpected EOF occurred while decoding
// Huffman data.
var errShortHuffmanData = FormatError("short Huffman data")

// processDHT processes a Define Huffman Table marker, and initializes a huffman
// struct from its contents. Specified in section B.2.4.2.
func (d *decoder) processDHT(n int) error {
	for n > 0 {
		if n < 17 {
			return FormatError("DHT has wrong length")
		}
		if err := d.readFull(d.tmp[:17]); err != nil {
			return err
		}
		tc := d.tmp[0] >> 4
		if tc > maxTc {
			return FormatError("bad Tc value")
		}
		th := d.tmp[0] & 0x0f
		// The baseline th <= 1 restriction is specified in table B.5.
		if th > maxTh || (d.baseline && th > 1) {
			return FormatError("bad Th value")
		}
		h := &d.huff[tc][th]

		// Read nCodes and vals (and derive total).
		// nCodes[i] is the number of codes with code length i.
		// total is the total number of codes.
		var (
			counts = [maxCodeLength]uint8(d.tmp[1:17])
			nCodes [maxCodeLength]int32
			total  int32
			vals   [maxNCodes]uint8
		)
		for i := range nCodes {
			nCodes[i] = int32(counts[i])
			total += nCodes[i]
		}
		if total == 0 {
			return FormatError("Huffman table has zero length")
		}
		if total > maxNCodes {
			return FormatError("Huffman table has excessive length")
		}
		n -= int(total) + 17
		if n < 0 {
			return FormatError("DHT has wrong length")
		}
		if err := d.readFull(vals[:total]); err != nil {
			return err
		}
		h.defined = true
		if h.nCodes == total && h.counts == counts && h.vals == vals {
			// The table of an earlier JPEG that the pooled decoder
			// decoded (or of an earlier DHT): built already.
			continue
		}
		h.nCodes, h.counts, h.vals = total, counts, vals

		// Derive image/jpeg's 8-bit look-up table: for every 8-bit
		// sequence whose high bits are a code of length 1+i ≤ 8, the value
		// in the high byte and 2+i in the low one. An over-subscribed
		// table's codes wrap in uint8 and overwrite each other there.
		var lut8 [256]uint16
		var x, code uint32
		for i := uint32(0); i < 8; i++ {
			code <<= 1
			for j := int32(0); j < nCodes[i]; j++ {
				base := uint8(code << (7 - i))
				lutValue := uint16(h.vals[x])<<8 | uint16(2+i)
				for k := uint8(0); k < 1<<(7-i); k++ {
					lut8[base|k] = lutValue
				}
				code++
				x++
			}
		}

		// Derive minCodes, maxCodes, and valsIndices.
		var c, index int32
		for i, n := range nCodes {
			if n == 0 {
				h.minCodes[i] = -1
				h.maxCodes[i] = -1
				h.valsIndices[i] = -1
			} else {
				h.minCodes[i] = c
				h.maxCodes[i] = c + n - 1
				h.valsIndices[i] = index
				c += n
				index += n
			}
			c <<= 1
		}
		h.buildTables(&lut8, tc == acTable)
	}
	return nil
}

// Bit offsets of the fields of a fastAC entry.
const (
	fastACLen1   = 6
	fastACCode1  = 12
	fastACRun1   = 16
	fastACStep2  = 24
	fastACCoeff1 = 32
	fastACCoeff2 = 48
)

// buildTables derives h.lut, and h.fastAC for an AC table, from
// image/jpeg's 8-bit table lut8 and the canonical codes: an entry is what
// image/jpeg decodes from those lutSize bits when at least 8 bits of data
// remain (its 8-bit table, else its bit-by-bit search from the first bit).
func (h *huffman) buildTables(lut8 *[256]uint16, ac bool) {
	for x := range h.lut {
		h.lut[x], h.fastAC[x] = 0, 0
		var value uint8
		var length uint32
		if v := lut8[x>>(lutSize-8)]; v != 0 {
			value, length = uint8(v>>8), uint32(v&0xff)-1
		} else {
			code := int32(0)
			for i := 0; i < lutSize; i++ {
				code |= int32(x>>(lutSize-1-i)) & 1
				if code <= h.maxCodes[i] {
					k := h.valsIndices[i] + code - h.minCodes[i]
					if k < 0 || k >= maxNCodes {
						break // image/jpeg would index out of range: leave it the slow path
					}
					value, length = h.vals[k], uint32(i+1)
					break
				}
				code <<= 1
			}
			if length == 0 {
				continue
			}
		}
		h.lut[x] = uint16(value)<<8 | uint16(length)
		size := uint32(value & 0x0f)
		if ac && value == 0x00 {
			h.fastAC[x] = uint64(length)<<fastACCode1 | eobRun<<fastACRun1 | uint64(length)<<fastACLen1 | uint64(length)
		}
		if !ac || size == 0 || length+size > lutSize {
			continue
		}
		// RECEIVE and EXTEND of the size bits after the code.
		c := extend(int32(x>>(lutSize-length-size))&(1<<size-1), size)
		l := uint64(length + size)
		h.fastAC[x] = uint64(uint16(c))<<fastACCoeff1 | uint64(value>>4)<<fastACRun1 | uint64(length)<<fastACCode1 | l<<fastACLen1 | l
	}
	if ac {
		h.pairSymbols()
	}
}

// pairSymbols adds to each fastAC entry of one coefficient the next
// symbol, where that is a coefficient whose code and extra bits fit in
// the entry's remaining bits whatever bits follow them: those that the
// entry of one symbol at the bits after the first symbol's decodes alike
// (so also for a table image/jpeg reads with its quirks).
func (h *huffman) pairSymbols() {
	one := h.fastAC
	// same[j] is the largest k with j a multiple of 2^k and one[j] ...
	// one[j+2^k-1] all equal.
	var same [1 << lutSize]uint8
	for k := 1; k <= lutSize; k++ {
		half := 1 << (k - 1)
		for j := 0; j < len(one); j += 2 * half {
			if int(same[j]) == k-1 && int(same[j+half]) == k-1 && one[j] == one[j+half] {
				same[j] = uint8(k)
			}
		}
	}
	for x, e := range one {
		if e == 0 || e>>fastACRun1&0x7f == eobRun {
			continue
		}
		l1 := uint32(e & 63)
		j := x << l1 & (1<<lutSize - 1)
		e2 := one[j]
		if e2 == 0 || e2>>fastACRun1&0x7f == eobRun || uint32(e2&63)+l1 > lutSize || uint32(same[j]) < l1 {
			continue
		}
		h.fastAC[x] = (e2&(0xffff<<fastACCoeff1))<<(fastACCoeff2-fastACCoeff1) | (e2>>fastACRun1&0x7f+1)<<fastACStep2 | e&^63 | (uint64(l1) + e2&63)
	}
}

// decodeHuffman returns the next Huffman-coded value from the bit-stream,
// decoded according to h, as image/jpeg does: with its table when at
// least 8 bits of data remain, else bit by bit, failing if the code
// needs more bits than the data holds.
func (d *decoder) decodeHuffman(h *huffman) (uint8, error) {
	if h.nCodes == 0 {
		return 0, FormatError("uninitialized Huffman table")
	}
	if d.bits.n < 32 {
		d.refill()
	}
	if d.bits.n-d.bits.padded >= 8 {
		if v := h.lut[d.bits.acc>>(64-lutSize)]; v != 0 {
			n := uint32(v & 0xff)
			d.bits.acc <<= n
			d.bits.n -= int32(n)
			if d.bits.n < d.bits.padded {
				return 0, d.bits.end
			}
			return uint8(v >> 8), nil
		}
	}
	return d.decodeHuffmanSlow(h)
}

// decodeHuffmanSlow is image/jpeg's bit-by-bit search for the next code.
// It needs d.bits.n ≥ maxCodeLength.
func (d *decoder) decodeHuffmanSlow(h *huffman) (uint8, error) {
	if h.nCodes == 0 {
		return 0, FormatError("uninitialized Huffman table")
	}
	code := int32(0)
	for i := 0; i < maxCodeLength; i++ {
		code |= int32(d.bits.acc >> 63)
		d.bits.acc <<= 1
		d.bits.n--
		if d.bits.n < d.bits.padded {
			return 0, d.bits.end
		}
		if code <= h.maxCodes[i] {
			return h.vals[h.valsIndices[i]+code-h.minCodes[i]], nil
		}
		code <<= 1
	}
	return 0, FormatError("bad Huffman code")
}

// receiveExtend is the composition of RECEIVE and EXTEND, specified in section
// F.2.2.1.
func (d *decoder) receiveExtend(t uint8) (int32, error) {
	if t == 0 {
		return 0, nil
	}
	x, err := d.decodeBits(int32(t))
	if err != nil {
		return 0, err
	}
	return extend(int32(x), uint32(t)), nil
}

// extend is EXTEND (section F.2.2.1): the value of the t (1 ≤ t ≤ 16) bits
// x that RECEIVE read.
// It takes no branch, whose outcome (the coefficient's sign) the CPU
// could not predict: x − (2^t − 1) if the top one of the t bits is 0.
func extend(x int32, t uint32) int32 {
	m := 1 - x>>((t-1)&31)
	return x - m<<t + m
}

func (d *decoder) decodeBit() (bool, error) {
	b, err := d.decodeBits(1)
	return b != 0, err
}

// decodeBits returns the next n bits (1 ≤ n ≤ 16), failing as image/jpeg
// does if the data holds fewer.
func (d *decoder) decodeBits(n int32) (uint32, error) {
	if d.bits.n < 32 {
		d.refill()
	}
	if d.bits.n-d.bits.padded < n {
		return 0, d.bits.end
	}
	ret := uint32(d.bits.acc >> (64 - n))
	d.bits.acc <<= uint32(n)
	d.bits.n -= n
	return ret, nil
}

// noFF reports whether none of x's 8 bytes is 0xff.
func noFF(x uint64) bool {
	y := ^x
	return (y-0x0101010101010101)&^y&0x8080808080808080 == 0
}

// refill tops the bit accumulator up to more than 56 bits from the
// entropy-coded data, undoing byte stuffing. At a marker or at the end of
// the input it stops, leaving the marker unread, records why in
// d.bits.end, and appends zero bits counted in d.bits.padded: reading
// those is an error, found by d.bits.n < d.bits.padded.
func (d *decoder) refill() {
	for d.bits.n <= 56 {
		if d.bits.end != nil {
			d.bits.n += 8
			d.bits.padded += 8
			continue
		}
		i, j := d.bytes.i, d.bytes.j
		if j-i >= 8 {
			x := binary.BigEndian.Uint64(d.bytes.buf[i:])
			if noFF(x) {
				// No 0xff byte in the next 8: take as many whole bytes as fit.
				k := (64 - d.bits.n) >> 3
				x = x >> (64 - 8*k) << (64 - 8*k)
				d.bits.acc |= x >> uint32(d.bits.n)
				d.bits.n += 8 * k
				d.bytes.i += int(k)
				return
			}
		}
		if i == j || i+1 == j && d.bytes.buf[i] == 0xff {
			// fill keeps an unread 0xff, whose next byte says what it is.
			if err := d.fill(); err != nil {
				d.endData(err)
			}
			continue
		}
		c := d.bytes.buf[i]
		if c == 0xff {
			if d.bytes.buf[i+1] != 0x00 {
				d.bits.end = errMissingFF00
				continue
			}
			d.bytes.i++
		}
		d.bytes.i++
		d.bits.acc |= uint64(c) << (56 - uint32(d.bits.n))
		d.bits.n += 8
	}
}

// endData records a read error that ended the entropy-coded data as
// image/jpeg reports it.
func (d *decoder) endData(err error) {
	if err == io.ErrUnexpectedEOF {
		err = errShortHuffmanData
	}
	d.bits.end = err
}
