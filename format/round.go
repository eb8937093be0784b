package format

import (
	"fmt"
	"math"
	"math/bits"
)

// Source supplies random bits to the stochastic modes. *math/rand/v2.Rand,
// rand.PCG and rand.ChaCha8 all satisfy it; seed them for reproducible runs.
type Source interface {
	Uint64() uint64
}

const signBit = 1 << 63

// Round rounds x to the format in a deterministic mode. It panics if m is
// stochastic: use RoundRand, which takes the random source.
//
// NaN gives NaN (also in formats without a NaN code, which then cannot
// Encode it); ±Inf and overflow follow the format's specials and
// saturation (see Specials); the directed modes that round toward zero for
// x's sign (and ToOdd) clamp overflow to ±MaxFinite as IEEE 754 prescribes.
// Zero results keep x's sign where the format has a negative zero.
func (f *Format) Round(x float64, m Mode) float64 {
	if m.IsStochastic() || !m.valid() {
		panic(fmt.Sprintf("format: Round with %v: stochastic modes need a Source, use RoundRand", m))
	}
	if f.specials == Unsigned {
		return f.roundUnsigned(x, m, 0)
	}
	b := math.Float64bits(x)
	a := b &^ signBit
	// Fast path: x in the normal range, rounding by an integer add on the
	// bit pattern (a carry out of the fraction bumps the exponent, as it should).
	if a-f.minNormal <= f.normalSpan {
		if m == ToOdd {
			r := a &^ f.dropMask
			if a&f.dropMask != 0 {
				r |= f.oddBit
			}
			return math.Float64frombits(r | b&signBit)
		}
		p := f.addAndMaskParams(m)
		if r := p.round(a, b); r <= f.maxBits {
			return math.Float64frombits(r | b&signBit)
		}
	}
	if v, ok := f.roundSub(b, m, 0); ok {
		return v
	}
	return f.roundSlow(x, m, 0)
}

// RoundRand rounds x to the format in any mode, drawing one Uint64 from src
// per call when m is stochastic (src may be nil otherwise).
func (f *Format) RoundRand(x float64, m Mode, src Source) float64 {
	if !m.IsStochastic() {
		return f.Round(x, m)
	}
	return f.roundStochastic(x, m, src.Uint64())
}

// roundStochastic rounds with the random word r; the fast and slow paths
// read the same bits of r (its top ones), so they agree for the same r.
func (f *Format) roundStochastic(x float64, m Mode, r uint64) float64 {
	if f.specials == Unsigned {
		return f.roundUnsigned(x, m, r)
	}
	b := math.Float64bits(x)
	a := b &^ signBit
	if p := f.stochasticParams(m); a-p.minNormal < p.span {
		res := (a + (r>>(p.rshift&63))*p.mul) & p.keep
		return math.Float64frombits(res | (b ^ a))
	}
	if v, ok := f.roundSub(b, m, r); ok {
		return v
	}
	return f.roundSlow(x, m, r)
}

// subQuantumExp is the exponent of the spacing below 2^Emin: that of the
// subnormals, or 2^Emin itself when they are off (the neighbours are then 0
// and 2^Emin).
func (f *Format) subQuantumExp() int {
	if f.subnormals {
		return f.emin - f.p + 1
	}
	return f.emin
}

