package dense

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/mwmm/mwmm/solve"
)

// The policy's tests run on the CPU: fakeSystem stands in for a System on
// the device, with factors that are exact, useless, or fail, by form.

// A fakeBehaviour is what fakeSystem's factor does for a form.
type fakeBehaviour int

const (
	exact            fakeBehaviour = iota // LU of A: refinement converges at once
	useless                               // the identity: classical refinement stalls
	fails                                 // a singular pivot
	uselessButterfly                      // PivotAuto means the butterfly transform: useless
	zeroPivot                             // PivotAuto means the butterfly transform: ErrButterflyFailed
	needsPivoting                         // fp16-store's growth check fails (a GrowthError)
)

type fakeSystem struct {
	a         *mat.Dense
	order     int // N() when set, else a's
	behaviour map[string]fakeBehaviour
	took      time.Duration // each factorization's reported time
	mulErr    error         // MulVec's error, to fail refinement
	factored  []LUForm      // the forms asked for, in order
}

func newFakeSystem(n int, seed uint64) *fakeSystem {
	rng := rand.New(rand.NewPCG(seed, 1))
	a := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			a.Set(i, j, rng.Float64()-0.5)
		}
	}
	return &fakeSystem{a: a, behaviour: map[string]fakeBehaviour{}, took: time.Second}
}

func (s *fakeSystem) N() int {
	if s.order > 0 {
		return s.order
	}
	n, _ := s.a.Dims()
	return n
}

func (s *fakeSystem) MulVec(x, y []float64) error {
	if s.mulErr != nil {
		return s.mulErr
	}
	mat.NewVecDense(len(y), y).MulVec(s.a, mat.NewVecDense(len(x), x))
	return nil
}

func (s *fakeSystem) NormInf() float64 { return mat.Norm(s.a, math.Inf(1)) }

func (s *fakeSystem) operator() solve.Operator { return s }

func (s *fakeSystem) factor(f LUForm) (factored, error) {
	s.factored = append(s.factored, f)
	done := PivotingDone{Kind: f.Pivoting, Reason: ReasonAsked}
	how := s.behaviour[f.Name]
	_, half := f.Update.(Half)
	switch {
	case half && f.Pivoting == PivotAuto && how == needsPivoting:
		return nil, &GrowthError{Column: 1024, Multiplier: 3e4, Growth: 1}
	case half && f.Pivoting == PivotAuto:
		done = PivotingDone{Kind: PivotNone, Reason: ReasonGrowthChecked}
	case f.Pivoting == PivotAuto:
		done = PivotingDone{Kind: PivotPartial, Reason: ReasonNotDominant}
	}
	if f.Pivoting == PivotAuto || f.Pivoting == PivotButterfly {
		switch how {
		case zeroPivot:
			return nil, fmt.Errorf("gpu: zero pivot: %w", ErrButterflyFailed)
		case uselessButterfly:
			done.Kind = PivotButterfly
		}
	}
	fa := &fakeFactors{nb: f.NB, pivoting: done, took: s.took}
	if how == fails {
		return nil, &SingularError{Column: 3}
	}
	if how == exact || how == zeroPivot || (how == uselessButterfly && done.Kind != PivotButterfly) {
		fa.lu = &mat.LU{}
		fa.lu.Factorize(s.a)
	}
	return fa, nil
}

type fakeFactors struct {
	nb       int
	pivoting PivotingDone
	took     time.Duration
	lu       *mat.LU // nil: Solve leaves x as it is
	freed    bool
}

func (f *fakeFactors) Solve(x []float64) error {
	if f.lu == nil {
		return nil
	}
	v := mat.NewVecDense(len(x), x)
	return f.lu.SolveVecTo(v, false, v)
}

func (f *fakeFactors) attempt() Attempt {
	return Attempt{NB: f.nb, Pivoting: f.pivoting, Factor: f.took}
}

func (f *fakeFactors) Free() error { f.freed = true; return nil }

// forms parses names into forms with partial pivoting unless auto.
func forms(t *testing.T, pivoting Pivoting, names ...string) []LUForm {
	t.Helper()
	var fs []LUForm
	for _, name := range names {
		f, err := ParseLUForm(name)
		if err != nil {
			t.Fatal(err)
		}
		f.Pivoting = pivoting
		fs = append(fs, f)
	}
	return fs
}

// classical refinement: useless factors cannot converge (GMRES would).
var classical = solve.Options{Refine: solve.IR, MaxIter: 5}

