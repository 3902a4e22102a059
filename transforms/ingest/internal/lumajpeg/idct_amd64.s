//go:build !purego

#include "textflag.h"

// UNPACK8 is the first two steps of transposing the 8×8 int32 block whose
// rows 0 to 7 are Y0 to Y7: unpack pairs of rows by dwords, then qwords,
// within 128-bit lanes (Y8–Y15 scratch); swapping lanes ends it.
#define UNPACK8 \
	VPUNPCKLDQ Y1, Y0, Y8; \
	VPUNPCKHDQ Y1, Y0, Y9; \
	VPUNPCKLDQ Y3, Y2, Y10; \
	VPUNPCKHDQ Y3, Y2, Y11; \
	VPUNPCKLDQ Y5, Y4, Y12; \
	VPUNPCKHDQ Y5, Y4, Y13; \
	VPUNPCKLDQ Y7, Y6, Y14; \
	VPUNPCKHDQ Y7, Y6, Y15; \
	VPUNPCKLQDQ Y10, Y8, Y0; \
	VPUNPCKHQDQ Y10, Y8, Y1; \
	VPUNPCKLQDQ Y11, Y9, Y2; \
	VPUNPCKHQDQ Y11, Y9, Y3; \
	VPUNPCKLQDQ Y14, Y12, Y4; \
	VPUNPCKHQDQ Y14, Y12, Y5; \
	VPUNPCKLQDQ Y15, Y13, Y6; \
	VPUNPCKHQDQ Y15, Y13, Y7

// TRANSPOSE transposes the 8×8 int32 block at DI in place: unpack pairs of
// rows by dwords and qwords within 128-bit lanes, then swap lanes.
#define TRANSPOSE \
	VMOVDQU 0(DI), Y0; \
	VMOVDQU 32(DI), Y1; \
	VMOVDQU 64(DI), Y2; \
	VMOVDQU 96(DI), Y3; \
	VMOVDQU 128(DI), Y4; \
	VMOVDQU 160(DI), Y5; \
	VMOVDQU 192(DI), Y6; \
	VMOVDQU 224(DI), Y7; \
	UNPACK8; \
	VPERM2I128 $0x20, Y4, Y0, Y8; \
	VPERM2I128 $0x31, Y4, Y0, Y9; \
	VMOVDQU Y8, 0(DI); \
	VMOVDQU Y9, 128(DI); \
	VPERM2I128 $0x20, Y5, Y1, Y8; \
	VPERM2I128 $0x31, Y5, Y1, Y9; \
	VMOVDQU Y8, 32(DI); \
	VMOVDQU Y9, 160(DI); \
	VPERM2I128 $0x20, Y6, Y2, Y8; \
	VPERM2I128 $0x31, Y6, Y2, Y9; \
	VMOVDQU Y8, 64(DI); \
	VMOVDQU Y9, 192(DI); \
	VPERM2I128 $0x20, Y7, Y3, Y8; \
	VPERM2I128 $0x31, Y7, Y3, Y9; \
	VMOVDQU Y8, 96(DI); \
	VMOVDQU Y9, 224(DI)

// TRANSPOSEX is TRANSPOSE and LOADX in registers, for the block whose
// rows 0 to 7 are Y0 to Y7 (the row pass's x0…x7): its transposed rows 0
// to 7 end in LOADX's registers for them, Y0, Y7, Y2, Y5, Y1, Y6, Y3 and
// Y4.
#define TRANSPOSEX \
	UNPACK8; \
	VPERM2I128 $0x20, Y4, Y0, Y8; \
	VPERM2I128 $0x31, Y4, Y0, Y9; \
	VPERM2I128 $0x20, Y5, Y1, Y10; \
	VPERM2I128 $0x31, Y5, Y1, Y11; \
	VPERM2I128 $0x20, Y6, Y2, Y12; \
	VPERM2I128 $0x31, Y6, Y2, Y13; \
	VPERM2I128 $0x20, Y7, Y3, Y14; \
	VPERM2I128 $0x31, Y7, Y3, Y15; \
	VMOVDQA Y8, Y0; \
	VMOVDQA Y10, Y7; \
	VMOVDQA Y12, Y2; \
	VMOVDQA Y14, Y5; \
	VMOVDQA Y9, Y1; \
	VMOVDQA Y11, Y6; \
	VMOVDQA Y13, Y3; \
	VMOVDQA Y15, Y4

// BFLY(a, b) is idct's butterfly a, b = a+b, a-b.
#define BFLY(a, b) \
	VPADDD b, a, Y8; \
	VPSUBD b, a, b; \
	VMOVDQA Y8, a

// BOX(a, b, kc, kd, ks) is a, b = dctBox(a, b, kcos, ksin) with kcos,
// ksin−kcos and kcos+ksin at offsets kc, kd and ks of SI.
#define BOX(a, b, kc, kd, ks) \
	VPADDD b, a, Y8; \
	VPBROADCASTD kc(SI), Y9; \
	VPMULLD Y9, Y8, Y8; \
	VPBROADCASTD kd(SI), Y9; \
	VPMULLD Y9, b, Y10; \
	VPBROADCASTD ks(SI), Y9; \
	VPMULLD Y9, a, Y11; \
	VPADDD Y10, Y8, a; \
	VPSUBD Y11, Y8, b

