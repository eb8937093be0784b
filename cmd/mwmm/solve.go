package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/mwmm/mwmm/experiment"
	"github.com/mwmm/mwmm/internal/budget"
	"github.com/mwmm/mwmm/internal/npy"
	"github.com/mwmm/mwmm/internal/progress"
	"github.com/mwmm/mwmm/lu"
	"github.com/mwmm/mwmm/solve"
)

const factorHelp = `
--factor says how the LU factorization computes (package lu). Every form
factors the panel and solves for U12 in its storage format, one rounding
per operation; they differ in the trailing updates A22 ← A22 − L21·U12:

  tc16     through the block FMA of --unit with fp16 output: the
           factors are stored in fp16 (the TC16 form of Blanchard et al.)
  tc32     through the block FMA with fp32 output; L21 and U12 are
           rounded to --input (fp16) for it; factors in fp32 (TC32)
  fp16, bf16, fp32, fp64
           plain arithmetic in that format, fl(c − fl(l·u)) term by term
  VARIANT  a multiword variant (mwmm gemm --variants), e.g.
           double-fp16-fabsum: fp32-accurate updates from fp16 words, on
           model:UNIT (bit-exact, slow) or, with --unit reference, the fast
           float64 engine; factors in fp32

--unit is a preset or spec as 'mwmm mma list' shows them (v100, t4, a100,
h100, ieee, or with overrides: v100:extra=2).`

var luCmd = &command{
	name:    "lu",
	summary: "LU factorization with tensor-core block FMAs (TC16, TC32, multiword) and its errors",
	usage:   "mwmm lu [--a A.npy | --size N [--matrix KIND]] [--factor F] [--unit UNIT] [--nb NB] [--out LU.npy] [--json]",
	help: `
Lu factors a square matrix, P·A = L̂·Û, with a right-looking blocked LU with
partial pivoting (or, with --pivot none, without: P = I, for matrices that
need no row interchanges) whose updates run as --factor says, and reports the
normwise backward error ‖P·A − L̂Û‖∞/‖A‖∞, the componentwise error
max |P·fl(A) − L̂Û|/(|L̂||Û|) beside its a-priori bound (fl(A): A rounded to
the storage format), the growth factor max|Û|/max|A| and ‖|L̂||Û|‖∞/‖A‖∞.
A zero pivot (a matrix singular in the form's arithmetic) or an entry
outside the storage format's range is reported as an error, exit status 1.
` + factorHelp + `

A is a NumPy .npy file (float32 or float64), or a random matrix of order
--size drawn as --matrix says:
` + matrixKindsHelp(),
	examples: `
mwmm lu --size 256 --factor tc16
mwmm lu --size 256 --factor tc32 --unit a100 --input bf16
mwmm lu --size 256 --matrix randsvd:kappa=1e8 --factor double-fp16-fabsum
mwmm lu --a A.npy --factor fp32 --out LU.npy --perm P.npy
# no row interchanges on a diagonally dominant A, the block FMA paper's set-up
mwmm lu --size 512 --matrix diagdom --pivot none --nb 256 --factor tc32`,
	brief: `
Input and output:
  a        the n×n matrix A, a .npy file of float32 or float64
  size     order of a random A, without --a (default 256)
  matrix   centered (default), uniform, normal, diagdom, hpl-mxp, fasi-higham, randsvd
  seed     seed of the random A
  out      write L\\U to this .npy file (L's unit diagonal implied)
  perm     write the row permutation to this .npy file
  json     print the report as JSON
Factorization:
  factor   tc32 (default), tc16, fp16, bf16, fp32, fp64 or a multiword variant
  unit     block FMA: v100 (default), t4, a100, h100, ieee (mwmm mma list), reference
  input    the unit's input format for tc16 and tc32
  nb       block size: panel width and inner dimension of the updates
  pivot    partial (default) or none
  engine   model:UNIT (the same as --unit) or reference
  force    run work estimated at over an hour or beyond the free memory
`,
	flags: func() *flag.FlagSet { fs, _ := systemFlags("lu"); return fs },
	run:   runLU,
}

