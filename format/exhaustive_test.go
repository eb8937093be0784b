package format

// Exhaustive tests of the formats of at most 16 bits: every code, every pair
// of neighbouring values, every mode; and the parameters of the built-in
// formats against the published tables.

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// exhaustiveFormats are the formats with an encoding of at most 16 bits that the
// exhaustive tests enumerate.
func exhaustiveFormats(t testing.TB) []Format {
	var fs []Format
	for _, f := range signedFormats() {
		if b := f.Bits(); b > 0 && b <= 16 {
			fs = append(fs, f)
		}
	}
	for _, kp := range []struct {
		k, p int
		ext  bool
	}{{8, 1, true}, {8, 1, false}, {8, 2, false}, {8, 6, true}, {8, 7, false}, {16, 8, true}, {16, 11, false}, {6, 3, true}, {4, 2, false}, {3, 1, true}} {
		f, err := P3109(kp.k, kp.p, kp.ext)
		if err != nil {
			t.Fatalf("P3109(%d, %d, %v): %v", kp.k, kp.p, kp.ext, err)
		}
		fs = append(fs, f)
	}
	for _, name := range []string{
		"custom:p=3,emin=-2,emax=3",                       // IEEE, 6 bits
		"custom:p=2,emin=-6,emax=8,specials=nan",          // E4M1-like, 6 bits
		"custom:p=4,emin=-2,emax=4,specials=none",         // 7 bits
		"custom:p=1,emin=-3,emax=3,specials=none",         // 4 bits, no subnormals
		"custom:p=3,emin=4,emax=10,specials=none",         // positive emin, 6 bits
		"custom:p=6,emin=-14,emax=15",                     // IEEE, 11 bits
		"custom:p=9,emin=-2,emax=3,specials=p3109-finite", // fields 7: no encoding, skipped below
	} {
		f, err := Parse(name)
		if err != nil {
			t.Fatalf("Parse(%q): %v", name, err)
		}
		if f.Bits() == 0 {
			continue
		}
		if f.Bits() > 16 {
			t.Fatalf("%v has %d bits", f, f.Bits())
		}
		fs = append(fs, f)
	}
	return fs
}

var exhaustiveStochasticModes = func() []Mode {
	ms := []Mode{Stochastic, StochasticHalf}
	for _, n := range []int{1, 2, 4, 16, 53, 64} {
		m, err := StochasticBits(n)
		if err != nil {
			panic(err)
		}
		ms = append(ms, m)
	}
	return ms
}()

// exhaustiveSpecialCounts are the numbers of NaN and infinite codes each specials
// policy gives a format with p-1 fraction bits.
func exhaustiveSpecialCounts(s Specials, p int) (nans, infs int) {
	switch s {
	case IEEE:
		return 2 * (1<<(p-1) - 1), 2
	case NaNOnly:
		return 2, 0
	case NoSpecials:
		return 0, 0
	case P3109Extended:
		return 1, 2
	}
	return 1, 0 // P3109Finite
}

