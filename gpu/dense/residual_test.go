package dense

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/mwmm/mwmm/gpu/internal/gputest"
	"github.com/mwmm/mwmm/solve"
)

// The device's double-word residual (System.ResidualDoubleWord and the
// Resident's) is within a unit in the last place of the exact residual,
// rounded, plus n²·2^-104 of |A|·|x| + |b|, at an iterate where fp64's
// residual has lost its digits to cancellation; the Resident's equals the
// System's bit for bit and reports a NaN in x.
func TestResidualDoubleWord(t *testing.T) {
	e := engineGPU(t)
	const n = 777
	a := weaklyDominant(n, 77)
	s, err := e.NewSystem(n, a)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Free()
	f, _ := ParseLUForm("fp64")
	fa, err := s.Factor(f)
	if err != nil {
		t.Fatal(err)
	}
	defer fa.Free()
	b := rhs(n)
	x := append([]float64(nil), b...)
	if err := fa.Solve(x); err != nil {
		t.Fatal(err)
	}
	got, y := make([]float64, n), make([]float64, n)
	if err := s.ResidualDoubleWord(x, b, got); err != nil {
		t.Fatal(err)
	}
	if err := s.MulVec(x, y); err != nil {
		t.Fatal(err)
	}
	if worst64 := gputest.CheckResidual(t, n, a, x, b, got, y); worst64 < 1e-3 {
		t.Errorf("fp64's residual within %.3g of the exact one: the test would not see double-word's gain", worst64)
	}

	res, err := fa.NewResident(s, b)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Free()
	gputest.CheckResidentResidual(t, res, n, a, b, s.ResidualDoubleWord)
	d := make([]float64, n)
	d[n-1] = math.NaN()
	if err := res.Add(d); err != nil {
		t.Fatal(err)
	}
	if nr, nx, err := res.(solve.DoubleWordResident).ResidualDoubleWord(); err != nil || !math.IsNaN(nr) || !math.IsNaN(nx) {
		t.Errorf("a NaN in x: norms %v, %v (%v)", nr, nx, err)
	}
}

// With AutoResidual and a tolerance below fp64 residuals' floor,
// refinement on the device turns to double-word residuals and ends at a
// smaller backward error (measured alike, here) than with fp64 ones.
func TestRefineAutoResidual(t *testing.T) {
	e := engineGPU(t)
	const n = 1000
	a := weaklyDominant(n, 5)
	fa := halfFactors(t, e, n, a)
	s := fa.s
	b := rhs(n)
	opt := solve.Options{Refine: solve.IR, Tol: 1e-300, MaxIter: 12}
	x64, _, err := solve.RefineOperator(context.Background(), s, b, fa, opt)
	if !errors.Is(err, solve.ErrNotConverged) {
		t.Fatal(err)
	}
	opt.Residual = solve.AutoResidual
	xa, rep, err := solve.RefineOperator(context.Background(), s, b, fa, opt)
	if !errors.Is(err, solve.ErrNotConverged) {
		t.Fatal(err)
	}
	first := -1
	for i, st := range rep.Steps {
		if st.DoubleWord && first < 0 {
			first = i
		}
		if first >= 0 && !st.DoubleWord {
			t.Errorf("step %d in fp64 after double-word from %d", i, first)
		}
	}
	b64, ba := solve.BackwardError(n, a, x64, b), solve.BackwardError(n, a, xa, b)
	if first <= 0 || !(ba < b64) {
		t.Errorf("double-word from step %d of %d; backward error %.3g, with fp64 residuals %.3g", first, len(rep.Steps), ba, b64)
	}
	t.Logf("double-word from step %d of %d; backward error %.3g, with fp64 residuals %.3g", first, len(rep.Steps), ba, b64)
}

// Refinement's vectors, kept by the Solver from one refinement to the
// next, carry nothing over: a second system's refinement takes the steps
// and reaches the x that host vectors give.
func TestResidentVectorsReuse(t *testing.T) {
	e := engineGPU(t)
	const n = 900
	a := weaklyDominant(n, 9)
	fa := halfFactors(t, e, n, a)
	opt := solve.Options{Refine: solve.IR}
	b1, b2 := rhs(n), make([]float64, n)
	for i := range b2 {
		b2[i] = math.Cos(float64(3 * i))
	}
	if _, _, err := solve.RefineOperator(context.Background(), fa.s, b1, fa, opt); err != nil {
		t.Fatal(err)
	}
	x, rep, err := solve.RefineOperator(context.Background(), fa.s, b2, fa, opt)
	if err != nil {
		t.Fatal(err)
	}
	want, wrep, err := solve.RefineOperator(context.Background(), fa.s, b2, hostVectors{fa}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outer != wrep.Outer || solve.BackwardError(n, a, x, b2) > rep.Tol {
		t.Errorf("kept vectors: %d steps to %.3g; host vectors %d to %.3g", rep.Outer, rep.BackwardError, wrep.Outer, wrep.BackwardError)
	}
	for i := range x {
		if d := math.Abs(x[i] - want[i]); d > 1e-12*(1+math.Abs(want[i])) {
			t.Fatalf("x[%d] = %v, host vectors' %v", i, x[i], want[i])
		}
	}
}
