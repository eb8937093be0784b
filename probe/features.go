package probe

import (
	"math"
	"math/bits"
	"slices"
	"strconv"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/mma"
)

// The features, in the order they are inferred. Each pass infers each
// feature with the others at their current values; three passes settle the
// ones that interact (the carry test rounds, the rounding test carries).
func features() []feature {
	return []feature{
		productsFeature(), subnormalFeature(true), subnormalFeature(false), accumulatorFeature(),
		roundingFeature(), carryFeature(), blockFeature(), extraFeature(), anchorFeature(), normFeature(), addendFeature(),
		rangeFeature(), outputRoundingFeature(),
	}
}

// Values in the tests are relative to 1 (times σ); U is the ulp of 1 in the
// accumulator of the current hypothesis and h = U/2.
func ulp(p mma.Params) float64 { return math.Ldexp(1, 1-p.Accumulator.Precision()) }

// outUlp is the output's ulp of 1.
func (pr *prober) outUlp() float64 { return math.Ldexp(1, 1-pr.out.Precision()) }

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

var modes = []format.Mode{format.TowardZero, format.NearestEven, format.NearestAway, format.Up, format.Down}

// modeNames are the candidates of a rounding-mode feature.
func modeNames(mma.Params) []string {
	var s []string
	for _, m := range modes {
		s = append(s, m.String())
	}
	return s
}

// setMode sets the mode field picks.
func setMode(field func(p *mma.Params) *format.Mode) func(p *mma.Params, v string) bool {
	return func(p *mma.Params, v string) bool {
		m, err := format.ParseMode(v)
		*field(p) = m
		return err == nil
	}
}

// roundingFeature: ties at the final normalisation, both signs
// (numerical-behavior-tensor-cores.txt, "Rounding modes in tensor core
// computations" and "Extra bits for carry out"): 1+U plus 1 is 2+U, halfway
// between 2 and 2+2U; 1+3U plus 1 is halfway between 2+2U and 2+4U.
func roundingFeature() feature {
	return feature{
		name:       "rounding of the sum",
		candidates: modeNames,
		set:        setMode(func(p *mma.Params) *format.Mode { return &p.AccumulatorMode }),
		get:        func(p mma.Params) string { return p.AccumulatorMode.String() },
		tests: func(pr *prober, p mma.Params) []labelled {
			u := ulp(p)
			l := pr.outUlp()
			var ts []labelled
			for _, s := range []float64{1, -1} {
				ts = append(ts, pr.test("(1+U) + 1: a tie, even below", s*(1+u), s)...)
				ts = append(ts, pr.test("(1+3U) + 1: a tie, even above", s*(1+3*u), s)...)
				ts = append(ts, pr.test("1 + 1 + U: a tie, even below", s, s, s*u)...)
				ts = append(ts, pr.test("1 + 1 + 3U: a tie, even above", s, s, s*3*u)...)
				ts = append(ts, pr.test("1 + 1 + 3U/2: above a tie", s, s, s*1.5*u)...)
				// The paper's test, 2 + (3/4)·2U, and the same through an
				// output tie when the output is narrower.
				ts = append(ts, pr.test("2 + (3/4)·2U", 0, s*2, s*1.5*u)...)
				if l > u {
					ts = append(ts, pr.test("1 + 1 + (output tie) + 3U/2", s, s, s*l, s*1.5*u)...)
					ts = append(ts, pr.test("1 + 1 + (output tie) + U", s, s, s*l, s*u)...)
					ts = append(ts, pr.test("1 + 1 + 3(output tie) - U", s, s, s*3*l, -s*u)...)
				}
			}
			return ts
		},
	}
}

