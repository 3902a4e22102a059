//go:build !purego

#include "textflag.h"

// STEP multiplies coordinate j of the strip's 6 points (6 floats at X(SI))
// by coordinate j of the panel's 16 centroids (two vectors at P(DI)) into
// the 12 accumulators: Y0/Y1 for point 0, Y2/Y3 for point 1, and so on.
#define STEP(P, X) \
	VMOVUPS      P(DI), Y12;         \
	VMOVUPS      32+P(DI), Y13;      \
	VBROADCASTSS X(SI), Y14;         \
	VFMADD231PS  Y12, Y14, Y0;       \
	VFMADD231PS  Y13, Y14, Y1;       \
	VBROADCASTSS 4+X(SI), Y15;       \
	VFMADD231PS  Y12, Y15, Y2;       \
	VFMADD231PS  Y13, Y15, Y3;       \
	VBROADCASTSS 8+X(SI), Y14;       \
	VFMADD231PS  Y12, Y14, Y4;       \
	VFMADD231PS  Y13, Y14, Y5;       \
	VBROADCASTSS 12+X(SI), Y15;      \
	VFMADD231PS  Y12, Y15, Y6;       \
	VFMADD231PS  Y13, Y15, Y7;       \
	VBROADCASTSS 16+X(SI), Y14;      \
	VFMADD231PS  Y12, Y14, Y8;       \
	VFMADD231PS  Y13, Y14, Y9;       \
	VBROADCASTSS 20+X(SI), Y15;      \
	VFMADD231PS  Y12, Y15, Y10;      \
	VFMADD231PS  Y13, Y15, Y11

// ROW turns point R's accumulators A, B into ‖c‖² − 2·x·c (Y12/Y13 hold
// the norms; doubling is exact), stores the 16 values at out+64·R, and
// sets byte R of the mask (R8) to the lanes of min(A, B) at or below the
// point's threshold.
#define ROW(R, A, B) \
	VADDPS       A, A, A;            \
	VSUBPS       A, Y12, A;          \
	VADDPS       B, B, B;            \
	VSUBPS       B, Y13, B;          \
	VMOVUPS      A, (64*R)(DX);      \
	VMOVUPS      B, (64*R+32)(DX);   \
	VMINPS       B, A, Y15;          \
	VBROADCASTSS (4*R)(BX), Y14;     \
	VCMPPS       $0x12, Y14, Y15, Y15; \
	VMOVMSKPS    Y15, AX;            \
	SHLQ         $(8*R), AX;         \
	ORQ          AX, R8

// func panelFMA(xs, panel *float32, dim int, norms, thr, out *float32) uint64
//
// The 6×16 dot products of a strip with a panel, four coordinates per
// loop: each coordinate loads two centroid vectors and broadcasts six
// point values into twelve independent fused multiply-adds, enough to
// cover the FMA latency on both ports.
TEXT ·panelFMA(SB), NOSPLIT, $0-56
	MOVQ xs+0(FP), SI
	MOVQ panel+8(FP), DI
	MOVQ dim+16(FP), CX
	SHRQ $2, CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

loop:
	STEP(0, 0)
	STEP(64, 24)
	STEP(128, 48)
	STEP(192, 72)
	ADDQ $256, DI
	ADDQ $96, SI
	DECQ CX
	JNZ  loop

	MOVQ norms+24(FP), AX
	VMOVUPS (AX), Y12
	VMOVUPS 32(AX), Y13
	MOVQ thr+32(FP), BX
	MOVQ out+40(FP), DX
	XORQ R8, R8
	ROW(0, Y0, Y1)
	ROW(1, Y2, Y3)
	ROW(2, Y4, Y5)
	ROW(3, Y6, Y7)
	ROW(4, Y8, Y9)
	ROW(5, Y10, Y11)
	VZEROUPPER
	MOVQ R8, ret+48(FP)
	RET

// PT adds the 16 squared differences of block (P) of a point to its four
// accumulators A, as sqDist does: lane k of A is sqDist's s_k, and each
// gets coordinates k, 4+k, 8+k, 12+k of the block in that order, each
// squared and added without fusing.
#define PT(P, A) \
	VMOVUPS (P), X8;     \
	VSUBPS  X4, X8, X8;  \
	VMULPS  X8, X8, X8;  \
	VADDPS  X8, A, A;    \
	VMOVUPS 16(P), X9;   \
	VSUBPS  X5, X9, X9;  \
	VMULPS  X9, X9, X9;  \
	VADDPS  X9, A, A;    \
	VMOVUPS 32(P), X8;   \
	VSUBPS  X6, X8, X8;  \
	VMULPS  X8, X8, X8;  \
	VADDPS  X8, A, A;    \
	VMOVUPS 48(P), X9;   \
	VSUBPS  X7, X9, X9;  \
	VMULPS  X9, X9, X9;  \
	VADDPS  X9, A, A

