package experiment

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/multiword"
)

// The papers, as cited in the experiments.
const (
	fasi   = "Fasi, Higham, Lopez, Mary, Mikaitis, Matrix multiplication in multiword arithmetic (SISC 2023; papers/multiword-matmul-tensor-cores.txt)"
	mary   = "Mary, Mikaitis, Error analysis of matrix multiplication with narrow range floating-point arithmetic (PASC25 slides; papers/narrow-range-matmul-slides.txt)"
	fmaDim = "model:ieee:k=1" // the block FMA of dimension 1 of section 3: an FMA chain in binary32, RN
)

func init() {
	for _, e := range []*Experiment{table21(), fig31(), fig43(), fabsumSim(), narrow(1), narrow(2), narrow(3)} {
		Register(e)
	}
}

// errorColumns sets the columns of an error-against-n sweep.
func errorColumns(e *Experiment, panel, yColumn, yLabel string) *Experiment {
	e.PanelColumn, e.SeriesColumn, e.XColumn, e.YColumn = panel, "series", "n", yColumn
	e.XLabel, e.YLabel, e.LogX, e.LogY = "n (inner dimension)", yLabel, true, true
	return e
}

const componentwise = "componentwise error max|C−Ĉ|/(|A||B|)"

func componentwiseError(m, n, k int, a, b, c []float64) float64 {
	cw, _ := multiword.Errors(m, n, k, a, b, c)
	return cw
}

// product is one series of a sweep: a plan on an engine.
type product struct {
	series, engine string
	plan           multiword.Plan
}

func lookup(series, engine, variant string) (product, error) {
	p, err := multiword.Lookup(variant)
	return product{series, engine, p}, err
}

// errorTask multiplies the m×k and k×n matrices of dist (keyed by key, so
// every series of a size gets the same ones) and measures the error; the
// rows go to each of panels.
func errorTask(cfg Config, panels []string, pr product, dist Dist, key string, m, k, n int,
	metric func(m, n, k int, a, b, c []float64) float64) Task {
	return Task{
		Panel: strings.Join(panels, ", "), Series: pr.series, X: float64(k),
		Cost: float64(pr.plan.Products()) * float64(m*k*n),
		Run: func(ctx context.Context) ([]Row, error) {
			e, err := multiword.Open(pr.engine)
			if err != nil {
				return nil, err
			}
			a, b := dist.Matrices(cfg.Seed, key, m, k, n)
			c := make([]float64, m*n)
			if err := e.Multiply(pr.plan, m, n, k, a, b, c); err != nil {
				return nil, err
			}
			y := metric(m, n, k, a, b, c)
			var rows []Row
			for _, panel := range panels {
				rows = append(rows, Row{Panel: panel, Series: pr.series, X: float64(k), Y: y})
			}
			return rows, nil
		},
	}
}

// engineOr returns the user's engine, or def.
func engineOr(cfg Config, def string) string {
	if cfg.Engine != "" {
		return cfg.Engine
	}
	return def
}

// withUnit adds unit overrides (key=value,...) to a model engine's spec and
// leaves other engines alone: they have no unit to change.
func withUnit(engine, overrides string) string {
	rest, ok := strings.CutPrefix(engine, "model:")
	if !ok {
		return engine
	}
	if strings.Contains(rest, ":") {
		return engine + "," + overrides
	}
	return engine + ":" + overrides
}