// TestEncodeDecodeExhaustive: every code decodes; non-NaN codes encode back
// to themselves; positive codes increase with their values; every value
// rounds to itself in every mode.
func TestEncodeDecodeExhaustive(t *testing.T) {
	src := rand.New(rand.NewPCG(7, 8))
	for _, f := range exhaustiveFormats(t) {
		n := uint64(1) << f.Bits()
		if _, err := f.Decode(n); err == nil {
			t.Errorf("%v.Decode(%#x): no error for a code wider than %d bits", f, n, f.Bits())
		}
		nans, infs := 0, 0
		prev := math.Inf(-1)
		for c := range n {
			v, err := f.Decode(c)
			if err != nil {
				t.Fatalf("%v.Decode(%#x): %v", f, c, err)
			}
			if v != v {
				nans++
				if !f.IsRepresentable(v) {
					t.Errorf("%v: NaN not representable", f)
				}
				if got, err := f.Encode(v); err != nil || !exhaustiveIsNaNCode(f, got) {
					t.Errorf("%v.Encode(NaN) = %#x, %v: not a NaN code", f, got, err)
				}
				continue
			}
			if math.IsInf(v, 0) {
				infs++
			}
			if c < n/2 { // positive codes: values strictly increase
				if !(v > prev) && !(c == 0 && v == 0) {
					t.Errorf("%v: code %#x = %v not above the previous %v", f, c, v, prev)
				}
				prev = v
				if math.Signbit(v) {
					t.Errorf("%v: positive code %#x decodes to %v", f, c, v)
				}
			} else if !math.Signbit(v) {
				t.Errorf("%v: negative code %#x decodes to %v", f, c, v)
			}
			got, err := f.Encode(v)
			if err != nil || got != c {
				t.Errorf("%v: Encode(Decode(%#x) = %v) = %#x, %v", f, c, v, got, err)
			}
			if !f.IsRepresentable(v) {
				t.Errorf("%v.IsRepresentable(%v) = false (code %#x)", f, v, c)
			}
			if math.IsInf(v, 0) {
				continue
			}
			for _, m := range allDeterministicModes {
				if r := f.Round(v, m); !bitSame(r, v) {
					t.Errorf("%v.Round(%v, %v) = %v, want itself (code %#x)", f, v, m, r, c)
				}
			}
			for _, m := range exhaustiveStochasticModes {
				if r := f.RoundRand(v, m, src); !bitSame(r, v) {
					t.Errorf("%v.RoundRand(%v, %v) = %v, want itself (code %#x)", f, v, m, r, c)
				}
			}
		}
		wantNaNs, wantInfs := exhaustiveSpecialCounts(f.Specials(), f.Precision())
		if nans != wantNaNs || infs != wantInfs {
			t.Errorf("%v: %d NaN codes and %d infinite ones, want %d and %d", f, nans, infs, wantNaNs, wantInfs)
		}
		if prev != f.MaxFinite() && !math.IsInf(prev, 1) {
			t.Errorf("%v: largest positive code is %v, MaxFinite %v", f, prev, f.MaxFinite())
		}
	}
}

func exhaustiveIsNaNCode(f Format, c uint64) bool {
	v, err := f.Decode(c)
	return err == nil && v != v
}

// exhaustiveGrid lists the nonnegative finite values of f by decoding its
// positive codes; without subnormals it drops those below 2^emin.
func exhaustiveGrid(t testing.TB, f Format) []float64 {
	var g []float64
	for c := range uint64(1) << (f.Bits() - 1) {
		v, err := f.Decode(c)
		if err != nil {
			t.Fatal(err)
		}
		if v != v || math.IsInf(v, 0) {
			continue
		}
		if !f.Subnormals() && v != 0 && v < math.Ldexp(1, f.Emin()) {
			continue
		}
		g = append(g, v)
	}
	if !slices.IsSorted(g) {
		t.Fatalf("%v: positive codes not sorted by value", f)
	}
	return g
}

// exhaustiveExpectUp says whether a deterministic mode takes the upper neighbour b of
// a value strictly between magnitudes a < b. cmp compares |x| with the
// midpoint; aOdd is the parity of a/(b-a), the integer significand of a at
// the quantum b-a (b's is the other parity).
func exhaustiveExpectUp(m Mode, cmp int, aOdd, neg bool) bool {
	nearest := func(tie bool) bool { return cmp > 0 || cmp == 0 && tie }
	switch m {
	case NearestEven:
		return nearest(aOdd) // b is the even one when a is odd
	case NearestAway:
		return nearest(true)
	case NearestTowardZero:
		return nearest(false)
	case TowardZero:
		return false
	case Up:
		return !neg
	case Down:
		return neg
	case AwayFromZero:
		return true
	case ToOdd:
		return !aOdd
	}
	panic(m)
}

