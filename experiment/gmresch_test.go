package experiment

import (
	"context"
	"strings"
	"testing"
)

// Carson and Higham's Figure 10.1 case (randsvd mode 2, κ₂ = 10^9, n =
// 100): GMRES-IR with the products in extended precision converges to
// errors of order 2^-53 within three steps from every factorization.
func TestGMRESIRCHFigure101(t *testing.T) {
	m := chMatrices[0]
	if m.spec.Mode != OneSmall || m.spec.Kappa != 1e9 {
		t.Fatalf("first history %+v, want mode 2 (one-small), κ = 1e9", m.spec)
	}
	refs := &refCache{m: map[string]*refEntry{}}
	for _, fc := range chForms {
		p := irPoint{spec: m.spec, key: "test " + m.spec.String(), seed: 1, n: chN, unit: "v100", refs: refs}
		steps, ferr, done, err := p.chSolve(context.Background(), fc.form, false)
		if err != nil {
			t.Fatal(err)
		}
		last := len(steps) - 1
		if !done || steps[last].Iteration > 3 || ferr[last] > 0x1p-52 {
			t.Errorf("%s: converged %v after %d steps, forward error %.3g", fc.series, done, steps[last].Iteration, ferr[last])
		}
		if ferr[0] < 1e-3 {
			t.Errorf("%s: the LU solution's forward error %.3g: the case is not ill-conditioned for the factors", fc.series, ferr[0])
		}
	}
}

// With a GMRES budget of n/4 iterations a step, fp16 factors of a
// geometric randsvd matrix far beyond 1/u16 do not converge, and the note
// names the budget as the reason.
func TestGMRESIRBudgetNote(t *testing.T) {
	p := irPoint{spec: MatrixSpec{Kind: "randsvd", Kappa: 1e8, Mode: Geometric}, key: "test budget", seed: 1, n: 64, unit: "v100",
		refs: &refCache{m: map[string]*refEntry{}}}
	rows, err := p.budgetRows(context.Background(), "fp16", "fp16")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rows[0].Note, "the GMRES budget ran out (a step used all 16 iterations)") {
		t.Errorf("note %q, want the GMRES budget named", rows[0].Note)
	}
}
