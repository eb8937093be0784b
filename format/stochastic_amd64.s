// AVX2 kernel for roundStochasticPortable (stochastic.go): 8 values per
// iteration as two groups of 4, each value with its wyrand word, then at
// most two masked groups for the last n%8; for fp8/fp6/fp4 (subLoop) with
// the step below 2^Emin in every group. VEX encodings only
// (TestKernelVEXOnly).

#include "textflag.h"

// Offsets of the fields of srParams (stochastic.go); TestSRParamsLayout
// checks them.
#define R_LANES    0
#define R_STEP     32
#define R_XOR      64
#define R_LO32     96
#define R_KEEP     128
#define R_INCMASK  160
#define R_HALFMASK 192
#define R_UBIAS    224
#define R_SPANX    256
#define R_ABS      288
#define R_ONE      320
#define R_K        352
#define R_C64      384
#define R_LIMIT    416
#define R_NBITS    448
#define R_MAGIC    480
#define R_QUANTUM  512
#define R_NONEGZ   544
#define R_RSHIFT   576
#define R_LSHIFT   584
#define R_HALF     592
#define R_SUBLOOP  600
#define R_KSHIFT   624
#define R_SUBSKIP  632

// Lane masks for the last 1 to 4 values: the 4 qwords from index 4-k have
// their first k lanes all ones.
DATA srtail<>+0(SB)/8, $-1
DATA srtail<>+8(SB)/8, $-1
DATA srtail<>+16(SB)/8, $-1
DATA srtail<>+24(SB)/8, $-1
DATA srtail<>+32(SB)/8, $0
DATA srtail<>+40(SB)/8, $0
DATA srtail<>+48(SB)/8, $0
GLOBL srtail<>(SB), RODATA|NOPTR, $56

// Registers: DX = p, Y14 = the states s of the current 4 words, Y13 =
// 2^32-1 in each lane, X12 = rshift, X11 = lshift.
//
// WYRAND sets Y0 to wyrand's words hi^lo of s·(s^xor) (64×64→128 bits)
// from four 32×32→64 products of the halves of x = s and y = s^xor: with
// mid = lh + ll>>32 and mid2 = hl + (mid mod 2^32) (neither overflows),
// hi = hh + mid>>32 + mid2>>32 and lo = mid2<<32 | (ll mod 2^32).
// Clobbers Y1-Y5.
#define WYRAND \
	VPXOR    R_XOR(DX), Y14, Y1; \
	VPSRLQ   $32, Y14, Y2; \
	VPSRLQ   $32, Y1, Y3; \
	VPMULUDQ Y3, Y2, Y4; \
	VPMULUDQ Y3, Y14, Y3; \
	VPMULUDQ Y1, Y2, Y2; \
	VPMULUDQ Y1, Y14, Y1; \
	VPSRLQ   $32, Y1, Y5; \
	VPADDQ   Y5, Y3, Y3; \
	VPAND    Y13, Y3, Y5; \
	VPADDQ   Y5, Y2, Y2; \
	VPSRLQ   $32, Y3, Y3; \
	VPADDQ   Y3, Y4, Y4; \
	VPSRLQ   $32, Y2, Y3; \
	VPADDQ   Y3, Y4, Y4; \
	VPSLLQ   $32, Y2, Y2; \
	VPAND    Y13, Y1, Y1; \
	VPOR     Y2, Y1, Y1; \
	VPXOR    Y4, Y1, Y0

// INCSR turns the words in Y0 into the increments of Stochastic and
// StochasticBits(n) (X12 holds 64, so 0, where nothing is dropped);
// INCHALF into those of StochasticHalf (the dropped bits where the word's
// top bit is set). Clobber Y1.
#define INCSR \
	VPSRLQ X12, Y0, Y0; \
	VPSLLQ X11, Y0, Y0

#define INCHALF \
	VPXOR    Y1, Y1, Y1; \
	VPCMPGTQ Y0, Y1, Y1; \
	VPAND    R_HALFMASK(DX), Y1, Y0

// ROUND4 rounds x in Y6 with the increments in Y0: Y7 = (x + inc) & keep,
// or x in the lanes out of range, whose mask it leaves in Y8 (u + signBit
// > span2 ^ signBit, signed: u > span2 unsigned, with u = 2|x| - 2·minNormal).
#define ROUND4 \
	VPADDQ    Y0, Y6, Y7; \
	VPAND     R_KEEP(DX), Y7, Y7; \
	VPADDQ    Y6, Y6, Y8; \
	VPADDQ    R_UBIAS(DX), Y8, Y8; \
	VPCMPGTQ  R_SPANX(DX), Y8, Y8; \
	VBLENDVPD Y8, Y6, Y7, Y7

