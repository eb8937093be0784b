package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/lu"
	"github.com/mwmm/mwmm/mma"
	"github.com/mwmm/mwmm/multiword"
	"github.com/mwmm/mwmm/solve"
)

const (
	blanchard = "Blanchard, Higham, Lopez, Mary, Pranesh, Mixed precision block fused multiply-add: error analysis and application to GPU tensor cores, SIAM J. Sci. Comput. 42(3), 2020, https://doi.org/10.1137/19M1289546"
	carson    = "Carson, Higham, Accelerating the solution of linear systems by iterative refinement in three precisions, SIAM J. Sci. Comput. 40(2), 2018, https://doi.org/10.1137/17M1140819"
	haidar    = "Haidar, Tomov, Dongarra, Higham, Harnessing GPU tensor cores for fast FP16 arithmetic to speed up mixed-precision iterative refinement solvers, SC18, https://doi.org/10.1109/SC.2018.00050"
)

func init() {
	for _, e := range []*Experiment{bfmaMatmul(), bfmaLU(), gmresIR(), gmresIRCH(), gmresIRCHKappa()} {
		Register(e)
	}
}

// appendBound appends a bound's row unless it is above 1: a relative
// error bound beyond 1 says nothing, and would stretch the plot's axis.
func appendBound(rows []Row, r Row) []Row {
	if r.Y > 1 {
		return rows
	}
	return append(rows, r)
}

// bfmaUnits are the units of the block-FMA experiments: the paper's V100
// first, the later generations beside it.
var bfmaUnits = []string{"v100", "a100", "h100"}

// unitsOf returns the units an experiment runs: the user's (--engine
// model:UNIT) or bfmaUnits.
func unitsOf(cfg Config, name string) ([]string, error) {
	if cfg.Engine == "" {
		return bfmaUnits, nil
	}
	u, ok := strings.CutPrefix(cfg.Engine, "model:")
	if !ok || u == "" {
		return nil, fmt.Errorf("%s runs block FMAs through unit models, so --engine must be model:<unit>, not %q", name, cfg.Engine)
	}
	if _, err := mma.Open(u, "fp16", "fp32"); err != nil {
		return nil, err
	}
	return []string{u}, nil
}

// tcUnit opens the unit's fp16-input unit with fp16 (TC16) or fp32 (TC32)
// output.
func tcUnit(unit string, out format.Format) (*mma.Model, error) {
	u, err := mma.Open(unit, "fp16", out.Name())
	if err != nil {
		return nil, err
	}
	m, ok := u.(*mma.Model)
	if !ok {
		return nil, fmt.Errorf("unit %s is not a model", unit)
	}
	return m, nil
}

func roundAll(f format.Format, x []float64) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = f.Round(v, format.NearestEven)
	}
	return y
}

// plainProduct is C = A·B in plain arithmetic of f (A and B rounded to f,
// c ← fl(c + fl(a·b)) in order of k).
func plainProduct(f format.Format, m, k, n int, a, b []float64) []float64 {
	a, b = roundAll(f, a), roundAll(f, b)
	c := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for l := 0; l < k; l++ {
				s = f.Round(s+f.Round(a[i*k+l]*b[l*n+j], format.NearestEven), format.NearestEven)
			}
			c[i*n+j] = s
		}
	}
	return c
}

