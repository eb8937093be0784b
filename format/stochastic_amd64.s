// AVX2 kernel for roundStochasticPortable (stochastic.go): 8 values per
// iteration as two groups of 4, each value with its wyrand word (the
// second group's made by the scalar unit), then at most two masked groups
// for the last n%8; for fp8/fp6/fp4 (subLoop) with the step below 2^Emin
// in every group (e4m3: on the rare path), or (fltLoop: fp6, fp4) by float
// adds under round toward zero. VEX encodings only (TestKernelVEXOnly).

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
#define R_XORHI    664
#define R_EXPMASK  696
#define R_EMINEXP  728
#define R_QSHIFT   760
#define R_PSHIFT   792
#define R_PSHIFT1  824
#define R_RMASK    856
#define R_PRED2Q   888
#define R_MAXBITS  920
#define R_FLTLOOP  952
#define R_LO2      608
#define R_SPAN2    616
#define R_LANES8   960
#define R_STEP8    1024
#define R_FLTZMM   1040
#define R_BIAS32   1048
#define R_SPAN32   1080
#define R_BLENDBIAS 1112
#define R_BLENDCNT  1144
#define R_SUBBLEND  1176

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

// Registers: BX = p, Y14 = the states s of the first group's 4 words, Y13
// = 2^32-1 in each lane, R11 = the state of the last scalar word, CX =
// inc, R10 = xor, R12 = the words' buffer, R8 = the next position of
// slow, R13 = the 8-wide loop's end, X12 = rshift, X11 = lshift. In the
// loops, the first group of 4 keeps x in Y6 and its out mask in Y8, the
// second in Y9 and Y15, so that the lanes left can get x back after both
// are stored.
//
// Words: of each 8 values, the first group's 4 come from WYRAND (vector
// code), the second's from the buffer, where the scalar unit makes them
// (GENW, one MULQ each) DIST words ahead of the loop that loads them (the
// stores long done). Half and half keeps both units busy: AVX2 has no
// 64×64→128-bit multiply, so a vector word costs 4.5 instructions on the
// vector ports, a scalar one 6 on the integer ones; all words from either
// side ran slower. The float loop (fltLoop) takes all 8 from the scalar
// unit (GEN8): its rounding keeps the vector ports busy, the integer ones
// were idle (AMD EPYC: 1.05x the half-and-half split).
#define DIST 32

// STEP8: 8·inc in 4 lanes, in the frame after the buffer.
#define STEP8 (8*(256+DIST))

// GENW makes the word of the next state into OFF(R12)(R9*8): s += inc,
// then hi ^ lo of s·(s^xor). Clobbers AX and DX.
#define GENW(OFF) \
	ADDQ CX, R11; \
	MOVQ R11, AX; \
	XORQ R10, AX; \
	MULQ R11; \
	XORQ DX, AX; \
	MOVQ AX, OFF(R12)(R9*8)

// GEN4 makes the second group's words DIST values on (skipping the first
// group's 4 states).
#define GEN4 \
	ADDQ R_STEP(BX), R11; \
	GENW(DIST*8+32); \
	GENW(DIST*8+40); \
	GENW(DIST*8+48); \
	GENW(DIST*8+56)

// GEN8 makes the words of the next 8 states DIST values on: the float
// loop's, all from the scalar unit (its rounding keeps the vector ports
// busy).
#define GEN8 \
	GENW(DIST*8); \
	GENW(DIST*8+8); \
	GENW(DIST*8+16); \
	GENW(DIST*8+24); \
	GENW(DIST*8+32); \
	GENW(DIST*8+40); \
	GENW(DIST*8+48); \
	GENW(DIST*8+56)

// WORDS loads the words of the group at OFF into Y0.
#define WORDS(OFF) VMOVDQU OFF(R12)(R9*8), Y0

// WYRAND sets Y0 to wyrand's words hi^lo of s·(s^xor) (64×64→128 bits)
// for the states s in Y14, from four 32×32→64 products of the halves of
// x = s and y = s^xor (y's high half is (s>>32)^xorHi: an XOR, not a
// shift): with mid = lh + ll>>32 and mid2 = hl + (mid mod 2^32) (neither
// overflows), hi = hh + mid>>32 + mid2>>32 and lo = mid2<<32 | (ll mod
// 2^32), a dword blend. Y13 holds 2^32-1. Clobbers Y1-Y5.
#define WYRAND \
	VPXOR    R_XOR(BX), Y14, Y1; \
	VPSRLQ   $32, Y14, Y2; \
	VPXOR    R_XORHI(BX), Y2, Y3; \
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
	VPBLENDD $0xAA, Y2, Y1, Y1; \
	VPXOR    Y4, Y1, Y0

