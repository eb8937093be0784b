package mma

import (
	"fmt"
	"math"
	"testing"
)

// The numerical tests of numerical-behavior-tensor-cores.txt ("the paper"),
// with the paper's inputs and outputs. Each case is one element of D: a is
// the first row of A, b the first column of B, c = c_11 (the rest of the
// tile is zero, as in the paper). Cases marked "derived" are the paper's
// tests moved to a unit with different parameters (T4's extra bit, A100's
// k = 8), with the expected value worked out by hand from the paper's
// description of that unit.
type paperCase struct {
	name, cite string
	unit       string // preset[:overrides]
	in, out    string // formats, "" for the preset's default
	a, b       []float64
	c, want    float64
}

const (
	subnormals = "Support for subnormal numbers"
	accuracy   = "Accuracy of the dot products"
	rounding   = "Rounding modes in tensor core computations"
	guard      = "Extra bits in the alignment of significands"
	normAdd    = "Normalization in addition"
	normSub    = "Normalization in subtraction"
	carry      = "Extra bits for carry out"
	monotone   = "Monotonicity of dot product"
	turing     = "NVIDIA Turing tensor cores"
	ampere     = "NVIDIA Ampere tensor cores"
)

var fp16Units = []struct{ unit, out string }{
	{"v100", "fp32"}, {"v100", "fp16"}, {"t4", "fp32"}, {"t4", "fp16"}, {"a100", "fp32"}, {"a100", "fp16"},
}

