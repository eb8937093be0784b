package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/mwmm/mwmm/experiment"
	"github.com/mwmm/mwmm/gpu/dense"
	"github.com/mwmm/mwmm/gpu/dist"
	"github.com/mwmm/mwmm/gpu/gemm"
	"github.com/mwmm/mwmm/matgen"
	"github.com/mwmm/mwmm/multiword"
	"github.com/mwmm/mwmm/solve"
)

// gpusSolve is one solve on several GPUs, and what it is compared with.
type gpusSolve struct {
	plan    multiword.Plan
	grid    dist.Grid
	nb      int
	sopt    solve.Options
	seed    uint64
	kind    string
	sizes   []int
	storage dist.Storage
	pivot   dist.Pivot
	tol     float64 // --tol; 0: solve's default, or with --bench cuSOLVERMg's backward error
}

// gpusStorage reads --factor for --gpus: fp16-store, or a fused FABsum
// plan as the fp32 storage's update; unset, the auto policy (fp16 first,
// double-fp16-fabsum's fp32 after it).
func gpusStorage(factor string, set bool) (dist.Storage, multiword.Plan, error) {
	storage, name := dist.StorageAuto, "double-fp16-fabsum"
	switch {
	case set && factor == dense.HalfForm:
		storage = dist.StorageHalf
	case set:
		storage, name = dist.StorageSingle, factor
	}
	plan, err := multiword.Lookup(name)
	if err == nil {
		err = gemm.FusedSupports(&plan)
	}
	if err != nil {
		return 0, plan, usagef("--factor %s: %v (several GPUs take %s or the fused kernels' plans)", name, err, dense.HalfForm)
	}
	return storage, plan, nil
}

