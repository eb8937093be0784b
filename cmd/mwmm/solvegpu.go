package main

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mwmm/mwmm/experiment"
	"github.com/mwmm/mwmm/gpu/dense"
	"github.com/mwmm/mwmm/gpu/gemm"
	"github.com/mwmm/mwmm/internal/outfile"
	"github.com/mwmm/mwmm/matgen"
	"github.com/mwmm/mwmm/solve"
)

const gpuSolveHelp = `GPU (--engine gpu): A, its factors, the refinement's products and GMRES's
basis stay on the device (classical Gram–Schmidt twice, by cuBLAS dgemv;
only the Hessenberg coefficients come here, about 1.4 ms an iteration at
n = 8192 on an H100). --factor is one of
  fp16-store   HPL-MxP's LU: without pivoting, held in fp16 (A scaled by
               powers of two into range), diagonal blocks by cuSOLVER's
               sgetrf, their inverted triangles applied by products, and
               updates fp16 × fp16 with fp32 accumulation on cuBLASLt;
               a growth check on every panel (multipliers at most 64,
               |U| at most 64·max|A|) fails when A needs pivoting
  fp64, fp32   cuSOLVER's getrf in that precision
  tc32         the blocked LU (panels: cuSOLVER's sgetrf or ours, --panel;
               U12: cuBLAS strmm with L11⁻¹)
               with trailing updates on the tensor cores through cuBLASLt:
               L21 and U12 rounded to --input (fp16, U12 scaled by a power
               of two into range; bf16; tf32), fp32 accumulation and
               storage: the TC32 form
  VARIANT      the blocked LU with updates C −= A·B on the fused FABsum
               kernel, e.g. double-fp16-fabsum (fp32-accurate from fp16)
  ozaki-int8xS the blocked LU held in fp64 (panels: cuSOLVER's dgetrf,
               or ours with --panel recursive; U12: cuBLAS dtrmm with
               L11⁻¹) with updates on the int8 tensor cores:
               each row of L21 and column of U12 scaled by a power of two
               and cut into S = 2 … 7 signed 7-bit digits, their products
               exact in int32 (one cuBLASLt product per level of digits,
               S in all), added in fp64: about 7·S bits, beyond fp32's 24
               from S = 4, for ill-conditioned A
or auto (the default): fp16-store, then double-fp16-fabsum and fp64
without pivoting if refinement does not converge or takes longer than the
factorization did; when the growth check fails, with pivoting: fp64
below n = 32768 (butterfly, then partial), double-fp16-fabsum, then fp64
from 32768 (the report says which and why). With --bench, auto is timed
as a solve runs it, and its status says which form answered. --nb is
the panel width (default 1024; 1536 for the
multiword forms when they pivot, from n = 32768, and 2048 for the Ozaki
forms, where it is faster);
--panel recursive factors the pivoted panels with our own kernels
instead of cuSOLVER's getrf; auto (the default) does so from n = 16384
for the forms that factor in fp32, where it is faster on an H100. L's
row interchanges are applied once, at the end. --pivot auto (the default):
fp16-store checks the growth on every panel and fails when A needs
pivoting; the other forms then pivot (fp64 after a butterfly transform,
falling back to partial when that fails), and after a check that passed
they do not. A form named alone with auto leaves pivoting out when A is
strictly diagonally dominant (one pass over A), else pivots as above.
--pivot partial always pivots; --pivot none never does (refinement, or
the factorization's check, reports the failure on a matrix that needs
pivoting). --pivot butterfly factors M·A·Nᵀ without pivoting, M and N
random butterflies of depth 2: the growth of elimination without
pivoting on a random matrix (10^3 to 10^5), which only fp64 factors
absorb; the solves apply M and Nᵀ, and refinement runs against A.
Residuals are fp64 (cuBLAS dgemv on A), the corrections' solves fp64 from
the factors' exact values (cuBLAS dtrsv). Random A is drawn on the device: uniform, centered,
normal, diagdom, hpl-mxp and fasi-higham as on the CPU engines, bit for
bit, and randsvd as Q₁·Σ·Q₂ᵀ with Q₁, Q₂ from the QR factorizations of
Gaussian matrices.

--bench SIZES times, for each size and --matrix kind (comma-separated),
cuSOLVER's dgetrf+dgetrs and its refinement solvers DDgesv, DSgesv,
DXgesv, DHgesv, DBgesv beside each --factor, in one run on one GPU: time,
2/3·n³/time, iterations and the backward error of every answer, measured
in fp64 from the original A. Without --tol, mwmm's solves refine until
their backward error is at most getrf+getrs's on the same system.
--bench a times the same on the system of --a, at its order: b from --b,
or random (from --seed) without it; the table names A's file.
--csv and --plot PREFIX keep the table and draw it (speed-up over
getrf+getrs and iterations against n, or against κ for one size and
randsvd kinds); --replot TABLE.csv --plot PREFIX redraws a saved table
on any machine.`