// SUBSTEP does stochasticSubParams' step (as its round) in the lanes of
// the out mask Y8 that it covers (|x| < limit, s = k - max(E, 1) ≤ 63):
// their results into Y7, the lanes cleared from Y8. x in Y6, the words in
// Y10; INCSUB makes the increments in Y0 from s in Y4. Clobbers Y0-Y5.
#define SUBSTEP(INCSUB) \
	VPAND     R_ABS(DX), Y6, Y1; \
	VPSRLQ    $52, Y1, Y2; \
	VPMAXUD   R_ONE(DX), Y2, Y2; \
	VPSUBQ    R_ONE(DX), Y2, Y3; \
	VPSLLQ    $52, Y3, Y3; \
	VPSUBQ    Y3, Y1, Y3; \
	VMOVDQU   R_K(DX), Y4; \
	VPSUBQ    Y2, Y4, Y4; \
	VMOVDQU   R_LIMIT(DX), Y5; \
	VPCMPGTQ  Y1, Y5, Y5; \
	VMOVDQU   R_C64(DX), Y2; \
	VPCMPGTQ  Y4, Y2, Y2; \
	VPAND     Y2, Y5, Y5; \
	VPAND     Y8, Y5, Y5; \
	INCSUB; \
	VPADDQ    Y3, Y0, Y0; \
	VPSRLVQ   Y4, Y0, Y0; \
	VPXOR     Y1, Y1, Y1; \
	VPCMPEQQ  Y1, Y0, Y1; \
	VPAND     R_NONEGZ(DX), Y1, Y1; \
	VPADDQ    R_MAGIC(DX), Y0, Y0; \
	VSUBPD    R_MAGIC(DX), Y0, Y0; \
	VMULPD    R_QUANTUM(DX), Y0, Y0; \
	VMOVDQU   R_ABS(DX), Y2; \
	VPANDN    Y6, Y2, Y2; \
	VPANDN    Y2, Y1, Y2; \
	VPOR      Y2, Y0, Y0; \
	VBLENDVPD Y5, Y0, Y7, Y7; \
	VPANDN    Y8, Y5, Y8

// INCSUBSR: the step's increments r>>(64-j)<<(s-j), j = min(n, s) (VPSRLVQ
// and VPSLLVQ give 0 for counts of 64 and more, in the lanes not covered).
#define INCSUBSR \
	VPMINUD R_NBITS(DX), Y4, Y1; \
	VMOVDQU R_C64(DX), Y2; \
	VPSUBQ  Y1, Y2, Y2; \
	VPSRLVQ Y2, Y10, Y0; \
	VPSUBQ  Y1, Y4, Y2; \
	VPSLLVQ Y2, Y0, Y0

// INCSUBHALF: 2^s - 1 where the word's top bit is set.
#define INCSUBHALF \
	VMOVDQU  R_ONE(DX), Y0; \
	VPSLLVQ  Y4, Y0, Y0; \
	VPSUBQ   R_ONE(DX), Y0, Y0; \
	VPXOR    Y1, Y1, Y1; \
	VPCMPGTQ Y10, Y1, Y1; \
	VPAND    Y1, Y0, Y0

// The loops' group of 4 without and with the step below 2^Emin: the words
// for the values at OFF(SI), the results stored, the lanes still out in Y8.
// GROUPSKIP skips the step where no lane is out (R_SUBSKIP: fp8 e4m3 in
// its normal range, where the step would cost as much as the rest).
#define GROUP(INC, OFF) \
	WYRAND; \
	INC; \
	VMOVDQU OFF(SI)(R9*8), Y6; \
	ROUND4; \
	VMOVDQU Y7, OFF(DI)(R9*8)

#define GROUPSUB(INC, INCSUB, OFF) \
	WYRAND; \
	VMOVDQU Y0, Y10; \
	INC; \
	VMOVDQU OFF(SI)(R9*8), Y6; \
	ROUND4; \
	SUBSTEP(INCSUB); \
	VMOVDQU Y7, OFF(DI)(R9*8)

#define GROUPSKIP(INC, INCSUB, OFF, skip) \
	WYRAND; \
	VMOVDQU Y0, Y10; \
	INC; \
	VMOVDQU OFF(SI)(R9*8), Y6; \
	ROUND4; \
	VPTEST  Y8, Y8; \
	JZ      skip; \
	SUBSTEP(INCSUB); \
skip: \
	VMOVDQU Y7, OFF(DI)(R9*8)

// APPEND appends i+k to slow for each set bit k of AX (clobbers AX, BX, R11):
// slow[n&255] = uint8(i+k); n++, as roundStochasticPortable lists them.
#define APPEND(label) \
	BSFQ AX, BX; \
	ADDQ R9, BX; \
	MOVQ R10, R11; \
	ANDQ $255, R11; \
	MOVB BX, (R8)(R11*1); \
	INCQ R10; \
	LEAQ -1(AX), BX; \
	ANDQ BX, AX; \
	JNZ  label