var solveCmd = &command{
	name:    "solve",
	summary: "solve Ax = b to fp64 accuracy from low-precision LU factors (GMRES-IR, refinement)",
	usage:   "mwmm solve [--a A.npy --b b.npy | --size N [--matrix KIND]] [--x x.npy] [--factor F] [flags]",
	help: `
Solve factors A as 'mwmm lu' does (--factor, --unit) and refines the
solution in fp64 until the normwise backward error
‖b − A·x‖∞/(‖A‖∞‖x‖∞ + ‖b‖∞) is at most --tol (default √n·2^-53, LAPACK
dsgesv's criterion).

--refine gmres (GMRES-IR) solves each correction by GMRES on the system
preconditioned by the factors, which converges while about
κ(A)·u_f·2^-26.5 < 1 (u_f: the factors' accuracy) given enough GMRES
iterations (--max-inner): where many singular values lie below the
factors' error, as with randsvd's geometric ones, that takes hundreds or
more. --refine ir solves it with the factors alone (κ(A)·u_f < 1), one
solve and one product a step where GMRES takes a pair more per iteration.
--refine auto (the default) refines classically while each step cuts the
backward error a hundredfold, and by GMRES-IR from the first step that
does not (the report says from which); none returns the LU solution.
Residuals are in fp64, or in double-word arithmetic with --residual dd,
which brings the forward error down to order 2^-53 while κ(A)·2^-53 < 1;
auto (the default) turns from fp64 to dd at the step whose backward error,
above the tolerance, is at most 16·2^-53 or stalls below 2^-43.
The condition above is Carson and Higham's, whose analysis computes
GMRES's preconditioned products Û⁻¹L̂⁻¹A·v in u² = 2^-106: --precond dd
computes them (and each step's Û⁻¹L̂⁻¹r) in double-word arithmetic so; in
fp64, the default, the condition is about κ(A)³·u_f²·2^-53 < 1 (mwmm bound
--lu prints both limits).

It prints the backward error after each step with the GMRES iterations it
took, and the time of the factorization and of the refinement. A solve that
does not reach --tol (refinement stalled, diverged or ran out of steps)
prints its steps, writes no x, and exits with status 1.
` + factorHelp + `
` + gpuSolveHelp + `

A and b are NumPy .npy files (float32 or float64; b a vector or an n×1
column); x is written as a float64 vector. Without them, A is a random
matrix of order --size drawn as --matrix says, and b has entries uniform in
(−0.5, 0.5]:
` + matrixKindsHelp(),
	examples: `
mwmm solve --size 500 --matrix randsvd:kappa=1e8 --factor tc32
mwmm solve --engine gpu --size 8192 --factor double-fp16-fabsum
mwmm solve --a A.npy --b b.npy --x x.npy --factor tc16 --tol 1e-12
# κ·u16 ≫ 1: classical refinement from fp16 factors fails, exit 1
mwmm solve --size 500 --matrix randsvd:kappa=1e8 --factor fp16 --refine ir
mwmm solve --size 300 --factor double-fp16-fabsum --unit v100 --json
mwmm solve --engine gpu --bench 4096,8192 --matrix centered,diagdom \
    --factor tc32-fp16,double-fp16-fabsum,fp32 --csv solve.csv
mwmm solve --engine gpu --gpus 2 --matrix hpl-mxp --bench 32768,65536`,
	brief: solveBrief,
	flags: func() *flag.FlagSet { fs, _ := systemFlags("solve"); return fs },
	run:   runSolve,
}

const solveBrief = `
Input and output:
  a              the n×n matrix A, a .npy file of float32 or float64
  b              the right-hand side b, a .npy file
  size           order of a random A, without --a (default 256)
  matrix         centered (default), uniform, normal, diagdom, hpl-mxp, fasi-higham, randsvd
  seed           seed of the random A and b
  x              write the solution to this .npy file (- for standard output)
  json           print the report as JSON
Factorization:
  factor         tc32 (default), tc16, fp16, bf16, fp32, fp64, a multiword variant; gpu: auto
  unit           block FMA: v100 (default), t4, a100, h100, ieee (mwmm mma list), reference
  input          the unit's input format for tc16 and tc32
  nb             block size: panel width and the updates' inner dimension (default 32)
  pivot          partial, none, auto (default; gpu: none if A is diagonally dominant)
  engine         model:UNIT (the same as --unit), reference, or gpu (flags below)
  lu-error       also measure the factorization's backward error
  force          run work estimated at over an hour or beyond the free memory
Refinement:
  refine         auto (default: classical, then GMRES-IR), gmres, ir or none
  tol            stop at this normwise backward error (default √n·2^-53)
  max-iter       at most N refinement steps
  max-inner      at most N GMRES iterations a step (default min(n, 300))
  gmres-tol      GMRES's relative residual on the preconditioned system
  residual,precond  fp64 or dd (double-word); auto: dd near u
GPU only (--engine gpu):
  bench          time each --factor and cuSOLVER's solvers at these sizes, or a: on --a's A
  csv            with --bench: also write the table to this .csv file
  plot           with --bench or --replot: draw PREFIX-time.png, PREFIX-iterations.png
  replot         redraw --plot's figures from a --csv table (no GPU needed)
  profile        with --bench: split each LU's time into its phases
  panel          how pivoted panels are factored: auto (default), sgetrf or recursive
  lookahead-sms  the SMs the trailing update leaves to the next panel (default 32)
  gpus           on N GPUs or a PxQ grid (pivoting on 1xQ grids only)
`

func matrixKindsHelp() string {
	kinds := experiment.MatrixKinds()
	w := 0
	for _, k := range kinds {
		w = max(w, utf8.RuneCountInString(k.Name))
	}
	var b strings.Builder
	for _, k := range kinds {
		for i, l := range wrapLine(k.Doc, manualWidth-w-3) {
			if i > 0 {
				k.Name = ""
			}
			fmt.Fprintf(&b, "  %-*s %s\n", w, k.Name, l)
		}
	}
	return b.String()
}

