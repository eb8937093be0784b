package solve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/mwmm/mwmm/lu"
)

// Method is how the LU solution is refined.
type Method uint8

const (
	// GMRES is GMRES-IR: each correction solves A·d = r by GMRES on the
	// left-preconditioned system Û⁻¹L̂⁻¹P·A·d = Û⁻¹L̂⁻¹P·r.
	GMRES Method = iota
	// IR is classical refinement: d = Û⁻¹L̂⁻¹P·r.
	IR
	// None returns the LU solution x = Û⁻¹L̂⁻¹P·b.
	None
	// Auto refines classically while each step cuts the backward error a
	// hundredfold (then a step's one solve and one product beat GMRES's
	// extra pair per iteration) and, at that rate, the tolerance is within
	// the steps left; by GMRES-IR from the first step where either fails,
	// to the end: well-conditioned systems are spared GMRES's cost, the
	// others keep its reach.
	Auto
)

// autoGain is the factor by which a classical step must cut the backward
// error for Auto to stay classical.
const autoGain = 100

func (m Method) String() string {
	switch m {
	case GMRES:
		return "gmres"
	case IR:
		return "ir"
	case None:
		return "none"
	case Auto:
		return "auto"
	}
	return fmt.Sprintf("Method(%d)", m)
}

// MarshalText writes the method's name, so reports keep it as text.
func (m Method) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText reads a name MarshalText writes.
func (m *Method) UnmarshalText(b []byte) error {
	for _, c := range []Method{GMRES, IR, None, Auto} {
		if c.String() == string(b) {
			*m = c
			return nil
		}
	}
	return fmt.Errorf("solve: no refinement method %q", b)
}

// ParseMethod reads gmres, ir, auto or none.
func ParseMethod(s string) (Method, error) {
	for _, m := range []Method{GMRES, IR, Auto, None} {
		if strings.EqualFold(strings.TrimSpace(s), m.String()) {
			return m, nil
		}
	}
	return 0, fmt.Errorf("unknown refinement %q: gmres, ir, auto or none", s)
}

// Residual is the precision of r = b − A·x.
type Residual uint8

const (
	// FP64 computes the residual in fp64 (u_r = u): the forward error
	// then levels off at order κ(A)·u.
	FP64 Residual = iota
	// DoubleWord computes it in double-word arithmetic (u_r ≈ u², exact
	// products by FMA and compensated sums), rounded to fp64 at the
	// end: the forward error levels off at order u while κ(A)·u < 1.
	DoubleWord
	// AutoResidual computes it in fp64 until the backward error, above
	// the tolerance, is at DoubleWordFrom or below or stalls from
	// StallDoubleWordFrom down, where fp64 residuals no longer resolve it,
	// and in double-word arithmetic from that step (the iterate measured
	// again): the steps that fp64 serves cost no more, and a tolerance
	// below fp64's floor is still reached. Operators that cannot compute
	// double-word residuals stay in fp64.
	AutoResidual
)

// AutoResidual turns to double-word residuals (while above the
// tolerance) at a backward error of DoubleWordFrom or below, where fp64
// residuals' rounding errors are half of what they measure, or at the
// first step that does not halve it from StallDoubleWordFrom down: fp64
// residuals' floor depends on A and x (Fasi–Higham κ∞ = 10^4 at
// n = 16384 stalled at 1.5·10^-15, κ∞ = 10^8 at 3·10^-16), and a stall
// above that level is the factors', which double-word residuals do not
// mend.
const (
	DoubleWordFrom      = 2 * ResidualFloor
	StallDoubleWordFrom = 0x1p-43
)

func (r Residual) String() string {
	switch r {
	case DoubleWord:
		return "double-word"
	case AutoResidual:
		return "auto"
	}
	return "fp64"
}

// ParseResidual reads fp64, dd (double-word) or auto.
func ParseResidual(s string) (Residual, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "fp64", "binary64", "double":
		return FP64, nil
	case "dd", "double-word", "double-double":
		return DoubleWord, nil
	case "auto":
		return AutoResidual, nil
	}
	return 0, fmt.Errorf("unknown residual precision %q: fp64, dd or auto", s)
}

