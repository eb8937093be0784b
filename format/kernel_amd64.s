// AVX2 kernel for roundAddAndMaskGo on float64 values (slice.go): 8 values
// per iteration as two groups of 4 lanes, then at most two masked groups of
// up to 4 for the last n%8 values. Loops: near and dir (integer
// add-and-mask; when a group has lanes out of the normal range, SUB4 rounds
// those below 2^Emin by subParams' fixed-point formula); for the fp8/fp6/fp4
// formats with -0, rneloop and mxloop (FP4: float64 adds alone, in the
// MXCSR rounding mode), fltloop (add-and-mask, then SUB4F on every group)
// and subloop (SUB4 on every group). Lanes still out get x back, and
// scalar code appends their positions.

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

// Offsets of the fields of subParams (slice.go), 4 lanes each;
// TestSubParamsLayout checks them.
#define S_LIMIT   0
#define S_ONE     32
#define S_K       64
#define S_C63     96
#define S_H1      128
#define S_H0      160
#define S_TIE     192
#define S_DIRPOS  224
#define S_DIRX    256
#define S_MAGIC   288
#define S_NONEGZ  320
#define S_QUANTUM 352
#define S_RNEC    384
#define S_ALWAYS  416
#define S_FLTC    448
#define S_ZERO    480
#define S_HALFQ   512
#define S_NHALFQ  544
#define S_UPPOS   576
#define S_UPNEG   608
#define S_DNPOS   640
#define S_DNNEG   672
#define S_TIEUP   704
#define S_TIEDN   736
#define S_MXRC    768
#define S_EXPMASK 800
#define S_PSHIFT  832
#define S_MAXBITS 864
#define S_EMINEXP 896

// Locals: the 4 results of each group at 0(SP) and 32(SP); for the tail,
// x at 64(SP) and the lane mask at 96(SP); the caller's MXCSR at 128(SP)
// and the one mxloop sets at 132(SP).

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

// SUB4 rounds the lanes of OUT (the out mask of a group of 4) whose x
// (loaded from XMEM) is below subParams' limit, with R12 = sp: it blends
// their results into the 4 results at RES(SP) and clears them from OUT.
// Clobbers Y0-Y3, Y6, Y7. The steps are subParams.round's.
#define SUB4(RES, XMEM, OUT, skip) \
	SUB4MASK(XMEM, OUT); \
	VPTEST    Y2, Y2; \
	JZ        skip; \
	SUB4BODY(RES, XMEM, OUT); \
skip:

// SUB4MASK sets Y2 to the lanes of OUT below subParams' limit.
#define SUB4MASK(XMEM, OUT) \
	VMOVDQU   XMEM, Y1; \
	VPAND     Y15, Y1, Y1; \
	VMOVDQU   S_LIMIT(R12), Y2; \
	VPCMPGTQ  Y1, Y2, Y2; \
	VPAND     OUT, Y2, Y2

// SUB4BODY is the rest of SUB4, with |x| in Y1 and the lanes in Y2.
#define SUB4BODY(RES, XMEM, OUT) \
	VPSRLQ    $52, Y1, Y3; \
	VPMAXUD   S_ONE(R12), Y3, Y3; \
	VPSUBQ    S_ONE(R12), Y3, Y6; \
	VPSLLQ    $52, Y6, Y6; \
	VPSUBQ    Y6, Y1, Y1; \
	VMOVDQU   S_K(R12), Y6; \
	VPSUBQ    Y3, Y6, Y3; \
	VPMINUD   S_C63(R12), Y3, Y3; \
	VMOVDQU   S_ONE(R12), Y6; \
	VPSLLVQ   Y3, Y6, Y6; \
	VPSUBQ    S_ONE(R12), Y6, Y6; \
	VPSRLQ    $1, Y6, Y7; \
	VPAND     S_H1(R12), Y7, Y7; \
	VPADDQ    S_H0(R12), Y7, Y7; \
	VPSRLVQ   Y3, Y1, Y0; \
	VPAND     S_TIE(R12), Y0, Y0; \
	VPADDQ    Y0, Y7, Y7; \
	VPXOR     Y0, Y0, Y0; \
	VPCMPGTQ  XMEM, Y0, Y0; \
	VPAND     S_DIRX(R12), Y0, Y0; \
	VPXOR     S_DIRPOS(R12), Y0, Y0; \
	VPAND     Y6, Y0, Y0; \
	VPADDQ    Y0, Y7, Y7; \
	VPADDQ    Y1, Y7, Y7; \
	VPSRLVQ   Y3, Y7, Y7; \
	VPADDQ    S_MAGIC(R12), Y7, Y7; \
	VSUBPD    S_MAGIC(R12), Y7, Y7; \
	VPXOR     Y3, Y3, Y3; \
	VPCMPEQQ  Y3, Y7, Y3; \
	VPAND     S_NONEGZ(R12), Y3, Y3; \
	VMULPD    S_QUANTUM(R12), Y7, Y7; \
	VMOVDQU   XMEM, Y1; \
	VPANDN    Y1, Y15, Y1; \
	VPANDN    Y1, Y3, Y1; \
	VPOR      Y1, Y7, Y7; \
	VMOVDQU   RES(SP), Y0; \
	VBLENDVPD Y2, Y7, Y0, Y0; \
	VMOVDQU   Y0, RES(SP); \
	VPANDN    OUT, Y2, OUT


