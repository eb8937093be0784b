package dense

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mwmm/mwmm/solve"
)

// AutoForms are the forms Solve tries, in order, when its policy names
// none: fp16-store (the LU without pivoting in fp16, its growth checked
// on every panel), then, where refinement from it does not converge (A
// too ill-conditioned for fp16 factors), double-fp16-fabsum and fp64,
// both without pivoting as the check passed.
func AutoForms() []string { return []string{HalfForm, "double-fp16-fabsum", "fp64"} }

// HalfBudget is how many times its factorization's time fp16-store's
// refinement may take before Solve moves on: its fp16 factors refine in
// more steps than fp32-accurate ones, whose factorization takes 2–3
// times as long (double-fp16-fabsum against fp16-store at n = 8192 and
// 32768 on an H200) before their own refinement, and HPL-MxP's runs
// spend most of their time refining. With 3, Fasi–Higham's κ∞ = 10^8 at
// n = 8192 (refinement 4 times the factorization) left fp16-store for
// double-fp16-fabsum and took 61 ms instead of 35.
const HalfBudget = 5

// PivotedForms are the forms Solve turns to when fp16-store's growth check
// says that A needs pivoting: below order 32768 fp64 (after a butterfly
// transform, then with partial pivoting if that fails; 2.3× getrf+getrs at
// n = 8192, 1.8× at 16384 on an H100), and from 32768 double-fp16-fabsum
// with partial pivoting (1.4×), then fp64 (docs/perf/solve-h100.md).
func PivotedForms(n int) []string {
	if n < 32768 {
		return []string{"fp64"}
	}
	return []string{"double-fp16-fabsum", "fp64"}
}

// A Policy says how Solve factors A and refines x.
type Policy struct {
	// Forms are tried in order: the next when a factorization fails or
	// refinement from it does not converge, unless it stalled at
	// solve.ResidualFloor, where none would do better. Empty: AutoForms,
	// each with Tuning's NB, Profile, LookaheadSMs, Panels and Pivoting,
	// and PivotedForms in their place when fp16-store's growth check fails.
	Forms  []LUForm
	Tuning LUForm
	// Refine is refinement's options. Every form but the last refines
	// for at most as long as it took to factor (solve.Options.TimeBudget;
	// fp16-store HalfBudget times as long): refinement that slow has lost
	// the form its lead, and a stalling one would run its steps to the end
	// (seconds at n = 32768).
	Refine solve.Options
	// Instrument, when set, wraps what refinement sees of A and of the
	// factors (a *Factors), to time them; it must keep their behaviour.
	Instrument func(solve.Operator, solve.Factorization) (solve.Operator, solve.Factorization)
}

// An Outcome is how one attempt of Solve ended.
type Outcome int

const (
	Converged    Outcome = iota // the backward error reached the tolerance
	NotConverged                // refinement stopped above it (Attempt.Refine.Stop says why)
	FactorFailed                // the factorization failed (Attempt.Err)
	RefineFailed                // refinement failed for another reason than accuracy (Attempt.Err)
)

func (o Outcome) String() string {
	return [...]string{"converged", "not converged", "factorization failed", "refinement failed"}[o]
}

// An Attempt is one factorization of A and the refinement from it.
type Attempt struct {
	Form     LUForm // as factored (its Pivoting as asked; Attempt.Pivoting as done)
	NB       int
	Pivoting PivotingDone
	Factor   time.Duration // the factorization on the device
	Phases   *Phases       // with LUForm.Profile
	Refine   solve.Report  // empty when the factorization failed
	Outcome  Outcome
	Err      error         // why the attempt failed, if it did
	Elapsed  time.Duration // factorization and refinement
}

// A Report is what Solve tried, in order, and how each attempt ended.
type Report struct {
	Attempts []Attempt
	// Elapsed is the whole solve: every attempt, up to the refined x (not
	// freeing the factors, as cuSOLVER's times).
	Elapsed time.Duration
}

// Final is the attempt that gave Solve's answer (or its last failure).
// A report has none only when Solve failed before factoring (a policy
// whose forms do not parse); Final is then the zero Attempt with Outcome
// FactorFailed.
func (r Report) Final() Attempt {
	if len(r.Attempts) == 0 {
		return Attempt{Outcome: FactorFailed}
	}
	return r.Attempts[len(r.Attempts)-1]
}