// NoSteps as Options.MaxIter asks for no refinement step (the LU solution
// alone), since 0 takes the default.
const NoSteps = -1

// Options tune the refinement. Zero values take the defaults.
type Options struct {
	Refine Method
	// Tol is the backward error at which refinement stops: 0 means
	// max(√n, 2)·2^-53, LAPACK's dsgesv criterion.
	Tol float64
	// MaxIter bounds the refinement steps; 0 means 20 and NoSteps none
	// (the LU solution alone, with Refine's method in the report).
	MaxIter int
	// GMRESTol is GMRES's relative residual tolerance on the preconditioned
	// system; 0 means 1e-6.
	GMRESTol float64
	// MaxInner bounds GMRES's iterations per correction (no restarts);
	// 0 means min(n, 300).
	MaxInner int
	Residual Residual
	// Precond is the precision of the preconditioned products
	// Û⁻¹L̂⁻¹P·A·v inside GMRES and of each step's preconditioned residual
	// Û⁻¹L̂⁻¹P·r: FP64, or DoubleWord, which stands in for the extended
	// precision u² that Carson and Higham's analysis assumes (A·v and the
	// triangular solves in double-word arithmetic, rounded to fp64 once).
	// DoubleWord needs A as a matrix and factors that are a
	// DoubleWordFactorization (*lu.Factors).
	Precond Residual
	// AllSteps refines for MaxIter steps whatever the backward error does:
	// neither the tolerance nor a stall ends the solve early (for
	// convergence histories). The x returned is still the best step's.
	AllSteps bool
	// Iterate, when set, is called with each iterate and its Step after
	// its backward errors are measured; x must not be kept or changed.
	Iterate func(s Step, x []float64)
	// TimeBudget, when positive, ends refinement as not converged (with
	// its best iterate) once it has run that long, checked after each
	// step and each GMRES iteration: a caller with a faster way left (a
	// more accurate factorization) stops paying for slow convergence.
	TimeBudget time.Duration
	// Step, when set, is called after each backward error is measured.
	Step func(s Step)
}

// A Factorization is what refinement needs of LU factors: the solve
// x ← Û⁻¹L̂⁻¹P·x in fp64. *lu.Factors is one; a GPU engine keeps its
// factors on the device and implements the same.
type Factorization interface {
	Solve(x []float64) error
}

// A DoubleWordFactorization also solves in double-word arithmetic:
// x ← Û⁻¹L̂⁻¹P·x for x = hi + lo, as (*lu.Factors).SolveDoubleWord does.
type DoubleWordFactorization interface {
	Factorization
	SolveDoubleWord(hi, lo []float64) error
}

// Step is one iterate of a solve.
type Step struct {
	Iteration int `json:"iteration"` // 0 is the LU solution
	// BackwardError is ‖b − A·x‖∞ / (‖A‖∞‖x‖∞ + ‖b‖∞), A and b as given.
	BackwardError float64 `json:"backward_error"`
	// Componentwise is max_i |b − A·x|_i / (|A|·|x| + |b|)_i, the
	// componentwise backward error, when A is a matrix here (0 otherwise).
	Componentwise float64 `json:"componentwise_backward_error,omitempty"`
	// GMRES is the number of GMRES iterations of the correction that led to
	// this iterate (0 for the LU solution and for IR).
	GMRES int `json:"gmres_iterations"`
	// GMRESResidual is GMRES's final relative residual on the
	// preconditioned system.
	GMRESResidual float64 `json:"gmres_residual,omitempty"`
	// DoubleWord says the residual was computed in double-word arithmetic.
	DoubleWord bool `json:"double_word_residual,omitempty"`
}

