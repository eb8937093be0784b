package dist

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/mwmm/mwmm/gpu/internal/gputest"
	"github.com/mwmm/mwmm/solve"
)

// On every grid the double-word residual, System's (host vectors) and the
// Resident's (on the first GPU), is within a unit in the last place of
// the exact one where fp64's has lost its digits; the two agree bit for
// bit; and refinement with AutoResidual turns to it and goes below the
// backward error that fp64 residuals reach.
func TestResidualDoubleWordGrids(t *testing.T) {
	for _, g := range halfGrids(t) {
		const n = 1000
		tm, a, s, f := halfFactored(t, g, n, 3)
		b := make([]float64, n)
		for i := range b {
			b[i] = math.Sin(float64(i))
		}
		opt := solve.Options{Refine: solve.IR, Tol: 1e-300, MaxIter: 12}
		x64, _, err := solve.RefineOperator(context.Background(), s, b, f, opt)
		if !errors.Is(err, solve.ErrNotConverged) {
			t.Fatalf("%v: %v", g, err)
		}
		got, y := make([]float64, n), make([]float64, n)
		if err := errors.Join(s.ResidualDoubleWord(x64, b, got), s.MulVec(x64, y)); err != nil {
			t.Fatal(err)
		}
		if worst := gputest.CheckResidual(t, n, a, x64, b, got, y); worst < 1e-3 {
			t.Errorf("%v: fp64's residual within %.3g of the exact one", g, worst)
		}

		res, err := f.NewResident(s, b)
		if err != nil {
			t.Fatal(err)
		}
		gputest.CheckResidentResidual(t, res, n, a, b, s.ResidualDoubleWord)
		res.Free()

		opt.Residual = solve.AutoResidual
		xa, rep, err := solve.RefineOperator(context.Background(), s, b, f, opt)
		if !errors.Is(err, solve.ErrNotConverged) {
			t.Fatalf("%v: %v", g, err)
		}
		dws := 0
		for _, st := range rep.Steps {
			if st.DoubleWord {
				dws++
			}
		}
		if ba, b64 := solve.BackwardError(n, a, xa, b), solve.BackwardError(n, a, x64, b); dws == 0 || !(ba < b64) {
			t.Errorf("%v: %d double-word steps; backward error %.3g, with fp64 residuals %.3g", g, dws, ba, b64)
		}
		f.Free()
		s.Free()
		tm.Close()
	}
}
