package bound

import "github.com/mwmm/mwmm/format"

// Table21Row is one row of Table 2.1: a multiword arithmetic and the
// dominant term of its error bound (2.8).
type Table21Row struct {
	Name     string  `json:"name"`     // "double-fp16", "triple-bf16", ...
	ULow     float64 `json:"u_low"`    // unit roundoff of the words
	UHigh    float64 `json:"u_high"`   // unit roundoff of the accumulation
	P        int     `json:"p"`        // words
	Products int     `json:"products"` // p(p+1)/2 products A_i·B_j with i+j ≤ p+1
	Dominant string  `json:"bound"`    // e.g. "3 × 2^-16 + n × 2^-24"
}

// Table21 returns the rows of Table 2.1 of the paper (u_high = 2^-24, fp32
// with round to nearest; fp16 with p = 1, 2 and bf16 with p = 1, 2, 3) with
// their dominant terms, followed by more rows in the same style: tf32 with
// p = 1, 2 (double-tf32 is "3xTF32"), and the 8-bit e4m3 and e5m2 with
// p = 1 to 4.
//
// The dominant term is (p+1)u_low^p + n·u_high, where (p+1)u_low^p is left
// out when u_low^p ≤ 4u_high; this rule reproduces the paper's five rows
// exactly (double-fp16: u_low² = 4u_high, dropped; double-bf16:
// u_low² = 256u_high, kept).
func Table21() []Table21Row {
	uh := U(format.Binary32, format.NearestEven)
	prefix := []string{"", "double-", "triple-", "quadruple-"}
	var rows []Table21Row
	for _, g := range []struct {
		name string
		f    format.Format
		maxP int
	}{
		{"fp16", format.Binary16, 2},
		{"bf16", format.BFloat16, 3},
		{"tf32", format.TF32, 2},
		{"e4m3", format.E4M3, 4},
		{"e5m2", format.E5M2, 4},
	} {
		ul := U(g.f, format.NearestEven)
		for p := 1; p <= g.maxP; p++ {
			rows = append(rows, Table21Row{
				Name:     prefix[p-1] + g.name,
				ULow:     ul,
				UHigh:    uh,
				P:        p,
				Products: p * (p + 1) / 2,
				Dominant: dominant(ul, uh, p, p+1, "n × "+powString(uh)),
			})
		}
	}
	return rows
}