// Report describes one solve.
type Report struct {
	N        int     `json:"n"`
	Factor   string  `json:"factor"`
	Storage  string  `json:"storage,omitempty"`
	NB       int     `json:"nb,omitempty"`
	Refine   Method  `json:"refine"`
	Residual string  `json:"residual"`
	Tol      float64 `json:"tol"`

	FactorSeconds float64 `json:"factor_seconds"`
	RefineSeconds float64 `json:"refine_seconds"`
	// LUError is the factorization's backward error ‖P·A − L̂Û‖∞/‖A‖∞ and
	// growth, when asked for (it costs as much as the factorization).
	LUError *lu.Errors `json:"lu_error,omitempty"`

	Steps []Step `json:"steps"`
	// Outer counts refinement steps (corrections); GMRES the GMRES
	// iterations over all of them.
	Outer int `json:"outer_iterations"`
	GMRES int `json:"gmres_iterations"`
	// GMRESFrom is, for Auto, the first step refined by GMRES (0: every
	// step was classical).
	GMRESFrom int  `json:"gmres_from,omitempty"`
	Converged bool `json:"converged"`
	// BackwardError is the best step's, BestStep's: the x returned is
	// that step's, which is not the last where refinement stalled or
	// diverged.
	BackwardError float64 `json:"backward_error"`
	BestStep      int     `json:"best_step"`
	// Stop says why refinement stopped.
	Stop string `json:"stop"`
}

func budgetSpent(budget time.Duration) string {
	return fmt.Sprintf("the time budget of %.3g s spent", budget.Seconds())
}

// ResidualFloor is the backward error at which refinement with fp64
// residuals stops gaining: the residual's own rounding errors are of that
// order (a few units of 2^-53), so a tolerance below it is met only by
// chance, and factors of another precision refined with the same
// residuals do no better. Fasi–Higham κ∞ = 10^8 at n = 32768 on an H200:
// from fp16 factors refinement stalled at 2.6·10^-16, from fp32-accurate
// ones at 2.8 and 3.2·10^-16, against getrf+getrs's 2.1·10^-16.
const ResidualFloor = 8 * 0x1p-53

// ErrNotConverged is wrapped by the error of a solve whose backward error
// did not reach the tolerance; the report says how far it got.
var ErrNotConverged = errors.New("refinement did not converge")

// Refine solves the n×n system a·x = b from the factorization fa of a (its
// LU factors in any precision), refining in fp64 as opt says. The
// returned x always has the smallest backward error met; the error wraps
// ErrNotConverged when that is above the tolerance: then x is no answer.
func Refine(ctx context.Context, n int, a, b []float64, fa Factorization, opt Options) ([]float64, Report, error) {
	if err := checkSystem(n, a, b); err != nil {
		return nil, Report{N: n, Refine: opt.Refine, Residual: opt.Residual.String()}, err
	}
	return refine(ctx, dense{n, a}, b, fa, opt)
}

// An Operator is A as refinement uses it when A is not a slice here: a
// GPU system keeps A on the device. MulVec sets y = A·x in fp64.
type Operator interface {
	N() int
	MulVec(x, y []float64) error
	NormInf() float64
}

// RefineOperator is Refine with A given as an operator; the residuals are
// b − A·x with A·x from MulVec, so opt.Residual must be FP64 or
// AutoResidual (which stays in fp64) unless a is a DoubleWordOperator.
func RefineOperator(ctx context.Context, a Operator, b []float64, fa Factorization, opt Options) ([]float64, Report, error) {
	n := a.N()
	rep := Report{N: n, Refine: opt.Refine, Residual: opt.Residual.String()}
	if _, ok := a.(DoubleWordOperator); opt.Residual == DoubleWord && !ok {
		return nil, rep, fmt.Errorf("solve: residuals in %s need A as a matrix here; this operator computes them in fp64", opt.Residual)
	}
	if len(b) != n {
		return nil, rep, fmt.Errorf("solve: b has %d entries, A is %d×%d", len(b), n, n)
	}
	for i, v := range b {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, rep, fmt.Errorf("solve: b(%d) is %v", i+1, v)
		}
	}
	return refine(ctx, a, b, fa, opt)
}

// dense is A held here, row-major.
type dense struct {
	n int
	a []float64
}

func (d dense) N() int                      { return d.n }
func (d dense) NormInf() float64            { return infNorm(d.n, d.a) }
func (d dense) MulVec(x, y []float64) error { mulVec(d.n, d.a, x, y); return nil }

// A DoubleWordOperator computes residuals in double-word arithmetic
// itself, as a GPU system does beside A.
type DoubleWordOperator interface {
	Operator
	// ResidualDoubleWord sets r = b − A·x in double-word arithmetic,
	// rounded to fp64 once.
	ResidualDoubleWord(x, b, r []float64) error
}

