package solve_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/lu"
	"github.com/mwmm/mwmm/solve"
)

// AllSteps runs MaxIter steps past convergence; Iterate sees every
// iterate with its step, componentwise backward error included.
func TestAllStepsAndIterate(t *testing.T) {
	const n = 60
	a, b := system(2, n)
	var seen []solve.Step
	opt := solve.Options{MaxIter: 7, AllSteps: true, Residual: solve.DoubleWord, Precond: solve.DoubleWord,
		Iterate: func(s solve.Step, x []float64) {
			if len(x) != n {
				t.Fatalf("iterate of length %d", len(x))
			}
			seen = append(seen, s)
		}}
	_, rep, err := solve.System(context.Background(), form(t, "tc16", "v100"), n, a, b, lu.Options{}, opt, false)
	if err != nil {
		t.Fatalf("%v (%+v)", err, rep.Steps)
	}
	if len(rep.Steps) != 8 || len(seen) != 8 || !rep.Converged {
		t.Fatalf("%d steps (%d seen), converged %v; want 8 steps: %+v", len(rep.Steps), len(seen), rep.Converged, rep.Steps)
	}
	for i, s := range seen {
		if s != rep.Steps[i] {
			t.Errorf("step %d: Iterate saw %+v, the report has %+v", i, s, rep.Steps[i])
		}
		// ω ≥ η up to the residual's rounding: |r|_i ≤ ω(|A||x|+|b|)_i
		// and ‖|A||x|+|b|‖∞ ≤ ‖A‖∞‖x‖∞ + ‖b‖∞.
		if !(s.Componentwise > 0) || s.Componentwise < s.BackwardError*(1-1e-12) {
			t.Errorf("step %d: componentwise %g below normwise %g", i, s.Componentwise, s.BackwardError)
		}
	}
	// Without AllSteps the same solve stops at the tolerance.
	opt.AllSteps, opt.Iterate = false, nil
	_, rep2, err := solve.System(context.Background(), form(t, "tc16", "v100"), n, a, b, lu.Options{}, opt, false)
	if err != nil || len(rep2.Steps) >= len(rep.Steps) {
		t.Errorf("without AllSteps: %d steps, %v", len(rep2.Steps), err)
	}
}

// Double-word preconditioned products need A as a matrix and factors that
// solve in double-word arithmetic.
func TestPrecondDoubleWordRefused(t *testing.T) {
	const n = 20
	a, b := system(4, n)
	fa, err := lu.Factor(context.Background(), form(t, "fp32", ""), n, a, lu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	op := &colMajor{n: n, a: columnMajor(n, a)}
	_, _, err = solve.RefineOperator(context.Background(), op, b, fa, solve.Options{Precond: solve.DoubleWord})
	if err == nil || !strings.Contains(err.Error(), "need A as a matrix") {
		t.Errorf("operator A: %v", err)
	}
	_, _, err = solve.Refine(context.Background(), n, a, b, &countingFactors{Factorization: fa}, solve.Options{Precond: solve.DoubleWord})
	if err == nil || !strings.Contains(err.Error(), "double-word") {
		t.Errorf("factors without SolveDoubleWord: %v", err)
	}
}
