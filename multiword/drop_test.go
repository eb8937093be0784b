package multiword_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mwmm/mwmm/multiword"
	"github.com/mwmm/mwmm/multiword/multiwordtest"
)

// Section 3 of Fasi et al.: computing A_2B_2 as well (4 products instead of
// 3) leaves the error of double-fp16 unchanged — the curves could not be
// told apart. Here the two errors agree within 10% and one rounding of the
// output (the term A_2B_2 is of
// order u_low² = 2^-22 relative, against errors of n·2^-24 and more).
func TestDroppingA2B2(t *testing.T) {
	tri, err := multiword.Lookup("double-fp16")
	if err != nil {
		t.Fatal(err)
	}
	all, err := multiword.Lookup("double-fp16:products=all")
	if err != nil {
		t.Fatal(err)
	}
	v100, err := multiword.Open("model:v100")
	if err != nil {
		t.Fatal(err)
	}
	ks := []int{512, 4096}
	if testing.Short() {
		ks = ks[:1]
	}
	rng := rand.New(rand.NewPCG(21, 22))
	const m, n = 16, 16
	for _, e := range []multiword.Engine{multiword.Reference{}, v100} {
		for _, d := range distributions[:2] {
			for _, k := range ks {
				a, b := d.matrix(rng, m*k), d.matrix(rng, k*n)
				c3, c4 := make([]float64, m*n), make([]float64, m*n)
				if err := e.Multiply(tri, m, n, k, a, b, c3); err != nil {
					t.Fatal(err)
				}
				if err := e.Multiply(all, m, n, k, a, b, c4); err != nil {
					t.Fatal(err)
				}
				e3 := multiwordtest.Componentwise(m, n, k, a, b, c3)
				e4 := multiwordtest.Componentwise(m, n, k, a, b, c4)
				t.Logf("%s %s k=%d: 3 products %.3g, 4 products %.3g", e.Name(), d.name, k, e3, e4)
				// Noise: 10%, and one rounding of the fp32 output.
				if math.Abs(e3-e4) > 0.1*max(e3, e4)+0x1p-24 {
					t.Errorf("%s %s k=%d: error with A_2B_2 %.3g, without %.3g: should agree within 10%%", e.Name(), d.name, k, e4, e3)
				}
			}
		}
	}
}
