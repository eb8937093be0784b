package mma

import (
	"math"
	"math/big"
	"math/bits"

	"github.com/mwmm/mwmm/format"
)

// The multi-term adder. A finite float64 t ≠ 0 is ±m·2^e with an integer
// significand m < 2^53 and e the exponent of m's last bit. The adder shifts
// every term to a grid whose unit is 2^unit, fixed by the largest term's
// leading-bit exponent, adds the shifted integers, and rounds the integer sum
// into the accumulator format. With a grid of at most 62 bits the sum is an
// int64; wider grids (exact alignment of terms far apart, or many extra bits)
// use big.Int with the same steps.

// decompose returns m and e of a finite nonzero float64.
func decompose(t float64) (m uint64, e int) {
	b := math.Float64bits(t)
	exp := int(b >> 52 & 0x7ff)
	m = b & (1<<52 - 1)
	if exp == 0 {
		return m, -1074
	}
	return m | 1<<52, exp - 1075
}

// leadExp is the exponent of the leading bit of m·2^e.
func leadExp(m uint64, e int) int { return e + bits.Len64(m) - 1 }

// alignedSum returns the terms' sum as the adder computes it, rounded into
// Accumulator. Terms are finite; zeros are allowed. The grid hangs from the
// largest term's leading bit, or from exponent anchor (see AnchorExponents).
func (m *Model) alignedSum(ts []float64, anchor int) float64 {
	top := math.MinInt
	low := math.MaxInt // lowest set bit of any term, for exact alignment
	nonzero := 0
	allNeg, anyNeg := true, false
	for _, t := range ts {
		neg := math.Signbit(t)
		allNeg = allNeg && neg
		anyNeg = anyNeg || neg
		if t == 0 {
			continue
		}
		nonzero++
		mant, e := decompose(t)
		if l := leadExp(mant, e); l > top {
			top = l
		}
		if m.fracBits < 0 {
			if l := e + bits.TrailingZeros64(mant); l < low {
				low = l
			}
		}
	}
	if nonzero == 0 {
		// IEEE: a sum of zeros is -0 only if all are -0 (or, rounding
		// down, if any is); a sign-magnitude adder gives +0.
		neg := (allNeg || anyNeg && m.p.AccumulatorMode == format.Down) && !m.p.FixedRange
		return math.Copysign(0, boolSign(neg))
	}
	lead := top // the largest leading bit, one above an anchor at most
	if anchor != noAnchor {
		top = anchor
	}
	unit := low
	if m.fracBits >= 0 {
		unit = top - m.fracBits
		if m.p.Sticky {
			unit--
		}
	}
	// Bits of the sum: the grid from the top term down, the carries of
	// adding len(ts) terms, and a sign.
	if lead-unit+1+bits.Len(uint(len(ts))) <= 62 && !m.forceBig {
		return m.fixedSum(ts, top, unit)
	}
	if nonzero == 2 && m.fracBits < 0 && m.p.CarryBits == Unlimited && !m.forceBig {
		return m.exactPairSum(ts)
	}
	return m.bigSum(ts, top, unit)
}

func boolSign(neg bool) float64 {
	if neg {
		return -1
	}
	return 1
}

// shiftTerm puts m·2^e on the grid of unit 2^unit; it is exact when
// e ≥ unit and otherwise drops or rounds the low bits, as Alignment and
// Sticky say. The result fits the grid checked by the caller.
func (m *Model) shiftTerm(mant uint64, e, unit int) uint64 {
	if e >= unit {
		return mant << uint(e-unit)
	}
	if m.p.Sticky {
		// The sticky bit is the unit position itself: shift to the grid
		// one position up, then record whether anything below it was lost.
		sh := unit + 1 - e
		var v, lost uint64
		if sh < 64 {
			v, lost = mant>>uint(sh), mant&(1<<uint(sh)-1)
		} else {
			lost = mant
		}
		v <<= 1
		if lost != 0 {
			v |= 1
		}
		return v
	}
	sh := unit - e
	if sh >= 64 {
		return 0 // below half a unit, whatever the rounding
	}
	v := mant >> uint(sh)
	if m.p.Alignment == AlignNearestEven {
		rem, half := mant&(1<<uint(sh)-1), uint64(1)<<uint(sh-1)
		if rem > half || rem == half && v&1 == 1 {
			v++
		}
	}
	return v
}

// capacity is the number of grid positions the accumulator holds: from the
// unit up to the top term's leading bit, plus the carry bits.
func (m *Model) capacity(top, unit int) int {
	if m.p.CarryBits == Unlimited {
		return math.MaxInt
	}
	return top - unit + 1 + m.p.CarryBits
}