// systemOptions are lu's and solve's flags, grouped by the modes that read
// them; the GPU solve (solvegpu.go) reads them through the promoted fields.
type systemOptions struct {
	systemSource  // every mode: A, b, the factorization, the report
	refineOptions // solve: the refinement
	luOutputs     // lu: the factors' files
	gpuOptions    // solve --engine gpu, --gpus and --bench
}

// systemSource says what to factor and how, and what to print.
type systemSource struct {
	a, b, x, matrix, factor, unit, input, engine, pivot string
	size, nb                                            int
	seed                                                uint64
	cpuPivot                                            lu.Pivoting // --pivot on this machine
	json, force                                         bool
}

// refineOptions are solve's refinement flags.
type refineOptions struct {
	refine, residual, precond string
	tol, gmresTol             float64
	maxIter, maxInner         int
	luError                   bool
}

// luOutputs are lu's files: L\U and the permutation.
type luOutputs struct{ out, perm string }

// gpuOptions are the GPU's blocked LU and its benchmark.
type gpuOptions struct {
	gpus, bench, csv, panel, plot, replot string
	lookahead                             int
	profile, tolSet                       bool
}

func systemFlags(name string) (*flag.FlagSet, *systemOptions) {
	o := new(systemOptions)
	fs := newFlagSet(name)
	fs.StringVar(&o.a, "a", "", "`A.npy`, the n×n matrix")
	fs.IntVar(&o.size, "size", 0, "order `N` of a random A when --a is not given (default 256)")
	fs.StringVar(&o.matrix, "matrix", "centered", "the random A: `KIND`[:key=value,...], e.g. randsvd:kappa=1e8,mode=one-small")
	fs.Uint64Var(&o.seed, "seed", 1, "`SEED` of the random A (and b)")
	fs.StringVar(&o.factor, "factor", "tc32", "the factorization `FORM`: tc16, tc32, fp16, bf16, fp32, fp64 or a multiword variant; with --engine gpu also ozaki-int8xS (S = 2…7; fp64 factors, updates from int8 digits) and auto, its default there")
	fs.StringVar(&o.unit, "unit", "v100", "the block FMA `UNIT` of tc16, tc32 and multiword forms (or reference for multiword)")
	fs.StringVar(&o.input, "input", "fp16", "the unit's input `FORMAT` for tc16 and tc32")
	fs.BoolVar(&o.json, "json", false, "print the report as JSON")
	fs.BoolVar(&o.force, "force", false, "run sizes estimated to take over an hour or more memory than is available")
	if name == "lu" {
		fs.IntVar(&o.nb, "nb", lu.DefaultNB, "block size `NB`: panel width and inner dimension of the updates")
		fs.StringVar(&o.pivot, "pivot", "partial", "how the LU pivots, `HOW`: partial (each column's largest entry) or none (the diagonal entry: for matrices that need no row interchanges, such as diagonally dominant and symmetric positive definite ones)")
		fs.StringVar(&o.engine, "engine", "", "`ENGINE`: model:UNIT (the same as --unit UNIT) or reference (a multiword form's products in float64, --unit reference)")
		fs.StringVar(&o.out, "out", "", "write L\\U (L below the diagonal, unit diagonal implied) to this `.npy` file")
		fs.StringVar(&o.perm, "perm", "", "write the row permutation (row i of P·A is row perm[i] of A, 0-based) to this `.npy` file")
		return fs, o
	}
	fs.IntVar(&o.nb, "nb", lu.DefaultNB, fmt.Sprintf("block size `NB`: panel width and inner dimension of the updates (default %d; with --engine gpu 1024, 1536 for a multiword form that pivots from n = 32768, 2048 for ozaki-int8xS)", lu.DefaultNB))
	fs.StringVar(&o.gpus, "gpus", "", "with --engine gpu: solve on `N` GPUs of this machine (the squarest grid) or a PxQ grid of them (NCCL; fp16-store first, --pivot auto pivots where its growth check fails, on 1xQ grids)")
	fs.StringVar(&o.engine, "engine", "", "where to solve, `ENGINE`: model:UNIT (the same as --unit UNIT), reference (a multiword form's products in float64, --unit reference) or gpu (A and the factors on an NVIDIA GPU; see 'GPU' below); default: this machine with --unit's model")
	fs.StringVar(&o.b, "b", "", "`b.npy`, the right-hand side")
	fs.StringVar(&o.x, "x", "", "write the solution to this `.npy` file")
	fs.StringVar(&o.refine, "refine", "auto", "refinement `METHOD`: auto (classical while a step gains 100×, then GMRES-IR), gmres (GMRES-IR), ir (classical) or none")
	fs.StringVar(&o.residual, "residual", "auto", "precision `P` of the residuals: fp64, dd (double-word) or auto")
	fs.StringVar(&o.precond, "precond", "fp64", "precision `P` of GMRES's preconditioned products Û⁻¹L̂⁻¹A·v and of each step's Û⁻¹L̂⁻¹r: fp64, or dd (double-word, standing in for the u² of Carson and Higham's analysis; on this machine only)")
	fs.Float64Var(&o.tol, "tol", 0, "stop at this normwise backward `ERROR` (default √n·2^-53)")
	fs.IntVar(&o.maxIter, "max-iter", 20, "at most `N` refinement steps")
	fs.Float64Var(&o.gmresTol, "gmres-tol", 1e-6, "GMRES's relative residual `TOL` on the preconditioned system")
	fs.IntVar(&o.maxInner, "max-inner", 0, "at most `N` GMRES iterations per step, without restarts (default min(n, 300))")
	fs.BoolVar(&o.luError, "lu-error", false, "also measure the factorization's backward error (costs about as much as factoring)")
	fs.StringVar(&o.bench, "bench", "", "with --engine gpu: time every --factor (comma-separated) and cuSOLVER's solvers on random systems of these `SIZES` (e.g. 4096,8192), each --matrix kind; or, given the word a, on the system of --a (and --b; a random b without it)")
	fs.StringVar(&o.csv, "csv", "", "with --bench: also write the table to this `.csv` file")
	fs.StringVar(&o.plot, "plot", "", "with --bench or --replot: draw time and iterations against n (or against κ for one n and randsvd kinds) into `PREFIX`-time.png and PREFIX-iterations.png")
	fs.StringVar(&o.replot, "replot", "", "draw --plot's figures from a `TABLE.csv` that --bench --csv wrote (no GPU needed)")
	fs.IntVar(&o.lookahead, "lookahead-sms", 0, "with --engine gpu: the `SMS` (multiprocessors) the trailing update leaves to the next panel, factored meanwhile (default 32; -1: no look-ahead)")
	fs.StringVar(&o.panel, "panel", "auto", "with --engine gpu: how the blocked LU factors its pivoted panels, `KIND`: sgetrf (cuSOLVER's getrf), recursive (ours: leaves of 32 columns whose rows the grid holds in registers, one exchange between the blocks a column), or auto (recursive from n = 16384, where it is faster, for the forms that factor in fp32; cuSOLVER's otherwise, and for the Ozaki forms' fp64 panels, where ours is slower); with --bench, sgetrf,recursive times each form both ways")
	fs.BoolVar(&o.profile, "profile", false, "with --bench: split each blocked LU's time into panels, interchanges, triangular solves and updates (waits for the GPU after each)")
	fs.StringVar(&o.pivot, "pivot", "auto", "`HOW` the LU pivots: partial, none, or auto (partial here); with --engine gpu also butterfly (none after a random butterfly transform), and auto is fp16-store's growth check on every panel, whose verdict the forms after it follow (a form named alone: none when A is strictly diagonally dominant by rows or by columns, else butterfly for fp64, falling back to partial, and partial for the others); with --bench a comma-separated list, each --factor once per kind")
	return fs, o
}