func bfmaMatmul() *Experiment {
	const rows = 16
	e := errorColumns(&Experiment{
		Name:  "bfma-matmul",
		Title: "matrix multiplication with a block FMA: fp16, TC16, TC32 and fp32 against n",
		Cites: "section 3 of " + blanchard + " (the error bounds of matrix multiplication with a block FMA, its TC16 and TC32 cases), " +
			"illustrated in the set-up of " + Fasi + ", section 4.3 (Figure 4.2's right panel, data in (0,1] and the componentwise " +
			"error; Figure 4.3's m = q = 16 on the simulated V100); not a figure of the block-FMA paper, whose section 6 we could not read",
		Shows: "the error of C = AB: TC16 (tensor cores with fp16 output) grows like (n/b)·u16 and follows fp16, " +
			"TC32 (fp32 output) stays near 2·u16 + n·u32, far below: the block-FMA paper's reason to prefer TC32",
		Setup: fmt.Sprintf("A %d×n, B n×%d uniform in (0,1] (the multiword paper's set-up), rounded to fp16 for the "+
			"block FMAs; TC16 and TC32 through the bit-exact unit models (Algorithm 3.1: blocks of the unit's k products, each block's result "+
			"the next block's addend), fp16 and fp32 in plain arithmetic c ← fl(c + fl(a·b)); panels v100 (the paper's GPU), a100, h100 "+
			"(--engine model:UNIT for one); n = 2^6..2^17 (--quick: 2^6..2^12); dashed: the a-priori bounds (bound.BlockFMA), left out above 1", rows, rows),
	}, "unit", "componentwise_error", componentwise)
	e.Engines = "model" // the --engine values it takes
	e.Tasks = func(cfg Config) ([]Task, error) {
		units, err := unitsOf(cfg, "bfma-matmul")
		if err != nil {
			return nil, err
		}
		hi := 17
		if cfg.Quick {
			hi = 12
		}
		var tasks []Task
		for _, n := range sizes(6, hi) {
			key := fmt.Sprint("bfma", n)
			for _, pf := range []struct {
				f      format.Format
				series string
			}{{format.Binary16, "fp16"}, {format.Binary32, "fp32"}} {
				f, series := pf.f, pf.series
				// The (0,1] data are fp64: rounding them into f costs u too.
				u := bound.U(f, format.NearestEven)
				tasks = append(tasks, Task{Panel: strings.Join(units, ", "), Series: series, X: float64(n), Cost: float64(rows * rows * n * 4),
					Run: func(ctx context.Context) ([]Row, error) {
						a, b := Uniform.Matrices(cfg.Seed, key, rows, n, rows)
						c := plainProduct(f, rows, n, rows, a, b)
						y := componentwiseError(rows, rows, n, a, b, c)
						bd, err := bound.BlockFMA{N: n, K: 1, UStep: u, UOwn: u, UConv: u}.Bound()
						if err != nil {
							return nil, err
						}
						var out []Row
						for _, unit := range units {
							out = append(out, Row{Panel: unit, Series: series, X: float64(n), Y: y})
							out = appendBound(out, Row{Panel: unit, Series: "bound " + series, X: float64(n), Y: bd.Total, Note: bd.Dominant})
						}
						return out, nil
					}})
			}
			for _, unit := range units {
				for _, tc := range []struct {
					out    format.Format
					series string
				}{{format.Binary16, "TC16"}, {format.Binary32, "TC32"}} {
					out, series := tc.out, tc.series
					tasks = append(tasks, Task{Panel: unit, Series: series, X: float64(n), Cost: float64(rows * rows * n),
						Run: func(ctx context.Context) ([]Row, error) {
							m, err := tcUnit(unit, out)
							if err != nil {
								return nil, err
							}
							a, b := Uniform.Matrices(cfg.Seed, key, rows, n, rows)
							c := make([]float64, rows*rows)
							if err := mma.Gemm(m, rows, rows, n, roundAll(format.Binary16, a), n, roundAll(format.Binary16, b), rows, c, rows); err != nil {
								return nil, err
							}
							ue := multiword.ModelError(m.Params())
							bd, err := bound.BlockFMA{N: n, K: ue.K, UStep: ue.U * float64(ue.K), UConv: bound.U(format.Binary16, format.NearestEven)}.Bound()
							if err != nil {
								return nil, err
							}
							y := componentwiseError(rows, rows, n, a, b, c)
							return appendBound([]Row{{Panel: unit, Series: series, X: float64(n), Y: y}},
								Row{Panel: unit, Series: "bound " + series, X: float64(n), Y: bd.Total, Note: bd.Dominant}), nil
						}})
				}
			}
		}
		return tasks, nil
	}
	return e
}

