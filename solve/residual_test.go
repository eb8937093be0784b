package solve_test

import (
	"context"
	"errors"
	"math"
	"math/big"
	"testing"

	"github.com/mwmm/mwmm/lu"
	"github.com/mwmm/mwmm/solve"
)

// exactOp is colMajor that also computes residuals exactly (math/big),
// rounded once: a DoubleWordOperator whose residuals are at least as
// accurate as double-word ones.
type exactOp struct {
	colMajor
	dwCalls int
}

func (e *exactOp) ResidualDoubleWord(x, b, r []float64) error {
	e.dwCalls++
	for i := range r {
		s := new(big.Float).SetPrec(2200).SetFloat64(b[i])
		for j := 0; j < e.n; j++ {
			p := new(big.Float).SetPrec(2200).SetFloat64(e.a[i+j*e.n])
			p.Mul(p, new(big.Float).SetFloat64(x[j]))
			s.Sub(s, p)
		}
		r[i], _ = s.Float64()
	}
	return nil
}

func dwSteps(rep solve.Report) (fp64, dw int, ordered bool) {
	ordered = true
	for _, s := range rep.Steps {
		if s.DoubleWord {
			dw++
		} else {
			fp64++
			ordered = ordered && dw == 0
		}
	}
	return fp64, dw, ordered
}

// AutoResidual refines in fp64 while that resolves the backward error,
// so that a system whose tolerance lies above the floor takes the same
// steps as with fp64 residuals, and turns to double-word residuals near
// the floor: then the iterate reaches a backward error that fp64
// residuals do not (Hilbert(10), κ ≈ 1.6e13, fp32 factors).
func TestAutoResidual(t *testing.T) {
	ctx := context.Background()
	n := 120
	a, b := system(3, n)
	f := form(t, "tc32", "v100")
	_, want, err := solve.System(ctx, f, n, a, b, lu.Options{}, solve.Options{}, false)
	if err != nil {
		t.Fatal(err)
	}
	_, got, err := solve.System(ctx, f, n, a, b, lu.Options{}, solve.Options{Residual: solve.AutoResidual}, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, dw, _ := dwSteps(got); dw != 0 || len(got.Steps) != len(want.Steps) || got.BackwardError != want.BackwardError || got.Residual != "auto" {
		t.Errorf("far from the floor: auto %v (%d double-word, residual %q), fp64 %v", steps(got), dw, got.Residual, steps(want))
	}

	n = 10
	h := hilbert(n)
	hb := make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			hb[i] += h[i*n+j]
		}
	}
	opt := solve.Options{Tol: 1e-300, MaxIter: 10}
	fp32 := form(t, "fp32", "")
	plain, _, _ := solve.System(ctx, fp32, n, h, hb, lu.Options{}, opt, false)
	opt.Residual = solve.AutoResidual
	auto, rep, err := solve.System(ctx, fp32, n, h, hb, lu.Options{}, opt, false)
	if !errors.Is(err, solve.ErrNotConverged) {
		t.Fatalf("auto: %v", err)
	}
	fp, dw, ordered := dwSteps(rep)
	if fp == 0 || dw == 0 || !ordered {
		t.Errorf("auto on Hilbert(10): %d fp64 steps, then %d double-word (ordered %v): %v", fp, dw, ordered, steps(rep))
	}
	// Both measured alike, in double-word arithmetic.
	if ba, bp := solve.BackwardError(n, h, auto, hb), solve.BackwardError(n, h, plain, hb); !(ba <= bp/2) {
		t.Errorf("backward error with auto residuals %.3g, with fp64 ones %.3g", ba, bp)
	} else {
		t.Logf("backward error with auto residuals %.3g, with fp64 ones %.3g", ba, bp)
	}
}