// SUB4F is the float path of subParams (fltC set): the group's results at
// RES(SP) (x's sign in their sign bits), |x| in A (clobbered: it becomes
// d), out mask OUT. Clobbers Y0, Y1, Y6, Y7. VCMPPD predicates: 0x1e
// greater, 0x11 less, 0x00 equal (ordered, quiet).
#define SUB4F(RES, A, OUT) \
	VMOVDQU   S_LIMIT(R12), Y6; \
	VPCMPGTQ  A, Y6, Y6; \
	VPAND     OUT, Y6, Y6; \
	VADDPD    S_FLTC(R12), A, Y7; \
	VSUBPD    S_FLTC(R12), Y7, Y7; \
	VSUBPD    Y7, A, A; \
	VMOVDQU   RES(SP), Y0; \
	VMOVDQU   S_UPPOS(R12), Y1; \
	VBLENDVPD Y0, S_UPNEG(R12), Y1, Y1; \
	VCMPPD    $0x1e, S_ZERO(R12), A, Y0; \
	VANDPD    Y0, Y1, Y1; \
	VCMPPD    $0x00, S_HALFQ(R12), A, Y0; \
	VANDPD    S_TIEUP(R12), Y0, Y0; \
	VORPD     Y0, Y1, Y1; \
	VANDPD    S_QUANTUM(R12), Y1, Y1; \
	VADDPD    Y1, Y7, Y7; \
	VMOVDQU   RES(SP), Y0; \
	VMOVDQU   S_DNPOS(R12), Y1; \
	VBLENDVPD Y0, S_DNNEG(R12), Y1, Y1; \
	VCMPPD    $0x11, S_ZERO(R12), A, Y0; \
	VANDPD    Y0, Y1, Y1; \
	VCMPPD    $0x00, S_NHALFQ(R12), A, Y0; \
	VANDPD    S_TIEDN(R12), Y0, Y0; \
	VORPD     Y0, Y1, Y1; \
	VANDPD    S_QUANTUM(R12), Y1, Y1; \
	VSUBPD    Y1, Y7, Y7; \
	VMOVDQU   RES(SP), Y0; \
	VPANDN    Y0, Y15, Y1; \
	VPOR      Y1, Y7, Y7; \
	VBLENDVPD Y6, Y7, Y0, Y0; \
	VMOVDQU   Y0, RES(SP); \
	VPANDN    OUT, Y6, OUT

// FP4 rounds the 4 values in X (in place) by float64 arithmetic alone, in
// the MXCSR rounding mode (rneloop: nearest even; mxloop: the mode's): with
// C = 2^(e+53-p) for x in binade e ≥ Emin, and CSUB = 2^(qe+52) below
// 2^Emin, x + ±C lies where the spacing is x's quantum in the format, so
// the add rounds x to the grid; subtracting ±C is exact (Sterbenz). The
// result is |y| with x's sign (so -0 where x < 0). OUT becomes the lanes
// whose result exceeds MaxFinite (or is NaN): overflow, Inf and NaN, for
// the general path. C and T are scratch.
#define FP4(X, C, T, OUT, CSUB) \
	VPAND     Y15, X, C; \
	VMOVDQU   S_LIMIT(R12), OUT; \
	VPCMPGTQ  C, OUT, OUT; \
	VPAND     S_EXPMASK(R12), C, C; \
	VPADDQ    S_PSHIFT(R12), C, C; \
	VBLENDVPD OUT, CSUB(R12), C, C; \
	VPANDN    X, Y15, T; \
	VPOR      T, C, C; \
	VADDPD    C, X, X; \
	VSUBPD    C, X, X; \
	VPAND     Y15, X, X; \
	VPCMPGTQ  S_MAXBITS(R12), X, OUT; \
	VPOR      T, X, X