// sharedSolver is the solver on the process's engine of device 0.
func sharedSolver() (*dense.Solver, error) {
	e, err := gemm.SharedEngine(0)
	if err != nil {
		return nil, err
	}
	return dense.New(e), nil
}

// policyFor is the library's policy for --factor: forms empty (auto) or
// one form, with --nb, --panel, --pivot ... as the auto forms' tuning.
func policyFor(forms []dense.LUForm, tuning dense.LUForm, sopt solve.Options) dense.Policy {
	if len(forms) == 1 && forms[0].Name == "auto" {
		forms = nil
	}
	return dense.Policy{Forms: forms, Tuning: tuning, Refine: sopt}
}

// gpuFormName maps the CLI's --factor and --input to a GPU form.
func gpuFormName(factor, input string) string {
	if factor == "tc32" {
		return "tc32-" + input
	}
	return factor
}

func runSolveGPU(fs *flag.FlagSet, o *systemOptions, sopt solve.Options, stdout, stderr io.Writer) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["unit"] {
		return usagef("--unit names a model's block FMA; --engine gpu runs on the GPU's own")
	}
	if !set["factor"] && o.bench == "" {
		o.factor = "auto"
	}
	forms, tuning, err := gpuForms(o, set)
	if err != nil {
		return err
	}
	// The command line is checked before the GPU is looked for: a bad one
	// fails alike on every machine (exit 2).
	if set["gpus"] {
		gs, err := parseGPUsSolve(o, set, sopt)
		if err != nil {
			return err
		}
		ctx, stop := signalContext()
		defer stop()
		if o.bench == "" {
			return gs.solveOnce(ctx, fs, o, stdout, stderr)
		}
		return gs.run(ctx, true, stdout)
	}
	if o.bench != "" {
		if err := refineFlags(o, set); err != nil {
			return err
		}
		sizes, kinds, err := benchSystems(fs, o)
		if err != nil {
			return err
		}
		o.tolSet = set["tol"]
		if err := checkOutputs(benchOutputs(o)...); err != nil {
			return err
		}
		e, err := sharedSolver()
		if err != nil {
			return err
		}
		ctx, stop := signalContext()
		defer stop()
		return solveBench(ctx, e, o, forms, tuning, sopt, sizes, kinds, reportTo(stdout, stderr, output{"csv", o.csv}), stdout)
	}
	if o.csv != "" || o.plot != "" {
		return usagef("--csv and --plot write --bench's table and figures: add --bench SIZES (or --bench a with --a)")
	}
	return solveOneGPU(fs, o, policyFor(forms, tuning, sopt), stdout, stderr)
}