// exhaustiveFinal is what a rounding to the magnitude v gives for x's sign: the
// overflow result above MaxFinite, zero with the format's sign rules.
func exhaustiveFinal(f Format, v float64, neg bool, m Mode) float64 {
	switch {
	case v > f.MaxFinite():
		return oracleOverflow(f, neg, m)
	case v == 0:
		return signedMag(0, neg && oracleSpecialsOf(f.Specials()).negZero)
	}
	return signedMag(v, neg)
}

// TestNeighboursExhaustive: between every two neighbouring values a < b
// (0 and the smallest subnormal, ..., MaxFinite and the grid point above it),
// the midpoint, the float64s next to it and the quarter points round as each
// mode prescribes; stochastic modes give a or b.
func TestNeighboursExhaustive(t *testing.T) {
	t.Parallel()
	for i, base := range exhaustiveFormats(t) {
		t.Run(base.Name(), func(t *testing.T) {
			t.Parallel()
			src := rand.New(rand.NewPCG(9, uint64(i)))
			// Every input, and its expected result per mode, for RoundSlice:
			// reused from variant to variant (fresh slices made the GC run
			// a thousand times).
			buf := &neighbourInputs{want: make([][]float64, numFixedModes)}
			for _, f := range []Format{base, base.WithSubnormals(false), base.WithSaturation(true)} {
				neighboursOf(t, f, src, buf)
			}
		})
	}
}

// neighbourInputs are the inputs of RoundSlice and the results per mode.
type neighbourInputs struct {
	xs   []float64
	want [][]float64
}

// neighboursOf is TestNeighboursExhaustive for one format.
func neighboursOf(t *testing.T, f Format, src *rand.Rand, buf *neighbourInputs) {
	g := exhaustiveGrid(t, f)
	maxF := g[len(g)-1]
	if maxF != f.MaxFinite() || g[0] != 0 || (f.MinSubnormal() > 0 && g[1] != f.MinSubnormal()) ||
		(f.MinSubnormal() == 0 && g[1] != f.MinNormal()) || !slices.Contains(g, f.MinNormal()) {
		t.Errorf("%v: grid from the codes starts %v, %v and ends %v; MinSubnormal %v, MinNormal %v, MaxFinite %v",
			f.Name(), g[0], g[1], maxF, f.MinSubnormal(), f.MinNormal(), f.MaxFinite())
	}
	_, e := math.Frexp(maxF)
	ulp := math.Ldexp(1, e-1-f.Precision()+1) // spacing in MaxFinite's binade
	g = append(g, maxF+ulp)
	fails := 0
	fail := func(format string, args ...any) {
		if fails++; fails <= 4 {
			t.Errorf(format, args...)
		}
	}
	buf.xs = buf.xs[:0]
	for m := range buf.want {
		buf.want[m] = buf.want[m][:0]
	}
	for i := 0; i+1 < len(g); i++ {
		neighbourPair(f, g[i], g[i+1], src, buf, fail)
	}
	for _, m := range allDeterministicModes {
		fails += checkRoundSlice(t, f, m, buf.xs, buf.want[m])
	}
	if fails > 4 {
		t.Errorf("%v: %d failures in all", f.Name(), fails)
	}
}