// The loops' word sources: WV for the first group of 4 (vector wyrand,
// the states then 8 words on), WS for the second (from the buffer).
#define WV \
	WYRAND; \
	VPADDQ STEP8(R12), Y14, Y14

#define WS WORDS(32)

// INCSR turns the words in Y0 into the increments of Stochastic and
// StochasticBits(n) (X12 holds 64, so 0, where nothing is dropped); INCTOP
// is INCSR where lshift is 0 (n ≥ the bits dropped: Stochastic); INCHALF
// makes those of StochasticHalf (the dropped bits where the word's top bit
// is set). Clobber Y1.
#define INCSR \
	VPSRLQ X12, Y0, Y0; \
	VPSLLQ X11, Y0, Y0

#define INCTOP \
	VPSRLQ X12, Y0, Y0

#define INCHALF \
	VPXOR    Y1, Y1, Y1; \
	VPCMPGTQ Y0, Y1, Y1; \
	VPAND    R_HALFMASK(BX), Y1, Y0

// ROUND4 rounds x in X with the increments in Y0: Y7 = (x + inc) & keep,
// and in M the mask of the lanes out of range (MASK4), where Y7 is not
// the result. ROUND4R is ROUND4 without M.
#define ROUND4R(X) \
	VPADDQ    Y0, X, Y7; \
	VPAND     R_KEEP(BX), Y7, Y7

#define ROUND4(X, M) \
	ROUND4R(X); \
	MASK4(X, M)

// MASK4: u + signBit > span2 ^ signBit, signed: u > span2 unsigned, with
// u = 2|x| - 2·minNormal.
#define MASK4(X, M) \
	VPADDQ    X, X, M; \
	VPADDQ    R_UBIAS(BX), M, M; \
	VPCMPGTQ  R_SPANX(BX), M, M

// OUT8 sets Y0 nonzero where a lane of the two groups (x in Y6, Y9) may be
// out, from their high dwords A = |x|>>32: out where A is below
// hi32(minNormal) or at least hi32(MaxFinite) (MASK4 decides there), as
// 2A + bias32 > span32, signed, in 8 dword lanes (srParams.setOut32).
#define OUT8 \
	VSHUFPS  $0xDD, Y9, Y6, Y0; \
	VPADDD   Y0, Y0, Y0; \
	VPADDD   R_BIAS32(BX), Y0, Y0; \
	VPCMPGTD R_SPAN32(BX), Y0, Y0

// SUBSTEP does stochasticSubParams' step (as its round) in the lanes of
// the out mask M that it covers (|x| < limit, s = k - max(E, 1) ≤ 63):
// their results into Y7, the lanes cleared from M. x in X, the words in
// Y10; INCSUB makes the increments in Y0 from s in Y4. Clobbers Y0-Y5.
#define SUBSTEP(INCSUB, X, M) \
	VPAND     R_ABS(BX), X, Y1; \
	VPSRLQ    $52, Y1, Y2; \
	VPMAXUD   R_ONE(BX), Y2, Y2; \
	VPSUBQ    R_ONE(BX), Y2, Y3; \
	VPSLLQ    $52, Y3, Y3; \
	VPSUBQ    Y3, Y1, Y3; \
	VMOVDQU   R_K(BX), Y4; \
	VPSUBQ    Y2, Y4, Y4; \
	VMOVDQU   R_LIMIT(BX), Y5; \
	VPCMPGTQ  Y1, Y5, Y5; \
	VMOVDQU   R_C64(BX), Y2; \
	VPCMPGTQ  Y4, Y2, Y2; \
	VPAND     Y2, Y5, Y5; \
	VPAND     M, Y5, Y5; \
	INCSUB; \
	VPADDQ    Y3, Y0, Y0; \
	VPSRLVQ   Y4, Y0, Y0; \
	VPXOR     Y1, Y1, Y1; \
	VPCMPEQQ  Y1, Y0, Y1; \
	VPAND     R_NONEGZ(BX), Y1, Y1; \
	VPADDQ    R_MAGIC(BX), Y0, Y0; \
	VSUBPD    R_MAGIC(BX), Y0, Y0; \
	VMULPD    R_QUANTUM(BX), Y0, Y0; \
	VMOVDQU   R_ABS(BX), Y2; \
	VPANDN    X, Y2, Y2; \
	VPANDN    Y2, Y1, Y2; \
	VPOR      Y2, Y0, Y0; \
	VBLENDVPD Y5, Y0, Y7, Y7; \
	VPANDN    M, Y5, M

// INCSUBSR: the step's increments r>>(64-j)<<(s-j), j = min(n, s) (VPSRLVQ
// and VPSLLVQ give 0 for counts of 64 and more, in the lanes not covered).
#define INCSUBSR \
	VPMINUD R_NBITS(BX), Y4, Y1; \
	VMOVDQU R_C64(BX), Y2; \
	VPSUBQ  Y1, Y2, Y2; \
	VPSRLVQ Y2, Y10, Y0; \
	VPSUBQ  Y1, Y4, Y2; \
	VPSLLVQ Y2, Y0, Y0