func table21() *Experiment {
	e := &Experiment{
		Name:  "table2.1",
		Title: "dominant term of the multiword error bound (2.8), fp32 accumulation",
		Cites: fasi + ", Table 2.1",
		Shows: "the first-order bound (p+1)·u_low^p + n·u_high for fp16 and bf16 words with p = 1..3 and u_high = 2^-24: " +
			"double-fp16 (2 × 2^-22 ≈ 3·u_high... dominated by n·2^-24) matches fp32's n·2^-24, single fp16 is stuck at 2 × 2^-11, " +
			"and bf16 needs three words for the same",
		Setup:       "bound.Multiword{ULow, UHigh: 2^-24, P, N: n}.Bound() for n = 2^4..2^23 (at 2^24, n·u_high = 1 and the bound says nothing): the full bound (2.8), with its dominant term; no matrices",
		PanelColumn: "accumulation", SeriesColumn: "variant", XColumn: "n", YColumn: "bound",
		NoteColumn: "dominant_term",
		XLabel:     "n (inner dimension)", YLabel: "componentwise error bound (2.8)", LogX: true, LogY: true,
	}
	type word struct {
		name string
		f    format.Format
	}
	words := []word{{"fp16", format.Binary16}, {"bf16", format.BFloat16}}
	prefix := []string{"", "double-", "triple-"}
	e.Tasks = func(cfg Config) ([]Task, error) {
		uh := bound.U(format.Binary32, format.NearestEven)
		var tasks []Task
		for _, w := range words {
			for p := 1; p <= 3; p++ {
				name := prefix[p-1] + w.name
				ul := bound.U(w.f, format.NearestEven)
				tasks = append(tasks, Task{Panel: "fp32", Series: name, Cost: 1, Run: func(context.Context) ([]Row, error) {
					var rows []Row
					for _, n := range sizes(4, 23) {
						r, err := bound.Multiword{ULow: ul, UHigh: uh, P: p, N: float64(n)}.Bound()
						if err != nil {
							return nil, err
						}
						rows = append(rows, Row{Panel: "fp32", Series: name, X: float64(n), Y: r.Total, Note: r.Dominant})
					}
					return rows, nil
				}})
			}
		}
		return tasks, nil
	}
	e.Summary = func(w io.Writer, rows []Row) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "variant\tdominant term (Table 2.1)\tn=2^10\tn=2^16\tn=2^20\t")
		for _, s := range unique(rows, func(r Row) string { return r.Series }) {
			cells := []string{s, ""}
			for _, r := range rows {
				if r.Series != s {
					continue
				}
				cells[1] = r.Note
				if n := int(r.X); n == 1<<10 || n == 1<<16 || n == 1<<20 {
					cells = append(cells, strconv.FormatFloat(r.Y, 'g', 3, 64))
				}
			}
			fmt.Fprintf(tw, "%s\t\n", strings.Join(cells, "\t"))
		}
		tw.Flush()
	}
	return e
}

func fig31() *Experiment {
	e := errorColumns(&Experiment{
		Name:  "fig3.1",
		Title: "fp16, fp32 and double-fp16 with a block FMA of dimension 1",
		Cites: fasi + ", Figure 3.1",
		Shows: "double-fp16 is far more accurate than fp16; on (0,1] its error grows like n·2^-24 and fp16 catches up with " +
			"double-fp16 and fp32 near n = 6·10^4; on (−0.5,0.5] errors do not grow and double-fp16 stays at least 10× better " +
			"than fp16 up to n = 10^6; the 4-product variant is indistinguishable from the 3-product one",
		Setup: "A 16×n, B n×16 with entries uniform in (0,1] and (−0.5,0.5]; n = 2^9..2^20 (--quick: 2^9..2^15); every product " +
			"through a block FMA of dimension 1 (engine " + fmaDim + ": exact products accumulated one at a time in binary32 with " +
			"round to nearest); fp16 is one binary16 word, double-fp16 two words with 3 (Algorithm 2.1) or 4 products",
	}, "distribution", "componentwise_error", componentwise)
	e.Tasks = func(cfg Config) ([]Task, error) {
		engine := engineOr(cfg, fmaDim)
		var prs []product
		for _, s := range [][2]string{{"fp16", "fp16"}, {"fp32", "fp32"}, {"double-fp16", "double-fp16"},
			{"double-fp16, 4 products", "double-fp16:products=all"}} {
			pr, err := lookup(s[0], engine, s[1])
			if err != nil {
				return nil, err
			}
			prs = append(prs, pr)
		}
		hi := 20
		if cfg.Quick {
			hi = 15
		}
		var tasks []Task
		for _, d := range []Dist{Uniform, Centered} {
			for _, n := range sizes(9, hi) {
				for _, pr := range prs {
					tasks = append(tasks, errorTask(cfg, []string{d.Label}, pr, d, fmt.Sprint(d.Name, n), 16, n, 16, componentwiseError))
				}
			}
		}
		return tasks, nil
	}
	return e
}

