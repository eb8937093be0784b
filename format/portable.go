package format

import (
	"math"
	"unsafe"
)

// The portable fast loops (no assembly: arm64, and amd64 without AVX2),
// written for the compiler: float64 slices are read as bit patterns, each
// mode family has its own loop, unrolled by 4, with few live values (no
// spills), and each value takes one compare and a branch that is not taken
// while values stay in range. A loop stops at the first value it cannot
// round and returns its index; portableConsts.next rounds it there if it
// lies below 2^Emin (subParams.round), else hands it on to roundSlow.
//
// The loops round x's bits b with the sign in place: for a format's
// parameters (increment ≤ 2^shift, shift ≤ 52, keep = ^dropMask) no carry
// reaches bit 63 unless x is NaN, so (b + inc) & keep is sign | round(|x|).
// With u = 2·round - 2·minNormal (the doubling drops the sign), the result
// is in the normal range iff u ≤ 2·span; NaN and the other out cases give
// u > 2·span.

// bitsOf views a float64 slice as its bit patterns.
func bitsOf(s []float64) []uint64 {
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// quad is the 4 values from index i of the slice that starts at p (the
// loops' bounds: i+4 ≤ len, checked by the loop condition).
func quad(p unsafe.Pointer, i int) *[4]uint64 {
	return (*[4]uint64)(unsafe.Add(p, i*8))
}

// portableConsts are the loops' constants for a format and mode.
type portableConsts struct {
	inc, incNeg, keep, lo2, span2 uint64
	shift                         uint
	veltK                         float64   // 2^shift + 1 (tieUntil)
	max2                          uint64    // 2·MaxFinite's bits
	tab                           *expTable // the fp8/fp6/fp4 loops' tables
	loop                          int       // which loop (plainLoop …)
}

const (
	plainLoop = iota
	tieLoop
	dirLoop
	fpRneLoop
	tableLoop
)

func (c *portableConsts) init(p *addAndMaskParams, sp *subParams) {
	*c = portableConsts{
		inc: p.base + p.dirPos, incNeg: p.base + p.dirNeg, keep: p.keep,
		lo2: p.minNormal << 1, span2: p.span << 1, shift: uint(p.shift & 63),
		max2: sp.maxBits[0] << 1, tab: sp.tab,
		veltK: float64(uint64(1)<<(p.shift&63) + 1),
	}
	switch {
	case sp.tab != nil && sp.tab.rne != nil:
		c.loop = fpRneLoop
	case sp.tab != nil:
		c.loop = tableLoop
	case c.inc != c.incNeg:
		c.loop = dirLoop
	case p.tieEven == 1:
		c.loop = tieLoop
	}
}

// roundAddAndMaskPortable is roundAddAndMaskGo for float64 values and a
// Format's parameters, bit for bit (dst, the slow list and its count).
func roundAddAndMaskPortable(dst, src []float64, p *addAndMaskParams, sp *subParams, slow *[block]uint8) int {
	var c portableConsts
	c.init(p, sp)
	d, s := bitsOf(dst), bitsOf(src)
	n := 0
	for i := 0; i < len(s); i++ {
		if i += c.next(d[i:], s[i:], sp); i == len(s) {
			break
		}
		slow[n&(block-1)] = uint8(i)
		n++
	}
	return n
}

// next rounds s into d up to the first value that needs roundSlow
// (overflow, Inf, NaN, and values below 2^Emin that sp does not cover),
// leaves x there and returns its index (len(s) if there is none).
func (c *portableConsts) next(d, s []uint64, sp *subParams) int {
	d = d[:len(s)]
	for i := 0; i < len(s); i++ {
		if i += c.until(d[i:], s[i:]); i == len(s) {
			break
		}
		b := s[i]
		if b&^signBit >= sp.limit[0] {
			d[i] = b
			return i
		}
		d[i] = sp.round(b)
	}
	return len(s)
}

// until runs c's loop over s into d (a switch, not a func value: c stays
// on the caller's stack). Each loop rounds up to the first value it cannot
// round and returns that value's index (len(s) when there is none).
func (c *portableConsts) until(d, s []uint64) int {
	switch c.loop {
	case tieLoop:
		return tieUntil(d, s, c)
	case dirLoop:
		return dirUntil(d, s, c)
	case fpRneLoop:
		return fpRneUntil(d, s, c)
	case tableLoop:
		return tableUntil(d, s, c)
	}
	return plainUntil(d, s, c)
}

// outOf reports whether the result r is out of the normal range.
func outOf(r, lo2, span2 uint64) bool { return r<<1-lo2 > span2 }

// veltkamp rounds x to nearest even at p = 53-s bits in x's binade, K =
// 2^s + 1 (Veltkamp's splitting: σ = x·K, σ - (σ - x)), as the integer
// formula does; results outside [2^Emin, MaxFinite] (x·K overflowing
// included) are left to the exception path. The conversion keeps x·K
// rounded: an FMA of x·K - x (arm64, GOAMD64=v3) would not split.
func veltkamp(x, k float64) float64 {
	sigma := float64(x * k)
	return sigma - (sigma - x)
}

// tieUntil is NearestEven's loop: three float operations a value (the
// integer formula, (b + inc + (b>>shift)&1) & keep, took five integer ones
// beside the range test's three).
func tieUntil(d, s []uint64, c *portableConsts) int {
	k, lo2, span2 := c.veltK, c.lo2, c.span2
	d = d[:len(s)]
	sp, dp := unsafe.Pointer(unsafe.SliceData(s)), unsafe.Pointer(unsafe.SliceData(d))
	i, n4 := 0, len(s)&^3
	for ; i < n4; i += 4 {
		x4, d4 := (*[4]float64)(unsafe.Add(sp, i*8)), quad(dp, i)
		r := math.Float64bits(veltkamp(x4[0], k))
		if outOf(r, lo2, span2) {
			return i
		}
		d4[0] = r
		if r = math.Float64bits(veltkamp(x4[1], k)); outOf(r, lo2, span2) {
			return i + 1
		}
		d4[1] = r
		if r = math.Float64bits(veltkamp(x4[2], k)); outOf(r, lo2, span2) {
			return i + 2
		}
		d4[2] = r
		if r = math.Float64bits(veltkamp(x4[3], k)); outOf(r, lo2, span2) {
			return i + 3
		}
		d4[3] = r
	}
	for ; i < len(s); i++ {
		r := math.Float64bits(veltkamp(math.Float64frombits(s[i]), k))
		if outOf(r, lo2, span2) {
			return i
		}
		d[i] = r
	}
	return i
}

// plainUntil is the loop of the nearest modes without the tie bit
// (NearestAway, NearestTowardZero; NearestEven at p = 1) and AwayFromZero
// and TowardZero, whose increment does not depend on the sign.
func plainUntil(d, s []uint64, c *portableConsts) int {
	inc, keep, lo2, span2 := c.inc, c.keep, c.lo2, c.span2
	d = d[:len(s)]
	sp, dp := unsafe.Pointer(unsafe.SliceData(s)), unsafe.Pointer(unsafe.SliceData(d))
	i, n4 := 0, len(s)&^3
	for ; i < n4; i += 4 {
		s4, d4 := quad(sp, i), quad(dp, i)
		r := (s4[0] + inc) & keep
		if outOf(r, lo2, span2) {
			return i
		}
		d4[0] = r
		if r = (s4[1] + inc) & keep; outOf(r, lo2, span2) {
			return i + 1
		}
		d4[1] = r
		if r = (s4[2] + inc) & keep; outOf(r, lo2, span2) {
			return i + 2
		}
		d4[2] = r
		if r = (s4[3] + inc) & keep; outOf(r, lo2, span2) {
			return i + 3
		}
		d4[3] = r
	}
	for ; i < len(s); i++ {
		r := (s[i] + inc) & keep
		if outOf(r, lo2, span2) {
			return i
		}
		d[i] = r
	}
	return i
}

// dirLane is Up's and Down's formula: the increment by x's sign.
func dirLane(b, inc, incNeg, keep uint64) uint64 {
	k := inc
	if int64(b) < 0 {
		k = incNeg
	}
	return (b + k) & keep
}

// dirUntil is the loop of Up and Down.
func dirUntil(d, s []uint64, c *portableConsts) int {
	inc, incNeg, keep, lo2, span2 := c.inc, c.incNeg, c.keep, c.lo2, c.span2
	d = d[:len(s)]
	sp, dp := unsafe.Pointer(unsafe.SliceData(s)), unsafe.Pointer(unsafe.SliceData(d))
	i, n4 := 0, len(s)&^3
	for ; i < n4; i += 4 {
		s4, d4 := quad(sp, i), quad(dp, i)
		r := dirLane(s4[0], inc, incNeg, keep)
		if outOf(r, lo2, span2) {
			return i
		}
		d4[0] = r
		if r = dirLane(s4[1], inc, incNeg, keep); outOf(r, lo2, span2) {
			return i + 1
		}
		d4[1] = r
		if r = dirLane(s4[2], inc, incNeg, keep); outOf(r, lo2, span2) {
			return i + 2
		}
		d4[2] = r
		if r = dirLane(s4[3], inc, incNeg, keep); outOf(r, lo2, span2) {
			return i + 3
		}
		d4[3] = r
	}
	for ; i < len(s); i++ {
		r := dirLane(s[i], inc, incNeg, keep)
		if outOf(r, lo2, span2) {
			return i
		}
		d[i] = r
	}
	return i
}

// fpRneLane rounds x (bits b) by expTable.rne, normal and subnormal
// alike; a zero result takes x's sign where the format has -0.
func fpRneLane(b uint64, x float64, t *rneTable) uint64 {
	i := b >> 52
	cf := t.c[i]
	return math.Float64bits(x+cf-cf) | t.sign[i]
}

// fpRneUntil is NearestEven's loop for the formats with an expTable;
// only results above MaxFinite (and Inf, NaN) stop it.
func fpRneUntil(d, s []uint64, c *portableConsts) int {
	t, max2 := c.tab.rne, c.max2
	_ = t.c[0] // one nil check, before the loop
	d = d[:len(s)]
	sp, dp := unsafe.Pointer(unsafe.SliceData(s)), unsafe.Pointer(unsafe.SliceData(d))
	i, n4 := 0, len(s)&^3
	for ; i < n4; i += 4 {
		s4, d4 := quad(sp, i), quad(dp, i)
		x4 := (*[4]float64)(unsafe.Pointer(s4)) // x also loaded as a float: no move between register files
		r := fpRneLane(s4[0], x4[0], t)
		if r<<1 > max2 {
			return i
		}
		d4[0] = r
		if r = fpRneLane(s4[1], x4[1], t); r<<1 > max2 {
			return i + 1
		}
		d4[1] = r
		if r = fpRneLane(s4[2], x4[2], t); r<<1 > max2 {
			return i + 2
		}
		d4[2] = r
		if r = fpRneLane(s4[3], x4[3], t); r<<1 > max2 {
			return i + 3
		}
		d4[3] = r
	}
	for ; i < len(s); i++ {
		r := fpRneLane(s[i], math.Float64frombits(s[i]), t)
		if r<<1 > max2 {
			return i
		}
		d[i] = r
	}
	return i
}

// tableLane rounds x (bits b) by expTable.inc and keep.
func tableLane(b uint64, inc, keep *[1 << 12]uint64) uint64 {
	return (b + inc[b>>52]) & keep[b>>52]
}

// tableUntil is the loop of the other add-and-mask modes for the formats
// with an expTable.
func tableUntil(d, s []uint64, c *portableConsts) int {
	inc, keep, max2 := c.tab.inc, c.tab.keep, c.max2
	_, _ = inc[0], keep[0] // one nil check each, before the loop
	d = d[:len(s)]
	sp, dp := unsafe.Pointer(unsafe.SliceData(s)), unsafe.Pointer(unsafe.SliceData(d))
	i, n4 := 0, len(s)&^3
	for ; i < n4; i += 4 {
		s4, d4 := quad(sp, i), quad(dp, i)
		r := tableLane(s4[0], inc, keep)
		if r<<1 > max2 {
			return i
		}
		d4[0] = r
		if r = tableLane(s4[1], inc, keep); r<<1 > max2 {
			return i + 1
		}
		d4[1] = r
		if r = tableLane(s4[2], inc, keep); r<<1 > max2 {
			return i + 2
		}
		d4[2] = r
		if r = tableLane(s4[3], inc, keep); r<<1 > max2 {
			return i + 3
		}
		d4[3] = r
	}
	for ; i < len(s); i++ {
		r := tableLane(s[i], inc, keep)
		if r<<1 > max2 {
			return i
		}
		d[i] = r
	}
	return i
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