// carryFeature: sums of terms with the largest significand of their binade,
// so that each addition carries ("Extra bits for carry out").
func carryFeature() feature {
	return feature{
		name: "carry bits",
		candidates: func(mma.Params) []string {
			return []string{"0", "1", "2", "3", "4", "5", "6", "unlimited"}
		},
		set: func(p *mma.Params, v string) bool { return parseBits(&p.CarryBits, v) },
		get: func(p mma.Params) string { return bitsString(p.CarryBits) },
		tests: func(pr *prober, p mma.Params) []labelled {
			u := ulp(p)
			e := math.Ldexp(1, 1-pr.in.Precision())
			top := (2 - e) * (2 - e) // the largest product below 4
			var ts []labelled
			cOut := 2 - math.Ldexp(1, 1-pr.out.Precision()) // below 2 in a narrow output
			for n := 1; n <= min(p.BlockK, 64); n++ {
				ps := make([]float64, n)
				for i := range ps {
					ps[i] = top
				}
				ts = append(ts, pr.test(strconv.Itoa(n)+" products just below 4", 0, ps...)...)
				ts = append(ts, pr.test(strconv.Itoa(n)+" products and c just below 4", 4-2*u, ps...)...)
				// Under the exponent-sum anchor c below 2 keeps the anchor
				// at the products' e_a+e_b = 0, each product near 4 of it.
				ts = append(ts, pr.test(strconv.Itoa(n)+" products just below 4 and c just below 2", 2-u, ps...)...)
				if cOut != 2-u {
					ts = append(ts, pr.test(strconv.Itoa(n)+" products just below 4 and c below 2 in the output", cOut, ps...)...)
				}
				// The paper's test, c = 1.875 and products 1, 1.5, 1.75,
				// 1.875, fits narrow formats; here all terms are 1.875.
				for i := range ps {
					ps[i] = 1.875
				}
				ts = append(ts, pr.test(strconv.Itoa(n)+" products and c of 1.875", 1.875, ps...)...)
			}
			return ts
		},
	}
}

// bitsString and parseBits write and read a bit count that may be unlimited.
func bitsString(c int) string {
	if c == mma.Unlimited {
		return "unlimited"
	}
	return strconv.Itoa(c)
}

func parseBits(dst *int, v string) bool {
	if v == "unlimited" {
		*dst = mma.Unlimited
		return true
	}
	n, err := strconv.Atoi(v)
	*dst = n
	return err == nil
}

var blockSizes = []int{1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 48, 64}

// blockFeature: +B first and -B at position j, tiny terms s elsewhere. Where
// ±B share a block, the tiny terms of that block are aligned to B and lost;
// tiny terms in later blocks, after B-B = 0, are summed exactly. The result
// changes each time j crosses a block boundary.
func blockFeature() feature {
	return feature{
		name: "products per block",
		candidates: func(p mma.Params) []string {
			var s []string
			for _, k := range blockSizes {
				s = append(s, strconv.Itoa(k))
			}
			if !slices.Contains(blockSizes, p.BlockK) {
				s = append(s, strconv.Itoa(p.BlockK))
			}
			return s
		},
		set: func(p *mma.Params, v string) bool {
			n, err := strconv.Atoi(v)
			p.BlockK = n
			return err == nil
		},
		get: func(p mma.Params) string { return strconv.Itoa(p.BlockK) },
		tests: func(pr *prober, p mma.Params) []labelled {
			// tiny lies below the grid of big unless the alignment is
			// exact (or nearly), and within the formats' range if it can.
			const big = 1
			tiny := math.Ldexp(big, -p.Accumulator.Precision()-1-min(max(p.ExtraBits, 2), 8))
			maxK := max(p.BlockK, 64)
			n := 2*maxK + 2
			var ts []labelled
			for j := 1; j <= 2*maxK+1; j++ {
				ps := make([]float64, n)
				for i := range ps {
					ps[i] = tiny
				}
				ps[0], ps[j] = big, -big
				ts = append(ts, pr.test("+B at 0, -B at "+strconv.Itoa(j)+", tiny elsewhere", 0, ps...)...)
			}
			return ts
		},
	}
}