func fig43() *Experiment {
	const rz, rn = "round toward zero", "round to nearest"
	e := errorColumns(&Experiment{
		Name:  "fig4.3",
		Title: "simulated V100 tensor cores, round toward zero against round to nearest, data in (0,1]",
		Cites: fasi + ", Figure 4.3",
		Shows: "with RZ (left) double-fp16's error grows like n·2^-24 and meets fp16's, far above fp32, as on the real GPU (Fig. 4.2); " +
			"switching the tensor cores to RN (right) brings double-fp16 back to fp32's accuracy",
		Setup: "A 16×n, B n×16 uniform in (0,1]; n = 2^9..2^20 (--quick: 2^9..2^16); each dot product cut into 16 blocks of n/16 " +
			"(FABsum-v1 with b = n/16: block products from zero, added in binary32 with RN, as cuBLAS's split-K reduction on the CUDA cores); " +
			"fp16 and double-fp16 blocks through the bit-exact V100 tensor core model (engine model:v100: 4-wide block FMA, truncating " +
			"alignment, RZ), and in the RN panel the same unit with accmode=rn,align=rne; fp32 on the CUDA cores: " + fmaDim + " in both panels",
	}, "rounding", "componentwise_error", componentwise)
	e.Tasks = func(cfg Config) ([]Task, error) {
		tc := engineOr(cfg, "model:v100")
		if !strings.HasPrefix(tc, "model:") {
			return nil, fmt.Errorf("fig4.3 changes the rounding of a unit model, so --engine must be model:<unit>, not %q", tc)
		}
		hi := 20
		if cfg.Quick {
			hi = 16
		}
		var tasks []Task
		for _, n := range sizes(9, hi) {
			blocks := fmt.Sprintf(":sum=v1,b=%d", n/16)
			for _, s := range []struct{ series, variant string }{{"fp16", "fp16"}, {"fp32", "fp32"}, {"double-fp16", "double-fp16"}} {
				for _, panel := range []string{rz, rn} {
					engine := tc
					switch {
					case s.series == "fp32":
						engine = fmaDim
					case panel == rn:
						engine = withUnit(tc, "accmode=rn,align=rne")
					}
					pr, err := lookup(s.series, engine, s.variant+blocks)
					if err != nil {
						return nil, err
					}
					if s.series == "fp32" && panel == rn {
						continue // the same arithmetic in both panels: computed once
					}
					panels := []string{panel}
					if s.series == "fp32" {
						panels = []string{rz, rn}
					}
					tasks = append(tasks, errorTask(cfg, panels, pr, Uniform, fmt.Sprint("uniform", n), 16, n, 16, componentwiseError))
				}
			}
		}
		return tasks, nil
	}
	return e
}