// INCSUBHALF: 2^s - 1 where the word's top bit is set.
#define INCSUBHALF \
	VMOVDQU  R_ONE(BX), Y0; \
	VPSLLVQ  Y4, Y0, Y0; \
	VPSUBQ   R_ONE(BX), Y0, Y0; \
	VPXOR    Y1, Y1, Y1; \
	VPCMPGTQ Y10, Y1, Y1; \
	VPAND    Y1, Y0, Y0

// The loops' group of 4 without and with the step below 2^Emin: the words
// for the values at OFF(SI), the results stored, the lanes still out in M.
// GROUPR is GROUP without the out mask (OUT8 tests both groups); GROUPKEEP
// is GROUPR keeping the words in Y10, for LOOP8SUB.
#define GROUP(W, INC, OFF, X, M) \
	W; \
	INC; \
	VMOVDQU OFF(SI)(R9*8), X; \
	ROUND4(X, M); \
	VMOVDQU Y7, OFF(DI)(R9*8)

#define GROUPSUB(W, INC, INCSUB, OFF, X, M) \
	W; \
	VMOVDQU Y0, Y10; \
	INC; \
	VMOVDQU OFF(SI)(R9*8), X; \
	ROUND4(X, M); \
	SUBSTEP(INCSUB, X, M); \
	VMOVDQU Y7, OFF(DI)(R9*8)

#define GROUPR(W, INC, OFF, X) \
	W; \
	INC; \
	VMOVDQU OFF(SI)(R9*8), X; \
	ROUND4R(X); \
	VMOVDQU Y7, OFF(DI)(R9*8)

#define GROUPKEEP(W, INC, OFF, X) \
	W; \
	VMOVDQU Y0, Y10; \
	INC; \
	VMOVDQU OFF(SI)(R9*8), X; \
	ROUND4R(X); \
	VMOVDQU Y7, OFF(DI)(R9*8)

// GROUPB is GROUPR for subBlend (Stochastic, INCTOP's words): s = shift +
// d bits dropped, d = max(eminField - x's, 0), by count = 64 - s in Y1
// (negative, so shifts give 0, only in lanes OUT8 puts out); Y11 holds
// all ones. GROUPKEEPB keeps the words in Y10.
#define ROUNDB(X) \
	VPADDQ   X, X, Y1; \
	VPSRLQ   $53, Y1, Y1; \
	VPADDQ   R_BLENDBIAS(BX), Y1, Y1; \
	VPMINSD  R_BLENDCNT(BX), Y1, Y1; \
	VPSRLVQ  Y1, Y0, Y0; \
	VPSRLVQ  Y1, Y11, Y1; \
	VPADDQ   Y0, X, Y7; \
	VPANDN   Y7, Y1, Y7

#define GROUPB(W, OFF, X) \
	W; \
	VMOVDQU OFF(SI)(R9*8), X; \
	ROUNDB(X); \
	VMOVDQU Y7, OFF(DI)(R9*8)

#define GROUPKEEPB(W, OFF, X) \
	W; \
	VMOVDQU Y0, Y10; \
	VMOVDQU OFF(SI)(R9*8), X; \
	ROUNDB(X); \
	VMOVDQU Y7, OFF(DI)(R9*8)

// GROUPFLT is the float loop's group (srParams.fltLoop): with a = |x|, Cb
// = max(a's exponent bits, eminExp), Q = Cb - qShift, s = a + (Q | r>>12
// [& rMask: RMASK]) rounds toward zero, t = (s + C) - (C + Q) with C = Cb +
// pShift; the result t | x's sign (NZ: not where t = 0, for formats
// without -0). Out: a > maxBits, or s = pred2Q (r's low bits may decide).
#define GROUPFLT(W, RMASK, NZ, OFF, X, M) \
	W; \
	VMOVDQU  OFF(SI)(R9*8), X; \
	VPAND    R_ABS(BX), X, Y1; \
	VPAND    R_EXPMASK(BX), Y1, Y2; \
	VPMAXUD  R_EMINEXP(BX), Y2, Y2; \
	VPSUBQ   R_QSHIFT(BX), Y2, Y3; \
	VPSRLQ   $12, Y0, Y0; \
	RMASK; \
	VPOR     Y3, Y0, Y0; \
	VADDPD   Y0, Y1, Y0; \
	VPCMPEQQ R_PRED2Q(BX), Y0, Y4; \
	VPADDQ   R_PSHIFT(BX), Y2, Y3; \
	VPADDQ   R_PSHIFT1(BX), Y2, Y2; \
	VADDPD   Y3, Y0, Y0; \
	VSUBPD   Y2, Y0, Y0; \
	VPXOR    X, Y1, Y2; \
	NZ; \
	VPOR     Y2, Y0, Y7; \
	VPCMPGTQ R_MAXBITS(BX), Y1, M; \
	VPOR     Y4, M, M; \
	VMOVDQU  Y7, OFF(DI)(R9*8)

