package format

import (
	"math"
	"sync"
)

// expTable holds, for the formats whose values often fall below 2^Emin
// (emin ≥ subAlwaysEmin), the portable loops' parameters by x's top 12
// bits (sign and exponent field), so that one rule rounds normal and
// subnormal values alike without branches:
//
//   - rne (NearestEven): y = (x + c) - c rounds x to the format's grid in
//     float64's own rounding (nearest even); c = ±2^(e+53-p) in x's binade
//     e ≥ Emin, ±2^(qe+52) below (qe the exponent of the spacing there).
//     A zero y is +0: sign, ORed into y's bits, gives it x's sign where the
//     format has -0 (a load and an OR: and-ing x's bits with the sign bit
//     took a copy, an AND and an OR, a tenth of the loop's time).
//   - inc, keep (the other add-and-mask modes): (b + inc) & keep on x's
//     bits. Below the spacing (|x| < 2^qe) the result is ±0 or ±2^qe for
//     a whole binade, except where it depends on the fraction
//     (NearestTowardZero at 2^(qe-1) ≤ |x|; the modes away from zero at
//     exponent field 0, where x may be 0): there, and at Inf and NaN, the
//     entry leaves a result out of range (exponent field all ones), and
//     the loop's exception path rounds x.
type expTable struct {
	rne       *rneTable
	inc, keep *[1 << 12]uint64
}

// rneTable is expTable.rne: c and sign side by side (one base register).
type rneTable struct {
	c    [1 << 12]float64
	sign [1 << 12]uint64
}

type expTableKey struct {
	p, emin            int
	subnormals, noNegZ bool
	m                  Mode
}

// expTables caches the tables (built once per format and mode: 32 or 64 KiB).
var expTables sync.Map // expTableKey → *expTable

func (f *Format) expTable(m Mode) *expTable {
	key := expTableKey{f.p, f.emin, f.subnormals, !f.specials.HasNegativeZero(), m}
	if t, ok := expTables.Load(key); ok {
		return t.(*expTable)
	}
	var t expTable
	if m == NearestEven {
		t.rne = f.rneTable()
	} else {
		t.inc, t.keep = f.addAndMaskTable(m)
	}
	v, _ := expTables.LoadOrStore(key, &t)
	return v.(*expTable)
}

// rneTable is expTable.rne.
func (f *Format) rneTable() *rneTable {
	t := new(rneTable)
	eminB := int(f.minNormal >> 52)
	for i := range t.c {
		e := i&0x7ff - 1023
		v := math.Ldexp(1, f.subQuantumExp()+52)
		if i&0x7ff >= eminB {
			v = math.Ldexp(1, e+53-f.p) // +Inf for NaN, Inf and far above: x stays out
		}
		t.c[i] = math.Copysign(v, float64(1-2*(i>>11)))
		if f.specials.HasNegativeZero() {
			t.sign[i] = uint64(i>>11) << 63
		}
	}
	return t
}

// addAndMaskTable is expTable.inc and keep for mode m (not NearestEven).
func (f *Format) addAndMaskTable(m Mode) (inc, keep *[1 << 12]uint64) {
	inc, keep = new([1 << 12]uint64), new([1 << 12]uint64)
	qe := f.subQuantumExp()
	eq := qe + 1023 // the exponent field of 2^qe (≥ 1 where the table is used)
	eminB := int(f.minNormal >> 52)
	zeroKeep := uint64(signBit)
	if !f.specials.HasNegativeZero() {
		zeroKeep = 0
	}
	for i := range inc {
		neg, e := i>>11 == 1, i&0x7ff
		up := m == AwayFromZero || m == Up && !neg || m == Down && neg
		switch {
		case e == 0x7ff:
			inc[i], keep[i] = 0, ^uint64(0) // x stays: out
		case e >= eq: // s bits dropped (more below 2^Emin, where the spacing is 2^qe)
			s := uint64(f.shift)
			if e < eminB {
				s = uint64(qe + 1075 - e)
			}
			drop := uint64(1)<<s - 1
			switch {
			case up:
				inc[i] = drop
			case m == NearestAway:
				inc[i] = drop>>1 + 1
			case m == NearestTowardZero:
				inc[i] = drop >> 1
			}
			keep[i] = ^drop
		case up && e > 0 || m == NearestAway && e == eq-1: // 2^qe
			inc[i], keep[i] = uint64(eq-e)<<52, ^uint64(1<<52-1)
		case up || m == NearestTowardZero && e == eq-1: // 0 or 2^qe by the fraction
			inc[i], keep[i] = uint64(0x7ff-e)<<52, ^uint64(0)
		default:
			inc[i], keep[i] = 0, zeroKeep
		}
	}
	return inc, keep
}

