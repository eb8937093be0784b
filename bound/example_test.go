package bound_test

import (
	"fmt"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/format"
)

// The double-fp16 bound of Table 2.1 for n = 10^6: two fp16 words, three
// products accumulated in fp32 with round to nearest.
func ExampleMultiword_Bound() {
	m := bound.Multiword{
		ULow:  bound.U(format.Binary16, format.NearestEven), // 2^-11
		UHigh: bound.U(format.Binary32, format.NearestEven), // 2^-24
		P:     2,
		N:     1e6,
	}
	r, err := m.Bound()
	if err != nil {
		panic(err)
	}
	for _, t := range r.Terms {
		fmt.Printf("%-16s %.3g\n", t.Name, t.Value)
	}
	fmt.Printf("total            %.4g\n", r.Total)
	fmt.Println("dominant        ", r.Dominant)

	// The tensor cores round toward zero: u_high doubles, and so does the bound.
	m.UHigh = bound.U(format.Binary32, format.TowardZero)
	r, _ = m.Bound()
	fmt.Printf("with rz: %.4g, %s\n", r.Total, r.Dominant)
	// Output:
	// splitting        4.77e-07
	// dropped products 2.39e-07
	// accumulation     0.0635
	// total            0.06351
	// dominant         n × 2^-24
	// with rz: 0.1356, n × 2^-23
}