#define NONE

#define RMASK \
	VPAND R_RMASK(BX), Y0, Y0

// NZ clears the sign (Y2) where t (Y0) is +0.
#define NZ \
	VPXOR    Y5, Y5, Y5; \
	VPCMPEQQ Y5, Y0, Y5; \
	VPANDN   Y2, Y5, Y2

// APPEND appends i+k to slow for each set bit k of AX (clobbers AX, BX, R11):
// slow[n&255] = uint8(i+k); n++, as roundStochasticPortable lists them.
// APPEND2 is APPEND for the AVX2 loops, clobbering AX and DX only, with
// R8 the next position of slow (n ≤ 256 values there, each listed once).
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

#define APPEND2(label) \
	BSFQ AX, DX; \
	ADDQ R9, DX; \
	MOVB DX, (R8); \
	INCQ R8; \
	LEAQ -1(AX), DX; \
	ANDQ DX, AX; \
	JNZ  label

// LOOP8 is a loop over 8 values as two groups G0 (words WV) and G1 (WS)
// of 4, making G1's words DIST values on meanwhile; it ends at end, where
// the last n%8 values are left. Where a lane is out, left (the rare path),
// x goes back there.
#define LOOP8(G0, G1, loop, left, app, end) LOOP8W(G0, GEN4, G1, loop, left, app, end)

// LOOP8W is LOOP8 with GEN making the words ahead.
#define LOOP8W(G0, GEN, G1, loop, left, app, end) \
loop: \
	CMPQ       R9, R13; \
	JGE        end; \
	G0; \
	GEN; \
	G1; \
	VPOR       Y8, Y15, Y0; \
	VPTEST     Y0, Y0; \
	JNZ        left; \
	ADDQ       $8, R9; \
	JMP        loop; \
left: \
	VPMASKMOVQ Y6, Y8, (DI)(R9*8); \
	VPMASKMOVQ Y9, Y15, 32(DI)(R9*8); \
	VMOVMSKPD  Y8, DX; \
	VMOVMSKPD  Y15, AX; \
	SHLQ       $4, AX; \
	ORQ        DX, AX; \
app: \
	APPEND2(app); \
	ADDQ       $8, R9; \
	JMP        loop

// LOOP8OUT is the head of LOOP8F and LOOP8SUB: the two groups, one
// test of the 8 values (OUT8), and on the rare path (left) the exact
// masks (MASK4) of the lanes out in Y8 and Y15.
#define LOOP8OUT(G0, G1, loop, left, next, end) \
loop: \
	CMPQ       R9, R13; \
	JGE        end; \
	G0; \
	GEN4; \
	G1; \
	OUT8; \
	VPTEST     Y0, Y0; \
	JNZ        left; \
next: \
	ADDQ       $8, R9; \
	JMP        loop; \
left: \
	MASK4(Y6, Y8); \
	MASK4(Y9, Y15)

// LOOP8F is LOOP8 for GROUPR: one test of the 8 values (OUT8), the
// exact masks (MASK4) on the rare path.
#define LOOP8F(G0, G1, loop, left, app, next, end) \
	LOOP8OUT(G0, G1, loop, left, next, end); \
	LEFT(app, next)

// LEFT puts x back in the lanes of Y8 and Y15 (x in Y6, Y9) and lists
// them, then goes to next.
#define LEFT(app, next) \
	VPOR       Y8, Y15, Y0; \
	VPTEST     Y0, Y0; \
	JZ         next; \
	VPMASKMOVQ Y6, Y8, (DI)(R9*8); \
	VPMASKMOVQ Y9, Y15, 32(DI)(R9*8); \
	VMOVMSKPD  Y8, DX; \
	VMOVMSKPD  Y15, AX; \
	SHLQ       $4, AX; \
	ORQ        DX, AX; \
app: \
	APPEND2(app); \
	JMP        next

// LOOP8SUB is LOOP8 for R_SUBSKIP (fp8 e4m3, whose values of everyday
// magnitude seldom fall below 2^Emin, where the step would cost as much
// as the rest): the step only on the rare path, in the groups with lanes
// out, on their stored results (G0 by GROUPKEEP, its words in Y10; G1's
// words from the buffer), one test per 8 values (OUT8).
#define LOOP8SUB(G0, G1, INCSUB, loop, left, sub1, rest, app, next, end) \
	LOOP8OUT(G0, G1, loop, left, next, end); \
	VPTEST     Y8, Y8; \
	JZ         sub1; \
	VMOVDQU    (DI)(R9*8), Y7; \
	SUBSTEP(INCSUB, Y6, Y8); \
	VMOVDQU    Y7, (DI)(R9*8); \
