package solve_test

import (
	"context"
	"fmt"

	"github.com/mwmm/mwmm/experiment"
	"github.com/mwmm/mwmm/lu"
	"github.com/mwmm/mwmm/solve"
)

// Solve a system with κ = 10^6 to fp64 accuracy from LU factors whose
// updates ran on a simulated V100's tensor cores with fp32 output.
func ExampleSystem() {
	const n = 200
	spec, _ := experiment.ParseMatrix("randsvd:kappa=1e6")
	a := spec.Generate(1, "A", n)
	b := experiment.RandomVector(1, "b", n)
	form, _ := lu.ParseForm("tc32", "v100", "fp16")
	x, rep, err := solve.System(context.Background(), form, n, a, b, lu.Options{}, solve.Options{}, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("converged in %d steps; backward error below 2^-50: %v; x has %d entries\n",
		rep.Outer, solve.BackwardError(n, a, x, b) < 0x1p-50, len(x))
	// Output: converged in 2 steps; backward error below 2^-50: true; x has 200 entries
}
