package format

// An independent oracle for Round, built on math/big.Float, and a test that
// compares the library with it on every format and deterministic mode.
//
// The oracle shares no code with round.go: it reads only the parameters of a
// format (precision, exponent range, subnormals, specials, saturation) and
// derives everything else (the grid at x's exponent, MaxFinite, the overflow
// rule, the sign of zero) by itself.

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// allDeterministicModes are the modes Round accepts.
var allDeterministicModes = []Mode{NearestEven, NearestAway, NearestTowardZero, TowardZero, Up, Down, AwayFromZero, ToOdd}

// oracleBigModes maps the modes that math/big rounds itself.
var oracleBigModes = map[Mode]big.RoundingMode{
	NearestEven:  big.ToNearestEven,
	NearestAway:  big.ToNearestAway,
	TowardZero:   big.ToZero,
	Up:           big.ToPositiveInf,
	Down:         big.ToNegativeInf,
	AwayFromZero: big.AwayFromZero,
}

// oracleSpecials are the properties of a format's specials, written out
// here rather than taken from the library's helpers.
type oracleSpecials struct{ inf, negZero, topCodeSpecial bool }

func oracleSpecialsOf(s Specials) oracleSpecials {
	switch s {
	case IEEE:
		return oracleSpecials{inf: true, negZero: true} // top binade reserved: not on the grid of emax at all
	case NaNOnly:
		return oracleSpecials{negZero: true, topCodeSpecial: true}
	case NoSpecials:
		return oracleSpecials{negZero: true}
	case P3109Extended:
		return oracleSpecials{inf: true, topCodeSpecial: true}
	case P3109Finite:
		return oracleSpecials{}
	}
	panic(fmt.Sprintf("unknown specials %d", s))
}

// oracleSaturates: saturation asked for, or no Inf/NaN codes to overflow to.
func oracleSaturates(f Format) bool { return f.saturate || f.Specials() == NoSpecials }

// oracleMaxFinite is the largest finite value, from the parameters: the top
// grid point (2-2^(1-p))·2^emax, or the one below it when the top code is
// special (E4M3's NaN, P3109's +Inf).
func oracleMaxFinite(f Format) float64 {
	p, emax := f.Precision(), f.Emax()
	top := math.Ldexp(2-math.Ldexp(1, 1-p), emax)
	if oracleSpecialsOf(f.Specials()).topCodeSpecial {
		if p == 1 {
			return math.Ldexp(1, emax-1) // the binade below holds the only other value
		}
		return top - math.Ldexp(1, emax-p+1)
	}
	return top
}

// oracleTowardZero reports whether m rounds toward zero for a value of the
// given sign (so that overflow clamps to ±MaxFinite).
func oracleTowardZero(m Mode, neg bool) bool {
	return m == TowardZero || m == ToOdd || (m == Up && neg) || (m == Down && !neg)
}

// oracleOverflow is the result of a finite x whose rounding exceeds MaxFinite.
func oracleOverflow(f Format, neg bool, m Mode) float64 {
	switch {
	case oracleSaturates(f) || oracleTowardZero(m, neg):
		return signedMag(oracleMaxFinite(f), neg)
	case oracleSpecialsOf(f.Specials()).inf:
		return signedMag(math.Inf(1), neg)
	}
	return math.NaN()
}

func signedMag(v float64, neg bool) float64 {
	if neg {
		return -v
	}
	return v
}

const oraclePrec = 256 // exact for sums of two nearby grid points

func bigExact() *big.Float { return new(big.Float).SetPrec(oraclePrec) }

// bigPow2 returns 2^e as a big.Float.
func bigPow2(e int) *big.Float { return bigExact().SetMantExp(big.NewFloat(1), e) }

// oracleChoose picks between the magnitudes lo < ax < hi, lo = k·q and
// hi = (k+1)·q, where loOdd says whether k is odd, for mode m and x's sign.
func oracleChoose(ax, lo, hi *big.Float, loOdd, neg bool, m Mode) *big.Float {
	mid := bigExact().Add(lo, hi)
	mid.SetMantExp(mid, -1) // exact halving
	c := ax.Cmp(mid)
	even, odd := lo, hi
	if loOdd {
		even, odd = hi, lo
	}
	switch m {
	case NearestEven:
		switch {
		case c < 0:
			return lo
		case c > 0:
			return hi
		}
		return even
	case NearestAway:
		if c < 0 {
			return lo
		}
		return hi
	case NearestTowardZero:
		if c > 0 {
			return hi
		}
		return lo
	case TowardZero:
		return lo
	case Up:
		if neg {
			return lo
		}
		return hi
	case Down:
		if neg {
			return hi
		}
		return lo
	case AwayFromZero:
		return hi
	case ToOdd:
		return odd
	}
	panic(fmt.Sprintf("oracle: mode %v", m))
}

