package format

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// signedFormats is Builtin() without the unsigned formats (E8M0), whose
// rules (no sign, no zero) the generic tests do not state: this file tests
// them.
func signedFormats() []Format {
	var fs []Format
	for _, f := range Builtin() {
		if f.Specials() != Unsigned {
			fs = append(fs, f)
		}
	}
	return fs
}

// e8m0Value is code c's value by the OCP MX definition, 2^(c−127), as an
// exact big.Float; nil for the NaN code 0xFF.
func e8m0Value(c uint64) *big.Float {
	if c == 0xFF {
		return nil
	}
	return bigPow2(int(c) - 127)
}

// TestE8M0Parameters: 8 bits, no sign, no mantissa, bias 127, 2^-127 …
// 2^127, one NaN (formats-reference.md; OCP MX v1.0; ml_dtypes'
// float8_e8m0fnu).
func TestE8M0Parameters(t *testing.T) {
	f := E8M0
	if f.Bits() != 8 || f.Precision() != 1 || f.Emin() != -127 || f.Emax() != 127 || f.Subnormals() ||
		f.MaxFinite() != 0x1p127 || f.MinNormal() != 0x1p-127 || f.MinSubnormal() != 0 || f.Specials() != Unsigned {
		t.Errorf("e8m0: bits %d p %d emin %d emax %d max %v min %v subnormals %v specials %v",
			f.Bits(), f.Precision(), f.Emin(), f.Emax(), f.MaxFinite(), f.MinNormal(), f.Subnormals(), f.Specials())
	}
	for _, name := range []string{"e8m0", "E8M0", "ue8m0", "float8_e8m0fnu", "custom:p=1,emin=-127,emax=127,subnormals=off,specials=unsigned"} {
		g, err := Parse(name)
		if err != nil || g.Bits() != 8 || g.MaxFinite() != f.MaxFinite() || g.Specials() != Unsigned {
			t.Errorf("Parse(%q) = %v, %v", name, g, err)
		}
	}
	for _, bad := range []string{"custom:p=2,emin=-6,emax=7,subnormals=off,specials=unsigned", "custom:p=1,emin=-6,emax=7,specials=unsigned"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted an unsigned format with a mantissa or subnormals", bad)
		}
	}
	if f.IsRepresentable(0) || f.IsRepresentable(math.Copysign(0, -1)) || f.IsRepresentable(-1) || f.IsRepresentable(math.Inf(1)) ||
		!f.IsRepresentable(math.NaN()) || f.IsRepresentable(3) {
		t.Error("e8m0 represents zero, a negative, Inf or 3, or not NaN")
	}
}

// TestE8M0Exhaustive: every one of the 256 codes decodes to 2^(c−127) (the
// math/big oracle) or NaN for 0xFF, encodes back, and rounds to itself in
// every mode; codes increase with their values.
func TestE8M0Exhaustive(t *testing.T) {
	f := E8M0
	src := rand.New(rand.NewPCG(1, 2))
	if _, err := f.Decode(256); err == nil {
		t.Error("Decode(0x100): no error")
	}
	prev := 0.0
	for c := uint64(0); c < 256; c++ {
		v, err := f.Decode(c)
		if err != nil {
			t.Fatalf("Decode(%#x): %v", c, err)
		}
		want := e8m0Value(c)
		if want == nil {
			if v == v {
				t.Errorf("Decode(0xFF) = %v, want NaN", v)
			}
			if got, err := f.Encode(math.NaN()); err != nil || got != 0xFF {
				t.Errorf("Encode(NaN) = %#x, %v", got, err)
			}
			continue
		}
		if new(big.Float).SetFloat64(v).Cmp(want) != 0 {
			t.Errorf("Decode(%#x) = %v, want %v", c, v, want)
		}
		if !(v > prev) {
			t.Errorf("code %#x = %v not above %v", c, v, prev)
		}
		prev = v
		if got, err := f.Encode(v); err != nil || got != c {
			t.Errorf("Encode(%v) = %#x, %v; want %#x", v, got, err, c)
		}
		for _, m := range allDeterministicModes {
			if got := f.Round(v, m); got != v {
				t.Errorf("Round(%v, %v) = %v", v, m, got)
			}
		}
		for _, m := range exhaustiveStochasticModes {
			if got := f.RoundRand(v, m, src); got != v {
				t.Errorf("RoundRand(%v, %v) = %v", v, m, got)
			}
		}
	}
	for _, x := range []float64{0, -1, 3, math.Inf(1)} {
		if _, err := f.Encode(x); err == nil {
			t.Errorf("Encode(%v): no error", x)
		}
	}
}