sub1: \
	VPTEST     Y15, Y15; \
	JZ         rest; \
	VMOVDQU    32(R12)(R9*8), Y10; \
	VMOVDQU    32(DI)(R9*8), Y7; \
	SUBSTEP(INCSUB, Y9, Y15); \
	VMOVDQU    Y7, 32(DI)(R9*8); \
rest: \
	LEFT(app, next)

// func roundStochasticAVX2(dst, src *float64, n int, p *srParams, state uint64, slow *[block]uint8) int
//
// The frame: MXCSR at 0(SP), then from a 32-byte boundary the words'
// buffer (block+DIST words) and STEP8.
TEXT ·roundStochasticAVX2(SB), 0, $2632-56
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), R13
	MOVQ p+24(FP), BX
	MOVQ slow+40(FP), R8
	MOVQ state+32(FP), R11
	LEAQ 8+31(SP), R12
	ANDQ $-32, R12

	VMOVQ R_KSHIFT(BX), X12
	VMOVQ R_LSHIFT(BX), X11
	MOVQ  R_LANES(BX), CX
	MOVQ  R_XOR(BX), R10

	// The states of the first group's words, 8·inc, and the first DIST
	// words of the second groups (the loops make the rest).
	VPBROADCASTQ state+32(FP), Y14
	VPADDQ       R_LANES(BX), Y14, Y14
	VMOVDQU      R_LO32(BX), Y13
	VPBROADCASTQ R_STEP8(BX), Y0
	VMOVDQU      Y0, STEP8(R12)
	XORQ R9, R9
	CMPQ R_FLTLOOP(BX), $0
	JNE  fltgen
gen:
	ADDQ R_STEP(BX), R11
	GENW(32)
	GENW(40)
	GENW(48)
	GENW(56)
	ADDQ $8, R9
	CMPQ R9, $DIST
	JLT  gen

	XORQ R9, R9   // i: index of the first value of the current group
	ANDQ $-8, R13 // end of the 8-wide loop
	CMPQ R_FLTLOOP(BX), $0
	JNE  fltsetup
	CMPQ R_SUBLOOP(BX), $0
	JNE  subloops
	CMPQ R_HALF(BX), $0
	JNE  halfloop
	CMPQ R_LSHIFT(BX), $0
	JNE  srloop
	LOOP8F(GROUPR(WV, INCTOP, 0, Y6), GROUPR(WS, INCTOP, 32, Y9), toploop, topleft, topappend, topnext, tail)
	LOOP8F(GROUPR(WV, INCSR, 0, Y6), GROUPR(WS, INCSR, 32, Y9), srloop, srleft, srappend, srnext, tail)
	LOOP8F(GROUPR(WV, INCHALF, 0, Y6), GROUPR(WS, INCHALF, 32, Y9), halfloop, halfleft, halfappend, halfnext, tail)
subloops:
	CMPQ R_SUBSKIP(BX), $0
	JNE  skipblend
	CMPQ R_HALF(BX), $0
	JNE  halfsubloop
	LOOP8(GROUPSUB(WV, INCSR, INCSUBSR, 0, Y6, Y8), GROUPSUB(WS, INCSR, INCSUBSR, 32, Y9, Y15), srsubloop, srsubleft, srsubappend, tail)
	LOOP8(GROUPSUB(WV, INCHALF, INCSUBHALF, 0, Y6, Y8), GROUPSUB(WS, INCHALF, INCSUBHALF, 32, Y9, Y15), halfsubloop, halfsubleft, halfsubappend, tail)
skiploops:
	CMPQ R_HALF(BX), $0
	JNE  halfskiploop
	CMPQ R_LSHIFT(BX), $0
	JNE  srskiploop
	LOOP8SUB(GROUPKEEP(WV, INCTOP, 0, Y6), GROUPR(WS, INCTOP, 32, Y9), INCSUBSR, topskiploop, topskipleft, topskipsub1, topskiprest, topskipappend, topskipnext, tail)
	LOOP8SUB(GROUPKEEP(WV, INCSR, 0, Y6), GROUPR(WS, INCSR, 32, Y9), INCSUBSR, srskiploop, srskipleft, srskipsub1, srskiprest, srskipappend, srskipnext, tail)
	LOOP8SUB(GROUPKEEP(WV, INCHALF, 0, Y6), GROUPR(WS, INCHALF, 32, Y9), INCSUBHALF, halfskiploop, halfskipleft, halfskipsub1, halfskiprest, halfskipappend, halfskipnext, tail)

	// The float loop, under round toward zero; fltdone restores the
	// caller's MXCSR. (Assembly functions are no async preemption points,
	// and a signal handler starts from the default MXCSR.) RMASK only for
	// StochasticBits(n), n < 52; NZ for formats without -0.
