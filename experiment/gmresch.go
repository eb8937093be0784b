package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/mwmm/mwmm/lu"
	"github.com/mwmm/mwmm/solve"
)

// The papers' set-up of GMRES-IR (Carson and Higham 2017 and 2018, the
// authors' public code eccarson/ir3; Haidar et al. 2018): n = 100, GMRES
// allowed n iterations (one cycle), tolerance 1e-6, at most 10 steps, the
// residual and the preconditioned products in the extended precision u²,
// here double-word arithmetic.
const (
	chN        = 100
	chMaxSteps = 10
)

// chForms are the factorizations the papers compare, on the first unit.
var chForms = []struct{ series, form string }{{"fp16", "fp16"}, {"TC16", "tc16"}, {"TC32", "tc32"}, {"fp32", "fp32"}}

// chSolve runs GMRES-IR in the papers' set-up (products in double-word, or
// in fp64 with fp64Products) and returns its iterates' steps and forward
// errors up to convergence: the first step whose forward, normwise and
// componentwise backward errors are all at most 2^-52, the test of the
// authors' code.
func (p *irPoint) chSolve(ctx context.Context, form string, fp64Products bool) ([]solve.Step, []float64, bool, error) {
	f, err := lu.ParseForm(form, p.unit, "fp16")
	if err != nil {
		return nil, nil, false, err
	}
	if err := p.system(ctx); err != nil {
		return nil, nil, false, err
	}
	var steps []solve.Step
	var ferr []float64
	done := false
	opt := solve.Options{Refine: solve.GMRES, Residual: solve.DoubleWord, Precond: solve.DoubleWord, MaxInner: p.n,
		GMRESTol: 1e-6, MaxIter: chMaxSteps, AllSteps: true,
		Iterate: func(s solve.Step, x []float64) {
			if done {
				return
			}
			steps, ferr = append(steps, s), append(ferr, relDiff(x, p.xref))
			done = max(ferr[len(ferr)-1], s.BackwardError, s.Componentwise) <= 0x1p-52
		}}
	if fp64Products {
		opt.Precond = solve.FP64
	}
	_, _, err = solve.System(ctx, f, p.n, p.a, p.b, lu.Options{}, opt, false)
	if err != nil && !errors.Is(err, solve.ErrNotConverged) {
		var se *lu.SingularError
		if errors.As(err, &se) {
			return nil, nil, false, nil // no factors: a point that does not converge
		}
		return nil, nil, false, err
	}
	return steps, ferr, done, nil
}

// chMatrices are the histories' matrices: Figure 10.1 of Carson and
// Higham 2018 (randsvd mode 2, κ₂ = 10^9) and the largest κ of their 2017
// paper's mode 3 tests.
var chMatrices = []struct {
	name string
	spec MatrixSpec
}{
	{"mode 2, κ₂=1e9", MatrixSpec{Kind: "randsvd", Kappa: 1e9, Mode: OneSmall}},
	{"mode 3, κ₂=1e10", MatrixSpec{Kind: "randsvd", Kappa: 1e10, Mode: Geometric}},
}

const chSetup = "A of order n = 100, randsvd: mode 2 (σ = 1, …, 1, 1/κ) or mode 3 (geometric), Haar U, V; b uniform in (−0.5,0.5]; " +
	"factors from package lu (partial pivoting, block size 32; TC16 and TC32 on the v100 model, or --engine model:UNIT); GMRES-IR " +
	"(package solve): GMRES with up to n = 100 iterations (one cycle), tolerance 1e-6, the residual and the preconditioned products " +
	"Û⁻¹L̂⁻¹A·v in double-word arithmetic (about 2^-104) where the papers use quad precision, the rest in fp64; at most 10 steps, " +
	"stopping at the first step whose forward, normwise and componentwise backward errors are all at most 2^-52 (the authors' " +
	"test); the forward error ‖x_i − x‖∞/‖x‖∞ is against x from fp64 LU refined with double-word residuals (the last of 8 steps)"

func gmresIRCH() *Experiment {
	e := &Experiment{
		Name:  "gmres-ir-ch",
		Title: "GMRES-IR in the papers' set-up (n = 100, products in extended precision): errors at each refinement step",
		Cites: carson + ", Figure 10.1 and section 10; " + haidar + "; " + blanchard + ", section 5",
		Shows: "Carson and Higham's Figure 10.1: on randsvd mode 2 with κ₂ = 10^9, GMRES-IR from fp16 LU factors (working precision fp64, " +
			"residuals in quad) converges in two steps to a forward error of order 2^-53 and backward errors of order 2^-53; here " +
			"beside it fp32 factors and the block-FMA paper's TC16 and TC32 factors, and a mode 3 matrix with κ₂ = 10^10",
		Setup:       chSetup + "; the steps' GMRES iterations are in the note column",
		PanelColumn: "panel", SeriesColumn: "factorization", XColumn: "step", YColumn: "error",
		XLabel: "refinement step", YLabel: "error", LogY: true, NoteColumn: "gmres_iterations", Columns: 3,
	}
	e.Engines = "model"
	e.Tasks = func(cfg Config) ([]Task, error) {
		units, err := unitsOf(cfg, "gmres-ir-ch")
		if err != nil {
			return nil, err
		}
		refs := &refCache{m: map[string]*refEntry{}}
		var tasks []Task
		for _, m := range chMatrices {
			p := irPoint{spec: m.spec, key: "gmres-ir-ch " + m.spec.String(), seed: cfg.Seed, n: chN, unit: units[0], refs: refs}
			for _, fc := range chForms {
				tasks = append(tasks, Task{Panel: m.name, Series: fc.series, Cost: chN * chN * chN,
					Run: func(ctx context.Context) ([]Row, error) { return p.historyRows(ctx, m.name, fc.series, fc.form) }})
			}
		}
		return tasks, nil
	}
	return e
}