// residualOf sets r = b − A·x in precision p (FP64 or DoubleWord): for a
// dense A here, for a DoubleWordOperator by its own method, else in fp64
// through MulVec.
func residualOf(p Residual, op Operator, x, b, r []float64) error {
	if d, ok := op.(dense); ok {
		residual(p, d.n, d.a, x, b, r)
		return nil
	}
	if dw, ok := op.(DoubleWordOperator); ok && p == DoubleWord {
		return dw.ResidualDoubleWord(x, b, r)
	}
	if p == DoubleWord {
		return fmt.Errorf("solve: %T computes residuals in fp64 only", op)
	}
	if err := op.MulVec(x, r); err != nil {
		return err
	}
	for i := range r {
		r[i] = b[i] - r[i]
	}
	return nil
}

func refine(ctx context.Context, op Operator, b []float64, fa Factorization, opt Options) (_ []float64, rep Report, err error) {
	n := op.N()
	rep = Report{N: n, Refine: opt.Refine, Residual: opt.Residual.String()}
	if err := opt.check(); err != nil {
		return nil, rep, err
	}
	if err := opt.checkPrecond(op, fa); err != nil {
		return nil, rep, err
	}
	opt = opt.withDefaults(n)
	rep.Tol = opt.Tol
	start := time.Now()
	res, err := newResident(op, b, fa, opt)
	if err != nil {
		return nil, rep, err
	}
	defer func() { err = errors.Join(err, res.Free()) }()
	s := &refinement{op: op, fa: fa, b: b, opt: opt, rep: &rep, res: res, normA: op.NormInf(), normB: maxAbs(b),
		bestEta: math.Inf(1), prev: math.Inf(1), useGMRES: opt.Refine == GMRES, doubleWord: opt.Residual == DoubleWord}
	if opt.TimeBudget > 0 {
		s.deadline = start.Add(opt.TimeBudget)
	}
	if err := res.Start(); err != nil {
		return nil, rep, err
	}
	if err := s.steps(ctx); err != nil {
		return nil, rep, err
	}
	rep.BackwardError = s.bestEta
	rep.RefineSeconds = time.Since(start).Seconds()
	var best []float64 // none when no iterate had a finite backward error
	if !math.IsInf(s.bestEta, 1) {
		best = make([]float64, n)
		if err := res.Read(BestVector, best); err != nil {
			return nil, rep, err
		}
	}
	if !rep.Converged {
		return best, rep, fmt.Errorf("%w: best backward error %.3g (step %d) after %d steps (%s), tolerance %.3g",
			ErrNotConverged, s.bestEta, rep.BestStep, rep.Outer, rep.Stop, opt.Tol)
	}
	return best, rep, nil
}

// steps measures each iterate and corrects it until stop says so.
func (s *refinement) steps(ctx context.Context) error {
	var inner int
	var innerRes float64
	for it := 0; ; it++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		eta, err := s.measure(it, inner, innerRes)
		if err != nil {
			return err
		}
		if s.stop(it, eta) {
			return nil
		}
		var done bool
		if done, inner, innerRes, err = s.correct(ctx); err != nil {
			return err
		}
		if !done { // GMRES failed on the numbers; rep.Stop says how
			return nil
		}
		s.rep.Outer++
	}
}

// refinement is one solve's state between its steps.
type refinement struct {
	op           Operator
	fa           Factorization
	b            []float64
	opt          Options
	rep          *Report
	res          Resident // x, r and the best x
	normA, normB float64
	bestEta      float64
	prev         float64 // the previous step's backward error
	stalls       int
	useGMRES     bool
	doubleWord   bool // residuals in double-word arithmetic from now on
	deadline     time.Time
}

// residual computes r = b − A·x in the precision of the moment and
// returns the backward error.
func (s *refinement) residual() (float64, error) {
	var normR, normX float64
	var err error
	if dw, ok := s.res.(DoubleWordResident); s.doubleWord && ok {
		normR, normX, err = dw.ResidualDoubleWord()
	} else if s.doubleWord {
		err = fmt.Errorf("solve: %T computes residuals in fp64 only", s.res)
	} else {
		normR, normX, err = s.res.Residual()
	}
	return backwardErrorOf(normR, normX, s.normA, s.normB), err
}

