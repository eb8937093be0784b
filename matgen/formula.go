package matgen

import "math"

// The device formulas, in Go. Each line has its twin in
// gpu/dense/kernels/lu.cu; products are rounded before they are added
// (float64(·) forbids Go to fuse them, __dmul_rn does on the device), and
// the fused multiply-adds are explicit on both.

// Mix is splitmix64's finaliser, a bijection of 64-bit words whose every
// output bit depends on every input bit.
func Mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Unit returns draw k of stream seed, uniform in (0, 1]: 53 random bits,
// never 0 (Normal takes its logarithm).
func Unit(seed, k uint64) float64 {
	r := Mix(seed*0x9e3779b97f4a7c15 + Mix(k+0x632be59bd9b4e019))
	return float64((r>>11)+1) * 0x1p-53
}

// Normal returns entry k of stream seed, standard normal: Box–Muller on
// draws 2k and 2k+1.
func Normal(seed, k uint64) float64 {
	u1, u2 := Unit(seed, 2*k), Unit(seed, 2*k+1)
	return float64(math.Sqrt(-2*Log(u1)) * Cos2Pi(u2))
}

// logCoef are 1/(2k+1), k = 0…10: ln m = 2s·Σ s^(2k)/(2k+1), s =
// (m−1)/(m+1), |s| ≤ 0.1716 for m in [√½, √2], where the next term is
// below 2⁻⁶⁰ of the sum.
var logCoef = [...]float64{
	0x1p+00, 0x1.5555555555555p-02, 0x1.999999999999ap-03, 0x1.2492492492492p-03,
	0x1.c71c71c71c71cp-04, 0x1.745d1745d1746p-04, 0x1.3b13b13b13b14p-04, 0x1.1111111111111p-04,
	0x1.e1e1e1e1e1e1ep-05, 0x1.af286bca1af28p-05, 0x1.8618618618618p-05,
}

// Log returns ln x for x in (0, 1] (Unit's range) to a few units in the
// last place: x = m·2^e with m in [√½, √2), ln x = e·ln 2 + ln m.
func Log(x float64) float64 {
	b := math.Float64bits(x)
	e := float64(int64(b>>52&0x7ff) - 1023)
	m := math.Float64frombits(b&(1<<52-1) | 0x3ff<<52)
	if m > math.Sqrt2 {
		m, e = m*0.5, e+1
	}
	s := (m - 1) / (m + 1)
	z := float64(s * s)
	p := logCoef[len(logCoef)-1]
	for k := len(logCoef) - 2; k >= 0; k-- {
		p = math.FMA(p, z, logCoef[k])
	}
	lnm := 2 * float64(s*p)
	return math.FMA(e, math.Ln2, lnm)
}

// cosCoef are (−1)^k/(2k)! and sinCoef (−1)^k/(2k+1)!, k = 0…9: the
// Taylor series of cos x and sin x/x, whose next terms are below 2⁻⁶⁰ for
// |x| ≤ π/4.
var cosCoef = [...]float64{
	0x1p+00, -0x1p-01, 0x1.5555555555555p-05, -0x1.6c16c16c16c17p-10,
	0x1.a01a01a01a01ap-16, -0x1.27e4fb7789f5cp-22, 0x1.1eed8eff8d898p-29, -0x1.93974a8c07c9dp-37,
	0x1.ae7f3e733b81fp-45, -0x1.6827863b97d97p-53,
}

var sinCoef = [...]float64{
	0x1p+00, -0x1.5555555555555p-03, 0x1.1111111111111p-07, -0x1.a01a01a01a01ap-13,
	0x1.71de3a556c734p-19, -0x1.ae64567f544e4p-26, 0x1.6124613a86d09p-33, -0x1.ae7f3e733b81fp-41,
	0x1.952c77030ad4ap-49, -0x1.2f49b46814157p-57,
}

// Cos2Pi returns cos(2π·u) for u in (0, 1] to a few units in the last
// place: 4u = q + f exactly, q an integer and |f| ≤ ½, and cos(2πu) is
// ±cos or ±sin of x = f·π/2, |x| ≤ π/4, by q mod 4.
func Cos2Pi(u float64) float64 {
	v := 4 * u
	q := math.RoundToEven(v)
	x := float64((v - q) * (math.Pi / 2))
	z := float64(x * x)
	c, s := cosCoef[len(cosCoef)-1], sinCoef[len(sinCoef)-1]
	for k := len(cosCoef) - 2; k >= 0; k-- {
		c = math.FMA(c, z, cosCoef[k])
		s = math.FMA(s, z, sinCoef[k])
	}
	s = float64(x * s)
	switch int(q) & 3 {
	case 1:
		return -s
	case 2:
		return -c
	case 3:
		return s
	}
	return c
}
