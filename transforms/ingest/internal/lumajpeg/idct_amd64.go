//go:build !purego

package lumajpeg

import "golang.org/x/sys/cpu"

// useAVX2 reports whether the CPU and the OS support AVX2 (x/sys/cpu checks
// that the OS saves the YMM state), for idctAVX2.
var useAVX2 = cpu.X86.HasAVX2

// idctAVX2 is idctStoreGo on eight rows (then columns) at a time: the
// same int32 operations in the same order, so the same pixels bit for bit
// (TestIDCTAVX2). k is idctConsts; dst holds 8 rows of stride bytes.
//
// With transposed, b holds the block transposed (transpose).
//
//go:noescape
func idctAVX2(b *block, k *[idctNConsts]int32, dst *byte, stride int, transposed bool)

// idctStore is idctStoreGo of b, or of its transpose if transposed, by
// idctAVX2 where the CPU has it.
func idctStore(b *block, dst []byte, stride int, transposed bool) {
	if useAVX2 {
		_ = dst[7*stride+7]
		idctAVX2(b, &idctConsts, &dst[0], stride, transposed)
		return
	}
	if transposed {
		transpose(b)
	}
	idctStoreGo(b, dst, stride)
}

// idctScaled4AVX2 is idctScaled4Go: the same int32 operations, four lanes
// at a time, so the same pixels bit for bit (TestIDCTAVX2). dst
// holds 4 rows of stride bytes.
//
//go:noescape
func idctScaled4AVX2(b *block, dst *byte, stride int)

// idctScaled4 is idctScaled4Go, by idctScaled4AVX2 where the CPU has it.
func idctScaled4(b *block, dst []byte, stride int) {
	if useAVX2 {
		_ = dst[3*stride+3]
		idctScaled4AVX2(b, &dst[0], stride)
		return
	}
	idctScaled4Go(b, dst, stride)
}
