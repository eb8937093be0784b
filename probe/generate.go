package probe

import (
	"math"
	"math/rand/v2"

	"github.com/mwmm/mwmm/format"
)

// A Generator draws random dot products for cross-checking a fitted model
// against a unit: values of the input format for a and b, of the output
// format for c.
type Generator struct {
	Name string
	draw func(g *gen) Case
}

type gen struct {
	rng     *rand.Rand
	in, out format.Format
	k       int
}

// Generators are the distributions of the cross-checks: each stresses a
// different part of the adder.
func Generators() []Generator {
	return []Generator{
		{"uniform (0,1]", func(g *gen) Case { return g.fill(func() float64 { return g.value(-8, 0, false) }, 0) }},
		{"mixed signs", func(g *gen) Case { return g.fill(func() float64 { return g.value(-8, 0, true) }, g.value(-4, 4, true)) }},
		{"wide exponent spread", func(g *gen) Case {
			return g.fill(func() float64 { return g.value(-30, 30, true) }, g.value(-40, 40, true))
		}},
		{"heavy cancellation", func(g *gen) Case {
			c := g.fill(func() float64 { return g.value(-6, 6, true) }, 0)
			s := 0.0
			for i := range c.A {
				s += c.A[i] * c.B[i]
			}
			c.C = g.out.Round(-s, format.NearestEven)
			return c
		}},
		{"subnormal inputs", func(g *gen) Case {
			lo := g.in.Emin() - g.in.Precision() + 1
			return g.fill(func() float64 {
				if g.rng.IntN(2) == 0 {
					return g.value(lo, g.in.Emin()-1, true)
				}
				return g.value(-4, 4, true)
			}, g.value(-30, 0, true))
		}},
		{"c much larger", func(g *gen) Case {
			return g.fill(func() float64 { return g.value(-8, 0, true) }, g.value(20, 30, true))
		}},
		{"c much smaller", func(g *gen) Case {
			return g.fill(func() float64 { return g.value(-2, 2, true) }, g.value(-40, -20, true))
		}},
		{"near overflow", func(g *gen) Case {
			top := g.in.Emax()
			return g.fill(func() float64 { return g.value(top-3, top, true) }, g.value(g.out.Emax()-2, g.out.Emax(), true))
		}},
	}
}

// Draw returns n cases of length k.
func (gr Generator) Draw(rng *rand.Rand, in, out format.Format, k, n int) []Case {
	g := &gen{rng: rng, in: in, out: out, k: k}
	cs := make([]Case, n)
	for i := range cs {
		cs[i] = gr.draw(g)
	}
	return cs
}

func (g *gen) fill(v func() float64, c float64) Case {
	cs := Case{A: make([]float64, g.k), B: make([]float64, g.k), C: c}
	for i := range cs.A {
		cs.A[i], cs.B[i] = v(), v()
	}
	return cs
}

// value is a random value of the input format with an exponent in [lo, hi]
// (clamped to the format), its significand uniform; one in sixteen is zero.
func (g *gen) value(lo, hi int, signed bool) float64 {
	f := g.in
	if g.rng.IntN(16) == 0 {
		return 0
	}
	lo = max(lo, f.Emin()-f.Precision()+1)
	hi = min(hi, f.Emax())
	if lo > hi {
		lo = hi
	}
	e := lo + g.rng.IntN(hi-lo+1)
	m := 1 + g.rng.Float64()
	x := f.Round(math.Ldexp(m, e), format.TowardZero)
	if x > f.MaxFinite() {
		x = f.MaxFinite()
	}
	if signed && g.rng.IntN(2) == 0 {
		x = -x
	}
	return x
}
