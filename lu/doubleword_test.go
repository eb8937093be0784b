package lu_test

import (
	"context"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/lu"
)

// bigSolve is Û⁻¹L̂⁻¹P·b in 400-bit arithmetic: the oracle.
func bigSolve(fa *lu.Factors, b []*big.Float) []*big.Float {
	n := fa.N
	const prec = 400
	x := make([]*big.Float, n)
	for i := range x {
		x[i] = new(big.Float).SetPrec(prec).Set(b[i])
	}
	for i, q := range fa.Piv {
		x[i], x[q] = x[q], x[i]
	}
	t := new(big.Float).SetPrec(prec)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			x[i].Sub(x[i], t.Mul(big.NewFloat(fa.LU[i*n+j]), x[j]))
		}
	}
	for i := n - 1; i >= 0; i-- {
		for j := i + 1; j < n; j++ {
			x[i].Sub(x[i], t.Mul(big.NewFloat(fa.LU[i*n+j]), x[j]))
		}
		x[i].Quo(x[i], big.NewFloat(fa.LU[i*n+i]))
	}
	return x
}

// The double-word solve agrees with the 400-bit one to about 2^-100 of
// ‖x‖∞ on well-conditioned factors; the fp64 solve misses by 2^-55 or
// more, so the test tells the two apart.
func TestSolveDoubleWord(t *testing.T) {
	const n = 40
	r := rand.New(rand.NewPCG(5, 6))
	a := randomMatrix(9, n, centered)
	for i := 0; i < n; i++ {
		a[i*n+i] += 4
	}
	for _, f := range []lu.Form{lu.Scalar(format.Binary64), mustForm(t, "tc16", "v100", "")} {
		fa, err := lu.Factor(context.Background(), f, n, a, lu.Options{NB: 8})
		if err != nil {
			t.Fatal(err)
		}
		hi, lo := make([]float64, n), make([]float64, n)
		b := make([]*big.Float, n)
		for i := range hi {
			hi[i] = r.Float64() - 0.5
			lo[i] = hi[i] * 0x1p-60 * (r.Float64() - 0.5)
			b[i] = new(big.Float).SetPrec(400).SetFloat64(hi[i])
			b[i].Add(b[i], big.NewFloat(lo[i]))
		}
		plain := append([]float64(nil), hi...)
		if err := fa.Solve(plain); err != nil {
			t.Fatal(err)
		}
		if err := fa.SolveDoubleWord(hi, lo); err != nil {
			t.Fatal(err)
		}
		want := bigSolve(fa, b)
		var norm, errDW, errPlain float64
		for i := range want {
			w, _ := want[i].Float64()
			norm = math.Max(norm, math.Abs(w))
			d := new(big.Float).Sub(want[i], big.NewFloat(hi[i]))
			d.Sub(d, big.NewFloat(lo[i]))
			e, _ := d.Float64()
			errDW = math.Max(errDW, math.Abs(e))
			d.Sub(want[i], big.NewFloat(plain[i]))
			e, _ = d.Float64()
			errPlain = math.Max(errPlain, math.Abs(e))
		}
		if errDW > 0x1p-100*norm {
			t.Errorf("%s: double-word solve off by %g of ‖x‖ = %g", f.Name, errDW/norm, norm)
		}
		if errPlain < 0x1p-60*norm {
			t.Errorf("%s: the fp64 solve is off by only %g: the test cannot tell the two apart", f.Name, errPlain/norm)
		}
	}
	fa, _ := lu.Factor(context.Background(), lu.Scalar(format.Binary64), 2, []float64{1, 2, 3, 4}, lu.Options{})
	if err := fa.SolveDoubleWord(make([]float64, 2), make([]float64, 3)); err == nil {
		t.Error("vectors of unequal length accepted")
	}
}