// cpuEngine takes --engine model:UNIT or reference as the --unit they
// name, as gemm does (model:U is --unit U).
func cpuEngine(fs *flag.FlagSet, o *systemOptions) error {
	unit, ok := "", false
	switch {
	case o.engine == "":
		return nil
	case o.engine == "reference":
		unit, ok = "reference", true
	case strings.HasPrefix(o.engine, "model:"):
		unit, ok = strings.TrimPrefix(o.engine, "model:"), true
	}
	if !ok || unit == "" {
		return usagef("--engine %q: model:UNIT, reference or gpu", o.engine)
	}
	if flagSet(fs, "unit") && o.unit != unit {
		return usagef("--engine %s and --unit %s name two units", o.engine, o.unit)
	}
	o.unit = unit
	return nil
}

// checkFormInput refuses a tc16 or tc32 --factor that names its input
// format (tc32-bf16) beside an --input that says another. Both spellings
// name a form on this machine and on the GPU.
func checkFormInput(factor, input string, inputSet bool) error {
	base, in, ok := strings.Cut(strings.ToLower(strings.TrimSpace(factor)), "-")
	if ok && inputSet && (base == "tc16" || base == "tc32") && !strings.EqualFold(in, input) {
		return usagef("--factor %s names its input format; --input %s says another", factor, input)
	}
	return nil
}