func paperCases() []paperCase {
	var cs []paperCase
	// Cases the paper runs in both fp16 and fp32 modes and on all
	// three GPUs ("all the conclusions ... remain valid").
	for _, u := range fp16Units {
		each := []paperCase{
			{name: "subnormal input a11=2^-24, b11=4", cite: subnormals,
				a: []float64{0x1p-24}, b: []float64{4}, want: 0x1p-22},
			{name: "subnormal output from normals a11=2^-14, b11=1/2", cite: subnormals,
				a: []float64{0x1p-14}, b: []float64{0.5}, want: 0x1p-15},
			{name: "subnormal output with c11=-2^-15", cite: subnormals,
				a: []float64{0x1p-14}, b: []float64{1}, c: -0x1p-15, want: 0x1p-15},
			{name: "products held exactly with an fp16 accumulator", cite: accuracy,
				a: []float64{1 - 0x1p-11, 1 - 0x1p-11}, b: []float64{1 - 0x1p-11, 0x1p-11},
				want: 1 - 0x1p-10 + 0x1p-11},
		}
		for _, c := range each {
			c.unit, c.out = u.unit, u.out
			cs = append(cs, c)
		}
	}
	fp32Units := []string{"v100", "t4", "a100"}
	for _, unit := range fp32Units {
		each := []paperCase{
			{name: "subnormal c11=2^-149 passes through", cite: subnormals,
				a: []float64{0}, b: []float64{0}, c: 0x1p-149, want: 0x1p-149},
			{name: "b11=3/4·2^-22 rounded down against b21=2: RZ in hardware", cite: subnormals,
				a: []float64{1, 1}, b: []float64{0x3p-24, 2}, want: 2},
			{name: "exact products: 4·(1-2^-11)^2", cite: accuracy,
				a:    []float64{1 - 0x1p-11, 1 - 0x1p-11, 1 - 0x1p-11, 1 - 0x1p-11},
				b:    []float64{1 - 0x1p-11, 1 - 0x1p-11, 1 - 0x1p-11, 1 - 0x1p-11},
				want: 4 * (1 - 0x1p-10 + 0x1p-22)},
			{name: "RN or RU would give 2+2^-22", cite: rounding,
				a: []float64{1, 1}, b: []float64{2, 0x3p-24}, want: 2},
			{name: "negative: RD would give -2-2^-22", cite: rounding,
				a: []float64{1, 1}, b: []float64{-2, -0x3p-24}, want: -2},
			{name: "two carry bits: c=1+2^-22+2^-23, b=1,1,1,2^-23", cite: carry,
				a: []float64{1, 1, 1, 1}, b: []float64{1, 1, 1, 0x1p-23}, c: 1 + 0x1p-22 + 0x1p-23, want: 4 + 0x1p-21},
			{name: "two carry bits, second permutation", cite: carry,
				a: []float64{1, 1, 1, 1}, b: []float64{1, 1, 0x1p-23, 1}, c: 1 + 0x1p-22 + 0x1p-23, want: 4 + 0x1p-21},
			{name: "two carry bits, third permutation", cite: carry,
				a: []float64{1, 1, 1, 1}, b: []float64{1, 0x1p-23, 1, 1}, c: 1 + 0x1p-22 + 0x1p-23, want: 4 + 0x1p-21},
			{name: "two carry bits, fourth permutation", cite: carry,
				a: []float64{1, 1, 1, 1}, b: []float64{0x1p-23, 1, 1, 1}, c: 1 + 0x1p-22 + 0x1p-23, want: 4 + 0x1p-21},
			{name: "third carry bit: every addition carries, d=8 not 0", cite: carry,
				a: []float64{1, 1, 1, 1}, b: []float64{1, 1.5, 1.75, 1.875}, c: 1.875, want: 8},
			{name: "final normalisation rounds toward zero: 5+3·2^-23 → 5", cite: carry,
				a: []float64{1, 1, 1, 1}, b: []float64{1, 1, 1, 1}, c: 1 + 0x1p-22 + 0x1p-23, want: 5},
			{name: "no normalisation of partial sums: c=1-2^-24 plus 4·2^-24", cite: normAdd,
				a: []float64{1, 1, 1, 1}, b: []float64{0x1p-24, 0x1p-24, 0x1p-24, 0x1p-24}, c: 1 - 0x1p-24, want: 1 + 0x1p-23},
		}
		for _, c := range each {
			c.unit, c.out = unit, "fp32"
			cs = append(cs, c)
		}
	}
	cs = append(cs,
		paperCase{name: "fp16 output rounds to nearest: 3/4·2^-24 → 2^-24", cite: rounding,
			unit: "v100", out: "fp16", a: []float64{0x1p-24, 0x1p-24}, b: []float64{0.5, 0.25}, want: 0x1p-24},
		paperCase{name: "fp16 output rounds to nearest (T4)", cite: rounding + "; " + turing,
			unit: "t4", out: "fp16", a: []float64{0x1p-24, 0x1p-24}, b: []float64{0.5, 0.25}, want: 0x1p-24},

		// Four rounding errors, largest first: one addend is 1, the others 2^-24.
		paperCase{name: "1 in b11, 2^-24 elsewhere → 1", cite: accuracy, unit: "v100",
			a: []float64{1, 1, 1, 1}, b: []float64{1, 0x1p-24, 0x1p-24, 0x1p-24}, c: 0x1p-24, want: 1},
		paperCase{name: "1 in b21 → 1", cite: accuracy, unit: "v100",
			a: []float64{1, 1, 1, 1}, b: []float64{0x1p-24, 1, 0x1p-24, 0x1p-24}, c: 0x1p-24, want: 1},
		paperCase{name: "1 in b31 → 1", cite: accuracy, unit: "v100",
			a: []float64{1, 1, 1, 1}, b: []float64{0x1p-24, 0x1p-24, 1, 0x1p-24}, c: 0x1p-24, want: 1},
		paperCase{name: "1 in b41 → 1", cite: accuracy, unit: "v100",
			a: []float64{1, 1, 1, 1}, b: []float64{0x1p-24, 0x1p-24, 0x1p-24, 1}, c: 0x1p-24, want: 1},
		paperCase{name: "1 in c11 → 1", cite: accuracy, unit: "v100",
			a: []float64{1, 1, 1, 1}, b: []float64{0x1p-24, 0x1p-24, 0x1p-24, 0x1p-24}, c: 1, want: 1},
		// T4 keeps 2^-24 (its extra bit); with 2^-25 (a product 2^-1·2^-24)
		// it loses the small terms as V100 does.
		paperCase{name: "T4's extra bit keeps 1+4·2^-24 (derived)", cite: turing, unit: "t4",
			a: []float64{1, 1, 1, 1}, b: []float64{0x1p-24, 0x1p-24, 0x1p-24, 0x1p-24}, c: 1, want: 1 + 0x1p-22},
		paperCase{name: "T4 with 2^-25 in place of 2^-24 → 1", cite: turing, unit: "t4",
			a: []float64{0.5, 0.5, 0.5, 0.5}, b: []float64{0x1p-24, 0x1p-24, 0x1p-24, 0x1p-24}, c: 1, want: 1},
		paperCase{name: "T4 with 2^-25, the 1 in b21 → 1", cite: turing, unit: "t4",
			a: []float64{0.5, 1, 0.5, 0.5}, b: []float64{0x1p-24, 1, 0x1p-24, 0x1p-24}, c: 0x1p-25, want: 1},

		// No guard digit.
		paperCase{name: "1 + (-1+2^-24) = 2^-23: relative error 1", cite: guard, unit: "v100",
			a: []float64{1}, b: []float64{1}, c: -1 + 0x1p-24, want: 0x1p-23},
		paperCase{name: "T4's extra bit makes 1 + (-1+2^-24) exact (derived)", cite: turing, unit: "t4",
			a: []float64{1}, b: []float64{1}, c: -1 + 0x1p-24, want: 0x1p-24},
		paperCase{name: "T4 has no guard digit below its extra bit: 1 - (1/2-2^-25) (derived)", cite: turing, unit: "t4",
			a: []float64{1}, b: []float64{1}, c: -0.5 + 0x1p-25, want: 0.5 + 0x1p-24},
		paperCase{name: "the same on V100 loses one more bit (derived)", cite: guard, unit: "v100",
			a: []float64{1}, b: []float64{1}, c: -0.5 + 0x1p-25, want: 0.5 + 0x1p-23},

		// Normalisation: the paper's alternative outcomes, from the same
		// unit with normalisation after every addition.
		paperCase{name: "normalising each partial sum would give 1", cite: normAdd, unit: "v100:norm=each",
			a: []float64{1, 1, 1, 1}, b: []float64{0x1p-24, 0x1p-24, 0x1p-24, 0x1p-24}, c: 1 - 0x1p-24, want: 1},
		paperCase{name: "(1 + c11) - 2^-24 unnormalised = 2^-23", cite: normSub, unit: "v100",
			a: []float64{1, 1, 0, 0}, b: []float64{1, -0x1p-24, 0, 0}, c: -1 + 0x1p-24, want: 0x1p-23},
		paperCase{name: "T4 cancels exactly (derived)", cite: turing, unit: "t4",
			a: []float64{1, 1, 0, 0}, b: []float64{1, -0x1p-24, 0, 0}, c: -1 + 0x1p-24, want: 0},
		paperCase{name: "only two carry bits would wrap 8 to 0", cite: carry, unit: "v100:carry=2",
			a: []float64{1, 1, 1, 1}, b: []float64{1, 1.5, 1.75, 1.875}, c: 1.875, want: 0},
		paperCase{name: "rounding to nearest at the end would give 5+2^-21", cite: carry, unit: "v100:accmode=rne",
			a: []float64{1, 1, 1, 1}, b: []float64{1, 1, 1, 1}, c: 1 + 0x1p-22 + 0x1p-23, want: 5 + 0x1p-21},

		// Non-monotonicity: raising c11 from 1-2^-24 to 1 lowers d11.
		paperCase{name: "c11=1-2^-24 → 1+2^-23", cite: monotone, unit: "v100",
			a: []float64{1, 1, 1, 1}, b: []float64{0x1p-24, 0x1p-24, 0x1p-24, 0x1p-24}, c: 1 - 0x1p-24, want: 1 + 0x1p-23},
		paperCase{name: "c11=1 → 1", cite: monotone, unit: "v100",
			a: []float64{1, 1, 1, 1}, b: []float64{0x1p-24, 0x1p-24, 0x1p-24, 0x1p-24}, c: 1, want: 1},
		paperCase{name: "A100, eight products 2^-25, c11=1-2^-24 → 1+2^-23 (derived)", cite: monotone + "; " + ampere, unit: "a100",
			a: []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5},
			b: []float64{0x1p-24, 0x1p-24, 0x1p-24, 0x1p-24, 0x1p-24, 0x1p-24, 0x1p-24, 0x1p-24}, c: 1 - 0x1p-24, want: 1 + 0x1p-23},
		paperCase{name: "A100, the same with c11=1 → 1 (derived)", cite: monotone + "; " + ampere, unit: "a100",
			a: []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5},
			b: []float64{0x1p-24, 0x1p-24, 0x1p-24, 0x1p-24, 0x1p-24, 0x1p-24, 0x1p-24, 0x1p-24}, c: 1, want: 1},

		// Ampere's other modes.
		paperCase{name: "bf16: fp32 subnormal output 2^-126·2^-1", cite: ampere, unit: "a100", in: "bf16",
			a: []float64{0x1p-126}, b: []float64{0.5}, want: 0x1p-127},
		paperCase{name: "bf16: RZ as T4", cite: ampere, unit: "a100", in: "bf16",
			a: []float64{1, 1}, b: []float64{2, 0x3p-24}, want: 2},
		paperCase{name: "tf32: subnormal input 2^-136 (derived)", cite: ampere, unit: "a100", in: "tf32",
			a: []float64{0x1p-136}, b: []float64{1}, want: 0x1p-136},
		paperCase{name: "tf32: no normalisation as T4", cite: ampere, unit: "a100", in: "tf32",
			a: []float64{1, 1, 1, 1}, b: []float64{0x1p-24, 0x1p-24, 0x1p-24, 0x1p-24}, c: 1 - 0x1p-24, want: 1 + 0x1p-23},
		paperCase{name: "fp64: round to nearest, 2 + 3/4·2^-51 → 2+2^-51 (derived)", cite: ampere, unit: "a100", in: "fp64",
			a: []float64{1, 1}, b: []float64{2, 0x3p-53}, want: 2 + 0x1p-51},
		paperCase{name: "fp64: normalised after each addition, (1-2^-53)+2^-53+2^-53 → 1 (derived)", cite: ampere, unit: "a100", in: "fp64",
			a: []float64{1, 1}, b: []float64{0x1p-53, 0x1p-53}, c: 1 - 0x1p-53, want: 1},
	)
	return cs
}