// extraFeature: a term 2^-j U below the largest one's last bit, added and
// subtracted, alone or on a tie, and cancelled against the largest
// ("Extra bits in the alignment of significands", "Normalization in
// subtraction").
func extraFeature() feature {
	return feature{
		name: "extra alignment bits",
		candidates: func(mma.Params) []string {
			s := []string{"unlimited"}
			for j := 0; j <= 16; j++ {
				s = append(s, strconv.Itoa(j))
			}
			return s
		},
		set: func(p *mma.Params, v string) bool { return parseBits(&p.ExtraBits, v) },
		get: func(p mma.Params) string { return bitsString(p.ExtraBits) },
		tests: func(pr *prober, p mma.Params) []labelled {
			u := ulp(p)
			var ts []labelled
			for j := 1; j <= 16; j++ {
				t := math.Ldexp(u, -j)
				js := strconv.Itoa(j)
				ts = append(ts, pr.test("1 + 2^-"+js+" U", 1, t)...)
				ts = append(ts, pr.test("1 - 2^-"+js+" U", 1, -t)...)
				ts = append(ts, pr.test("(1+U) + 2^-"+js+" U", 1+u, t)...)
				ts = append(ts, pr.test("1 + 1 + 2^-"+js+" U", 0, 1, 1, t)...)
				ts = append(ts, pr.test("1 + 1 - 2^-"+js+" U", 0, 1, 1, -t)...)
				if j >= 3 {
					ts = append(ts, pr.test("1 + (U/2 + 2^-"+js+" U): above a tie", 1, u/2+t)...)
					ts = append(ts, pr.test("1 - (U/4 + 2^-"+js+" U): beyond a tie below 1", 1, -(u/4+t))...)
				}
				if p.BlockK >= 2 {
					ts = append(ts, pr.test("U(1-2^-"+js+") + 2 + 2^-"+js+" U: a tie made of two parts",
						u*(1-math.Ldexp(1, -j)), 2, t)...)
					ts = append(ts, pr.test("-1 + 1 + 2^-"+js+" U: c cancels the largest product", -1, 1, t)...)
				}
				if p.BlockK >= 3 {
					ts = append(ts, pr.test("1 - 1 + 2^-"+js+" U", 0, 1, -1, t)...)
				}
			}
			return ts
		},
	}
}

// normFeature: the paper's tests of normalisation in addition and
// subtraction, and its non-monotonicity example.
func normFeature() feature {
	return feature{
		name: "normalisation",
		candidates: func(mma.Params) []string {
			return []string{"end", "each, largest first", "each, in order"}
		},
		set: func(p *mma.Params, v string) bool {
			p.NormalizeEach = v != "end"
			p.Order = mma.LargestFirst
			if v == "each, in order" {
				p.Order = mma.InOrder
			}
			return true
		},
		get: func(p mma.Params) string {
			switch {
			case !p.NormalizeEach:
				return "end"
			case p.Order == mma.InOrder:
				return "each, in order"
			}
			return "each, largest first"
		},
		tests: func(pr *prober, p mma.Params) []labelled {
			h := ulp(p) / 2
			n := min(p.BlockK, 4)
			small := make([]float64, n)
			for i := range small {
				small[i] = h
			}
			var ts []labelled
			ts = append(ts, pr.test("(1-U/2) + U/2 + ...: normalised after the first addition?", 1-h, small...)...)
			ts = append(ts, pr.test("1 + U/2 + ...: the larger addend loses them (non-monotonicity)", 1, small...)...)
			if p.BlockK >= 2 {
				ts = append(ts, pr.test("(-1+U/2) + 1 - U/2: subtraction", -1+h, 1, -h)...)
				ts = append(ts, pr.test("small terms first, then the largest", 0, append(slices.Clone(small[:n-1]), 1)...)...)
				ts = append(ts, pr.test("1 + U/2 + U/2, largest first", 0, append([]float64{1}, small[:n-1]...)...)...)
				ts = append(ts, pr.test("U/2 + ... then -1 then 1", h, -1, 1)...)
				ts = append(ts, pr.test("(1 - U/2) as products, then U/2s", 0, append([]float64{1, -h}, small[:n-1]...)...)...)
			}
			return ts
		},
	}
}