// loadSystem reads or generates A (and b when withB) and parses the form.
func loadSystem(fs *flag.FlagSet, o *systemOptions, withB bool) (n int, a, b []float64, what string, form lu.Form, err error) {
	if err := checkFormInput(o.factor, o.input, flagSet(fs, "input")); err != nil {
		return 0, nil, nil, "", form, err
	}
	form, err = lu.ParseForm(o.factor, o.unit, o.input)
	if err != nil {
		if strings.HasPrefix(o.factor, "ozaki-") {
			err = fmt.Errorf("%w; %s is a GPU factorization: --engine gpu", err, o.factor)
		}
		return 0, nil, nil, "", form, usage(err)
	}
	if o.nb < 1 {
		return 0, nil, nil, "", form, usagef("--nb %d: the block size must be at least 1", o.nb)
	}
	if o.cpuPivot, err = cpuPivoting(o.pivot); err != nil {
		return 0, nil, nil, "", form, err
	}
	in, err := readSystem(fs, o, withB)
	if err != nil {
		return 0, nil, nil, "", form, err
	}
	if err := checkSystemCost(&o.systemSource, form, in.n, !withB || o.luError); err != nil {
		return 0, nil, nil, "", form, err
	}
	if in.a == nil {
		in.a = in.spec.Generate(o.seed, "A", in.n)
	}
	return in.n, in.a, in.b, in.what, form, nil
}

// cpuPivoting reads --pivot for a factorization here: partial, none, or
// auto (partial; the GPU's auto also looks at A).
func cpuPivoting(s string) (lu.Pivoting, error) {
	if strings.EqualFold(strings.TrimSpace(s), "auto") {
		return lu.PartialPivoting, nil
	}
	p, err := lu.ParsePivoting(s)
	if err != nil {
		return 0, usagef("--pivot %q: partial or none here (butterfly is the GPU's: --engine gpu)", s)
	}
	return p, nil
}

// systemInput is A and b as the flags give them: A read from --a, or the
// order and kind of a random A for the caller to draw (here, or on a GPU).
type systemInput struct {
	n    int
	a    []float64             // from --a; nil for a random A
	spec experiment.MatrixSpec // of a random A
	b    []float64             // with withB: from --b, or random
	what string
}

// refineFlags checks --tol, --gmres-tol, --max-iter and --max-inner: the
// tolerances positive finite numbers, the counts ≥ 0. The library reads 0
// as the default; a 0 typed here is refused, not silently replaced, except
// --max-iter 0, which means no refinement steps.
func refineFlags(o *systemOptions, set map[string]bool) error {
	for _, t := range []struct {
		name string
		v    float64
	}{{"tol", o.tol}, {"gmres-tol", o.gmresTol}} {
		if !(t.v > 0 && t.v < math.Inf(1)) && (set[t.name] || t.v != 0) {
			return usagef("--%s %g: want a positive number (leave it out for the default)", t.name, t.v)
		}
	}
	if o.maxIter < 0 {
		return usagef("--max-iter %d: want a number of steps ≥ 0", o.maxIter)
	}
	if o.maxInner < 0 || o.maxInner == 0 && set["max-inner"] {
		return usagef("--max-inner %d: want at least 1 GMRES iteration (leave it out for min(n, 300))", o.maxInner)
	}
	return nil
}

// readSystem checks the refinement flags and reads A and b from --a and
// --b, or checks --size and --matrix for a random A and draws b.
func readSystem(fs *flag.FlagSet, o *systemOptions, withB bool) (systemInput, error) {
	var in systemInput
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if withB {
		if err := refineFlags(o, set); err != nil {
			return in, err
		}
	}
	if o.a == "" {
		if o.b != "" {
			return in, usagef("--b needs --a: a right-hand side for a generated A would not match it")
		}
		spec, err := experiment.ParseMatrix(o.matrix)
		if err != nil {
			return in, usage(err)
		}
		n := o.size
		if !set["size"] {
			n = 256
		}
		if n < 1 {
			return in, usagef("--size %d: the order must be at least 1", n)
		}
		if _, err := budget.Entries(n, n); err != nil {
			return in, usagef("--size %d: %v", n, err)
		}
		in = systemInput{n: n, spec: spec, what: fmt.Sprintf("%s, %d×%d (seed %d)", spec, n, n, o.seed)}
		if withB {
			in.b = experiment.RandomVector(o.seed, "b", n)
		}
		return in, nil
	}
	if set["size"] || set["matrix"] {
		return in, usagef("--size and --matrix describe a random A; with --a they would be ignored")
	}
	m, err := npy.ReadFile(o.a)
	if err != nil {
		return in, err
	}
	switch {
	case m.Rows == 0 || m.Cols == 0:
		return in, fmt.Errorf("%s is %d×%d: an empty matrix has no LU factorization", o.a, m.Rows, m.Cols)
	case m.Rows != m.Cols:
		return in, fmt.Errorf("%s is %d×%d: LU needs a square matrix", o.a, m.Rows, m.Cols)
	}
	n := m.Rows
	in = systemInput{n: n, a: m.Data, what: fmt.Sprintf("%s, %d×%d", o.a, n, n)}
	if withB {
		if o.b == "" {
			return in, usagef("--a needs --b, the right-hand side")
		}
		in.b, err = readRHS(o.b, n)
	}
	return in, err
}

