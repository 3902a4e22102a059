//go:build !purego

#include "textflag.h"

// func convSymAVX(dst, src *float32, n int, offs []int, k []float32)
//
// For each block of 64 outputs (then of 8), eight (one) accumulators start
// at k[0]·centre and add k[i]·(lo_i + hi_i) tap by tap. Eight independent
// accumulators hide the latency of the additions and spread the per-tap
// bookkeeping over many vectors.
//
// Registers: DI dst, SI src (centre of the current block), CX outputs left,
// R8 offsets, R9 kernel, R10 taps r; in the tap loop R11 offsets, R12
// kernel, R13 taps left, AX/BX the two offsets of a tap; Y0–Y7
// accumulators, Y8–Y13 scratch, Y14 = k[i], Y15 = k[0].
TEXT ·convSymAVX(SB), NOSPLIT, $0-72
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ offs_base+24(FP), R8
	MOVQ k_base+48(FP), R9
	MOVQ k_len+56(FP), R10
	DECQ R10
	VBROADCASTSS (R9), Y15

block64:
	CMPQ CX, $64
	JLT  block8
	VMULPS (SI), Y15, Y0
	VMULPS 32(SI), Y15, Y1
	VMULPS 64(SI), Y15, Y2
	VMULPS 96(SI), Y15, Y3
	VMULPS 128(SI), Y15, Y4
	VMULPS 160(SI), Y15, Y5
	VMULPS 192(SI), Y15, Y6
	VMULPS 224(SI), Y15, Y7
	MOVQ R8, R11
	LEAQ 4(R9), R12
	MOVQ R10, R13

tap64:
	TESTQ R13, R13
	JEQ   store64
	MOVQ  (R11), AX
	MOVQ  8(R11), BX
	VBROADCASTSS (R12), Y14
	VMOVUPS (SI)(AX*4), Y8
	VMOVUPS 32(SI)(AX*4), Y9
	VMOVUPS 64(SI)(AX*4), Y10
	VMOVUPS 96(SI)(AX*4), Y11
	VADDPS  (SI)(BX*4), Y8, Y8
	VADDPS  32(SI)(BX*4), Y9, Y9
	VADDPS  64(SI)(BX*4), Y10, Y10
	VADDPS  96(SI)(BX*4), Y11, Y11
	VMULPS  Y14, Y8, Y8
	VMULPS  Y14, Y9, Y9
	VMULPS  Y14, Y10, Y10
	VMULPS  Y14, Y11, Y11
	VADDPS  Y8, Y0, Y0
	VADDPS  Y9, Y1, Y1
	VADDPS  Y10, Y2, Y2
	VADDPS  Y11, Y3, Y3
	VMOVUPS 128(SI)(AX*4), Y8
	VMOVUPS 160(SI)(AX*4), Y9
	VMOVUPS 192(SI)(AX*4), Y10
	VMOVUPS 224(SI)(AX*4), Y11
	VADDPS  128(SI)(BX*4), Y8, Y8
	VADDPS  160(SI)(BX*4), Y9, Y9
	VADDPS  192(SI)(BX*4), Y10, Y10
	VADDPS  224(SI)(BX*4), Y11, Y11
	VMULPS  Y14, Y8, Y8
	VMULPS  Y14, Y9, Y9
	VMULPS  Y14, Y10, Y10
	VMULPS  Y14, Y11, Y11
	VADDPS  Y8, Y4, Y4
	VADDPS  Y9, Y5, Y5
	VADDPS  Y10, Y6, Y6
	VADDPS  Y11, Y7, Y7
	ADDQ    $16, R11
	ADDQ    $4, R12
	DECQ    R13
	JMP     tap64

store64:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	ADDQ    $256, SI
	ADDQ    $256, DI
	SUBQ    $64, CX
	JMP     block64

block8:
	CMPQ CX, $8
	JLT  done
	VMULPS (SI), Y15, Y0
	MOVQ R8, R11
	LEAQ 4(R9), R12
	MOVQ R10, R13

tap8:
	TESTQ R13, R13
	JEQ   store8
	MOVQ  (R11), AX
	MOVQ  8(R11), BX
	VBROADCASTSS (R12), Y14
	VMOVUPS (SI)(AX*4), Y8
	VADDPS  (SI)(BX*4), Y8, Y8
	VMULPS  Y14, Y8, Y8
	VADDPS  Y8, Y0, Y0
	ADDQ    $16, R11
	ADDQ    $4, R12
	DECQ    R13
	JMP     tap8

store8:
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     block8

done:
	VZEROUPPER
	RET

// Constants of gradPolarAVX: the sign-clearing mask, then float32 bits of
// fastAtan2's eps, p1, p3, p5, p7, and 90, 180, 360.
DATA polar<>+0(SB)/4, $0x7fffffff
DATA polar<>+4(SB)/4, $0x25800000
DATA polar<>+8(SB)/4, $0x4265226e
DATA polar<>+12(SB)/4, $0xc19556ee
DATA polar<>+16(SB)/4, $0x410e9fbf
DATA polar<>+20(SB)/4, $0xc0228ad9
DATA polar<>+24(SB)/4, $0x42b40000
DATA polar<>+28(SB)/4, $0x43340000
DATA polar<>+32(SB)/4, $0x43b40000
GLOBL polar<>(SB), RODATA|NOPTR, $36

// func gradPolarAVX(dx, dy, mag, ang *float32, n int)
//
// fastAtan2 with its three branches turned into compares and blends.
//
// Registers: SI dx, DX dy, DI mag, R8 ang, CX values left; Y0 dx, Y1 dy,
// Y4 |dx|, Y5 |dy|, Y6 masks, Y7 c, Y8 c², Y9 the angle, Y10 scratch;
// Y11–Y15 the constants 360, 180, 90, 0 and the sign-clearing mask.
TEXT ·gradPolarAVX(SB), NOSPLIT, $0-40
	MOVQ dx+0(FP), SI
	MOVQ dy+8(FP), DX
	MOVQ mag+16(FP), DI
	MOVQ ang+24(FP), R8
	MOVQ n+32(FP), CX
	VBROADCASTSS polar<>+0(SB), Y15
	VXORPS       Y14, Y14, Y14
	VBROADCASTSS polar<>+24(SB), Y13
	VBROADCASTSS polar<>+28(SB), Y12
	VBROADCASTSS polar<>+32(SB), Y11

polar8:
	CMPQ CX, $8
	JLT  polarDone
	VMOVUPS (SI), Y0
	VMOVUPS (DX), Y1
	VMULPS  Y0, Y0, Y2
	VMULPS  Y1, Y1, Y3
	VADDPS  Y3, Y2, Y2
	VSQRTPS Y2, Y2
	VMOVUPS Y2, (DI)

	VANDPS    Y15, Y0, Y4
	VANDPS    Y15, Y1, Y5
	VCMPPS    $0x1e, Y4, Y5, Y6 // steep: |dy| > |dx|
	VBLENDVPS Y6, Y4, Y5, Y7    // numerator: steep ? |dx| : |dy|
	VBLENDVPS Y6, Y5, Y4, Y8    // denominator: steep ? |dy| : |dx|
	VBROADCASTSS polar<>+4(SB), Y9
	VADDPS    Y9, Y8, Y8
	VDIVPS    Y8, Y7, Y7        // c
	VMULPS    Y7, Y7, Y8        // c²
	VBROADCASTSS polar<>+20(SB), Y9
	VMULPS    Y8, Y9, Y9        // p7·c²
	VBROADCASTSS polar<>+16(SB), Y10
	VADDPS    Y10, Y9, Y9
	VMULPS    Y8, Y9, Y9
	VBROADCASTSS polar<>+12(SB), Y10
	VADDPS    Y10, Y9, Y9
	VMULPS    Y8, Y9, Y9
	VBROADCASTSS polar<>+8(SB), Y10
	VADDPS    Y10, Y9, Y9
	VMULPS    Y7, Y9, Y9        // a
	VSUBPS    Y9, Y13, Y10      // 90 − a
	VBLENDVPS Y6, Y10, Y9, Y9
	VCMPPS    $0x11, Y14, Y0, Y6 // dx < 0
	VSUBPS    Y9, Y12, Y10      // 180 − a
	VBLENDVPS Y6, Y10, Y9, Y9
	VCMPPS    $0x11, Y14, Y1, Y6 // dy < 0
	VSUBPS    Y9, Y11, Y10      // 360 − a
	VBLENDVPS Y6, Y10, Y9, Y9
	VMOVUPS   Y9, (R8)

	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	ADDQ $32, R8
	SUBQ $8, CX
	JMP  polar8

polarDone:
	VZEROUPPER
	RET