// gpuForms reads --factor, --input, --nb, --panel and --pivot: the forms
// to solve with (several, crossed, with --bench; "auto" a placeholder),
// and the settings auto's forms take.
func gpuForms(o *systemOptions, set map[string]bool) (forms []dense.LUForm, tuning dense.LUForm, err error) {
	nb := 0 // dense.DefaultNB's
	if set["nb"] {
		if nb = o.nb; nb < 1 {
			return nil, tuning, usagef("--nb %d: the block size must be at least 1", nb)
		}
	}
	panels, err := parseList(o.panel, "--panel", dense.PanelKinds, dense.ParsePanels)
	if err != nil {
		return nil, tuning, err
	}
	if len(panels) > 1 && o.bench == "" {
		return nil, tuning, usagef("--panel %s: one kind per solve (both with --bench)", o.panel)
	}
	pivotings, err := parseList(o.pivot, "--pivot", dense.Pivotings, dense.ParsePivoting)
	if err != nil {
		return nil, tuning, err
	}
	if len(pivotings) > 1 && o.bench == "" {
		return nil, tuning, usagef("--pivot %s: one kind per solve (several with --bench)", o.pivot)
	}
	tuning = dense.LUForm{NB: nb, LookaheadSMs: o.lookahead, Profile: o.profile, Pivoting: pivotings[0], Panels: panels[0]}
	for _, name := range strings.Split(o.factor, ",") {
		name = strings.TrimSpace(name)
		if name == "auto" {
			forms = append(forms, dense.LUForm{Name: "auto"}) // resolved for each system
			continue
		}
		if err := checkFormInput(name, o.input, set["input"]); err != nil {
			return nil, tuning, err
		}
		base, err := dense.ParseLUForm(gpuFormName(name, o.input))
		if err != nil {
			return nil, tuning, usage(err)
		}
		base.NB, base.LookaheadSMs, base.Profile = nb, o.lookahead, o.profile
		forms = append(forms, crossForms(base, pivotings, panels)...)
	}
	if o.bench == "" && len(forms) > 1 {
		return nil, tuning, usagef("--factor %s: one factorization per solve (several with --bench)", o.factor)
	}
	return forms, tuning, nil
}

// parseList reads a comma-separated flag value with parse.
func parseList[T any](value, flagName string, names []string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, name := range strings.Split(value, ",") {
		v, err := parse(strings.TrimSpace(name))
		if err != nil {
			return nil, usagef("%s %q: %s", flagName, name, strings.Join(names, ", "))
		}
		out = append(out, v)
	}
	return out, nil
}

// crossForms is base with each pivoting and, for the blocked LU, each
// panel kind, named "+partial", "+recursive" ... when there are several.
func crossForms(base dense.LUForm, pivotings []dense.Pivoting, panels []dense.Panels) []dense.LUForm {
	var forms []dense.LUForm
	for _, pivoting := range pivotings {
		f := base
		f.Pivoting = pivoting
		if len(pivotings) > 1 {
			f.Name += "+" + dense.Pivotings[pivoting]
		}
		for i, kind := range panels {
			if !f.Blocked() && i > 0 { // cuSOLVER's own getrf: no panels
				break
			}
			g := f
			g.Panels = kind
			if len(panels) > 1 && f.Blocked() {
				g.Name += "+" + dense.PanelKinds[kind]
			}
			forms = append(forms, g)
		}
	}
	return forms
}

// solveOneGPU solves the system of the command line with the policy and
// prints the report.
func solveOneGPU(fs *flag.FlagSet, o *systemOptions, pol dense.Policy, stdout, stderr io.Writer) error {
	in, err := readSystem(fs, o, true)
	if err != nil {
		return err
	}
	if err := checkOutputs(output{"x", o.x}); err != nil {
		return err
	}
	e, err := sharedSolver()
	if err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	sys, b, what, err := gpuSystem(e, in, o.seed)
	if err != nil {
		return err
	}
	defer sys.Free()
	// With --factor auto, the library's forms in turn until refinement
	// converges.
	x, rep, serr := dense.Solve(ctx, sys, b, pol)
	final := rep.Final()
	if final.Outcome == dense.FactorFailed || final.Outcome == dense.RefineFailed {
		return serr
	}
	tried := rep.Escalations()
	if len(tried) > 0 && serr == nil {
		fmt.Fprintf(stderr, "mwmm solve: --factor auto: left %s; %s answered\n", strings.Join(tried, ", then "), final.Form.Name)
	}
	sum := solveSummary{Matrix: what, Update: gpuUpdateName(final.Form, final.NB), Pivoting: final.Pivoting.String(), Report: final.Refine, Escalated: tried}
	return writeSolveOutputs(ctx, o, sum, x, serr, stdout, stderr)
}