// FP4MAX is FP4 for formats with subnormals (eminExp set): there C below
// 2^Emin is FP4's at Emin, so C = max(x's exponent bits, Emin's) +
// pShift, with no blend (VPMAXUD: the bits sit in the high dword, the low
// one is 0 in both). Its constants are in registers (FP4REGS), which
// loads from memory made the loop's speed depend on where subParams lies.
#define FP4MAX(X, C, T, OUT) \
	VPAND     Y14, X, C; \
	VPMAXUD   Y13, C, C; \
	VPADDQ    Y12, C, C; \
	VPANDN    X, Y15, T; \
	VPOR      T, C, C; \
	VADDPD    C, X, X; \
	VSUBPD    C, X, X; \
	VPAND     Y15, X, X; \
	VPCMPGTQ  Y11, X, OUT; \
	VPOR      T, X, X

// FP4REGS puts FP4MAX's constants in Y14 (expMask), Y13 (eminExp), Y12
// (pShift) and Y11 (maxBits), in place of ROUND4's, which ROUND4REGS sets
// again (from p, clobbering AX, BX, R11) before the tail.
#define FP4REGS \
	VMOVDQU S_EXPMASK(R12), Y14; \
	VMOVDQU S_EMINEXP(R12), Y13; \
	VMOVDQU S_PSHIFT(R12), Y12; \
	VMOVDQU S_MAXBITS(R12), Y11

#define ROUND4REGS \
	MOVQ         p+24(FP), R11; \
	VPBROADCASTQ P_TIEEVEN(R11), Y14; \
	MOVQ         P_BASE(R11), AX; \
	MOVQ         AX, BX; \
	ADDQ         P_DIRPOS(R11), AX; \
	ADDQ         P_DIRNEG(R11), BX; \
	VMOVQ        AX, X13; \
	VPBROADCASTQ X13, Y13; \
	VMOVQ        BX, X12; \
	VPBROADCASTQ X12, Y12; \
	VPBROADCASTQ P_KEEP(R11), Y11

// FPLOOP is a loop of 8 values per iteration by FP4 (CSUB: the C below
// 2^Emin) or FP4MAX; it ends at done.
#define FPLOOP(ROUNDA, ROUNDB, loop, slow, app, next, done) \
loop: \
	CMPQ    R9, R13; \
	JGE     done; \
	VMOVDQU (SI)(R9*8), Y0; \
	VMOVDQU 32(SI)(R9*8), Y1; \
	ROUNDA; \
	ROUNDB; \
	VPOR    Y4, Y5, Y6; \
	VPTEST  Y6, Y6; \
	JNZ     slow; \
	VMOVDQU Y0, (DI)(R9*8); \
	VMOVDQU Y1, 32(DI)(R9*8); \
next: \
	ADDQ    $8, R9; \
	JMP     loop; \
slow: \
	SLOW8RNE(app, next)

// SLOW8RNE is SLOW8 after FP4 or SUB4F: x back in the lanes still out,
// the stores, the positions appended; all in registers.
#define SLOW8RNE(app, next) \
	VMOVDQU   (SI)(R9*8), Y6; \
	VBLENDVPD Y4, Y6, Y0, Y0; \
	VMOVDQU   Y0, (DI)(R9*8); \
	VMOVDQU   32(SI)(R9*8), Y7; \
	VBLENDVPD Y5, Y7, Y1, Y1; \
	VMOVDQU   Y1, 32(DI)(R9*8); \
	VMOVMSKPD Y4, AX; \
	VMOVMSKPD Y5, BX; \
	SHLQ      $4, BX; \
	ORQ       BX, AX; \
	JZ        next; \
app: \
	APPEND(app); \
	JMP       next

// SLOW8 finishes a group of 8 with out lanes (masks Y4, Y5; results Y0,
// Y1): the subnormal lanes by SUB4, x back in the lanes still out, the
// stores, and the positions appended. Ends at next.
#define SLOW8(skip0, skip1, app, next) \
	VMOVDQU   Y0, 0(SP); \
	VMOVDQU   Y1, 32(SP); \
	SUB4(0, (SI)(R9*8), Y4, skip0); \
	SUB4(32, 32(SI)(R9*8), Y5, skip1); \
	VMOVDQU   0(SP), Y0; \
	VMOVDQU   (SI)(R9*8), Y2; \
	VBLENDVPD Y4, Y2, Y0, Y0; \
	VMOVDQU   Y0, (DI)(R9*8); \
	VMOVDQU   32(SP), Y1; \
	VMOVDQU   32(SI)(R9*8), Y3; \
	VBLENDVPD Y5, Y3, Y1, Y1; \
	VMOVDQU   Y1, 32(DI)(R9*8); \
	VMOVMSKPD Y4, AX; \
	VMOVMSKPD Y5, BX; \
	SHLQ      $4, BX; \
	ORQ       BX, AX; \
	JZ        next; \
