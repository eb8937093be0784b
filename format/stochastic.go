package format

import (
	"math"
	"math/bits"
	"unsafe"
)

// The stochastic streams use Wang Yi's wyrand, a counter-based generator
// (output i is a mix of seed + (i+1)·increment) that passes BigCrush and
// PractRand: the slow path can recompute the word the fast loop used.
const (
	wyrandIncrement = 0xa0761d6478bd642f
	wyrandXor       = 0xe7037ed1a0b428db

	// 2, 3 and 4 increments, mod 2^64 (the unrolled loops' offsets).
	wyrandInc2 = 2 * wyrandIncrement % (1 << 64)
	wyrandInc3 = 3 * wyrandIncrement % (1 << 64)
	wyrandInc4 = 4 * wyrandIncrement % (1 << 64)
)

func wyrandMix(s uint64) uint64 {
	hi, lo := bits.Mul64(s, s^wyrandXor)
	return hi ^ lo
}

// wyrandAt is the i-th word (from 0) of the stream that starts at state.
func wyrandAt(state, i uint64) uint64 { return wyrandMix(state + (i+1)*wyrandIncrement) }

// stochasticSubParams describes roundSub's stochastic step for the slice
// loop: with E1 = max(|x|'s exponent field, 1), mant = |x|'s bits -
// (E1-1)<<52 and s = k - E1 (kept where 1 ≤ s ≤ 63), the result is
// (mant + inc) >> s times quantum, inc = ⌊r/2^(64-j)⌋·2^(s-j) with
// j = min(n, s) (StochasticHalf: 2^s - 1 when r's top bit is set).
type stochasticSubParams struct {
	limit, k, n uint64
	half        bool
	quantum     float64
	noNegZero   uint64 // all ones where -0 is no value of the format
}

// stochasticSubParams reports whether the step applies to f (not where the
// quantum is float64's own, fp64).
func (f *Format) stochasticSubParams(m Mode) (stochasticSubParams, bool) {
	qe := f.subQuantumExp()
	if qe <= -1074 {
		return stochasticSubParams{}, false
	}
	ss := stochasticSubParams{limit: f.minNormal, k: uint64(qe + 1075), n: uint64(m.randomBits()),
		half: m == StochasticHalf, quantum: math.Ldexp(1, qe)}
	if !f.specials.HasNegativeZero() {
		ss.noNegZero = ^uint64(0)
	}
	return ss, true
}

// round is the step for x's bits b and the random word r: the result's
// bits, and whether x was in its range (|x| < 2^Emin, 1 ≤ s ≤ 63).
func (ss *stochasticSubParams) round(b, r uint64) (uint64, bool) {
	a := b &^ signBit
	e1 := max(a>>52, 1)
	s := ss.k - e1 // wraps for large a
	if a >= ss.limit || s-1 >= 63 {
		return 0, false
	}
	mant := a - (e1-1)<<52
	var inc uint64
	if ss.half {
		inc = (1<<s - 1) & -(r >> 63)
	} else {
		j := min(ss.n, s)
		inc = r >> (64 - j) << (s - j)
	}
	q := (mant + inc) >> s
	sign := (b & signBit) &^ (ss.noNegZero & -b2u(q == 0))
	return math.Float64bits(float64(int64(q))*ss.quantum) | sign, true
}