// writeSolveOutputs writes --x (when the solve converged) and the report,
// as JSON with --json, and returns the solve's error, then --x's.
func writeSolveOutputs(ctx context.Context, o *systemOptions, sum solveSummary, x []float64, serr error, stdout, stderr io.Writer) error {
	var xerr error // reported after the report
	if serr == nil && o.x != "" {
		if xerr = writeArray(ctx, o.x, stdout, "float64", []int{len(x)}, x); xerr == nil {
			sum.X = o.x
		}
	}
	stdout = reportTo(stdout, stderr, output{"x", o.x})
	var err error
	if o.json {
		err = writeJSON(stdout, sum)
	} else {
		err = writeSolveReport(stdout, sum)
	}
	if err != nil {
		return err
	}
	if serr != nil && o.x != "" {
		return fmt.Errorf("%w; %s not written", serr, o.x)
	}
	if serr != nil {
		return serr
	}
	return xerr
}

// benchOutputs are the files solve --bench writes: --csv's table and
// --plot's two figures.
func benchOutputs(o *systemOptions) []output {
	outs := []output{{"csv", o.csv}}
	if o.plot != "" {
		outs = append(outs, output{"plot", o.plot + "-time.png"}, output{"plot", o.plot + "-iterations.png"})
	}
	return outs
}

// gpuUpdateName says how the form factors, with block size nb.
func gpuUpdateName(f dense.LUForm, nb int) string {
	switch u := f.Update.(type) {
	case dense.Getrf:
		if u.Precision == dense.FP64 {
			return "cuSOLVER dgetrf (fp64)"
		}
		return "cuSOLVER sgetrf (fp32)"
	case dense.Ozaki:
		return fmt.Sprintf("blocked LU in fp64, nb %d, updates on the int8 tensor cores (Ozaki scheme, %d digits)", nb, u.Digits)
	case dense.Fused:
		return fmt.Sprintf("blocked LU, nb %d, updates on the fused kernel (%s)", nb, u.Plan.Name)
	case dense.Half:
		return fmt.Sprintf("blocked LU without pivoting held in fp16, nb %d, updates on cuBLASLt (fp16 words, fp32 accumulation)", nb)
	}
	return fmt.Sprintf("blocked LU, nb %d, updates on cuBLASLt (%s words, fp32 accumulation)", nb, f.WordName())
}

// gpuSystem puts the A of in on the device: copied, or drawn there.
func gpuSystem(e *dense.Solver, in systemInput, seed uint64) (*dense.System, []float64, string, error) {
	if in.a != nil {
		sys, err := e.NewSystem(in.n, in.a)
		return sys, in.b, in.what, err
	}
	sys, what, err := gpuMatrix(e, in.spec, in.n, seed)
	return sys, in.b, what, err
}

// gpuMatrix draws A on the device, or here for kinds the device has not.
func gpuMatrix(e *dense.Solver, spec experiment.MatrixSpec, n int, seed uint64) (*dense.System, string, error) {
	if c, ok := spec.CounterSpec(); ok && slices.Contains(dense.MatrixKinds, c.Kind) {
		sys, err := e.GenerateSpec(n, c, matgen.Seed(seed, "A")) // the CPU engines' A
		return sys, fmt.Sprintf("%s, %d×%d (seed %d, drawn on the GPU)", spec, n, n, seed), err
	}
	if spec.Kind == "randsvd" {
		sys, err := e.GenerateRandsvd(spec.Sigmas(n), seed)
		return sys, fmt.Sprintf("%s, %d×%d (seed %d, drawn on the GPU: Q from the QR of Gaussian matrices)", spec, n, n, seed), err
	}
	sys, err := e.NewSystem(n, spec.Generate(seed, "A", n))
	return sys, fmt.Sprintf("%s, %d×%d (seed %d)", spec, n, n, seed), err
}