func fabsumSim() *Experiment {
	const v1, v2 = "FABsum-v1", "FABsum-v2"
	e := errorColumns(&Experiment{
		Name:  "fabsum-sim",
		Title: "FABsum against plain accumulation on simulated V100 tensor cores (RZ), double-fp16, data in (0,1]",
		Cites: fasi + ", section 4.3 and Algorithms 4.2–4.4 (the GPU Figures 4.4 and 4.5, simulated)",
		Shows: "plain accumulation on RZ tensor cores has an error growing like n·2^-24; FABsum with block b computes each block's " +
			"product from zero and adds the blocks with RN (v1, binary32) or in binary64 (v2), so the error follows b·2^-24 + (n/b)·2^-24 (v1) " +
			"or b·2^-24 (v2) and no longer grows like n",
		Setup: "A 16×n, B n×16 uniform in (0,1]; n = 2^9..2^20 (--quick: 2^9..2^15); double-fp16 (3 products) on the V100 tensor core model " +
			"(engine model:v100), FABsum on every product with b ∈ {32, 128, 256, 1024}; fp32 (" + fmaDim + ") for reference",
	}, "summation", "componentwise_error", componentwise)
	e.Tasks = func(cfg Config) ([]Task, error) {
		tc := engineOr(cfg, "model:v100")
		hi := 20
		if cfg.Quick {
			hi = 15
		}
		var tasks []Task
		for _, n := range sizes(9, hi) {
			key := fmt.Sprint("uniform", n)
			add := func(panels []string, series, engine, variant string) error {
				pr, err := lookup(series, engine, variant)
				if err == nil {
					tasks = append(tasks, errorTask(cfg, panels, pr, Uniform, key, 16, n, 16, componentwiseError))
				}
				return err
			}
			if err := add([]string{v1, v2}, "plain", tc, "double-fp16"); err != nil {
				return nil, err
			}
			for _, sum := range []string{"v1", "v2"} {
				for _, b := range []int{32, 128, 256, 1024} {
					if err := add([]string{"FABsum-" + sum}, fmt.Sprintf("b=%d", b), tc, fmt.Sprintf("double-fp16:sum=%s,b=%d", sum, b)); err != nil {
						return nil, err
					}
				}
			}
			if err := add([]string{v1, v2}, "fp32", fmaDim, "fp32"); err != nil {
				return nil, err
			}
		}
		return tasks, nil
	}
	return e
}

// narrowCase is one series of the narrow-range experiments.
type narrowCase struct {
	low, acc   format.Format
	words      int
	subnormals bool // in both formats
	unbounded  bool // the same precisions with the exponent range ±500
}

func (c narrowCase) series(multi bool) string {
	var s string
	if multi {
		s = fmt.Sprintf("p=%d, ", c.words)
	}
	switch {
	case c.unbounded:
		return s + "no range limits"
	case c.subnormals:
		return s + "subnormals on"
	}
	return s + "subnormals off"
}

// plan is the slides' algorithm: rows and columns scaled by powers of two
// to θ = min(f_max, sqrt(F_max/n)), word i stored ×2^(t·i), products summed
// in the accumulation format, C unscaled in binary64. Without range limits
// nothing can overflow or underflow, so there is no scaling.
func (c narrowCase) plan() (multiword.Plan, string, error) {
	low, acc := c.low.WithSubnormals(c.subnormals), c.acc.WithSubnormals(c.subnormals)
	accUnit := "acc=" + acc.Name()
	if c.unbounded {
		var err error
		low, err = format.New(format.Spec{Name: fmt.Sprintf("custom:p=%d,emin=-500,emax=500", c.low.Precision()),
			P: c.low.Precision(), Emin: -500, Emax: 500, Subnormals: true})
		if err != nil {
			return multiword.Plan{}, "", err
		}
		acc, err = format.New(format.Spec{Name: fmt.Sprintf("custom:p=%d,emin=-500,emax=500", c.acc.Precision()),
			P: c.acc.Precision(), Emin: -500, Emax: 500, Subnormals: true})
		if err != nil {
			return multiword.Plan{}, "", err
		}
		accUnit = fmt.Sprintf("acc=binary64,accp=%d", c.acc.Precision())
	}
	p := multiword.Plan{Name: c.series(true), Low: low, Words: c.words, Acc: acc, Out: format.Binary64,
		Scale: !c.unbounded}
	if !c.unbounded {
		p.WordShift = c.low.Precision()
	}
	return p, accUnit, p.Check()
}

// narrowBound is the slides' normwise bound for the case at n (with
// subnormals as in the case; it assumes bounded range).
func (c narrowCase) bound(n int) (float64, error) {
	low, acc := c.low.WithSubnormals(c.subnormals), c.acc.WithSubnormals(c.subnormals)
	r, err := bound.NarrowRange{U: bound.U(low, format.NearestEven), UHigh: bound.U(acc, format.NearestEven),
		N: float64(n), P: c.words, GMin: bound.GMin(low), GMinHigh: bound.GMin(acc),
		FMax: low.MaxFinite(), FMaxHigh: acc.MaxFinite()}.Bound()
	return r.Total, err
}