// measure computes the residual of the iterate and its backward errors,
// records the step and keeps the best iterate.
func (s *refinement) measure(it, inner int, innerRes float64) (float64, error) {
	eta, err := s.residual()
	if err != nil {
		return 0, err
	}
	if s.opt.Residual == AutoResidual && !s.doubleWord && s.fp64Stops(eta) && canDoubleWord(s.res) {
		// fp64 residuals no longer resolve the backward error: measure
		// this iterate again in double-word arithmetic, and start the
		// best iterate and the stall count afresh on that scale.
		s.doubleWord = true
		if eta, err = s.residual(); err != nil {
			return 0, err
		}
		s.bestEta, s.prev, s.stalls = math.Inf(1), math.Inf(1), 0
	}
	st := Step{Iteration: it, BackwardError: eta, GMRES: inner, GMRESResidual: innerRes, DoubleWord: s.doubleWord}
	if h, ok := s.res.(*hostResident); ok {
		if d, ok := s.op.(dense); ok {
			st.Componentwise = componentwiseBackwardError(d, h.r, h.x, s.b)
		}
	}
	s.rep.Steps = append(s.rep.Steps, st)
	if s.opt.Step != nil {
		s.opt.Step(st)
	}
	if s.opt.Iterate != nil {
		x := make([]float64, len(s.b))
		if err := s.res.Read(IterateVector, x); err != nil {
			return 0, err
		}
		s.opt.Iterate(st, x)
	}
	if eta < s.bestEta {
		if err := s.res.Keep(); err != nil {
			return 0, err
		}
		s.bestEta, s.rep.BestStep = eta, it
	}
	return eta, nil
}

// fp64Stops says whether fp64 residuals have served: the backward error
// is above the tolerance but at DoubleWordFrom or below, or it stalled
// from StallDoubleWordFrom down.
func (s *refinement) fp64Stops(eta float64) bool {
	return eta > s.opt.Tol && (eta <= DoubleWordFrom || eta <= StallDoubleWordFrom && eta > s.prev/2)
}

// stop says whether the solve ends at step it (and sets Report.Stop and
// Converged), and for Auto whether GMRES-IR takes over from here.
func (s *refinement) stop(it int, eta float64) bool {
	opt, rep := s.opt, s.rep
	converged := eta <= opt.Tol
	switch {
	case math.IsNaN(eta) || math.IsInf(eta, 0):
		rep.Stop = "the iterate is not finite"
	case converged && !opt.AllSteps:
		rep.Converged, rep.Stop = true, fmt.Sprintf("backward error %.3g ≤ tolerance %.3g", eta, opt.Tol)
	case opt.Refine == None:
		rep.Stop = "no refinement asked for"
	case it == opt.MaxIter:
		rep.Stop = fmt.Sprintf("%d refinement steps, the limit", it)
		if it == 0 {
			rep.Stop = "a limit of 0 refinement steps"
		}
		if opt.AllSteps && s.bestEta <= opt.Tol {
			rep.Converged = true
		}
	case !s.deadline.IsZero() && time.Now().After(s.deadline):
		rep.Stop = budgetSpent(opt.TimeBudget)
	}
	switched := false
	if opt.Refine == Auto && !s.useGMRES && it > 0 && rep.Stop == "" {
		// Classical refinement gains too little here, or at its rate
		// would not reach the tolerance in the steps left: GMRES-IR from
		// now.
		left := float64(opt.MaxIter - it)
		if !(eta <= s.prev/autoGain) || math.Log(eta/opt.Tol) > left*math.Log(s.prev/eta) {
			s.useGMRES, switched, rep.GMRESFrom = true, true, it+1
		}
	}
	if eta > s.prev/2 && !switched {
		s.stalls++
	} else {
		s.stalls = 0
	}
	if rep.Stop == "" && s.stalls == 2 && !opt.AllSteps {
		rep.Stop = "stalled: two steps without halving the backward error"
	}
	s.prev = eta
	return rep.Stop != ""
}