type benchRow struct {
	n                   int
	matrix, method      string
	seconds, factorSecs float64
	outer, inner        int
	backward            float64
	status              string
	pivoting            string // how the factorization pivoted, for the CSV
	done                dense.PivotingDone
	phases              *dense.Phases
	mulVec, solves      time.Duration // refinement: A·x and the factors' solves for the residuals and corrections
	gmres               time.Duration // GMRES's iterations on the device's basis (their products and solves included)
}

// timedOperator and timedFactors add up where refinement's time goes.
type timedOperator struct {
	*dense.System
	d *time.Duration
}

func (t timedOperator) MulVec(x, y []float64) error {
	start := time.Now()
	defer func() { *t.d += time.Since(start) }()
	return t.System.MulVec(x, y)
}

type timedFactors struct {
	*dense.Factors
	d, gmres *time.Duration
	wait     bool // corrections on the device are waited for (--profile)
}

func (t timedFactors) Solve(x []float64) error {
	start := time.Now()
	defer func() { *t.d += time.Since(start) }()
	return t.Factors.Solve(x)
}

// NewKrylovBasis keeps GMRES's basis on the device through the timing
// wrappers, and times its iterations into gmres.
func (t timedFactors) NewKrylovBasis(a solve.Operator, v0 []float64, size int) (solve.KrylovBasis, error) {
	if op, ok := a.(timedOperator); ok {
		a = op.System
	}
	b, err := t.Factors.NewKrylovBasis(a, v0, size)
	if b == nil || err != nil {
		return b, err
	}
	return timedBasis{b, t.gmres}, nil
}

// NewResident keeps refinement's vectors on the device through the timing
// wrappers: a residual's time counts as A·x, the first solve's and each
// correction's as solves.
func (t timedFactors) NewResident(a solve.Operator, b []float64) (solve.Resident, error) {
	op, ok := a.(timedOperator)
	if !ok {
		return t.Factors.NewResident(a, b)
	}
	r, err := t.Factors.NewResident(op.System, b)
	if r == nil || err != nil {
		return r, err
	}
	tr := timedResident{r, op.d, t.d, nil}
	if t.wait {
		tr.sync = op.System.Sync
	}
	return tr, nil
}

// timedResident times refinement's vectors on the device: corrections
// are queued without waiting, so without sync their time falls into the
// next residual's.
type timedResident struct {
	solve.Resident
	mulVec, solves *time.Duration
	sync           func() error
}

func (t timedResident) Start() error   { return timed(t.solves, t.waited(t.Resident.Start)) }
func (t timedResident) Correct() error { return timed(t.solves, t.waited(t.Resident.Correct)) }

func (t timedResident) waited(f func() error) func() error {
	if t.sync == nil {
		return f
	}
	return func() error { return errors.Join(f(), t.sync()) }
}

func (t timedResident) Residual() (normR, normX float64, err error) {
	return t.timedResidual(t.Resident.Residual)
}

// timedResidual runs a residual, adding its time to A·x's.
func (t timedResident) timedResidual(f func() (float64, float64, error)) (normR, normX float64, err error) {
	err = timed(t.mulVec, func() error {
		var err error
		normR, normX, err = f()
		return err
	})
	return normR, normX, err
}

// ResidualDoubleWord times the double-word residuals as A·x too.
func (t timedResident) ResidualDoubleWord() (normR, normX float64, err error) {
	dw, ok := t.Resident.(solve.DoubleWordResident)
	if !ok {
		return 0, 0, fmt.Errorf("gpu: %T computes residuals in fp64 only", t.Resident)
	}
	return t.timedResidual(dw.ResidualDoubleWord)
}

// timed runs f, adding its time to d.
func timed(d *time.Duration, f func() error) error {
	start := time.Now()
	defer func() { *d += time.Since(start) }()
	return f()
}

