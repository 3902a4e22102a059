package itq

import "math/bits"

// Code is a packed binary code (package doc, Codes): bit j is bit j mod 64 of
// word j/64, set when the j-th projection is ≥ 0. A []uint64 converts to a
// Code implicitly, so functions taking a Code accept plain word slices.
type Code []uint64

// Words returns the number of uint64 words a code of the given number of
// bits occupies, ⌈bits/64⌉.
func Words(bits int) int { return (bits + 63) / 64 }

// Pack sets bit j of the code to 1 when v[j] ≥ 0 and to 0 otherwise (so NaN
// gives 0), for j < len(v), and returns the code. It reuses dst when its
// capacity suffices and allocates otherwise; the result has Words(len(v))
// words and zero high bits.
func Pack(v []float64, dst Code) Code {
	w := Words(len(v))
	if cap(dst) >= w {
		dst = dst[:w]
		clear(dst)
	} else {
		dst = make(Code, w)
	}
	for j, x := range v {
		if x >= 0 {
			dst[j>>6] |= 1 << (uint(j) & 63)
		}
	}
	return dst
}

// Bit reports whether bit j of c is set. It panics if j is out of range.
func (c Code) Bit(j int) bool { return c[j>>6]>>(uint(j)&63)&1 == 1 }

// Hamming returns the number of bits in which a and b differ. It panics if
// they do not have the same number of words, which is a programming error:
// codes from different models are not comparable.
func Hamming(a, b Code) int {
	if len(a) != len(b) {
		panic("itq: Hamming of codes with different word counts")
	}
	d := 0
	for i, w := range a {
		d += bits.OnesCount64(w ^ b[i])
	}
	return d
}

// Rank returns the indices of db ordered by increasing Hamming distance to
// q, ties in increasing index order, which is the Hamming ranking that
// retrieval with binary codes uses. It runs in O(len(db)·words + 64·words)
// by counting sort over the possible distances. It panics if a code in db
// has a different word count from q.
func Rank(q Code, db []Code) []int {
	maxD := 64 * len(q)
	dist := make([]int, len(db))
	count := make([]int, maxD+2)
	for i, c := range db {
		d := Hamming(q, c)
		dist[i] = d
		count[d+1]++
	}
	for d := 1; d < len(count); d++ {
		count[d] += count[d-1]
	}
	order := make([]int, len(db))
	for i, d := range dist {
		order[count[d]] = i
		count[d]++
	}
	return order
}
