package format

import (
	"math"
	"math/bits"
)

// The stochastic streams use Wang Yi's wyrand, a counter-based generator
// (output i is a mix of seed + (i+1)·increment) that passes BigCrush and
// PractRand: the slow path can recompute the word the fast loop used.
const (
	wyrandIncrement = 0xa0761d6478bd642f
	wyrandXor       = 0xe7037ed1a0b428db
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
	set(&p.abs, ^uint64(signBit))
	set(&p.one, 1)
	set(&p.c64, 64)
	set(&p.magic, 0x4330000000000000) // 2^52
	if ss, ok := f.stochasticSubParams(m); ok && f.emin >= subAlwaysEmin {
		p.subLoop = 1
		set(&p.limit, ss.limit)
		set(&p.k, ss.k)
		set(&p.nBits, ss.n)
		set(&p.quantum, math.Float64bits(ss.quantum))
		set(&p.noNegZero, ss.noNegZero)
	}
	return p
}

// inc is srParams' increment for the random word r.
func (p *srParams) inc(r uint64) uint64 {
	return (r>>(p.rshift&63))<<(p.lshift&63)&p.incMask[0] | p.halfMask[0]&-(r>>63)
}

// roundStochasticPortable is the portable loop of a stochastic mode over
// ≤ block values, the i-th with the word wyrandAt(state, i): it leaves x
// at the positions it could not round, lists them in slow (in order) and
// returns their count, as the AVX2 kernel does.
func roundStochasticPortable(dst, src []float64, p *srParams, state uint64, slow *[block]uint8) int {
	d, s := bitsOf(dst), bitsOf(src)
	d = d[:len(s)]
	if p.subLoop != 0 {
		return srSubRun(d, s, p, state, slow)
	}
	var hi uint64
	if p.half != 0 {
		hi = srHalfRun(d, s, p, state)
	} else {
		hi = srRun(d, s, p, state)
	}
	if hi <= p.span2 {
		return 0
	}
	// There dst holds x, out of range; results are in range.
	n := 0
	for i, b := range d {
		slow[n&(block-1)] = uint8(i)
		n += int(b2u(b<<1-p.lo2 > p.span2))
	}
	return n
}

// srRun is the loop of Stochastic and StochasticBits(n); it returns the
// largest u.
func srRun(d, s []uint64, p *srParams, state uint64) (hi uint64) {
	rshift, lshift, keep := p.rshift&63, p.lshift&63, p.keep[0]
	for i, b := range s {
		state += wyrandIncrement
		h, l := bits.Mul64(state, state^wyrandXor)
		r := (b + ((h^l)>>rshift)<<lshift&p.incMask[0]) & keep
		u := b<<1 - p.lo2
		if u > p.span2 {
			r = b
		}
		hi = max(hi, u)
		d[i] = r
	}
	return hi
}

// srHalfRun is the loop of StochasticHalf.
func srHalfRun(d, s []uint64, p *srParams, state uint64) (hi uint64) {
	for i, b := range s {
		state += wyrandIncrement
		h, l := bits.Mul64(state, state^wyrandXor)
		r := (b + p.halfMask[0]&uint64(int64(h^l)>>63)) & p.keep[0]
		u := b<<1 - p.lo2
		if u > p.span2 {
			r = b
		}
		hi = max(hi, u)
		d[i] = r
	}
	return hi
}

// srSubRun is the loop where subLoop is set: each value rounded both ways,
// by the fast formula and by stochasticSubParams' step (as its round,
// without branches), the second kept in the lanes that step covers (|x| <
// limit, s ≤ 63); the other positions out of range are listed in slow as
// they come. One function body: a call per value would cost more than the
// arithmetic.
func srSubRun(d, s []uint64, p *srParams, state uint64, slow *[block]uint8) int {
	d = d[:len(s)]
	quantum := math.Float64frombits(p.quantum[0])
	n := 0
	for i, b := range s {
		state += wyrandIncrement
		h, l := bits.Mul64(state, state^wyrandXor)
		r := h ^ l
		res := (b + p.inc(r)) & p.keep[0]
		out := b<<1-p.lo2 > p.span2
		a := b &^ signBit
		e1 := max(a>>52, 1)
		mant := a - (e1-1)<<52
		sh := p.k[0] - e1 // wraps for large a: then sh ≥ 64, not covered
		j := min(p.nBits[0], sh)
		inc := r >> ((64 - j) & 63) << ((sh - j) & 63)
		if p.half != 0 {
			inc = (1<<(sh&63) - 1) & -(r >> 63)
		}
		q := (mant + inc) >> (sh & 63)
		sign := b & signBit &^ (p.noNegZero[0] & -((q - 1) >> 63))
		v := math.Float64bits(float64(int64(q))*quantum) | sign
		covered := a < p.limit[0] && sh < 64 // only out-of-range lanes
		if out {
			res = b
		}
		if covered {
			res = v
		}
		d[i] = res
		slow[n&(block-1)] = uint8(i)
		n += int(b2u(out) &^ b2u(covered))
	}
	return n
}

// finishStochastic rounds the positions a stochastic loop listed (there
// dst holds x): values below 2^Emin done inline (roundSub's stochastic
// step), the rest by the general path; each with the word the loop would
// have used.
func (rr *blockRounder) finishStochastic(dst []float64, slow []uint8, state uint64) {
	for _, j := range slow {
		r := wyrandAt(state, uint64(j))
		x := dst[j]
		if v, ok := rr.ss.round(math.Float64bits(x), r); ok && rr.sub {
			dst[j] = math.Float64frombits(v)
		} else {
			dst[j] = rr.f.roundStochastic(x, rr.m, r)
		}
	}
}