fltsetup:
	VSTMXCSR 0(SP)
	MOVL     0(SP), AX
	ORL      $0x6000, AX
	MOVL     AX, 4(SP)
	VLDMXCSR 4(SP)
	CMPQ     R_NONEGZ(BX), $0
	JNE      fltzloop
	MOVQ     $0x000fffffffffffff, AX
	CMPQ     R_RMASK(BX), AX
	JNE      fltmloop
	LOOP8W(GROUPFLT(WORDS(0), NONE, NONE, 0, Y6, Y8), GEN8, GROUPFLT(WS, NONE, NONE, 32, Y9, Y15), fltloop, fltleft, fltappend, fltdone)
	LOOP8W(GROUPFLT(WORDS(0), RMASK, NONE, 0, Y6, Y8), GEN8, GROUPFLT(WS, RMASK, NONE, 32, Y9, Y15), fltmloop, fltmleft, fltmappend, fltdone)
	LOOP8W(GROUPFLT(WORDS(0), RMASK, NZ, 0, Y6, Y8), GEN8, GROUPFLT(WS, RMASK, NZ, 32, Y9, Y15), fltzloop, fltzleft, fltzappend, fltdone)

	// The float loop's first DIST words, all scalar (GEN8's).
fltgen:
	GENW(0)
	GENW(8)
	GENW(16)
	GENW(24)
	GENW(32)
	GENW(40)
	GENW(48)
	GENW(56)
	ADDQ $8, R9
	CMPQ R9, $DIST
	JLT  fltgen
	XORQ R9, R9
	ANDQ $-8, R13
	JMP  fltsetup

fltdone:
	VLDMXCSR 0(SP)

	// The tail's states: the loop left Y14 as it was.
	MOVQ         R9, AX
	IMULQ        CX, AX
	ADDQ         state+32(FP), AX
	VMOVQ        AX, X14
	VPBROADCASTQ X14, Y14
	VPADDQ       R_LANES(BX), Y14, Y14

	// The last 0 to 7 values, by at most two masked groups of up to 4,
	// each as the loop's (R_HALF and R_SUBLOOP pick the steps again; the
	// float loop's formats take the step below 2^Emin), words by WYRAND.
tail:
	MOVQ n+16(FP), AX
	SUBQ R9, AX // values left
	JLE  done
	LEAQ srtail<>(SB), DX
	MOVQ $4, R11
	SUBQ AX, R11
	JGE  tailmaskok
	XORQ R11, R11 // 4 or more left: all lanes
tailmaskok:
	VMOVDQU    (DX)(R11*8), Y9
	WYRAND
	VMOVDQU    Y0, Y10
	CMPQ       R_HALF(BX), $0
	JNE        tailhalf
	INCSR
	JMP        tailround
tailhalf:
	INCHALF
tailround:
	VPMASKMOVQ (SI)(R9*8), Y9, Y6
	ROUND4(Y6, Y8)
	CMPQ       R_SUBLOOP(BX), $0
	JE         tailstore
	CMPQ       R_HALF(BX), $0
	JNE        tailsubhalf
	SUBSTEP(INCSUBSR, Y6, Y8)
	JMP        tailstore
tailsubhalf:
	SUBSTEP(INCSUBHALF, Y6, Y8)
tailstore:
	VBLENDVPD  Y8, Y6, Y7, Y7
	VPAND      Y9, Y8, Y8
	VPMASKMOVQ Y7, Y9, (DI)(R9*8)
	VMOVMSKPD  Y8, AX
	TESTQ      AX, AX
	JZ         tailnext
tailappend:
	APPEND2(tailappend)
tailnext:
	VPADDQ R_STEP(BX), Y14, Y14
	ADDQ   $4, R9
	JMP  tail

done:
	VZEROUPPER
	SUBQ slow+40(FP), R8
	MOVQ R8, ret+48(FP)
	RET

	// subBlend's dispatch and loop sit after RET: code added before the
	// float loop moved it and cost e2m1/e2m3 sr a quarter (loop layout).
skipblend:
	CMPQ R_SUBBLEND(BX), $0
	JEQ  skiploops
	// Y11 all ones in the loop, 0 again (lshift) for the tail.
blendsetup:
	VPCMPEQQ Y11, Y11, Y11
	LOOP8SUB(GROUPKEEPB(WV, 0, Y6), GROUPB(WS, 32, Y9), INCSUBSR, blendloop, blendleft, blendsub1, blendrest, blendappend, blendnext, blenddone)
blenddone:
	VPXOR Y11, Y11, Y11
	JMP   tail