// srParams is a stochastic mode's fast path for the slice loops: with b =
// x's bits and r the random word, the result's bits are
//
//	(b + inc) & keep,  inc = (r>>rshift)<<lshift & incMask  (half: keep's complement if r < 0)
//
// (stochasticParams' formula with x's sign in place: inc < 2^shift cannot
// carry into it) where u = 2·|x| - 2·minNormal ≤ span2, that is 2^Emin ≤
// |x| ≤ MaxFinite (the result cannot overflow); elsewhere the loops leave
// x. Where subLoop is set (fp8/fp6/fp4, whose values often fall below
// 2^Emin) the loops also do stochasticSubParams' step in the lanes it
// covers (abs … noNegZero hold its parameters). The AVX2 kernel reads the
// 4-lane fields as memory operands: keep the layout (TestSRParamsLayout).
type srParams struct {
	lanes    [4]uint64 // (1, 2, 3, 4)·wyrandIncrement: the first group's words
	step     [4]uint64 // 4·wyrandIncrement
	xor      [4]uint64 // wyrandXor
	lo32     [4]uint64 // 2^32 - 1
	keep     [4]uint64
	incMask  [4]uint64 // all ones; 0 where nothing is dropped (p = 53)
	halfMask [4]uint64 // StochasticHalf: the dropped bits
	uBias    [4]uint64 // signBit - 2·minNormal: u + signBit, for a signed compare
	spanX    [4]uint64 // span2 ^ signBit

	abs, one, k, c64, limit, nBits, magic, quantum, noNegZero [4]uint64

	rshift, lshift uint64
	half           uint64 // 1 for StochasticHalf
	subLoop        uint64 // 1: the step below 2^Emin in the loop
	lo2, span2     uint64 // 2·minNormal, 2·span (the portable loop's)
	kshift         uint64 // the kernel's rshift: 64 where incMask is 0 (its shifts give 0)
	subSkip        uint64 // 1: the AVX2 kernel does the step on its rare path only (emin < srSkipEmin)

	// The portable loops': the top n bits (Stochastic: all; 0 where
	// nothing is dropped), 64 - shift, and where subLoop is set the table.
	tn, rsh uint64
	tab     *srTable

	xorHi [4]uint64 // wyrandXor>>32: the high half of s^xor is (s>>32)^xorHi

	// The kernel's float loop (fltLoop: fp6, fp4, formats with subnormals
	// and emin ≥ srSkipEmin, not StochasticHalf), under MXCSR's round
	// toward zero: with Cb = max(|x|'s exponent bits, eminExp) (2^e, e ≥
	// Emin), Q = Cb - qShift (2^(e+1-p), the spacing there), C = Cb +
	// pShift (Q·2^52, pShift1 = C + Q) and s = |x| + Q + ρQ (Q's bits with
	// (r>>12)&rMask as fraction), (s + C) - (C + Q) is ⌊|x|/Q + ρ⌋·Q: ρ is
	// r's top 52 (or n) bits, which decide as all 64 do but where |x| < Q
	// and s = pred2Q (the float below 2Q): those lanes go to the general
	// path. Lanes with |x| > MaxFinite (maxBits) go too.
	expMask, eminExp, qShift, pShift, pShift1, rMask, pred2Q, maxBits [4]uint64
	fltLoop                                                           uint64

	// The AVX-512 loops (8 lanes; where zmm is set: the formats without
	// the step below 2^Emin, and the float loop's, fltZmm): the first 8
	// words' states, and 8·wyrandIncrement.
	lanes8 [8]uint64
	step8  uint64
	zmm    uint64
	fltZmm uint64 // the AVX-512 loops' float loop (setFloatLoop)

	// The AVX2 loops' test of 8 values at once on their high dwords
	// (OUT8): out where 2A + bias32 > span32 (signed, A = |x|>>32), a
	// superset of the lanes out of range (the exact test decides there).
	bias32, span32 [8]uint32

	// subBlend (e4m3 Stochastic, n ≥ 52): the AVX2 skip loop rounds |x|
	// in [Q, 2^Emin) in the main loop too, dropping shift+d bits (d =
	// eminField - x's, at least 0) with count = min(x's field + blendBias,
	// kshift): Q's binades then leave the rare path, whose branch
	// mispredicted in 6% of groups of 8.
	blendBias, blendCnt [4]uint64
	subBlend            uint64
}