func (m *Model) fixedSum(ts []float64, top, unit int) float64 {
	var s int64
	for _, t := range ts {
		if t == 0 {
			continue
		}
		mant, e := decompose(t)
		v := int64(m.shiftTerm(mant, e, unit))
		if t < 0 {
			v = -v
		}
		s += v
	}
	neg := s < 0
	mag := uint64(s)
	if neg {
		mag = uint64(-s)
	}
	if c := m.capacity(top, unit); c < 64 {
		mag &= 1<<uint(c) - 1 // a lost carry: the magnitude wraps
	}
	return m.normalize(neg, mag, false, unit)
}

// normalize rounds (-1)^neg·(mag + sticky·ε)·2^unit into the accumulator.
// It first rounds to odd at 53 bits (sticky marks bits already dropped
// below mag), a float64 from which rounding to any precision up to 51 bits
// in any deterministic mode is the correct rounding of the exact value.
func (m *Model) normalize(neg bool, mag uint64, sticky bool, unit int) float64 {
	if mag == 0 && !sticky {
		// Exact cancellation: +0, or -0 when rounding down (IEEE 754 6.3).
		return math.Copysign(0, boolSign(m.p.AccumulatorMode == format.Down))
	}
	if n := bits.Len64(mag); n > 53 {
		sh := uint(n - 53)
		sticky = sticky || mag&(1<<sh-1) != 0
		mag >>= sh
		unit += int(sh)
	}
	if unit < -1074 {
		// Keep the float64 exact: below 2^-1074 only the sticky survives,
		// at least two bits under any accumulator's smallest subnormal.
		sh := -1074 - unit
		if sh >= 64 {
			sticky = sticky || mag != 0
			mag = 0
		} else {
			sticky = sticky || mag&(1<<uint(sh)-1) != 0
			mag >>= uint(sh)
		}
		unit = -1074
	}
	if sticky {
		mag |= 1
	}
	x := scale(float64(mag), unit)
	if neg {
		x = -x
	}
	return m.roundAcc(x)
}

// scale is math.Ldexp(m, e) for an integer m < 2^53 and e ≥ -1074, where
// it is exact: one product by the power of two, built from its bits.
func scale(m float64, e int) float64 {
	switch {
	case e > 1023:
		return math.Ldexp(m, e)
	case e >= -1022:
		return m * math.Float64frombits(uint64(e+1023)<<52)
	}
	return m * math.Float64frombits(1<<uint(e+1074)) // a subnormal power of two
}

// roundAcc rounds into the accumulator; with FixedRange past its top
// exponent to ±Inf and every zero to +0.
func (m *Model) roundAcc(x float64) float64 {
	if m.p.FixedRange {
		if _, e := math.Frexp(x); e-1 > m.p.Accumulator.Emax() {
			return math.Copysign(math.Inf(1), x)
		}
		if r := m.accR.Round(x); r == 0 {
			return 0
		}
	}
	return m.accR.Round(x)
}

// exactPairSum rounds x+y exactly for two nonzero terms however far apart:
// TwoSum gives s + err = x + y, and the neighbour of x+y with an odd last bit
// is the round-to-odd result that normalize would build.
func (m *Model) exactPairSum(ts []float64) float64 {
	var x, y float64
	for _, t := range ts {
		if t != 0 {
			x, y = y, t
		}
	}
	s := x + y
	bb := s - x
	err := (x - (s - bb)) + (y - bb)
	if s == 0 {
		return m.normalize(false, 0, false, 0)
	}
	if err != 0 && math.Float64bits(s)&1 == 0 {
		s = math.Nextafter(s, math.Copysign(math.Inf(1), err))
	}
	return m.roundAcc(s)
}

// bigSum is fixedSum for grids wider than an int64.
func (m *Model) bigSum(ts []float64, top, unit int) float64 {
	var s, v big.Int
	for _, t := range ts {
		if t == 0 {
			continue
		}
		mant, e := decompose(t)
		if e >= unit {
			v.SetUint64(mant)
			v.Lsh(&v, uint(e-unit))
		} else {
			v.SetUint64(m.shiftTerm(mant, e, unit))
		}
		if t < 0 {
			s.Sub(&s, &v)
		} else {
			s.Add(&s, &v)
		}
	}
	neg := s.Sign() < 0
	s.Abs(&s)
	if c := m.capacity(top, unit); c != math.MaxInt && s.BitLen() > c {
		var mask big.Int
		mask.Lsh(big.NewInt(1), uint(c))
		mask.Sub(&mask, big.NewInt(1))
		s.And(&s, &mask)
	}
	sticky := false
	if n := s.BitLen(); n > 63 {
		sh := uint(n - 63)
		sticky = s.TrailingZeroBits() < sh
		s.Rsh(&s, sh)
		unit += int(sh)
	}
	return m.normalize(neg, s.Uint64(), sticky, unit)
}