// LOOP8 is a loop over 8 values as two groups G0 and G1 of 4 (the second's
// words 4 further on); it ends at tail, which takes the last n%8 values 4
// at a time. R12 keeps the first group's lane mask.
#define LOOP8(G0, G1, loop, app, next) \
loop: \
	CMPQ      R9, R13; \
	JGE       tail; \
	G0; \
	VMOVMSKPD Y8, R12; \
	VPADDQ    R_STEP(DX), Y14, Y14; \
	G1; \
	VMOVMSKPD Y8, AX; \
	VPADDQ    R_STEP(DX), Y14, Y14; \
	SHLQ      $4, AX; \
	ORQ       R12, AX; \
	JZ        next; \
app: \
	APPEND(app); \
next: \
	ADDQ      $8, R9; \
	JMP       loop

// func roundStochasticAVX2(dst, src *float64, n int, p *srParams, state uint64, slow *[block]uint8) int
TEXT ·roundStochasticAVX2(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ p+24(FP), DX
	MOVQ slow+40(FP), R8

	VPBROADCASTQ state+32(FP), Y14
	VPADDQ       R_LANES(DX), Y14, Y14
	VMOVDQU      R_LO32(DX), Y13
	VMOVQ        R_KSHIFT(DX), X12
	VMOVQ        R_LSHIFT(DX), X11

	XORQ R9, R9   // i: index of the first value of the current group
	XORQ R10, R10 // n: count of slow positions
	MOVQ CX, R13
	ANDQ $-8, R13 // end of the 8-wide loop
	CMPQ R_SUBLOOP(DX), $0
	JNE  subloops
	CMPQ R_HALF(DX), $0
	JNE  halfloop
	LOOP8(GROUP(INCSR, 0), GROUP(INCSR, 32), srloop, srappend, srnext)
	LOOP8(GROUP(INCHALF, 0), GROUP(INCHALF, 32), halfloop, halfappend, halfnext)
subloops:
	CMPQ R_SUBSKIP(DX), $0
	JNE  skiploops
	CMPQ R_HALF(DX), $0
	JNE  halfsubloop
	LOOP8(GROUPSUB(INCSR, INCSUBSR, 0), GROUPSUB(INCSR, INCSUBSR, 32), srsubloop, srsubappend, srsubnext)
	LOOP8(GROUPSUB(INCHALF, INCSUBHALF, 0), GROUPSUB(INCHALF, INCSUBHALF, 32), halfsubloop, halfsubappend, halfsubnext)
skiploops:
	CMPQ R_HALF(DX), $0
	JNE  halfskiploop
	LOOP8(GROUPSKIP(INCSR, INCSUBSR, 0, srskip0), GROUPSKIP(INCSR, INCSUBSR, 32, srskip1), srskiploop, srskipappend, srskipnext)
	LOOP8(GROUPSKIP(INCHALF, INCSUBHALF, 0, halfskip0), GROUPSKIP(INCHALF, INCSUBHALF, 32, halfskip1), halfskiploop, halfskipappend, halfskipnext)

	// The last 0 to 7 values, by at most two masked groups of up to 4,
	// each as the loop's (R_HALF and R_SUBLOOP pick the steps again).
tail:
	MOVQ CX, AX
	SUBQ R9, AX // values left
	JLE  done
	LEAQ srtail<>(SB), BX
	MOVQ $4, R11
	SUBQ AX, R11
	JGE  tailmaskok
	XORQ R11, R11 // 4 or more left: all lanes
tailmaskok:
	VMOVDQU    (BX)(R11*8), Y9
	WYRAND
	VMOVDQU    Y0, Y10
	CMPQ       R_HALF(DX), $0
	JNE        tailhalf
	INCSR
	JMP        tailround
tailhalf:
	INCHALF
tailround:
	VPMASKMOVQ (SI)(R9*8), Y9, Y6
	ROUND4
	CMPQ       R_SUBLOOP(DX), $0
	JE         tailstore
	CMPQ       R_HALF(DX), $0
	JNE        tailsubhalf
	SUBSTEP(INCSUBSR)
	JMP        tailstore
tailsubhalf:
	SUBSTEP(INCSUBHALF)
tailstore:
	VPAND      Y9, Y8, Y8
	VPMASKMOVQ Y7, Y9, (DI)(R9*8)
	VMOVMSKPD  Y8, AX
	TESTQ      AX, AX
	JZ         tailnext
tailappend:
	APPEND(tailappend)
tailnext:
	VPADDQ R_STEP(DX), Y14, Y14
	ADDQ   $4, R9
	JMP    tail

done:
	VZEROUPPER
	MOVQ R10, ret+48(FP)
	RET
