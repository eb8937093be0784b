package multiword_test

import (
	"math/rand/v2"
	"testing"

	"github.com/mwmm/mwmm/multiword"
	"github.com/mwmm/mwmm/multiword/multiwordtest"
)

// The engines' speed beside a plain float64 triple loop over the same
// matrices (the baseline of the ratio in docs/perf/multiword.md).
func BenchmarkMultiply(b *testing.B) {
	const m, n, k = 16, 16, 4096
	rng := rand.New(rand.NewPCG(1, 2))
	a, bm := distributions[0].matrix(rng, m*k), distributions[0].matrix(rng, k*n)
	c := make([]float64, m*n)
	b.Run("float64-loop", func(b *testing.B) {
		for b.Loop() {
			copy(c, multiwordtest.Naive(m, n, k, a, bm))
		}
		b.ReportMetric(float64(2*m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mflop/s")
	})
	v100, err := multiword.Open("model:v100")
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range []multiword.Engine{multiword.Reference{}, v100} {
		for _, spec := range []string{"double-fp16", "double-fp16:sum=v2,b=256,first=on"} {
			plan, err := multiword.Lookup(spec)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(e.Name()+"/"+spec, func(b *testing.B) {
				for b.Loop() {
					if err := e.Multiply(plan, m, n, k, a, bm, c); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(2*m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mflop/s")
			})
		}
	}
}