func narrow(which int) *Experiment {
	accs := map[int]format.Format{1: format.Binary16, 2: format.Binary32, 3: format.Binary32}
	acc := accs[which]
	e := &Experiment{
		Name:  fmt.Sprintf("narrow%d", which),
		Cites: mary + ", Numerical experiments " + strings.Repeat("I", which),
	}
	switch which {
	case 1, 2:
		e.Title = fmt.Sprintf("single-word fp8 inputs with %s accumulation, subnormals on/off, with and without range limits", acc.Name())
		e.Shows = "the single-word algorithm with scaling by powers of two reaches the input format's accuracy (about u = 2^-4 for E4M3, 2^-3 " +
			"for E5M2) with no overflow at any n; flushing subnormals costs a little accuracy at most; the same precisions without range " +
			"limits show what underflow costs: the gap between the curves"
	case 3:
		e.Title = "multiword fp8 (p = 1, 2, 3) with binary32 accumulation, subnormals on/off"
		e.Shows = "each extra word gains about a factor u of the input format until binary32's n·2^-24 is reached; the word scaling 2^(t·i) " +
			"keeps low words out of the subnormal range, so subnormals on or off barely matter"
	}
	e.Setup = fmt.Sprintf("A 10×n, B n×10 with magnitudes log-uniform in [1e-10, 1e10] and random signs; n = 2^4..2^16 (--quick: 2^4..2^10); "+
		"error ‖Ĉ−C‖∞/(‖A‖∞‖B‖∞) against binary64; rows of A and columns of B scaled by powers of two to θ = min(f_max, sqrt(F_max/n)), "+
		"words scaled by 2^(t·i) (engine %s,acc=...: an FMA chain in the accumulation format with RN, subnormals as the series says); "+
		"'no range limits' keeps the precisions and takes the exponent range 2^±500, unscaled; dashed: the slides' bound (subnormals off)", fmaDim)
	errorColumns(e, "input", "normwise_error", "normwise error ‖Ĉ−C‖∞/(‖A‖∞‖B‖∞)")
	e.Tasks = func(cfg Config) ([]Task, error) {
		engine := engineOr(cfg, fmaDim)
		hi := 16
		if cfg.Quick {
			hi = 10
		}
		var tasks []Task
		for _, low := range []format.Format{format.E4M3, format.E5M2} {
			panel := "fp8-" + strings.ToUpper(low.Name())
			var cases []narrowCase
			if which == 3 {
				for p := 1; p <= 3; p++ {
					cases = append(cases, narrowCase{low: low, acc: acc, words: p, subnormals: true},
						narrowCase{low: low, acc: acc, words: p})
				}
			} else {
				cases = []narrowCase{{low: low, acc: acc, words: 1, subnormals: true},
					{low: low, acc: acc, words: 1}, {low: low, acc: acc, words: 1, unbounded: true}}
			}
			for _, n := range sizes(4, hi) {
				key := fmt.Sprint("logu", n)
				for _, c := range cases {
					plan, accUnit, err := c.plan()
					if err != nil {
						return nil, err
					}
					pr := product{series: c.series(which == 3), engine: withUnit(engine, accUnit), plan: plan}
					tasks = append(tasks, errorTask(cfg, []string{panel}, pr, LogUniform, key, 10, n, 10, InfNormError))
				}
				if which != 3 {
					c := narrowCase{low: low, acc: acc, words: 1}
					tasks = append(tasks, Task{Panel: panel, Series: "bound (subnormals off)", X: float64(n), Run: func(context.Context) ([]Row, error) {
						y, err := c.bound(n)
						return []Row{{Panel: panel, Series: "bound (subnormals off)", X: float64(n), Y: y}}, err
					}})
				}
			}
		}
		return tasks, nil
	}
	return e
}
