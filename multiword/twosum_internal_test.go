package multiword

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/format"
)

// exactSum is Σ x in math/big, exact for float64 terms within 2^±500.
func exactSum(xs ...float64) *big.Float {
	s := new(big.Float).SetPrec(2000)
	for _, x := range xs {
		s.Add(s, new(big.Float).SetFloat64(x))
	}
	return s
}

// TwoSum is error-free at every step (s + e = hi + b exactly, both fp32
// values), and the pair's value fl(hi + lo) meets Sum2's bound
// |ŝ − s| ≤ u|s| + γ_N(u)²·Σ|x_i| against the exact sum: random fp32
// terms of both signs over 60 binades, and sums with heavy cancellation.
func TestTwoSumPair(t *testing.T) {
	f32 := format.Binary32
	u := bound.U(f32, format.NearestEven)
	rng := rand.New(rand.NewPCG(31, 32))
	draw := func() float64 {
		x := math.Ldexp(1-rng.Float64(), rng.IntN(60)-30)
		if rng.IntN(2) == 0 {
			x = -x
		}
		return f32.Round(x, format.NearestEven)
	}
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(3000)
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = draw()
		}
		if trial%2 == 1 {
			// Cancellation: every term followed by its near-negation, so
			// the sum is tiny against Σ|x_i| and the γ² term matters.
			for i := 1; i < n; i += 2 {
				xs[i] = -f32.Round(xs[i-1]*(1+math.Ldexp(rng.Float64(), -20)), format.NearestEven)
			}
		}
		var hi, lo, abs float64
		for _, x := range xs {
			s, l := twoSumAdd(&f32, hi, lo, x)
			// TwoSum's error term, by the same steps: it must make s exact.
			r := func(v float64) float64 { return f32.Round(v, format.NearestEven) }
			bb := r(s - hi)
			e := r(r(hi-r(s-bb)) + r(x-bb))
			if exactSum(s, e).Cmp(exactSum(hi, x)) != 0 {
				t.Fatalf("TwoSum(%g, %g) = %g + %g, not exact", hi, x, s, e)
			}
			if l != f32.Round(lo+e, format.NearestEven) {
				t.Fatalf("lo = %g, want fl(%g + %g)", l, lo, e)
			}
			for _, v := range []float64{s, e, l} {
				if !f32.IsRepresentable(v) {
					t.Fatalf("%g is not an fp32 value", v)
				}
			}
			hi, lo = s, l
			abs += math.Abs(x)
		}
		got := f32.Round(hi+lo, format.NearestEven)
		exact := exactSum(xs...)
		s, _ := exact.Float64()
		diff, _ := new(big.Float).Sub(exactSum(got), exact).Float64()
		g := bound.Gamma(float64(n), u)
		if lim := u*math.Abs(s) + g*g*abs; math.Abs(diff) > lim {
			t.Errorf("trial %d, %d terms: |fl(hi+lo) − Σx| = %g > u|s| + γ_n²Σ|x| = %g", trial, n, math.Abs(diff), lim)
		}
		// Without cancellation the pair is the correctly rounded sum or a
		// neighbour of it.
		if trial%2 == 0 && math.Abs(got-f32.Round(s, format.NearestEven)) > math.Ldexp(u, 1)*math.Abs(s) {
			t.Errorf("trial %d: pair %g, correctly rounded sum %g", trial, got, f32.Round(s, format.NearestEven))
		}
	}
	// What fp32 alone loses, the pair keeps: 1 + 2^12 terms of 2^-30
	// (each below half an ulp of 1) sum to 1 + 2^-18 exactly.
	hi, lo := 1.0, 0.0
	for i := 0; i < 1<<12; i++ {
		hi, lo = twoSumAdd(&f32, hi, lo, 0x1p-30)
	}
	if v := f32.Round(hi+lo, format.NearestEven); v != 1+0x1p-18 || hi != 1 {
		t.Errorf("1 + 2^12·2^-30: pair (%g, %g) = %g, want hi 1 and value 1 + 2^-18", hi, lo, v)
	}
}
