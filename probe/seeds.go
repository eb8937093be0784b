package probe

import (
	"fmt"
	"math"
	"strings"

	"github.com/mwmm/mwmm/mma"
)

// SeedTest is one test of numerical-behavior-tensor-cores.txt run on the
// unit as the paper wrote it for fp16 inputs and an fp32 accumulator,
// with 2^-23 read as U, the ulp of 1 in the unit's (fitted) accumulator, and
// values scaled by a power of two into the unit's range. The verdict is worded like
// the paper's conclusion, so that a report can be read beside its text.
type SeedTest struct {
	Name    string        `json:"name"`
	Section string        `json:"section"` // the paper's section
	Paper   string        `json:"paper"`   // what the paper's GPUs returned
	Verdict string        `json:"verdict"`
	Cases   []Observation `json:"cases"`
}

// seed builds the cases of one test and judges their results, given as
// multiples of σ (r[i] is case i's result divided by its scale).
type seed struct {
	name, section, paper string
	cases                func(pr *prober, u float64) []seedCase
	verdict              func(r []float64, u float64) string
}

type seedCase struct {
	note  string
	c     float64
	terms []float64
}

func seeds() []seed {
	const rounding = "Rounding modes in tensor core computations"
	return []seed{
		{
			name: "subnormal inputs", section: "Support for subnormal numbers",
			paper: "2^-24 · 2^2 returns the subnormal 2^-22: supported",
		},
		{
			name: "exact products", section: "Accuracy of the dot products",
			paper: "(1-2^-11)² is returned exactly in fp32",
		},
		{
			name: "one multi-operand addition: 1 + four 2^-24", section: "Accuracy of the dot products",
			paper: "1 in all five positions: four rounding errors, the largest term first",
			cases: func(pr *prober, u float64) []seedCase {
				var cs []seedCase
				for pos := 0; pos < 5; pos++ {
					ts := []float64{u / 2, u / 2, u / 2, u / 2}
					c := u / 2
					if pos == 0 {
						c = 1
					} else {
						ts[pos-1] = 1
					}
					cs = append(cs, seedCase{fmt.Sprintf("1 in position %d", pos), c, ts})
				}
				return cs
			},
			verdict: func(r []float64, u float64) string {
				if !allSame(r) {
					return "depends on the position: a fixed order"
				}
				switch r[0] {
				case 1:
					return "1 everywhere: the small terms are lost (as V100)"
				case 1 + 2*u:
					return "1 + 2U everywhere: exact (extra bits below the accumulator, as T4/A100 with 2^-24)"
				}
				return fmt.Sprintf("%v in every position", relText(r[0], u))
			},
		},
		{
			name: "rounding of the sum", section: rounding,
			paper: "2 + (3/4)·2^-22 gives 2, and -2 for the negative: round toward zero",
			cases: func(pr *prober, u float64) []seedCase {
				return []seedCase{{"2 + (3/4)·2^-22", 0, []float64{2, 1.5 * u}}, {"-2 - (3/4)·2^-22", 0, []float64{-2, -1.5 * u}}}
			},
			verdict: func(r []float64, u float64) string {
				up, down := r[0] > 2, r[1] < -2
				switch {
				case !up && !down:
					return "toward zero (as V100–A100)"
				case up && down:
					return "to nearest (or away from zero)"
				case up:
					return "up (toward +∞)"
				}
				return "down (toward −∞)"
			},
		},
		{
			name: "rounding of a narrower output", section: rounding,
			paper: "2^-25 + 2^-26 with an fp16 output gives 2^-24: to nearest (or up), outside the tensor core",
		},
		{
			name: "no guard digit", section: "Extra bits in the alignment of significands",
			paper: "1 + (-1 + 2^-24) gives 2^-23: relative error 1",
			cases: func(pr *prober, u float64) []seedCase {
				return []seedCase{{"c = -1 + 2^-24, product 1", -1 + u/2, []float64{1}}}
			},
			verdict: func(r []float64, u float64) string {
				switch r[0] {
				case u / 2:
					return "exact: guard digits (extra bits below the accumulator, as T4/A100)"
				case u:
					return "U: no guard digit (as V100–A100)"
				}
				return relText(r[0], u)
			},
		},
		{
			name: "normalisation in addition", section: "Normalization in addition",
			paper: "(1 - 2^-24) + four 2^-24 gives 1 + 2^-23: normalised only at the end",
			cases: func(pr *prober, u float64) []seedCase {
				h := u / 2
				return []seedCase{{"c = 1 - 2^-24, four products 2^-24", 1 - h, []float64{h, h, h, h}}}
			},
			verdict: func(r []float64, u float64) string {
				switch r[0] {
				case 1 + u:
					return "1 + U: only the final sum is normalised (as V100–A100)"
				case 1:
					return "1: partial sums normalised"
				}
				return relText(r[0], u)
			},
		},
		{
			name: "normalisation in subtraction", section: "Normalization in subtraction",
			paper: "(-1 + 2^-24) + 1 - 2^-24 gives 2^-23: not normalised",
			cases: func(pr *prober, u float64) []seedCase {
				return []seedCase{{"c = -1 + 2^-24, products 1, -2^-24", -1 + u/2, []float64{1, -u / 2}}}
			},
			verdict: func(r []float64, u float64) string {
				switch r[0] {
				case u:
					return "U: the difference is not normalised (as V100–A100)"
				case 0:
					return "0: exact (partial sums normalised, or extra bits below the accumulator as T4/A100)"
				}
				return relText(r[0], u)
			},
		},
		{
			name: "two carry bits", section: "Extra bits for carry out",
			paper: "c = 1 + 2^-22 + 2^-23 and products 1, 1, 1, 2^-23 in any order give 4 + 2^-21",
			cases: func(pr *prober, u float64) []seedCase {
				var cs []seedCase
				for pos := 0; pos < 4; pos++ {
					ts := []float64{1, 1, 1, 1}
					ts[pos] = u
					cs = append(cs, seedCase{fmt.Sprintf("2^-23 in position %d", pos+1), 1 + 3*u, ts})
				}
				return cs
			},
			verdict: func(r []float64, u float64) string {
				if allSame(r) && r[0] == 4+4*u {
					return "4 + 4U in every order: at least two carry bits (as V100–A100)"
				}
				return "not 4 + 4U in every order: " + relList(r, u)
			},
		},
		{
			name: "a third carry bit", section: "Extra bits for carry out",
			paper: "c = 1.875 and products 1, 1.5, 1.75, 1.875 give 8 (0 with two carry bits)",
			cases: func(pr *prober, u float64) []seedCase {
				return []seedCase{{"c = 1.875; 1, 1.5, 1.75, 1.875", 1.875, []float64{1, 1.5, 1.75, 1.875}}}
			},
			verdict: func(r []float64, u float64) string {
				if r[0] == 8 {
					return "8: three carry bits, or normalisation before the carry is lost (as V100–A100)"
				}
				return relText(r[0], u) + ": a carry was lost"
			},
		},
		{
			name: "monotonicity", section: "Monotonicity of dot product",
			paper: "four 2^-24 added to c = 1 - 2^-24 give 1 + 2^-23, to c = 1 give 1: not monotonic",
			cases: func(pr *prober, u float64) []seedCase {
				h := u / 2
				return []seedCase{{"c = 1 - 2^-24", 1 - h, []float64{h, h, h, h}}, {"c = 1", 1, []float64{h, h, h, h}}}
			},
			verdict: func(r []float64, u float64) string {
				if r[0] > r[1] {
					return "not monotonic: the larger c gives the smaller result (as V100–A100)"
				}
				return "monotonic on this test (so is T4/A100, whose extra bit keeps the 2^-24 terms)"
			},
		},
	}
}