// addendFeature: c tiny against products that cancel, and c large against
// tiny products: aligned with the products, c loses (or makes lose) bits that
// a separate addition keeps.
func addendFeature() feature {
	return feature{
		name:       "addend c",
		candidates: func(mma.Params) []string { return []string{"with the products", "after the products"} },
		set: func(p *mma.Params, v string) bool {
			p.AddendAfter = v == "after the products"
			return true
		},
		get: func(p mma.Params) string {
			if p.AddendAfter {
				return "after the products"
			}
			return "with the products"
		},
		tests: func(pr *prober, p mma.Params) []labelled {
			u := ulp(p)
			var ts []labelled
			ts = append(ts, pr.test("c = 1, products U/4, U/4", 1, u/4, u/4)...)
			ts = append(ts, pr.test("c = 2^-10 U, products 1, -1", math.Ldexp(u, -10), 1, -1)...)
			ts = append(ts, pr.test("c = -1, products 1, U/4", -1, 1, u/4)...)
			ts = append(ts, pr.test("c = 1 - U/2, products U/2, U/2", 1-u/2, u/2, u/2)...)
			ts = append(ts, pr.test("c = 1, products U/2, U/2: two ties, or one sum of U", 1, u/2, u/2)...)
			ts = append(ts, pr.test("c = -1, products U/2, U/2", -1, u/2, u/2)...)
			ts = append(ts, pr.test("c = 2, products -1, -1, U/4", 2, -1, -1, u/4)...)
			return ts
		},
	}
}

// productsFeature: products of inputs with full significands, exact or
// rounded ("Accuracy of the dot products": (1-2^-11)² is held exactly).
func productsFeature() feature {
	return feature{
		name: "products",
		candidates: func(p mma.Params) []string {
			s := []string{"exact"}
			for q := p.Input.Precision(); q < 2*p.Input.Precision(); q++ {
				s = append(s, "p="+strconv.Itoa(q)+" rne", "p="+strconv.Itoa(q)+" rz")
			}
			return s
		},
		set: func(p *mma.Params, v string) bool {
			if v == "exact" {
				p.Product = nil
				return true
			}
			var q int
			var mode string
			for i := 2; i < len(v); i++ {
				if v[i] == ' ' {
					q, _ = strconv.Atoi(v[2:i])
					mode = v[i+1:]
				}
			}
			m, err := format.ParseMode(mode)
			if err != nil {
				return false
			}
			f, err := format.New(format.Spec{Name: "product", P: q, Emin: -1022, Emax: 1023, Subnormals: true})
			if err != nil {
				return false
			}
			p.Product, p.ProductMode = &f, m
			return true
		},
		get: func(p mma.Params) string {
			if p.Product == nil {
				return "exact"
			}
			return "p=" + strconv.Itoa(p.Product.Precision()) + " " + p.ProductMode.String()
		},
		tests: func(pr *prober, p mma.Params) []labelled {
			e := math.Ldexp(1, -pr.in.Precision())
			var ts []labelled
			for _, x := range []float64{1 - e, 1 + 2*e, 1 + 6*e, 2 - 2*e, 1 + 2*e + math.Ldexp(1, -2)} {
				a := pr.in.Round(x*math.Sqrt(pr.sigma), format.NearestEven)
				ts = append(ts, labelled{"one product of full significands", Case{A: []float64{a}, B: []float64{a}}})
				ts = append(ts, labelled{"the same, negative", Case{A: []float64{-a}, B: []float64{a}}})
				// c cancels the product's rounded value: what is left is
				// the bits of the product below the output's precision.
				if r := pr.out.Round(a*a, format.NearestEven); r != a*a && pr.out.IsRepresentable(-r) {
					ts = append(ts, labelled{"the same, minus its rounded value as c", Case{A: []float64{a}, B: []float64{a}, C: -r}})
				}
			}
			return ts
		},
	}
}