type timedBasis struct {
	solve.KrylovBasis
	d *time.Duration
}

func (t timedBasis) Expand(k int, h []float64) error {
	start := time.Now()
	defer func() { *t.d += time.Since(start) }()
	return t.KrylovBasis.Expand(k, h)
}

func (t timedBasis) Combine(y, x []float64) error {
	start := time.Now()
	defer func() { *t.d += time.Since(start) }()
	return t.KrylovBasis.Combine(y, x)
}

// A benchKind is one of --matrix's kinds, as typed (the table's label)
// and parsed; or, with --bench a, the system of --a (labelled with its
// file's name).
type benchKind struct {
	name string
	spec experiment.MatrixSpec
	file *systemInput // --bench a: A from --a, b from --b or random
}

// benchSystems reads --bench's sizes and --matrix's kinds, or with --bench
// a the system of --a and --b.
func benchSystems(fs *flag.FlagSet, o *systemOptions) ([]int, []benchKind, error) {
	if strings.EqualFold(strings.TrimSpace(o.bench), "a") {
		return benchFile(fs, o)
	}
	if o.a != "" || o.b != "" {
		return nil, nil, usagef("--bench %s times random systems of these sizes; --bench a times the system of --a (and --b)", o.bench)
	}
	sizes, err := parseSizes(o.bench)
	if err != nil {
		return nil, nil, err
	}
	var kinds []benchKind
	for _, name := range splitSpecs(o.matrix) {
		spec, err := experiment.ParseMatrix(name)
		if err != nil {
			return nil, nil, usage(err)
		}
		kinds = append(kinds, benchKind{name: name, spec: spec})
	}
	return sizes, kinds, nil
}

// benchFile reads --bench a's system: A from --a (its order is the one
// size), b from --b or, without it, random as for a generated A.
func benchFile(fs *flag.FlagSet, o *systemOptions) ([]int, []benchKind, error) {
	if o.a == "" {
		return nil, nil, usagef("--bench a times the system of --a A.npy (and --b b.npy): give --a, or sizes to --bench")
	}
	in, err := readSystem(fs, o, false)
	if err != nil {
		return nil, nil, err
	}
	if o.b != "" {
		in.b, err = readRHS(o.b, in.n)
	} else {
		in.b = experiment.RandomVector(o.seed, "b", in.n)
	}
	if err != nil {
		return nil, nil, err
	}
	return []int{in.n}, []benchKind{{name: filepath.Base(o.a), file: &in}}, nil
}