func (f *Format) srParams(m Mode) srParams {
	var p srParams
	set := func(v *[4]uint64, x uint64) { *v = [4]uint64{x, x, x, x} }
	inc := uint64(wyrandIncrement) // products wrap, as the stream's do
	for i := range p.lanes {
		p.lanes[i] = uint64(i+1) * inc
	}
	set(&p.step, 4*inc)
	set(&p.xor, wyrandXor)
	set(&p.lo32, 1<<32-1)
	set(&p.keep, ^f.dropMask)
	p.lo2, p.span2 = f.minNormal<<1, f.normalSpan<<1
	set(&p.uBias, signBit-p.lo2)
	set(&p.spanX, p.span2^signBit)
	switch k := uint64(min(m.randomBits(), f.shift)); {
	case m == StochasticHalf:
		p.half = 1
		set(&p.halfMask, f.dropMask)
	case k > 0: // else nothing is dropped: inc = 0
		p.rshift, p.lshift = 64-k, uint64(f.shift)-k
		set(&p.incMask, ^uint64(0))
	}
	p.kshift = p.rshift
	if p.incMask[0] == 0 {
		p.kshift = 64
	}
	if n := m.randomBits(); n > 0 && f.shift > 0 {
		p.tn, p.rsh = ^uint64(0)<<(64-n), uint64(64-f.shift)
	}
	set(&p.abs, ^uint64(signBit))
	set(&p.one, 1)
	set(&p.c64, 64)
	set(&p.magic, 0x4330000000000000) // 2^52
	set(&p.xorHi, wyrandXor>>32)
	for i := range p.lanes8 {
		p.lanes8[i] = uint64(i+1) * inc
	}
	p.step8 = 8 * inc
	p.setOut32(f)
	p.setFloatLoop(f, m)
	if ss, ok := f.stochasticSubParams(m); ok && f.emin >= subAlwaysEmin {
		p.subLoop = 1
		set(&p.limit, ss.limit)
		set(&p.k, ss.k)
		set(&p.nBits, ss.n)
		set(&p.quantum, math.Float64bits(ss.quantum))
		set(&p.noNegZero, ss.noNegZero)
		p.tab = f.srTable(m == StochasticHalf)
		if f.emin < srSkipEmin {
			p.subSkip = 1
			p.setBlend(f, m)
		}
	}
	if p.subLoop == 0 || p.fltZmm != 0 {
		p.zmm = 1
	}
	return p
}

// setOut32 sets bias32 and span32: with L = hi32(minNormal) and H =
// hi32(MaxFinite), a lane is in where L ≤ A < H, that is where 2A - 2L <
// 2(H - L) unsigned (as 2A + (2^31 - 2L) > (2(H-L) - 1) ^ 2^31, signed:
// not where H ≤ L, where the odd 2A + 1 > -2^31 puts every lane out).
// minNormal's low dword is 0, so a lane in has 2^Emin ≤ |x| < MaxFinite.
func (p *srParams) setOut32(f *Format) { p.setOut32Lo(f.minNormal, f) }

// setOut32Lo is setOut32 with lo (low dword 0) in place of minNormal.
func (p *srParams) setOut32Lo(lo uint64, f *Format) {
	l, h := uint32(lo>>32), uint32((f.minNormal+f.normalSpan)>>32)
	bias, span := uint32(1), uint32(1<<31)
	if h > l {
		bias, span = 1<<31-2*l, (2*(h-l)-1)^1<<31
	}
	for i := range p.bias32 {
		p.bias32[i], p.span32[i] = bias, span
	}
}

// setBlend sets subBlend where the step below 2^Emin is the add-and-mask
// formula with d more bits dropped, bit for bit stochasticSubParams': from
// Q = 2^qe up (s ≤ 52 keeps the implicit bit) and where j = min(n, s) = s.
func (p *srParams) setBlend(f *Format, m Mode) {
	qe := f.subQuantumExp()
	if !f.subnormals || m == StochasticHalf || p.lshift != 0 || p.incMask[0] == 0 ||
		qe < -1022 || m.randomBits() < 52 {
		return
	}
	set := func(v *[4]uint64, x uint64) { *v = [4]uint64{x, x, x, x} }
	p.subBlend = 1
	set(&p.blendBias, p.kshift-(f.minNormal>>52))
	set(&p.blendCnt, p.kshift)
	p.setOut32Lo(uint64(qe+1023)<<52, f)
}