// roundSub rounds x (bits b) when |x| < 2^Emin, where the grid is fixed
// point with quantum 2^qe: with |x| = mant·2^(E-1075) (E the biased
// exponent, at least 1), the result is ⌊(mant + inc) / 2^s⌋·2^qe with
// s = qe+1075-E ≥ 1 and inc chosen by the mode as in the normal fast path.
// It reports false where it does not apply: |x| ≥ 2^Emin, NaN, formats
// whose quantum is float64's own (fp64: s would be 0), and the
// stochastic modes when s > 63 (x far below the quantum, where ⌊η·2^n⌋
// needs more than 64 bits).
func (f *Format) roundSub(b uint64, m Mode, r uint64) (float64, bool) {
	a := b &^ signBit
	qe := f.subQuantumExp()
	if a >= f.minNormal || qe <= -1074 {
		return 0, false
	}
	e1 := max(a>>52, 1)
	mant := a - (e1-1)<<52
	s := uint64(qe+1075) - e1
	if s > 63 {
		if m.IsStochastic() {
			return 0, false
		}
		s = 63 // mant < 2^53: the same decisions as with the true s
	}
	drop := uint64(1)<<s - 1
	neg := b&signBit != 0
	var inc uint64
	switch m {
	case NearestEven:
		inc = drop>>1 + (mant>>s)&1
	case NearestAway:
		inc = drop>>1 + 1
	case NearestTowardZero:
		inc = drop >> 1
	case TowardZero, ToOdd:
	case Up:
		if !neg {
			inc = drop
		}
	case Down:
		if neg {
			inc = drop
		}
	case AwayFromZero:
		inc = drop
	case StochasticHalf:
		inc = drop & -(r >> 63)
	default: // Stochastic, StochasticBits(n): see stochasticParams
		k := min(uint64(m.randomBits()), s)
		inc = r >> (64 - k) << (s - k)
	}
	q := (mant + inc) >> s
	if m == ToOdd && mant&drop != 0 {
		q |= 1
	}
	return f.signed(timesPow2(float64(q), qe), neg), true // exact: q ≤ 2^(p-1)
}

// stochasticParams describes the fast path of a stochastic mode: with a =
// |x|'s bits and r the random word, the result's bits are
//
//	(a + (r>>rshift)*mul) & keep
//
// when a-minNormal < span (unsigned), that is 2^Emin ≤ |x| < MaxFinite, so
// that the result cannot overflow.
//
// For StochasticBits(n) (and Stochastic, n = 64) this rounds up iff
// ⌊η·2^n⌋ + R ≥ 2^n: k = min(n, shift) top bits of r, placed (by mul, a power
// of two) just below the kept last bit, make the add carry exactly then. For
// StochasticHalf the increment is all the dropped bits or none, on r's top bit.
type stochasticParams struct {
	rshift, mul           uint64
	keep, minNormal, span uint64
}

func (f *Format) stochasticParams(m Mode) stochasticParams {
	p := stochasticParams{keep: ^f.dropMask, minNormal: f.minNormal, span: f.normalSpan}
	switch k := uint64(min(m.randomBits(), f.shift)); {
	case m == StochasticHalf:
		p.rshift, p.mul = 63, f.dropMask
	case k > 0: // else nothing is dropped, and mul = 0
		p.rshift, p.mul = 64-k, 1<<(uint64(f.shift)-k)
	}
	return p
}

