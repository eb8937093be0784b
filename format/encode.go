package format

import (
	"fmt"
	"math"
)

// Codes have the layout sign | exponent field (w bits, bias 1-Emin) |
// fraction (p-1 bits), in the low Bits bits of a uint64. Field 0 holds zero
// and the subnormals. Which codes are Inf and NaN depends on Specials.

func (f *Format) fractionBits() uint { return uint(f.p - 1) }

func (f *Format) magnitudeMask() uint64 { return 1<<(f.bits-1) - 1 }

// nanCode is the canonical NaN: quiet (top fraction bit set) for IEEE,
// S.1…1.1…1 for NaNOnly, 100…0 for P3109.
func (f *Format) nanCode() uint64 {
	switch f.specials {
	case IEEE:
		return f.infCode() | 1<<(f.fractionBits()-1)
	case NaNOnly:
		return f.magnitudeMask()
	default:
		return 1 << (f.bits - 1)
	}
}

// infCode is +Inf's code (only for formats with Inf).
func (f *Format) infCode() uint64 {
	if f.specials == P3109Extended {
		return f.magnitudeMask()
	}
	return f.magnitudeMask() &^ (1<<f.fractionBits() - 1)
}

// largestFiniteCode is the code of MaxFinite.
func (f *Format) largestFiniteCode() uint64 {
	switch f.specials {
	case IEEE:
		return f.infCode() - 1
	case NaNOnly, P3109Extended:
		return f.magnitudeMask() - 1
	default:
		return f.magnitudeMask()
	}
}

// decodeMagnitude is the value of a positive finite code.
func (f *Format) decodeMagnitude(mag uint64) float64 {
	field := int(mag >> f.fractionBits())
	frac := mag & (1<<f.fractionBits() - 1)
	if field == 0 {
		return math.Ldexp(float64(frac), f.emin-f.p+1)
	}
	return math.Ldexp(float64(frac|1<<f.fractionBits()), field-1+f.emin-f.p+1)
}

// Decode returns the value of a code (its low Bits bits). Subnormal codes
// decode to their subnormal values even when subnormals are off.
func (f *Format) Decode(code uint64) (float64, error) {
	if f.bits == 0 {
		return 0, fmt.Errorf("format %s has no encoding", f.Name())
	}
	if f.bits < 64 && code>>f.bits != 0 {
		return 0, fmt.Errorf("format %s: code %#x wider than %d bits", f.Name(), code, f.bits)
	}
	if f.specials == Unsigned {
		return f.unsignedValue(code), nil
	}
	neg := code>>(f.bits-1) == 1
	mag := code & f.magnitudeMask()
	switch {
	case f.isNaNCode(code):
		return math.NaN(), nil
	case f.specials.HasInf() && mag == f.infCode():
		return f.signed(math.Inf(1), neg), nil
	}
	return f.signed(f.decodeMagnitude(mag), neg), nil
}

func (f *Format) isNaNCode(code uint64) bool {
	switch f.specials {
	case IEEE:
		return code&f.magnitudeMask() > f.infCode()
	case NaNOnly:
		return code&f.magnitudeMask() == f.magnitudeMask()
	case P3109Extended, P3109Finite:
		return code == 1<<(f.bits-1)
	}
	return false
}

// Encode returns the code of x, which must be a value of the format
// (IsRepresentable): round first. NaN encodes as the canonical NaN; -0 as +0
// in formats without a negative zero.
func (f *Format) Encode(x float64) (uint64, error) {
	if f.bits == 0 {
		return 0, fmt.Errorf("format %s has no encoding", f.Name())
	}
	if x == 0 {
		x = f.signed(0, math.Signbit(x))
	}
	if !f.IsRepresentable(x) {
		return 0, fmt.Errorf("format %s cannot represent %v exactly (round it first)", f.Name(), x)
	}
	if f.specials == Unsigned {
		return f.unsignedCode(x), nil
	}
	if x != x {
		return f.nanCode(), nil
	}
	var sign uint64
	if math.Signbit(x) {
		sign = 1 << (f.bits - 1)
	}
	ax := math.Abs(x)
	if math.IsInf(ax, 0) {
		return sign | f.infCode(), nil
	}
	if ax == 0 {
		return sign, nil
	}
	_, e := math.Frexp(ax)
	e--
	if e < f.emin { // subnormal: field 0
		return sign | uint64(math.Ldexp(ax, -(f.emin-f.p+1))), nil
	}
	frac := uint64(math.Ldexp(ax, -(e-f.p+1))) &^ (1 << f.fractionBits())
	return sign | uint64(e-f.emin+1)<<f.fractionBits() | frac, nil
}

// EncodeSlice stores the code of each src[i] in dst[i], as Encode does, by
// bit arithmetic on the float64 (fast enough to keep up with RoundSlice).
// Every src[i] must be a value of the format (round first); at the first
// that is not it stops and returns its index and an error. Without an error
// the index is len(src).
func (f *Format) EncodeSlice(dst []uint64, src []float64) (int, error) {
	if f.bits == 0 {
		return 0, fmt.Errorf("format %s has no encoding", f.Name())
	}
	if len(dst) != len(src) {
		panic(fmt.Sprintf("format: EncodeSlice into %d codes from %d values", len(dst), len(src)))
	}
	if f.specials == Unsigned {
		for i, x := range src {
			c, err := f.Encode(x)
			if err != nil {
				return i, fmt.Errorf("%v is not a %s value (round it first)", x, f.Name())
			}
			dst[i] = c
		}
		return len(src), nil
	}
	fb := f.fractionBits()
	signCode := uint64(1) << (f.bits - 1)
	fracMask := uint64(1)<<fb - 1
	bias := uint64(1023 + f.emin - 1)    // float64 exponent field of the code's field 0
	k := uint64(f.emin - f.p + 1 + 1075) // s = k - max(E, 1): see roundSub
	negZero := uint64(0)
	if f.specials.HasNegativeZero() {
		negZero = 1
	}
	minNormal, span, dropMask, shift := f.minNormal, f.normalSpan, f.dropMask, f.shift
	// Normal and subnormal codes are both computed and one is selected, with
	// bitwise & of 0/1 values rather than &&: mixed data costs no
	// mispredicted branches.
	for i, x := range src {
		b := math.Float64bits(x)
		a := b &^ signBit
		normal := b2u(a-minNormal <= span) & b2u(a&dropMask == 0)
		cn := (a>>52-bias)<<fb | a>>shift&fracMask
		e1 := max(a>>52, 1)
		mant := a - (e1-1)<<52
		sh := min(k-e1, 63) // k - e1 wraps for normal a: then sub is 0
		sub := b2u(a < minNormal) & b2u(mant&(1<<sh-1) == 0)
		cs := mant >> sh
		c := cs ^ (cs^cn)&-normal
		if normal|sub == 0 {
			var ok bool
			if c, ok = f.specialCode(x); !ok {
				return i, fmt.Errorf("%v is not a %s value (round it first)", x, f.Name())
			}
		}
		// The sign, except on a zero of a format without -0, and NaN's.
		hasSign := b >> 63 & (negZero | b2u(c != 0)) & b2u(x == x)
		dst[i] = c | signCode&-hasSign
	}
	return len(src), nil
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// specialCode is the code of a NaN or ±Inf's magnitude where the format has
// them.
//
//go:noinline
func (f *Format) specialCode(x float64) (uint64, bool) {
	switch {
	case x != x && f.specials.HasNaN():
		return f.nanCode(), true
	case math.IsInf(x, 0) && f.specials.HasInf():
		return f.infCode(), true
	}
	return 0, false
}