// srTable holds, for the same formats, the stochastic modes' parameters by
// x's top 12 bits (the portable loop srTableUntil), normal, subnormal and
// tiny values alike: with b = x's bits, i = b>>52 and r the random word,
//
//	η  = b·mul[i] - c[i]              ⌊η·2^64⌋, η the fraction of the spacing dropped (mod 2^64)
//	up = carry of η + (r & T)         T = the top n bits (Stochastic: all)
//	res = b & k[i] + (up ? u[i] : 0)
//
// In a binade at or above the spacing 2^qe, s ≤ 52 bits are dropped: mul
// = 2^(64-s) moves b's low s bits to the top, k clears them, u = 2^s.
// Below, b - c/mul is |x|'s significand with its implicit bit, mant = η·2^s
// with s > 52: for s ≤ 64, mul = 2^(64-s); for s ≥ 117, η·2^64 < 1 and
// mul = c = 0; the result is ±0 or ±2^qe (u, with the sign where -0 is not
// a value). Between, η = 2^64-1 (c = 1): where r & T is 0, x rounds down
// to ±0 as it must; elsewhere u makes the result out of range (exponent
// field all ones) and the loop's exception path rounds x. Inf and NaN keep
// their bits (k all ones), out of range too. (An out marker added to every
// result cost a load and an add per value, a tenth of the loop's time.)
// StochasticHalf (half) rounds up where η ≠ 0 and r's top bit is set:
// below the spacing, mul = 1 keeps mant whole, so η ≠ 0 iff x is inexact.
type srTable struct {
	mul, c, k, u [1 << 12]uint64
}

type srTableKey struct {
	f    expTableKey
	half bool
}

var srTables sync.Map // srTableKey → *srTable

func (f *Format) srTable(half bool) *srTable {
	key := srTableKey{expTableKey{f.p, f.emin, f.subnormals, !f.specials.HasNegativeZero(), 0}, half}
	if t, ok := srTables.Load(key); ok {
		return t.(*srTable)
	}
	t := new(srTable)
	qe := f.subQuantumExp()
	eminB := int(f.minNormal >> 52)
	for i := range t.mul {
		sign, e := uint64(i>>11)<<63, i&0x7ff
		s := int(f.shift)
		if e < eminB {
			s = qe + 1075 - max(e, 1)
		}
		switch {
		case e == 0x7ff:
			t.k[i] = ^uint64(0) // x stays: out
			continue
		case s <= 52:
			t.mul[i], t.k[i], t.u[i] = 1<<(64-s), ^uint64(1<<s-1), 1<<s
			continue
		}
		switch a := sign | uint64(max(e, 1)-1)<<52; { // b - a = mant
		case half:
			t.mul[i], t.c[i] = 1, a
		case s <= 64:
			t.mul[i] = 1 << (64 - s)
			t.c[i] = a * t.mul[i]
		case s < 117:
			t.c[i], t.k[i], t.u[i] = 1, signBit, 0x7ff<<52 // ±0, or out
			if !f.specials.HasNegativeZero() {
				t.k[i] = 0
			}
			continue
		}
		t.k[i], t.u[i] = signBit, uint64(qe+1023)<<52
		if !f.specials.HasNegativeZero() {
			t.k[i], t.u[i] = 0, sign|t.u[i]
		}
	}
	v, _ := srTables.LoadOrStore(key, t)
	return v.(*srTable)
}
