package solve

import (
	"context"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/mwmm/mwmm/lu"
)

// bigPreconditioned is Û⁻¹L̂⁻¹P·A·v in 400-bit arithmetic.
func bigPreconditioned(fa *lu.Factors, a, v []float64) []*big.Float {
	n := fa.N
	f := func(x float64) *big.Float { return new(big.Float).SetPrec(400).SetFloat64(x) }
	y := make([]*big.Float, n)
	t := new(big.Float).SetPrec(400)
	for i := range y {
		y[i] = f(0)
		for j := 0; j < n; j++ {
			y[i].Add(y[i], t.Mul(f(a[i*n+j]), f(v[j])))
		}
	}
	for i, q := range fa.Piv {
		y[i], y[q] = y[q], y[i]
	}
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			y[i].Sub(y[i], t.Mul(f(fa.LU[i*n+j]), y[j]))
		}
	}
	for i := n - 1; i >= 0; i-- {
		for j := i + 1; j < n; j++ {
			y[i].Sub(y[i], t.Mul(f(fa.LU[i*n+j]), y[j]))
		}
		y[i].Quo(y[i], f(fa.LU[i*n+i]))
	}
	return y
}

// The double-word preconditioned product is the 400-bit one rounded to
// fp64 up to an ulp; the fp64 one is not (on a matrix with cancellation
// in A·v it misses by far more).
func TestPreconditionedDoubleWord(t *testing.T) {
	const n = 30
	r := rand.New(rand.NewPCG(3, 4))
	a, v := make([]float64, n*n), make([]float64, n)
	for i := range a {
		a[i] = r.Float64() - 0.5
	}
	for i := range v {
		v[i] = r.Float64() - 0.5
	}
	// Rows nearly orthogonal to v: A·v cancels to about 1e-9 of its terms.
	for i := 0; i < n; i++ {
		row := a[i*n : (i+1)*n]
		s := 0.0
		for j := range row {
			s += row[j] * v[j]
		}
		row[i] -= (s - 1e-9*float64(i+1)) / v[i]
	}
	form, err := lu.ParseForm("fp32", "", "")
	if err != nil {
		t.Fatal(err)
	}
	fa, err := lu.Factor(context.Background(), form, n, a, lu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := bigPreconditioned(fa, a, v)
	worst := func(w []float64) float64 {
		e := 0.0
		for i := range w {
			x, _ := want[i].Float64()
			e = math.Max(e, math.Abs(w[i]-x)/math.Abs(x))
		}
		return e
	}
	dw, plain := make([]float64, n), make([]float64, n)
	if err := preconditioned(dense{n, a}, fa, true, v, dw); err != nil {
		t.Fatal(err)
	}
	if err := preconditioned(dense{n, a}, fa, false, v, plain); err != nil {
		t.Fatal(err)
	}
	if e := worst(dw); e > 0x1p-52 {
		t.Errorf("double-word product: relative error %g, want an ulp", e)
	}
	if e := worst(plain); e < 0x1p-40 {
		t.Errorf("fp64 product: relative error only %g, the case does not cancel", e)
	}
}

func TestComponentwiseBackwardError(t *testing.T) {
	// A = diag(2, 4), b = (2, 4), x = (1.5, 1): r = (−1, 0) and
	// |A||x| + |b| = (5, 8), so ω = 1/5.
	d := dense{2, []float64{2, 0, 0, 4}}
	x, b := []float64{1.5, 1}, []float64{2, 4}
	r := make([]float64, 2)
	residual(FP64, 2, d.a, x, b, r)
	if got := componentwiseBackwardError(d, r, x, b); got != 0.2 {
		t.Errorf("ω = %v, want 0.2", got)
	}
	// A zero row and b: 0/0 counts as 0.
	d = dense{2, []float64{1, 0, 0, 0}}
	x, b = []float64{1, 1}, []float64{1, 0}
	residual(FP64, 2, d.a, x, b, r)
	if got := componentwiseBackwardError(d, r, x, b); got != 0 {
		t.Errorf("ω = %v, want 0", got)
	}
}