app: \
	APPEND(app); \
	JMP       next

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

// func roundAddAndMaskAVX2(dst, src *float64, n int, p *addAndMaskParams, sp *subParams, slow *[block]uint8) int
TEXT ·roundAddAndMaskAVX2(SB), NOSPLIT, $144-56
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ p+24(FP), DX
	MOVQ slow+40(FP), R8

	MOVQ         $0x7fffffffffffffff, AX
	VMOVQ        AX, X0
	VPBROADCASTQ X0, Y15
	VPBROADCASTQ P_TIEEVEN(DX), Y14
	MOVQ         P_BASE(DX), AX
	MOVQ         AX, BX
	ADDQ         P_DIRPOS(DX), AX
	ADDQ         P_DIRNEG(DX), BX
	VMOVQ        AX, X0
	VPBROADCASTQ X0, Y13
	VMOVQ        BX, X0
	VPBROADCASTQ X0, Y12
	MOVQ         AX, R11             // R11 != 0 iff the sign matters
	XORQ         BX, R11
	VPBROADCASTQ P_KEEP(DX), Y11
	MOVQ         $0x8000000000000000, AX
	MOVQ         AX, BX
	SUBQ         P_MINNORMAL(DX), AX
	XORQ         P_SPAN(DX), BX
	VMOVQ        AX, X0
	VPBROADCASTQ X0, Y10
	VMOVQ        BX, X0
	VPBROADCASTQ X0, Y9
	MOVQ         P_SHIFT(DX), AX
	ANDQ         $63, AX
	VMOVQ        AX, X8

	XORQ R9, R9   // i: index of the first value of the current group
	XORQ R10, R10 // n: count of slow positions
	MOVQ CX, R13
	ANDQ $-8, R13 // end of the 8-wide loops
	MOVQ sp+32(FP), R12 // from here on R12 = sp
	CMPQ S_MXRC(R12), $0
	JNE  mxsetup
	TESTQ R11, R11
	JNZ  dirloop
	CMPQ S_RNEC(R12), $0
	JNE  rnesetup
	CMPQ S_FLTC(R12), $0
	JNE  fltloop
	CMPQ S_ALWAYS(R12), $0
	JNE  subloop

nearloop:
	CMPQ R9, R13
	JGE  tail
	VMOVDQU (SI)(R9*8), Y0
	VMOVDQU 32(SI)(R9*8), Y1
	ROUND4NEAR(Y0, Y2, Y4)
	ROUND4NEAR(Y1, Y3, Y5)
	VPOR    Y4, Y5, Y6
	VPTEST  Y6, Y6
	JNZ     nearslow
	VMOVDQU Y0, (DI)(R9*8)
	VMOVDQU Y1, 32(DI)(R9*8)
nearnext:
	ADDQ    $8, R9
	JMP     nearloop

nearslow:
	SLOW8(nearsub0, nearsub1, nearappend, nearnext)

rnesetup:
	CMPQ S_EMINEXP(R12), $0
	JNE  rnemaxsetup
	FPLOOP(FP4(Y0, Y2, Y6, Y4, S_RNEC), FP4(Y1, Y3, Y7, Y5, S_RNEC), rneloop, rneslow, rneappend, rnenext, tail)
rnemaxsetup:
	FP4REGS
	FPLOOP(FP4MAX(Y0, Y2, Y6, Y4), FP4MAX(Y1, Y3, Y7, Y5), rnemaxloop, rnemaxslow, rnemaxappend, rnemaxnext, rnemaxdone)
rnemaxdone:
	ROUND4REGS
	JMP tail

	// mxloop: TowardZero, Up, Down by FP4 on every group, under the MXCSR
	// rounding control of the mode; mxdone restores the caller's.
	// (Assembly functions are no async preemption points, and a signal
	// handler starts from the default MXCSR, so no other code sees it.)