// parseSizes reads --bench's sizes.
func parseSizes(list string) ([]int, error) {
	var sizes []int
	for _, s := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return nil, usagef("--bench %q: sizes are positive integers, comma-separated", list)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

// solveBench prints the table to stdout and writes --csv (which may be
// "-", the real stdout: then stdout is stderr).
func solveBench(ctx context.Context, e *dense.Solver, o *systemOptions, forms []dense.LUForm, tuning dense.LUForm, sopt solve.Options,
	sizes []int, kinds []benchKind, stdout, realStdout io.Writer) (err error) {
	t := &benchTable{stdout: stdout}
	if o.csv != "" {
		// Not stopped by the interrupt: the rows measured are kept, as
		// experiment keeps its rows.
		f, cerr := outfile.Create(context.Background(), o.csv, realStdout)
		if cerr != nil {
			return cerr
		}
		defer func() { err = errors.Join(err, f.Commit()) }() // the named result
		t.out = csv.NewWriter(f)
		t.out.Write([]string{"n", "matrix", "method", "seconds", "tflops", "factor_seconds", "outer", "inner", "backward_error", "status",
			"panel_seconds", "swap_seconds", "trsm_seconds", "update_seconds", "convert_seconds", "matvec_seconds", "solve_seconds", "pivoting", "gmres_seconds"})
	}
	// Rows are printed as they come (fixed widths: a long run shows its
	// progress).
	fmt.Fprintf(stdout, benchRowFormat, "n", "matrix", "method", "time (s)", "TFLOP/s", "factor (s)", "steps", "GMRES its", "backward error", "vs getrf", "status")
	for _, n := range sizes {
		for _, k := range kinds {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := benchSystem(ctx, e, o, t, forms, tuning, sopt, n, k); err != nil {
				return err
			}
		}
	}
	if o.plot != "" {
		files, err := saveSolveFigures(t.plotRows, o.plot)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", strings.Join(files, ", "))
	}
	return nil
}

// benchRowFormat is a row of --bench's table.
const benchRowFormat = "%6s  %-9s  %-30s  %9s  %7s  %10s  %5s  %9s  %14s  %9s  %s\n"

// benchTable prints --bench's rows, keeps them for the figures and
// writes them to the CSV file, if any.
type benchTable struct {
	stdout   io.Writer
	out      *csv.Writer
	plotRows []solvePlotRow
}

// emit prints r with its speed-up over base (getrf+getrs's time).
func (t *benchTable) emit(r benchRow, base float64) {
	stdout, out := t.stdout, t.out
	t.plotRows = append(t.plotRows, solvePlotRow{r.n, r.matrix, r.method, r.seconds, r.outer, r.inner, r.status})
	tf := 2.0 / 3 * math.Pow(float64(r.n), 3) / r.seconds / 1e12
	ratio := ""
	if base > 0 && r.seconds > 0 {
		ratio = fmt.Sprintf("%.2f×", base/r.seconds)
	}
	status := r.status
	switch p := r.done; {
	case p.Kind == dense.PivotButterfly:
		status += " (butterfly, no pivoting)"
	case p.Fallback != "":
		status += " (butterfly failed: partial pivoting)"
	case p.Kind == dense.PivotNone:
		status += " (no pivoting)"
	}
	fmt.Fprintf(stdout, benchRowFormat, strconv.Itoa(r.n), r.matrix, r.method, fmt.Sprintf("%.4g", r.seconds), fmt.Sprintf("%.1f", tf),
		fmt.Sprintf("%.4g", r.factorSecs), strconv.Itoa(r.outer), strconv.Itoa(r.inner), fmt.Sprintf("%.3g", r.backward), ratio, status)
	if p := r.phases; p != nil {
		fmt.Fprintf(stdout, "%6s  %-9s    factor: panels %.3g s, swaps %.3g s, trsm %.3g s, updates %.3g s, conversions %.3g s; refinement: A·x %.3g s, solves %.3g s, GMRES %.3g s\n",
			"", "", p.Panel.Seconds(), p.Swap.Seconds(), p.Trsm.Seconds(), p.Update.Seconds(), p.Convert.Seconds(), r.mulVec.Seconds(), r.solves.Seconds(), r.gmres.Seconds())
	}
	if out != nil {
		ph := dense.Phases{}
		if r.phases != nil {
			ph = *r.phases
		}
		out.Write([]string{strconv.Itoa(r.n), r.matrix, r.method, fmt.Sprint(r.seconds), fmt.Sprint(tf), fmt.Sprint(r.factorSecs),
			strconv.Itoa(r.outer), strconv.Itoa(r.inner), fmt.Sprint(r.backward), r.status,
			fmt.Sprint(ph.Panel.Seconds()), fmt.Sprint(ph.Swap.Seconds()), fmt.Sprint(ph.Trsm.Seconds()), fmt.Sprint(ph.Update.Seconds()),
			fmt.Sprint(ph.Convert.Seconds()), fmt.Sprint(r.mulVec.Seconds()), fmt.Sprint(r.solves.Seconds()), r.pivoting, fmt.Sprint(r.gmres.Seconds())})
		out.Flush()
	}
}

// benchSystem times cuSOLVER's solvers and each form on one system.
func benchSystem(ctx context.Context, e *dense.Solver, o *systemOptions, t *benchTable, forms []dense.LUForm, tuning dense.LUForm, sopt solve.Options,
	n int, k benchKind) error {
	in := systemInput{n: n, spec: k.spec, b: experiment.RandomVector(o.seed, "b", n)}
	if k.file != nil {
		in = *k.file
	}
	sys, b, _, err := gpuSystem(e, in, o.seed)
	if err != nil {
		return err
	}
	defer sys.Free()
	// Every method once, untimed, on this system: the kernels its shapes
	// and its pivoting pick are loaded, and every time is a steady one.
	for _, m := range dense.SolveBaselines {
		sys.Baseline(m, b)
	}
	for _, f := range forms {
		dense.Solve(ctx, sys, b, policyFor([]dense.LUForm{f}, tuning, sopt))
	}
	base := 0.0
	for _, m := range dense.SolveBaselines {
		r := benchRow{n: n, matrix: k.name, method: "cuSOLVER " + m, status: "ok", pivoting: "partial"}
		res, err := sys.Baseline(m, b)
		r.seconds, r.outer = res.Duration.Seconds(), res.Iterations
		if err != nil {
			r.status, r.backward = err.Error(), math.NaN()
		} else {
			r.backward = backwardOn(sys, res.X, b)
			if res.Iterations < 0 {
				r.status = "fell back to fp64"
			}
		}
		if m == "getrf+getrs" && err == nil {
			base = r.seconds
			if !o.tolSet {
				// Refine until at least as accurate as getrf+getrs.
				sopt.Tol = r.backward
			}
		}
		t.emit(r, base)
	}
	for _, f := range forms {
		r, err := benchForm(ctx, sys, b, f, tuning, sopt, n, k.name)
		if err != nil {
			return err
		}
		t.emit(r, base)
	}
	return nil
}

// benchForm times one solve in the form (auto's forms for "auto"), with
// where refinement's time went.
func benchForm(ctx context.Context, sys *dense.System, b []float64, f dense.LUForm, tuning dense.LUForm, sopt solve.Options, n int, kind string) (benchRow, error) {
	r := benchRow{n: n, matrix: kind, method: "mwmm " + f.Name, status: "ok"}
	pol := policyFor([]dense.LUForm{f}, tuning, sopt)
	pol.Instrument = func(op solve.Operator, fa solve.Factorization) (solve.Operator, solve.Factorization) {
		return timedOperator{op.(*dense.System), &r.mulVec}, timedFactors{fa.(*dense.Factors), &r.solves, &r.gmres, tuning.Profile}
	}
	x, srep, err := dense.Solve(ctx, sys, b, pol)
	final := srep.Final()
	if final.Outcome == dense.FactorFailed {
		r.status, r.backward, r.seconds = err.Error(), math.NaN(), srep.Elapsed.Seconds()
		return r, nil
	}
	rep := final.Refine
	r.phases, r.pivoting, r.done = final.Phases, final.Pivoting.String(), final.Pivoting
	r.seconds = srep.Elapsed.Seconds()
	if f.Name == "auto" {
		// Which form answered, and which were tried first.
		r.status = "ok: " + final.Form.Name
		if tried := srep.Escalations(); len(tried) > 0 {
			r.status += fmt.Sprintf(" after %d other", len(tried))
		}
	}
	r.factorSecs, r.outer, r.inner = final.Factor.Seconds(), rep.Outer, rep.GMRES
	if err != nil && !errors.Is(err, solve.ErrNotConverged) {
		return r, err
	}
	r.backward = rep.BackwardError
	if err != nil {
		r.status = "not converged: " + rep.Stop
	} else if be := backwardOn(sys, x, b); be != rep.BackwardError {
		r.backward = be
	}
	return r, nil
}

// backwardOn is ‖b − A·x‖∞/(‖A‖∞‖x‖∞ + ‖b‖∞) with A·x in fp64 on the
// GPU; NaN if the GPU fails.
func backwardOn(sys *dense.System, x, b []float64) float64 {
	be, err := solve.OperatorBackwardError(sys, x, b)
	if err != nil {
		return math.NaN()
	}
	return be
}