// The AVX-512 loops (roundStochasticAVX512): the same words and formulas,
// 8 lanes a group, out lanes in K1 (K2 the float loop's band), the last
// n%8 values by one group under the lane mask K4 (masked loads and stores
// neither fault nor write past n). Registers: Z14 = the 8 states, Z13 =
// 2^32-1, Z15 = 8·increment, Z16 = eminExp, X12 and X11 the shifts.

// Lane masks for the last 0 to 7 values.
DATA srtail8<>+0(SB)/8, $0x7f3f1f0f07030100
GLOBL srtail8<>(SB), RODATA|NOPTR, $8

// WYRAND8 is the AVX2 loops' WYRAND in 8 lanes, into Z0; lo's high
// halves come from mid2 and its low ones from ll, XORed with hi in one
// VPTERNLOGQ. Clobbers Z1-Z5.
#define WYRAND8 \
	VPXORQ.BCST R_XOR(DX), Z14, Z1; \
	VPSRLQ      $32, Z14, Z2; \
	VPXORQ.BCST R_XORHI(DX), Z2, Z3; \
	VPMULUDQ    Z3, Z2, Z4; \
	VPMULUDQ    Z3, Z14, Z3; \
	VPMULUDQ    Z1, Z2, Z2; \
	VPMULUDQ    Z1, Z14, Z1; \
	VPSRLQ      $32, Z1, Z5; \
	VPADDQ      Z5, Z3, Z3; \
	VPANDQ      Z13, Z3, Z5; \
	VPADDQ      Z5, Z2, Z2; \
	VPSRLQ      $32, Z3, Z3; \
	VPADDQ      Z3, Z4, Z4; \
	VPSRLQ      $32, Z2, Z3; \
	VPADDQ      Z3, Z4, Z4; \
	VPSLLQ      $32, Z2, Z2; \
	VPANDQ      Z13, Z1, Z0; \
	VPTERNLOGQ  $0x96, Z4, Z2, Z0

#define INCTOP8 \
	VPSRLQ X12, Z0, Z0

#define INCSR8 \
	VPSRLQ X12, Z0, Z0; \
	VPSLLQ X11, Z0, Z0

#define INCHALF8 \
	VPSRAQ      $63, Z0, Z0; \
	VPANDQ.BCST R_HALFMASK(DX), Z0, Z0

// LOAD8 and STORE8 move a whole group; LOADT and STORET the tail's lanes.
#define LOAD8 VMOVDQU64 (SI)(R9*8), Z6
#define STORE8 VMOVDQU64 Z7, (DI)(R9*8)
#define LOADT VMOVDQU64.Z (SI)(R9*8), K4, Z6
#define STORET VMOVDQU64 Z7, K4, (DI)(R9*8)

// GROUP8: x in Z6, Z7 = (x + inc) & keep, K1 = the lanes out of range
// (2x - 2·minNormal > 2·span, unsigned).
#define GROUP8(INC, LOAD, STORE) \
	WYRAND8; \
	INC; \
	LOAD; \
	VPADDQ         Z0, Z6, Z7; \
	VPANDQ.BCST    R_KEEP(DX), Z7, Z7; \
	VPADDQ         Z6, Z6, Z8; \
	VPSUBQ.BCST    R_LO2(DX), Z8, Z8; \
	VPCMPUQ.BCST   $6, R_SPAN2(DX), Z8, K1; \
	STORE

// GROUPFLT8 is GROUPFLT in 8 lanes, rounding toward zero by the adds'
// own rounding control (no MXCSR): RHO makes Q + ρQ from Q in Z3 and
// r>>12 in Z0; SIGN puts x's sign on t in Z7.
#define GROUPFLT8(RHO, SIGN, LOAD, STORE) \
	WYRAND8; \
	LOAD; \
	VPANDQ.BCST    R_ABS(DX), Z6, Z1; \
	VPANDQ.BCST    R_EXPMASK(DX), Z1, Z2; \
	VPMAXUD        Z16, Z2, Z2; \
	VPSUBQ.BCST    R_QSHIFT(DX), Z2, Z3; \
	VPSRLQ         $12, Z0, Z0; \
	RHO; \
	VADDPD.RZ_SAE  Z0, Z1, Z0; \
	VPCMPEQQ.BCST  R_PRED2Q(DX), Z0, K2; \
	VPADDQ.BCST    R_PSHIFT(DX), Z2, Z3; \
	VPADDQ.BCST    R_PSHIFT1(DX), Z2, Z2; \
	VADDPD.RZ_SAE  Z3, Z0, Z0; \
	VSUBPD         Z2, Z0, Z7; \
	SIGN; \
	VPCMPUQ.BCST   $6, R_MAXBITS(DX), Z1, K1; \
	KORW           K2, K1, K1; \
	STORE

#define RHOOR VPORQ Z3, Z0, Z0
#define RHOMASK VPTERNLOGQ.BCST $0xec, R_RMASK(DX), Z3, Z0

