package multiword

import (
	"math"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/format"
)

// UnderflowRows counts the rows of the m×k matrix a (row-major) that the
// plan's words represent worse than Split's bound allows because entries
// underflow the words' format, after the rows are scaled as the plan
// scales them (with k the inner dimension). A row counts when what its
// words miss, summed, exceeds 4u^p times the sum of its magnitudes: the
// error it brings to C even where the other factor weighs its entries
// alike. Tiny entries beside large ones do not count (uniform data in
// (0,1] has entries below fp16's normal range whose loss C never sees); a
// row of 1e-40s does. NaN and ±Inf entries are skipped.
func (p *Plan) UnderflowRows(a []float64, m, k int) int {
	var scales []float64
	if p.Scale {
		scales = RowScales(a, m, k, p.ScaleTarget(k))
	}
	return p.lossyLines(m, k, scales, func(l, e int) float64 { return a[l*k+e] })
}

// UnderflowCols is UnderflowRows for the columns of the k×n matrix b.
func (p *Plan) UnderflowCols(b []float64, k, n int) int {
	var scales []float64
	if p.Scale {
		scales = ColScales(b, k, n, p.ScaleTarget(k))
	}
	return p.lossyLines(n, k, scales, func(l, e int) float64 { return b[e*n+l] })
}

// lossyLines counts the lines (rows or columns) l < lines, of length
// entries at(l, e), whose words miss more than the bound allows; scales
// (nil for none) multiplies line l by scales[l].
func (p *Plan) lossyLines(lines, length int, scales []float64, at func(l, e int) float64) int {
	tol := 4 * math.Pow(bound.U(p.Low, p.SplitMode), float64(p.Words))
	mode := p.SplitMode
	if mode.IsStochastic() {
		// The same grid, deterministic: the check is of range, not of the draws.
		mode = format.TowardZero
	}
	sp := newSplitter(p.Low, p.Words, mode, p.WordShift, nil)
	lost := 0
	for l := 0; l < lines; l++ {
		s := 1.0
		if scales != nil {
			s = scales[l]
		}
		var mag, miss float64
		for e := 0; e < length; e++ {
			v := at(l, e)
			if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			mag += math.Abs(v * s)
			miss += math.Abs(sp.one(v*s, nil, 0))
		}
		if miss > tol*mag {
			lost++
		}
	}
	return lost
}