// neighbourPair checks the inputs between neighbours a < b of f, and
// appends them and their results per mode to buf.
func neighbourPair(f Format, a, b float64, src *rand.Rand, buf *neighbourInputs, fail func(string, ...any)) {
	sb1, _ := StochasticBits(1)
	q := b - a
	if k := a / q; k != math.Trunc(k) || math.Exp2(math.Round(math.Log2(q))) != q {
		fail("%v: neighbours %v, %v are not k·q, (k+1)·q with q a power of two", f, a, b)
		return
	}
	aOdd := math.Mod(a/q, 2) == 1
	mid := a + q/2
	inputs := []struct {
		x   float64
		cmp int
	}{
		{mid, 0},
		{math.Nextafter(mid, 0), -1},
		{math.Nextafter(mid, math.Inf(1)), 1},
		{a + q/4, -1},
		{a + 3*q/4, 1},
		{math.Nextafter(a, math.Inf(1)), -1},
		{math.Nextafter(b, 0), 1},
	}
	for _, in := range inputs {
		for _, neg := range []bool{false, true} {
			x := signedMag(in.x, neg)
			lo, hi := exhaustiveFinal(f, a, neg, NearestEven), 0.0
			for _, m := range allDeterministicModes {
				want := exhaustiveFinal(f, a, neg, m)
				if exhaustiveExpectUp(m, in.cmp, aOdd, neg) {
					want = exhaustiveFinal(f, b, neg, m)
				}
				if got := f.Round(x, m); !bitSame(got, want) {
					fail("%v.Round(%v, %v) = %v, want %v (neighbours %v, %v)", f.Name(), x, m, got, want, a, b)
				}
				buf.want[m] = append(buf.want[m], want)
			}
			buf.xs = append(buf.xs, x)
			for _, m := range exhaustiveStochasticModes {
				hi = exhaustiveFinal(f, b, neg, m)
				got := f.RoundRand(x, m, src)
				if !bitSame(got, lo) && !bitSame(got, hi) {
					fail("%v.RoundRand(%v, %v) = %v, want %v or %v", f.Name(), x, m, got, lo, hi)
				}
			}
			// One random bit: η = 1/4 < 2^-1 never rounds up.
			if in.x == a+q/4 {
				if got := f.RoundRand(x, sb1, src); !bitSame(got, lo) {
					fail("%v.RoundRand(%v, %v) = %v, want %v (η = 1/4)", f.Name(), x, sb1, got, lo)
				}
			}
		}
	}
}

// TestOverflowThreshold: in round to nearest even, the smallest value that
// overflows is MaxFinite + ulp/2 when MaxFinite's integer significand is odd,
// and anything above it when it is even.
func TestOverflowThreshold(t *testing.T) {
	fs := append(signedFormats(), exhaustiveFormats(t)...)
	for _, base := range fs {
		for _, f := range []Format{base, base.WithSaturation(true)} {
			maxF := f.MaxFinite()
			_, e := math.Frexp(maxF)
			ulp := math.Ldexp(1, e-1-f.Precision()+1)
			odd := math.Mod(maxF/ulp, 2) == 1
			thr := maxF + ulp/2
			if f.Precision() == 53 {
				// maxF + ulp/2 is not a float64; only MaxFloat64's neighbourhood can be checked.
				thr = math.Inf(1)
			}
			for _, neg := range []bool{false, true} {
				var ovf float64
				switch {
				case f.Saturates():
					ovf = signedMag(maxF, neg)
				case f.Specials() == IEEE || f.Specials() == P3109Extended:
					ovf = signedMag(math.Inf(1), neg)
				default:
					ovf = math.NaN()
				}
				s := signedMag(1, neg)
				below, at, above := s*math.Nextafter(thr, 0), s*thr, s*math.Nextafter(thr, math.Inf(1))
				check := func(x, want float64) {
					if got := f.Round(x, NearestEven); !bitSame(got, want) {
						t.Errorf("%v.Round(%v, rne) = %v, want %v (MaxFinite %v, odd %v)", f.Name(), x, got, want, maxF, odd)
					}
				}
				if math.IsInf(thr, 1) {
					check(s*maxF, s*maxF)
					continue
				}
				check(below, s*maxF)
				if odd {
					check(at, ovf)
				} else {
					check(at, s*maxF)
					check(above, ovf)
				}
			}
		}
	}
}