// oracleRound rounds x to f in the deterministic mode m.
func oracleRound(f Format, x float64, m Mode) float64 {
	sp := oracleSpecialsOf(f.Specials())
	neg := math.Signbit(x)
	switch {
	case math.IsNaN(x):
		return math.NaN()
	case math.IsInf(x, 0):
		switch {
		case oracleSaturates(f):
			return signedMag(oracleMaxFinite(f), neg)
		case sp.inf:
			return x
		}
		return math.NaN()
	case x == 0:
		return signedMag(0, neg && sp.negZero)
	}

	bx := new(big.Float).SetFloat64(x) // exact
	ax := new(big.Float).Abs(bx)
	e := ax.MantExp(nil) - 1 // 2^e ≤ |x| < 2^(e+1)
	p, emin := f.Precision(), f.Emin()

	// The precision available at x's binade; prec ≤ 0 (or subnormals off
	// below 2^emin) leaves only the neighbours 0 and one quantum q.
	prec := p
	twoPoint := false
	var qExp int
	switch {
	case e >= emin:
	case f.Subnormals():
		prec = p - (emin - e)
		if prec <= 0 {
			twoPoint, qExp = true, emin-p+1
		}
	default:
		twoPoint, qExp = true, emin
	}

	var r *big.Float // the rounded magnitude, before the exponent-range check
	bigMode, bigRounds := oracleBigModes[m]
	switch {
	case twoPoint:
		// 0 < |x| < 2^qExp: 0 has significand 0 (even), 2^qExp has 1 (odd).
		r = oracleChoose(ax, bigExact(), bigPow2(qExp), false, neg, m)
	case bigRounds:
		// math/big rounds the signed value itself (ToPositiveInf etc. see the sign).
		z := new(big.Float).SetPrec(uint(prec)).SetMode(bigMode).Set(bx)
		r = z.Abs(z)
	default: // NearestTowardZero, ToOdd: the two neighbours and the midpoint
		lo := new(big.Float).SetPrec(uint(prec)).SetMode(big.ToZero).Set(ax)
		if lo.Cmp(ax) == 0 {
			r = lo
			break
		}
		qe := e - prec + 1 // the quantum at x's exponent
		hi := bigExact().Add(lo, bigPow2(qe))
		k, _ := bigExact().SetMantExp(lo, -qe).Int(nil)
		r = oracleChoose(ax, bigExact().Set(lo), hi, k.Bit(0) == 1, neg, m)
	}

	maxF := new(big.Float).SetFloat64(oracleMaxFinite(f))
	if r.Cmp(maxF) > 0 {
		return oracleOverflow(f, neg, m)
	}
	if r.Sign() == 0 {
		return signedMag(0, neg && sp.negZero)
	}
	v, acc := r.Float64()
	if acc != big.Exact {
		panic(fmt.Sprintf("oracle: %v not exact in float64", r))
	}
	return signedMag(v, neg)
}

// bitSame compares bit for bit, except that any NaN matches any NaN.
func bitSame(a, b float64) bool {
	if a != a || b != b {
		return a != a && b != b
	}
	return a == b && math.Signbit(a) == math.Signbit(b)
}

// oracleFormats are the formats the oracle test and the fuzzer cover: every
// built-in, then custom and P3109 ones (one with a positive emin, whose
// quantum is above 1).
func oracleFormats(tb testing.TB) []Format {
	fs := signedFormats()
	for _, name := range []string{
		"custom:p=5,emin=-10,emax=10",
		"custom:p=3,emin=4,emax=8",
		"custom:p=1,emin=-3,emax=3,specials=none",
		"custom:p=53,emin=-20,emax=20,specials=nan",
		"custom:p=6,emin=-6,emax=9,specials=p3109-finite",
	} {
		f, err := Parse(name)
		if err != nil {
			tb.Fatalf("Parse(%q): %v", name, err)
		}
		fs = append(fs, f)
	}
	for _, kp := range []struct {
		k, p int
		ext  bool
	}{{8, 1, true}, {8, 6, false}, {16, 8, true}, {8, 2, true}, {16, 11, false}} {
		f, err := P3109(kp.k, kp.p, kp.ext)
		if err != nil {
			tb.Fatalf("P3109(%d, %d, %v): %v", kp.k, kp.p, kp.ext, err)
		}
		fs = append(fs, f)
	}
	return fs
}

