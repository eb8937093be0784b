package solve_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/mwmm/mwmm/lu"
	"github.com/mwmm/mwmm/solve"
)

// MaxIter: NoSteps gives the LU solution alone, under the method asked
// for; 0 still takes the default (20), which fp16 factors need here.
func TestNoSteps(t *testing.T) {
	n := 40
	a, b := system(5, n)
	f := form(t, "fp16", "")
	ctx := context.Background()
	for _, m := range []solve.Method{solve.Auto, solve.IR, solve.GMRES} {
		x, rep, err := solve.System(ctx, f, n, a, b, lu.Options{}, solve.Options{Refine: m, MaxIter: solve.NoSteps}, false)
		if !errors.Is(err, solve.ErrNotConverged) {
			t.Fatalf("%s, NoSteps: err %v; fp16 factors do not reach fp64's tolerance without refinement", m, err)
		}
		if rep.Refine != m || rep.Outer != 0 || len(rep.Steps) != 1 || rep.Steps[0].Iteration != 0 || rep.Converged {
			t.Errorf("%s, NoSteps: report %+v; want the method kept and step 0 alone", m, rep)
		}
		if rep.Stop != "a limit of 0 refinement steps" {
			t.Errorf("%s, NoSteps: stop %q", m, rep.Stop)
		}
		// The same x as the LU solution without refinement.
		plain, _, _ := solve.System(ctx, f, n, a, b, lu.Options{}, solve.Options{Refine: solve.None}, false)
		if !slices.Equal(x, plain) {
			t.Errorf("%s, NoSteps: x is not the LU solution", m)
		}
	}
	_, rep, err := solve.System(ctx, f, n, a, b, lu.Options{}, solve.Options{Refine: solve.IR}, false)
	if err != nil || rep.Outer == 0 {
		t.Errorf("MaxIter 0 (the default): err %v, %d steps; want convergence after some steps", err, rep.Outer)
	}
	// NoSteps with AllSteps: the history is step 0, converged if it
	// meets the tolerance.
	_, rep, err = solve.System(ctx, form(t, "fp64", ""), n, a, b, lu.Options{}, solve.Options{MaxIter: solve.NoSteps, AllSteps: true, Tol: 1e-10}, false)
	if err != nil || !rep.Converged || len(rep.Steps) != 1 {
		t.Errorf("fp64, NoSteps, AllSteps: err %v, report %+v", err, rep)
	}
	for _, bad := range []int{solve.NoSteps - 1, -100} {
		if _, _, err := solve.System(ctx, f, n, a, b, lu.Options{}, solve.Options{MaxIter: bad}, false); err == nil || errors.Is(err, solve.ErrNotConverged) {
			t.Errorf("MaxIter %d: err %v; want it refused", bad, err)
		}
	}
}