// TestBuiltinParameters compares the predefined formats with IEEE 754, the
// OCP 8-bit/MX specifications and the P3109 table (formats-reference.md).
func TestBuiltinParameters(t *testing.T) {
	cases := []struct {
		f                    Format
		name                 string
		bits, p, emin, emax  int
		max, minNorm, minSub float64
		specials             Specials
	}{
		{Binary64, "fp64", 64, 53, -1022, 1023, math.MaxFloat64, 0x1p-1022, 0x1p-1074, IEEE},
		{Binary32, "fp32", 32, 24, -126, 127, math.MaxFloat32, 0x1p-126, 0x1p-149, IEEE},
		{TF32, "tf32", 19, 11, -126, 127, (2 - 0x1p-10) * 0x1p127, 0x1p-126, 0x1p-136, IEEE},
		{Binary16, "fp16", 16, 11, -14, 15, 65504, 0x1p-14, 0x1p-24, IEEE},
		{BFloat16, "bf16", 16, 8, -126, 127, (2 - 0x1p-7) * 0x1p127, 0x1p-126, 0x1p-133, IEEE},
		{E5M2, "e5m2", 8, 3, -14, 15, 57344, 0x1p-14, 0x1p-16, IEEE},
		{E4M3, "e4m3", 8, 4, -6, 8, 448, 0x1p-6, 0x1p-9, NaNOnly},
		{E3M2, "e3m2", 6, 3, -2, 4, 28, 0.25, 0.0625, NoSpecials},
		{E2M3, "e2m3", 6, 4, 0, 2, 7.5, 1, 0.125, NoSpecials},
		{E2M1, "e2m1", 4, 2, 0, 2, 6, 1, 0.5, NoSpecials},
		{P3109K8P3, "p3109-k8p3", 8, 3, -15, 15, 49152, 0x1p-15, 0x1p-17, P3109Extended},
		{P3109K8P4, "p3109-k8p4", 8, 4, -7, 7, 224, 0x1p-7, 0x1p-10, P3109Extended},
		{P3109K8P5, "p3109-k8p5", 8, 5, -3, 3, 15, 0x1p-3, 0x1p-7, P3109Extended},
		{P3109K8P3Finite, "p3109-k8p3-finite", 8, 3, -15, 15, 57344, 0x1p-15, 0x1p-17, P3109Finite},
		{P3109K8P4Finite, "p3109-k8p4-finite", 8, 4, -7, 7, 240, 0x1p-7, 0x1p-10, P3109Finite},
		{P3109K8P5Finite, "p3109-k8p5-finite", 8, 5, -3, 3, 15.5, 0x1p-3, 0x1p-7, P3109Finite},
	}
	if len(cases) != len(signedFormats()) {
		t.Errorf("%d built-in signed formats, %d in the table", len(signedFormats()), len(cases))
	}
	for _, c := range cases {
		f := c.f
		if f.Name() != c.name || f.Bits() != c.bits || f.Precision() != c.p || f.Emin() != c.emin || f.Emax() != c.emax ||
			f.MaxFinite() != c.max || f.MinNormal() != c.minNorm || f.MinSubnormal() != c.minSub || f.Specials() != c.specials || !f.Subnormals() {
			t.Errorf("%s: got name %s bits %d p %d emin %d emax %d max %v minNormal %v minSub %v specials %v subnormals %v, want %+v",
				c.name, f.Name(), f.Bits(), f.Precision(), f.Emin(), f.Emax(), f.MaxFinite(), f.MinNormal(), f.MinSubnormal(), f.Specials(), f.Subnormals(), c)
		}
		if g, err := Parse(c.name); err != nil || g != f {
			t.Errorf("Parse(%q) = %v, %v; want the built-in", c.name, g, err)
		}
		if f.MinSubnormal() != math.Ldexp(1, f.Emin()-f.Precision()+1) {
			t.Errorf("%s: MinSubnormal %v is not 2^(emin-p+1)", c.name, f.MinSubnormal())
		}
		if ftz := f.WithSubnormals(false); ftz.MinSubnormal() != 0 || ftz.Subnormals() {
			t.Errorf("%s+ftz: MinSubnormal %v, Subnormals %v", c.name, ftz.MinSubnormal(), ftz.Subnormals())
		}
		if f.Saturates() != (c.specials == NoSpecials) || !f.WithSaturation(true).Saturates() {
			t.Errorf("%s: Saturates %v, with saturation %v", c.name, f.Saturates(), f.WithSaturation(true).Saturates())
		}
	}
	if v := math.Float32frombits(0x7f7fffff); float64(v) != Binary32.MaxFinite() {
		t.Errorf("fp32 MaxFinite %v, float32 max %v", Binary32.MaxFinite(), v)
	}
}

