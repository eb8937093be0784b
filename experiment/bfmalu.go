package experiment

import (
	"context"
	"fmt"
	"strings"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/lu"
	"github.com/mwmm/mwmm/solve"
)

// luClass is a class of test matrices of the block-FMA paper's LU
// experiments, as the authors' public code draws them.
type luClass struct {
	name string
	gen  func(seed uint64, key string, n int) []float64
}

// The reproduction's classes: matrices that need no pivoting.
var luClasses = []luClass{
	{"diagdom U(−1,1)", func(seed uint64, key string, n int) []float64 { return DominantMatrix(seed, key, n, -1, 1) }},
	{"diagdom U(0,1)", func(seed uint64, key string, n int) []float64 { return DominantMatrix(seed, key, n, 0, 1) }},
	{"SPD κ₂=10", func(seed uint64, key string, n int) []float64 { return SPDMatrix(seed, key, n, 1) }},
}

// The panels' quantities.
const (
	factorPanel   = ": max|fl(A)−L̂Û|/(|L̂||Û|)"
	solutionPanel = ": ‖b−Ax̂‖∞/(‖A‖∞‖x̂‖∞+‖b‖∞)"
	pivotedClass  = "beyond the paper: centered, partial pivoting, nb=32"
	normwisePanel = ": ‖PA−L̂Û‖∞/‖A‖∞"
	pivotedPanel  = ": max|P·fl(A)−L̂Û|/(|L̂||Û|)"
)

// paperNB is the outer block size of the authors' code (remifa's default).
const paperNB = 256

func bfmaLU() *Experiment {
	e := &Experiment{
		Name:  "bfma-lu",
		Title: "LU with a block FMA: TC16 against TC32 (and fp16, fp32) on matrices that need no pivoting, against n",
		Cites: blanchard + ", sections 4 and 6; the paper's text of section 6 was not available to us, so the set-up is that of " +
			"the authors' public GPU code, https://github.com/flipflapflop/remifa, and of Lopez and Mary, IJHPCA 37(2), 2023",
		Shows: bfmaLUShows,
		Setup: "LU without pivoting (lu.Options.Pivot = NoPivoting), block size 256 (and 32, the \"nb=32\" series), on the matrices of the " +
			"authors' code: diagonally dominant with off-diagonal entries uniform in (−1,1] or (0,1] and a_ii = n, and symmetric positive " +
			"definite Q·diag(10^(−i/(n−1)))·Qᵀ (κ₂ = 10, Q Haar); updates through the bit-exact unit model of the first unit (v100, the " +
			"paper's GPU, or --engine model:UNIT): TC16 (fp16 output and factors), TC32 (fp32 output and factors, L21 and U12 rounded to " +
			"fp16), fp16 and fp32 in plain arithmetic; n = 2^8..2^10 (--quick: 256 and 384; at n = 256 = nb there is no update); y = the " +
			"factorization's componentwise max|fl(A) − L̂Û|/(|L̂||Û|) (fl(A): A rounded to the storage format), dashed its bound " +
			"(bound.LU, left out above 1), and the normwise backward error of x̂ = Û⁻¹L̂⁻¹b (in fp64 on the stored factors) for b = A·1. " +
			"Beyond the paper: A uniform in (−0.5,0.5] with partial pivoting, nb = 32, also with double-fp16-fabsum updates",
		PanelColumn: "panel", SeriesColumn: "series", XColumn: "n", YColumn: "error",
		XLabel: "n", YLabel: "error", LogX: true, LogY: true, NoteColumn: "bound_first_order", Columns: 2,
	}
	e.Engines = "model" // the --engine values it takes
	e.Tasks = func(cfg Config) ([]Task, error) {
		units, err := unitsOf(cfg, "bfma-lu")
		if err != nil {
			return nil, err
		}
		ns := sizes(8, 10)
		if cfg.Quick {
			ns = []int{256, 384} // 384: one update of k = 256
		}
		var tasks []Task
		for _, n := range ns {
			tasks = append(tasks, paperLUTasks(cfg.Seed, units[0], n)...)
			tasks = append(tasks, pivotedLUTasks(cfg.Seed, units[0], n)...)
		}
		return tasks, nil
	}
	return e
}

const bfmaLUShows = "the abstract: TC32 LU (fp32 output) much more accurate than TC16 (fp16 output). On matrices that need no pivoting " +
	"it is, 30 to 1100 times in the factorization's componentwise error and the solution's backward error, while TC16 is as " +
	"inaccurate as fp16 (TC32 stays above fp32: it rounds L21 and U12 to fp16). On dense random matrices with partial pivoting " +
	"(beyond the paper) the two are equal in norm: ‖|L̂||Û|‖/‖A‖ is then in the hundreds, and TC32's rounding of L21 and U12 " +
	"to fp16 costs as much as TC16's fp16 storage"

