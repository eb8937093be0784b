package gputest

import (
	"errors"
	"math"
	"math/big"
	"testing"

	"github.com/mwmm/mwmm/solve"
)

// CheckResidual fails the test unless r is within a unit in the last
// place of b − A·x (A row-major n×n), computed exactly in math/big and
// rounded once, plus n²·2^-104 of (|A|·|x| + |b|) in each row: what a
// double-word residual promises. It returns the largest relative error of
// fp64, b − y for y = A·x computed in fp64, against the exact residual
// (when y is not nil), so that the caller can see the test would tell the
// two apart.
func CheckResidual(tb testing.TB, n int, a, x, b, r, y []float64) (fp64Error float64) {
	tb.Helper()
	for i := range n {
		s := new(big.Float).SetPrec(2200).SetFloat64(b[i])
		scale := math.Abs(b[i])
		for j := range n {
			p := new(big.Float).SetPrec(2200).SetFloat64(a[i*n+j])
			p.Mul(p, new(big.Float).SetFloat64(x[j]))
			s.Sub(s, p)
			scale += math.Abs(a[i*n+j] * x[j])
		}
		want, _ := s.Float64()
		if d := math.Abs(r[i] - want); d > 0x1p-52*math.Abs(want)+float64(n*n)*0x1p-104*scale {
			tb.Fatalf("row %d: double-word residual %v, exact %v", i, r[i], want)
		}
		if y != nil {
			fp64Error = math.Max(fp64Error, math.Abs(b[i]-y[i]-want)/math.Abs(want))
		}
	}
	return fp64Error
}

// CheckResidentResidual starts res (x = M⁻¹b) and checks its double-word
// residual: within CheckResidual's bound of the exact one, bit for bit
// the residual that system (an operator's ResidualDoubleWord, with host
// vectors) computes for the same x, and both norms those of the vectors.
func CheckResidentResidual(tb testing.TB, res solve.Resident, n int, a, b []float64, system func(x, b, r []float64) error) {
	tb.Helper()
	dw, ok := res.(solve.DoubleWordResident)
	if !ok {
		tb.Fatalf("%T computes no double-word residual", res)
	}
	if err := res.Start(); err != nil {
		tb.Fatal(err)
	}
	nr, nx, err := dw.ResidualDoubleWord()
	if err != nil {
		tb.Fatal(err)
	}
	xv, rv, again := make([]float64, n), make([]float64, n), make([]float64, n)
	if err := errors.Join(res.Read(solve.IterateVector, xv), res.Read(solve.ResidualVector, rv), system(xv, b, again)); err != nil {
		tb.Fatal(err)
	}
	CheckResidual(tb, n, a, xv, b, rv, nil)
	mr, mx := 0.0, 0.0
	for i := range n {
		if math.Float64bits(rv[i]) != math.Float64bits(again[i]) {
			tb.Fatalf("row %d: the Resident's residual %v, the operator's %v", i, rv[i], again[i])
		}
		mr, mx = math.Max(mr, math.Abs(rv[i])), math.Max(mx, math.Abs(xv[i]))
	}
	if nr != mr || nx != mx {
		tb.Errorf("norms %v, %v; the vectors' %v, %v", nr, nx, mr, mx)
	}
}