// func subAVX(dst, a, b *float32, n int)
TEXT ·subAVX(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX

sub32:
	CMPQ    CX, $32
	JLT     sub8
	VMOVUPS (DX), Y0
	VMOVUPS 32(DX), Y1
	VMOVUPS 64(DX), Y2
	VMOVUPS 96(DX), Y3
	VSUBPS  (SI), Y0, Y0
	VSUBPS  32(SI), Y1, Y1
	VSUBPS  64(SI), Y2, Y2
	VSUBPS  96(SI), Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DX
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     sub32

sub8:
	CMPQ    CX, $8
	JLT     subDone
	VMOVUPS (DX), Y0
	VSUBPS  (SI), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     sub8

subDone:
	VZEROUPPER
	RET

// func dogMaskAVX(lo, hi *float32, n int, thr float32, mask *uint8, d *float32)
//
// Bit b of mask[i] is set if v = d[8i+b], d = hi − lo, is a candidate
// extremum along the row: v > thr and v ≥ both neighbours, or v < −thr and
// v ≤ both; v is stored at d. The neighbours are subtracted again rather
// than shuffled in, which is as cheap and gives the same values.
//
// Registers: SI lo, DX hi, CX values left, DI mask, R8 d; Y0 v, Y1 left,
// Y2 right, Y3–Y5 masks, Y13 −thr, Y14 0, Y15 thr.
TEXT ·dogMaskAVX(SB), NOSPLIT, $0-48
	MOVQ         lo+0(FP), SI
	MOVQ         hi+8(FP), DX
	MOVQ         n+16(FP), CX
	VBROADCASTSS thr+24(FP), Y15
	MOVQ         mask+32(FP), DI
	MOVQ         d+40(FP), R8
	VXORPS       Y14, Y14, Y14
	VSUBPS       Y15, Y14, Y13

mask8:
	CMPQ      CX, $8
	JLT       maskDone
	VMOVUPS   (DX), Y0
	VSUBPS    (SI), Y0, Y0
	VMOVUPS   Y0, (R8)
	VMOVUPS   -4(DX), Y1
	VSUBPS    -4(SI), Y1, Y1
	VMOVUPS   4(DX), Y2
	VSUBPS    4(SI), Y2, Y2
	VCMPPS    $0x1e, Y15, Y0, Y3 // v > thr
	VCMPPS    $0x1d, Y1, Y0, Y4  // v ≥ left
	VANDPS    Y4, Y3, Y3
	VCMPPS    $0x1d, Y2, Y0, Y4  // v ≥ right
	VANDPS    Y4, Y3, Y3
	VCMPPS    $0x11, Y13, Y0, Y5 // v < −thr
	VCMPPS    $0x12, Y1, Y0, Y4  // v ≤ left
	VANDPS    Y4, Y5, Y5
	VCMPPS    $0x12, Y2, Y0, Y4  // v ≤ right
	VANDPS    Y4, Y5, Y5
	VORPS     Y5, Y3, Y3
	VMOVMSKPS Y3, AX
	MOVB      AL, (DI)
	ADDQ      $32, SI
	ADDQ      $32, DX
	ADDQ      $32, R8
	INCQ      DI
	SUBQ      $8, CX
	JMP       mask8

maskDone:
	VZEROUPPER
	RET

// func dogRefineAVX(up, d, dn *float32, mask *uint8, n int)
//
// dogRefine on the n bytes of mask, n a multiple of 16. The bytes with
// nonzero bits (one in six on photos) are found 16 at a time, by a
// comparison with 0, and only their samples are tested, eight at once: v
// ≥ (for v > 0) or ≤ (otherwise, NaN included) the three samples above and
// the three below, chosen lane by lane by a blend, and the byte kept only
// where they hold (a branch on each zero byte would go either way at
// random). d points at the sample of bit 0 of byte 0, up and dn at the
// samples above and below it.
//
// Registers: SI d, R8 up, R9 dn, DI mask, CX n, R10 the group's first
// byte, R11 its bytes still to test (a bit each), R12 the byte's offset in
// the group, R13 its samples' offset in bytes, AX the byte, BX the lanes
// that hold, DX scratch; X13 the group, X14 0; Y0 v, Y1 a neighbour, Y2
// (Y3) the lanes where v ≥ (≤) all so far, Y4 scratch, Y5 the answer, Y15
// 0.
TEXT ·dogRefineAVX(SB), NOSPLIT, $0-40
	MOVQ   up+0(FP), R8
	MOVQ   d+8(FP), SI
	MOVQ   dn+16(FP), R9
	MOVQ   mask+24(FP), DI
	MOVQ   n+32(FP), CX
	VXORPS Y15, Y15, Y15
	VPXOR  X14, X14, X14
	XORQ   R10, R10

refineGroup:
	CMPQ      R10, CX
	JGE       refineDone
	VMOVDQU   (DI)(R10*1), X13
	VPCMPEQB  X14, X13, X13
	VPMOVMSKB X13, R11
	XORL      $0xffff, R11

refineByte:
	TESTL   R11, R11
	JEQ     refineNext
	BSFL    R11, R12
	LEAL    -1(R11), DX
	ANDL    DX, R11
	ADDQ    R10, R12
	MOVBLZX (DI)(R12*1), AX
	MOVQ    R12, R13
	SHLQ    $5, R13
	VMOVUPS (SI)(R13*1), Y0
	VMOVUPS -4(R8)(R13*1), Y1
	VCMPPS  $0x1d, Y1, Y0, Y2 // v ≥ up[x−1]
	VCMPPS  $0x12, Y1, Y0, Y3 // v ≤ up[x−1]
	VMOVUPS (R8)(R13*1), Y1
	VCMPPS  $0x1d, Y1, Y0, Y4
	VANDPS  Y4, Y2, Y2
	VCMPPS  $0x12, Y1, Y0, Y4
	VANDPS  Y4, Y3, Y3
	VMOVUPS 4(R8)(R13*1), Y1
	VCMPPS  $0x1d, Y1, Y0, Y4
	VANDPS  Y4, Y2, Y2
	VCMPPS  $0x12, Y1, Y0, Y4
	VANDPS  Y4, Y3, Y3
	VMOVUPS -4(R9)(R13*1), Y1
	VCMPPS  $0x1d, Y1, Y0, Y4
	VANDPS  Y4, Y2, Y2
	VCMPPS  $0x12, Y1, Y0, Y4
	VANDPS  Y4, Y3, Y3
	VMOVUPS (R9)(R13*1), Y1
	VCMPPS  $0x1d, Y1, Y0, Y4
	VANDPS  Y4, Y2, Y2
	VCMPPS  $0x12, Y1, Y0, Y4
	VANDPS  Y4, Y3, Y3
	VMOVUPS 4(R9)(R13*1), Y1
	VCMPPS  $0x1d, Y1, Y0, Y4
	VANDPS  Y4, Y2, Y2
	VCMPPS  $0x12, Y1, Y0, Y4
	VANDPS  Y4, Y3, Y3
	VCMPPS    $0x1e, Y15, Y0, Y4 // v > 0
	VBLENDVPS Y4, Y2, Y3, Y5     // v > 0 ? all ≥ : all ≤
	VMOVMSKPS Y5, BX
	ANDL      BX, AX
	MOVB      AL, (DI)(R12*1)
	JMP       refineByte

refineNext:
	ADDQ $16, R10
	JMP  refineGroup

refineDone:
	VZEROUPPER
	RET

// func orientRowsAVX(gl *float32, w, m, rows int, wy, wx, dx, dy, wts *float32)
//
// orientRows for m ≥ 8: 8 samples at a time, and the last 8 of a row again
// where m is not a multiple of 8 (the same values, stored twice); each row
// asks for the cache lines of the row prefetchRows+1 below it.
//
// Registers: SI the row (sample 0), BX w in bytes, CX rows left, DX m,
// R8 wy, R9 wx, DI dx, R10 dy, R11 wts (the row's first outputs), R12
// the block's offset in bytes, R13 the last block's, AX scratch; Y0 the
// row's weight, Y1–Y3 scratch.
TEXT ·orientRowsAVX(SB), NOSPLIT, $0-72
	MOVQ gl+0(FP), SI
	MOVQ w+8(FP), BX
	SHLQ $2, BX
	MOVQ m+16(FP), DX
	MOVQ rows+24(FP), CX
	MOVQ wy+32(FP), R8
	MOVQ wx+40(FP), R9
	MOVQ dx+48(FP), DI
	MOVQ dy+56(FP), R10
	MOVQ wts+64(FP), R11
	MOVQ DX, R13
	SHLQ $2, R13
	SUBQ $32, R13

orientRow:
	TESTQ CX, CX
	JEQ   orientDone
	// The row prefetchRows+1 (5) below, from one sample before.
	LEAQ (BX)(BX*4), AX
	LEAQ -4(SI)(AX*1), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	PREFETCHT0 128(AX)
	VBROADCASTSS (R8), Y0
	MOVQ SI, AX
	SUBQ BX, AX // the row above
	XORQ R12, R12

orientBlock:
	CMPQ R12, R13
	JGT  orientTail
	VMOVUPS 4(SI)(R12*1), Y1
	VSUBPS  -4(SI)(R12*1), Y1, Y1
	VMOVUPS Y1, (DI)(R12*1)
	VMOVUPS (AX)(R12*1), Y2
	LEAQ    (AX)(BX*2), R14 // the row below
	VSUBPS  (R14)(R12*1), Y2, Y2
	VMOVUPS Y2, (R10)(R12*1)
	VMULPS  (R9)(R12*1), Y0, Y3
	VMOVUPS Y3, (R11)(R12*1)
	ADDQ    $32, R12
	JMP     orientBlock

orientTail:
	// R12 is past R13: unless it is exactly 8 samples past (m a
	// multiple of 8), the last 8 again.
	LEAQ 32(R13), R14
	CMPQ R12, R14
	JEQ  orientNext
	MOVQ R13, R12
	JMP  orientBlock

orientNext:
	LEAQ (DI)(DX*4), DI
	LEAQ (R10)(DX*4), R10
	LEAQ (R11)(DX*4), R11
	ADDQ BX, SI
	ADDQ $4, R8
	DECQ CX
	JMP  orientRow

orientDone:
	VZEROUPPER
	RET

// Constants of descWeightsAVX: 8 (orientation bins), 60 and 10 (the
// histogram's row and column strides, histCol and histRow), 70 (the
// offset of cell (0, 0) past the margins: histCol + histRow).
DATA descw<>+0(SB)/4, $0x41000000
DATA descw<>+4(SB)/4, $0x42700000
DATA descw<>+8(SB)/4, $0x41200000
DATA descw<>+12(SB)/4, $0x428c0000
GLOBL descw<>(SB), RODATA|NOPTR, $16

// func descWeightsAVX(in *descSamples, n int, ori, binsPerDeg float32, idx *int32, wts *float32)
//
// descWeightsGo on 8 samples at a time: floors by VROUNDPS, the wrap of the
// orientation bin by two compare-and-subtracts, the histogram index in
// float32 (exact: small integers), then the trilinear weights with the same
// float32 operations in the same order.
//
// Registers: SI mag, DX wr, BX wc, R8 ang, R9 rbin, R10 cbin, CX samples
// left, DI idx, R11 wts; Y0 weighted magnitude, Y1–Y3 orientation, row and
// column bins then their fractions, Y4–Y6 their floors, Y7–Y12 scratch,
// Y13 8, Y14 ori, Y15 binsPerDeg.
TEXT ·descWeightsAVX(SB), NOSPLIT, $0-40
	MOVQ         in+0(FP), AX
	MOVQ         0(AX), SI
	MOVQ         8(AX), DX
	MOVQ         16(AX), BX
	MOVQ         24(AX), R8
	MOVQ         32(AX), R9
	MOVQ         40(AX), R10
	MOVQ         n+8(FP), CX
	VBROADCASTSS ori+16(FP), Y14
	VBROADCASTSS binsPerDeg+20(FP), Y15
	MOVQ         idx+24(FP), DI
	MOVQ         wts+32(FP), R11
	VBROADCASTSS descw<>+0(SB), Y13

descw8:
	CMPQ    CX, $8
	JLT     descwDone
	VMOVUPS (SI), Y0
	VMULPS  (DX), Y0, Y0
	VMULPS  (BX), Y0, Y0  // mag·wr·wc
	VMOVUPS (R8), Y1
	VSUBPS  Y14, Y1, Y1
	VMULPS  Y15, Y1, Y1   // obin
	VMOVUPS (R9), Y2      // rbin
	VMOVUPS (R10), Y3     // cbin
	VROUNDPS $1, Y1, Y6
	VROUNDPS $1, Y2, Y4
	VROUNDPS $1, Y3, Y5
	VSUBPS  Y6, Y1, Y1
	VSUBPS  Y4, Y2, Y2
	VSUBPS  Y5, Y3, Y3

	// o0 + 8 ∈ [0, 16] wrapped into [0, 8).
	VADDPS  Y13, Y6, Y6
	VCMPPS  $0x1d, Y13, Y6, Y7 // ≥ 8
	VANDPS  Y13, Y7, Y7
	VSUBPS  Y7, Y6, Y6
	VCMPPS  $0x1d, Y13, Y6, Y7
	VANDPS  Y13, Y7, Y7
	VSUBPS  Y7, Y6, Y6
	VBROADCASTSS descw<>+4(SB), Y7
	VMULPS  Y7, Y4, Y4
	VBROADCASTSS descw<>+8(SB), Y7
	VMULPS  Y7, Y5, Y5
	VADDPS  Y5, Y4, Y4
	VADDPS  Y6, Y4, Y4
	VBROADCASTSS descw<>+12(SB), Y7
	VADDPS  Y7, Y4, Y4
	VCVTTPS2DQ Y4, Y4
	VMOVDQU Y4, (DI)

	VMULPS Y2, Y0, Y7   // vr1
	VSUBPS Y7, Y0, Y8   // vr0
	VMULPS Y3, Y7, Y9   // vrc11
	VSUBPS Y9, Y7, Y10  // vrc10
	VMULPS Y3, Y8, Y11  // vrc01
	VSUBPS Y11, Y8, Y12 // vrc00
	VMULPS Y1, Y12, Y4  // vrco001
	VSUBPS Y4, Y12, Y5  // vrco000
	VMOVUPS Y5, 0(R11)
	VMOVUPS Y4, 32(R11)
	VMULPS Y1, Y11, Y4  // vrco011
	VSUBPS Y4, Y11, Y5  // vrco010
	VMOVUPS Y5, 64(R11)
	VMOVUPS Y4, 96(R11)
	VMULPS Y1, Y10, Y4  // vrco101
	VSUBPS Y4, Y10, Y5  // vrco100
	VMOVUPS Y5, 128(R11)
	VMOVUPS Y4, 160(R11)
	VMULPS Y1, Y9, Y4   // vrco111
	VSUBPS Y4, Y9, Y5   // vrco110
	VMOVUPS Y5, 192(R11)
	VMOVUPS Y4, 224(R11)

	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, BX
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $32, R10
	ADDQ $32, DI
	ADDQ $256, R11
	SUBQ $8, CX
	JMP  descw8

descwDone:
	VZEROUPPER
	RET

// 0, 1, …, 7; then 8, 2 and 0.5, for gatherRowAVX.
DATA gridc<>+0(SB)/4, $0x00000000
DATA gridc<>+4(SB)/4, $0x3f800000
DATA gridc<>+8(SB)/4, $0x40000000
DATA gridc<>+12(SB)/4, $0x40400000
DATA gridc<>+16(SB)/4, $0x40800000
DATA gridc<>+20(SB)/4, $0x40a00000
DATA gridc<>+24(SB)/4, $0x40c00000
DATA gridc<>+28(SB)/4, $0x40e00000
DATA gridc<>+32(SB)/4, $0x41000000
DATA gridc<>+36(SB)/4, $0x40000000
DATA gridc<>+40(SB)/4, $0x3f000000
GLOBL gridc<>(SB), RODATA|NOPTR, $44

// 0.75 and 0.25, for upsample2's blends.
DATA blend<>+0(SB)/4, $0x3f400000
DATA blend<>+4(SB)/4, $0x3e800000
GLOBL blend<>(SB), RODATA|NOPTR, $8

// func upsampleRowAVX(s, d *float32, n int)
//
// For x < n, n a multiple of 8: d[2x+1] = 0.75·s[x] + 0.25·s[x+1] and
// d[2x+2] = 0.25·s[x] + 0.75·s[x+1], the products rounded before the sum
// as in upsample2; the two blends are interleaved within 128-bit lanes by
// VUNPCKLPS/VUNPCKHPS and the lanes put in order by VPERM2F128.
//
// Registers: SI s, DI d + 4 (d[1]), CX values left; Y0 a, Y1 b, Y2 p,
// Y3 q, Y4–Y7 scratch, Y14 0.75, Y15 0.25.
TEXT ·upsampleRowAVX(SB), NOSPLIT, $0-24
	MOVQ         s+0(FP), SI
	MOVQ         d+8(FP), DI
	ADDQ         $4, DI
	MOVQ         n+16(FP), CX
	VBROADCASTSS blend<>+0(SB), Y14
	VBROADCASTSS blend<>+4(SB), Y15

up8:
	CMPQ       CX, $8
	JLT        upDone
	VMOVUPS    (SI), Y0
	VMOVUPS    4(SI), Y1
	VMULPS     Y14, Y0, Y2
	VMULPS     Y15, Y1, Y4
	VADDPS     Y4, Y2, Y2 // p = 0.75a + 0.25b
	VMULPS     Y15, Y0, Y3
	VMULPS     Y14, Y1, Y5
	VADDPS     Y5, Y3, Y3 // q = 0.25a + 0.75b
	VUNPCKLPS  Y3, Y2, Y6 // p0 q0 p1 q1 | p4 q4 p5 q5
	VUNPCKHPS  Y3, Y2, Y7 // p2 q2 p3 q3 | p6 q6 p7 q7
	VPERM2F128 $0x20, Y7, Y6, Y4
	VPERM2F128 $0x31, Y7, Y6, Y5
	VMOVUPS    Y4, (DI)
	VMOVUPS    Y5, 32(DI)
	ADDQ       $32, SI
	ADDQ       $64, DI
	SUBQ       $8, CX
	JMP        up8

upDone:
	VZEROUPPER
	RET

// func downsampleRowAVX(s, d *float32, n int)
//
// d[x] = s[2x] for x < n, n a multiple of 8: the halves of two vectors
// regrouped by VPERM2F128, then the even samples picked by VSHUFPS.
//
// Registers: SI s, DI d, CX values left; Y0–Y3 scratch.
TEXT ·downsampleRowAVX(SB), NOSPLIT, $0-24
	MOVQ s+0(FP), SI
	MOVQ d+8(FP), DI
	MOVQ n+16(FP), CX

down8:
	CMPQ       CX, $8
	JLT        downDone
	VMOVUPS    (SI), Y0
	VPERM2F128 $0x20, 32(SI), Y0, Y1 // s0…s3 s8…s11
	VPERM2F128 $0x31, 32(SI), Y0, Y2 // s4…s7 s12…s15
	VSHUFPS    $0x88, Y2, Y1, Y3     // s0 s2 s4 s6 s8 s10 s12 s14
	VMOVUPS    Y3, (DI)
	ADDQ       $64, SI
	ADDQ       $32, DI
	SUBQ       $8, CX
	JMP        down8

downDone:
	VZEROUPPER
	RET

// func blendRowsAVX(a, m, b *float32, n int)
//
// For x < n, n a multiple of 8: m[x] = 0.75·a[x] + 0.25·b[x] and then
// b[x] = 0.25·a[x] + 0.75·b[x], as in upsample2.
TEXT ·blendRowsAVX(SB), NOSPLIT, $0-32
	MOVQ         a+0(FP), SI
	MOVQ         m+8(FP), DI
	MOVQ         b+16(FP), DX
	MOVQ         n+24(FP), CX
	VBROADCASTSS blend<>+0(SB), Y14
	VBROADCASTSS blend<>+4(SB), Y15

blend8:
	CMPQ    CX, $8
	JLT     blendDone
	VMOVUPS (SI), Y0
	VMOVUPS (DX), Y1
	VMULPS  Y14, Y0, Y2
	VMULPS  Y15, Y1, Y4
	VADDPS  Y4, Y2, Y2
	VMULPS  Y15, Y0, Y3
	VMULPS  Y14, Y1, Y5
	VADDPS  Y5, Y3, Y3
	VMOVUPS Y2, (DI)
	VMOVUPS Y3, (DX)
	ADDQ    $32, SI
	ADDQ    $32, DI
	ADDQ    $32, DX
	SUBQ    $8, CX
	JMP     blend8

blendDone:
	VZEROUPPER
	RET

// func prefetch(p *float32, n int)
TEXT ·prefetch(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	LEAQ (AX)(CX*4), CX

prefetchLine:
	PREFETCHT0 (AX)
	ADDQ       $64, AX
	CMPQ       AX, CX
	JLT        prefetchLine
	RET

// func scatterAVX(hist *float32, idx *int32, wts *float32, n int)
//
// scatter with a sample's eight weights in one vector: eight samples'
// weights, stored corner by corner, are transposed to sample by sample,
// and a run of samples with the same bins adds them to a vector of those
// bins' sums, which is stored back (as four pairs of neighbouring bins)
// when the run ends. Lane j of the sum is corner j, as in scatter.
//
// Registers: DI hist, SI idx, DX the current block of weights, CX n, BX
// samples done, R8 the current run's index, R9 its bins; Y0 their sums,
// Y1 scratch, Y2–Y15 the transposition (the samples end in Y10, Y12, Y14,
// Y4, Y11, Y13, Y15, Y5).
TEXT ·scatterAVX(SB), NOSPLIT, $0-32
	MOVQ hist+0(FP), DI
	MOVQ idx+8(FP), SI
	MOVQ wts+16(FP), DX
	MOVQ n+24(FP), CX
	TESTQ CX, CX
	JEQ  scatterRet
	XORQ BX, BX
	MOVLQSX (SI), R8
	LEAQ (DI)(R8*4), R9
	VMOVSD  (R9), X0
	VMOVHPS 40(R9), X0, X0
	VMOVSD  240(R9), X1
	VMOVHPS 280(R9), X1, X1
	VINSERTF128 $1, X1, Y0, Y0

scatterBlock:
	VMOVUPS (DX), Y8
	VMOVUPS 32(DX), Y9
	VMOVUPS 64(DX), Y10
	VMOVUPS 96(DX), Y11
	VMOVUPS 128(DX), Y12
	VMOVUPS 160(DX), Y13
	VMOVUPS 192(DX), Y14
	VMOVUPS 224(DX), Y15
	VUNPCKLPS Y9, Y8, Y2
	VUNPCKHPS Y9, Y8, Y3
	VUNPCKLPS Y11, Y10, Y8
	VUNPCKHPS Y11, Y10, Y9
	VUNPCKLPS Y13, Y12, Y10
	VUNPCKHPS Y13, Y12, Y11
	VUNPCKLPS Y15, Y14, Y12
	VUNPCKHPS Y15, Y14, Y13
	VSHUFPS $0x44, Y8, Y2, Y4
	VSHUFPS $0xee, Y8, Y2, Y5
	VSHUFPS $0x44, Y9, Y3, Y6
	VSHUFPS $0xee, Y9, Y3, Y7
	VSHUFPS $0x44, Y12, Y10, Y2
	VSHUFPS $0xee, Y12, Y10, Y3
	VSHUFPS $0x44, Y13, Y11, Y8
	VSHUFPS $0xee, Y13, Y11, Y9
	VPERM2F128 $0x20, Y2, Y4, Y10
	VPERM2F128 $0x31, Y2, Y4, Y11
	VPERM2F128 $0x20, Y3, Y5, Y12
	VPERM2F128 $0x31, Y3, Y5, Y13
	VPERM2F128 $0x20, Y8, Y6, Y14
	VPERM2F128 $0x31, Y8, Y6, Y15
	VPERM2F128 $0x20, Y9, Y7, Y4
	VPERM2F128 $0x31, Y9, Y7, Y5

	// Sample 0 of the block.
	CMPQ BX, CX
	JGE  scatterEnd
	MOVLQSX (SI)(BX*4), AX
	CMPQ AX, R8
	JEQ  scatterAdd0
	VMOVLPS X0, (R9)
	VMOVHPS X0, 40(R9)
	VEXTRACTF128 $1, Y0, X1
	VMOVLPS X1, 240(R9)
	VMOVHPS X1, 280(R9)
	MOVQ AX, R8
	LEAQ (DI)(AX*4), R9
	VMOVSD  (R9), X0
	VMOVHPS 40(R9), X0, X0
	VMOVSD  240(R9), X1
	VMOVHPS 280(R9), X1, X1
	VINSERTF128 $1, X1, Y0, Y0

scatterAdd0:
	VADDPS Y10, Y0, Y0
	INCQ BX

	// Sample 1 of the block.
	CMPQ BX, CX
	JGE  scatterEnd
	MOVLQSX (SI)(BX*4), AX
	CMPQ AX, R8
	JEQ  scatterAdd1
	VMOVLPS X0, (R9)
	VMOVHPS X0, 40(R9)
	VEXTRACTF128 $1, Y0, X1
	VMOVLPS X1, 240(R9)
	VMOVHPS X1, 280(R9)
	MOVQ AX, R8
	LEAQ (DI)(AX*4), R9
	VMOVSD  (R9), X0
	VMOVHPS 40(R9), X0, X0
	VMOVSD  240(R9), X1
	VMOVHPS 280(R9), X1, X1
	VINSERTF128 $1, X1, Y0, Y0

scatterAdd1:
	VADDPS Y12, Y0, Y0
	INCQ BX

	// Sample 2 of the block.
	CMPQ BX, CX
	JGE  scatterEnd
	MOVLQSX (SI)(BX*4), AX
	CMPQ AX, R8
	JEQ  scatterAdd2
	VMOVLPS X0, (R9)
	VMOVHPS X0, 40(R9)
	VEXTRACTF128 $1, Y0, X1
	VMOVLPS X1, 240(R9)
	VMOVHPS X1, 280(R9)
	MOVQ AX, R8
	LEAQ (DI)(AX*4), R9
	VMOVSD  (R9), X0
	VMOVHPS 40(R9), X0, X0
	VMOVSD  240(R9), X1
	VMOVHPS 280(R9), X1, X1
	VINSERTF128 $1, X1, Y0, Y0

scatterAdd2:
	VADDPS Y14, Y0, Y0
	INCQ BX

	// Sample 3 of the block.
	CMPQ BX, CX
	JGE  scatterEnd
	MOVLQSX (SI)(BX*4), AX
	CMPQ AX, R8
	JEQ  scatterAdd3
	VMOVLPS X0, (R9)
	VMOVHPS X0, 40(R9)
	VEXTRACTF128 $1, Y0, X1
	VMOVLPS X1, 240(R9)
	VMOVHPS X1, 280(R9)
	MOVQ AX, R8
	LEAQ (DI)(AX*4), R9
	VMOVSD  (R9), X0
	VMOVHPS 40(R9), X0, X0
	VMOVSD  240(R9), X1
	VMOVHPS 280(R9), X1, X1
	VINSERTF128 $1, X1, Y0, Y0

scatterAdd3:
	VADDPS Y4, Y0, Y0
	INCQ BX

	// Sample 4 of the block.
	CMPQ BX, CX
	JGE  scatterEnd
	MOVLQSX (SI)(BX*4), AX
	CMPQ AX, R8
	JEQ  scatterAdd4
	VMOVLPS X0, (R9)
	VMOVHPS X0, 40(R9)
	VEXTRACTF128 $1, Y0, X1
	VMOVLPS X1, 240(R9)
	VMOVHPS X1, 280(R9)
	MOVQ AX, R8
	LEAQ (DI)(AX*4), R9
	VMOVSD  (R9), X0
	VMOVHPS 40(R9), X0, X0
	VMOVSD  240(R9), X1
	VMOVHPS 280(R9), X1, X1
	VINSERTF128 $1, X1, Y0, Y0

scatterAdd4:
	VADDPS Y11, Y0, Y0
	INCQ BX

	// Sample 5 of the block.
	CMPQ BX, CX
	JGE  scatterEnd
	MOVLQSX (SI)(BX*4), AX
	CMPQ AX, R8
	JEQ  scatterAdd5
	VMOVLPS X0, (R9)
	VMOVHPS X0, 40(R9)
	VEXTRACTF128 $1, Y0, X1
	VMOVLPS X1, 240(R9)
	VMOVHPS X1, 280(R9)
	MOVQ AX, R8
	LEAQ (DI)(AX*4), R9
	VMOVSD  (R9), X0
	VMOVHPS 40(R9), X0, X0
	VMOVSD  240(R9), X1
	VMOVHPS 280(R9), X1, X1
	VINSERTF128 $1, X1, Y0, Y0

scatterAdd5:
	VADDPS Y13, Y0, Y0
	INCQ BX

	// Sample 6 of the block.
	CMPQ BX, CX
	JGE  scatterEnd
	MOVLQSX (SI)(BX*4), AX
	CMPQ AX, R8
	JEQ  scatterAdd6
	VMOVLPS X0, (R9)
	VMOVHPS X0, 40(R9)
	VEXTRACTF128 $1, Y0, X1
	VMOVLPS X1, 240(R9)
	VMOVHPS X1, 280(R9)
	MOVQ AX, R8
	LEAQ (DI)(AX*4), R9
	VMOVSD  (R9), X0
	VMOVHPS 40(R9), X0, X0
	VMOVSD  240(R9), X1
	VMOVHPS 280(R9), X1, X1
	VINSERTF128 $1, X1, Y0, Y0

scatterAdd6:
	VADDPS Y15, Y0, Y0
	INCQ BX

	// Sample 7 of the block.
	CMPQ BX, CX
	JGE  scatterEnd
	MOVLQSX (SI)(BX*4), AX
	CMPQ AX, R8
	JEQ  scatterAdd7
	VMOVLPS X0, (R9)
	VMOVHPS X0, 40(R9)
	VEXTRACTF128 $1, Y0, X1
	VMOVLPS X1, 240(R9)
	VMOVHPS X1, 280(R9)
	MOVQ AX, R8
	LEAQ (DI)(AX*4), R9
	VMOVSD  (R9), X0
	VMOVHPS 40(R9), X0, X0
	VMOVSD  240(R9), X1
	VMOVHPS 280(R9), X1, X1
	VINSERTF128 $1, X1, Y0, Y0

scatterAdd7:
	VADDPS Y5, Y0, Y0
	INCQ BX

	ADDQ $256, DX
	JMP  scatterBlock

scatterEnd:
	VMOVLPS X0, (R9)
	VMOVHPS X0, 40(R9)
	VEXTRACTF128 $1, Y0, X1
	VMOVLPS X1, 240(R9)
	VMOVHPS X1, 280(R9)
	VZEROUPPER

scatterRet:
	RET

// func isExtremumAVX(p *float32, plane, w int, top bool) bool
//
// isExtremum without branches: the DoG values of each row of three
// neighbours (and one more sample, ignored) are compared with v four at a
// time, for both "v is ≥ all" and "v is ≤ all", and the sign of v picks
// one of the two answers. The comparisons are false for NaN, as Go's.
// With top, the layer above is left out (one branch, before it).
//
// Registers: R8, SI, DI, R9 the sample in L_{layer−1} … L_{layer+2}; BX
// the row stride in bytes, R11 its negation; X0 v in every lane, X1 a row
// of DoG values, X2 scratch, X4 (X5) the lanes where v ≥ (≤) all so far.
TEXT ·isExtremumAVX(SB), NOSPLIT, $0-33
	MOVQ p+0(FP), SI
	MOVQ plane+8(FP), AX
	SHLQ $2, AX
	MOVQ w+16(FP), BX
	SHLQ $2, BX
	MOVQ BX, R11
	NEGQ R11
	MOVQ SI, R8
	SUBQ AX, R8
	LEAQ (SI)(AX*1), DI
	LEAQ (DI)(AX*1), R9
	VMOVSS (DI), X0
	VSUBSS (SI), X0, X0
	VSHUFPS $0, X0, X0, X0

	// D_layer, rows above and below.
	VMOVUPS -4(DI)(R11*1), X1
	VSUBPS  -4(SI)(R11*1), X1, X1
	VCMPPS  $2, X0, X1, X4
	VCMPPS  $13, X0, X1, X5
	VMOVUPS -4(DI)(BX*1), X1
	VSUBPS  -4(SI)(BX*1), X1, X1
	VCMPPS  $2, X0, X1, X2
	VANDPS  X2, X4, X4
	VCMPPS  $13, X0, X1, X2
	VANDPS  X2, X5, X5

	// D_{layer−1} = L_layer − L_{layer−1}, three rows.
	VMOVUPS -4(SI)(R11*1), X1
	VSUBPS  -4(R8)(R11*1), X1, X1
	VCMPPS  $2, X0, X1, X2
	VANDPS  X2, X4, X4
	VCMPPS  $13, X0, X1, X2
	VANDPS  X2, X5, X5
	VMOVUPS -4(SI), X1
	VSUBPS  -4(R8), X1, X1
	VCMPPS  $2, X0, X1, X2
	VANDPS  X2, X4, X4
	VCMPPS  $13, X0, X1, X2
	VANDPS  X2, X5, X5
	VMOVUPS -4(SI)(BX*1), X1
	VSUBPS  -4(R8)(BX*1), X1, X1
	VCMPPS  $2, X0, X1, X2
	VANDPS  X2, X4, X4
	VCMPPS  $13, X0, X1, X2
	VANDPS  X2, X5, X5

	// D_{layer+1} = L_{layer+2} − L_{layer+1}, three rows.
	CMPB    top+24(FP), $0
	JNE     extremumMasks
	VMOVUPS -4(R9)(R11*1), X1
	VSUBPS  -4(DI)(R11*1), X1, X1
	VCMPPS  $2, X0, X1, X2
	VANDPS  X2, X4, X4
	VCMPPS  $13, X0, X1, X2
	VANDPS  X2, X5, X5
	VMOVUPS -4(R9), X1
	VSUBPS  -4(DI), X1, X1
	VCMPPS  $2, X0, X1, X2
	VANDPS  X2, X4, X4
	VCMPPS  $13, X0, X1, X2
	VANDPS  X2, X5, X5
	VMOVUPS -4(R9)(BX*1), X1
	VSUBPS  -4(DI)(BX*1), X1, X1
	VCMPPS  $2, X0, X1, X2
	VANDPS  X2, X4, X4
	VCMPPS  $13, X0, X1, X2
	VANDPS  X2, X5, X5

extremumMasks:
	VMOVMSKPS X4, AX
	VMOVMSKPS X5, CX
	ANDL      $7, AX
	ANDL      $7, CX
	VXORPS    X2, X2, X2
	VUCOMISS  X2, X0
	CMOVLHI   AX, CX
	CMPL      CX, $7
	SETEQ     ret+32(FP)
	RET

// func convRowsAVX(dst, src *float32, rows []int, k []float32)
//
// convSymAVX of 8 outputs, for each of the rows, len(rows) a multiple of
// 4: dst[8t … 8t+7] from the samples around src + rows[t], taps −i and +i.
// Four rows at a time, each with its own accumulator, so that four chains
// of additions overlap (one row at a time took 1.4× as long on rows in
// the cache).
//
// Registers: DI dst, SI src, R8 rows, CX rows left, R9 kernel, R10 taps r;
// per group DX, R11, R13, R14 the rows' centres, R12 &k[i], BX taps left,
// AX the tap's offset in bytes (4i); Y0–Y3 the sums, Y8–Y11 scratch, Y14
// k[i], Y15 k[0].
TEXT ·convRowsAVX(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rows_base+16(FP), R8
	MOVQ rows_len+24(FP), CX
	MOVQ k_base+40(FP), R9
	MOVQ k_len+48(FP), R10
	DECQ R10
	VBROADCASTSS (R9), Y15

convRows4:
	CMPQ CX, $4
	JLT  convRowsDone
	MOVQ (R8), AX
	LEAQ (SI)(AX*4), DX
	MOVQ 8(R8), AX
	LEAQ (SI)(AX*4), R11
	MOVQ 16(R8), AX
	LEAQ (SI)(AX*4), R13
	MOVQ 24(R8), AX
	LEAQ (SI)(AX*4), R14
	VMULPS (DX), Y15, Y0
	VMULPS (R11), Y15, Y1
	VMULPS (R13), Y15, Y2
	VMULPS (R14), Y15, Y3
	LEAQ 4(R9), R12
	MOVQ R10, BX
	MOVQ $4, AX

convRows4Tap:
	TESTQ BX, BX
	JEQ   convRows4Store
	VBROADCASTSS (R12), Y14
	NEGQ    AX
	VMOVUPS (DX)(AX*1), Y8
	VMOVUPS (R11)(AX*1), Y9
	VMOVUPS (R13)(AX*1), Y10
	VMOVUPS (R14)(AX*1), Y11
	NEGQ    AX
	VADDPS  (DX)(AX*1), Y8, Y8
	VADDPS  (R11)(AX*1), Y9, Y9
	VADDPS  (R13)(AX*1), Y10, Y10
	VADDPS  (R14)(AX*1), Y11, Y11
	VMULPS  Y14, Y8, Y8
	VMULPS  Y14, Y9, Y9
	VMULPS  Y14, Y10, Y10
	VMULPS  Y14, Y11, Y11
	VADDPS  Y8, Y0, Y0
	VADDPS  Y9, Y1, Y1
	VADDPS  Y10, Y2, Y2
	VADDPS  Y11, Y3, Y3
	ADDQ    $4, AX
	ADDQ    $4, R12
	DECQ    BX
	JMP     convRows4Tap

convRows4Store:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, DI
	ADDQ    $32, R8
	SUBQ    $4, CX
	JMP     convRows4

convRowsDone:
	VZEROUPPER
	RET

// func convSym4AVX(dst *float32, stride int, src *float32, n int, rows []int, k []float32)
//
// Four output rows at once, y … y+3 (at dst + j·stride), 8 columns at a
// time: rows[t] is the offset from src of row y−r+t, t = 0 … 2r+3. Tap i
// of row y+j adds rows r+j−i and r+j+i; of those, tap i loads only rows
// r−i (A) and r+3+i (D) and keeps three rows on either side from the taps
// before (or from the centres, for i = 1): CL = rows r−i+1 … r−i+3 and
// CR = rows r+i … r+i+2. A quarter of the loads of four convSymAVX calls,
// for the same sums in the same order.
//
// Registers: DI dst, DX the stride in bytes, SI src (current block), CX
// columns left, R9 kernel, R10 taps r, R11 &rows[r]; per block R12
// &rows[r−i], R13 &rows[r+3+i], R14 &k[i], R8 taps left; Y0–Y3 rows y …
// y+3, Y4–Y6 CL, Y7–Y9 CR, Y10 A, Y11 D, Y12/Y13 scratch, Y15 k[i].
// Four taps at a time pass the rows on by renaming registers, which comes
// back to this assignment after four; single taps copy them.
TEXT ·convSym4AVX(SB), NOSPLIT, $0-80
	MOVQ dst+0(FP), DI
	MOVQ stride+8(FP), DX
	SHLQ $2, DX
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX
	MOVQ rows_base+32(FP), R11
	MOVQ k_base+56(FP), R9
	MOVQ k_len+64(FP), R10
	DECQ R10
	LEAQ (R11)(R10*8), R11

block4x8:
	CMPQ CX, $8
	JLT  done4
	VBROADCASTSS (R9), Y15
	MOVQ (R11), AX
	VMOVUPS (SI)(AX*4), Y4
	MOVQ 8(R11), AX
	VMOVUPS (SI)(AX*4), Y5
	MOVQ 16(R11), AX
	VMOVUPS (SI)(AX*4), Y6
	MOVQ 24(R11), AX
	VMOVUPS (SI)(AX*4), Y9
	VMOVAPS Y5, Y7
	VMOVAPS Y6, Y8
	VMULPS  Y4, Y15, Y0
	VMULPS  Y5, Y15, Y1
	VMULPS  Y6, Y15, Y2
	VMULPS  Y9, Y15, Y3
	LEAQ    -8(R11), R12
	LEAQ    32(R11), R13
	LEAQ    4(R9), R14
	MOVQ    R10, R8

tap4x4:
	CMPQ R8, $4
	JLT  tap4
	// Tap i+0.
	MOVQ 0(R12), AX
	MOVQ 0(R13), BX
	VBROADCASTSS 0(R14), Y15
	VMOVUPS (SI)(AX*4), Y10
	VMOVUPS (SI)(BX*4), Y11
	VADDPS  Y10, Y7, Y12
	VMULPS  Y15, Y12, Y12
	VADDPS  Y12, Y0, Y0
	VADDPS  Y4, Y8, Y13
	VMULPS  Y15, Y13, Y13
	VADDPS  Y13, Y1, Y1
	VADDPS  Y5, Y9, Y12
	VMULPS  Y15, Y12, Y12
	VADDPS  Y12, Y2, Y2
	VADDPS  Y6, Y11, Y13
	VMULPS  Y15, Y13, Y13
	VADDPS  Y13, Y3, Y3
	// Tap i+1.
	MOVQ -8(R12), AX
	MOVQ 8(R13), BX
	VBROADCASTSS 4(R14), Y15
	VMOVUPS (SI)(AX*4), Y6
	VMOVUPS (SI)(BX*4), Y7
	VADDPS  Y6, Y8, Y12
	VMULPS  Y15, Y12, Y12
	VADDPS  Y12, Y0, Y0
	VADDPS  Y10, Y9, Y13
	VMULPS  Y15, Y13, Y13
	VADDPS  Y13, Y1, Y1
	VADDPS  Y4, Y11, Y12
	VMULPS  Y15, Y12, Y12
	VADDPS  Y12, Y2, Y2
	VADDPS  Y5, Y7, Y13
	VMULPS  Y15, Y13, Y13
	VADDPS  Y13, Y3, Y3
	// Tap i+2.
	MOVQ -16(R12), AX
	MOVQ 16(R13), BX
	VBROADCASTSS 8(R14), Y15
	VMOVUPS (SI)(AX*4), Y5
	VMOVUPS (SI)(BX*4), Y8
	VADDPS  Y5, Y9, Y12
	VMULPS  Y15, Y12, Y12
	VADDPS  Y12, Y0, Y0
	VADDPS  Y6, Y11, Y13
	VMULPS  Y15, Y13, Y13
	VADDPS  Y13, Y1, Y1
	VADDPS  Y10, Y7, Y12
	VMULPS  Y15, Y12, Y12
	VADDPS  Y12, Y2, Y2
	VADDPS  Y4, Y8, Y13
	VMULPS  Y15, Y13, Y13
	VADDPS  Y13, Y3, Y3
	// Tap i+3.
	MOVQ -24(R12), AX
	MOVQ 24(R13), BX
	VBROADCASTSS 12(R14), Y15
	VMOVUPS (SI)(AX*4), Y4
	VMOVUPS (SI)(BX*4), Y9
	VADDPS  Y4, Y11, Y12
	VMULPS  Y15, Y12, Y12
	VADDPS  Y12, Y0, Y0
	VADDPS  Y5, Y7, Y13
	VMULPS  Y15, Y13, Y13
	VADDPS  Y13, Y1, Y1
	VADDPS  Y6, Y8, Y12
	VMULPS  Y15, Y12, Y12
	VADDPS  Y12, Y2, Y2
	VADDPS  Y10, Y9, Y13
	VMULPS  Y15, Y13, Y13
	VADDPS  Y13, Y3, Y3
	SUBQ    $32, R12
	ADDQ    $32, R13
	ADDQ    $16, R14
	SUBQ    $4, R8
	JMP     tap4x4

tap4:
	TESTQ R8, R8
	JEQ   store4
	MOVQ  (R12), AX
	MOVQ  (R13), BX
	VBROADCASTSS (R14), Y15
	VMOVUPS (SI)(AX*4), Y10
	VMOVUPS (SI)(BX*4), Y11
	VADDPS  Y10, Y7, Y12
	VMULPS  Y15, Y12, Y12
	VADDPS  Y12, Y0, Y0
	VADDPS  Y4, Y8, Y13
	VMULPS  Y15, Y13, Y13
	VADDPS  Y13, Y1, Y1
	VADDPS  Y5, Y9, Y12
	VMULPS  Y15, Y12, Y12
	VADDPS  Y12, Y2, Y2
	VADDPS  Y6, Y11, Y13
	VMULPS  Y15, Y13, Y13
	VADDPS  Y13, Y3, Y3
	VMOVAPS Y5, Y6
	VMOVAPS Y4, Y5
	VMOVAPS Y10, Y4
	VMOVAPS Y8, Y7
	VMOVAPS Y9, Y8
	VMOVAPS Y11, Y9
	SUBQ    $8, R12
	ADDQ    $8, R13
	ADDQ    $4, R14
	DECQ    R8
	JMP     tap4

store4:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, (DI)(DX*1)
	LEAQ    (DI)(DX*2), BX
	VMOVUPS Y2, (BX)
	VMOVUPS Y3, (BX)(DX*1)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     block4x8

done4:
	VZEROUPPER
	RET

// Tables for scatterCellsAVX2, a vector for each orientation bin o = 0 …
// 7: cells<>+32o keeps lanes o and o+1 (if o < 7); cells<>+256+32o lanes
// 0, 1, 4 and 5 (the bins 8 of the four cells) if o = 7, none otherwise.
// Then the lane numbers 0 … 7, the frame offsets of eight samples' weights
// (64 bytes apart), and the constants 6554, 288, 7 and 32.
DATA cells<>+0(SB)/4, $0xffffffff
DATA cells<>+4(SB)/4, $0xffffffff
DATA cells<>+8(SB)/4, $0x00000000
DATA cells<>+12(SB)/4, $0x00000000
DATA cells<>+16(SB)/4, $0x00000000
DATA cells<>+20(SB)/4, $0x00000000
DATA cells<>+24(SB)/4, $0x00000000
DATA cells<>+28(SB)/4, $0x00000000
DATA cells<>+32(SB)/4, $0x00000000
DATA cells<>+36(SB)/4, $0xffffffff
DATA cells<>+40(SB)/4, $0xffffffff
DATA cells<>+44(SB)/4, $0x00000000
DATA cells<>+48(SB)/4, $0x00000000
DATA cells<>+52(SB)/4, $0x00000000
DATA cells<>+56(SB)/4, $0x00000000
DATA cells<>+60(SB)/4, $0x00000000
DATA cells<>+64(SB)/4, $0x00000000
DATA cells<>+68(SB)/4, $0x00000000
DATA cells<>+72(SB)/4, $0xffffffff
DATA cells<>+76(SB)/4, $0xffffffff
DATA cells<>+80(SB)/4, $0x00000000
DATA cells<>+84(SB)/4, $0x00000000
DATA cells<>+88(SB)/4, $0x00000000
DATA cells<>+92(SB)/4, $0x00000000
DATA cells<>+96(SB)/4, $0x00000000
DATA cells<>+100(SB)/4, $0x00000000
DATA cells<>+104(SB)/4, $0x00000000
DATA cells<>+108(SB)/4, $0xffffffff
DATA cells<>+112(SB)/4, $0xffffffff
DATA cells<>+116(SB)/4, $0x00000000
DATA cells<>+120(SB)/4, $0x00000000
DATA cells<>+124(SB)/4, $0x00000000
DATA cells<>+128(SB)/4, $0x00000000
DATA cells<>+132(SB)/4, $0x00000000
DATA cells<>+136(SB)/4, $0x00000000
DATA cells<>+140(SB)/4, $0x00000000
DATA cells<>+144(SB)/4, $0xffffffff
DATA cells<>+148(SB)/4, $0xffffffff
DATA cells<>+152(SB)/4, $0x00000000
DATA cells<>+156(SB)/4, $0x00000000
DATA cells<>+160(SB)/4, $0x00000000
DATA cells<>+164(SB)/4, $0x00000000
DATA cells<>+168(SB)/4, $0x00000000
DATA cells<>+172(SB)/4, $0x00000000
DATA cells<>+176(SB)/4, $0x00000000
DATA cells<>+180(SB)/4, $0xffffffff
DATA cells<>+184(SB)/4, $0xffffffff
DATA cells<>+188(SB)/4, $0x00000000
DATA cells<>+192(SB)/4, $0x00000000
DATA cells<>+196(SB)/4, $0x00000000
DATA cells<>+200(SB)/4, $0x00000000
DATA cells<>+204(SB)/4, $0x00000000
DATA cells<>+208(SB)/4, $0x00000000
DATA cells<>+212(SB)/4, $0x00000000
DATA cells<>+216(SB)/4, $0xffffffff
DATA cells<>+220(SB)/4, $0xffffffff
DATA cells<>+224(SB)/4, $0x00000000
DATA cells<>+228(SB)/4, $0x00000000
DATA cells<>+232(SB)/4, $0x00000000
DATA cells<>+236(SB)/4, $0x00000000
DATA cells<>+240(SB)/4, $0x00000000
DATA cells<>+244(SB)/4, $0x00000000
DATA cells<>+248(SB)/4, $0x00000000
DATA cells<>+252(SB)/4, $0xffffffff
DATA cells<>+256(SB)/4, $0x00000000
DATA cells<>+260(SB)/4, $0x00000000
DATA cells<>+264(SB)/4, $0x00000000
DATA cells<>+268(SB)/4, $0x00000000
DATA cells<>+272(SB)/4, $0x00000000
DATA cells<>+276(SB)/4, $0x00000000
DATA cells<>+280(SB)/4, $0x00000000
DATA cells<>+284(SB)/4, $0x00000000
DATA cells<>+288(SB)/4, $0x00000000
DATA cells<>+292(SB)/4, $0x00000000
DATA cells<>+296(SB)/4, $0x00000000
DATA cells<>+300(SB)/4, $0x00000000
DATA cells<>+304(SB)/4, $0x00000000
DATA cells<>+308(SB)/4, $0x00000000
DATA cells<>+312(SB)/4, $0x00000000
DATA cells<>+316(SB)/4, $0x00000000
DATA cells<>+320(SB)/4, $0x00000000
DATA cells<>+324(SB)/4, $0x00000000
DATA cells<>+328(SB)/4, $0x00000000
DATA cells<>+332(SB)/4, $0x00000000
DATA cells<>+336(SB)/4, $0x00000000
DATA cells<>+340(SB)/4, $0x00000000
DATA cells<>+344(SB)/4, $0x00000000
DATA cells<>+348(SB)/4, $0x00000000
DATA cells<>+352(SB)/4, $0x00000000
DATA cells<>+356(SB)/4, $0x00000000
DATA cells<>+360(SB)/4, $0x00000000
DATA cells<>+364(SB)/4, $0x00000000
DATA cells<>+368(SB)/4, $0x00000000
DATA cells<>+372(SB)/4, $0x00000000
DATA cells<>+376(SB)/4, $0x00000000
DATA cells<>+380(SB)/4, $0x00000000
DATA cells<>+384(SB)/4, $0x00000000
DATA cells<>+388(SB)/4, $0x00000000
DATA cells<>+392(SB)/4, $0x00000000
DATA cells<>+396(SB)/4, $0x00000000
DATA cells<>+400(SB)/4, $0x00000000
DATA cells<>+404(SB)/4, $0x00000000
DATA cells<>+408(SB)/4, $0x00000000
DATA cells<>+412(SB)/4, $0x00000000
DATA cells<>+416(SB)/4, $0x00000000
DATA cells<>+420(SB)/4, $0x00000000
DATA cells<>+424(SB)/4, $0x00000000
DATA cells<>+428(SB)/4, $0x00000000
DATA cells<>+432(SB)/4, $0x00000000
DATA cells<>+436(SB)/4, $0x00000000
DATA cells<>+440(SB)/4, $0x00000000
DATA cells<>+444(SB)/4, $0x00000000
DATA cells<>+448(SB)/4, $0x00000000
DATA cells<>+452(SB)/4, $0x00000000
DATA cells<>+456(SB)/4, $0x00000000
DATA cells<>+460(SB)/4, $0x00000000
DATA cells<>+464(SB)/4, $0x00000000
DATA cells<>+468(SB)/4, $0x00000000
DATA cells<>+472(SB)/4, $0x00000000
DATA cells<>+476(SB)/4, $0x00000000
DATA cells<>+480(SB)/4, $0xffffffff
DATA cells<>+484(SB)/4, $0xffffffff
DATA cells<>+488(SB)/4, $0x00000000
DATA cells<>+492(SB)/4, $0x00000000
DATA cells<>+496(SB)/4, $0xffffffff
DATA cells<>+500(SB)/4, $0xffffffff
DATA cells<>+504(SB)/4, $0x00000000
DATA cells<>+508(SB)/4, $0x00000000
DATA cells<>+512(SB)/4, $0x00000000
DATA cells<>+516(SB)/4, $0x00000001
DATA cells<>+520(SB)/4, $0x00000002
DATA cells<>+524(SB)/4, $0x00000003
DATA cells<>+528(SB)/4, $0x00000004
DATA cells<>+532(SB)/4, $0x00000005
DATA cells<>+536(SB)/4, $0x00000006
DATA cells<>+540(SB)/4, $0x00000007
DATA cells<>+544(SB)/4, $0x00000000
DATA cells<>+548(SB)/4, $0x00000040
DATA cells<>+552(SB)/4, $0x00000080
DATA cells<>+556(SB)/4, $0x000000c0
DATA cells<>+560(SB)/4, $0x00000100
DATA cells<>+564(SB)/4, $0x00000140
DATA cells<>+568(SB)/4, $0x00000180
DATA cells<>+572(SB)/4, $0x000001c0
DATA cells<>+576(SB)/4, $0x0000199a
DATA cells<>+580(SB)/4, $0x00000120
DATA cells<>+584(SB)/4, $0x00000007
DATA cells<>+588(SB)/4, $0x00000020
GLOBL cells<>(SB), RODATA|NOPTR, $592

// func scatterCellsAVX2(hist *float32, idx *int32, wts *float32, n int) bool
//
// scatter with the orientation bins in the lanes of a vector: a sample adds
// to two neighbouring bins o, o+1 of four cells (2×2), and a run of
// samples in the same four cells, whatever their orientations, adds to
// four vectors holding bins 0 … 7 of those cells and one holding their
// bins 8, loaded before the run and stored after it. A sample's vector for
// a cell is its two weights for that cell broadcast to every pair of
// lanes (swapped when o is odd, so that lane o gets the lower bin's) with
// all lanes but o and o+1 zeroed; adding +0 leaves a sum as it is (sums
// are never −0: the weights are ≥ 0 or NaN), so every bin sees the same
// additions in the same order as in scatterGo. Runs of the same cells are
// twice as long as runs of the same bins, and the orientation, which
// changes from one sample to the next at random, costs no branch.
//
// Eight samples at a time. A block is prepared, into one of two halves of
// the frame (608 bytes each), while the block before it is added, so that
// the loads of its values do not wait on the stores that wrote them (a
// load of part of a vector store is not forwarded): its cells (idx rounded
// down to a multiple of 10, by ⌊idx·6554/2¹⁶⌋ = ⌊idx/10⌋, exact below
// 16,389), orientation bins and weight offsets are computed in vectors and
// checked, and its weights, stored corner by corner, transposed (as in
// scatterAVX). The half at off holds sample s's weights at off+64s, the
// same with each pair swapped at off+64s+32, and its cell, bin ×32 and
// weights' offset for its bin (from SP) at off+512+4s, off+544+4s and
// off+576+4s. Then the block's samples are added one by one, by
// straight-line code. It returns false, having added some samples, at a
// block with an index outside the histogram or an orientation bin ≥ 8.
//
// Registers: DI hist, SI idx, DX the current block's weights, CX n, BX
// samples before it, R14 samples in it, R12 its half of the frame; R8 the
// current run's first cell (histogram index), R9 its address, R10 the
// sample's cell, AX its orientation bin ×32, R13 its weights' offset, R11
// the tables; Y0–Y3 the bins 0 … 7 of the four cells, Y4 their bins 8
// (lanes 0, 1, 4, 5), Y6 the sample's lane mask, Y7 scratch; Y5–Y14 the
// preparation of a block (samples R10 in it, into the half at AX).
TEXT ·scatterCellsAVX2(SB), $1216-33
	MOVQ  hist+0(FP), DI
	MOVQ  idx+8(FP), SI
	MOVQ  wts+16(FP), DX
	MOVQ  n+24(FP), CX
	MOVB  $1, ret+32(FP)
	TESTQ CX, CX
	JEQ   cellsRet
	LEAQ  cells<>(SB), R11
	XORQ  BX, BX
	XORQ  R12, R12
	MOVQ  CX, R14
	CMPQ  R14, $8
	JLE   cellsFirst
	MOVQ  $8, R14

cellsFirst:
	MOVQ R14, R10
	XORQ AX, AX
	// The block's cells, bins and offsets, and whether all its samples'
	// are valid; the lanes past n hold whatever follows idx[n−1].
	VMOVDQU (SI), Y8
	VPBROADCASTD 576(R11), Y9
	VPMULHUW Y9, Y8, Y9        // ⌊idx/10⌋ (idx < 2¹⁶)
	VPSLLD   $1, Y9, Y10
	VPSLLD   $3, Y9, Y9
	VPADDD   Y10, Y9, Y9       // the cell
	VPSUBD   Y9, Y8, Y10       // the bin
	VMOVDQU  Y9, 512(SP)(AX*1)
	VPBROADCASTD 580(R11), Y11
	VPMINUD  Y11, Y8, Y11
	VPCMPEQD Y11, Y8, Y11      // idx ≤ 288 (unsigned)
	VPBROADCASTD 584(R11), Y12
	VPMINUD  Y12, Y10, Y12
	VPCMPEQD Y12, Y10, Y12     // bin ≤ 7
	VPAND    Y12, Y11, Y11
	VMOVQ    R10, X13
	VPBROADCASTD X13, Y13
	VPCMPGTD 512(R11), Y13, Y13 // the block's samples
	VPANDN   Y13, Y11, Y11      // the block's samples not valid
	VPTEST   Y11, Y11
	JNE      cellsBad0
	VPSLLD   $5, Y10, Y10
	VMOVDQU  Y10, 544(SP)(AX*1)
	VPBROADCASTD 588(R11), Y11
	VPAND    Y11, Y10, Y10
	VPADDD   544(R11), Y10, Y10
	VMOVQ    AX, X13
	VPBROADCASTD X13, Y13
	VPADDD   Y13, Y10, Y10
	VMOVDQU  Y10, 576(SP)(AX*1)

	// Transpose: t = unpack(r0,r1) …, u = shuffles of t, sample s =
	// VPERM2F128 of u, as in scatterAVX but with ten registers.
	VMOVUPS 0(DX), Y5
	VMOVUPS 32(DX), Y6
	VMOVUPS 64(DX), Y7
	VMOVUPS 96(DX), Y8
	VMOVUPS 128(DX), Y9
	VMOVUPS 160(DX), Y10
	VMOVUPS 192(DX), Y11
	VMOVUPS 224(DX), Y12
	VUNPCKLPS Y6, Y5, Y13   // t0
	VUNPCKHPS Y6, Y5, Y14   // t1
	VUNPCKLPS Y8, Y7, Y5    // t2
	VUNPCKHPS Y8, Y7, Y6    // t3
	VUNPCKLPS Y10, Y9, Y7   // t4
	VUNPCKHPS Y10, Y9, Y8   // t5
	VUNPCKLPS Y12, Y11, Y9  // t6
	VUNPCKHPS Y12, Y11, Y10 // t7
	VSHUFPS $0x44, Y5, Y13, Y11 // u0
	VSHUFPS $0xee, Y5, Y13, Y12 // u1
	VSHUFPS $0x44, Y6, Y14, Y13 // u2
	VSHUFPS $0xee, Y6, Y14, Y5  // u3
	VSHUFPS $0x44, Y9, Y7, Y14  // u4
	VSHUFPS $0xee, Y9, Y7, Y6   // u5
	VSHUFPS $0x44, Y10, Y8, Y7  // u6
	VSHUFPS $0xee, Y10, Y8, Y9  // u7
	VPERM2F128 $0x20, Y14, Y11, Y8
	VMOVUPS Y8, 0(SP)(AX*1)
	VPERMILPS $0xb1, Y8, Y8
	VMOVUPS Y8, 32(SP)(AX*1)
	VPERM2F128 $0x31, Y14, Y11, Y8
	VMOVUPS Y8, 256(SP)(AX*1)
	VPERMILPS $0xb1, Y8, Y8
	VMOVUPS Y8, 288(SP)(AX*1)
	VPERM2F128 $0x20, Y6, Y12, Y8
	VMOVUPS Y8, 64(SP)(AX*1)
	VPERMILPS $0xb1, Y8, Y8
	VMOVUPS Y8, 96(SP)(AX*1)
	VPERM2F128 $0x31, Y6, Y12, Y8
	VMOVUPS Y8, 320(SP)(AX*1)
	VPERMILPS $0xb1, Y8, Y8
	VMOVUPS Y8, 352(SP)(AX*1)
	VPERM2F128 $0x20, Y7, Y13, Y8
	VMOVUPS Y8, 128(SP)(AX*1)
	VPERMILPS $0xb1, Y8, Y8
	VMOVUPS Y8, 160(SP)(AX*1)
	VPERM2F128 $0x31, Y7, Y13, Y8
	VMOVUPS Y8, 384(SP)(AX*1)
	VPERMILPS $0xb1, Y8, Y8
	VMOVUPS Y8, 416(SP)(AX*1)
	VPERM2F128 $0x20, Y9, Y5, Y8
	VMOVUPS Y8, 192(SP)(AX*1)
	VPERMILPS $0xb1, Y8, Y8
	VMOVUPS Y8, 224(SP)(AX*1)
	VPERM2F128 $0x31, Y9, Y5, Y8
	VMOVUPS Y8, 448(SP)(AX*1)
	VPERMILPS $0xb1, Y8, Y8
	VMOVUPS Y8, 480(SP)(AX*1)

	MOVL  512(SP), R8
	LEAQ  (DI)(R8*4), R9
	VMOVUPS (R9), Y0
	VMOVUPS 40(R9), Y1
	VMOVUPS 240(R9), Y2
	VMOVUPS 280(R9), Y3
	VMOVSS  32(R9), X4
	VINSERTPS $0x10, 72(R9), X4, X4
	VMOVSS  272(R9), X7
	VINSERTPS $0x10, 312(R9), X7, X7
	VINSERTF128 $1, X7, Y4, Y4

cellsBlock:
	// Prepare the next block, if any.
	MOVQ CX, R10
	SUBQ BX, R10
	SUBQ $8, R10
	JLE  cellsSample0
	CMPQ R10, $8
	JLE  cellsNext
	MOVQ $8, R10

cellsNext:
	MOVQ $608, AX
	SUBQ R12, AX
	// The block's cells, bins and offsets, and whether all its samples'
	// are valid; the lanes past n hold whatever follows idx[n−1].
	VMOVDQU 32(SI)(BX*4), Y8
	VPBROADCASTD 576(R11), Y9
	VPMULHUW Y9, Y8, Y9        // ⌊idx/10⌋ (idx < 2¹⁶)
	VPSLLD   $1, Y9, Y10
	VPSLLD   $3, Y9, Y9
	VPADDD   Y10, Y9, Y9       // the cell
	VPSUBD   Y9, Y8, Y10       // the bin
	VMOVDQU  Y9, 512(SP)(AX*1)
	VPBROADCASTD 580(R11), Y11
	VPMINUD  Y11, Y8, Y11
	VPCMPEQD Y11, Y8, Y11      // idx ≤ 288 (unsigned)
	VPBROADCASTD 584(R11), Y12
	VPMINUD  Y12, Y10, Y12
	VPCMPEQD Y12, Y10, Y12     // bin ≤ 7
	VPAND    Y12, Y11, Y11
	VMOVQ    R10, X13
	VPBROADCASTD X13, Y13
	VPCMPGTD 512(R11), Y13, Y13 // the block's samples
	VPANDN   Y13, Y11, Y11      // the block's samples not valid
	VPTEST   Y11, Y11
	JNE      cellsBad
	VPSLLD   $5, Y10, Y10
	VMOVDQU  Y10, 544(SP)(AX*1)
	VPBROADCASTD 588(R11), Y11
	VPAND    Y11, Y10, Y10
	VPADDD   544(R11), Y10, Y10
	VMOVQ    AX, X13
	VPBROADCASTD X13, Y13
	VPADDD   Y13, Y10, Y10
	VMOVDQU  Y10, 576(SP)(AX*1)

	// Transpose: t = unpack(r0,r1) …, u = shuffles of t, sample s =
	// VPERM2F128 of u, as in scatterAVX but with ten registers.
	VMOVUPS 256(DX), Y5
	VMOVUPS 288(DX), Y6
	VMOVUPS 320(DX), Y7
	VMOVUPS 352(DX), Y8
	VMOVUPS 384(DX), Y9
	VMOVUPS 416(DX), Y10
	VMOVUPS 448(DX), Y11
	VMOVUPS 480(DX), Y12
	VUNPCKLPS Y6, Y5, Y13   // t0
	VUNPCKHPS Y6, Y5, Y14   // t1
	VUNPCKLPS Y8, Y7, Y5    // t2
	VUNPCKHPS Y8, Y7, Y6    // t3
	VUNPCKLPS Y10, Y9, Y7   // t4
	VUNPCKHPS Y10, Y9, Y8   // t5
	VUNPCKLPS Y12, Y11, Y9  // t6
	VUNPCKHPS Y12, Y11, Y10 // t7
	VSHUFPS $0x44, Y5, Y13, Y11 // u0
	VSHUFPS $0xee, Y5, Y13, Y12 // u1
	VSHUFPS $0x44, Y6, Y14, Y13 // u2
	VSHUFPS $0xee, Y6, Y14, Y5  // u3
	VSHUFPS $0x44, Y9, Y7, Y14  // u4
	VSHUFPS $0xee, Y9, Y7, Y6   // u5
	VSHUFPS $0x44, Y10, Y8, Y7  // u6
	VSHUFPS $0xee, Y10, Y8, Y9  // u7
	VPERM2F128 $0x20, Y14, Y11, Y8
	VMOVUPS Y8, 0(SP)(AX*1)
	VPERMILPS $0xb1, Y8, Y8
	VMOVUPS Y8, 32(SP)(AX*1)
	VPERM2F128 $0x31, Y14, Y11, Y8
	VMOVUPS Y8, 256(SP)(AX*1)
	VPERMILPS $0xb1, Y8, Y8
	VMOVUPS Y8, 288(SP)(AX*1)
	VPERM2F128 $0x20, Y6, Y12, Y8
	VMOVUPS Y8, 64(SP)(AX*1)
	VPERMILPS $0xb1, Y8, Y8
	VMOVUPS Y8, 96(SP)(AX*1)
	VPERM2F128 $0x31, Y6, Y12, Y8
	VMOVUPS Y8, 320(SP)(AX*1)
	VPERMILPS $0xb1, Y8, Y8
	VMOVUPS Y8, 352(SP)(AX*1)
	VPERM2F128 $0x20, Y7, Y13, Y8
	VMOVUPS Y8, 128(SP)(AX*1)
	VPERMILPS $0xb1, Y8, Y8
	VMOVUPS Y8, 160(SP)(AX*1)
	VPERM2F128 $0x31, Y7, Y13, Y8
	VMOVUPS Y8, 384(SP)(AX*1)
	VPERMILPS $0xb1, Y8, Y8
	VMOVUPS Y8, 416(SP)(AX*1)
	VPERM2F128 $0x20, Y9, Y5, Y8
	VMOVUPS Y8, 192(SP)(AX*1)
	VPERMILPS $0xb1, Y8, Y8
	VMOVUPS Y8, 224(SP)(AX*1)
	VPERM2F128 $0x31, Y9, Y5, Y8
	VMOVUPS Y8, 448(SP)(AX*1)
	VPERMILPS $0xb1, Y8, Y8
	VMOVUPS Y8, 480(SP)(AX*1)

cellsSample0:
	MOVL 512(SP)(R12*1), R10
	CMPQ R10, R8
	JNE  cellsFlush0

cellsAdd0:
	MOVL 544(SP)(R12*1), AX
	MOVL 576(SP)(R12*1), R13
	VMOVDQU 0(R11)(AX*1), Y6
	VPERMILPS $0x0d, 0(SP)(R12*1), Y7 // lanes 0, 1, 4, 5: weights 1, 3, 5, 7
	VANDPS  256(R11)(AX*1), Y7, Y7
	VADDPS  Y7, Y4, Y4
	VBROADCASTSD 0(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y0, Y0
	VBROADCASTSD 8(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y1, Y1
	VBROADCASTSD 16(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y2, Y2
	VBROADCASTSD 24(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y3, Y3

cellsSample1:
	CMPQ R14, $1
	JLE  cellsEnd
	MOVL 516(SP)(R12*1), R10
	CMPQ R10, R8
	JNE  cellsFlush1

cellsAdd1:
	MOVL 548(SP)(R12*1), AX
	MOVL 580(SP)(R12*1), R13
	VMOVDQU 0(R11)(AX*1), Y6
	VPERMILPS $0x0d, 64(SP)(R12*1), Y7 // lanes 0, 1, 4, 5: weights 1, 3, 5, 7
	VANDPS  256(R11)(AX*1), Y7, Y7
	VADDPS  Y7, Y4, Y4
	VBROADCASTSD 0(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y0, Y0
	VBROADCASTSD 8(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y1, Y1
	VBROADCASTSD 16(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y2, Y2
	VBROADCASTSD 24(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y3, Y3

cellsSample2:
	CMPQ R14, $2
	JLE  cellsEnd
	MOVL 520(SP)(R12*1), R10
	CMPQ R10, R8
	JNE  cellsFlush2

cellsAdd2:
	MOVL 552(SP)(R12*1), AX
	MOVL 584(SP)(R12*1), R13
	VMOVDQU 0(R11)(AX*1), Y6
	VPERMILPS $0x0d, 128(SP)(R12*1), Y7 // lanes 0, 1, 4, 5: weights 1, 3, 5, 7
	VANDPS  256(R11)(AX*1), Y7, Y7
	VADDPS  Y7, Y4, Y4
	VBROADCASTSD 0(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y0, Y0
	VBROADCASTSD 8(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y1, Y1
	VBROADCASTSD 16(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y2, Y2
	VBROADCASTSD 24(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y3, Y3

cellsSample3:
	CMPQ R14, $3
	JLE  cellsEnd
	MOVL 524(SP)(R12*1), R10
	CMPQ R10, R8
	JNE  cellsFlush3

cellsAdd3:
	MOVL 556(SP)(R12*1), AX
	MOVL 588(SP)(R12*1), R13
	VMOVDQU 0(R11)(AX*1), Y6
	VPERMILPS $0x0d, 192(SP)(R12*1), Y7 // lanes 0, 1, 4, 5: weights 1, 3, 5, 7
	VANDPS  256(R11)(AX*1), Y7, Y7
	VADDPS  Y7, Y4, Y4
	VBROADCASTSD 0(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y0, Y0
	VBROADCASTSD 8(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y1, Y1
	VBROADCASTSD 16(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y2, Y2
	VBROADCASTSD 24(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y3, Y3

cellsSample4:
	CMPQ R14, $4
	JLE  cellsEnd
	MOVL 528(SP)(R12*1), R10
	CMPQ R10, R8
	JNE  cellsFlush4

cellsAdd4:
	MOVL 560(SP)(R12*1), AX
	MOVL 592(SP)(R12*1), R13
	VMOVDQU 0(R11)(AX*1), Y6
	VPERMILPS $0x0d, 256(SP)(R12*1), Y7 // lanes 0, 1, 4, 5: weights 1, 3, 5, 7
	VANDPS  256(R11)(AX*1), Y7, Y7
	VADDPS  Y7, Y4, Y4
	VBROADCASTSD 0(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y0, Y0
	VBROADCASTSD 8(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y1, Y1
	VBROADCASTSD 16(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y2, Y2
	VBROADCASTSD 24(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y3, Y3

cellsSample5:
	CMPQ R14, $5
	JLE  cellsEnd
	MOVL 532(SP)(R12*1), R10
	CMPQ R10, R8
	JNE  cellsFlush5

cellsAdd5:
	MOVL 564(SP)(R12*1), AX
	MOVL 596(SP)(R12*1), R13
	VMOVDQU 0(R11)(AX*1), Y6
	VPERMILPS $0x0d, 320(SP)(R12*1), Y7 // lanes 0, 1, 4, 5: weights 1, 3, 5, 7
	VANDPS  256(R11)(AX*1), Y7, Y7
	VADDPS  Y7, Y4, Y4
	VBROADCASTSD 0(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y0, Y0
	VBROADCASTSD 8(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y1, Y1
	VBROADCASTSD 16(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y2, Y2
	VBROADCASTSD 24(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y3, Y3

cellsSample6:
	CMPQ R14, $6
	JLE  cellsEnd
	MOVL 536(SP)(R12*1), R10
	CMPQ R10, R8
	JNE  cellsFlush6

cellsAdd6:
	MOVL 568(SP)(R12*1), AX
	MOVL 600(SP)(R12*1), R13
	VMOVDQU 0(R11)(AX*1), Y6
	VPERMILPS $0x0d, 384(SP)(R12*1), Y7 // lanes 0, 1, 4, 5: weights 1, 3, 5, 7
	VANDPS  256(R11)(AX*1), Y7, Y7
	VADDPS  Y7, Y4, Y4
	VBROADCASTSD 0(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y0, Y0
	VBROADCASTSD 8(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y1, Y1
	VBROADCASTSD 16(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y2, Y2
	VBROADCASTSD 24(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y3, Y3

cellsSample7:
	CMPQ R14, $7
	JLE  cellsEnd
	MOVL 540(SP)(R12*1), R10
	CMPQ R10, R8
	JNE  cellsFlush7

cellsAdd7:
	MOVL 572(SP)(R12*1), AX
	MOVL 604(SP)(R12*1), R13
	VMOVDQU 0(R11)(AX*1), Y6
	VPERMILPS $0x0d, 448(SP)(R12*1), Y7 // lanes 0, 1, 4, 5: weights 1, 3, 5, 7
	VANDPS  256(R11)(AX*1), Y7, Y7
	VADDPS  Y7, Y4, Y4
	VBROADCASTSD 0(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y0, Y0
	VBROADCASTSD 8(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y1, Y1
	VBROADCASTSD 16(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y2, Y2
	VBROADCASTSD 24(SP)(R13*1), Y7
	VANDPS  Y6, Y7, Y7
	VADDPS  Y7, Y3, Y3

	ADDQ $8, BX
	ADDQ $256, DX
	CMPQ BX, CX
	JGE  cellsEnd
	MOVQ $608, AX
	SUBQ R12, AX
	MOVQ AX, R12
	MOVQ CX, R14
	SUBQ BX, R14
	CMPQ R14, $8
	JLE  cellsBlock
	MOVQ $8, R14
	JMP  cellsBlock

cellsFlush0:
	VMOVUPS Y0, (R9)
	VMOVUPS Y1, 40(R9)
	VMOVUPS Y2, 240(R9)
	VMOVUPS Y3, 280(R9)
	VMOVSS  X4, 32(R9)
	VEXTRACTPS $1, X4, 72(R9)
	VEXTRACTF128 $1, Y4, X7
	VMOVSS  X7, 272(R9)
	VEXTRACTPS $1, X7, 312(R9)
	MOVQ R10, R8
	LEAQ (DI)(R8*4), R9
	VMOVUPS (R9), Y0
	VMOVUPS 40(R9), Y1
	VMOVUPS 240(R9), Y2
	VMOVUPS 280(R9), Y3
	VMOVSS  32(R9), X4
	VINSERTPS $0x10, 72(R9), X4, X4
	VMOVSS  272(R9), X7
	VINSERTPS $0x10, 312(R9), X7, X7
	VINSERTF128 $1, X7, Y4, Y4
	JMP cellsAdd0

cellsFlush1:
	VMOVUPS Y0, (R9)
	VMOVUPS Y1, 40(R9)
	VMOVUPS Y2, 240(R9)
	VMOVUPS Y3, 280(R9)
	VMOVSS  X4, 32(R9)
	VEXTRACTPS $1, X4, 72(R9)
	VEXTRACTF128 $1, Y4, X7
	VMOVSS  X7, 272(R9)
	VEXTRACTPS $1, X7, 312(R9)
	MOVQ R10, R8
	LEAQ (DI)(R8*4), R9
	VMOVUPS (R9), Y0
	VMOVUPS 40(R9), Y1
	VMOVUPS 240(R9), Y2
	VMOVUPS 280(R9), Y3
	VMOVSS  32(R9), X4
	VINSERTPS $0x10, 72(R9), X4, X4
	VMOVSS  272(R9), X7
	VINSERTPS $0x10, 312(R9), X7, X7
	VINSERTF128 $1, X7, Y4, Y4
	JMP cellsAdd1

cellsFlush2:
	VMOVUPS Y0, (R9)
	VMOVUPS Y1, 40(R9)
	VMOVUPS Y2, 240(R9)
	VMOVUPS Y3, 280(R9)
	VMOVSS  X4, 32(R9)
	VEXTRACTPS $1, X4, 72(R9)
	VEXTRACTF128 $1, Y4, X7
	VMOVSS  X7, 272(R9)
	VEXTRACTPS $1, X7, 312(R9)
	MOVQ R10, R8
	LEAQ (DI)(R8*4), R9
	VMOVUPS (R9), Y0
	VMOVUPS 40(R9), Y1
	VMOVUPS 240(R9), Y2
	VMOVUPS 280(R9), Y3
	VMOVSS  32(R9), X4
	VINSERTPS $0x10, 72(R9), X4, X4
	VMOVSS  272(R9), X7
	VINSERTPS $0x10, 312(R9), X7, X7
	VINSERTF128 $1, X7, Y4, Y4
	JMP cellsAdd2

cellsFlush3:
	VMOVUPS Y0, (R9)
	VMOVUPS Y1, 40(R9)
	VMOVUPS Y2, 240(R9)
	VMOVUPS Y3, 280(R9)
	VMOVSS  X4, 32(R9)
	VEXTRACTPS $1, X4, 72(R9)
	VEXTRACTF128 $1, Y4, X7
	VMOVSS  X7, 272(R9)
	VEXTRACTPS $1, X7, 312(R9)
	MOVQ R10, R8
	LEAQ (DI)(R8*4), R9
	VMOVUPS (R9), Y0
	VMOVUPS 40(R9), Y1
	VMOVUPS 240(R9), Y2
	VMOVUPS 280(R9), Y3
	VMOVSS  32(R9), X4
	VINSERTPS $0x10, 72(R9), X4, X4
	VMOVSS  272(R9), X7
	VINSERTPS $0x10, 312(R9), X7, X7
	VINSERTF128 $1, X7, Y4, Y4
	JMP cellsAdd3

cellsFlush4:
	VMOVUPS Y0, (R9)
	VMOVUPS Y1, 40(R9)
	VMOVUPS Y2, 240(R9)
	VMOVUPS Y3, 280(R9)
	VMOVSS  X4, 32(R9)
	VEXTRACTPS $1, X4, 72(R9)
	VEXTRACTF128 $1, Y4, X7
	VMOVSS  X7, 272(R9)
	VEXTRACTPS $1, X7, 312(R9)
	MOVQ R10, R8
	LEAQ (DI)(R8*4), R9
	VMOVUPS (R9), Y0
	VMOVUPS 40(R9), Y1
	VMOVUPS 240(R9), Y2
	VMOVUPS 280(R9), Y3
	VMOVSS  32(R9), X4
	VINSERTPS $0x10, 72(R9), X4, X4
	VMOVSS  272(R9), X7
	VINSERTPS $0x10, 312(R9), X7, X7
	VINSERTF128 $1, X7, Y4, Y4
	JMP cellsAdd4

cellsFlush5:
	VMOVUPS Y0, (R9)
	VMOVUPS Y1, 40(R9)
	VMOVUPS Y2, 240(R9)
	VMOVUPS Y3, 280(R9)
	VMOVSS  X4, 32(R9)
	VEXTRACTPS $1, X4, 72(R9)
	VEXTRACTF128 $1, Y4, X7
	VMOVSS  X7, 272(R9)
	VEXTRACTPS $1, X7, 312(R9)
	MOVQ R10, R8
	LEAQ (DI)(R8*4), R9
	VMOVUPS (R9), Y0
	VMOVUPS 40(R9), Y1
	VMOVUPS 240(R9), Y2
	VMOVUPS 280(R9), Y3
	VMOVSS  32(R9), X4
	VINSERTPS $0x10, 72(R9), X4, X4
	VMOVSS  272(R9), X7
	VINSERTPS $0x10, 312(R9), X7, X7
	VINSERTF128 $1, X7, Y4, Y4
	JMP cellsAdd5

cellsFlush6:
	VMOVUPS Y0, (R9)
	VMOVUPS Y1, 40(R9)
	VMOVUPS Y2, 240(R9)
	VMOVUPS Y3, 280(R9)
	VMOVSS  X4, 32(R9)
	VEXTRACTPS $1, X4, 72(R9)
	VEXTRACTF128 $1, Y4, X7
	VMOVSS  X7, 272(R9)
	VEXTRACTPS $1, X7, 312(R9)
	MOVQ R10, R8
	LEAQ (DI)(R8*4), R9
	VMOVUPS (R9), Y0
	VMOVUPS 40(R9), Y1
	VMOVUPS 240(R9), Y2
	VMOVUPS 280(R9), Y3
	VMOVSS  32(R9), X4
	VINSERTPS $0x10, 72(R9), X4, X4
	VMOVSS  272(R9), X7
	VINSERTPS $0x10, 312(R9), X7, X7
	VINSERTF128 $1, X7, Y4, Y4
	JMP cellsAdd6

cellsFlush7:
	VMOVUPS Y0, (R9)
	VMOVUPS Y1, 40(R9)
	VMOVUPS Y2, 240(R9)
	VMOVUPS Y3, 280(R9)
	VMOVSS  X4, 32(R9)
	VEXTRACTPS $1, X4, 72(R9)
	VEXTRACTF128 $1, Y4, X7
	VMOVSS  X7, 272(R9)
	VEXTRACTPS $1, X7, 312(R9)
	MOVQ R10, R8
	LEAQ (DI)(R8*4), R9
	VMOVUPS (R9), Y0
	VMOVUPS 40(R9), Y1
	VMOVUPS 240(R9), Y2
	VMOVUPS 280(R9), Y3
	VMOVSS  32(R9), X4
	VINSERTPS $0x10, 72(R9), X4, X4
	VMOVSS  272(R9), X7
	VINSERTPS $0x10, 312(R9), X7, X7
	VINSERTF128 $1, X7, Y4, Y4
	JMP cellsAdd7

cellsBad0:
	MOVB $0, ret+32(FP)
	VZEROUPPER
	RET

cellsBad:
	MOVB $0, ret+32(FP)

cellsEnd:
	VMOVUPS Y0, (R9)
	VMOVUPS Y1, 40(R9)
	VMOVUPS Y2, 240(R9)
	VMOVUPS Y3, 280(R9)
	VMOVSS  X4, 32(R9)
	VEXTRACTPS $1, X4, 72(R9)
	VEXTRACTF128 $1, Y4, X7
	VMOVSS  X7, 272(R9)
	VEXTRACTPS $1, X7, 312(R9)
	VZEROUPPER

cellsRet:
	RET

// func gatherRowAVX(r *rowGather, n int)
//
// gatherRowGo on the first n samples of a row, n a multiple of 8, in one
// pass: the two gradient differences (as subAVX), the grid coordinates
// (as gridCoordsGo, the same operations in the same order, j counting up
// from j0 in a vector, exactly: small integers), the row's
// Gaussian weight factor and a copy of the column factors.
//
// Registers: DI dx, SI dy, R8 rbin, R9 cbin, R10 wr, R11 wc, AX row − 1,
// BX row above, DX row below, R12 column factors, CX samples left; Y0 j,
// Y1–Y3 scratch, Y8 sinT, Y9 cosT, Y10 fiCos, Y11 fiSin, Y12 8, Y13 2,
// Y14 0.5, Y15 wi.
TEXT ·gatherRowAVX(SB), NOSPLIT, $0-16
	MOVQ         r+0(FP), CX
	MOVQ         0(CX), DI
	MOVQ         8(CX), SI
	MOVQ         16(CX), R8
	MOVQ         24(CX), R9
	MOVQ         32(CX), R10
	MOVQ         40(CX), R11
	MOVQ         48(CX), AX
	MOVQ         56(CX), BX
	MOVQ         64(CX), DX
	MOVQ         72(CX), R12
	VBROADCASTSS 80(CX), Y0
	VADDPS       gridc<>+0(SB), Y0, Y0
	VBROADCASTSS 84(CX), Y8
	VBROADCASTSS 88(CX), Y9
	VBROADCASTSS 92(CX), Y10
	VBROADCASTSS 96(CX), Y11
	VBROADCASTSS 100(CX), Y15
	VBROADCASTSS gridc<>+32(SB), Y12
	VBROADCASTSS gridc<>+36(SB), Y13
	VBROADCASTSS gridc<>+40(SB), Y14
	MOVQ         n+8(FP), CX

gather8:
	CMPQ    CX, $8
	JLT     gatherDone
	VMOVUPS 8(AX), Y1
	VSUBPS  (AX), Y1, Y1
	VMOVUPS Y1, (DI)
	VMOVUPS (BX), Y2
	VSUBPS  (DX), Y2, Y2 // y up, as OpenCV's
	VMOVUPS Y2, (SI)
	VMULPS  Y8, Y0, Y1
	VADDPS  Y10, Y1, Y1
	VADDPS  Y13, Y1, Y1
	VSUBPS  Y14, Y1, Y1
	VMOVUPS Y1, (R8)
	VMULPS  Y9, Y0, Y2
	VSUBPS  Y11, Y2, Y2
	VADDPS  Y13, Y2, Y2
	VSUBPS  Y14, Y2, Y2
	VMOVUPS Y2, (R9)
	VADDPS  Y12, Y0, Y0
	VMOVUPS Y15, (R10)
	VMOVUPS (R12), Y3
	VMOVUPS Y3, (R11)
	ADDQ    $32, DI
	ADDQ    $32, SI
	ADDQ    $32, R8
	ADDQ    $32, R9
	ADDQ    $32, R10
	ADDQ    $32, R11
	ADDQ    $32, AX
	ADDQ    $32, BX
	ADDQ    $32, DX
	ADDQ    $32, R12
	SUBQ    $8, CX
	JMP     gather8

gatherDone:
	VZEROUPPER
	RET

// TRANSPOSE8 transposes the 8×8 floats of Y0–Y7 (row j in Yj) into Y8–Y15
// (column c in Y(8+c)), clobbering Y0–Y7: pairs of rows interleaved
// (VUNPCKLPS/VUNPCKHPS), then pairs of pairs (VSHUFPS), then the 128-bit
// halves put in place (VPERM2F128).
#define TRANSPOSE8 \
	VUNPCKLPS  Y1, Y0, Y8          \
	VUNPCKHPS  Y1, Y0, Y9          \
	VUNPCKLPS  Y3, Y2, Y10         \
	VUNPCKHPS  Y3, Y2, Y11         \
	VUNPCKLPS  Y5, Y4, Y12         \
	VUNPCKHPS  Y5, Y4, Y13         \
	VUNPCKLPS  Y7, Y6, Y14         \
	VUNPCKHPS  Y7, Y6, Y15         \
	VSHUFPS    $0x44, Y10, Y8, Y0  \
	VSHUFPS    $0xEE, Y10, Y8, Y1  \
	VSHUFPS    $0x44, Y11, Y9, Y2  \
	VSHUFPS    $0xEE, Y11, Y9, Y3  \
	VSHUFPS    $0x44, Y14, Y12, Y4 \
	VSHUFPS    $0xEE, Y14, Y12, Y5 \
	VSHUFPS    $0x44, Y15, Y13, Y6 \
	VSHUFPS    $0xEE, Y15, Y13, Y7 \
	VPERM2F128 $0x20, Y4, Y0, Y8   \
	VPERM2F128 $0x20, Y5, Y1, Y9   \
	VPERM2F128 $0x20, Y6, Y2, Y10  \
	VPERM2F128 $0x20, Y7, Y3, Y11  \
	VPERM2F128 $0x31, Y4, Y0, Y12  \
	VPERM2F128 $0x31, Y5, Y1, Y13  \
	VPERM2F128 $0x31, Y6, Y2, Y14  \
	VPERM2F128 $0x31, Y7, Y3, Y15

// LOADROWS loads the 8 row pointers of the array AX points to into R8–R15.
#define LOADROWS \
	MOVQ 0(AX), R8   \
	MOVQ 8(AX), R9   \
	MOVQ 16(AX), R10 \
	MOVQ 24(AX), R11 \
	MOVQ 32(AX), R12 \
	MOVQ 40(AX), R13 \
	MOVQ 48(AX), R14 \
	MOVQ 56(AX), R15

// func transposeInAVX(t *float32, rows *[8]*float32, n int)
//
// Registers: DI t, R8–R15 the rows, AX byte offset in the rows, CX
// columns left.
TEXT ·transposeInAVX(SB), NOSPLIT, $0-24
	MOVQ t+0(FP), DI
	MOVQ rows+8(FP), AX
	LOADROWS
	MOVQ n+16(FP), CX
	XORQ AX, AX

in8:
	VMOVUPS (R8)(AX*1), Y0
	VMOVUPS (R9)(AX*1), Y1
	VMOVUPS (R10)(AX*1), Y2
	VMOVUPS (R11)(AX*1), Y3
	VMOVUPS (R12)(AX*1), Y4
	VMOVUPS (R13)(AX*1), Y5
	VMOVUPS (R14)(AX*1), Y6
	VMOVUPS (R15)(AX*1), Y7
	TRANSPOSE8
	VMOVUPS Y8, (DI)
	VMOVUPS Y9, 32(DI)
	VMOVUPS Y10, 64(DI)
	VMOVUPS Y11, 96(DI)
	VMOVUPS Y12, 128(DI)
	VMOVUPS Y13, 160(DI)
	VMOVUPS Y14, 192(DI)
	VMOVUPS Y15, 224(DI)
	ADDQ    $256, DI
	ADDQ    $32, AX
	SUBQ    $8, CX
	JNZ     in8
	VZEROUPPER
	RET

// func transposeOutAVX(rows *[8]*float32, t *float32, n int)
//
// Registers: SI t, R8–R15 the rows, AX byte offset in the rows, CX
// columns left.
TEXT ·transposeOutAVX(SB), NOSPLIT, $0-24
	MOVQ rows+0(FP), AX
	LOADROWS
	MOVQ t+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX

out8:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VMOVUPS 128(SI), Y4
	VMOVUPS 160(SI), Y5
	VMOVUPS 192(SI), Y6
	VMOVUPS 224(SI), Y7
	TRANSPOSE8
	VMOVUPS Y8, (R8)(AX*1)
	VMOVUPS Y9, (R9)(AX*1)
	VMOVUPS Y10, (R10)(AX*1)
	VMOVUPS Y11, (R11)(AX*1)
	VMOVUPS Y12, (R12)(AX*1)
	VMOVUPS Y13, (R13)(AX*1)
	VMOVUPS Y14, (R14)(AX*1)
	VMOVUPS Y15, (R15)(AX*1)
	ADDQ    $256, SI
	ADDQ    $32, AX
	SUBQ    $8, CX
	JNZ     out8
	VZEROUPPER
	RET

// func filterColsAVX(sums, cols *float32, gi *int32, gw *float32, taps, n int)
//
// For each destination column x, tap by tap: the tap's weight broadcast,
// times the eight samples of its source column, added to the sums.
//
// Registers: DI sums, SI cols, R8 gi, R9 gw, R10 taps, CX columns left, DX
// taps left, AX source column offset; Y0 sums, Y1 product.
TEXT ·filterColsAVX(SB), NOSPLIT, $0-48
	MOVQ sums+0(FP), DI
	MOVQ cols+8(FP), SI
	MOVQ gi+16(FP), R8
	MOVQ gw+24(FP), R9
	MOVQ taps+32(FP), R10
	MOVQ n+40(FP), CX

filterCol:
	VXORPS Y0, Y0, Y0
	MOVQ   R10, DX

filterTap:
	MOVL         (R8), AX
	SHLQ         $5, AX
	VBROADCASTSS (R9), Y1
	VMULPS       (SI)(AX*1), Y1, Y1
	VADDPS       Y1, Y0, Y0
	ADDQ         $4, R8
	ADDQ         $4, R9
	DECQ         DX
	JNZ          filterTap

	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	DECQ    CX
	JNZ     filterCol
	VZEROUPPER
	RET

// func mulAddAVX(o, s *float32, w float32, n int, set bool)
//
// o[x] += w·s[x] for x < n, n a multiple of 8: VMULPS then VADDPS, no
// fused multiply-add; with set, added to 0 instead of o[x].
TEXT ·mulAddAVX(SB), NOSPLIT, $0-33
	MOVQ         o+0(FP), DI
	MOVQ         s+8(FP), SI
	VBROADCASTSS w+16(FP), Y15
	MOVQ         n+24(FP), CX
	CMPB         set+32(FP), $0
	JNE          mulSet8

mulAdd8:
	VMULPS  (SI), Y15, Y0
	VADDPS  (DI), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     mulAdd8
	VZEROUPPER
	RET

mulSet8:
	VXORPS  Y14, Y14, Y14

mulSetLoop:
	VMULPS  (SI), Y15, Y0
	VADDPS  Y14, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     mulSetLoop
	VZEROUPPER
	RET

DATA u8scale<>+0(SB)/4, $0x437f0000 // 255
GLOBL u8scale<>(SB), RODATA|NOPTR, $4

// func grayRowAVX2(o *float32, s *uint8, n int)
//
// o[x] = float32(s[x]) / 255 for x < n, n a multiple of 8: 8 bytes widened
// to int32 (VPMOVZXBD), converted exactly (VCVTDQ2PS), divided (VDIVPS,
// correctly rounded, as Go's float32 division).
TEXT ·grayRowAVX2(SB), NOSPLIT, $0-24
	MOVQ         o+0(FP), DI
	MOVQ         s+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS u8scale<>+0(SB), Y15

gray8:
	VPMOVZXBD (SI), Y0
	VCVTDQ2PS Y0, Y0
	VDIVPS    Y15, Y0, Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $8, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JNZ       gray8
	VZEROUPPER
	RET