// TestE8M0RoundOracle: between every pair of neighbours 2^e < 2^(e+1),
// at the midpoint, next to it and at quarter points, every deterministic
// mode against math/big (oracleChoose: the lower neighbour's significand,
// 1, is odd, so ties to even go up; ToOdd truncates), and the stochastic
// modes to one of the two. RoundSlice agrees with Round.
func TestE8M0RoundOracle(t *testing.T) {
	f := E8M0
	src := rand.New(rand.NewPCG(3, 4))
	var xs, want []float64
	var modes []Mode
	for c := uint64(0); c < 254; c++ {
		lo, hi := e8m0Value(c), e8m0Value(c+1)
		v, _ := lo.Float64()
		for _, frac := range []float64{0x1p-52, 0.25, 0.5 - 0x1p-52, 0.5, 0.5 + 0x1p-52, 0.75, 1 - 0x1p-52} {
			x := v * (1 + frac)
			ax := bigExact().SetFloat64(x)
			for _, m := range allDeterministicModes {
				w, _ := oracleChoose(ax, lo, hi, true, false, m).Float64()
				if got := f.Round(x, m); got != w {
					t.Errorf("Round(%v = 2^%d·(1+%v), %v) = %v, want %v", x, int(c)-127, frac, m, got, w)
				}
				xs, want, modes = append(xs, x), append(want, w), append(modes, m)
			}
			for _, m := range exhaustiveStochasticModes {
				if got := f.RoundRand(x, m, src); got != v && got != 2*v {
					t.Errorf("RoundRand(%v, %v) = %v, not a neighbour", x, m, got)
				}
			}
		}
	}
	for _, m := range allDeterministicModes {
		var in, out []float64
		for i := range xs {
			if modes[i] == m {
				in = append(in, xs[i])
			}
		}
		out = make([]float64, len(in))
		f.RoundSlice(out, in, m, nil)
		for i, x := range in {
			if out[i] != f.Round(x, m) {
				t.Fatalf("RoundSlice(%v, %v) = %v, Round %v", x, m, out[i], f.Round(x, m))
			}
		}
	}
}

// TestE8M0Specials: what has no value in E8M0, as ml_dtypes'
// float8_e8m0fnu converts it (non-saturating: NaN; saturating: the
// nearest end), and values beyond either end.
func TestE8M0Specials(t *testing.T) {
	nan, lo, hi := math.NaN(), 0x1p-127, 0x1p127
	negZero := math.Copysign(0, -1)
	cases := []struct {
		x        float64
		m        Mode
		want     float64 // without saturation
		wantSat  float64 // with
		whyNoted string
	}{
		{0, NearestEven, nan, lo, "no zero"},
		{negZero, NearestEven, nan, lo, "no zero"},
		{-1, NearestEven, nan, lo, "no sign"},
		{-1e-300, Down, nan, lo, "no sign"},
		{math.Inf(-1), NearestEven, nan, lo, "no sign"},
		{math.Inf(1), NearestEven, nan, hi, "no Inf"},
		{nan, NearestEven, nan, nan, "NaN"},
		// Below the smallest value: 2^-127 in every mode (no zero).
		{0x1p-128, NearestEven, lo, lo, "underflow"},
		{0x1p-128, TowardZero, lo, lo, "underflow"},
		{0x1p-128, Down, lo, lo, "underflow"},
		{5e-324, Up, lo, lo, "underflow"},
		// ml_dtypes rounds (2^-127, 1.5·2^-127) up to 2^-126 (it takes code
		// 0 for a subnormal binade); the nearest value is 2^-127.
		{1.25 * 0x1p-127, NearestEven, lo, lo, "nearest"},
		{1.5 * 0x1p-127, NearestEven, 0x1p-126, 0x1p-126, "tie goes up"},
		// Overflow: IEEE's rule, the directed modes toward zero clamp.
		{1.25 * 0x1p127, NearestEven, hi, hi, "below the midpoint"},
		{1.5 * 0x1p127, NearestEven, nan, hi, "the tie rounds up, past the top"},
		{1.5 * 0x1p127, TowardZero, hi, hi, "toward zero"},
		{1.5 * 0x1p127, Down, hi, hi, "toward zero"},
		{1.25 * 0x1p127, Up, nan, hi, "away from zero"},
		{math.MaxFloat64, AwayFromZero, nan, hi, "away from zero"},
	}
	for _, c := range cases {
		sat := E8M0.WithSaturation(true)
		if got := E8M0.Round(c.x, c.m); !bitSame(got, c.want) {
			t.Errorf("Round(%v, %v) = %v, want %v (%s)", c.x, c.m, got, c.want, c.whyNoted)
		}
		if got := sat.Round(c.x, c.m); !bitSame(got, c.wantSat) {
			t.Errorf("saturating Round(%v, %v) = %v, want %v (%s)", c.x, c.m, got, c.wantSat, c.whyNoted)
		}
	}
}