// luSeries is one factorization of the experiment: a form and its block
// size.
type luSeries struct {
	series, form, unit string
	nb                 int
	bound              bool // draw the a-priori bound beside it
}

// paperLUTasks are the reproduction's points at order n: every class,
// every form, without pivoting.
func paperLUTasks(seed uint64, unit string, n int) []Task {
	forms := []luSeries{
		{"fp16", "fp16", "", paperNB, true}, {"TC16", "tc16", unit, paperNB, true}, {"TC32", "tc32", unit, paperNB, true},
		{"fp32", "fp32", "", paperNB, true}, {"TC16 nb=32", "tc16", unit, 32, false}, {"TC32 nb=32", "tc32", unit, 32, false},
	}
	var tasks []Task
	for _, c := range luClasses {
		key := fmt.Sprint("bfma-lu ", c.name, " ", n)
		for _, s := range forms {
			tasks = append(tasks, Task{Panel: c.name, Series: s.series, X: float64(n), Cost: float64(n) * float64(n) * float64(n),
				Run: func(ctx context.Context) ([]Row, error) {
					return paperLUPoint(ctx, c, s, c.gen(seed, key, n), n)
				}})
		}
	}
	return tasks
}

// paperLUPoint factors a without pivoting and measures the factors and
// the solution of A·x = A·1.
func paperLUPoint(ctx context.Context, c luClass, s luSeries, a []float64, n int) ([]Row, error) {
	f, err := lu.ParseForm(s.form, s.unit, "fp16")
	if err != nil {
		return nil, err
	}
	fa, err := lu.Factor(ctx, f, n, a, lu.Options{NB: s.nb, Pivot: lu.NoPivoting})
	if err != nil {
		return nil, err
	}
	ers, err := fa.ErrorsContext(ctx, a)
	if err != nil {
		return nil, err
	}
	b := make([]float64, n)
	for i := 0; i < n; i++ {
		for _, v := range a[i*n : (i+1)*n] {
			b[i] += v
		}
	}
	x := append([]float64(nil), b...)
	if err := fa.Solve(x); err != nil {
		return nil, err
	}
	x0 := float64(n)
	rows := []Row{
		{Panel: c.name + factorPanel, Series: s.series, X: x0, Y: ers.Componentwise},
		{Panel: c.name + solutionPanel, Series: s.series, X: x0, Y: solve.BackwardError(n, a, x, b)},
	}
	if s.bound {
		bd, err := f.Bound(n, s.nb)
		if err != nil {
			return nil, err
		}
		rows = appendBound(rows, Row{Panel: c.name + factorPanel, Series: "bound " + s.series, X: x0, Y: bd.Total, Note: bd.Dominant})
	}
	return rows, nil
}

// pivotedLUTasks are the points beyond the paper: A uniform in
// (−0.5,0.5] with partial pivoting, block size 32.
func pivotedLUTasks(seed uint64, unit string, n int) []Task {
	key := fmt.Sprint("lu", n)
	var tasks []Task
	for _, s := range []struct{ series, form string }{
		{"fp16", "fp16"}, {"TC16", "tc16"}, {"TC32", "tc32"}, {"fp32", "fp32"}, {"double-fp16-fabsum", "double-fp16-fabsum"},
	} {
		u := unit
		if !strings.HasPrefix(s.form, "tc") && s.form != "double-fp16-fabsum" {
			u = ""
		}
		tasks = append(tasks, Task{Panel: pivotedClass, Series: s.series, X: float64(n), Cost: float64(n) * float64(n) * float64(n),
			Run: func(ctx context.Context) ([]Row, error) {
				f, err := lu.ParseForm(s.form, u, "fp16")
				if err != nil {
					return nil, err
				}
				a := Centered.square(seed, key, n)
				fa, err := lu.Factor(ctx, f, n, a, lu.Options{})
				if err != nil {
					return nil, err
				}
				ers, err := fa.ErrorsContext(ctx, a)
				if err != nil {
					return nil, err
				}
				bd, err := f.Bound(n, fa.NB)
				if err != nil {
					return nil, err
				}
				nb := bound.U(f.Storage, format.NearestEven) + bd.Total*ers.LUNorm
				x0 := float64(n)
				rows := []Row{{Panel: pivotedClass + normwisePanel, Series: s.series, X: x0, Y: ers.Normwise, Note: fmt.Sprintf("‖|L̂||Û|‖/‖A‖ = %.3g", ers.LUNorm)}}
				rows = appendBound(rows, Row{Panel: pivotedClass + normwisePanel, Series: "bound " + s.series, X: x0, Y: nb, Note: bd.Dominant})
				rows = append(rows, Row{Panel: pivotedClass + pivotedPanel, Series: s.series, X: x0, Y: ers.Componentwise})
				return appendBound(rows, Row{Panel: pivotedClass + pivotedPanel, Series: "bound " + s.series, X: x0, Y: bd.Total, Note: bd.Dominant}), nil
			}})
	}
	return tasks
}