func rhs(n int) []float64 {
	b := make([]float64, n)
	for i := range b {
		b[i] = float64(i%7) - 3
	}
	return b
}

func TestAutoAndPivotedForms(t *testing.T) {
	if got := AutoForms(); len(got) == 0 || got[0] != HalfForm {
		t.Errorf("AutoForms() = %q: fp16-store, whose check decides the pivoting, comes first", got)
	}
	for _, c := range []struct {
		n    int
		want []string
	}{
		{1000, []string{"fp64"}},
		{32767, []string{"fp64"}},
		{32768, []string{"double-fp16-fabsum", "fp64"}},
	} {
		if got := PivotedForms(c.n); !slices.Equal(got, c.want) {
			t.Errorf("PivotedForms(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	for _, name := range append(AutoForms(), PivotedForms(1<<20)...) {
		if _, err := ParseLUForm(name); err != nil {
			t.Error(err)
		}
	}
}

// Without forms, the policy takes the named ones with the tuning's
// settings; named forms are taken as they are.
func TestPolicyFormsTuned(t *testing.T) {
	tuning := LUForm{NB: 512, LookaheadSMs: -1, Panels: PanelsRecursive, Pivoting: PivotNone, Profile: true}
	fs, err := policyForms(nil, AutoForms(), tuning)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range fs {
		names = append(names, f.Name)
		if f.NB != 512 || f.LookaheadSMs != -1 || f.Panels != PanelsRecursive || f.Pivoting != PivotNone || !f.Profile {
			t.Errorf("%s: tuning not applied: %+v", f.Name, f)
		}
	}
	if want := AutoForms(); !slices.Equal(names, want) {
		t.Errorf("forms %q, want %q", names, want)
	}
	// A tuning that pivots leaves out fp16-store, which cannot.
	tuning.Pivoting = PivotPartial
	if fs, _ := policyForms(nil, AutoForms(), tuning); len(fs) != len(AutoForms())-1 || fs[0].Name == HalfForm {
		t.Errorf("with partial pivoting: %+v", fs)
	}
	named := forms(t, PivotNone, "fp32")
	if fs, _ := policyForms(named, AutoForms(), tuning); len(fs) != 1 || fs[0].NB != 0 {
		t.Errorf("named forms changed: %+v", fs)
	}
}

func TestSolveFirstFormConverges(t *testing.T) {
	sys := newFakeSystem(40, 2)
	x, rep, err := solveWith(context.Background(), sys, rhs(40), Policy{Forms: forms(t, PivotPartial, "fp64", "fp32"), Refine: classical})
	if err != nil || x == nil {
		t.Fatalf("x %v, err %v", x != nil, err)
	}
	if len(rep.Attempts) != 1 || rep.Final().Outcome != Converged || rep.Final().Form.Name != "fp64" || len(rep.Escalations()) != 0 {
		t.Errorf("report %+v", rep)
	}
	if rep.Final().Refine.Factor != "fp64" || rep.Elapsed < rep.Final().Elapsed {
		t.Errorf("refine report %+v, elapsed %v", rep.Final().Refine, rep.Elapsed)
	}
}

// A form whose refinement does not converge, or whose factorization fails,
// gives way to the next; the report says why in order.
func TestSolveEscalates(t *testing.T) {
	sys := newFakeSystem(40, 3)
	sys.behaviour["tc32-fp16"] = fails
	sys.behaviour["double-fp16-fabsum"] = useless
	x, rep, err := solveWith(context.Background(), sys, rhs(40),
		Policy{Forms: forms(t, PivotPartial, "tc32-fp16", "double-fp16-fabsum", "fp64"), Refine: classical})
	if err != nil || x == nil {
		t.Fatalf("x %v, err %v", x != nil, err)
	}
	var outcomes []Outcome
	for _, a := range rep.Attempts {
		outcomes = append(outcomes, a.Outcome)
	}
	if want := []Outcome{FactorFailed, NotConverged, Converged}; !slices.Equal(outcomes, want) {
		t.Fatalf("outcomes %v, want %v", outcomes, want)
	}
	var singular *SingularError
	if !errors.As(rep.Attempts[0].Err, &singular) {
		t.Errorf("first attempt's error %v, want the SingularError", rep.Attempts[0].Err)
	}
	esc := rep.Escalations()
	if len(esc) != 2 || !strings.HasPrefix(esc[0], "tc32-fp16 (") || !strings.HasPrefix(esc[1], "double-fp16-fabsum (") {
		t.Errorf("escalations %q", esc)
	}
}

// A form whose refinement stalls at solve.ResidualFloor, short of a
// tolerance below it, ends the solve: the next forms refine with the same
// residuals. One that stalls above the floor escalates.
func TestSolveStopsAtTheFloor(t *testing.T) {
	for _, c := range []struct {
		tol      float64
		attempts int
	}{{1e-30, 1}, {1e-14, 1}} {
		sys := newFakeSystem(40, 5)
		opt := classical
		opt.Tol = c.tol
		_, rep, err := solveWith(context.Background(), sys, rhs(40), Policy{Forms: forms(t, PivotPartial, "tc32-fp16", "fp64"), Refine: opt})
		if len(rep.Attempts) != c.attempts || (c.tol < solve.ResidualFloor) != errors.Is(err, solve.ErrNotConverged) {
			t.Errorf("tolerance %g: %d attempts, %v", c.tol, len(rep.Attempts), err)
		}
		if be := rep.Final().Refine.BackwardError; !(be <= solve.ResidualFloor) {
			t.Errorf("tolerance %g: backward error %.3g above the floor", c.tol, be)
		}
	}
	sys := newFakeSystem(40, 5)
	sys.behaviour["tc32-fp16"] = useless
	opt := classical
	opt.Tol = 1e-30
	if _, rep, _ := solveWith(context.Background(), sys, rhs(40), Policy{Forms: forms(t, PivotPartial, "tc32-fp16", "fp64"), Refine: opt}); len(rep.Attempts) != 2 {
		t.Errorf("a stall above the floor: %d attempts, want 2", len(rep.Attempts))
	}
}

// Every form but the last refines within its factorization's time.
func TestSolveBudgetsAllButTheLast(t *testing.T) {
	sys := newFakeSystem(40, 4)
	sys.took = time.Nanosecond
	sys.behaviour["fp32"] = useless
	sys.behaviour["fp64"] = useless
	opt := classical
	opt.MaxIter = 1000
	_, rep, err := solveWith(context.Background(), sys, rhs(40), Policy{Forms: forms(t, PivotPartial, "fp32", "fp64"), Refine: opt})
	if !errors.Is(err, solve.ErrNotConverged) || len(rep.Attempts) != 2 {
		t.Fatalf("err %v, %d attempts", err, len(rep.Attempts))
	}
	if stop := rep.Attempts[0].Refine.Stop; !strings.Contains(stop, "time budget") {
		t.Errorf("first form stopped with %q, want its time budget", stop)
	}
	if stop := rep.Attempts[1].Refine.Stop; strings.Contains(stop, "time budget") {
		t.Errorf("the last form stopped with %q: it has no budget", stop)
	}
}

// When every form fails, Solve returns the last one's error: its best
// iterate with ErrNotConverged, or the factorization's error.
func TestSolveAllFail(t *testing.T) {
	sys := newFakeSystem(30, 5)
	sys.behaviour["fp64"] = useless
	x, rep, err := solveWith(context.Background(), sys, rhs(30), Policy{Forms: forms(t, PivotPartial, "fp64"), Refine: classical})
	if !errors.Is(err, solve.ErrNotConverged) || x == nil || rep.Final().Outcome != NotConverged {
		t.Errorf("useless factors: x %v, err %v, outcome %v", x != nil, err, rep.Final().Outcome)
	}
	sys.behaviour["fp64"] = fails
	x, rep, err = solveWith(context.Background(), sys, rhs(30), Policy{Forms: forms(t, PivotPartial, "fp64"), Refine: classical})
	var singular *SingularError
	if !errors.As(err, &singular) || x != nil || rep.Final().Outcome != FactorFailed {
		t.Errorf("failing factors: x %v, err %v, outcome %v", x != nil, err, rep.Final().Outcome)
	}
}

// With PivotAuto, a butterfly transform whose factors fail or do not
// converge is factored again, in the same form, with partial pivoting.
func TestSolveButterflyFallsBackToPartial(t *testing.T) {
	for _, how := range []fakeBehaviour{uselessButterfly, zeroPivot} {
		sys := newFakeSystem(40, 6)
		sys.behaviour["fp64"] = how
		x, rep, err := solveWith(context.Background(), sys, rhs(40), Policy{Forms: forms(t, PivotAuto, "fp64"), Refine: classical})
		if err != nil || x == nil {
			t.Fatalf("behaviour %d: x %v, err %v", how, x != nil, err)
		}
		if len(sys.factored) != 2 || sys.factored[0].Pivoting != PivotAuto || sys.factored[1].Pivoting != PivotPartial {
			t.Errorf("behaviour %d: factored %+v", how, sys.factored)
		}
		final := rep.Final()
		if final.Pivoting.Fallback == "" || !strings.Contains(final.Pivoting.String(), "as the butterfly transform failed") {
			t.Errorf("behaviour %d: final pivoting %q", how, final.Pivoting)
		}
		if len(rep.Escalations()) != 0 {
			t.Errorf("behaviour %d: escalations %q; the form did not change", how, rep.Escalations())
		}
	}
}

// A refinement that fails for another reason than accuracy (the device)
// ends the solve: the next form would fail alike.
func TestSolveStopsOnRefinementError(t *testing.T) {
	sys := newFakeSystem(20, 7)
	sys.mulErr = errors.New("device lost")
	_, rep, err := solveWith(context.Background(), sys, rhs(20), Policy{Forms: forms(t, PivotPartial, "fp32", "fp64"), Refine: classical})
	if err == nil || !strings.Contains(err.Error(), "device lost") || len(rep.Attempts) != 1 || rep.Final().Outcome != RefineFailed {
		t.Errorf("err %v, attempts %+v", err, rep.Attempts)
	}
}

// A cancelled context stops at the attempt it interrupts.
func TestSolveCancelled(t *testing.T) {
	sys := newFakeSystem(20, 8)
	sys.behaviour["fp32"] = useless
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, rep, err := solveWith(ctx, sys, rhs(20), Policy{Forms: forms(t, PivotPartial, "fp32", "fp64"), Refine: classical})
	if err == nil || len(rep.Attempts) != 1 {
		t.Errorf("err %v, %d attempts", err, len(rep.Attempts))
	}
}

// When fp16-store's growth check fails, Solve turns to PivotedForms: for
// fp64 the butterfly transform, then partial pivoting where that fails,
// each attempt saying that the check failed.
func TestSolveGrowthCheckFails(t *testing.T) {
	sys := newFakeSystem(40, 9)
	sys.behaviour[HalfForm] = needsPivoting
	sys.behaviour["fp64"] = zeroPivot
	x, rep, err := solveWith(context.Background(), sys, rhs(40), Policy{Refine: classical})
	if err != nil || x == nil {
		t.Fatalf("x %v, err %v", x != nil, err)
	}
	var names []string
	for _, f := range sys.factored {
		names = append(names, fmt.Sprintf("%s/%s", f.Name, Pivotings[f.Pivoting]))
	}
	if want := []string{HalfForm + "/auto", "fp64/butterfly", "fp64/partial"}; !slices.Equal(names, want) {
		t.Fatalf("factored %q, want %q", names, want)
	}
	var ge *GrowthError
	first := rep.Attempts[0]
	if !errors.As(first.Err, &ge) || first.Outcome != FactorFailed || first.Pivoting.Reason != ReasonGrowthChecked {
		t.Errorf("first attempt %+v", first)
	}
	final := rep.Final()
	if final.Pivoting.Kind != PivotPartial || !strings.Contains(final.Pivoting.String(), "growth check without pivoting failed") {
		t.Errorf("final pivoting %q", final.Pivoting)
	}
	if esc := rep.Escalations(); len(esc) != 1 || !strings.Contains(esc[0], "needs pivoting") {
		t.Errorf("escalations %q", esc)
	}
}

// When the check passes but fp16 factors do not refine to the tolerance,
// the next forms factor without pivoting, saying why.
func TestSolveGrowthCheckPasses(t *testing.T) {
	sys := newFakeSystem(40, 10)
	sys.behaviour[HalfForm] = useless
	x, rep, err := solveWith(context.Background(), sys, rhs(40), Policy{Refine: classical})
	if err != nil || x == nil {
		t.Fatalf("x %v, err %v", x != nil, err)
	}
	if len(sys.factored) != 2 || sys.factored[1].Name != "double-fp16-fabsum" || sys.factored[1].Pivoting != PivotNone {
		t.Fatalf("factored %+v", sys.factored)
	}
	if a := rep.Attempts[0]; a.Outcome != NotConverged || a.Pivoting.Reason != ReasonGrowthChecked {
		t.Errorf("first attempt %+v", a)
	}
	if p := rep.Final().Pivoting; p.Reason != ReasonGrowthPassed || p.String() != "none: the growth check passed" {
		t.Errorf("final pivoting %+v (%q)", p, p)
	}
}
