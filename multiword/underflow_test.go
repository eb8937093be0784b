package multiword_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/multiword"
)

// lossMatrix is 5×8: a row of 1e-40s (nothing of it survives in fp16), a
// row of ones with one 1e-10 (lost, but negligible beside the ones), a row
// of zeros, a row of 1e-6s (fp16 subnormals: a few percent off), and a row
// of NaN and ±Inf (skipped).
func lossMatrix() []float64 {
	rows := [][]float64{
		{1e-40, 1e-40, 1e-40, 1e-40, 1e-40, 1e-40, 1e-40, 1e-40},
		{1, 1, 1, 1e-10, 1, 1, 1, 1},
		{0, 0, 0, 0, 0, 0, 0, 0},
		{1e-6, 1e-6, 1e-6, 1e-6, 1e-6, 1e-6, 1e-6, 1e-6},
		{math.NaN(), math.Inf(1), math.Inf(-1), 0, 0, 0, 0, 0},
	}
	var a []float64
	for _, r := range rows {
		a = append(a, r...)
	}
	return a
}

func transpose(a []float64, m, k int) []float64 {
	t := make([]float64, len(a))
	for i := 0; i < m; i++ {
		for j := 0; j < k; j++ {
			t[j*m+i] = a[i*k+j]
		}
	}
	return t
}

func TestUnderflowRowsAndCols(t *testing.T) {
	a := lossMatrix()
	for _, c := range []struct {
		variant string
		want    int
	}{
		{"double-fp16", 2},        // the 1e-40s and the 1e-6s
		{"double-fp16-fabsum", 0}, // scaled rows: every row lands in fp16's range
		{"fp32", 1},               // 1e-40 is a float32 subnormal (spacing 1.4e-45); 1e-6 is normal
		{"double-bf16", 1},        // float32's range, subnormals 2^-133 ≈ 9e-41 apart
	} {
		p, err := multiword.Lookup(c.variant)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.UnderflowRows(a, 5, 8); got != c.want {
			t.Errorf("%s: UnderflowRows = %d, want %d", c.variant, got, c.want)
		}
		if got := p.UnderflowCols(transpose(a, 5, 8), 8, 5); got != c.want {
			t.Errorf("%s: UnderflowCols of the transpose = %d, want %d", c.variant, got, c.want)
		}
	}
}

// On rows whose magnitudes span many binades, UnderflowRows agrees with
// the words Split returns: a row counts when Σ|x − Σ_i 2^(−t·i) w_i| > 4u^p Σ|x|.
func TestUnderflowRowsAgreesWithSplit(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const m, k = 200, 6
	a := make([]float64, m*k)
	for i := range a {
		a[i] = math.Ldexp(r.Float64(), -r.IntN(40)-int(i/k)%10*3)
	}
	for _, variant := range []string{"double-fp16", "fp16", "e4m3", "double-e5m2"} {
		p, err := multiword.Lookup(variant)
		if err != nil {
			t.Fatal(err)
		}
		p.Scale = false
		words := multiword.Split(a, p.Low, p.Words, p.SplitMode, p.WordShift, nil)
		tol := 4 * math.Pow(bound.U(p.Low, p.SplitMode), float64(p.Words))
		want := 0
		for i := 0; i < m; i++ {
			var mag, miss float64
			for j := 0; j < k; j++ {
				e := i*k + j
				sum := 0.0
				for w := range words {
					sum += math.Ldexp(words[w][e], -p.WordShift*w)
				}
				mag += math.Abs(a[e])
				miss += math.Abs(a[e] - sum)
			}
			if miss > tol*mag {
				want++
			}
		}
		if want == 0 || want == m {
			t.Fatalf("%s: %d of %d rows lossy: the data does not discriminate", variant, want, m)
		}
		if got := p.UnderflowRows(a, m, k); got != want {
			t.Errorf("%s: UnderflowRows = %d, Split's words give %d", variant, got, want)
		}
	}
}
