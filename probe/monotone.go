package probe

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/mma"
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

// monotonicity searches for a counterexample: first in cases built from
// the fitted adder p (designed), then where the paper found one (the largest
// term just below a power of two, then at it, with small terms beside),
// then in random cases with one term pushed up by an ulp. Every pair is run
// on the unit: a counterexample is the unit's, whatever the fit.
func (pr *prober) monotonicity(p mma.Params) Monotonicity {
	var small, large []Case
	pair := func(x, y Case) { small, large = append(small, x), append(large, y) }
	for _, xy := range pr.designedPairs(p) {
		pair(xy[0], xy[1])
	}
	k, accP := p.BlockK, p.Accumulator.Precision()
	outBelow := 1 - math.Ldexp(1, -pr.out.Precision())
	inBelow := 1 - math.Ldexp(1, -pr.in.Precision())
	for n := 1; n <= min(k, 8); n++ {
		for j := pr.out.Precision() - 4; j <= accP+6; j++ {
			ts := make([]float64, n)
			for i := range ts {
				ts[i] = math.Ldexp(1, -j)
			}
			// the largest term as c ...
			if x, y, ok := pr.dotPair(outBelow, ts, 1, ts); ok {
				pair(x, y)
			}
			// ... and as a product.
			if n < k {
				if x, y, ok := pr.dotPair(0, append([]float64{inBelow}, ts...), 0, append([]float64{1}, ts...)); ok {
					pair(x, y)
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

// designedPairs are the pairs where an adder with p's grid loses terms
// when the largest one grows. An adder that normalises once keeps F =
// accP-1+extra bits below the anchor. Take L = 1 - 2^-q, the largest value
// below 1 (c of the output, q its precision, or a product 1·(1 - 2^-p_in)),
// against L' = 1: the anchor moves from 2^-1 to 2^0 and the grid unit from
// g = 2^(-1-F) to 2g. Small terms m·g, g, ..., g (m odd, n terms) all keep
// their last bit under L and lose it under L', so L' gives a sum smaller by
// n·g - (1-L); where the accumulator's rounding boundary lies between the
// two sums the larger terms give the smaller result (the paper's case is
// m = 1, n = 4 on the V100; the T4's is m = 3). m runs over a few
// accumulator ulps in units of g, and F ± 1 covers a sticky bit. Second,
// carries: a chain of cases from k products 1·1 up to k products s·s and c
// just below 2 (s the largest input below 2), each one input larger than
// the last, crosses 2^(1+CarryBits) when the block can: an adder that
// loses the carry goes down.
func (pr *prober) designedPairs(p mma.Params) [][2]Case {
	var out [][2]Case
	if p.NormalizeEach {
		return nil
	}
	add := func(lo, hi Case, ok bool) {
		if ok {
			out = append(out, [2]Case{lo, hi})
		}
	}
	k := p.BlockK
	if p.ExtraBits != mma.Unlimited {
		f := p.Accumulator.Precision() - 1 + p.ExtraBits
		ulps := 1 << min(p.ExtraBits+2, 5) // accumulator ulps, in g, to cover
		for df := -1; df <= 1; df++ {
			g := math.Ldexp(1, -2-f-df)
			for n := 1; n <= min(k, 8); n++ {
				for m := 1; m <= 2*ulps+1; m += 2 {
					ts := make([]float64, n)
					ts[0] = float64(m) * g
					for i := 1; i < n; i++ {
						ts[i] = g
					}
					add(pr.dotPair(1-math.Ldexp(1, -pr.out.Precision()), ts, 1, ts))
					if n < k {
						add(pr.dotPair(0, append([]float64{1 - math.Ldexp(1, -pr.in.Precision())}, ts...), 0, append([]float64{1}, ts...)))
					}
				}
			}
		}
	}
	// The carry chain, at inputs of exponent 0 (scaled into range when
	// they are not normal inputs).
	s := 2 - math.Ldexp(1, 1-pr.in.Precision())
	if !pr.in.IsRepresentable(s) || s > pr.in.MaxFinite() {
		return out
	}
	cur := Case{A: make([]float64, k), B: make([]float64, k)}
	for i := range cur.A {
		cur.A[i], cur.B[i] = 1, 1
	}
	next := func(c Case) Case {
		return Case{A: slices.Clone(c.A), B: slices.Clone(c.B), C: c.C}
	}
	var chain []Case
	chain = append(chain, cur)
	for i := 0; i < k; i++ {
		cur = next(cur)
		cur.A[i] = s
		chain = append(chain, cur)
		cur = next(cur)
		cur.B[i] = s
		chain = append(chain, cur)
	}
	if c := 2 - math.Ldexp(1, 1-pr.out.Precision()); pr.out.IsRepresentable(c) && c <= pr.out.MaxFinite() {
		cur = next(cur)
		cur.C = c
		chain = append(chain, cur)
	}
	for i := 1; i < len(chain); i++ {
		out = append(out, [2]Case{chain[i-1], chain[i]})
	}
	return out
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