// correct adds the correction d to x: d = M⁻¹r (IR), or GMRES's solution
// of M⁻¹A·d = M⁻¹r, with GMRES's iterations and residual; done is false
// (and the error nil) when GMRES failed on the numbers (Report.Stop then
// says how).
func (s *refinement) correct(ctx context.Context) (done bool, inner int, innerRes float64, err error) {
	if !s.useGMRES {
		return true, 0, 0, s.res.Correct()
	}
	d := make([]float64, len(s.b))
	if err := s.res.Read(ResidualVector, d); err != nil {
		return false, 0, 0, err
	}
	if err := precondition(s.fa, s.opt, d); err != nil {
		return false, 0, 0, err
	}
	d, inner, innerRes, err = gmres(ctx, len(d), s.op, s.fa, d, s.opt, s.deadline)
	s.rep.GMRES += inner
	var failed gmresFailure
	if errors.As(err, &failed) {
		s.rep.Stop = string(failed)
		return false, inner, innerRes, nil
	}
	if err != nil {
		return false, inner, innerRes, err
	}
	return true, inner, innerRes, s.res.Add(d)
}

// componentwiseBackwardError is max_i |r_i| / (|A|·|x| + |b|)_i, 0/0
// counting as 0.
func componentwiseBackwardError(d dense, r, x, b []float64) float64 {
	w := 0.0
	for i := 0; i < d.n; i++ {
		den := math.Abs(b[i])
		for j, v := range d.a[i*d.n : (i+1)*d.n] {
			den += math.Abs(v) * math.Abs(x[j])
		}
		switch {
		case den > 0:
			w = math.Max(w, math.Abs(r[i])/den)
		case r[i] != 0:
			return math.Inf(1)
		}
	}
	return w
}

// System factors a in the form and refines: the whole solve on the CPU.
// The report includes the factorization's backward error when withLUError.
func System(ctx context.Context, form lu.Form, n int, a, b []float64, luOpt lu.Options, opt Options, withLUError bool) ([]float64, Report, error) {
	rep := Report{N: n, Factor: form.Name, Storage: form.Storage.Name(), Refine: opt.Refine, Residual: opt.Residual.String()}
	if err := checkSystem(n, a, b); err != nil {
		return nil, rep, err
	}
	fa, err := lu.Factor(ctx, form, n, a, luOpt)
	if err != nil {
		return nil, rep, err
	}
	rep.NB = fa.NB
	rep.FactorSeconds = fa.Duration.Seconds()
	var luErr *lu.Errors
	if withLUError {
		e, err := fa.ErrorsContext(ctx, a)
		if err != nil {
			return nil, rep, err
		}
		luErr = &e
	}
	x, r, err := Refine(ctx, n, a, b, fa, opt)
	r.Factor, r.Storage, r.NB, r.FactorSeconds, r.LUError = rep.Factor, rep.Storage, rep.NB, rep.FactorSeconds, luErr
	return x, r, err
}

// check refuses options no default can mend: NaN, infinite or negative
// tolerances and negative counts (0 is each one's default).
func (o Options) check() error {
	for _, t := range []struct {
		name string
		v    float64
	}{{"Tol", o.Tol}, {"GMRESTol", o.GMRESTol}} {
		if !(t.v >= 0 && t.v < math.Inf(1)) {
			return fmt.Errorf("solve: %s = %g: want a positive number, or 0 for the default", t.name, t.v)
		}
	}
	if o.Precond == AutoResidual {
		return errors.New("solve: Precond = AutoResidual: the preconditioned products are in FP64 or DoubleWord")
	}
	if o.MaxIter < NoSteps || o.MaxInner < 0 {
		return fmt.Errorf("solve: MaxIter = %d, MaxInner = %d: want counts ≥ 0 (0 for the default, NoSteps for no steps as MaxIter)", o.MaxIter, o.MaxInner)
	}
	return nil
}

// checkPrecond refuses double-word preconditioned products where they
// cannot be formed: A not held here as a matrix, or factors without a
// double-word solve.
func (o Options) checkPrecond(op Operator, fa Factorization) error {
	if o.Precond != DoubleWord {
		return nil
	}
	if _, ok := op.(dense); !ok {
		return fmt.Errorf("solve: preconditioned products in %s need A as a matrix here", o.Precond)
	}
	if _, ok := fa.(DoubleWordFactorization); !ok {
		return fmt.Errorf("solve: preconditioned products in %s need factors that solve in double-word arithmetic (%T does not)", o.Precond, fa)
	}
	return nil
}

