package mma

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/format"
)

// batchOnly hides Model.Dot so that Gemm takes the path of other units.
type batchOnly struct{ Unit }

func TestGemmMatchesDots(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	u, err := Lookup("t4", "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, dims := range [][3]int{{1, 1, 1}, {3, 5, 7}, {16, 16, 16}, {2, 9, 33}, {4, 1, 0}} {
		m, n, k := dims[0], dims[1], dims[2]
		lda, ldb, ldc := k+3, n+1, n+2
		a := make([]float64, m*lda)
		b := make([]float64, max(k, 1)*ldb)
		c := make([]float64, m*ldc)
		for i := range a {
			a[i] = randomIn(rng, format.Binary16, -6, 6)
		}
		for i := range b {
			b[i] = randomIn(rng, format.Binary16, -6, 6)
		}
		for i := range c {
			c[i] = randomIn(rng, format.Binary32, -6, 6)
		}
		want := append([]float64(nil), c...)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				col := make([]float64, k)
				for l := range col {
					col[l] = b[l*ldb+j]
				}
				want[i*ldc+j] = u.Dot(a[i*lda:i*lda+k], col, c[i*ldc+j])
			}
		}
		for _, unit := range []Unit{u, batchOnly{u}} {
			got := append([]float64(nil), c...)
			if err := Gemm(unit, m, n, k, a, lda, b, ldb, got, ldc); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%d×%d×%d (%T): element %d: got %x, want %x", m, n, k, unit, i, got[i], want[i])
				}
			}
		}
	}
}

func TestGemmPropagatesNaN(t *testing.T) {
	u, _ := Lookup("v100", "", "")
	a := []float64{1, math.NaN(), 2, 3} // 2×2
	b := []float64{0, 0, 0, 0}
	c := []float64{0, 0, 0, 0}
	if err := Gemm(u, 2, 2, 2, a, 2, b, 2, c, 2); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(c[0]) || !math.IsNaN(c[1]) || math.IsNaN(c[2]) || math.IsNaN(c[3]) {
		t.Errorf("NaN·0 should give NaN in row 0 only: %v", c)
	}
}

func TestGemmErrors(t *testing.T) {
	u, _ := Lookup("v100", "", "")
	s := make([]float64, 4)
	for _, tc := range []struct {
		m, n, k, lda, ldb, ldc int
		a, b, c                []float64
		want                   string
	}{
		{-1, 2, 2, 2, 2, 2, s, s, s, "negative"},
		{2, 2, 2, 1, 2, 2, s, s, s, "leading dimensions"},
		{2, 2, 3, 3, 2, 2, s, s, s, "A has 4 elements, needs 6"},
		{2, 2, 2, 2, 2, 2, s, s[:3], s, "B has 3"},
		{2, 2, 2, 2, 2, 2, s, s, s[:1], "C has 1"},
	} {
		err := Gemm(u, tc.m, tc.n, tc.k, tc.a, tc.lda, tc.b, tc.ldb, tc.c, tc.ldc)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc, err, tc.want)
		}
	}
	if err := u.Dots(2, s, s[:3], s[:2], s[:2]); err == nil {
		t.Error("Dots accepted a short b")
	}
}
