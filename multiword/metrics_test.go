package multiword_test

import (
	"math"
	"testing"

	"github.com/mwmm/mwmm/multiword"
)

func TestErrors(t *testing.T) {
	// C = [1 1]·[1; -3] = -2 and [1 1]·[1; 1] = 2; |A||B| = 4 and 2.
	a := []float64{1, 1}
	b := []float64{1, 1, -3, 1}
	c := []float64{-2 + 0x1p-8, 2 + 0x1p-9}
	cw, nw := multiword.Errors(1, 2, 2, a, b, c)
	if cw != 0x1p-10 { // max(2^-8/4, 2^-9/2)
		t.Errorf("componentwise = %g, want 2^-10", cw)
	}
	if want := math.Hypot(0x1p-8, 0x1p-9) / math.Sqrt(8); nw != want {
		t.Errorf("normwise = %g, want %g", nw, want)
	}
	if cw, _ := multiword.Errors(1, 1, 1, []float64{0}, []float64{1}, []float64{1e-300}); !math.IsInf(cw, 1) {
		t.Errorf("inexact element with |A||B| = 0: componentwise %g, want +Inf", cw)
	}
}
