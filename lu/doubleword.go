package lu

import (
	"fmt"
	"math"
)

// SolveDoubleWord overwrites the double-word vector x = hi + lo with
// Û⁻¹·L̂⁻¹·P·x computed in double-word arithmetic (about 2^-104 per
// operation): the extended precision u² in which Carson and Higham's
// GMRES-IR applies the preconditioner. The factors are exact in fp64, so
// only the operations round.
func (fa *Factors) SolveDoubleWord(hi, lo []float64) error {
	n := fa.N
	if len(hi) != n || len(lo) != n {
		return fmt.Errorf("lu: double-word solve with vectors of length %d and %d for an %d×%d system", len(hi), len(lo), n, n)
	}
	if fa.Singular >= 0 {
		return &SingularError{Column: fa.Singular, Form: fa.Form}
	}
	w := fa.LU
	for i, q := range fa.Piv {
		hi[i], hi[q] = hi[q], hi[i]
		lo[i], lo[q] = lo[q], lo[i]
	}
	for i := 1; i < n; i++ {
		sh, sl := hi[i], lo[i]
		for j, l := range w[i*n : i*n+i] {
			ph, pl := mulDW(hi[j], lo[j], -l)
			sh, sl = addDW(sh, sl, ph, pl)
		}
		hi[i], lo[i] = sh, sl
	}
	for i := n - 1; i >= 0; i-- {
		sh, sl := hi[i], lo[i]
		row := w[i*n : (i+1)*n]
		for j := i + 1; j < n; j++ {
			ph, pl := mulDW(hi[j], lo[j], -row[j])
			sh, sl = addDW(sh, sl, ph, pl)
		}
		hi[i], lo[i] = divDW(sh, sl, row[i])
	}
	return nil
}

// The double-word operations of Joldes, Muller and Popescu ("Tight and
// rigorous error bounds for basic building blocks of double-word
// arithmetic", ACM TOMS 44(2), 2017): AccurateDWPlusDW, DWTimesFP and
// DWDivFP, each with a relative error of a few 2^-106. Products are
// converted before the sums so that the compiler fuses nothing.

func twoSumDW(a, b float64) (float64, float64) {
	s := a + b
	bb := s - a
	return s, (a - (s - bb)) + (b - bb)
}

func fastTwoSum(a, b float64) (float64, float64) {
	s := a + b
	return s, b - (s - a)
}

// addDW is (xh + xl) + (yh + yl).
func addDW(xh, xl, yh, yl float64) (float64, float64) {
	sh, sl := twoSumDW(xh, yh)
	th, tl := twoSumDW(xl, yl)
	sl += th
	sh, sl = fastTwoSum(sh, sl)
	sl += tl
	return fastTwoSum(sh, sl)
}

// mulDW is (xh + xl)·y.
func mulDW(xh, xl, y float64) (float64, float64) {
	ch := float64(xh * y)
	cl1 := math.FMA(xh, y, -ch)
	cl2 := float64(xl * y)
	th, tl := fastTwoSum(ch, cl2)
	tl += cl1
	return fastTwoSum(th, tl)
}

// divDW is (xh + xl)/y.
func divDW(xh, xl, y float64) (float64, float64) {
	th := xh / y
	ph := float64(th * y)
	pl := math.FMA(th, y, -ph)
	d := ((xh - ph) - pl) + xl
	tl := d / y
	return fastTwoSum(th, tl)
}
