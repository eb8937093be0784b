package format

// Fuzz tests: Round against the big.Float oracle of oracle_test.go, and the
// encoding of the formats of at most 16 bits.

import (
	"math"
	"math/rand/v2"
	"testing"
)

// FuzzRound compares Round with oracleRound for any float64, a format of
// oracleFormats (flags&1: subnormals off, flags&2: saturating) and a
// deterministic mode; and checks that the stochastic modes give one of the
// two neighbours (those of TowardZero and AwayFromZero).
func FuzzRound(f *testing.F) {
	formats := oracleFormats(f)
	for i, x := range []float64{
		0, math.Copysign(0, -1), 1, -1, 3, 464, -464, 470, 65504, 65520, -65520, 53248, 61440, 49152,
		0x1p-10, 0x1p-7, 0x1p-25, 0x1.8p-24, 5e-324, -5e-324, math.MaxFloat64, math.Inf(1), math.Inf(-1), math.NaN(),
		math.Nextafter(65520, 0), math.Nextafter(464, 1000), 0.1, 1.0 / 3, 1e300, 1e-300,
	} {
		for j := range 4 {
			f.Add(x, uint8(i*7+j*5), uint8(i+j), uint8(j))
		}
	}
	f.Add(3.0, uint8(21), uint8(0), uint8(0))    // P3109(8, 1): a tie between 2 and 4
	f.Add(5e-324, uint8(17), uint8(4), uint8(0)) // custom:p=3,emin=4: quantum above 1
	stochastic := exhaustiveStochasticModes
	f.Fuzz(func(t *testing.T, x float64, formatIndex, modeIndex, flags uint8) {
		fm := formats[int(formatIndex)%len(formats)]
		if flags&1 != 0 {
			fm = fm.WithSubnormals(false)
		}
		if flags&2 != 0 {
			fm = fm.WithSaturation(true)
		}
		m := allDeterministicModes[int(modeIndex)%len(allDeterministicModes)]
		if got, want := fm.Round(x, m), oracleRound(fm, x, m); !bitSame(got, want) {
			t.Fatalf("%v.Round(%v [%#x], %v) = %v, oracle %v", fm.Name(), x, math.Float64bits(x), m, got, want)
		}
		sm := stochastic[int(modeIndex)%len(stochastic)]
		lo, hi := oracleRound(fm, x, TowardZero), oracleRound(fm, x, AwayFromZero)
		src := rand.NewPCG(math.Float64bits(x), uint64(flags))
		for range 4 {
			if got := fm.RoundRand(x, sm, src); !bitSame(got, lo) && !bitSame(got, hi) {
				t.Fatalf("%v.RoundRand(%v [%#x], %v) = %v, want %v or %v", fm.Name(), x, math.Float64bits(x), sm, got, lo, hi)
			}
		}
	})
}

// FuzzEncodeDecode: for the formats of at most 16 bits, any code decodes to
// a value that encodes back to it (NaN codes to the canonical NaN), and any
// float64 rounded to the format encodes to a code that decodes to it.
func FuzzEncodeDecode(f *testing.F) {
	formats := exhaustiveFormats(f)
	for i, c := range []uint64{0, 1, 0x7E, 0x7F, 0x80, 0xFF, 0x3C00, 0x7BFF, 0x7C00, 0x8000, 0xFFFF, 0x3F80} {
		f.Add(c, uint8(i), float64(c)/7)
	}
	f.Add(uint64(0), uint8(0), math.NaN())
	f.Add(uint64(0), uint8(3), math.Inf(-1))
	f.Add(uint64(0), uint8(5), -1e-30)
	f.Fuzz(func(t *testing.T, code uint64, formatIndex uint8, x float64) {
		fm := formats[int(formatIndex)%len(formats)]
		c := code & (1<<fm.Bits() - 1)
		v, err := fm.Decode(c)
		if err != nil {
			t.Fatalf("%v.Decode(%#x): %v", fm, c, err)
		}
		if v != v {
			nc, err := fm.Encode(v)
			if err != nil {
				t.Fatalf("%v.Encode(NaN): %v", fm, err)
			}
			if w, err := fm.Decode(nc); err != nil || w == w {
				t.Fatalf("%v: canonical NaN %#x decodes to %v, %v", fm, nc, w, err)
			}
		} else {
			if got, err := fm.Encode(v); err != nil || got != c {
				t.Fatalf("%v: Encode(Decode(%#x) = %v) = %#x, %v", fm, c, v, got, err)
			}
			if r := fm.Round(v, NearestEven); !bitSame(r, v) {
				t.Fatalf("%v.Round(%v) = %v: a value of the format moved", fm, v, r)
			}
		}
		for _, m := range []Mode{NearestEven, TowardZero, Up, ToOdd} {
			r := fm.Round(x, m)
			if r != r && fm.Specials() == NoSpecials {
				continue // NaN in, NaN out, and no code for it
			}
			rc, err := fm.Encode(r)
			if err != nil {
				t.Fatalf("%v: Encode(Round(%v, %v) = %v): %v", fm, x, m, r, err)
			}
			back, err := fm.Decode(rc)
			if err != nil || !bitSame(back, r) {
				t.Fatalf("%v: Decode(Encode(%v) = %#x) = %v, %v", fm, r, rc, back, err)
			}
		}
	})
}