// Escalations says, for people, why each earlier form was left: one line
// per form, not counting a failed butterfly transform retried with
// partial pivoting in the same form (Final's Pivoting.Fallback says so).
func (r Report) Escalations() []string {
	var out []string
	for i, a := range r.Attempts[:max(len(r.Attempts)-1, 0)] {
		if r.Attempts[i+1].Form.Name == a.Form.Name {
			continue
		}
		switch a.Outcome {
		case FactorFailed:
			out = append(out, fmt.Sprintf("%s (%v)", a.Form.Name, a.Err))
		default:
			out = append(out, fmt.Sprintf("%s (%s, backward error %.3g)", a.Form.Name, a.Refine.Stop, a.Refine.BackwardError))
		}
	}
	return out
}

// Solve solves A·x = b for the system's A as the policy says: it factors
// in each form in turn, refines in fp64 from the factors, and returns the
// first x whose backward error reaches the tolerance. When every form
// fails, the error is the last one's: a factorization error, or one that
// wraps solve.ErrNotConverged with x the best iterate. The report lists
// every attempt.
func Solve(ctx context.Context, sys *System, b []float64, pol Policy) ([]float64, Report, error) {
	return solveWith(ctx, systemSeam{sys}, b, pol)
}

// factorSource is what Solve needs of a System: the seam its tests fake.
type factorSource interface {
	N() int
	factor(LUForm) (factored, error)
	// operator is A for refinement: the *System itself, which the
	// factors' NewKrylovBasis recognizes to keep GMRES on the device.
	operator() solve.Operator
}

// factored is what Solve needs of Factors.
type factored interface {
	solve.Factorization
	attempt() Attempt // the factorization's part of an Attempt
	Free() error
}

func solveWith(ctx context.Context, sys factorSource, b []float64, pol Policy) ([]float64, Report, error) {
	var rep Report
	forms, err := policyForms(pol.Forms, AutoForms(), pol.Tuning)
	if err != nil {
		return nil, rep, err
	}
	growth := growthUnknown
	for i := 0; i < len(forms); i++ {
		before := len(rep.Attempts)
		f, reason := growth.apply(forms[i])
		x, err := tryForm(ctx, sys, b, f, reason, pol, i < len(forms)-1, &rep)
		for _, a := range rep.Attempts[before:] {
			rep.Elapsed += a.Elapsed
		}
		final := rep.Final()
		switch {
		case len(pol.Forms) == 0 && errors.Is(final.Err, ErrNeedsPivoting):
			growth = growthFailed
			pivoted, perr := policyForms(nil, PivotedForms(sys.N()), pol.Tuning)
			if perr != nil {
				return nil, rep, perr
			}
			forms = append(forms[:i+1], pivoted...)
		case final.Pivoting.Reason == ReasonGrowthChecked:
			growth = growthPassed
		}
		out := final.Outcome
		atFloor := out == NotConverged && final.Refine.BackwardError <= solve.ResidualFloor
		if i == len(forms)-1 || ctx.Err() != nil || atFloor || (out != FactorFailed && out != NotConverged) {
			return x, rep, err
		}
	}
	return nil, rep, errors.New("gpu: a policy with no forms")
}

// policyForms is forms, or when there are none the named ones with
// tuning's settings (leaving out fp16-store when the tuning pivots).
func policyForms(forms []LUForm, names []string, tuning LUForm) ([]LUForm, error) {
	if len(forms) > 0 {
		return forms, nil
	}
	for _, name := range names {
		if name == HalfForm && (tuning.Pivoting == PivotPartial || tuning.Pivoting == PivotButterfly) {
			continue
		}
		f, err := ParseLUForm(name)
		if err != nil {
			return nil, err
		}
		t := tuning
		f.NB, f.Profile, f.LookaheadSMs, f.Panels, f.Pivoting = t.NB, t.Profile, t.LookaheadSMs, t.Panels, t.Pivoting
		forms = append(forms, f)
	}
	return forms, nil
}

// growthState is what Solve learned from fp16-store's growth check, for
// the forms after it.
type growthState int

const (
	growthUnknown growthState = iota
	growthPassed
	growthFailed
)