func TestPaper(t *testing.T) {
	for _, tc := range paperCases() {
		unitName := tc.unit
		if tc.out != "" {
			unitName += "/" + tc.out
		}
		if tc.in != "" {
			unitName += "/" + tc.in
		}
		t.Run(unitName+"/"+tc.name, func(t *testing.T) {
			u, err := Lookup(tc.unit, tc.in, tc.out)
			if err != nil {
				t.Fatal(err)
			}
			if got := u.Dot(tc.a, tc.b, tc.c); got != tc.want || math.Signbit(got) != math.Signbit(tc.want) {
				t.Errorf("%s (%s): a=%v b=%v c=%v: got %v (%x), want %v (%x)",
					u.Name(), tc.cite, hexes(tc.a), hexes(tc.b), fmt.Sprintf("%x", tc.c), got, got, tc.want, tc.want)
			}
		})
	}
}

func hexes(xs []float64) string {
	s := "["
	for i, x := range xs {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%x", x)
	}
	return s + "]"
}

// The paper's monotonicity argument, as a property: for V100, the example is
// a counterexample, so x ≤ y elementwise does not give dot(x) ≤ dot(y).
func TestNonMonotonicityReproduces(t *testing.T) {
	u, err := Lookup("v100", "", "")
	if err != nil {
		t.Fatal(err)
	}
	ones := []float64{1, 1, 1, 1}
	small := []float64{0x1p-24, 0x1p-24, 0x1p-24, 0x1p-24}
	lo, hi := u.Dot(ones, small, 1-0x1p-24), u.Dot(ones, small, 1)
	if !(lo > hi) {
		t.Errorf("c=1-2^-24 gives %v, c=1 gives %v: expected the smaller addend to give the larger result", lo, hi)
	}
	// Normalising after each addition restores monotonicity here.
	n, _ := Lookup("v100:norm=each", "", "")
	if lo, hi := n.Dot(ones, small, 1-0x1p-24), n.Dot(ones, small, 1); lo > hi {
		t.Errorf("with normalisation after each addition: %v > %v", lo, hi)
	}
}
