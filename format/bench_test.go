package format

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkRoundSlice rounds 1 Mi float64 values in [-2, 2]. The
// baseline-float32 sub-benchmark is the plain float32(x) conversion loop over
// the same slice; compare values/s against it (run with -cpu=1 for one core).
func BenchmarkRoundSlice(b *testing.B) {
	const n = 1 << 20
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float64, n)
	for i := range src {
		src[i] = 4*rng.Float64() - 2
	}
	dst := make([]float64, n)
	report := func(b *testing.B) {
		b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "values/s")
	}

	b.Run("baseline-float32", func(b *testing.B) {
		dst32 := make([]float32, n)
		for b.Loop() {
			for i, x := range src {
				dst32[i] = float32(x)
			}
		}
		report(b)
	})
	type fm struct {
		f Format
		m Mode
	}
	sr8, _ := StochasticBits(8)
	cases := []fm{
		{Binary16, NearestEven}, {BFloat16, NearestEven}, {E4M3, NearestEven}, {E5M2, NearestEven},
		{TF32, NearestEven}, {Binary16, TowardZero}, {Binary16, ToOdd}, {E2M1, NearestEven},
		{Binary16, Stochastic}, {BFloat16, Stochastic}, {E4M3, Stochastic},
		{Binary16, StochasticHalf}, {Binary16, sr8}, {P3109K8P3, sr8},
	}
	for _, c := range cases {
		b.Run(c.f.Name()+"/"+c.m.String(), func(b *testing.B) {
			rnd := rand.New(rand.NewPCG(3, 4))
			for b.Loop() {
				c.f.RoundSlice(dst, src, c.m, rnd)
			}
			report(b)
		})
	}
}
