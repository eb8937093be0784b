package solve_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/lu"
	"github.com/mwmm/mwmm/solve"
)

func system(seed uint64, n int) (a, b []float64) {
	r := rand.New(rand.NewPCG(seed, 9))
	a = make([]float64, n*n)
	for i := range a {
		a[i] = 0.5 - r.Float64()
	}
	b = make([]float64, n)
	for i := range b {
		b[i] = 0.5 - r.Float64()
	}
	return a, b
}

func hilbert(n int) []float64 {
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			a[i*n+j] = 1 / float64(i+j+1)
		}
	}
	return a
}

func form(t *testing.T, name, unit string) lu.Form {
	t.Helper()
	f, err := lu.ParseForm(name, unit, "")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// GMRES-IR reaches fp64's backward error from every factorization on a
// well-conditioned system, and the more accurate the factors, the fewer
// GMRES iterations it takes.
func TestGMRESIREveryForm(t *testing.T) {
	n := 120
	a, b := system(1, n)
	type fc struct{ name, unit string }
	forms := []fc{{"fp16", ""}, {"bf16", ""}, {"tc16", "v100"}, {"tc32", "v100"}, {"tc32", "a100"},
		{"double-fp16-fabsum", "v100"}, {"fp32", ""}, {"fp64", ""}}
	iters := map[string]int{}
	for _, c := range forms {
		x, rep, err := solve.System(context.Background(), form(t, c.name, c.unit), n, a, b, lu.Options{}, solve.Options{}, false)
		if err != nil {
			t.Fatalf("%s: %v (%+v)", c.name, err, rep.Steps)
		}
		eta := solve.BackwardError(n, a, x, b)
		if eta > float64(n)*0x1p-53 || !rep.Converged || eta > rep.Tol*1.01 {
			t.Errorf("%s: backward error %.3g, report %+v", c.name, eta, rep)
		}
		iters[c.name+"/"+c.unit] = rep.GMRES
		t.Logf("%-20s outer %d gmres %3d backward errors %v", c.name+"/"+c.unit, rep.Outer, rep.GMRES, steps(rep))
	}
	if !(iters["double-fp16-fabsum/v100"] <= iters["tc32/v100"] && iters["tc32/v100"] <= iters["tc16/v100"]) {
		t.Errorf("GMRES iterations not ordered multiword ≤ tc32 ≤ tc16: %v", iters)
	}
	if iters["fp64/"] > iters["fp32/"] || iters["fp32/"] >= iters["fp16/"] {
		t.Errorf("GMRES iterations not ordered fp64 ≤ fp32 < fp16: %v", iters)
	}
}

func steps(r solve.Report) []float64 {
	var e []float64
	for _, s := range r.Steps {
		e = append(e, s.BackwardError)
	}
	return e
}

// The Hilbert matrix of order 8 has κ∞ ≈ 3.4e10: classical refinement from
// fp16 factors (κ·u16 ≫ 1) cannot converge and must say so, while GMRES-IR
// (κ·u16·u^½ < 1) does, and fp64 LU needs nothing more.
func TestIllConditioned(t *testing.T) {
	n := 8
	a := hilbert(n)
	b := make([]float64, n)
	for i := range b {
		b[i] = 1
	}
	ctx := context.Background()
	_, rep, err := solve.System(ctx, form(t, "fp16", ""), n, a, b, lu.Options{}, solve.Options{Refine: solve.IR}, false)
	if !errors.Is(err, solve.ErrNotConverged) || rep.Converged {
		t.Fatalf("fp16 LU-IR on Hilbert(8): err %v, report %+v", err, rep)
	}
	if !strings.Contains(err.Error(), "backward error") {
		t.Errorf("message does not say how far it got: %v", err)
	}
	x, rep, err := solve.System(ctx, form(t, "tc32", "v100"), n, a, b, lu.Options{}, solve.Options{Refine: solve.GMRES}, false)
	if err != nil {
		t.Fatalf("tc32 GMRES-IR on Hilbert(8): %v %v", err, steps(rep))
	}
	if eta := solve.BackwardError(n, a, x, b); eta > rep.Tol {
		t.Errorf("backward error %.3g above tolerance %.3g", eta, rep.Tol)
	}
	if _, _, err := solve.System(ctx, form(t, "fp64", ""), n, a, b, lu.Options{}, solve.Options{Refine: solve.None}, false); err != nil {
		t.Errorf("fp64 LU without refinement: %v", err)
	}
}

// The double-word residual gives a forward error of order u where the
// fp64 one leaves κ·u.
func TestDoubleWordResidual(t *testing.T) {
	n := 10
	a := hilbert(n) // κ ≈ 1.6e13
	xTrue := make([]float64, n)
	for i := range xTrue {
		xTrue[i] = 1
	}
	// b = A·1 is exact in double-word; its fp64 rounding moves the true
	// solution by at most κ·u, so measure against a refined solution.
	b := make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			b[i] += a[i*n+j]
		}
	}
	ctx := context.Background()
	ref, _, err := solve.System(ctx, form(t, "fp64", ""), n, a, b, lu.Options{}, solve.Options{Refine: solve.IR, Residual: solve.DoubleWord, Tol: 1e-300, MaxIter: 8}, false)
	if err == nil || !errors.Is(err, solve.ErrNotConverged) {
		t.Fatalf("tolerance 1e-300 cannot be met: %v", err)
	}
	plain, _, err := solve.System(ctx, form(t, "fp64", ""), n, a, b, lu.Options{}, solve.Options{Refine: solve.None, Tol: 1}, false)
	if err != nil {
		t.Fatal(err)
	}
	fe := func(x []float64) float64 {
		m := 0.0
		for i := range x {
			m = math.Max(m, math.Abs(x[i]-ref[i]))
		}
		return m
	}
	// The refined solution agrees with itself refined once more.
	again, _, _ := solve.System(ctx, form(t, "fp32", ""), n, a, b, lu.Options{}, solve.Options{Refine: solve.GMRES, Residual: solve.DoubleWord, Tol: 1e-300, MaxIter: 6}, false)
	if d := fe(again); d > 1e-12 {
		t.Errorf("two double-word refinements differ by %.3g", d)
	}
	if d := fe(plain); d < 1e-8 {
		t.Errorf("plain fp64 LU forward error %.3g: the Hilbert matrix should cost it digits", d)
	}
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	f := form(t, "fp32", "")
	a, b := system(3, 4)
	cases := map[string]func() error{
		"b too short": func() error {
			_, _, err := solve.System(ctx, f, 4, a, b[:3], lu.Options{}, solve.Options{}, false)
			return err
		},
		"A not square": func() error {
			_, _, err := solve.System(ctx, f, 4, a[:12], b, lu.Options{}, solve.Options{}, false)
			return err
		},
		"NaN in b": func() error {
			bb := append([]float64(nil), b...)
			bb[2] = math.NaN()
			_, _, err := solve.System(ctx, f, 4, a, bb, lu.Options{}, solve.Options{}, false)
			return err
		},
		"Inf in A": func() error {
			aa := append([]float64(nil), a...)
			aa[5] = math.Inf(-1)
			_, _, err := solve.System(ctx, f, 4, aa, b, lu.Options{}, solve.Options{}, false)
			return err
		},
		"NaN tolerance": func() error {
			_, _, err := solve.System(ctx, f, 4, a, b, lu.Options{}, solve.Options{Tol: math.NaN()}, false)
			return err
		},
		"negative GMRES tolerance": func() error {
			_, _, err := solve.System(ctx, f, 4, a, b, lu.Options{}, solve.Options{GMRESTol: -1}, false)
			return err
		},
		"negative MaxInner": func() error {
			_, _, err := solve.System(ctx, f, 4, a, b, lu.Options{}, solve.Options{MaxInner: -1}, false)
			return err
		},
		"empty": func() error {
			_, _, err := solve.System(ctx, f, 0, nil, nil, lu.Options{}, solve.Options{}, false)
			return err
		},
		"singular": func() error {
			_, _, err := solve.System(ctx, f, 2, []float64{1, 2, 2, 4}, []float64{1, 1}, lu.Options{}, solve.Options{}, false)
			var se *lu.SingularError
			if !errors.As(err, &se) {
				t.Errorf("singular system: %v", err)
			}
			return err
		},
	}
	for name, run := range cases {
		if err := run(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := solve.ParseMethod("cg"); err == nil {
		t.Error("refinement cg accepted")
	}
	if _, err := solve.ParseResidual("fp128"); err == nil {
		t.Error("residual fp128 accepted")
	}
}

// columnMajor copies the row-major n×n a column by column.
func columnMajor(n int, a []float64) []float64 {
	cm := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			cm[i+j*n] = a[i*n+j]
		}
	}
	return cm
}