// readRHS reads the right-hand side of an order-n system from path.
func readRHS(path string, n int) ([]float64, error) {
	mb, err := npy.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if mb.Cols != 1 || mb.Rows != n {
		return nil, fmt.Errorf("%s is %d×%d: A is %d×%d, so b needs %d entries", path, mb.Rows, mb.Cols, n, n, n)
	}
	return mb.Data, nil
}

// factorOptions shows a progress bar for the factorization on a terminal,
// and warns of long runs.
func factorOptions(o *systemSource, form lu.Form, n int, stderr io.Writer) (lu.Options, func()) {
	if secs := estimateSeconds(form, n); secs > 30 {
		fmt.Fprintf(stderr, "mwmm: factoring %d×%d in %s takes about %s on this machine (Ctrl-C stops it)\n", n, n, form.Name, budget.Words(secs))
	}
	const ticks = 1000
	bar := progress.New(stderr, ticks, "lu "+form.Name)
	shown := 0.0
	opt := lu.Options{NB: o.nb, Pivot: o.cpuPivot, Progress: func(done, total float64) {
		t := done / total * ticks
		bar.Add(int64(t) - int64(shown))
		shown = float64(int64(t))
	}}
	return opt, bar.Finish
}

// checkSystemCost refuses an n×n factorization (with its backward error
// when withErrors) that would take over an hour or more memory than the
// machine has, as gemm does (package budget's policy).
func checkSystemCost(o *systemSource, form lu.Form, n int, withErrors bool) error {
	secs := estimateSeconds(form, n)
	if withErrors {
		m := float64(n)
		secs += m * m * m / 3 / errorsRate
	}
	// A, the factors and a copy for the updates or the residuals.
	c := budget.Cost{Seconds: secs, Bytes: 3 * 8 * float64(n) * float64(n)}
	err := budget.Machine().Check(c, o.force)
	var tl *budget.TooLongError
	if errors.As(err, &tl) {
		return usagef("%d×%d in %s: about %s on this machine; run it with --force, or on --engine gpu", n, n, form.Name, budget.Words(secs))
	}
	if err != nil {
		return fmt.Errorf("%d×%d in %s: %w", n, n, form.Name, err)
	}
	return nil
}

// errorsRate is lu.Errors' multiply-adds a second (double-word) here.
const errorsRate = 2e8

// estimateSeconds is a rough time for an n×n factorization: n³/3
// multiply-adds at the rate each arithmetic runs on two cores here.
func estimateSeconds(form lu.Form, n int) float64 {
	rate := 7e7 // a block-FMA model
	switch {
	case form.Kind == lu.ScalarUpdate && form.Storage.Precision() >= 24: // fp32, fp64: hardware arithmetic
		rate = 5e8
	case form.Kind == lu.ScalarUpdate: // fp16, bf16 ...: rounded in software
		rate = 6e7
	case form.Kind == lu.MultiwordUpdate:
		rate = 2e7
	}
	m := float64(n)
	return m * m * m / 3 / rate
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
}

type luSummary struct {
	Factor  string     `json:"factor"`
	Update  string     `json:"update"`
	Matrix  string     `json:"matrix"`
	N       int        `json:"n"`
	NB      int        `json:"nb"`
	Storage string     `json:"storage"`
	Seconds float64    `json:"seconds"`
	Pivot   string     `json:"pivoting"`
	Swaps   int        `json:"row_swaps"`
	Errors  *lu.Errors `json:"errors,omitempty"`
	Bound   float64    `json:"bound"`
	// BoundFirstOrder is the bound's first-order form.
	BoundFirstOrder string `json:"bound_first_order"`
	Underflows      int    `json:"underflows"`
}

func runLU(args []string, stdout, stderr io.Writer, stdin io.Reader) error {
	fs, o := systemFlags("lu")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if o.engine == "gpu" {
		return usagef("lu runs here; 'mwmm solve --engine gpu' factors on the GPU")
	}
	if err := cpuEngine(fs, o); err != nil {
		return err
	}
	outs := []output{{"out", o.out}, {"perm", o.perm}}
	n, a, _, what, form, err := loadSystem(fs, o, false)
	if err != nil {
		return err
	}
	if err := checkOutputs(outs...); err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	fa, sum, err := factorHere(ctx, &o.systemSource, form, n, a, stderr)
	if fa == nil {
		return err
	}
	sum.Matrix = what
	if werr := writeLU(ctx, o.luOutputs, fa, stdout); werr != nil {
		err = errors.Join(werr, err) // reported after the report
	}
	stdout = reportTo(stdout, stderr, outs...)
	if o.json {
		if jerr := writeJSON(stdout, sum); jerr != nil {
			return jerr
		}
	} else if rerr := writeLUReport(stdout, sum); rerr != nil {
		return rerr
	}
	return err // the SingularError or a failed write, if any, after the report
}