func (o Options) withDefaults(n int) Options {
	if o.Tol == 0 {
		o.Tol = math.Max(math.Sqrt(float64(n)), 2) * 0x1p-53
	}
	switch o.MaxIter {
	case 0:
		o.MaxIter = 20
	case NoSteps:
		o.MaxIter = 0
	}
	if o.GMRESTol == 0 {
		o.GMRESTol = 1e-6
	}
	if o.MaxInner == 0 {
		o.MaxInner = min(n, 300)
	}
	return o
}

// checkSystem validates the shapes and values of a·x = b.
func checkSystem(n int, a, b []float64) error {
	switch {
	case n <= 0:
		return lu.ErrEmpty
	case len(a) != n*n:
		return fmt.Errorf("solve: A has %d entries; an %d×%d matrix has %d", len(a), n, n, n*n)
	case len(b) != n:
		return fmt.Errorf("solve: b has %d entries, A is %d×%d", len(b), n, n)
	}
	for i, v := range a {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("solve: A(%d, %d) is %v", i/n+1, i%n+1, v)
		}
	}
	for i, v := range b {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("solve: b(%d) is %v", i+1, v)
		}
	}
	return nil
}

// BackwardError returns ‖b − A·x‖∞ / (‖A‖∞‖x‖∞ + ‖b‖∞), the residual
// computed in double-word arithmetic.
func BackwardError(n int, a, x, b []float64) float64 {
	r := make([]float64, n)
	residual(DoubleWord, n, a, x, b, r)
	normB := maxAbs(b)
	return backwardError(r, x, infNorm(n, a), normB)
}

// OperatorBackwardError is BackwardError with A given as an operator: the
// residual b − A·x in double-word arithmetic for a DoubleWordOperator,
// else with A·x from MulVec, in fp64.
func OperatorBackwardError(a Operator, x, b []float64) (float64, error) {
	r, p := make([]float64, len(b)), FP64
	if _, ok := a.(DoubleWordOperator); ok {
		p = DoubleWord
	}
	if err := residualOf(p, a, x, b, r); err != nil {
		return 0, err
	}
	normB := maxAbs(b)
	return backwardError(r, x, a.NormInf(), normB), nil
}

func backwardError(r, x []float64, normA, normB float64) float64 {
	return backwardErrorOf(maxAbs(r), maxAbs(x), normA, normB)
}

// backwardErrorOf is ‖r‖∞ / (‖A‖∞‖x‖∞ + ‖b‖∞) from the norms.
func backwardErrorOf(nr, nx, normA, normB float64) float64 {
	den := normA*nx + normB
	if den == 0 {
		return 0
	}
	return nr / den
}

// maxAbs is ‖v‖∞.
func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

func infNorm(n int, a []float64) float64 {
	best := 0.0
	for i := 0; i < n; i++ {
		s := 0.0
		for _, v := range a[i*n : (i+1)*n] {
			s += math.Abs(v)
		}
		best = math.Max(best, s)
	}
	return best
}

// residual sets r = b − A·x in the given precision.
func residual(p Residual, n int, a, x, b, r []float64) {
	for i := 0; i < n; i++ {
		row := a[i*n : (i+1)*n]
		if p == FP64 {
			s := b[i]
			for j, v := range row {
				s -= float64(v * x[j])
			}
			r[i] = s
			continue
		}
		hi, lo := b[i], 0.0
		for j, v := range row {
			// The conversion keeps the compiler from fusing the product
			// into the sum below, which would break TwoSum.
			p := float64(-v * x[j])
			e := math.FMA(-v, x[j], -p)
			s := hi + p
			bb := s - hi
			lo += (hi - (s - bb)) + (p - bb) + e
			hi = s
		}
		r[i] = hi + lo
	}
}

// mulVec sets y = A·x in fp64.
func mulVec(n int, a, x, y []float64) {
	for i := 0; i < n; i++ {
		s := 0.0
		for j, v := range a[i*n : (i+1)*n] {
			s += float64(v * x[j])
		}
		y[i] = s
	}
}
