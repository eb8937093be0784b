package lu_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/lu"
)

// bigMultipliers builds A = L·U with L unit lower triangular of entries in
// {0, ±1, ±2} and U upper triangular of small integers with 1, 2 or 4 on
// its diagonal: partial pivoting must swap rows (multipliers of 2), while
// elimination without pivoting meets only exact operations in every form
// (integers below 256, divisions by powers of two) and must return L and
// U themselves.
func bigMultipliers(n int) (a, l, u []float64) {
	r := rand.New(rand.NewPCG(uint64(n), 11))
	l, u = make([]float64, n*n), make([]float64, n*n)
	for i := 0; i < n; i++ {
		l[i*n+i] = 1
		for j := 0; j < i; j++ {
			l[i*n+j] = float64(r.IntN(5) - 2)
		}
		for j := i + 1; j < n; j++ {
			u[i*n+j] = float64(r.IntN(7) - 3)
		}
		u[i*n+i] = []float64{1, 2, 4}[r.IntN(3)]
	}
	a = make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			for k := 0; k <= min(i, j); k++ {
				a[i*n+j] += l[i*n+k] * u[k*n+j]
			}
		}
	}
	return a, l, u
}

func TestNoPivotingExactFactors(t *testing.T) {
	const n = 10
	a, l, u := bigMultipliers(n)
	for _, v := range a {
		if v > 255 || v < -255 {
			t.Fatalf("entry %v of A is not exact in bf16", v)
		}
	}
	forms := []lu.Form{
		mustForm(t, "fp64", "", ""), mustForm(t, "fp32", "", ""), mustForm(t, "fp16", "", ""),
		mustForm(t, "bf16", "", ""), mustForm(t, "tc16", "v100", ""), mustForm(t, "tc32", "v100", ""),
		mustForm(t, "tc32", "h100", ""), mustForm(t, "double-fp16-fabsum", "v100", ""),
	}
	for _, f := range forms {
		for _, nb := range []int{1, 3, 4, 32} {
			got, err := lu.Factor(context.Background(), f, n, a, lu.Options{NB: nb, Pivot: lu.NoPivoting})
			if err != nil {
				t.Fatalf("%s nb=%d: %v", f.Name, nb, err)
			}
			for i := 0; i < n; i++ {
				if got.Piv[i] != i {
					t.Fatalf("%s nb=%d: row %d swapped with %d without pivoting", f.Name, nb, i, got.Piv[i])
				}
				for j := 0; j < n; j++ {
					want := u[i*n+j]
					if j < i {
						want = l[i*n+j]
					}
					if got.LU[i*n+j] != want {
						t.Fatalf("%s nb=%d: (%d,%d) = %v, want %v", f.Name, nb, i, j, got.LU[i*n+j], want)
					}
				}
			}
		}
	}
	// The same matrix with partial pivoting: multipliers of 2 force swaps.
	got, err := lu.Factor(context.Background(), lu.Scalar(format.Binary64), n, a, lu.Options{NB: 3})
	if err != nil {
		t.Fatal(err)
	}
	swaps := 0
	for i, p := range got.Piv {
		if p != i {
			swaps++
		}
	}
	if swaps == 0 {
		t.Error("partial pivoting swapped no rows of a matrix with multipliers of 2")
	}
}

func TestNoPivotingZeroPivot(t *testing.T) {
	// [[0 1] [1 0]]: partial pivoting swaps and succeeds; without pivoting
	// the first pivot is zero.
	a := []float64{0, 1, 1, 0}
	f64 := lu.Scalar(format.Binary64)
	if _, err := lu.Factor(context.Background(), f64, 2, a, lu.Options{}); err != nil {
		t.Fatalf("partial pivoting: %v", err)
	}
	_, err := lu.Factor(context.Background(), f64, 2, a, lu.Options{Pivot: lu.NoPivoting})
	var se *lu.SingularError
	if !errors.As(err, &se) || se.Column != 0 {
		t.Fatalf("without pivoting: %v, want a zero pivot in column 1", err)
	}
	if _, err := lu.Factor(context.Background(), f64, 2, a, lu.Options{Pivot: lu.NoPivoting + 1}); err == nil {
		t.Error("an unknown pivoting accepted")
	}
}

func TestParsePivoting(t *testing.T) {
	for _, p := range []lu.Pivoting{lu.PartialPivoting, lu.NoPivoting} {
		if got, err := lu.ParsePivoting(" " + p.String() + " "); err != nil || got != p {
			t.Errorf("ParsePivoting(%q) = %v, %v", p.String(), got, err)
		}
	}
	if _, err := lu.ParsePivoting("butterfly"); err == nil {
		t.Error("butterfly accepted on the CPU")
	}
}
