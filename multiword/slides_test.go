package multiword_test

import (
	"fmt"
	"testing"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/multiword"
)

// The 4×4 worked example of the narrow-range slides (Mary and Mikaitis):
// fp8-E4M3 words without subnormals, fp16 accumulation without
// subnormals, θ = min(448, sqrt(65504/4)).
var (
	slideA = []float64{
		500, 1, 1, 0x1p-6,
		128, 128, 128, 128,
		1, 1, 1, 1,
		1, 1, 1, 1,
	}
	slideB = []float64{
		1, 128, 1, 1,
		1, 128, 1, 1,
		1, 128, 1, 1,
		1, 128, 1, 1,
	}
	slideAB = []float64{
		502.015625, 64258, 502.015625, 502.015625,
		512, 65536, 512, 512,
		4, 512, 4, 4,
		4, 512, 4, 4,
	}
)

func slidePlan(low format.Format, words int) multiword.Plan {
	return multiword.Plan{
		Name: "slides", Low: low, Words: words,
		Acc: format.Binary16.WithSubnormals(false), Out: format.Binary64,
		Scale: true, WordShift: low.Precision(),
		// The products' sum is printed exactly on the slides (125.50390625
		// is not an fp16 value): they are added in fp64.
		Sum: bound.FABsumV2,
	}
}

func slideEngines(t *testing.T) []multiword.Engine {
	ieee, err := multiword.Open("model:ieee")
	if err != nil {
		t.Fatal(err)
	}
	return []multiword.Engine{multiword.Reference{}, ieee}
}

func multiplySlides(t *testing.T, e multiword.Engine, p multiword.Plan) []float64 {
	t.Helper()
	c := make([]float64, 16)
	if err := e.Multiply(p, 4, 4, 4, slideA, slideB, c); err != nil {
		t.Fatalf("%s: %v", e.Name(), err)
	}
	return c
}

func TestSlidesExample(t *testing.T) {
	e4m3 := format.E4M3.WithSubnormals(false)
	// The slides keep 125 = ΛA(1,1) as it is, but 125 = 0b1111101 has 7
	// significant bits and E4M3 only 4: fl(125) = 128. The slides' single-
	// word numbers are therefore those of a format with E4M3's range and at
	// least 7 bits; with E4M3 itself the (1,1) entry is 4·(128 + 1/2) = 514.
	wide, err := format.Parse("custom:p=7,emin=-6,emax=8,subnormals=off")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		plan multiword.Plan
		want []float64
	}{
		{"single word, 7-bit words (the slides' arithmetic)", slidePlan(wide, 1), []float64{
			502, 64256, 502, 502,
			512, 65536, 512, 512,
			4, 512, 4, 4,
			4, 512, 4, 4}},
		{"single word, E4M3", slidePlan(e4m3, 1), []float64{
			514, 65792, 514, 514,
			512, 65536, 512, 512,
			4, 512, 4, 4,
			4, 512, 4, 4}},
		{"double word, E4M3", slidePlan(e4m3, 2), slideAB},
	} {
		for _, e := range slideEngines(t) {
			got := multiplySlides(t, e, tc.plan)
			for x := range got {
				if got[x] != tc.want[x] {
					t.Errorf("%s, %s: C[%d,%d] = %v, want %v", tc.name, e.Name(), x/4+1, x%4+1, got[x], tc.want[x])
				}
			}
		}
	}
}

// The slides' θ and Λ: row 1's 500 scales by 2^-2 to 125, row 2's 128 by
// 2^-1. (Rows of ones scale up to 64 under the rule "largest entry in
// (θ/2, θ]"; the slides leave them at 1, which changes no entry of C here.)
func TestSlidesScaling(t *testing.T) {
	theta := bound.Theta(448, 65504, 4)
	if theta <= 127 || theta >= 128 {
		t.Fatalf("θ = %g, want min(448, sqrt(65504/4)) ≈ 127.97", theta)
	}
	l := multiword.RowScales(slideA, 4, 4, theta)
	if l[0] != 0x1p-2 || l[1] != 0x1p-1 || l[2] != 64 || l[3] != 64 {
		t.Errorf("Λ = %v, want [2^-2 2^-1 64 64]", l)
	}
	m := multiword.ColScales(slideB, 4, 4, theta)
	if m[1] != 0x1p-1 {
		t.Errorf("μ_2 = %g, want 2^-1", m[1])
	}
	// Without scaling, 500 overflows E4M3 (448; NaN, it has no Inf) and
	// 65536 overflows fp16.
	p := slidePlan(format.E4M3.WithSubnormals(false), 1)
	p.Scale = false
	p.Out = format.Binary16
	c := multiplySlides(t, multiword.Reference{}, p)
	if c[0] == c[0] || c[5] != c[5]+1 {
		t.Errorf("unscaled: C(1,1) = %g (want NaN), C(2,2) = %g (want Inf)", c[0], c[5])
	}
}

// Example: the double-word worked example of the narrow-range slides
// reproduces AB exactly although 500 and 65536 are out of E4M3's and
// fp16's ranges and 2^-6·2^-2 underflows E4M3.
func ExamplePlan_narrowRange() {
	plan := multiword.Plan{
		Name:      "double-e4m3, fp16 accumulation",
		Low:       format.E4M3.WithSubnormals(false),
		Words:     2,
		Acc:       format.Binary16.WithSubnormals(false),
		Out:       format.Binary64,
		Scale:     true, // Λ, M: rows and columns into (θ/2, θ], θ = min(448, √(65504/4))
		WordShift: 4,    // the second word is stored ×2^4 = 1/u
		Sum:       bound.FABsumV2,
	}
	c := make([]float64, 16)
	if err := (multiword.Reference{}).Multiply(plan, 4, 4, 4, slideA, slideB, c); err != nil {
		fmt.Println(err)
		return
	}
	for i := 0; i < 4; i++ {
		fmt.Println(c[i*4 : i*4+4])
	}
	// Output:
	// [502.015625 64258 502.015625 502.015625]
	// [512 65536 512 512]
	// [4 512 4 4]
	// [4 512 4 4]
}