// apply sets a PivotAuto form's pivoting from the check, with the reason
// its attempts report (ReasonAsked: none to add): none where it passed;
// where it failed, partial, or for fp64 the butterfly transform
// (tryForm falls back to partial when that fails).
func (g growthState) apply(f LUForm) (LUForm, PivotReason) {
	if f.Pivoting != PivotAuto || g == growthUnknown {
		return f, ReasonAsked
	}
	if g == growthPassed {
		f.Pivoting = PivotNone
		return f, ReasonGrowthPassed
	}
	f.Pivoting = PivotPartial
	if u, ok := f.Update.(Getrf); ok && u.Precision == FP64 {
		f.Pivoting = PivotButterfly
	}
	return f, ReasonGrowthFailed
}

// tryForm factors in the form and refines, appending its attempts to rep
// (with reason, when set, as their pivoting's). A butterfly transform
// that Solve chose (PivotAuto, or reason set) and that fails (a zero or
// non-finite pivot, or refinement that does not converge) is factored
// again with partial pivoting, in a second attempt that says why. With
// budgeted, refinement may take as long as the factorization did.
func tryForm(ctx context.Context, sys factorSource, b []float64, f LUForm, reason PivotReason, pol Policy, budgeted bool, rep *Report) ([]float64, error) {
	fallback := ""
	chosen := f.Pivoting == PivotAuto || reason != ReasonAsked
	for {
		start := time.Now()
		fa, err := sys.factor(f)
		if err != nil {
			a := Attempt{Form: f, Pivoting: PivotingDone{Kind: f.Pivoting, Reason: reason, Fallback: fallback}, Outcome: FactorFailed, Err: err, Elapsed: time.Since(start)}
			if errors.Is(err, ErrNeedsPivoting) {
				a.Pivoting = PivotingDone{Kind: PivotNone, Reason: ReasonGrowthChecked}
			}
			rep.Attempts = append(rep.Attempts, a)
			if chosen && errors.Is(err, ErrButterflyFailed) {
				fallback, f.Pivoting = err.Error(), PivotPartial
				continue
			}
			return nil, err
		}
		a := fa.attempt()
		a.Form, a.Pivoting.Fallback = f, fallback
		if reason != ReasonAsked {
			a.Pivoting.Reason = reason
		}
		x, err := refine(ctx, sys, b, fa, a.Factor, pol, budgeted, &a)
		a.Elapsed = time.Since(start)
		fa.Free()
		rep.Attempts = append(rep.Attempts, a)
		if a.Outcome == NotConverged && chosen && a.Pivoting.Kind == PivotButterfly {
			fallback, f.Pivoting = fmt.Sprintf("refinement %s, backward error %.3g", a.Refine.Stop, a.Refine.BackwardError), PivotPartial
			continue
		}
		return x, err
	}
}

// refine refines x from the factors into a's Refine and Outcome.
func refine(ctx context.Context, sys factorSource, b []float64, fa factored, took time.Duration, pol Policy, budgeted bool, a *Attempt) ([]float64, error) {
	opt := pol.Refine
	if budgeted {
		opt.TimeBudget = took
		if _, half := a.Form.Update.(Half); half {
			opt.TimeBudget *= HalfBudget
		}
	}
	op := sys.operator()
	var f solve.Factorization = fa
	if pol.Instrument != nil {
		op, f = pol.Instrument(op, f)
	}
	x, r, err := solve.RefineOperator(ctx, op, b, f, opt)
	r.Factor, r.NB, r.FactorSeconds = a.Form.Name, a.NB, took.Seconds()
	a.Refine, a.Err = r, err
	switch {
	case errors.Is(err, solve.ErrNotConverged):
		a.Outcome = NotConverged
	case err != nil:
		a.Outcome = RefineFailed
	}
	return x, err
}

// systemSeam is a System as Solve's factorSource.
type systemSeam struct{ *System }

func (s systemSeam) operator() solve.Operator { return s.System }

func (s systemSeam) factor(f LUForm) (factored, error) {
	fa, err := s.Factor(f)
	if err != nil {
		return nil, err
	}
	return fa, nil
}

// attempt is the factorization's part of an Attempt.
func (fa *Factors) attempt() Attempt {
	return Attempt{NB: fa.NB, Pivoting: fa.Pivoting, Factor: fa.Duration, Phases: fa.Phases}
}
