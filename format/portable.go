package format

import (
	"math"
	"unsafe"
)

// The portable fast loop (no assembly: arm64, and amd64 without AVX2). It
// has roundAddAndMaskGo's contract and results, but is written for the
// compiler: float64 slices are read as bit patterns, each mode family has
// its own loop with few live values (no spills), the out-of-range test is
// one compare feeding a CMOV/CSEL, and positions are listed in a second
// pass only when a block has any (most blocks have none).
//
// The loops round x's bits b with the sign in place: for a format's
// parameters (increment ≤ 2^shift, shift ≤ 52, keep = ^dropMask) no carry
// reaches bit 63 unless x is NaN, so (b + inc) & keep is sign | round(|x|).
// With u = 2·round - 2·minNormal (the doubling drops the sign), the result
// is in the normal range iff u ≤ 2·span; NaN and the other out cases give
// u > 2·span, and the loop leaves x there.

// bitsOf views a float64 slice as its bit patterns.
func bitsOf(s []float64) []uint64 {
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// portableConsts are the loops' constants for one call.
type portableConsts struct {
	inc, incNeg, keep, lo2, span2 uint64
	shift                         uint
}

// roundAddAndMaskPortable is roundAddAndMaskGo for float64 values and a
// Format's parameters, bit for bit (dst, the slow list and its count).
func roundAddAndMaskPortable(dst, src []float64, p *addAndMaskParams, sp *subParams, slow *[block]uint8) int {
	d, s := bitsOf(dst), bitsOf(src)
	d = d[:len(s)]
	c := portableConsts{
		inc: p.base + p.dirPos, incNeg: p.base + p.dirNeg, keep: p.keep,
		lo2: p.minNormal << 1, span2: p.span << 1, shift: uint(p.shift & 63),
	}
	var hi uint64
	switch {
	case sp.rneC[0] != 0:
		hi = fpRneRun(d, s, sp)
		c.lo2, c.span2 = 0, sp.maxBits[0]<<1 // its results: out iff above MaxFinite
	case sp.always[0] != 0:
		hi = subRun(d, s, &c, p, sp)
	case c.inc != c.incNeg:
		hi = dirRun(d, s, &c)
	case p.tieEven == 1:
		hi = tieRun(d, s, &c)
	default:
		hi = plainRun(d, s, &c)
	}
	if hi <= c.span2 {
		return 0
	}
	return listOut(d, &c, sp, slow, sp.always[0] != 0)
}

// tieRun is NearestEven's loop; it returns the largest u.
func tieRun(d, s []uint64, c *portableConsts) (hi uint64) {
	inc, keep, lo2, span2, shift := c.inc, c.keep, c.lo2, c.span2, c.shift
	d = d[:len(s)]
	for i, b := range s {
		r := (b + inc + (b>>(shift&63))&1) & keep
		u := r<<1 - lo2
		if u > span2 {
			r = b
		}
		hi = max(hi, u)
		d[i] = r
	}
	return hi
}

// plainRun is the loop of the nearest modes without the tie bit
// (NearestAway, NearestTowardZero; NearestEven at p = 1) and AwayFromZero
// and TowardZero, whose increment does not depend on the sign.
func plainRun(d, s []uint64, c *portableConsts) (hi uint64) {
	inc, keep, lo2, span2 := c.inc, c.keep, c.lo2, c.span2
	d = d[:len(s)]
	for i, b := range s {
		r := (b + inc) & keep
		u := r<<1 - lo2
		if u > span2 {
			r = b
		}
		hi = max(hi, u)
		d[i] = r
	}
	return hi
}

// dirRun is the loop of Up and Down, whose increment depends on the sign.
func dirRun(d, s []uint64, c *portableConsts) (hi uint64) {
	inc, incNeg, keep, lo2, span2 := c.inc, c.incNeg, c.keep, c.lo2, c.span2
	d = d[:len(s)]
	for i, b := range s {
		k := inc
		if int64(b) < 0 {
			k = incNeg
		}
		r := (b + k) & keep
		u := r<<1 - lo2
		if u > span2 {
			r = b
		}
		hi = max(hi, u)
		d[i] = r
	}
	return hi
}

// fpRneRun is NearestEven where sp.rneC is set (fp8/fp6/fp4 with -0) by
// float64 arithmetic, as the AVX2 kernel's FP4: x + c - c with c =
// ±2^(e+53-p) in x's binade e ≥ Emin, ±rneC below 2^Emin, rounds x to the
// format's grid there in the default rounding mode (nearest even), both
// normal and subnormal; the result takes x's sign (-0 for small negative
// x). It returns the largest doubled magnitude: above 2·MaxFinite, the
// loop left x (overflow, Inf, NaN).
func fpRneRun(d, s []uint64, sp *subParams) (hi uint64) {
	expMask, pShift, limit, csub, max2 := sp.expMask[0], sp.pShift[0], sp.limit[0], sp.rneC[0], sp.maxBits[0]<<1
	d = d[:len(s)]
	for i, b := range s {
		c := b&expMask + pShift
		if b&^signBit < limit {
			c = csub
		}
		sign := b & signBit
		cf := math.Float64frombits(c | sign)
		y := math.Float64bits(math.Float64frombits(b)+cf-cf)&^signBit | sign
		u := y << 1
		if u > max2 {
			y = b
		}
		hi = max(hi, u)
		d[i] = y
	}
	return hi
}

// subRun is the loop for formats whose values often fall below 2^Emin
// (sp.always): every value is rounded both ways, by the add-and-mask
// formula and by subParams' (as sp.round, without branches; the fields
// read from p and sp are memory operands), and the second is kept where
// |x| < limit. It returns the largest u of the other positions. One
// function body: a call per value would cost more than the arithmetic.
func subRun(d, s []uint64, c *portableConsts, p *addAndMaskParams, sp *subParams) (hi uint64) {
	d = d[:len(s)]
	quantum := math.Float64frombits(sp.quantum[0])
	for i, b := range s {
		a := b &^ signBit
		neg := -(b >> 63)
		r := (b + p.base + (b>>(c.shift&63))&p.tieEven + p.dirNeg&neg + p.dirPos&^neg) & p.keep
		u := r<<1 - c.lo2
		if u > c.span2 {
			r = b
		}
		e1 := max(a>>52, 1)
		mant := a - (e1-1)<<52
		sh := min(uint64(uint32(sp.k[0]-e1)), 63)
		drop := uint64(1)<<sh - 1
		inc := (drop>>1)&sp.h1[0] + sp.h0[0] + (mant>>sh)&sp.tie[0] + drop&(sp.dirPos[0]^neg&sp.dirX[0])
		q := (mant + inc) >> sh
		// No negative zero where the format has none; q-1 has its top
		// bit set iff q = 0 (q ≤ 2^p in the lanes kept).
		sign := b & signBit &^ (sp.noNegZero[0] & -((q - 1) >> 63))
		v := math.Float64bits(float64(int64(q))*quantum) | sign
		if a < sp.limit[0] {
			r, u = v, 0
		}
		hi = max(hi, u)
		d[i] = r
	}
	return hi
}

// listOut finds the positions a loop left out of range (there dst holds x,
// itself out of range; a result in range stays in range), rounds those
// below 2^Emin by sp (unless subDone: then these are subRun's results),
// and lists the others in slow as roundAddAndMaskGo does.
func listOut(d []uint64, c *portableConsts, sp *subParams, slow *[block]uint8, subDone bool) int {
	n := 0
	for i, b := range d {
		if b<<1-c.lo2 <= c.span2 {
			continue
		}
		if int64(b&^signBit) < int64(sp.limit[0]) {
			if !subDone {
				d[i] = sp.round(b)
			}
			continue
		}
		slow[n&(block-1)] = uint8(i)
		n++
	}
	return n
}

// roundToOdd is ToOdd's loop (no assembly kernel: on every machine):
// truncation, with the kept last bit set where x was inexact, for x in the
// normal range (the result then stays in it); elsewhere it leaves x and
// lists the position in slow. It returns the count.
func roundToOdd(dst, src []float64, f *Format, slow *[block]uint8) int {
	d, s := bitsOf(dst), bitsOf(src)
	d = d[:len(s)]
	drop, odd, lo2, span2 := f.dropMask, f.oddBit, f.minNormal<<1, f.normalSpan<<1
	var hi uint64
	for i, b := range s {
		r := b&^drop | odd&-b2u(b&drop != 0)
		u := b<<1 - lo2
		if u > span2 {
			r = b
		}
		hi = max(hi, u)
		d[i] = r
	}
	if hi <= span2 {
		return 0
	}
	n := 0
	for i, b := range d {
		slow[n&(block-1)] = uint8(i)
		n += int(b2u(b<<1-lo2 > span2))
	}
	return n
}