// setFloatLoop sets the float loop's fields where it applies: fltZmm for
// the AVX-512 loops (every format that has the step below 2^Emin, with
// subnormals), fltLoop for the AVX2 ones (fp6, fp4: for e4m3 their step
// behind a branch is cheaper).
func (p *srParams) setFloatLoop(f *Format, m Mode) {
	if !f.subnormals || f.emin < subAlwaysEmin || m == StochasticHalf || f.shift == 0 {
		return
	}
	set := func(v *[4]uint64, x uint64) { *v = [4]uint64{x, x, x, x} }
	p.fltZmm = 1
	if f.emin >= srSkipEmin {
		p.fltLoop = 1
	}
	q := uint64(f.subQuantumExp()+1023) << 52 // Q's bits below 2^Emin
	set(&p.expMask, 0x7ff0000000000000)
	set(&p.eminExp, f.minNormal)
	set(&p.qShift, uint64(52-f.shift)<<52)
	set(&p.pShift, uint64(f.shift)<<52)
	set(&p.pShift1, uint64(f.shift)<<52+1)
	set(&p.rMask, ^uint64(0)>>12&(^uint64(0)<<(64-m.randomBits())>>12))
	set(&p.pred2Q, q+1<<52-1)
	set(&p.maxBits, f.maxBits)
	if !f.specials.HasNegativeZero() {
		set(&p.noNegZero, ^uint64(0))
	}
}

// srSkipEmin: below this emin (fp8 e4m3, P3109 p = 4), values of everyday
// magnitude seldom fall below 2^Emin, and the AVX2 kernel's step there
// (as costly as the rest of a group) is on its rare path, behind the test
// of each 8 values; from it up (fp6, fp4) such values are common: there
// the branch would mispredict.
const srSkipEmin = -2

// roundStochasticPortable is the portable loop of a stochastic mode over
// ≤ block values, the i-th with the word wyrandAt(state, i): it leaves x
// at the positions it could not round, lists them in slow (in order) and
// returns their count. (The AVX2 kernel leaves more: values below 2^Emin
// that the portable tables round; finishStochastic gives both the same
// results.)
func roundStochasticPortable(dst, src []float64, p *srParams, state uint64, slow *[block]uint8) int {
	d, s := bitsOf(dst), bitsOf(src)
	n := 0
	for i := 0; i < len(s); i++ {
		if i += p.next(d[i:], s[i:], state+uint64(i)*wyrandIncrement); i == len(s) {
			break
		}
		d[i] = s[i]
		slow[n&(block-1)] = uint8(i)
		n++
	}
	return n
}

// The portable stochastic loops, as the deterministic ones (portable.go):
// each rounds s into d, the i-th value with the word wyrandAt(state, i),
// up to the first value it cannot round (tested on the input: |x| out of
// the range its formula covers, Inf, NaN) and returns that value's index.
// next picks the loop.
func (p *srParams) next(d, s []uint64, state uint64) int {
	switch {
	case p.tab != nil && p.half != 0:
		return srTableHalfUntil(d, s, p, state)
	case p.tab != nil && p.tn == ^uint64(0):
		return srTableTopUntil(d, s, p, state)
	case p.tab != nil:
		return srTableUntil(d, s, p, state)
	case p.half != 0:
		return srHalfUntil(d, s, p, state)
	case p.tn != 0 && ^p.tn>>(p.rsh&63) == 0: // n ≥ shift: the mask is void
		return srTopUntil(d, s, p, state)
	}
	return srUntil(d, s, p, state)
}

