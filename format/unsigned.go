package format

import "math"

// Formats with Specials Unsigned (E8M0) have no sign and no zero: their
// values are the powers of two 2^Emin … 2^Emax, code c = e − Emin, and the
// all-ones code is NaN. This file holds what differs for them; the rest of
// the package reaches it through the checks on f.specials.

// roundUnsigned rounds x in mode m (r: the random word of a stochastic
// mode). What has no value (zero, a negative x, +Inf) is NaN, or with
// saturation the nearest end of the range; positive values below 2^Emin
// give 2^Emin whatever the mode, as ml_dtypes' float8_e8m0fnu does: there
// is no zero to round toward. The rest rounds as any format of p = 1.
func (f *Format) roundUnsigned(x float64, m Mode, r uint64) float64 {
	switch {
	case x != x:
		return x
	case x == 0 || math.Signbit(x):
		if f.saturate {
			return f.MinNormal()
		}
		return math.NaN()
	case math.IsInf(x, 1):
		if f.saturate {
			return f.maxFinite
		}
		return math.NaN()
	case x < f.MinNormal():
		return f.MinNormal()
	}
	return f.roundSlow(x, m, r)
}

// unsignedCode is the code of a value of an unsigned format (which the
// caller has checked): e − Emin for 2^e, all ones for NaN.
func (f *Format) unsignedCode(x float64) uint64 {
	if x != x {
		return 1<<f.bits - 1
	}
	_, e := math.Frexp(x)
	return uint64(e - 1 - f.emin)
}

// unsignedValue is the value of a code below 2^Bits.
func (f *Format) unsignedValue(code uint64) float64 {
	if code == 1<<f.bits-1 {
		return math.NaN()
	}
	return math.Ldexp(1, f.emin+int(code))
}