// subnormalFeature: subnormal inputs times a large value, subnormal results
// from normal inputs, and a subnormal c ("Support for subnormal numbers").
func subnormalFeature(input bool) feature {
	name := "subnormal outputs"
	if input {
		name = "subnormal inputs"
	}
	return feature{
		name:       name,
		candidates: func(mma.Params) []string { return []string{"on", "off"} },
		set: func(p *mma.Params, v string) bool {
			on := v == "on"
			if input {
				p.Input = p.Input.WithSubnormals(on)
			} else {
				sameAcc := p.Accumulator == p.Output
				sameRange := p.Accumulator.Emin() == p.Output.Emin()
				p.Output = p.Output.WithSubnormals(on)
				switch {
				case sameAcc:
					p.Accumulator = p.Output
				case sameRange: // a narrower accumulator of the output's range flushes with it
					p.Accumulator = p.Accumulator.WithSubnormals(on)
				}
			}
			return true
		},
		get: func(p mma.Params) string {
			if input {
				return onOff(p.Input.Subnormals())
			}
			return onOff(p.Output.Subnormals())
		},
		tests: func(pr *prober, p mma.Params) []labelled {
			in, out := pr.in, pr.out
			if input {
				sub := in.MinSubnormal()
				big := math.Ldexp(1, min(in.Emax(), 1-in.Emin()+in.Precision()))
				return []labelled{
					{"smallest subnormal input times a large one", Case{A: []float64{sub}, B: []float64{big}}},
					{"largest subnormal input times one", Case{A: []float64{in.MinNormal() - sub}, B: []float64{1}}},
				}
			}
			ts := []labelled{
				{"c = smallest subnormal output, no products", Case{A: []float64{0}, B: []float64{0}, C: out.MinSubnormal()}},
			}
			// A subnormal result from normal inputs, if the input range reaches it.
			if e := out.Emin() - 1; e >= 2*in.Emin() {
				a := math.Ldexp(1, max(in.Emin(), e-in.Emin()))
				b := math.Ldexp(1, e-int(math.Log2(a)))
				ts = append(ts, labelled{"normal inputs, subnormal product", Case{A: []float64{a}, B: []float64{b}}})
			}
			return ts
		},
	}
}

// Canonical returns parameters equivalent to p (every result the same) in a
// standard form, so that two units can be compared: carry bits beyond what
// the largest sum needs count as unlimited, the order does not matter
// without intermediate normalisation, and a chain of single products is the
// same in every block arrangement.
func Canonical(p mma.Params) mma.Params {
	if p.Input.Precision() > 26 {
		// Products wider than a float64: the model has only the fp64
		// FMA chain, one product per step.
		p.BlockK, p.NormalizeEach, p.Order, p.AddendAfter = 1, true, mma.InOrder, false
		p.ExtraBits, p.CarryBits, p.AnchorExponents = mma.Unlimited, mma.Unlimited, false
		p.Name, p.Doc = "", ""
		return p
	}
	if p.ExtraBits == mma.Unlimited || p.NormalizeEach {
		p.AnchorExponents = false // no grid to anchor
	}
	if p.BlockK == 1 || p.NormalizeEach && p.Order == mma.InOrder && !p.AddendAfter && p.Output == p.Accumulator {
		p.BlockK, p.NormalizeEach, p.AddendAfter = 1, false, false
	}
	if !p.NormalizeEach {
		p.Order = mma.LargestFirst
	}
	// Terms below 2^(t+1), t the anchor, need bits.Len(terms-1) carry bits;
	// under the exponent-sum anchor a product of significands m·m < 4 is
	// below m²·2^t, so k products and c stay below (k·m² + 2)·2^t.
	need := 1
	switch {
	case p.NormalizeEach:
	case p.AnchorExponents:
		m := 2 - math.Ldexp(1, 1-p.Input.Precision()) // the largest significand
		top := m * m
		if p.Product != nil {
			top = 4 // a rounded product may reach it
		}
		bound := float64(p.BlockK)*top + 2 // and c below 2
		for need = 0; math.Ldexp(1, 1+need) < bound; need++ {
		}
	default:
		need = bits.Len(uint(p.BlockK))
	}
	if p.CarryBits == mma.Unlimited || p.CarryBits > need {
		p.CarryBits = need
	}
	p.Name, p.Doc = "", ""
	return p
}