// srLane is Stochastic's and StochasticBits(n)'s formula (srParams) for a
// format without the table: the top n bits of r below the kept last bit.
func srLane(b, r, tn, rsh, keep uint64) uint64 { return (b + (r&tn)>>rsh) & keep }

// srUntil is the loop of Stochastic and StochasticBits(n): 2^Emin ≤ |x| ≤
// MaxFinite. Each lane's word comes before its test: with the test first,
// the compiler spilled x around MULQ's fixed registers (fp16 Stochastic:
// 3-5% slower).
func srUntil(d, s []uint64, p *srParams, state uint64) int {
	tn, rsh, keep, lo2, span2 := p.tn, p.rsh&63, p.keep[0], p.lo2, p.span2
	d = d[:len(s)]
	sp, dp := unsafe.Pointer(unsafe.SliceData(s)), unsafe.Pointer(unsafe.SliceData(d))
	i, n4 := 0, len(s)&^3
	for ; i < n4; i += 4 {
		s4, d4 := quad(sp, i), quad(dp, i)
		r := wyrandMix(state + wyrandIncrement)
		if outOf(s4[0], lo2, span2) {
			return i
		}
		d4[0] = srLane(s4[0], r, tn, rsh, keep)
		r = wyrandMix(state + wyrandInc2)
		if outOf(s4[1], lo2, span2) {
			return i + 1
		}
		d4[1] = srLane(s4[1], r, tn, rsh, keep)
		r = wyrandMix(state + wyrandInc3)
		if outOf(s4[2], lo2, span2) {
			return i + 2
		}
		d4[2] = srLane(s4[2], r, tn, rsh, keep)
		state += wyrandInc4
		r = wyrandMix(state)
		if outOf(s4[3], lo2, span2) {
			return i + 3
		}
		d4[3] = srLane(s4[3], r, tn, rsh, keep)
	}
	for ; i < len(s); i++ {
		if outOf(s[i], lo2, span2) {
			return i
		}
		state += wyrandIncrement
		d[i] = srLane(s[i], wyrandMix(state), tn, rsh, keep)
	}
	return i
}

// srTopUntil is srUntil where n ≥ the bits dropped (Stochastic): the top
// bits of r go below the kept last bit as they are, without tn (whose AND
// also cost a register move around the multiply's fixed registers).
func srTopUntil(d, s []uint64, p *srParams, state uint64) int {
	rsh, keep, lo2, span2 := p.rsh&63, p.keep[0], p.lo2, p.span2
	d = d[:len(s)]
	sp, dp := unsafe.Pointer(unsafe.SliceData(s)), unsafe.Pointer(unsafe.SliceData(d))
	i, n4 := 0, len(s)&^3
	for ; i < n4; i += 4 {
		s4, d4 := quad(sp, i), quad(dp, i)
		r := wyrandMix(state+wyrandIncrement) >> rsh
		if outOf(s4[0], lo2, span2) {
			return i
		}
		d4[0] = (s4[0] + r) & keep
		r = wyrandMix(state+wyrandInc2) >> rsh
		if outOf(s4[1], lo2, span2) {
			return i + 1
		}
		d4[1] = (s4[1] + r) & keep
		r = wyrandMix(state+wyrandInc3) >> rsh
		if outOf(s4[2], lo2, span2) {
			return i + 2
		}
		d4[2] = (s4[2] + r) & keep
		state += wyrandInc4
		r = wyrandMix(state) >> rsh
		if outOf(s4[3], lo2, span2) {
			return i + 3
		}
		d4[3] = (s4[3] + r) & keep
	}
	for ; i < len(s); i++ {
		if outOf(s[i], lo2, span2) {
			return i
		}
		state += wyrandIncrement
		d[i] = (s[i] + wyrandMix(state)>>rsh) & keep
	}
	return i
}

// srHalfLane is StochasticHalf's formula: all the dropped bits where r's
// top bit is set.
func srHalfLane(b, r, half, keep uint64) uint64 { return (b + half&uint64(int64(r)>>63)) & keep }

