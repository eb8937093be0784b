package format

import (
	"math"
	"math/rand/v2"
	"testing"
)

// subnormalInputs is every float32 whose top 16 bits are any pattern (all
// bf16 values: every sign, exponent and leading fraction) and whose low
// 16 bits are 0, 1, 0x7fff, 0x8000, 0x8001 or 0xffff, so that each format
// with p ≤ 8 meets its exact ties and their float32 neighbours at every
// exponent, Inf and NaN included.
func subnormalInputs() []float64 {
	lows := []uint32{0, 1, 0x7fff, 0x8000, 0x8001, 0xffff}
	xs := make([]float64, 0, 1<<16*len(lows))
	for hi := range uint32(1 << 16) {
		for _, lo := range lows {
			xs = append(xs, float64(math.Float32frombits(hi<<16|lo)))
		}
	}
	return xs
}

// TestSubnormalPathExhaustive holds the fixed-point path below 2^Emin
// (roundSub, the kernels' SUB4 and NearestEven shortcut, the Go loop's
// subParams.round) to the general path roundSlow on every input of
// subnormalInputs, in every deterministic mode, for the small formats with
// and without subnormals; and, for inputs below 2^Emin, to the math/big
// oracle. roundSlow is itself held to the oracle by TestRoundOracle.
func TestSubnormalPathExhaustive(t *testing.T) {
	t.Parallel()
	xs := subnormalInputs()
	xs32 := make([]float32, len(xs))
	for i, x := range xs {
		xs32[i] = float32(x)
	}
	var fs []Format
	for _, f := range []Format{E2M1, E2M3, E3M2, E4M3, E5M2, Binary16, BFloat16, P3109K8P3, P3109K8P4Finite, mustP3109(8, 1, true)} {
		fs = append(fs, f, f.WithSubnormals(false))
	}
	// Custom formats the kernel's float path takes (emin ≥ -7, with -0):
	// p = 1 (ties go up: the only significand is odd), wide IEEE, saturating.
	for _, name := range []string{"custom:p=1,emin=-3,emax=3,specials=none", "custom:p=9,emin=-5,emax=12",
		"custom:p=2,emin=0,emax=3,specials=nan+sat", "custom:p=3,emin=4,emax=8"} {
		f, err := Parse(name)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f, f.WithSubnormals(false))
	}
	for _, f := range fs {
		t.Run(f.Name(), func(t *testing.T) {
			t.Parallel()
			subnormalPath(t, f, xs, xs32)
		})
	}
}

// subnormalPath is TestSubnormalPathExhaustive for one format.
func subnormalPath(t *testing.T, f Format, xs []float64, xs32 []float32) {
	dst, want := make([]float64, len(xs)), make([]float64, len(xs))
	dst32 := make([]float32, len(xs))
	sub := 0
	for _, m := range Modes() {
		if m.IsStochastic() {
			continue
		}
		for i, x := range xs {
			want[i] = f.roundSlow(x, m, 0)
			if got := f.Round(x, m); !identical(got, want[i]) {
				t.Fatalf("%s %v: Round(%v) = %v, roundSlow %v", f.Name(), m, x, got, want[i])
			}
			if math.Abs(x) < f.MinNormal() {
				sub++
				if i%7 == 0 { // the oracle is slow: a seventh of them
					if o := oracleRound(f, x, m); !bitSame(want[i], o) {
						t.Fatalf("%s %v: roundSlow(%v) = %v, oracle %v", f.Name(), m, x, want[i], o)
					}
				}
			}
		}
		for _, k := range testKernels() {
			roundSliceWith(k, &f, dst, xs, m, nil)
			roundSliceWith(k, &f, dst32, xs32, m, nil)
			for i := range xs {
				if !identical(dst[i], want[i]) {
					t.Fatalf("%s %v %s: RoundSlice(%v) = %v, roundSlow %v", f.Name(), m, k, xs[i], dst[i], want[i])
				}
				if w := float32(want[i]); !identical(float64(dst32[i]), float64(w)) {
					t.Fatalf("%s %v %s: RoundSlice32(%v) = %v, roundSlow %v", f.Name(), m, k, xs[i], dst32[i], w)
				}
			}
		}
	}
	if sub == 0 {
		t.Fatalf("%s: no input below 2^Emin", f.Name())
	}
}

// TestRoundSliceInPlace: the kernels used to overwrite x before the general
// path read it back, so in place a value rounded twice (fp16: just
// above half the smallest subnormal went to 0; a NaN with every payload bit
// set came out as -0).
func TestRoundSliceInPlace(t *testing.T) {
	xs := []float64{
		math.Ldexp(1, -25) * (1 + 0x1p-40), // above the tie at half 2^-24: up to 2^-24
		math.Float64frombits(0x7fffffffffffffff),
		65519.99, 65520, -1e-300, math.Inf(-1), 1e300,
	}
	for _, m := range Modes() {
		if m.IsStochastic() {
			continue
		}
		for _, f := range []Format{Binary16, E4M3, E2M1, P3109K8P3} {
			for _, k := range []bool{false, useAVX2} {
				func() {
					defer func(u bool) { useAVX2 = u }(useAVX2)
					useAVX2 = k
					got := append([]float64(nil), xs...)
					f.RoundSlice(got, got, m, nil)
					got32 := make([]float32, len(xs))
					for i, x := range xs {
						got32[i] = float32(x)
					}
					f.RoundSlice32(got32, got32, m, nil)
					for i, x := range xs {
						if want := f.roundSlow(x, m, 0); !identical(got[i], want) {
							t.Errorf("%s %v avx2=%v: in place, %v gave %v, want %v", f.Name(), m, k, x, got[i], want)
						}
						if want := float32(f.roundSlow(float64(float32(x)), m, 0)); !identical(float64(got32[i]), float64(want)) {
							t.Errorf("%s %v avx2=%v: float32 in place, %v gave %v, want %v", f.Name(), m, k, float32(x), got32[i], want)
						}
					}
				}()
			}
		}
	}
	// Stochastic, in place: the same values as out of place with the same seed.
	src := append([]float64(nil), xs...)
	out := make([]float64, len(xs))
	E2M1.RoundSlice(out, src, Stochastic, rand.New(rand.NewPCG(1, 2)))
	E2M1.RoundSlice(src, src, Stochastic, rand.New(rand.NewPCG(1, 2)))
	for i := range xs {
		if !identical(src[i], out[i]) {
			t.Errorf("e2m1 sr: in place, %v gave %v, out of place %v", xs[i], src[i], out[i])
		}
	}
}

// TestKernelRestoresMXCSR: the AVX2 kernel sets the MXCSR rounding control
// for TowardZero, Up and Down; afterwards float64 arithmetic must round to
// nearest again (1 + 1.5·2^-53 is 1 + 2^-52 there, 1 toward zero or down).
func TestKernelRestoresMXCSR(t *testing.T) {
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = float64(i) / 64
	}
	one, tiny := 1.0, 0x1.8p-53
	for _, m := range []Mode{TowardZero, Up, Down} {
		E2M1.RoundSlice(xs, xs, m, nil)
		if got := one + tiny; got != 1+0x1p-52 {
			t.Fatalf("after RoundSlice in %v: 1 + 1.5·2^-53 = %v, want 1 + 2^-52 (MXCSR not restored)", m, got)
		}
		if got := -one - tiny; got != -1-0x1p-52 {
			t.Fatalf("after RoundSlice in %v: -1 - 1.5·2^-53 = %v", m, got)
		}
	}
}