// STAGE1 is idct's last stage: x0, x7 = x0+x7, x0-x7; x1, x6; x2, x5; x3, x4.
#define STAGE1 \
	BFLY(Y0, Y7); \
	BFLY(Y1, Y6); \
	BFLY(Y2, Y5); \
	BFLY(Y3, Y4)

// LOADX loads idct's variables from the rows of the block at DI: x0, x7,
// x2, x5, x1, x6, x3, x4 from rows 0 to 7.
#define LOADX \
	VMOVDQU 0(DI), Y0; \
	VMOVDQU 32(DI), Y7; \
	VMOVDQU 64(DI), Y2; \
	VMOVDQU 96(DI), Y5; \
	VMOVDQU 128(DI), Y1; \
	VMOVDQU 160(DI), Y6; \
	VMOVDQU 192(DI), Y3; \
	VMOVDQU 224(DI), Y4

// STORE4(y, x, xh) stores the four rows of 8 bytes in y (x its low half)
// to DX, DX+CX, …, and advances DX by four rows; xh is scratch.
#define STORE4(y, x, xh) \
	VMOVQ x, (DX); \
	VPEXTRQ $1, x, (DX)(CX*1); \
	LEAQ (DX)(CX*2), DX; \
	VEXTRACTI128 $1, y, xh; \
	VMOVQ xh, (DX); \
	VPEXTRQ $1, xh, (DX)(CX*1); \
	LEAQ (DX)(CX*2), DX

// func idctAVX2(b *block, k *[idctNConsts]int32, dst *byte, stride int, transposed bool)
//
// idct with a vector of eight int32 for each of its variables: b is
// transposed in place, the row pass runs on the columns so made, the
// result is transposed back in registers (TRANSPOSEX) and the column
// pass runs on its rows, each step the int32 operation idct makes
// (VPMULLD keeps the low 32 bits of a product as Go's int32
// multiplication does; VPSRAD is Go's >> on int32).
// The rows, +128, are packed to bytes with signed then unsigned
// saturation (clipping to [0, 255] as level does: the column pass's
// outputs, >>18, are far inside int16), and VPERMD puts each row's 8 bytes
// together. With transposed, b holds the block transposed already: the
// first transposition is skipped. Registers: DI b, SI k, DX dst, CX
// stride; Y0–Y7 the variables x0…x7, Y8–Y11 scratch (Y8–Y15 in the
// transpositions).
TEXT ·idctAVX2(SB), NOSPLIT, $0-33
	MOVQ b+0(FP), DI
	MOVQ k+8(FP), SI
	MOVQ dst+16(FP), DX
	MOVQ stride+24(FP), CX
	MOVBLZX transposed+32(FP), AX
	TESTL AX, AX
	JNZ  rows
	TRANSPOSE
rows:
	LOADX
	VPSLLD $17, Y0, Y0
	VPSLLD $17, Y1, Y1
	BFLY(Y0, Y1)
	BOX(Y2, Y3, 0, 4, 8)
	BFLY(Y1, Y2)
	BFLY(Y0, Y3)
	VPSLLD $7, Y4, Y4
	VPSLLD $7, Y7, Y7
	BFLY(Y7, Y4)
	VPBROADCASTD 12(SI), Y9
	VPMULLD Y9, Y6, Y6
	VPMULLD Y9, Y5, Y5
	BFLY(Y7, Y5)
	BFLY(Y4, Y6)
	VPSRAD $2, Y4, Y4
	VPSRAD $2, Y7, Y7
	BOX(Y4, Y7, 16, 20, 24)
	VPSRAD $2, Y5, Y5
	VPSRAD $2, Y6, Y6
	BOX(Y5, Y6, 28, 32, 36)
	STAGE1
	TRANSPOSEX
	VPBROADCASTD 56(SI), Y9
	VPADDD Y9, Y0, Y0
	VPADDD Y1, Y0, Y8
	VPSUBD Y1, Y0, Y1
	VPSRAD $2, Y8, Y0
	VPSRAD $2, Y1, Y1
	VPSRAD $13, Y2, Y2
	VPSRAD $13, Y3, Y3
	BOX(Y2, Y3, 40, 44, 48)
	BFLY(Y1, Y2)
	BFLY(Y0, Y3)
	BFLY(Y7, Y4)
	VPBROADCASTD 52(SI), Y9
	VPSRAD $13, Y5, Y5
	VPMULLD Y9, Y5, Y5
	VPSRAD $13, Y6, Y6
	VPMULLD Y9, Y6, Y6
	BFLY(Y7, Y5)
	BFLY(Y4, Y6)
	VPSRAD $14, Y4, Y4
	VPSRAD $14, Y7, Y7
	BOX(Y4, Y7, 16, 20, 24)
	VPSRAD $14, Y5, Y5
	VPSRAD $14, Y6, Y6
	BOX(Y5, Y6, 28, 32, 36)
	STAGE1
	VPSRAD $18, Y0, Y0
	VPSRAD $18, Y1, Y1
	VPSRAD $18, Y2, Y2
	VPSRAD $18, Y3, Y3
	VPSRAD $18, Y4, Y4
	VPSRAD $18, Y5, Y5
	VPSRAD $18, Y6, Y6
	VPSRAD $18, Y7, Y7
	VPBROADCASTD 60(SI), Y9
	VPADDD Y9, Y0, Y0
	VPADDD Y9, Y1, Y1
	VPADDD Y9, Y2, Y2
	VPADDD Y9, Y3, Y3
	VPADDD Y9, Y4, Y4
	VPADDD Y9, Y5, Y5
	VPADDD Y9, Y6, Y6
	VPADDD Y9, Y7, Y7
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKSSDW Y5, Y4, Y4
	VPACKSSDW Y7, Y6, Y6
	VPACKUSWB Y2, Y0, Y0
	VPACKUSWB Y6, Y4, Y4
	VMOVDQU 64(SI), Y10
	VPERMD Y0, Y10, Y0
	VPERMD Y4, Y10, Y4
	STORE4(Y0, X0, X1)
	STORE4(Y4, X4, X5)
	VZEROUPPER
	RET