// accumulatorFeature: the precision the sum is rounded to before the output
// ("The quotes from NVIDIA ... indicate that the internal accumulation is
// done in fp32"): narrower than the output (the ~14 bits reported for
// fp8 on Hopper), the output's, or wider and then rounded to a narrow output.
func accumulatorFeature() feature {
	return feature{
		name: "accumulator precision",
		candidates: func(p mma.Params) []string {
			out := p.Output.Precision()
			var s []string
			for q := p.Input.Precision() + 1; q <= min(max(out, 24), 51); q++ {
				if q != out {
					s = append(s, strconv.Itoa(q))
				}
			}
			return append(s, strconv.Itoa(out))
		},
		set: func(p *mma.Params, v string) bool {
			q, err := strconv.Atoi(v)
			if err != nil {
				return false
			}
			base := p.Output
			switch {
			case q > 24 && q > base.Precision():
				base = format.Binary64
			case q > base.Precision():
				base = format.Binary32
			}
			f, err := mma.WithPrecision(base, q)
			p.Accumulator = f
			return err == nil
		},
		get: func(p mma.Params) string { return strconv.Itoa(p.Accumulator.Precision()) },
		tests: func(pr *prober, p mma.Params) []labelled {
			l := pr.outUlp() / 2
			var ts []labelled
			for j := 1; j <= 40; j++ {
				t := math.Ldexp(1, -j)
				js := strconv.Itoa(j)
				ts = append(ts, pr.test("1 + 2^-"+js, 1, t)...)
				ts = append(ts, pr.test("-1 - 2^-"+js, -1, -t)...)
				ts = append(ts, pr.test("1 - 2^-"+js, 1, -t)...)
				ts = append(ts, pr.test("1 + 1 + 2^-"+js, 0, 1, 1, t)...)
				if t < l {
					ts = append(ts, pr.test("1 + (output tie) + 2^-"+js, 1, l, t)...)
					ts = append(ts, pr.test("1 + (output tie above) - 2^-"+js, 1, 3*l, -t)...)
				}
			}
			return ts
		},
	}
}

// outputRoundingFeature: ties and near-ties of the output format, observable
// when the accumulator is wider than the output ("When tensor cores are used
// in fp16 mode, the result ... has to be rounded to fp16").
func outputRoundingFeature() feature {
	return feature{
		name:       "rounding of the output",
		candidates: modeNames,
		set:        setMode(func(p *mma.Params) *format.Mode { return &p.OutputMode }),
		get:        func(p mma.Params) string { return p.OutputMode.String() },
		tests: func(pr *prober, p mma.Params) []labelled {
			l := pr.outUlp()
			var ts []labelled
			for _, s := range []float64{1, -1} {
				ts = append(ts, pr.test("1 + U/2 (output ulps): a tie, even below", s, s*l/2)...)
				ts = append(ts, pr.test("1 + 3U/2: a tie, even above", s, s*3*l/2)...)
				ts = append(ts, pr.test("1 + U/4", s, s*l/4)...)
				ts = append(ts, pr.test("1 + 3U/4", s, s*3*l/4)...)
			}
			return ts
		},
	}
}