// TestHandCodes checks hand-derived code ↔ value pairs.
func TestHandCodes(t *testing.T) {
	nan := math.NaN()
	inf := math.Inf(1)
	cases := []struct {
		f    Format
		code uint64
		v    float64
	}{
		{E4M3, 0x7E, 448}, {E4M3, 0x7F, nan}, {E4M3, 0xFF, nan}, {E4M3, 0x01, 0x1p-9}, {E4M3, 0x08, 0x1p-6},
		{E4M3, 0x80, math.Copysign(0, -1)}, {E4M3, 0xFE, -448}, {E4M3, 0x38, 1}, {E4M3, 0x7D, 416},
		{E5M2, 0x7C, inf}, {E5M2, 0xFC, -inf}, {E5M2, 0x7B, 57344}, {E5M2, 0x7D, nan}, {E5M2, 0x7F, nan}, {E5M2, 0x01, 0x1p-16}, {E5M2, 0x3C, 1},
		{P3109K8P3, 0x80, nan}, {P3109K8P3, 0x7F, inf}, {P3109K8P3, 0xFF, -inf}, {P3109K8P3, 0x01, 0x1p-17}, {P3109K8P3, 0x7E, 49152},
		{P3109K8P3, 0x00, 0}, {P3109K8P3, 0x40, 1}, {P3109K8P3, 0xC0, -1}, {P3109K8P3, 0x81, -0x1p-17}, {P3109K8P3, 0x04, 0x1p-15},
		{P3109K8P3Finite, 0x7F, 57344}, {P3109K8P3Finite, 0xFF, -57344}, {P3109K8P3Finite, 0x80, nan},
		{P3109K8P4, 0x40, 1}, {P3109K8P4, 0x7E, 224}, {P3109K8P4Finite, 0x7F, 240},
		{P3109K8P5, 0x40, 1}, {P3109K8P5, 0x7E, 15}, {P3109K8P5Finite, 0x7F, 15.5},
		{BFloat16, 0x3F80, 1}, {BFloat16, 0x7F80, inf}, {BFloat16, 0x7F7F, (2 - 0x1p-7) * 0x1p127}, {BFloat16, 0x0001, 0x1p-133}, {BFloat16, 0xC000, -2},
		{Binary16, 0x3C00, 1}, {Binary16, 0x0001, 0x1p-24}, {Binary16, 0x7BFF, 65504}, {Binary16, 0x7C00, inf}, {Binary16, 0x7E00, nan},
		{Binary16, 0x0400, 0x1p-14}, {Binary16, 0x8000, math.Copysign(0, -1)}, {Binary16, 0x3555, 0.333251953125},
		{E3M2, 0x1F, 28}, {E3M2, 0x3F, -28}, {E3M2, 0x01, 0.0625}, {E3M2, 0x0C, 1},
		{E2M3, 0x1F, 7.5}, {E2M3, 0x01, 0.125}, {E2M3, 0x08, 1}, {E2M3, 0x20, math.Copysign(0, -1)},
		{E2M1, 0x7, 6}, {E2M1, 0xF, -6}, {E2M1, 0x1, 0.5}, {E2M1, 0x2, 1}, {E2M1, 0x3, 1.5}, {E2M1, 0x5, 3},
	}
	for _, c := range cases {
		v, err := c.f.Decode(c.code)
		if err != nil || !bitSame(v, c.v) {
			t.Errorf("%v.Decode(%#x) = %v, %v; want %v", c.f, c.code, v, err, c.v)
		}
		if c.v != c.v {
			continue
		}
		if code, err := c.f.Encode(c.v); err != nil || code != c.code {
			t.Errorf("%v.Encode(%v) = %#x, %v; want %#x", c.f, c.v, code, err, c.code)
		}
	}
	// Canonical NaNs and the -0 of P3109 (encoded as +0).
	for _, c := range []struct {
		f    Format
		x    float64
		code uint64
	}{
		{E4M3, nan, 0x7F}, {P3109K8P3, nan, 0x80}, {P3109K8P3Finite, nan, 0x80}, {Binary16, nan, 0x7E00},
		{P3109K8P3, math.Copysign(0, -1), 0x00}, {E5M2, math.Copysign(0, -1), 0x80},
	} {
		if code, err := c.f.Encode(c.x); err != nil || code != c.code {
			t.Errorf("%v.Encode(%v) = %#x, %v; want %#x", c.f, c.x, code, err, c.code)
		}
	}
	// Values a format cannot hold are refused.
	for _, c := range []struct {
		f Format
		x float64
	}{{E4M3, 480}, {E4M3, 9.5}, {E4M3, inf}, {E2M1, nan}, {P3109K8P3Finite, inf}, {Binary16, 0x1p-25}, {E5M2.WithSubnormals(false), 0x1p-16}} {
		if code, err := c.f.Encode(c.x); err == nil {
			t.Errorf("%v.Encode(%v) = %#x, want an error", c.f.Name(), c.x, code)
		}
	}
}