// oracleVariants adds, for each format, the same with subnormals off, with
// saturation, and with both.
func oracleVariants(fs []Format) []Format {
	var out []Format
	for _, f := range fs {
		out = append(out, f, f.WithSubnormals(false), f.WithSaturation(true), f.WithSubnormals(false).WithSaturation(true))
	}
	return out
}

// oracleInputs returns boundary values and random values spread over and
// beyond the format's range.
func oracleInputs(f Format, rng *rand.Rand, n int) []float64 {
	p, emin, emax := f.Precision(), f.Emin(), f.Emax()
	maxF := oracleMaxFinite(f)
	ulpTop := math.Ldexp(1, emax-p+1)
	minNormal := math.Ldexp(1, emin)
	minSub := math.Ldexp(1, emin-p+1)
	inf := math.Inf(1)

	var xs []float64
	add := func(vs ...float64) {
		for _, v := range vs {
			xs = append(xs, v, -v)
		}
	}
	addNear := func(vs ...float64) { // v and its float64 neighbours
		for _, v := range vs {
			add(v, math.Nextafter(v, inf), math.Nextafter(v, 0))
		}
	}
	add(0, inf, math.NaN(), math.MaxFloat64, math.SmallestNonzeroFloat64, 1, 0.5, 3)
	addNear(maxF, maxF+ulpTop/2, maxF+ulpTop, maxF+ulpTop*1.5, 2*maxF, math.Ldexp(1, emax), math.Ldexp(1, emax+1))
	addNear(minNormal, minNormal/2, minNormal*0.75, minNormal*1.5, minNormal+minSub/2)
	addNear(minSub, minSub/2, minSub/4, minSub*1.5, minSub*2.5, minSub*0.75)

	// randomGrid is a random point of the grid with unbounded exponents
	// above, and the quantum there.
	randomGrid := func() (v, q float64) {
		e := emin - 1 + rng.IntN(emax-emin+3) // emin-1 stands for the subnormal binade
		var m uint64
		if e < emin {
			e = emin
			m = rng.Uint64N(1 << (p - 1))
		} else {
			m = 1<<(p-1) + rng.Uint64N(1<<(p-1))
		}
		if p == 1 {
			m = 1
		}
		q = math.Ldexp(1, e-p+1)
		return float64(m) * q, q
	}
	for range n {
		sign := 1.0
		if rng.IntN(2) == 0 {
			sign = -1
		}
		switch rng.IntN(9) {
		case 0: // any bit pattern
			xs = append(xs, math.Float64frombits(rng.Uint64()))
		case 1: // log-uniform over and beyond the range
			e := emin - p - 4 + rng.IntN(emax-emin+p+10)
			xs = append(xs, sign*math.Ldexp(1+rng.Float64(), e))
		case 2: // near MaxFinite
			xs = append(xs, sign*(maxF+(rng.Float64()*4-1)*ulpTop))
		case 3: // near 2^emin
			xs = append(xs, sign*minNormal*rng.Float64()*2)
		case 4: // below the smallest subnormal
			xs = append(xs, sign*minSub*rng.Float64())
		case 5, 6: // exact midpoints (representable in float64 when p < 53) and their neighbours
			if p >= 53 {
				v, _ := randomGrid()
				xs = append(xs, sign*v)
				break
			}
			v, q := randomGrid()
			mid := sign * (v + q/2)
			xs = append(xs, mid, math.Nextafter(mid, inf), math.Nextafter(mid, -inf))
		case 7: // grid points and a random fraction of a quantum away
			v, q := randomGrid()
			xs = append(xs, sign*v, sign*(v+q*rng.Float64()))
		case 8: // around the subnormal-off threshold 2^(emin-1)
			h := minNormal / 2
			xs = append(xs, sign*h, sign*math.Nextafter(h, inf), sign*math.Nextafter(h, 0), sign*h*(0.5+rng.Float64()))
		}
	}
	return xs
}

// oracleK8P1 is P3109 binary8p1: every value a power of two.
var oracleK8P1, _ = P3109(8, 1, true)

