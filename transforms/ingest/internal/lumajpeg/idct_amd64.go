//go:build !purego

package lumajpeg

import "golang.org/x/sys/cpu"

// useAVX2 reports whether the CPU and the OS support AVX2 (x/sys/cpu checks
// that the OS saves the YMM state), for idctAVX2.
var useAVX2 = cpu.X86.HasAVX2

// idctAVX2 is idct on eight rows (then columns) at a time: the same int32
// operations in the same order, so the same results bit for bit
// (TestIDCTAVX2). k is idctConsts.
//
//go:noescape
func idctAVX2(b *block, k *[idctNConsts]int32)

// idctFast is idct, by idctAVX2 where the CPU has it.
func idctFast(b *block) {
	if useAVX2 {
		idctAVX2(b, &idctConsts)
		return
	}
	idct(b)
}