// func sqDist4AVX(x *float32, dim int, c *float32, bound *float32, out *[4]float32)
//
// sqDist of four consecutive points of dimension dim (a multiple of 16) to
// c, with bounds bound[0:4], in lockstep: the four dependency chains that
// one point's sqDist leaves idle run side by side. After each block of 16
// coordinates the totals (s0 + s1) + (s2 + s3) are formed as sqDist forms
// them (two horizontal adds) and the search stops once all four reach
// their bounds. out receives the totals: the exact sqDist of a point that
// stayed under its bound, some value at or above the bound otherwise.
TEXT ·sqDist4AVX(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ dim+8(FP), CX
	MOVQ c+16(FP), DI
	MOVQ bound+24(FP), R8
	MOVQ CX, R9
	SHLQ $2, R9
	LEAQ (SI)(R9*1), R10
	LEAQ (R10)(R9*1), R11
	LEAQ (R11)(R9*1), R12
	SHRQ $4, CX
	VMOVUPS (R8), X12
	VXORPS  X0, X0, X0
	VXORPS  X1, X1, X1
	VXORPS  X2, X2, X2
	VXORPS  X3, X3, X3

block4:
	VMOVUPS (DI), X4
	VMOVUPS 16(DI), X5
	VMOVUPS 32(DI), X6
	VMOVUPS 48(DI), X7
	PT(SI, X0)
	PT(R10, X1)
	PT(R11, X2)
	PT(R12, X3)
	VHADDPS X1, X0, X8
	VHADDPS X3, X2, X9
	VHADDPS X9, X8, X10
	VCMPPS  $0x1d, X12, X10, X11
	VMOVMSKPS X11, AX
	CMPL    AX, $15
	JEQ     done4
	ADDQ    $64, SI
	ADDQ    $64, R10
	ADDQ    $64, R11
	ADDQ    $64, R12
	ADDQ    $64, DI
	DECQ    CX
	JNZ     block4

done4:
	MOVQ    out+32(FP), DX
	VMOVUPS X10, (DX)
	RET

// RSTEP is STEP with the strip's 6 points read from their own rows (R8 to
// R13) at byte offset SI+X rather than from a packed strip.
#define RSTEP(P, X) \
	VMOVUPS      P(DI), Y12;         \
	VMOVUPS      32+P(DI), Y13;      \
	VBROADCASTSS X(R8)(SI*1), Y14;   \
	VFMADD231PS  Y12, Y14, Y0;       \
	VFMADD231PS  Y13, Y14, Y1;       \
	VBROADCASTSS X(R9)(SI*1), Y15;   \
	VFMADD231PS  Y12, Y15, Y2;       \
	VFMADD231PS  Y13, Y15, Y3;       \
	VBROADCASTSS X(R10)(SI*1), Y14;  \
	VFMADD231PS  Y12, Y14, Y4;       \
	VFMADD231PS  Y13, Y14, Y5;       \
	VBROADCASTSS X(R11)(SI*1), Y15;  \
	VFMADD231PS  Y12, Y15, Y6;       \
	VFMADD231PS  Y13, Y15, Y7;       \
	VBROADCASTSS X(R12)(SI*1), Y14;  \
	VFMADD231PS  Y12, Y14, Y8;       \
	VFMADD231PS  Y13, Y14, Y9;       \
	VBROADCASTSS X(R13)(SI*1), Y15;  \
	VFMADD231PS  Y12, Y15, Y10;      \
	VFMADD231PS  Y13, Y15, Y11

// func panelFMARows(rows *[]float32, panel *float32, dim int, norms, thr, out *float32) uint64
//
// panelFMA with the strip's points unpacked: rows points at 6 slice
// headers (24 bytes apart) whose data hold the points' dim coordinates.
// The fused multiply-adds are panelFMA's, in its order, so the scores are
// the same bit for bit; only the loads differ.
TEXT ·panelFMARows(SB), NOSPLIT, $0-56
	MOVQ rows+0(FP), AX
	MOVQ 0(AX), R8
	MOVQ 24(AX), R9
	MOVQ 48(AX), R10
	MOVQ 72(AX), R11
	MOVQ 96(AX), R12
	MOVQ 120(AX), R13
	MOVQ panel+8(FP), DI
	MOVQ dim+16(FP), CX
	SHRQ $2, CX
	XORQ SI, SI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

rloop:
	RSTEP(0, 0)
	RSTEP(64, 4)
	RSTEP(128, 8)
	RSTEP(192, 12)
	ADDQ $256, DI
	ADDQ $16, SI
	DECQ CX
	JNZ  rloop

	MOVQ norms+24(FP), AX
	VMOVUPS (AX), Y12
	VMOVUPS 32(AX), Y13
	MOVQ thr+32(FP), BX
	MOVQ out+40(FP), DX
	XORQ R8, R8
	ROW(0, Y0, Y1)
	ROW(1, Y2, Y3)
	ROW(2, Y4, Y5)
	ROW(3, Y6, Y7)
	ROW(4, Y8, Y9)
	ROW(5, Y10, Y11)
	VZEROUPPER
	MOVQ R8, ret+48(FP)
	RET