func TestOracleSelfCheck(t *testing.T) {
	// A few hand-derived results, so that the oracle itself is checked.
	f := E4M3
	cases := []struct {
		f    Format
		x    float64
		m    Mode
		want float64
	}{
		{f, 464, NearestEven, 448},                             // tie, 448 = 14·32 even
		{f, math.Nextafter(464, 500), NearestEven, math.NaN()}, // rounds to 480 > 448: NaN
		{f, 470, ToOdd, 448},                                   // overflow in a toward-zero mode clamps
		{f, 1e9, Up, math.NaN()},
		{f.WithSaturation(true), 1e9, Up, 448},
		{f, -1e9, Up, -448},
		{f, math.Ldexp(1, -10), NearestEven, 0}, // half the smallest subnormal: tie to 0
		{f, math.Ldexp(3, -11), NearestEven, math.Ldexp(1, -9)},
		{f, math.Ldexp(1, -10), ToOdd, math.Ldexp(1, -9)},
		{f, math.Ldexp(1, -10), NearestTowardZero, 0},
		{f, math.Ldexp(1, -10), NearestAway, math.Ldexp(1, -9)},
		{f, -math.Ldexp(1, -10), Down, -math.Ldexp(1, -9)},
		{f.WithSubnormals(false), math.Ldexp(1, -7), NearestEven, 0},
		{f.WithSubnormals(false), math.Ldexp(1, -7), ToOdd, math.Ldexp(1, -6)},
		{f.WithSubnormals(false), math.Nextafter(math.Ldexp(1, -7), 1), NearestEven, math.Ldexp(1, -6)},
		{f, 9.5, NearestTowardZero, 9}, // 9 and 10 are neighbours (quantum 1 in [8,16))
		{f, 9.5, NearestEven, 10},
		{f, 9.25, ToOdd, 9},
		{f, 10.25, ToOdd, 11},
		{Binary16, 65520, NearestEven, math.Inf(1)},
		{Binary16, math.Nextafter(65520, 0), NearestEven, 65504},
		{P3109K8P3, -math.Ldexp(1, -30), NearestEven, 0}, // no -0 in P3109
		{P3109K8P3, 53248, NearestEven, 49152},
		{P3109K8P3, math.Nextafter(53248, 1e6), NearestEven, math.Inf(1)},
		{P3109K8P3Finite, 61440, NearestEven, math.NaN()},
		{P3109K8P3Finite, math.Inf(-1), NearestEven, math.NaN()},
		{E2M1, math.Inf(-1), NearestEven, -6},
		{E2M1, math.Copysign(0, -1), Down, math.Copysign(0, -1)},
		{P3109K8P3, math.Copysign(0, -1), Down, 0},
		{E2M1, -0.2, Up, math.Copysign(0, -1)},
		{oracleK8P1, 3, NearestEven, 4}, // tie between 2 = 1·2 (odd) and 4 = 2·2 (even at the quantum 2)
		{oracleK8P1, 3, ToOdd, 2},
		{oracleK8P1, 6, NearestEven, 8},
	}
	for _, c := range cases {
		if got := oracleRound(c.f, c.x, c.m); !bitSame(got, c.want) {
			t.Errorf("oracleRound(%v, %v, %v) = %v, want %v", c.f, c.x, c.m, got, c.want)
		}
	}
}