// srHalfUntil is the loop of StochasticHalf, unrolled by 4 as srTopUntil
// (one value an iteration ran at 0.9 of this).
func srHalfUntil(d, s []uint64, p *srParams, state uint64) int {
	half, keep, lo2, span2 := p.halfMask[0], p.keep[0], p.lo2, p.span2
	d = d[:len(s)]
	sp, dp := unsafe.Pointer(unsafe.SliceData(s)), unsafe.Pointer(unsafe.SliceData(d))
	i, n4 := 0, len(s)&^3
	for ; i < n4; i += 4 {
		s4, d4 := quad(sp, i), quad(dp, i)
		r := wyrandMix(state + wyrandIncrement)
		if outOf(s4[0], lo2, span2) {
			return i
		}
		d4[0] = srHalfLane(s4[0], r, half, keep)
		r = wyrandMix(state + wyrandInc2)
		if outOf(s4[1], lo2, span2) {
			return i + 1
		}
		d4[1] = srHalfLane(s4[1], r, half, keep)
		r = wyrandMix(state + wyrandInc3)
		if outOf(s4[2], lo2, span2) {
			return i + 2
		}
		d4[2] = srHalfLane(s4[2], r, half, keep)
		state += wyrandInc4
		r = wyrandMix(state)
		if outOf(s4[3], lo2, span2) {
			return i + 3
		}
		d4[3] = srHalfLane(s4[3], r, half, keep)
	}
	for ; i < len(s); i++ {
		if outOf(s[i], lo2, span2) {
			return i
		}
		state += wyrandIncrement
		d[i] = srHalfLane(s[i], wyrandMix(state), half, keep)
	}
	return i
}

// srTableLane is srTable's formula; rho is r's part: r & T (η needs no
// mask: with rho's low bits 0, η's low bits cannot carry into the top n),
// or for StochasticHalf all ones or zeros by r's top bit.
func srTableLane(b, rho uint64, t *srTable) uint64 {
	i := b >> 52
	_, up := bits.Add64(b*t.mul[i]-t.c[i], rho, 0)
	return b&t.k[i] + t.u[i]&-up
}

// srTableUntil is the loop of Stochastic and StochasticBits(n) with the
// table; results above MaxFinite (and the table's out values) stop it.
func srTableUntil(d, s []uint64, p *srParams, state uint64) int {
	t, tn, max2 := p.tab, p.tn, p.lo2+p.span2
	_ = t.mul[0] // the nil check, before the loop
	d = d[:len(s)]
	sp, dp := unsafe.Pointer(unsafe.SliceData(s)), unsafe.Pointer(unsafe.SliceData(d))
	i, n4 := 0, len(s)&^3
	for ; i < n4; i += 4 {
		s4, d4 := quad(sp, i), quad(dp, i)
		r := srTableLane(s4[0], wyrandMix(state+wyrandIncrement)&tn, t)
		if r<<1 > max2 {
			return i
		}
		d4[0] = r
		if r = srTableLane(s4[1], wyrandMix(state+wyrandInc2)&tn, t); r<<1 > max2 {
			return i + 1
		}
		d4[1] = r
		if r = srTableLane(s4[2], wyrandMix(state+wyrandInc3)&tn, t); r<<1 > max2 {
			return i + 2
		}
		d4[2] = r
		state += wyrandInc4
		if r = srTableLane(s4[3], wyrandMix(state)&tn, t); r<<1 > max2 {
			return i + 3
		}
		d4[3] = r
	}
	for ; i < len(s); i++ {
		state += wyrandIncrement
		r := srTableLane(s[i], wyrandMix(state)&tn, t)
		if r<<1 > max2 {
			return i
		}
		d[i] = r
	}
	return i
}

