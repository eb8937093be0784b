package format

import (
	"math/rand/v2"
	"testing"
	"time"
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
		{E2M3, NearestEven}, {E2M1, TowardZero}, {E2M1, Stochastic},
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

// BenchmarkSubnormalRange compares formats whose inputs mostly fall below
// 2^Emin (e2m1, e2m3: half of [-2, 2] and more) with fp16, where none
// do, in the same run: each iteration rounds the same 1 Mi values to every
// format in turn, so machine load hits all alike. It reports each format's
// values/s and the ratio fp16 / format (the target: ≤ 2).
func BenchmarkSubnormalRange(b *testing.B) {
	const n = 1 << 20
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float64, n)
	for i := range src {
		src[i] = 4*rng.Float64() - 2
	}
	dst := make([]float64, n)
	for _, m := range []Mode{NearestEven, TowardZero, Up, NearestAway} {
		b.Run(m.String(), func(b *testing.B) {
			fs := []Format{Binary16, E2M1, E2M3, E3M2}
			spent := make([]time.Duration, len(fs))
			for it := 0; b.Loop(); it++ {
				for k := range fs {
					i := (k + it) % len(fs) // each format first in turn
					t0 := time.Now()
					fs[i].RoundSlice(dst, src, m, nil)
					spent[i] += time.Since(t0)
				}
			}
			rate := func(i int) float64 { return float64(b.N) * n / spent[i].Seconds() }
			for i, f := range fs {
				b.ReportMetric(rate(i), f.Name()+"-values/s")
				if i > 0 {
					b.ReportMetric(rate(0)/rate(i), "fp16/"+f.Name())
				}
			}
		})
	}
}
