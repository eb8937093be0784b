package mma

import (
	"math/rand/v2"
	"testing"

	"github.com/mwmm/mwmm/format"
)

// BenchmarkUnit reports emulated products per second for dot products of
// length 16, inputs random values of the unit's input format.
func BenchmarkUnit(b *testing.B) {
	units := []struct{ spec, in, out string }{
		{"v100", "fp16", "fp32"}, {"v100", "fp16", "fp16"}, {"t4", "fp16", "fp32"},
		{"a100", "fp16", "fp32"}, {"a100", "bf16", "fp32"}, {"a100", "tf32", "fp32"}, {"a100", "fp64", "fp64"},
		{"ieee", "fp16", "fp32"}, {"ieee:k=1", "fp16", "fp32"}, {"exact", "fp16", "fp32"},
	}
	const k, cases = 16, 1024
	for _, spec := range units {
		u, err := Lookup(spec.spec, spec.in, spec.out)
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 1))
		in := u.Input()
		a, bb := make([]float64, k*cases), make([]float64, k*cases)
		for i := range a {
			a[i] = randomIn(rng, in, -4, 4)
			bb[i] = randomIn(rng, in, -4, 4)
		}
		c, d := make([]float64, cases), make([]float64, cases)
		for i := range c {
			c[i] = randomIn(rng, format.Binary16, -4, 4)
		}
		b.Run(spec.spec+"/"+in.Name()+"-"+u.Output().Name(), func(b *testing.B) {
			for b.Loop() {
				if err := u.Dots(k, a, bb, c, d); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(k*cases*b.N)/b.Elapsed().Seconds(), "products/s")
		})
	}
}