// srTableTopUntil is srTableUntil for n = 64 (Stochastic): r whole, without
// the AND with tn (8% of the loop's time).
func srTableTopUntil(d, s []uint64, p *srParams, state uint64) int {
	t, max2 := p.tab, p.lo2+p.span2
	_ = t.mul[0] // the nil check, before the loop
	d = d[:len(s)]
	sp, dp := unsafe.Pointer(unsafe.SliceData(s)), unsafe.Pointer(unsafe.SliceData(d))
	i, n4 := 0, len(s)&^3
	for ; i < n4; i += 4 {
		s4, d4 := quad(sp, i), quad(dp, i)
		r := srTableLane(s4[0], wyrandMix(state+wyrandIncrement), t)
		if r<<1 > max2 {
			return i
		}
		d4[0] = r
		if r = srTableLane(s4[1], wyrandMix(state+wyrandInc2), t); r<<1 > max2 {
			return i + 1
		}
		d4[1] = r
		if r = srTableLane(s4[2], wyrandMix(state+wyrandInc3), t); r<<1 > max2 {
			return i + 2
		}
		d4[2] = r
		state += wyrandInc4
		if r = srTableLane(s4[3], wyrandMix(state), t); r<<1 > max2 {
			return i + 3
		}
		d4[3] = r
	}
	for ; i < len(s); i++ {
		state += wyrandIncrement
		r := srTableLane(s[i], wyrandMix(state), t)
		if r<<1 > max2 {
			return i
		}
		d[i] = r
	}
	return i
}

// srTableHalfUntil is the loop of StochasticHalf with the table, unrolled
// by 4 as srTableTopUntil.
func srTableHalfUntil(d, s []uint64, p *srParams, state uint64) int {
	t, max2 := p.tab, p.lo2+p.span2
	_ = t.mul[0] // the nil check, before the loop
	d = d[:len(s)]
	sp, dp := unsafe.Pointer(unsafe.SliceData(s)), unsafe.Pointer(unsafe.SliceData(d))
	i, n4 := 0, len(s)&^3
	for ; i < n4; i += 4 {
		s4, d4 := quad(sp, i), quad(dp, i)
		r := srTableLane(s4[0], uint64(int64(wyrandMix(state+wyrandIncrement))>>63), t)
		if r<<1 > max2 {
			return i
		}
		d4[0] = r
		if r = srTableLane(s4[1], uint64(int64(wyrandMix(state+wyrandInc2))>>63), t); r<<1 > max2 {
			return i + 1
		}
		d4[1] = r
		if r = srTableLane(s4[2], uint64(int64(wyrandMix(state+wyrandInc3))>>63), t); r<<1 > max2 {
			return i + 2
		}
		d4[2] = r
		state += wyrandInc4
		if r = srTableLane(s4[3], uint64(int64(wyrandMix(state))>>63), t); r<<1 > max2 {
			return i + 3
		}
		d4[3] = r
	}
	for ; i < len(s); i++ {
		state += wyrandIncrement
		r := srTableLane(s[i], uint64(int64(wyrandMix(state))>>63), t)
		if r<<1 > max2 {
			return i
		}
		d[i] = r
	}
	return i
}

// finishStochastic rounds the positions a stochastic loop listed (there
// dst holds x): values below 2^Emin done inline (roundSub's stochastic
// step), the rest by the general path; each with the word the loop would
// have used.
func (rr *blockRounder) finishStochastic(dst []float64, slow []uint8, state uint64) {
	for _, j := range slow {
		dst[j] = rr.stochasticOne(dst[j], wyrandAt(state, uint64(j)))
	}
}

// stochasticOne rounds x with the word r: below 2^Emin by roundSub's
// stochastic step inline, else by the general path.
func (rr *blockRounder) stochasticOne(x float64, r uint64) float64 {
	if v, ok := rr.ss.round(math.Float64bits(x), r); ok && rr.sub {
		return math.Float64frombits(v)
	}
	return rr.f.roundStochastic(x, rr.m, r)
}