// Through an operator, AutoResidual stays in fp64 unless the operator
// computes double-word residuals, and DoubleWord is refused only then.
func TestAutoResidualOperator(t *testing.T) {
	ctx := context.Background()
	n := 40
	a, b := system(7, n)
	fa, err := lu.Factor(ctx, form(t, "fp32", ""), n, a, lu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opt := solve.Options{Residual: solve.AutoResidual, Tol: 1e-300, MaxIter: 6}
	plain := &colMajor{n: n, a: columnMajor(n, a)}
	if _, rep, err := solve.RefineOperator(ctx, plain, b, fa, opt); !errors.Is(err, solve.ErrNotConverged) {
		t.Errorf("fp64-only operator: %v", err)
	} else if _, dw, _ := dwSteps(rep); dw != 0 {
		t.Errorf("fp64-only operator: %d double-word steps", dw)
	}
	op := &exactOp{colMajor: colMajor{n: n, a: columnMajor(n, a)}}
	_, rep, err := solve.RefineOperator(ctx, op, b, fa, opt)
	if !errors.Is(err, solve.ErrNotConverged) {
		t.Fatalf("double-word operator: %v", err)
	}
	if fp, dw, ordered := dwSteps(rep); fp == 0 || dw == 0 || !ordered || op.dwCalls != dw {
		t.Errorf("double-word operator: %d fp64 steps, %d double-word (ordered %v), %d calls", fp, dw, ordered, op.dwCalls)
	}
	opt.Residual, op.dwCalls = solve.DoubleWord, 0
	if _, rep, err := solve.RefineOperator(ctx, op, b, fa, opt); !errors.Is(err, solve.ErrNotConverged) || op.dwCalls != len(rep.Steps) {
		t.Errorf("DoubleWord through a double-word operator: %v, %d calls for %d steps", err, op.dwCalls, len(rep.Steps))
	}
	if be, err := solve.OperatorBackwardError(op, b, b); err != nil || math.Abs(be-solve.BackwardError(n, a, b, b)) > 1e-14*be {
		t.Errorf("OperatorBackwardError %v %v, BackwardError %v", be, err, solve.BackwardError(n, a, b, b))
	}
	opt.Precond = solve.AutoResidual
	if _, _, err := solve.RefineOperator(ctx, op, b, fa, opt); err == nil {
		t.Error("Precond AutoResidual: no error")
	}
}

// noisyOp's fp64 products carry relative errors of 10^-10 whose signs
// change from call to call, as rounding errors change with x: a floor for
// fp64 residuals far above ResidualFloor. Its double-word ones are exact.
type noisyOp struct{ exactOp }

func (o *noisyOp) MulVec(x, y []float64) error {
	if err := o.colMajor.MulVec(x, y); err != nil {
		return err
	}
	for i := range y {
		y[i] *= 1 + 1e-10*float64(1-2*((i*7+o.calls*3)/5%2))
	}
	return nil
}

// Where fp64 residuals stall above DoubleWordFrom (but below
// StallDoubleWordFrom), AutoResidual turns to double-word ones at the
// stall and converges; fp64 residuals alone stall there.
func TestAutoResidualAtAStall(t *testing.T) {
	ctx := context.Background()
	n := 120
	a, b := system(11, n)
	fa, err := lu.Factor(ctx, form(t, "fp32", ""), n, a, lu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	op := &noisyOp{exactOp{colMajor: colMajor{n: n, a: columnMajor(n, a)}}}
	if _, rep, err := solve.RefineOperator(ctx, op, b, fa, solve.Options{Refine: solve.IR}); !errors.Is(err, solve.ErrNotConverged) {
		t.Fatalf("fp64 residuals: %v, %v", err, steps(rep))
	}
	x, rep, err := solve.RefineOperator(ctx, op, b, fa, solve.Options{Refine: solve.IR, Residual: solve.AutoResidual})
	if err != nil {
		t.Fatalf("auto: %v, %v", err, steps(rep))
	}
	fp, dw, ordered := dwSteps(rep)
	last := rep.Steps[fp-1].BackwardError
	if fp < 2 || dw == 0 || !ordered || last <= solve.DoubleWordFrom || last > solve.StallDoubleWordFrom {
		t.Errorf("%d fp64 steps (the last at %.3g), %d double-word: %v", fp, last, dw, steps(rep))
	}
	if be := solve.BackwardError(n, a, x, b); be > rep.Tol {
		t.Errorf("backward error %.3g, tolerance %.3g", be, rep.Tol)
	}
}
