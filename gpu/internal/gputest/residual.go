package gputest

import (
	"math"
	"math/big"
	"testing"
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