// runSeeds runs the paper's tests with U the fitted accumulator's ulp of 1;
// p is the canonical fit, which words the verdicts its adder makes moot.
func (pr *prober) runSeeds(u float64, p mma.Params) []SeedTest {
	var out []SeedTest
	for _, s := range seeds() {
		st := SeedTest{Name: s.name, Section: s.section, Paper: s.paper}
		switch s.name {
		case "subnormal inputs", "exact products":
			st.Cases, st.Verdict = pr.exactSeed(s.name)
			out = append(out, st)
			continue
		case "rounding of a narrower output":
			st.Cases, st.Verdict = pr.outputSeed(u)
			out = append(out, st)
			continue
		}
		scs := s.cases(pr, u)
		var cases []Case
		var sigmas []float64
		for _, sc := range scs {
			cs, sigma, ok := pr.scaledDot(sc.c, sc.terms...)
			if !ok {
				cases = nil
				break
			}
			cases, sigmas = append(cases, cs), append(sigmas, sigma)
		}
		if cases == nil {
			st.Verdict = "not run: its values are not " + pr.in.Name() + " products or " + pr.out.Name() + " values"
			out = append(out, st)
			continue
		}
		rel := pr.evalAll(cases)
		for i, got := range rel {
			st.Cases = append(st.Cases, Observation{Case: cases[i], Note: scs[i].note, Got: got})
			rel[i] = got / sigmas[i]
		}
		st.Verdict = s.verdict(rel, u)
		switch {
		case p.NormalizeEach && s.section == "Extra bits for carry out":
			// A normalised partial sum never carries out of its bits.
			st.Verdict = relList(rel, u) + ": every addition is normalised, no carry bits are needed"
		case !p.NormalizeEach && len(scs[0].terms) > p.BlockK:
			st.Verdict += fmt.Sprintf(" (the terms span blocks of %d)", p.BlockK)
		}
		out = append(out, st)
	}
	return out
}

