package mma_test

import (
	"fmt"

	"github.com/mwmm/mwmm/mma"
)

// The non-monotonicity of the V100 tensor cores
// (numerical-behavior-tensor-cores.txt, "Monotonicity of dot product").
func Example() {
	u, err := mma.Lookup("v100", "fp16", "fp32")
	if err != nil {
		panic(err)
	}
	ones := []float64{1, 1, 1, 1}
	tiny := []float64{0x1p-24, 0x1p-24, 0x1p-24, 0x1p-24}
	fmt.Printf("%x\n", u.Dot(ones, tiny, 1-0x1p-24))
	fmt.Printf("%x\n", u.Dot(ones, tiny, 1))
	// Output:
	// 0x1.000002p+00
	// 0x1p+00
}

// A custom unit: T4 with round-to-nearest accumulation.
func ExampleLookup() {
	u, err := mma.Lookup("t4:accmode=rne", "fp16", "fp32")
	if err != nil {
		panic(err)
	}
	fmt.Println(u.Params())
	fmt.Println(u.Dot([]float64{1, 1, 1, 1}, []float64{1, 1, 1, 1}, 1+0x1p-22+0x1p-23))
	// Output:
	// fp16×fp16→fp32, k=4, exact products, normalise at the end, align 23+1 bits truncate below the largest exponent sum, 4 carry bits, fp32 rne
	// 5.000000476837158
}

func ExampleGemm() {
	u, _ := mma.Lookup("v100", "fp16", "fp32")
	a := []float64{1, 2, 3, 4} // 2×2, row-major
	b := []float64{5, 6, 7, 8}
	c := []float64{0, 0, 0, 0.5}
	if err := mma.Gemm(u, 2, 2, 2, a, 2, b, 2, c, 2); err != nil {
		panic(err)
	}
	fmt.Println(c)
	// Output: [19 22 43 50.5]
}