// roundSlow handles every case: subnormal and flushed results, overflow,
// zeros, Inf and NaN. It scales |x| so that the target's last place is 1,
// then decides between the integer neighbours ⌊s⌋ and ⌊s⌋+1.
func (f *Format) roundSlow(x float64, m Mode, r uint64) float64 {
	if x != x {
		return x
	}
	neg := math.Signbit(x)
	ax := math.Abs(x)
	if math.IsInf(ax, 0) {
		if f.Saturates() || !f.specials.HasInf() {
			if f.Saturates() {
				return f.signed(f.maxFinite, neg)
			}
			return math.NaN()
		}
		return x
	}
	if ax == 0 {
		return f.signed(0, neg)
	}
	e := int(math.Float64bits(ax)>>52) - 1023 // ax ∈ [2^e, 2^(e+1))
	if e == -1023 {                           // a float64 subnormal
		_, e = math.Frexp(ax)
		e--
	}
	var quantumExp int
	switch {
	case e >= f.emin:
		quantumExp = e - f.p + 1
	case f.subnormals:
		quantumExp = f.emin - f.p + 1
	default:
		quantumExp = f.emin // the only neighbours are 0 and 2^emin
	}
	scaled := timesPow2(ax, -quantumExp) // exact, into [0, 2^p), unless it underflows:
	if scaled == 0 {
		// A quantum above 1 and a tiny x; only frac's being nonzero matters.
		scaled = math.SmallestNonzeroFloat64
	}
	q := float64(uint64(scaled)) // ⌊scaled⌋, as scaled < 2^53
	frac := scaled - q
	if frac != 0 {
		odd := uint64(q)&1 == 1
		var up bool
		switch m {
		case NearestEven:
			up = frac > 0.5 || frac == 0.5 && odd
		case NearestAway:
			up = frac >= 0.5
		case NearestTowardZero:
			up = frac > 0.5
		case TowardZero:
		case Up:
			up = !neg
		case Down:
			up = neg
		case AwayFromZero:
			up = true
		case ToOdd:
			up = !odd
		case StochasticHalf:
			up = r>>63 == 1
		default: // Stochastic, StochasticBits(n)
			n := m.randomBits()
			// ⌊η·2^n⌋ and R, both as the top n bits of a 64-bit word: their
			// sum carries out iff ⌊η·2^n⌋ + R ≥ 2^n.
			fracBits := uint64(math.Ldexp(frac, 64)) // ⌊η·2^64⌋ < 2^64
			keep := ^uint64(0) << (64 - n)
			_, carry := bits.Add64(fracBits&keep, r&keep, 0)
			up = carry == 1
		}
		if up {
			q++
		}
	}
	v := timesPow2(q, quantumExp) // exact: a multiple of 2^quantumExp ≥ 2^-1074, or overflow
	if v > f.maxFinite {
		return f.overflow(neg, m)
	}
	return f.signed(v, neg)
}

// timesPow2 is x·2^k, by one multiplication where 2^k is a float64 (faster
// than math.Ldexp); it rounds only where the product is a float64 subnormal.
func timesPow2(x float64, k int) float64 {
	if k >= -1074 && k <= 1023 {
		if k < -1022 {
			return x * math.Float64frombits(1<<(k+1074))
		}
		return x * math.Float64frombits(uint64(k+1023)<<52)
	}
	return math.Ldexp(x, k)
}

// overflow is the result for a finite x whose rounding exceeds MaxFinite.
func (f *Format) overflow(neg bool, m Mode) float64 {
	towardZero := m == TowardZero || m == ToOdd || m == Up && neg || m == Down && !neg
	switch {
	case f.Saturates() || towardZero:
		return f.signed(f.maxFinite, neg)
	case f.specials.HasInf():
		return f.signed(math.Inf(1), neg)
	default:
		return math.NaN()
	}
}

// signed attaches the sign, except to zeros of formats without -0.
func (f *Format) signed(v float64, neg bool) float64 {
	if !neg || v == 0 && !f.specials.HasNegativeZero() {
		return v
	}
	return -v
}

// Round32 rounds a float32. Exact for formats that fit in fp32; wider
// formats get the float64 result converted to float32 (a second rounding).
func (f *Format) Round32(x float32, m Mode) float32 {
	return float32(f.Round(float64(x), m))
}

// RoundRand32 is RoundRand for a float32.
func (f *Format) RoundRand32(x float32, m Mode, src Source) float32 {
	return float32(f.RoundRand(float64(x), m, src))
}

// IsRepresentable reports whether x is a value of the format: NaN and ±Inf
// when the format has them, or a finite number on its grid within range.
func (f *Format) IsRepresentable(x float64) bool {
	switch {
	case x != x:
		return f.specials.HasNaN()
	case math.IsInf(x, 0):
		return f.specials.HasInf()
	case x == 0:
		return f.specials.HasZero() && (!math.Signbit(x) || f.specials.HasNegativeZero())
	}
	return math.Abs(x) <= f.maxFinite && f.Round(x, TowardZero) == x
}