// parseGPUsSolve reads solve's flags for --gpus: a generated A (a kind
// the GPUs draw) or --a, the storage (gpusStorage) and the pivoting.
func parseGPUsSolve(o *systemOptions, set map[string]bool, sopt solve.Options) (*gpusSolve, error) {
	g, err := dist.ParseGPUs(o.gpus)
	if err != nil {
		return nil, usage(err)
	}
	if o.a != "" && o.bench != "" {
		return nil, usagef("--bench on several GPUs times generated systems (--matrix); --a is solved once (--bench a times it on one GPU)")
	}
	kind := o.matrix // its canonical spelling where it parses: hpl-mxp:scale=1 is hpl-mxp
	if spec, err := experiment.ParseMatrix(o.matrix); err == nil {
		kind = spec.String()
	}
	if o.a == "" && !slices.Contains(dist.SystemKinds, kind) {
		return nil, usagef("--matrix %s: several GPUs draw %v (hpl-mxp at its default scale)", o.matrix, dist.SystemKinds)
	}
	storage, plan, err := gpusStorage(o.factor, set["factor"])
	if err != nil {
		return nil, err
	}
	s := &gpusSolve{plan: plan, storage: storage, grid: g, nb: 1024, sopt: sopt, tol: sopt.Tol, seed: o.seed, kind: kind, sizes: []int{256}}
	if set["nb"] {
		s.nb = o.nb
	}
	if set["size"] {
		s.sizes = []int{o.size}
	}
	pivots := map[string]dist.Pivot{"auto": dist.PivotAuto, "none": dist.PivotNone, "partial": dist.PivotPartial}
	p, ok := pivots[o.pivot]
	if !ok {
		return nil, usagef("--pivot %s: several GPUs take auto, none or partial", o.pivot)
	}
	s.pivot = p
	if _, err := dist.FirstRoad(s.options(), g); err != nil {
		return nil, usage(err)
	}
	if o.bench != "" {
		if s.sizes, err = parseSizes(o.bench); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// solveOnce solves the command line's system on the grid and prints
// solve's report (--json, --x as on one GPU).
func (s *gpusSolve) solveOnce(ctx context.Context, fs *flag.FlagSet, o *systemOptions, stdout, stderr io.Writer) error {
	n, what, a, b, err := s.input(fs, o)
	if err != nil {
		return err
	}
	if err := checkOutputs(output{"x", o.x}); err != nil {
		return err
	}
	team, err := s.team(s.grid)
	if err != nil {
		return err
	}
	defer team.Close()
	var sys *dist.System
	if a != nil {
		sys, err = dist.NewSystem(team, s.nb, a)
	} else {
		sys, err = dist.GenerateSystem(team, n, s.nb, s.kind, s.seed)
	}
	if err != nil {
		return err
	}
	defer sys.Free()
	x, rep, serr := dist.Solve(ctx, sys, b, s.options())
	if len(rep.Refine.Steps) == 0 {
		return serr
	}
	sum := solveSummary{Matrix: what, Report: rep.Refine,
		Update:   fmt.Sprintf("blocked LU over a %v grid of GPUs, nb %d, %s, factors gathered to GPU 0", s.grid, s.nb, roadUpdate(rep.Road, s.plan)),
		Pivoting: roadPivoting(rep)}
	return writeSolveOutputs(ctx, o, sum, x, serr, stdout, stderr)
}

// input reads --a and --b, or describes the generated A; b is random
// (from --seed) unless given.
func (s *gpusSolve) input(fs *flag.FlagSet, o *systemOptions) (n int, what string, a, b []float64, err error) {
	if o.a != "" {
		in, err := readSystem(fs, o, true)
		return in.n, in.what, in.a, in.b, err
	}
	if o.b != "" {
		return 0, "", nil, nil, usagef("--b needs --a: a right-hand side for a generated A would not match it")
	}
	n = s.sizes[0]
	if n < 1 {
		return 0, "", nil, nil, usagef("--size %d: the order must be at least 1", n)
	}
	return n, fmt.Sprintf("%s, %d×%d (seed %d)", s.kind, n, n, s.seed), nil, experiment.RandomVector(s.seed, "b", n), nil
}

// options are dist.Solve's, which chooses the road (dist.FirstRoad).
func (s *gpusSolve) options() dist.SolveOptions {
	return dist.SolveOptions{Plan: &s.plan, Storage: s.storage, Pivot: s.pivot, Refine: s.sopt}
}

// rhs is the right-hand side of every --gpus solve: centered, from the seed.
func (s *gpusSolve) rhs(n int) []float64 {
	b := make([]float64, n)
	for i := range b {
		b[i] = matgen.Unit(s.seed+1, uint64(i)) - 0.5
	}
	return b
}

// run solves on the grid's GPUs and, with --bench, on GPU 0 alone through
// the same code and through the one-GPU solver.
func (s *gpusSolve) run(ctx context.Context, bench bool, stdout io.Writer) error {
	team, err := s.team(s.grid)
	if err != nil {
		return err
	}
	defer team.Close()
	var one, cols *dist.Team // GPU 0 alone; the GPUs as cuSOLVERMg deals columns to them
	if bench {
		if one, err = s.team(dist.Grid{P: 1, Q: 1}); err != nil {
			return err
		}
		defer one.Close()
		if cols = team; s.grid.P != 1 {
			if cols, err = s.team(dist.Grid{P: 1, Q: s.grid.Size()}); err != nil {
				return err
			}
			defer cols.Close()
		}
	}
	if bench { // compile the kernels and connect the ranks before the clock runs
		for _, t := range []*dist.Team{team, one} {
			if err := t.Connect(); err != nil {
				return err
			}
			if err := s.solveOn(ctx, t, 2*s.nb, io.Discard); err != nil {
				return err
			}
		}
	}
	w := stdout
	first, _ := dist.FirstRoad(s.options(), s.grid)
	fmt.Fprintf(w, "%s, LU in blocks of %d, first %s, refined in fp64\n", s.kind, s.nb, roadUpdate(first, s.plan))
	fmt.Fprintf(w, gpusRow, "n", "solver", "GPUs", "LU (s)", "LU TFLOP/s", "gather (s)", "total (s)", "steps", "backward error")
	for _, n := range s.sizes {
		if one != nil {
			s.mgRow(w, cols, n) // first: its backward error is the others' tolerance
		}
		if err := s.solveOn(ctx, team, n, w); err != nil {
			return err
		}
		if one != nil {
			if err := s.solveOn(ctx, one, n, w); err != nil {
				return err
			}
			if err := s.denseRow(ctx, w, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// gpusRow lays out a row of solve --gpus --bench's table.
const gpusRow = "%6v  %-28v %5v %7v %11v %11v %10v %6v %15v\n"

func (s *gpusSolve) team(g dist.Grid) (*dist.Team, error) {
	engines := make([]*gemm.Engine, g.Size())
	for i := range engines {
		var err error
		if engines[i], err = gemm.SharedEngine(i); err != nil {
			return nil, err
		}
	}
	return dist.NewTeam(engines, g)
}

// solveOn solves the order-n system on team t and writes its row.
func (s *gpusSolve) solveOn(ctx context.Context, t *dist.Team, n int, w io.Writer) error {
	sys, err := dist.GenerateSystem(t, n, s.nb, s.kind, s.seed)
	if err != nil {
		return err
	}
	defer sys.Free()
	_, rep, err := dist.Solve(ctx, sys, s.rhs(n), s.options())
	if err != nil {
		return fmt.Errorf("n = %d on %v GPUs: %w", n, t.Grid, err)
	}
	fmt.Fprintf(w, gpusRow, n, "mwmm, several GPUs", t.Grid, f3(rep.Factor.Seconds()), fmt.Sprintf("%.0f", rep.LUTFLOPs()),
		f3(rep.Gather.Seconds()), f3(rep.Total.Seconds()), rep.Refine.Outer, fmt.Sprintf("%.2g", lastBackward(rep.Refine)))
	return nil
}

// denseRow is the one-GPU solver's auto policy on the same kind and seed:
// the same matrix (hpl-mxp's bit for bit on grids of one column, where
// the row sums add in the same order).
func (s *gpusSolve) denseRow(ctx context.Context, w io.Writer, n int) error {
	e, err := sharedSolver()
	if err != nil {
		return err
	}
	sys, err := e.GenerateSystem(n, s.kind, s.seed)
	if err != nil {
		return err
	}
	defer sys.Free()
	start := time.Now()
	_, rep, err := dense.Solve(ctx, sys, s.rhs(n), dense.Policy{Refine: s.sopt})
	if err != nil {
		return fmt.Errorf("n = %d, one-GPU solver: %w", n, err)
	}
	f := rep.Final()
	fmt.Fprintf(w, gpusRow, n, "mwmm, one GPU ("+f.Form.Name+")", "1", "", "", "", f3(time.Since(start).Seconds()), f.Refine.Outer,
		fmt.Sprintf("%.2g", lastBackward(f.Refine)))
	return nil
}

// mgRow is cuSOLVERMg's getrf+getrs in fp64 on the same GPUs (columns in
// blocks of 256), or why it did not run. Unless --tol was given, its
// backward error becomes the tolerance of the solves after it: they
// refine until at least as accurate.
func (s *gpusSolve) mgRow(w io.Writer, cols *dist.Team, n int) {
	const nb = 256
	s.sopt.Tol = s.tol
	t, err := dist.BenchCusolverMg(cols, n, nb, s.kind, s.seed, s.rhs(n))
	if err != nil {
		fmt.Fprintf(w, "%6v  cuSOLVERMg getrf+getrs: %v\n", n, err)
		return
	}
	if s.tol == 0 {
		s.sopt.Tol = t.BackwardError
	}
	lu := 2 * float64(n) * float64(n) * float64(n) / 3 / t.Getrf.Seconds() / 1e12
	fmt.Fprintf(w, gpusRow, n, "cuSOLVERMg getrf+getrs, fp64", cols.Grid, f3(t.Getrf.Seconds()), fmt.Sprintf("%.0f", lu), "",
		f3(t.Total.Seconds()), "", fmt.Sprintf("%.2g", t.BackwardError))
}

// roadUpdate says how a road's LU updates the trailing matrix.
func roadUpdate(r dist.Road, plan multiword.Plan) string {
	if r.Half {
		return "fp16-store (the matrix in fp16, fp16 products with fp32 accumulation)"
	}
	return "updates on the fused kernel (" + plan.Name + ")"
}

// roadPivoting says how the solve pivoted, and what it tried before.
func roadPivoting(rep dist.SolveReport) string {
	p := "none"
	switch {
	case rep.Road.Pivoted:
		p = "partial, on a 1xQ grid"
	case rep.Road.Checked:
		p = "none: the growth check passed"
	}
	for _, a := range rep.Attempts {
		p += fmt.Sprintf("; before: %v, left because %v", a.Road, a.Err)
	}
	return p
}

func f3(x float64) string { return fmt.Sprintf("%.3f", x) }

func lastBackward(r solve.Report) float64 {
	if len(r.Steps) == 0 {
		return 0
	}
	return r.Steps[len(r.Steps)-1].BackwardError
}
