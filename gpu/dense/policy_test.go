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
)

type fakeSystem struct {
	a            *mat.Dense
	dominant     bool
	order        int // N() when set (policyForms's tests), else a's
	behaviour    map[string]fakeBehaviour
	took         time.Duration // each factorization's reported time
	mulErr       error         // MulVec's error, to fail refinement
	dominanceErr error         // DiagonallyDominant's error
	factored     []LUForm      // the forms asked for, in order
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

func (s *fakeSystem) DiagonallyDominant() (bool, error) { return s.dominant, s.dominanceErr }

func (s *fakeSystem) operator() solve.Operator { return s }

func (s *fakeSystem) factor(f LUForm) (factored, error) {
	s.factored = append(s.factored, f)
	done := PivotingDone{Kind: f.Pivoting, Reason: ReasonAsked}
	if f.Pivoting == PivotAuto {
		done = PivotingDone{Kind: PivotPartial, Reason: ReasonNotDominant}
	}
	how := s.behaviour[f.Name]
	if f.Pivoting == PivotAuto {
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

func TestAutoForms(t *testing.T) {
	for _, c := range []struct {
		n        int
		dominant bool
		want     []string
	}{
		{1000, false, []string{"fp64"}},
		{16383, true, []string{"fp64"}},
		{16384, true, []string{"tc32-fp16", "double-fp16-fabsum", "fp64"}},
		{16384, false, []string{"fp64"}},
		{32767, false, []string{"fp64"}},
		{32768, false, []string{"double-fp16-fabsum", "fp64"}},
		{65536, true, []string{"tc32-fp16", "double-fp16-fabsum", "fp64"}},
	} {
		got := AutoForms(c.n, c.dominant)
		if !slices.Equal(got, c.want) {
			t.Errorf("AutoForms(%d, %v) = %q, want %q", c.n, c.dominant, got, c.want)
		}
		for _, name := range got {
			if _, err := ParseLUForm(name); err != nil {
				t.Errorf("AutoForms(%d, %v): %v", c.n, c.dominant, err)
			}
		}
	}
}

// Without forms, the policy takes AutoForms's for A's order and
// dominance, each with the tuning's settings.
func TestPolicyAutoFormsTuned(t *testing.T) {
	sys := newFakeSystem(4, 1)
	sys.order, sys.dominant = 32768, true
	tuning := LUForm{NB: 512, LookaheadSMs: -1, Panels: PanelsRecursive, Pivoting: PivotPartial, Profile: true}
	fs, err := policyForms(sys, Policy{Tuning: tuning})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range fs {
		names = append(names, f.Name)
		if f.NB != 512 || f.LookaheadSMs != -1 || f.Panels != PanelsRecursive || f.Pivoting != PivotPartial || !f.Profile {
			t.Errorf("%s: tuning not applied: %+v", f.Name, f)
		}
	}
	if want := AutoForms(32768, true); !slices.Equal(names, want) {
		t.Errorf("forms %q, want %q", names, want)
	}
	// Named forms are taken as they are, with no dominance pass needed.
	named := forms(t, PivotNone, "fp32")
	if fs, _ := policyForms(sys, Policy{Forms: named, Tuning: tuning}); len(fs) != 1 || fs[0].NB != 0 {
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

// A failure before any factorization (the dominance pass) leaves the
// report empty; Final and Escalations still answer.
func TestSolveFailsBeforeFactoring(t *testing.T) {
	sys := newFakeSystem(20, 9)
	sys.dominanceErr = errors.New("device lost")
	x, rep, err := solveWith(context.Background(), sys, rhs(20), Policy{Refine: classical})
	if err == nil || x != nil || len(rep.Attempts) != 0 || len(sys.factored) != 0 {
		t.Fatalf("x %v, err %v, %d attempts, %d factorizations", x != nil, err, len(rep.Attempts), len(sys.factored))
	}
	if rep.Final().Outcome != FactorFailed || len(rep.Escalations()) != 0 {
		t.Errorf("Final %+v, escalations %q", rep.Final(), rep.Escalations())
	}
}
