// AVX2 kernel for roundAddAndMaskGo on float64 values (slice.go): 8 values
// per iteration as two groups of 4 lanes, then at most two masked groups of
// up to 4 for the last n%8 values. The slow positions are rare, so they are
// appended by scalar code only when a group's out mask is non-zero.

#include "textflag.h"

// Offsets of the fields of addAndMaskParams (slice.go); TestAddAndMaskParamsLayout
// checks them.
#define P_BASE      0
#define P_TIEEVEN   8
#define P_DIRPOS    16
#define P_DIRNEG    24
#define P_SHIFT     32
#define P_KEEP      40
#define P_MINNORMAL 48
#define P_SPAN      56

// Lane masks for the last 1 to 4 values: the 4 qwords from index 4-k have
// their first k lanes all ones.
DATA tailmask<>+0(SB)/8, $-1
DATA tailmask<>+8(SB)/8, $-1
DATA tailmask<>+16(SB)/8, $-1
DATA tailmask<>+24(SB)/8, $-1
DATA tailmask<>+32(SB)/8, $0
DATA tailmask<>+40(SB)/8, $0
DATA tailmask<>+48(SB)/8, $0
GLOBL tailmask<>(SB), RODATA|NOPTR, $56

// Constant registers, set up once per call:
//	Y15 = ^signBit            Y14 = tieEven
//	Y13 = base + dirPos       Y12 = base + dirNeg
//	Y11 = keep                Y10 = signBit - minNormal
//	Y9  = span ^ signBit      X8  = shift & 63
//
// ROUND4 rounds the 4 values in X (in place: X becomes r | sign) using A, T
// and I as scratch; T ends as the out mask (all ones in lanes needing
// roundSlow). With u = r - minNormal, u >u span iff
// u^signBit >s span^signBit, and u^signBit = r + (signBit - minNormal).
#define ROUND4(X, A, T, I) \
	VPAND     Y15, X, A; \
	VPSRLQ    X8, A, T; \
	VPAND     Y14, T, T; \
	VBLENDVPD X, Y12, Y13, I; \
	VPADDQ    A, T, T; \
	VPADDQ    I, T, T; \
	VPAND     Y11, T, T; \
	VPXOR     A, X, X; \
	VPOR      T, X, X; \
	VPADDQ    Y10, T, T; \
	VPCMPGTQ  Y9, T, T

// ROUND4NEAR is ROUND4 when base+dirPos = base+dirNeg (all modes but Up and
// Down): no blend on the sign.
#define ROUND4NEAR(X, A, T) \
	VPAND     Y15, X, A; \
	VPSRLQ    X8, A, T; \
	VPAND     Y14, T, T; \
	VPADDQ    A, T, T; \
	VPADDQ    Y13, T, T; \
	VPAND     Y11, T, T; \
	VPXOR     A, X, X; \
	VPOR      T, X, X; \
	VPADDQ    Y10, T, T; \
	VPCMPGTQ  Y9, T, T

// APPEND appends i+k to slow for each set bit k of AX (clobbers AX, BX, R11):
// slow[n&255] = uint8(i+k); n++, as roundAddAndMaskGo does.
#define APPEND(label) \
	BSFQ   AX, BX; \
	ADDQ   R9, BX; \
	MOVQ   R10, R11; \
	ANDQ   $255, R11; \
	MOVB   BX, (R8)(R11*1); \
	INCQ   R10; \
	LEAQ   -1(AX), BX; \
	ANDQ   BX, AX; \
	JNZ    label