// colMajor is A kept column-major behind the Operator interface, as a GPU
// system keeps it: refinement must reach it only through MulVec.
type colMajor struct {
	n     int
	a     []float64 // column-major
	calls int
}

func (c *colMajor) N() int { return c.n }
func (c *colMajor) NormInf() float64 {
	best := 0.0
	for i := 0; i < c.n; i++ {
		s := 0.0
		for j := 0; j < c.n; j++ {
			s += math.Abs(c.a[i+j*c.n])
		}
		best = math.Max(best, s)
	}
	return best
}
func (c *colMajor) MulVec(x, y []float64) error {
	c.calls++
	for i := range y {
		y[i] = 0
	}
	for j := 0; j < c.n; j++ {
		for i := 0; i < c.n; i++ {
			y[i] += c.a[i+j*c.n] * x[j]
		}
	}
	return nil
}

// RefineOperator converges through an Operator alone, to the same
// accuracy as Refine with the matrix; residuals other than fp64 are
// refused there, as are a wrong-sized or non-finite b.
func TestRefineOperator(t *testing.T) {
	const n = 120
	a, b := system(5, n)
	cm := columnMajor(n, a)
	fa, err := lu.Factor(context.Background(), form(t, "tc32", "v100"), n, a, lu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	op := &colMajor{n: n, a: cm}
	x, rep, err := solve.RefineOperator(context.Background(), op, b, fa, solve.Options{})
	if err != nil {
		t.Fatalf("RefineOperator: %v (%+v)", err, rep)
	}
	if be := solve.BackwardError(n, a, x, b); be > rep.Tol || op.calls < rep.GMRES {
		t.Errorf("backward error %.3g (tolerance %.3g), %d products for %d GMRES iterations", be, rep.Tol, op.calls, rep.GMRES)
	}
	_, want, err := solve.Refine(context.Background(), n, a, b, fa, solve.Options{})
	if err != nil || want.Outer != rep.Outer {
		t.Errorf("Refine: %v, %d steps; RefineOperator %d", err, want.Outer, rep.Outer)
	}
	if _, _, err := solve.RefineOperator(context.Background(), op, b, fa, solve.Options{Residual: solve.DoubleWord}); err == nil {
		t.Error("double-word residuals through an operator: no error")
	}
	if _, _, err := solve.RefineOperator(context.Background(), op, b[:n-1], fa, solve.Options{}); err == nil {
		t.Error("a short b: no error")
	}
	bad := append([]float64(nil), b...)
	bad[3] = math.Inf(1)
	if _, _, err := solve.RefineOperator(context.Background(), op, bad, fa, solve.Options{}); err == nil || !strings.Contains(err.Error(), "b(4)") {
		t.Errorf("an Inf in b: %v", err)
	}
}

// countingFactors counts the solves refinement asks of its factors.
type countingFactors struct {
	solve.Factorization
	solves int
}

func (c *countingFactors) Solve(x []float64) error {
	c.solves++
	return c.Factorization.Solve(x)
}

// Auto stays classical while a step gains two decades (fp32 factors of a
// well-conditioned system: fewer solves than GMRES-IR for the same
// accuracy) and turns to GMRES-IR at the first step that does not (fp16
// factors of Hilbert(8), where classical refinement cannot converge).
func TestAutoRefinement(t *testing.T) {
	ctx := context.Background()
	n := 120
	a, b := system(3, n)
	fa, err := lu.Factor(ctx, form(t, "fp32", ""), n, a, lu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	solves := map[solve.Method]int{}
	for _, m := range []solve.Method{solve.Auto, solve.GMRES} {
		c := &countingFactors{Factorization: fa}
		x, rep, err := solve.Refine(ctx, n, a, b, c, solve.Options{Refine: m})
		if err != nil {
			t.Fatalf("%v: %v", m, err)
		}
		if eta := solve.BackwardError(n, a, x, b); eta > rep.Tol {
			t.Errorf("%v: backward error %.3g above %.3g", m, eta, rep.Tol)
		}
		if m == solve.Auto && (rep.GMRESFrom != 0 || rep.GMRES != 0) {
			t.Errorf("auto on fp32 factors: GMRES from step %d (%d iterations), want classical steps only: %v", rep.GMRESFrom, rep.GMRES, steps(rep))
		}
		solves[m] = c.solves
	}
	if solves[solve.Auto] >= solves[solve.GMRES] {
		t.Errorf("auto took %d solves, GMRES-IR %d", solves[solve.Auto], solves[solve.GMRES])
	}

	h := hilbert(8)
	ones := []float64{1, 1, 1, 1, 1, 1, 1, 1}
	x, rep, err := solve.System(ctx, form(t, "tc32", "v100"), 8, h, ones, lu.Options{}, solve.Options{Refine: solve.Auto}, false)
	if err != nil {
		t.Fatalf("auto on tc32 factors of Hilbert(8): %v %v", err, steps(rep))
	}
	if rep.GMRESFrom != 2 || rep.GMRES == 0 || rep.Steps[1].GMRES != 0 {
		t.Errorf("auto on Hilbert(8): GMRES from step %d, %d iterations, steps %+v; want one classical step, then GMRES", rep.GMRESFrom, rep.GMRES, rep.Steps)
	}
	if eta := solve.BackwardError(8, h, x, ones); eta > rep.Tol {
		t.Errorf("auto on Hilbert(8): backward error %.3g above %.3g", eta, rep.Tol)
	}
	if m, err := solve.ParseMethod("AUTO"); err != nil || m != solve.Auto || m.String() != "auto" {
		t.Errorf("ParseMethod(AUTO) = %v, %v", m, err)
	}
}

// Auto turns to GMRES-IR when classical refinement, at the rate it shows,
// would not reach the tolerance within MaxIter: fp16 factors of a
// diagonally dominant system gain about three decades a classical step.
func TestAutoRefinementStepBudget(t *testing.T) {
	ctx := context.Background()
	n := 120
	a, b := system(5, n)
	for i := 0; i < n; i++ {
		a[i*n+i] += float64(n) / 2
	}
	fa, err := lu.Factor(ctx, form(t, "fp16", ""), n, a, lu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, free, err := solve.Refine(ctx, n, a, b, fa, solve.Options{Refine: solve.Auto})
	if err != nil || free.GMRESFrom != 0 || free.Outer < 3 {
		t.Fatalf("auto, 20 steps: %v, GMRES from step %d, %d steps %v; want classical steps only, at least 3", err, free.GMRESFrom, free.Outer, steps(free))
	}
	budget := free.Outer - 1
	x, rep, err := solve.Refine(ctx, n, a, b, fa, solve.Options{Refine: solve.Auto, MaxIter: budget})
	if err != nil {
		t.Fatalf("auto, %d steps: %v %v", budget, err, steps(rep))
	}
	if rep.GMRESFrom == 0 || rep.GMRESFrom > budget {
		t.Errorf("auto, %d steps: GMRES from step %d, want it within the budget: %+v", budget, rep.GMRESFrom, rep.Steps)
	}
	if eta := solve.BackwardError(n, a, x, b); eta > rep.Tol {
		t.Errorf("auto, %d steps: backward error %.3g above %.3g", budget, eta, rep.Tol)
	}
}

// overflowingFactors solves well once, then overflows, as the factors of
// an unstable elimination may on some right-hand sides.
type overflowingFactors struct {
	solve.Factorization
	solves int
}

func (o *overflowingFactors) Solve(x []float64) error {
	o.solves++
	if o.solves > 2 {
		for i := range x {
			x[i] = math.NaN()
		}
		return nil
	}
	return o.Factorization.Solve(x)
}

// GMRES failing on the numbers (its residual NaN) ends the refinement
// with its best finite iterate and the reason, not with a bare error.
func TestGMRESFailureStops(t *testing.T) {
	const n = 60
	a, b := system(7, n)
	fa, err := lu.Factor(context.Background(), form(t, "tc32", "v100"), n, a, lu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, rep, err := solve.Refine(context.Background(), n, a, b, &overflowingFactors{Factorization: fa}, solve.Options{Refine: solve.GMRES})
	if !errors.Is(err, solve.ErrNotConverged) || !strings.Contains(rep.Stop, "GMRES residual is NaN") {
		t.Fatalf("err %v, stop %q: want not converged, stopped by GMRES's NaN", err, rep.Stop)
	}
	be := solve.BackwardError(n, a, x, b)
	if !(math.Abs(be-rep.BackwardError) <= 1e-3*rep.BackwardError) {
		t.Errorf("best iterate's backward error %.3g, reported %.3g", be, rep.BackwardError)
	}
}