// square returns an n×n matrix of d, keyed as Matrices.
func (d Dist) square(seed uint64, key string, n int) []float64 {
	a, _ := d.Matrices(seed, key, n, n, 0)
	return a
}

func gmresIR() *Experiment {
	e := &Experiment{
		Name:  "gmres-ir",
		Title: "GMRES-IR at n = 1024 with a budget of n/4 GMRES iterations a step: iterations and errors against κ(A)",
		Cites: blanchard + ", section 5; " + carson + "; " + haidar,
		Shows: "GMRES-based iterative refinement to fp64 accuracy from LU factors of fp16, TC16, TC32, multiword (double-fp16-fabsum) and fp32 " +
			"arithmetic at a size and a GMRES budget of our choosing (not the papers' set-up, which gmres-ir-ch and gmres-ir-ch-kappa " +
			"follow): how many GMRES iterations each needs as κ(A) grows, and where each stops within n/4 = 256 GMRES iterations a step. " +
			"That limit is the budget's, not the method's: fp16, TC16 and TC32 stop at κ = 10^4 here, and with mwmm solve --max-inner 1024 " +
			"TC32 converges at κ = 10^6 and 10^8; the papers' set-up converges far beyond. The multiword column goes beyond the papers: " +
			"fp32-accurate factors from fp16 tensor cores",
		Setup: "A = U·Σ·Vᵀ of order n = 1024 (--quick: 256), randsvd with geometric singular values σ_i = κ^(−(i−1)/(n−1)) and Haar U, V; " +
			"κ = 10^0, 10^2, ..., 10^12; b uniform in (−0.5,0.5]; factors from package lu (block size 32, partial pivoting; TC16, TC32 and " +
			"the multiword updates on the v100 model, or --engine model:UNIT); GMRES-IR in fp64 (package solve: residuals and preconditioned " +
			"products in fp64, GMRES tolerance 1e-6, at most n/4 GMRES iterations per step (the budget; no restarts) and 20 steps, a stall " +
			"(two steps without halving the backward error) ends a solve, stop at √n·2^-53); the forward error is against x from " +
			"fp64 LU refined with double-word residuals. Not converged points are marked in the CSV's note column, with \"the GMRES budget " +
			"ran out\" where a step used all n/4 iterations",
		PanelColumn: "quantity", SeriesColumn: "factorization", XColumn: "kappa", YColumn: "value",
		XLabel: "κ₂(A)", YLabel: "value", LogX: true, LogY: true, NoteColumn: "converged",
	}
	e.Engines = "model" // the --engine values it takes
	e.Tasks = func(cfg Config) ([]Task, error) {
		units, err := unitsOf(cfg, "gmres-ir")
		if err != nil {
			return nil, err
		}
		n := 1024
		if cfg.Quick {
			n = 256
		}
		refs := &refCache{m: map[string]*refEntry{}}
		var tasks []Task
		for ek := 0; ek <= 12; ek += 2 {
			kappa := math.Pow(10, float64(ek))
			p := irPoint{spec: MatrixSpec{Kind: "randsvd", Kappa: kappa, Mode: Geometric}, key: fmt.Sprint("gmres-ir", ek),
				seed: cfg.Seed, n: n, unit: units[0], refs: refs}
			for _, fc := range []struct{ series, name string }{
				{"fp16", "fp16"}, {"TC16", "tc16"}, {"TC32", "tc32"}, {"double-fp16-fabsum", "double-fp16-fabsum"}, {"fp32", "fp32"},
			} {
				cost := float64(n) * float64(n) * float64(n)
				if fc.name == "double-fp16-fabsum" {
					cost *= 3
				}
				tasks = append(tasks, Task{Panel: "GMRES-IR", Series: fc.series, X: kappa, Cost: cost,
					Run: func(ctx context.Context) ([]Row, error) { return p.budgetRows(ctx, fc.series, fc.name) }})
			}
		}
		return tasks, nil
	}
	return e
}