// SIGNALL: t | (x &^ abs); SIGNNZ: not where t is +0 (formats without -0).
#define SIGNALL VPTERNLOGQ.BCST $0xf4, R_ABS(DX), Z6, Z7
#define SIGNNZ \
	VPTESTMQ             Z7, Z7, K3; \
	VPTERNLOGQ.BCST      $0xf4, R_ABS(DX), Z6, K3, Z7

// LOOPZ is the 8-lane loop over G, entered at entry, tested at the bottom;
// the lanes of K1 get x back and are listed (left). Then its tail: the
// last n%8 values by TG under K4, and done.
#define LOOPZ(G, TG, entry, loop, left, app, next, tail, tapp) \
entry: \
	CMPQ       R9, R13; \
	JGE        tail; \
loop: \
	G; \
	VPADDQ     Z15, Z14, Z14; \
	KORTESTW   K1, K1; \
	JNZ        left; \
next: \
	ADDQ       $8, R9; \
	CMPQ       R9, R13; \
	JLT        loop; \
	JMP        tail; \
left: \
	VMOVDQU64  Z6, K1, (DI)(R9*8); \
	KMOVW      K1, AX; \
app: \
	APPEND(app); \
	JMP        next; \
tail: \
	MOVQ       CX, AX; \
	SUBQ       R9, AX; \
	JLE        zdone; \
	LEAQ       srtail8<>(SB), BX; \
	MOVBLZX    (BX)(AX*1), AX; \
	KMOVW      AX, K4; \
	TG; \
	KANDW      K4, K1, K1; \
	KORTESTW   K1, K1; \
	JZ         zdone; \
	VMOVDQU64  Z6, K1, (DI)(R9*8); \
	KMOVW      K1, AX; \
tapp: \
	APPEND(tapp); \
	JMP        zdone

// func roundStochasticAVX512(dst, src *float64, n int, p *srParams, state uint64, slow *[block]uint8) int
TEXT ·roundStochasticAVX512(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ p+24(FP), DX
	MOVQ slow+40(FP), R8

	VPBROADCASTQ state+32(FP), Z14
	VPADDQ       R_LANES8(DX), Z14, Z14
	VPBROADCASTQ R_LO32(DX), Z13
	VPBROADCASTQ R_STEP8(DX), Z15
	VPBROADCASTQ R_EMINEXP(DX), Z16
	VMOVQ        R_KSHIFT(DX), X12
	VMOVQ        R_LSHIFT(DX), X11

	XORQ R9, R9
	XORQ R10, R10
	MOVQ CX, R13
	ANDQ $-8, R13
	CMPQ R_FLTZMM(DX), $0
	JNE  zflt
	CMPQ R_HALF(DX), $0
	JNE  zhalf
	CMPQ R_LSHIFT(DX), $0
	JNE  zsr
	LOOPZ(GROUP8(INCTOP8, LOAD8, STORE8), GROUP8(INCTOP8, LOADT, STORET), ztop, ztoploop, ztopleft, ztopapp, ztopnext, ztoptail, ztoptapp)
	LOOPZ(GROUP8(INCSR8, LOAD8, STORE8), GROUP8(INCSR8, LOADT, STORET), zsr, zsrloop, zsrleft, zsrapp, zsrnext, zsrtail, zsrtapp)
	LOOPZ(GROUP8(INCHALF8, LOAD8, STORE8), GROUP8(INCHALF8, LOADT, STORET), zhalf, zhalfloop, zhalfleft, zhalfapp, zhalfnext, zhalftail, zhalftapp)
zflt:
	CMPQ R_NONEGZ(DX), $0
	JNE  zfltz
	MOVQ $0x000fffffffffffff, AX
	CMPQ R_RMASK(DX), AX
	JNE  zfltm
	LOOPZ(GROUPFLT8(RHOOR, SIGNALL, LOAD8, STORE8), GROUPFLT8(RHOOR, SIGNALL, LOADT, STORET), zflta, zfltaloop, zfltaleft, zfltaapp, zfltanext, zfltatail, zfltatapp)
	LOOPZ(GROUPFLT8(RHOMASK, SIGNALL, LOAD8, STORE8), GROUPFLT8(RHOMASK, SIGNALL, LOADT, STORET), zfltm, zfltmloop, zfltmleft, zfltmapp, zfltmnext, zfltmtail, zfltmtapp)
	LOOPZ(GROUPFLT8(RHOMASK, SIGNNZ, LOAD8, STORE8), GROUPFLT8(RHOMASK, SIGNNZ, LOADT, STORET), zfltz, zfltzloop, zfltzleft, zfltzapp, zfltznext, zfltztail, zfltztapp)

zdone:
	VZEROUPPER
	MOVQ R10, ret+48(FP)
	RET