// factorHere factors A on this machine and measures the factors: nil
// factors with a failure, factors and a *lu.SingularError for a singular A
// (the report still comes).
func factorHere(ctx context.Context, o *systemSource, form lu.Form, n int, a []float64, stderr io.Writer) (*lu.Factors, luSummary, error) {
	opt, finish := factorOptions(o, form, n, stderr)
	fa, err := lu.Factor(ctx, form, n, a, opt)
	finish()
	var se *lu.SingularError
	if err != nil && !errors.As(err, &se) {
		return nil, luSummary{}, err
	}
	sum := luSummary{Factor: form.Name, Update: form.Update, N: n, NB: fa.NB, Storage: form.Storage.Name(),
		Seconds: fa.Duration.Seconds(), Underflows: fa.Underflows, Pivot: fa.Pivot.String()}
	for i, p := range fa.Piv {
		if p != i {
			sum.Swaps++
		}
	}
	if se == nil {
		e, err := fa.ErrorsContext(ctx, a)
		if err != nil {
			return nil, sum, err
		}
		sum.Errors = &e
	}
	if b, err := form.Bound(n, fa.NB); err == nil {
		sum.Bound, sum.BoundFirstOrder = b.Total, b.Dominant
	}
	return fa, sum, err
}

// writeLUReport prints lu's report as a table.
func writeLUReport(stdout io.Writer, sum luSummary) error {
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "factor\t%s: %s\n", sum.Factor, sum.Update)
	fmt.Fprintf(w, "matrix\t%s\n", sum.Matrix)
	fmt.Fprintf(w, "storage\t%s, block size %d\n", sum.Storage, sum.NB)
	fmt.Fprintf(w, "pivoting\t%s, %d row swaps\n", sum.Pivot, sum.Swaps)
	fmt.Fprintf(w, "time\t%.3g s\n", sum.Seconds)
	if e := sum.Errors; e != nil {
		fmt.Fprintf(w, "backward error\t%.3g\t‖P·A − L̂Û‖∞/‖A‖∞\n", e.Normwise)
		fmt.Fprintf(w, "componentwise error\t%.3g\tmax |P·fl(A) − L̂Û|/(|L̂||Û|); a-priori bound %.3g ≈ %s\n", e.Componentwise, sum.Bound, sum.BoundFirstOrder)
		fmt.Fprintf(w, "growth factor\t%.3g\tmax|Û|/max|A|\n", e.Growth)
		fmt.Fprintf(w, "‖|L̂||Û|‖∞/‖A‖∞\t%.3g\n", e.LUNorm)
	}
	if sum.Underflows > 0 {
		fmt.Fprintf(w, "underflows\t%d\tnonzero entries of A that are 0 in %s\n", sum.Underflows, sum.Storage)
	}
	return w.Flush()
}

// writeLU writes --out (L\\U) and --perm (int64 indices, as NumPy indexes).
func writeLU(ctx context.Context, o luOutputs, fa *lu.Factors, stdout io.Writer) error {
	n := fa.N
	if o.out != "" {
		if err := writeArray(ctx, o.out, stdout, "float64", []int{n, n}, fa.LU); err != nil {
			return err
		}
	}
	if o.perm == "" {
		return nil
	}
	pf := make([]float64, n)
	for i, v := range fa.Perm() {
		pf[i] = float64(v)
	}
	return writeArray(ctx, o.perm, stdout, "int64", []int{n}, pf)
}

type solveSummary struct {
	Matrix string `json:"matrix"`
	Update string `json:"update"`
	// Pivoting is how the GPU's LU pivoted: partial, or none and why.
	Pivoting string `json:"pivoting,omitempty"`
	// Escalated lists the factorizations --factor auto tried first, whose
	// refinement did not converge.
	Escalated []string `json:"escalated_from,omitempty"`
	solve.Report
	X string `json:"x,omitempty"`
}

func runSolve(args []string, stdout, stderr io.Writer, stdin io.Reader) error {
	fs, o := systemFlags("solve")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	method, err := solve.ParseMethod(o.refine)
	if err != nil {
		return usage(err)
	}
	res, err := solve.ParseResidual(o.residual)
	if err != nil {
		return usage(err)
	}
	precond, err := solve.ParseResidual(o.precond)
	if err != nil {
		return usagef("--precond: %v", err)
	}
	if precond == solve.AutoResidual {
		return usagef("--precond auto: the preconditioned products are in fp64 or dd")
	}
	if precond == solve.DoubleWord && o.engine == "gpu" {
		return usagef("--precond dd runs on this machine only (A as a matrix here), not with --engine gpu")
	}
	if o.replot != "" {
		return replotSolve(fs, o, stdout)
	}
	sopt := o.solveOptions(method, res, precond)
	if o.engine == "gpu" {
		return runSolveGPU(fs, o, sopt, stdout, stderr)
	}
	return solveHere(fs, o, sopt, stdout, stderr)
}