// TestEncodeSliceExhaustive decodes every code of the formats of at most 16
// bits and checks that EncodeSlice gives the code Encode gives, and that it
// refuses values off the grid, beyond the range and specials the format
// lacks.
func TestEncodeSliceExhaustive(t *testing.T) {
	for _, f := range exhaustiveFormats(t) {
		if f.Bits() == 0 || f.Bits() > 16 {
			continue
		}
		n := 1 << f.Bits()
		vals := make([]float64, n)
		want := make([]uint64, n)
		for c := range n {
			v, err := f.Decode(uint64(c))
			if err != nil {
				t.Fatal(err)
			}
			vals[c] = v
			if want[c], err = f.Encode(v); err != nil {
				t.Fatalf("%s: Encode(%v): %v", f.Name(), v, err)
			}
		}
		got := make([]uint64, n)
		if _, err := f.EncodeSlice(got, vals); err != nil {
			t.Fatalf("%s: %v", f.Name(), err)
		}
		for c := range n {
			if got[c] != want[c] {
				t.Fatalf("%s: code %#x decodes to %v; EncodeSlice gives %#x, Encode %#x", f.Name(), c, vals[c], got[c], want[c])
			}
		}
		bad := []float64{f.MaxFinite() * 2, math.Nextafter(1, 2), math.Nextafter(f.MinNormal(), 0)}
		if f.MinSubnormal() > 0 {
			bad = append(bad, f.MinSubnormal()*1.5, f.MinSubnormal()/2)
		}
		if !f.Specials().HasNaN() {
			bad = append(bad, math.NaN())
		}
		if !f.Specials().HasInf() {
			bad = append(bad, math.Inf(-1))
		}
		for _, x := range bad {
			if _, err := f.Encode(x); err == nil {
				continue // a value after all (e.g. 1+2^-52 in a wide format)
			}
			var c [1]uint64
			if i, err := f.EncodeSlice(c[:], []float64{x}); err == nil || i != 0 {
				t.Errorf("%s: EncodeSlice(%v) = %#x, want an error", f.Name(), x, c[0])
			}
		}
	}
}