// anchorFeature: is the alignment grid hung from the largest product's
// leading bit or from the largest exponent sum e_a+e_b (Hopper)? The two
// differ by one bit when that product's significand is in [2,4): with
// 1.5·1.5 - 1.5·1.5 + g, g one grid step under the exponent-sum anchor,
// g survives only there.
func anchorFeature() feature {
	return feature{
		name:       "alignment anchor",
		candidates: func(mma.Params) []string { return []string{"lead", "exp"} },
		set: func(p *mma.Params, v string) bool {
			if v == "exp" && (p.ExtraBits == mma.Unlimited || p.NormalizeEach) {
				return false
			}
			p.AnchorExponents = v == "exp"
			return true
		},
		get: func(p mma.Params) string { return map[bool]string{false: "lead", true: "exp"}[p.AnchorExponents] },
		tests: func(pr *prober, p mma.Params) []labelled {
			if p.ExtraBits == mma.Unlimited || p.BlockK < 3 {
				return nil
			}
			fb := p.Accumulator.Precision() - 1 + p.ExtraBits
			var ts []labelled
			for _, j := range []int{0, 1, 2} {
				g := math.Ldexp(1, -fb+j)
				ga, gb, ok := pr.product(g)
				if !ok {
					continue
				}
				js := strconv.Itoa(j)
				ts = append(ts,
					labelled{"1.5·1.5 - 1.5·1.5 + 2^" + js + " grid steps", Case{A: []float64{1.5, -1.5, ga}, B: []float64{1.5, 1.5, gb}}},
					labelled{"1.5·1.5 + 2^" + js + " grid steps", Case{A: []float64{1.5, ga}, B: []float64{1.5, gb}}},
					labelled{"-(1.5·1.5) - 2^" + js + " grid steps", Case{A: []float64{-1.5, -ga}, B: []float64{1.5, gb}}})
			}
			return ts
		},
	}
}

// rangeFeature: IEEE arithmetic at the ends of the range, or a
// sign-magnitude fixed-point adder (Hopper): overflow to Inf even when
// rounding toward zero, and every zero sum is +0.
func rangeFeature() feature {
	return feature{
		name:       "overflow and underflow",
		candidates: func(mma.Params) []string { return []string{"ieee", "fixed"} },
		set: func(p *mma.Params, v string) bool {
			p.FixedRange = v == "fixed"
			return true
		},
		get: func(p mma.Params) string { return map[bool]string{false: "ieee", true: "fixed"}[p.FixedRange] },
		tests: func(pr *prober, p mma.Params) []labelled {
			in := pr.in
			big, tiny := in.MaxFinite(), in.MinSubnormal()
			if !in.Subnormals() {
				tiny = in.MinNormal()
			}
			ts := []labelled{
				{"(-1)·0 + (-0): a sum of negative zeros", Case{A: []float64{-1}, B: []float64{0}, C: math.Copysign(0, -1)}},
				{"-(tiny·tiny) + 0: an underflow of a negative sum", Case{A: []float64{-tiny}, B: []float64{tiny}, C: 0}},
				{"tiny·tiny + 0", Case{A: []float64{tiny}, B: []float64{tiny}, C: 0}},
				{"max·max: an overflow", Case{A: []float64{big}, B: []float64{big}, C: 0}},
				{"-(max·max)", Case{A: []float64{-big}, B: []float64{big}, C: 0}},
			}
			if p.BlockK >= 2 {
				ts = append(ts,
					labelled{"max·max + max·max", Case{A: []float64{big, big}, B: []float64{big, big}}},
					labelled{"-(tiny·tiny) - tiny·tiny", Case{A: []float64{-tiny, -tiny}, B: []float64{tiny, tiny}}})
			}
			return ts
		},
	}
}