// IDCT4 is idct4 on four registers of four int32 lanes each (x0..x3 in
// A, B, C, D), the even part's constant a shift, the odd part's in X12
// (scaledC1) and X13 (scaledC3): A..D become y0..y3. X8..X11 are scratch.
#define IDCT4(A, B, C, D) \
	VPADDD C, A, X8; \
	VPSUBD C, A, X9; \
	VPSLLD $12, X8, X8; \
	VPSLLD $12, X9, X9; \
	VPMULLD X12, B, X10; \
	VPMULLD X13, D, X11; \
	VPADDD X11, X10, X10; \
	VPMULLD X13, B, B; \
	VPMULLD X12, D, D; \
	VPSUBD D, B, X11; \
	VPADDD X10, X8, A; \
	VPSUBD X10, X8, D; \
	VPADDD X11, X9, B; \
	VPSUBD X11, X9, C

// TRANSPOSE4 transposes the 4×4 int32 matrix whose rows are A..D (X8..X11
// scratch).
#define TRANSPOSE4(A, B, C, D) \
	VPUNPCKLDQ B, A, X8; \
	VPUNPCKHDQ B, A, X9; \
	VPUNPCKLDQ D, C, X10; \
	VPUNPCKHDQ D, C, X11; \
	VPUNPCKLQDQ X10, X8, A; \
	VPUNPCKHQDQ X10, X8, B; \
	VPUNPCKLQDQ X11, X9, C; \
	VPUNPCKHQDQ X11, X9, D

// ADDSHIFT4 adds the constant K to each lane of X0..X3 and shifts them
// right by S, arithmetically (X14 and AX scratch).
#define ADDSHIFT4(K, S) \
	MOVL K, AX; \
	VMOVD AX, X14; \
	VPBROADCASTD X14, X14; \
	VPADDD X14, X0, X0; \
	VPADDD X14, X1, X1; \
	VPADDD X14, X2, X2; \
	VPADDD X14, X3, X3; \
	VPSRAD S, X0, X0; \
	VPSRAD S, X1, X1; \
	VPSRAD S, X2, X2; \
	VPSRAD S, X3, X3

// func idctScaled4AVX2(b *block, dst *byte, stride int)
TEXT ·idctScaled4AVX2(SB), NOSPLIT, $0-24
	MOVQ b+0(FP), SI
	MOVQ dst+8(FP), DI
	MOVQ stride+16(FP), BX
	MOVL $5352, AX
	VMOVD AX, X12
	VPBROADCASTD X12, X12
	MOVL $2217, AX
	VMOVD AX, X13
	VPBROADCASTD X13, X13
	// The top-left 4×4 coefficients, a row of the block a register,
	// transposed: X0..X3 hold columns u = 0..3, lane v.
	VMOVDQU 0(SI), X0
	VMOVDQU 32(SI), X1
	VMOVDQU 64(SI), X2
	VMOVDQU 96(SI), X3
	TRANSPOSE4(X0, X1, X2, X3)
	// The row pass: X0..X3 hold r[v][i] for i = 0..3, lane v.
	IDCT4(X0, X1, X2, X3)
	ADDSHIFT4($16384, $15)
	// X0..X3 hold r's rows v = 0..3, lane i; the column pass makes
	// output row j, lane i, in Xj.
	TRANSPOSE4(X0, X1, X2, X3)
	IDCT4(X0, X1, X2, X3)
	ADDSHIFT4($32768, $16)
	// level: +128, then saturating packs clip to 0..255.
	ADDSHIFT4($128, $0)
	VPACKSSDW X1, X0, X0
	VPACKSSDW X3, X2, X2
	VPACKUSWB X2, X0, X0
	VPEXTRD $0, X0, (DI)
	VPEXTRD $1, X0, (DI)(BX*1)
	VPEXTRD $2, X0, (DI)(BX*2)
	LEAQ (BX)(BX*2), AX
	VPEXTRD $3, X0, (DI)(AX*1)
	RET
