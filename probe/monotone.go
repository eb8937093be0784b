package probe

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/mwmm/mwmm/format"
)

// Monotonicity is the outcome of the search for two dot products whose terms
// are ordered (every product and c of Larger at least those of Smaller) but
// whose results are not ("Monotonicity of dot product": an adder that does
// not normalise partial sums loses small terms when the largest one crosses
// a power of two).
type Monotonicity struct {
	Monotonic bool         `json:"monotonic"` // no counterexample among the cases tried
	Tried     int          `json:"tried"`     // pairs of cases compared
	Smaller   *Observation `json:"smaller,omitempty"`
	Larger    *Observation `json:"larger,omitempty"`
}

func (m Monotonicity) String() string {
	if m.Monotonic {
		return fmt.Sprintf("no counterexample in %d pairs of cases", m.Tried)
	}
	return fmt.Sprintf("not monotonic: %s gives %g, larger terms (%s) give %g",
		m.Smaller.Case, m.Smaller.Got, m.Larger.Case, m.Larger.Got)
}

// String writes c and the products.
func (c Case) String() string {
	s := fmt.Sprintf("c = %g, products", c.C)
	for i := range c.A {
		s += fmt.Sprintf(" %g", c.A[i]*c.B[i])
	}
	return s
}

// monotonicity searches for a counterexample: first where the paper found
// one (the largest term just below a power of two, then at it, with small
// terms beside), then in random cases with one term pushed up by an ulp.
func (pr *prober) monotonicity(k int, accP int) Monotonicity {
	var small, large []Case
	pair := func(x, y Case) { small, large = append(small, x), append(large, y) }
	outBelow := 1 - math.Ldexp(1, -pr.out.Precision())
	inBelow := 1 - math.Ldexp(1, -pr.in.Precision())
	for n := 1; n <= min(k, 8); n++ {
		for j := pr.out.Precision() - 4; j <= accP+6; j++ {
			ts := make([]float64, n)
			for i := range ts {
				ts[i] = math.Ldexp(1, -j)
			}
			// the largest term as c ...
			if x, ok := pr.dot(outBelow, ts...); ok {
				if y, ok := pr.dot(1, ts...); ok {
					pair(x, y)
				}
			}
			// ... and as a product.
			if n < k {
				if x, ok := pr.dot(0, append([]float64{inBelow}, ts...)...); ok {
					if y, ok := pr.dot(0, append([]float64{1}, ts...)...); ok {
						pair(x, y)
					}
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, g := range Generators() {
		for _, x := range g.Draw(rng, pr.in, pr.out, k, 250) {
			if y, ok := pr.bump(rng, x); ok {
				pair(x, y)
			}
		}
	}
	lo, hi := pr.evalAll(small), pr.evalAll(large)
	m := Monotonicity{Monotonic: true, Tried: len(small)}
	for i := range small {
		if hi[i] < lo[i] {
			m.Monotonic = false
			m.Smaller = &Observation{Case: small[i], Note: "smaller terms", Got: lo[i]}
			m.Larger = &Observation{Case: large[i], Note: "larger terms", Got: hi[i]}
			break
		}
	}
	return m
}

// bump returns c with one term made larger: an input moved one ulp so that
// its product grows, or c moved one ulp up.
func (pr *prober) bump(rng *rand.Rand, c Case) (Case, bool) {
	y := Case{A: append([]float64(nil), c.A...), B: append([]float64(nil), c.B...), C: c.C}
	i := rng.IntN(len(c.A) + 1)
	if i == len(c.A) {
		y.C = nextUp(pr.out, c.C)
		return y, !math.IsInf(y.C, 0)
	}
	switch {
	case c.B[i] > 0:
		y.A[i] = nextUp(pr.in, c.A[i])
	case c.B[i] < 0:
		y.A[i] = -nextUp(pr.in, -c.A[i])
	default:
		return y, false
	}
	return y, !math.IsInf(y.A[i], 0) && y.A[i] <= pr.in.MaxFinite()
}

// nextUp is the next value of f above x.
func nextUp(f format.Format, x float64) float64 {
	if x == 0 {
		x = math.Copysign(0, 1)
	}
	return f.Round(math.Nextafter(x, math.Inf(1)), format.Up)
}