func TestRoundOracle(t *testing.T) {
	t.Parallel()
	n := 1500
	if testing.Short() {
		n = 300
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, f := range oracleVariants(oracleFormats(t)) {
		xs := oracleInputs(f, rng, n)
		fails := 0
		for _, m := range allDeterministicModes {
			wants := make([]float64, len(xs))
			for i, x := range xs {
				want := oracleRound(f, x, m)
				wants[i] = want
				got := f.Round(x, m)
				if !bitSame(got, want) {
					if fails++; fails <= 5 {
						t.Errorf("%v.Round(%v [%#x], %v) = %v, oracle %v", f.Name(), x, math.Float64bits(x), m, got, want)
					}
				}
				if g32 := f.Round32(float32(x), m); f.Precision() <= 24 && f.Emin() >= -126 && f.Emax() <= 127 && !bitSame(float64(g32), oracleRound(f, float64(float32(x)), m)) {
					if fails++; fails <= 5 {
						t.Errorf("%v.Round32(%v, %v) = %v, oracle %v", f.Name(), float32(x), m, g32, oracleRound(f, float64(float32(x)), m))
					}
				}
			}
			fails += checkRoundSlice(t, f, m, xs, wants)
		}
		if fails > 5 {
			t.Errorf("%v: %d mismatches in all", f.Name(), fails)
		}
	}
}

// checkRoundSlice rounds xs by RoundSlice under each kernel (testKernels),
// out of place and in place, and compares with want bit for bit (any NaN
// for NaN); it reports the number of mismatches, the first few as errors.
func checkRoundSlice(t *testing.T, f Format, m Mode, xs, want []float64) int {
	t.Helper()
	fails := 0
	got := make([]float64, len(xs))
	for _, k := range testKernels() {
		for _, inPlace := range []bool{false, true} {
			in := xs
			if inPlace {
				copy(got, xs)
				in = got
			}
			roundSliceWith(k, &f, got, in, m, nil)
			for i, x := range xs {
				if !bitSame(got[i], want[i]) {
					if fails++; fails <= 3 {
						t.Errorf("%v.RoundSlice %v kernel %s in-place=%v: x=%v [%#x] gave %v, want %v",
							f.Name(), m, k, inPlace, x, math.Float64bits(x), got[i], want[i])
					}
				}
			}
		}
	}
	return fails
}

func TestMaxFiniteOracle(t *testing.T) {
	for _, f := range oracleVariants(oracleFormats(t)) {
		if got, want := f.MaxFinite(), oracleMaxFinite(f); got != want {
			t.Errorf("%v.MaxFinite() = %v, want %v", f.Name(), got, want)
		}
	}
}

// TestOracleStochasticProbability checks the documented probabilities of the
// stochastic modes statistically (not from the implementation's choice of
// random bits): StochasticBits(n) rounds up with probability η truncated to
// n bits, never when η < 2^-n; Stochastic with probability η; StochasticHalf
// with 1/2 when inexact.
func TestOracleStochasticProbability(t *testing.T) {
	const draws = 20000
	src := rand.New(rand.NewPCG(5, 6))
	type tc struct {
		f   Format
		lo  float64 // lower neighbour (magnitude)
		q   float64 // quantum
		eta float64 // fraction of the way to the upper neighbour, η·q exact
	}
	cases := []tc{
		{Binary16, 1, math.Ldexp(1, -10), 0.3},
		{Binary16, 1, math.Ldexp(1, -10), 0.75},
		{Binary16, 1, math.Ldexp(1, -10), 1.0 / 64},
		{E4M3, 8, 1, 0.6875},
		{E4M3, 0, math.Ldexp(1, -9), 0.4},                          // subnormal
		{E4M3.WithSubnormals(false), 0, math.Ldexp(1, -6), 0.8125}, // flushed region
		{P3109K8P3, 49152, 8192, 0.1},                              // into the overflow interval: up means +Inf
		{Binary32, 1, math.Ldexp(1, -23), 0.9},
	}
	modes := []Mode{Stochastic, StochasticHalf}
	for _, n := range []int{1, 2, 3, 5, 8, 13, 30, 64} {
		m, err := StochasticBits(n)
		if err != nil {
			t.Fatal(err)
		}
		modes = append(modes, m)
	}
	for _, c := range cases {
		for _, neg := range []bool{false, true} {
			x := signedMag(c.lo+c.eta*c.q, neg)
			lo := oracleRound(c.f, signedMag(c.lo, neg), NearestEven)     // signed zero per format
			hi := oracleRound(c.f, signedMag(c.lo+c.q, neg), NearestEven) // upper neighbour, or its overflow
			for _, m := range modes {
				var want float64
				switch {
				case m == StochasticHalf:
					want = 0.5
				case m == Stochastic:
					want = c.eta
				default:
					k := float64(m.randomBits())
					want = math.Floor(math.Ldexp(c.eta, int(k))) / math.Exp2(k)
				}
				ups := 0
				for range draws {
					got := c.f.RoundRand(x, m, src)
					switch {
					case bitSame(got, hi):
						ups++
					case bitSame(got, lo):
					default:
						t.Fatalf("%v.RoundRand(%v, %v) = %v, want %v or %v", c.f.Name(), x, m, got, lo, hi)
					}
				}
				freq := float64(ups) / draws
				tol := 5*math.Sqrt(want*(1-want)/draws) + 1e-12
				if math.Abs(freq-want) > tol {
					t.Errorf("%v.RoundRand(%v, %v): up %.4f of the time, want %.4f ± %.4f", c.f.Name(), x, m, freq, want, tol)
				}
			}
		}
	}
}