// exactSeed runs the tests whose verdict is whether one product comes back
// exactly.
func (pr *prober) exactSeed(name string) ([]Observation, string) {
	var a, b float64
	if name == "exact products" {
		e := math.Ldexp(1, -pr.in.Precision())
		if pr.out.Precision() < 2*pr.in.Precision() {
			// The paper's test for an fp16 output: (1-e)² + (1-e)·e
			// = 1-e fits the output only if (1-e)² was held exactly.
			cs := Case{A: []float64{1 - e, 1 - e}, B: []float64{1 - e, e}}
			got := pr.eval(cs)
			obs := []Observation{{Case: cs, Note: "(1-e)² + (1-e)·e, e = 2^-p", Got: got}}
			if got == 1-e {
				return obs, "exact: (1-e)² + (1-e)·e gives 1-e, so (1-e)² was held exactly"
			}
			return obs, fmt.Sprintf("rounded: %g instead of %g", got, 1-e)
		}
		a, b = 1-e, 1-e
	} else {
		if !pr.in.Subnormals() {
			return nil, "not run: " + pr.in.Name() + " has no subnormals"
		}
		a, b = pr.in.MinSubnormal(), 4
	}
	cs := Case{A: []float64{a}, B: []float64{b}}
	got := pr.eval(cs)
	obs := []Observation{{Case: cs, Note: fmt.Sprintf("%g · %g", a, b), Got: got}}
	switch {
	case got == a*b:
		return obs, "exact"
	case got == 0:
		return obs, "flushed to zero"
	}
	return obs, fmt.Sprintf("rounded: %g instead of %g", got, a*b)
}

// outputSeed: three quarters of the output's smallest subnormal, as two
// products, from an accumulator that holds it exactly.
func (pr *prober) outputSeed(u float64) ([]Observation, string) {
	if u >= math.Ldexp(1, 1-pr.out.Precision()) {
		return nil, "not run: the output is as wide as the accumulator"
	}
	if !pr.out.Subnormals() {
		return nil, "not run: " + pr.out.Name() + " has no subnormals"
	}
	s := pr.out.MinSubnormal()
	a1, b1, ok1 := pr.product(s / 2)
	a2, b2, ok2 := pr.product(s / 4)
	if !ok1 || !ok2 {
		return nil, "not run: s/2 and s/4 are not " + pr.in.Name() + " products"
	}
	cs := Case{A: []float64{a1, a2}, B: []float64{b1, b2}}
	got := pr.eval(cs)
	obs := []Observation{{Case: cs, Note: "s/2 + s/4, s the smallest subnormal output", Got: got}}
	switch got {
	case s:
		return obs, "s: to nearest or up (as V100–A100: the conversion is done outside the tensor core)"
	case 0:
		return obs, "0: toward zero or down"
	}
	return obs, fmt.Sprintf("%g", got)
}

func allSame(r []float64) bool {
	for _, x := range r {
		if x != r[0] {
			return false
		}
	}
	return true
}

// relText writes x as a base plus a multiple of U when it is near 0, 1, 2,
// 4 or 8.
func relText(x, u float64) string {
	for _, base := range []float64{0, 1, 2, 4, 8, -1, -2} {
		if k := (x - base) / u; k == math.Trunc(k) && math.Abs(k) < 64 {
			switch {
			case k == 0:
				return fmt.Sprintf("%g", base)
			case base == 0:
				return fmt.Sprintf("%g·U", k)
			}
			return fmt.Sprintf("%g %+g·U", base, k)
		}
	}
	return fmt.Sprintf("%g", x)
}

func relList(r []float64, u float64) string {
	var s []string
	for _, x := range r {
		s = append(s, relText(x, u))
	}
	return strings.Join(s, ", ")
}