mxsetup:
	VSTMXCSR 128(SP)
	MOVL    128(SP), AX
	ANDL    $~0x6000, AX
	ORL     S_MXRC(R12), AX
	MOVL    AX, 132(SP)
	VLDMXCSR 132(SP)
	CMPQ    S_EMINEXP(R12), $0
	JNE     mxmaxsetup
	FPLOOP(FP4(Y0, Y2, Y6, Y4, S_FLTC), FP4(Y1, Y3, Y7, Y5, S_FLTC), mxloop, mxslow, mxappend, mxnext, mxdone)
mxmaxsetup:
	FP4REGS
	FPLOOP(FP4MAX(Y0, Y2, Y6, Y4), FP4MAX(Y1, Y3, Y7, Y5), mxmaxloop, mxmaxslow, mxmaxappend, mxmaxnext, mxmaxdone)
mxmaxdone:
	ROUND4REGS

mxdone: // the caller's MXCSR back before the tail (its SUB4 needs nearest)
	VLDMXCSR 128(SP)
	JMP     tail

	// fltloop: the modes but NearestEven in formats with -0, SUB4F on
	// every group.
fltloop:
	CMPQ R9, R13
	JGE  tail
	VMOVDQU (SI)(R9*8), Y0
	VMOVDQU 32(SI)(R9*8), Y1
	ROUND4(Y0, Y2, Y4, Y6)
	ROUND4(Y1, Y3, Y5, Y7)
	VMOVDQU Y0, 0(SP)
	VMOVDQU Y1, 32(SP)
	SUB4F(0, Y2, Y4)
	SUB4F(32, Y3, Y5)
	VMOVDQU 0(SP), Y0
	VMOVDQU 32(SP), Y1
	VPOR    Y4, Y5, Y6
	VPTEST  Y6, Y6
	JNZ     fltslow
	VMOVDQU Y0, (DI)(R9*8)
	VMOVDQU Y1, 32(DI)(R9*8)
fltnext:
	ADDQ    $8, R9
	JMP     fltloop

fltslow:
	SLOW8RNE(fltappend, fltnext)

	// subloop: all modes, SUB4 on every group (no branch on the
	// subnormal lanes, which are common in this format).
subloop:
	CMPQ R9, R13
	JGE  tail
	VMOVDQU (SI)(R9*8), Y0
	VMOVDQU 32(SI)(R9*8), Y1
	ROUND4(Y0, Y2, Y4, Y6)
	ROUND4(Y1, Y3, Y5, Y7)
	VMOVDQU Y0, 0(SP)
	VMOVDQU Y1, 32(SP)
	SUB4MASK((SI)(R9*8), Y4)
	SUB4BODY(0, (SI)(R9*8), Y4)
	SUB4MASK(32(SI)(R9*8), Y5)
	SUB4BODY(32, 32(SI)(R9*8), Y5)
	VMOVDQU 0(SP), Y0
	VMOVDQU 32(SP), Y1
	VPOR    Y4, Y5, Y6
	VPTEST  Y6, Y6
	JNZ     subslow
	VMOVDQU Y0, (DI)(R9*8)
	VMOVDQU Y1, 32(DI)(R9*8)
subnext:
	ADDQ    $8, R9
	JMP     subloop

subslow:
	SLOW8RNE(subappend, subnext)

dirloop:
	CMPQ R9, R13
	JGE  tail
	VMOVDQU (SI)(R9*8), Y0
	VMOVDQU 32(SI)(R9*8), Y1
	ROUND4(Y0, Y2, Y4, Y6)
	ROUND4(Y1, Y3, Y5, Y7)
	VPOR    Y4, Y5, Y6
	VPTEST  Y6, Y6
	JNZ     dirslow
	VMOVDQU Y0, (DI)(R9*8)
	VMOVDQU Y1, 32(DI)(R9*8)
dirnext:
	ADDQ    $8, R9
	JMP     dirloop

dirslow:
	SLOW8(dirsub0, dirsub1, dirappend, dirnext)

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
	VMOVDQU    Y0, 64(SP) // x, for SUB4 (reading past n could fault)
	VMOVDQU    Y7, 96(SP)
	ROUND4(Y0, Y2, Y4, Y6)
	VPAND      Y7, Y4, Y4
	VPTEST     Y4, Y4
	JZ         tailstore
	VMOVDQU    Y0, 0(SP)
	SUB4(0, 64(SP), Y4, tailsub)
	VMOVDQU    0(SP), Y0
	VMOVDQU    64(SP), Y2
	VBLENDVPD  Y4, Y2, Y0, Y0
	VMOVDQU    96(SP), Y7
tailstore:
	VPMASKMOVQ Y0, Y7, (DI)(R9*8)
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
	MOVQ R10, ret+48(FP)
	RET