// historyRows are one solve's steps: forward, normwise and componentwise
// backward errors, the step's GMRES iterations in the note.
func (p irPoint) historyRows(ctx context.Context, matrix, series, form string) ([]Row, error) {
	steps, ferr, _, err := p.chSolve(ctx, form, false)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for i, s := range steps {
		x, note := float64(s.Iteration), fmt.Sprint(s.GMRES)
		rows = append(rows,
			Row{Panel: matrix + ": forward error", Series: series, X: x, Y: ferr[i], Note: note},
			Row{Panel: matrix + ": normwise backward error", Series: series, X: x, Y: s.BackwardError, Note: note},
			Row{Panel: matrix + ": componentwise backward error", Series: series, X: x, Y: s.Componentwise, Note: note})
	}
	return rows, nil
}

func gmresIRCHKappa() *Experiment {
	e := &Experiment{
		Name:  "gmres-ir-ch-kappa",
		Title: "GMRES-IR in the papers' set-up (n = 100): GMRES iterations and forward error against κ(A)",
		Cites: carson + ", section 10; " + haidar + "; " + blanchard + ", section 5",
		Shows: "where GMRES-IR converges and what it costs in the papers' set-up: with the preconditioned products in extended " +
			"precision Carson and Higham's condition κ·u_f·u^½ < 1 lets fp16 factors reach κ ≈ 10^11 with fp64 as the working " +
			"precision, the number of GMRES iterations depending on the singular values; the series \"fp16, fp64 products\" computes " +
			"the products in fp64, where the condition becomes about κ³·u_f²·u < 1 (κ ≈ 3·10^7 for fp16 factors)",
		Setup: chSetup + "; κ₂ = 10^0, 10^1, …, 10^12 (--quick: 10^0, 10^4, 10^8, 10^12); y = the GMRES iterations of all steps up to " +
			"convergence, and the forward error there (or after 10 steps); the note says in how many steps it converged",
		PanelColumn: "panel", SeriesColumn: "factorization", XColumn: "kappa", YColumn: "value",
		XLabel: "κ₂(A)", YLabel: "value", LogX: true, LogY: true, NoteColumn: "converged", Columns: 2,
	}
	e.Engines = "model"
	e.Tasks = func(cfg Config) ([]Task, error) {
		units, err := unitsOf(cfg, "gmres-ir-ch-kappa")
		if err != nil {
			return nil, err
		}
		step := 1
		if cfg.Quick {
			step = 4
		}
		refs := &refCache{m: map[string]*refEntry{}}
		forms := append(chForms[:len(chForms):len(chForms)], struct{ series, form string }{"fp16, fp64 products", "fp16"})
		var tasks []Task
		for _, mode := range []struct{ name, mode string }{{"mode 2", OneSmall}, {"mode 3", Geometric}} {
			for ek := 0; ek <= 12; ek += step {
				spec := MatrixSpec{Kind: "randsvd", Kappa: math.Pow(10, float64(ek)), Mode: mode.mode}
				p := irPoint{spec: spec, key: "gmres-ir-ch " + spec.String(), seed: cfg.Seed, n: chN, unit: units[0], refs: refs}
				for _, fc := range forms {
					tasks = append(tasks, Task{Panel: mode.name, Series: fc.series, X: spec.Kappa, Cost: chN * chN * chN,
						Run: func(ctx context.Context) ([]Row, error) {
							return p.kappaRows(ctx, mode.name, fc.series, fc.form, fc.series == "fp16, fp64 products")
						}})
				}
			}
		}
		return tasks, nil
	}
	return e
}

// kappaRows is one solve of the κ sweep: its GMRES iterations and forward
// error at convergence (or at the end).
func (p irPoint) kappaRows(ctx context.Context, mode, series, form string, fp64Products bool) ([]Row, error) {
	steps, ferr, done, err := p.chSolve(ctx, form, fp64Products)
	if err != nil {
		return nil, err
	}
	if len(steps) == 0 {
		return []Row{{Panel: mode + ": GMRES iterations", Series: series, X: p.spec.Kappa, Y: math.NaN(), Note: "no: a zero pivot"}}, nil
	}
	its := 0
	for _, s := range steps {
		its += s.GMRES
	}
	last := len(steps) - 1
	note := fmt.Sprintf("yes, %d steps", steps[last].Iteration)
	if !done {
		note = fmt.Sprintf("no: %d steps", steps[last].Iteration)
	}
	return []Row{
		{Panel: mode + ": GMRES iterations", Series: series, X: p.spec.Kappa, Y: float64(its), Note: note},
		{Panel: mode + ": forward error", Series: series, X: p.spec.Kappa, Y: ferr[last], Note: note},
	}, nil
}
