package probe_test

import (
	"fmt"

	"github.com/mwmm/mwmm/mma"
	"github.com/mwmm/mwmm/probe"
)

// Probe the V100 model as if it were unknown hardware: what the paper found
// shows (truncation, blocks of 4, no extra bit, non-monotonicity), and the
// fitted model reproduces the unit.
func Example() {
	unit, _ := mma.Lookup("v100", "fp16", "fp32")
	report, err := probe.Run(unit)
	if err != nil {
		panic(err)
	}
	for _, f := range report.Findings {
		switch f.Feature {
		case "rounding of the sum", "products per block", "extra alignment bits":
			fmt.Printf("%s: %s\n", f.Feature, f.Value)
		}
	}
	fmt.Println("monotonic:", report.Monotonicity.Monotonic)
	fmt.Println("random cases the fit gets wrong:", report.Misses)
	// Output:
	// rounding of the sum: rz
	// products per block: 4
	// extra alignment bits: 0
	// monotonic: false
	// random cases the fit gets wrong: 0
}