// solveOptions is the refinement flags as the library's options:
// --max-iter 0 is solve.NoSteps there, where 0 is the default.
func (r *refineOptions) solveOptions(method solve.Method, res, precond solve.Residual) solve.Options {
	maxIter := r.maxIter
	if maxIter == 0 {
		maxIter = solve.NoSteps
	}
	return solve.Options{Refine: method, Tol: r.tol, MaxIter: maxIter, GMRESTol: r.gmresTol, MaxInner: r.maxInner,
		Residual: res, Precond: precond}
}

// solveHere is solve on this machine: a model's or the reference's LU and
// the refinement in float64.
func solveHere(fs *flag.FlagSet, o *systemOptions, sopt solve.Options, stdout, stderr io.Writer) error {
	if err := cpuEngine(fs, o); err != nil {
		return err
	}
	if o.bench != "" || o.csv != "" || o.plot != "" {
		return usagef("--bench, --csv and --plot time the GPU solver: add --engine gpu")
	}
	for _, name := range []string{"lookahead-sms", "panel", "profile", "gpus"} {
		if flagSet(fs, name) {
			return usagef("--%s sets the GPU's blocked LU: add --engine gpu", name)
		}
	}
	n, a, b, what, form, err := loadSystem(fs, o, true)
	if err != nil {
		return err
	}
	if err := checkOutputs(output{"x", o.x}); err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	luOpt, finish := factorOptions(&o.systemSource, form, n, stderr)
	x, rep, serr := solve.System(ctx, form, n, a, b, luOpt, sopt, o.luError)
	finish()
	if serr != nil && !errors.Is(serr, solve.ErrNotConverged) {
		return serr
	}
	sum := solveSummary{Matrix: what, Update: form.Update, Report: rep}
	return writeSolveOutputs(ctx, o, sum, x, serr, stdout, stderr)
}

// residualName is the residuals' precision, and for auto the step from
// which they were double-word.
func residualName(name string, steps []solve.Step) string {
	if name != solve.AutoResidual.String() {
		return name
	}
	for _, st := range steps {
		if st.DoubleWord {
			return fmt.Sprintf("fp64, double-word from step %d (auto)", st.Iteration)
		}
	}
	return "fp64 (auto)"
}

func writeSolveReport(stdout io.Writer, s solveSummary) error {
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "factor\t%s: %s\n", s.Factor, s.Update)
	for _, e := range s.Escalated {
		fmt.Fprintf(w, "\tafter %s\n", e)
	}
	if s.Pivoting != "" {
		fmt.Fprintf(w, "pivoting\t%s\n", s.Pivoting)
	}
	fmt.Fprintf(w, "matrix\t%s\n", s.Matrix)
	fmt.Fprintf(w, "refine\t%s, residuals in %s, tolerance %.3g\n", refineName(s.Refine, s.GMRESFrom, s.Outer), residualName(s.Residual, s.Steps), s.Tol)
	if e := s.LUError; e != nil {
		fmt.Fprintf(w, "LU backward error\t%.3g\t(growth %.3g)\n", e.Normwise, e.Growth)
	}
	w.Flush()
	fmt.Fprintln(stdout)
	w = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "step\tbackward error\tGMRES iterations\t\n")
	for _, st := range s.Steps {
		it := ""
		if st.Iteration > 0 && (s.Refine == solve.GMRES || s.Refine == solve.Auto && s.GMRESFrom > 0 && st.Iteration >= s.GMRESFrom) {
			it = strconv.Itoa(st.GMRES)
		}
		fmt.Fprintf(w, "%d\t%.3g\t%s\t\n", st.Iteration, st.BackwardError, it)
	}
	w.Flush()
	fmt.Fprintln(stdout)
	verdict := "converged"
	if !s.Converged {
		verdict = "NOT converged"
	}
	fmt.Fprintf(stdout, "%s: %s; %s, %s\n", verdict, s.Stop, count(s.Outer, "step"), count(s.GMRES, "GMRES iteration"))
	if n := len(s.Steps); n > 0 && s.BestStep != s.Steps[n-1].Iteration {
		// The solution kept (and the JSON's backward_error) is the best step's.
		fmt.Fprintf(stdout, "best: step %d, backward error %.3g (the x kept)\n", s.BestStep, s.BackwardError)
	}
	fmt.Fprintf(stdout, "time: factorization %.3g s, refinement %.3g s\n", s.FactorSeconds, s.RefineSeconds)
	if s.X != "" {
		fmt.Fprintf(stdout, "wrote %s\n", s.X)
	}
	return nil
}

// refineName says how the solve refined: for auto, what it chose in the
// steps taken (none where the LU solution converged or --max-iter is 0).
func refineName(m solve.Method, gmresFrom, steps int) string {
	switch {
	case m == solve.GMRES:
		return "GMRES-IR"
	case m == solve.IR:
		return "classical iterative refinement"
	case m == solve.Auto && steps == 0:
		return "auto: no steps taken"
	case m == solve.Auto && gmresFrom > 0:
		return fmt.Sprintf("auto: classical, GMRES-IR from step %d", gmresFrom)
	case m == solve.Auto:
		return "auto: classical (each step gained 100× or more)"
	}
	return "none"
}