// func roundAddAndMaskAVX2(dst, src *float64, n int, p *addAndMaskParams, slow *[block]uint8) int
TEXT ·roundAddAndMaskAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ p+24(FP), DX
	MOVQ slow+32(FP), R8

	MOVQ         $0x7fffffffffffffff, AX
	MOVQ         AX, X0
	VPBROADCASTQ X0, Y15
	VPBROADCASTQ P_TIEEVEN(DX), Y14
	MOVQ         P_BASE(DX), AX
	MOVQ         AX, BX
	ADDQ         P_DIRPOS(DX), AX
	ADDQ         P_DIRNEG(DX), BX
	MOVQ         AX, X0
	VPBROADCASTQ X0, Y13
	MOVQ         BX, X0
	VPBROADCASTQ X0, Y12
	MOVQ         AX, R12             // R12 != 0 iff the sign matters
	XORQ         BX, R12
	VPBROADCASTQ P_KEEP(DX), Y11
	MOVQ         $0x8000000000000000, AX
	MOVQ         AX, BX
	SUBQ         P_MINNORMAL(DX), AX
	XORQ         P_SPAN(DX), BX
	MOVQ         AX, X0
	VPBROADCASTQ X0, Y10
	MOVQ         BX, X0
	VPBROADCASTQ X0, Y9
	MOVQ         P_SHIFT(DX), AX
	ANDQ         $63, AX
	MOVQ         AX, X8

	XORQ R9, R9   // i: index of the first value of the current group
	XORQ R10, R10 // n: count of slow positions
	MOVQ CX, R13
	ANDQ $-8, R13 // end of the 8-wide loops
	TESTQ R12, R12
	JNZ  dirloop

nearloop:
	CMPQ R9, R13
	JGE  tail
	VMOVDQU (SI)(R9*8), Y0
	VMOVDQU 32(SI)(R9*8), Y1
	ROUND4NEAR(Y0, Y2, Y4)
	ROUND4NEAR(Y1, Y3, Y5)
	VMOVDQU Y0, (DI)(R9*8)
	VMOVDQU Y1, 32(DI)(R9*8)
	VPOR    Y4, Y5, Y6
	VPTEST  Y6, Y6
	JNZ     nearslow
	ADDQ    $8, R9
	JMP     nearloop

nearslow:
	VMOVMSKPD Y4, AX
	VMOVMSKPD Y5, BX
	SHLQ      $4, BX
	ORQ       BX, AX
nearappend:
	APPEND(nearappend)
	ADDQ $8, R9
	JMP  nearloop

dirloop:
	CMPQ R9, R13
	JGE  tail
	VMOVDQU (SI)(R9*8), Y0
	VMOVDQU 32(SI)(R9*8), Y1
	ROUND4(Y0, Y2, Y4, Y6)
	ROUND4(Y1, Y3, Y5, Y7)
	VMOVDQU Y0, (DI)(R9*8)
	VMOVDQU Y1, 32(DI)(R9*8)
	VPOR    Y4, Y5, Y6
	VPTEST  Y6, Y6
	JNZ     dirslow
	ADDQ    $8, R9
	JMP     dirloop

dirslow:
	VMOVMSKPD Y4, AX
	VMOVMSKPD Y5, BX
	SHLQ      $4, BX
	ORQ       BX, AX
dirappend:
	APPEND(dirappend)
	ADDQ $8, R9
	JMP  dirloop

	// The last 0 to 7 values, by at most two masked groups of up to 4.
tail:
	LEAQ tailmask<>(SB), DX
tailloop:
	MOVQ CX, AX
	SUBQ R9, AX // values left
	JLE  done
	MOVQ $4, BX
	SUBQ AX, BX
	JGE  tailmaskok
	XORQ BX, BX // 4 or more left: all lanes
tailmaskok:
	VMOVDQU    (DX)(BX*8), Y7
	VPMASKMOVQ (SI)(R9*8), Y7, Y0
	ROUND4(Y0, Y2, Y4, Y6)
	VPMASKMOVQ Y0, Y7, (DI)(R9*8)
	VPAND      Y7, Y4, Y4
	VMOVMSKPD  Y4, AX
	TESTQ      AX, AX
	JZ         tailnext
tailappend:
	APPEND(tailappend)
tailnext:
	ADDQ $4, R9
	JMP  tailloop

done:
	VZEROUPPER
	MOVQ R10, ret+40(FP)
	RET