// irPoint is one matrix of a GMRES-IR sweep.
type irPoint struct {
	spec       MatrixSpec
	key        string
	seed       uint64
	n          int
	unit       string
	refs       *refCache
	a, b, xref []float64
}

// system draws A and b and finds the reference solution.
func (p *irPoint) system(ctx context.Context) error {
	p.a = p.spec.Generate(p.seed, p.key, p.n)
	p.b = RandomVector(p.seed, p.key, p.n)
	var err error
	p.xref, err = p.refs.get(ctx, p.key, p.n, p.a, p.b)
	return err
}

// budgetRows is a point of gmres-ir: GMRES-IR with n/4 iterations a step.
func (p irPoint) budgetRows(ctx context.Context, series, form string) ([]Row, error) {
	f, err := lu.ParseForm(form, p.unit, "fp16")
	if err != nil {
		return nil, err
	}
	if err := p.system(ctx); err != nil {
		return nil, err
	}
	budget := p.n / 4
	x, rep, err := solve.System(ctx, f, p.n, p.a, p.b, lu.Options{}, solve.Options{MaxInner: budget}, false)
	note := "yes"
	switch {
	case errors.Is(err, solve.ErrNotConverged):
		note = "no: " + rep.Stop
		for _, st := range rep.Steps {
			if st.GMRES >= budget {
				note = fmt.Sprintf("no: the GMRES budget ran out (a step used all %d iterations); %s", budget, rep.Stop)
				break
			}
		}
	case err != nil:
		// A factorization that fails (overflow, a zero pivot) is a
		// point where the method does not converge.
		note = "no: " + err.Error()
	}
	kappa := p.spec.Kappa
	rows := []Row{{Panel: "GMRES iterations", Series: series, X: kappa, Y: float64(rep.GMRES), Note: note}}
	if x != nil {
		rows = append(rows,
			Row{Panel: "backward error", Series: series, X: kappa, Y: rep.BackwardError, Note: note},
			Row{Panel: "forward error", Series: series, X: kappa, Y: relDiff(x, p.xref), Note: note})
	}
	return rows, nil
}

// relDiff is ‖x − y‖∞ / ‖y‖∞.
func relDiff(x, y []float64) float64 {
	var d, m float64
	for i := range x {
		d = math.Max(d, math.Abs(x[i]-y[i]))
		m = math.Max(m, math.Abs(y[i]))
	}
	return d / m
}

// refCache holds each matrix's reference solution, computed once by the
// first task that needs it.
type refCache struct {
	mu sync.Mutex
	m  map[string]*refEntry
}

type refEntry struct {
	once sync.Once
	x    []float64
	err  error
}

func (c *refCache) get(ctx context.Context, key string, n int, a, b []float64) ([]float64, error) {
	c.mu.Lock()
	e, ok := c.m[key]
	if !ok {
		e = &refEntry{}
		c.m[key] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		// fp64 LU refined with double-word residuals: a forward error of
		// order 2^-53 while κ·2^-53 < 1. The last of 8 steps is the
		// reference: the step of least backward error may come before the
		// forward error has settled.
		var last []float64
		opt := solve.Options{Refine: solve.IR, Residual: solve.DoubleWord, MaxIter: 8, AllSteps: true,
			Iterate: func(_ solve.Step, x []float64) { last = append(last[:0], x...) }}
		_, _, err := solve.System(ctx, lu.Scalar(format.Binary64), n, a, b, lu.Options{}, opt, false)
		if err != nil && !errors.Is(err, solve.ErrNotConverged) {
			e.err = err
			return
		}
		e.x = last
	})
	return e.x, e.err
}
