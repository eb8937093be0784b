package experiment

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/multiword"
)

// The papers, as cited in the experiments: authors, title, venue, year and
// a public link. docs/experiments.md lists them in its references.
const (
	// Fasi is the multiword paper.
	Fasi = "Fasi, Higham, Lopez, Mary, Mikaitis, \"Matrix multiplication in multiword arithmetic: error analysis and " +
		"application to GPU tensor cores\", SIAM J. Sci. Comput. 45(1), 2023, https://hal.science/hal-03543925"
	// MaryLA21 is the talk on the multiword paper, whose slides have plots the paper has not.
	MaryLA21 = "Mary (with Fasi, Higham, Lopez, Mikaitis, Pranesh), \"Multiple word arithmetic with GPU tensor cores: theory and " +
		"practice\", talk at the SIAM Conference on Applied Linear Algebra (LA21), 2021, slides https://bit.ly/la21multiword"
	// MaryPASC25 is the talk on narrow-range arithmetic, and its paper.
	MaryPASC25 = "Mikaitis, Mary, \"Error analysis of matrix multiplication with narrow range floating-point arithmetic\", " +
		"talk at PASC25, 2025 (the slides' \"Numerical experiments\"); the paper: Mary, Mikaitis, SIAM J. Sci. Comput., accepted 2025, " +
		"https://hal.science/hal-04671474"
	fmaDim = "model:ieee:k=1" // the block FMA of dimension 1 of section 3: an FMA chain in fp32, RN
)

func init() {
	for _, e := range []*Experiment{table21(), fig31(), fig43(), fabsumSim(44), fabsumSim(45), slidesBackward(),
		narrow(1), narrow(2), narrow(3)} {
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
	if err != nil {
		return product{}, err
	}
	return product{series, engine, p}, canRun(engine, &p)
}

// canRun refuses, as the tasks are built, a model engine whose unit has no
// configuration for the plan's words and accumulator: the run would
// otherwise fail at its first point.
func canRun(engine string, p *multiword.Plan) error {
	e, err := multiword.Open(engine)
	if err != nil {
		return err
	}
	if m, ok := e.(*multiword.Model); ok {
		_, err = m.Unit(p)
	}
	return err
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
		Cites: "Table 2.1 of " + Fasi,
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
		Cites: "Figure 3.1 of " + Fasi,
		Shows: "double-fp16 is far more accurate than fp16; on (0,1] its error grows like n·2^-24 and fp16 catches up with " +
			"double-fp16 and fp32 near n = 6·10^4; on (−0.5,0.5] errors do not grow and double-fp16 stays at least 10× better " +
			"than fp16 up to n = 10^6; the 4-product variant is indistinguishable from the 3-product one",
		Setup: "A 16×n, B n×16 with entries uniform in (0,1] and (−0.5,0.5]; n = 2^9..2^20 (--quick: 2^9..2^15); every product " +
			"through a block FMA of dimension 1 (engine " + fmaDim + ": exact products accumulated one at a time in fp32 with " +
			"round to nearest); fp16 is one fp16 word, double-fp16 two words with 3 (Algorithm 2.1) or 4 products",
	}, "distribution", "componentwise_error", componentwise)
	e.Engines = "any" // the --engine values it takes
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
		Cites: "Figure 4.3 of " + Fasi,
		Shows: "with RZ (left) double-fp16's error grows like n·2^-24 and meets fp16's, far above fp32, as on the real GPU (Fig. 4.2); " +
			"switching the tensor cores to RN (right) brings double-fp16 back to fp32's accuracy",
		Setup: "A 16×n, B n×16 uniform in (0,1]; n = 2^9..2^20 (--quick: 2^9..2^16); each dot product cut into 16 blocks of n/16 " +
			"(FABsum-v1 with b = n/16: block products from zero, added in fp32 with RN, as cuBLAS's split-K reduction on the CUDA cores); " +
			"fp16 and double-fp16 blocks through the bit-exact V100 tensor core model (engine model:v100: 4-wide block FMA, truncating " +
			"alignment, RZ), and in the RN panel the same unit with accmode=rn,align=rne; fp32 on the CUDA cores: " + fmaDim + " in both panels",
	}, "rounding", "componentwise_error", componentwise)
	e.Engines = "model" // the --engine values it takes
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

// cublasModel is the multiword paper's model of cublasGemmEx (section
// 4.3): each dot product cut into 16 blocks of n/16, the block sums added
// in fp32 with RN.
func cublasModel(variant string, n int) string {
	return fmt.Sprintf("%s:sum=v1,b=%d", variant, n/16)
}

// fabsumSim is Figure 4.4 (fig == 44) or 4.5 (45) of the multiword paper,
// the error panel, simulated on the V100 and A100 tensor-core models.
func fabsumSim(fig int) *Experiment {
	units := []struct{ panel, engine string }{{"V100 model", "model:v100"}, {"A100 model", "model:a100"}}
	e := errorColumns(&Experiment{Name: fmt.Sprintf("fig4.%d-sim", fig%10)}, "unit", "componentwise_error", componentwise)
	common := "A 16×n, B n×16 uniform in (0,1] (the paper's right panel: 512×n and n×512 on the GPU; 16 rows and columns, as in " +
		"the paper's own simulation of Figure 4.3, keep n = 2^20 within reach of the bit-exact models on a CPU; the error is the " +
		"largest over 256 entries instead of 262144, so the curves lie slightly lower and are noisier); n = 2^10..2^20 (--quick: " +
		"2^10..2^14); on the bit-exact V100 tensor-core model (engine model:v100: truncating alignment, round toward zero) and " +
		"the A100 model (model:a100); Algorithm 4.4: two fp16 words (Algorithm 2.1's split, no scaling), A₁B₁ by FABsum " +
		"(blocks of b products by the tensor cores from zero, the block sums added in fp32 with RN for v1, fp64 for v2), " +
		"A₁B₂ and A₂B₁ accumulated plainly by the unit (spec double-fp16:first=on,sum=vK,b=B); fp32 (SGEMM) is the model of " +
		"cublasGemmEx in fp32: 16 blocks of n/16, each an FMA chain in fp32 with RN (" + fmaDim + "), added in fp32"
	var series []struct{ name, variant string }
	switch fig {
	case 44:
		e.Title = "Algorithm 4.4 (double-fp16, FABsum on A₁B₁, b = 64..512) on simulated V100 and A100 tensor cores, data in (0,1]"
		e.Cites = "Figure 4.4 (right panel: the error) of " + Fasi + "; simulated, as the paper simulates Figure 4.2 in Figure 4.3"
		e.Shows = "FABsum-v2's error stays low as n grows and v1's grows with n/b; a smaller b lowers the error; FABsum-v1 b=128 is more " +
			"accurate than FABsum-v2 b=256 for small n and less accurate for large n, the curves crossing near n ≈ 3·10^5 on the V100 " +
			"and 10^5 on the A100; cuBLAS double-fp16 (Algorithm 4.1) grows like n, FABsum-v2 with a small b matches fp32"
		e.Setup = common + "; cuBLAS double-fp16 is Algorithm 4.1 under the same model of cublasGemmEx (" +
			"double-fp16:sum=v1,b=n/16 on the unit, as in fig4.3); FABsum-v1 and v2 for b = 64, 128, 256, 512. The throughput (left " +
			"panel) needs a GPU: experiment fig4.4"
		series = append(series, struct{ name, variant string }{"double-fp16 (cuBLAS)", ""})
		for _, sum := range []string{"v1", "v2"} {
			for _, b := range []int{64, 128, 256, 512} {
				series = append(series, struct{ name, variant string }{fmt.Sprintf("FABsum-%s b=%d", sum, b),
					fmt.Sprintf("double-fp16:first=on,sum=%s,b=%d", sum, b)})
			}
		}
	case 45:
		e.Title = "FABsum-v2 on one fp16 word (b = 128..1024) against double-fp16 FABsum-v2 b=256, simulated V100 and A100, data in (0,1]"
		e.Cites = "Figure 4.5 (right panel: the error) of " + Fasi + "; simulated"
		e.Shows = "on the A100 (the V100 similar): fp16 FABsum-v2 with b = 128 is as accurate as double-fp16 FABsum-v2 b=256 near " +
			"n ≈ 10^6; with b ≥ 256 fp16 does not reach double-fp16's accuracy in the range shown (the paper conjectures it would " +
			"for larger n)"
		e.Setup = common + "; fp16 FABsum-v2 is one fp16 word, every block of b products by the tensor cores, the block sums " +
			"added in fp64 (fp16:sum=v2,b=B), for b = 128, 256, 512, 1024; double-fp16 FABsum-v2 b=256 is Algorithm 4.4 as in " +
			"fig4.4-sim. The throughput (left panel) needs a GPU: experiment fig4.5"
		series = append(series, struct{ name, variant string }{"double-fp16 FABsum-v2 b=256", "double-fp16:first=on,sum=v2,b=256"})
		for _, b := range []int{128, 256, 512, 1024} {
			series = append(series, struct{ name, variant string }{fmt.Sprintf("fp16 FABsum-v2 b=%d", b), fmt.Sprintf("fp16:sum=v2,b=%d", b)})
		}
	}
	e.Tasks = func(cfg Config) ([]Task, error) {
		if cfg.Engine != "" {
			return nil, fmt.Errorf("%s runs on the V100 and A100 models, one panel each; --engine does not apply", e.Name)
		}
		hi := 20
		if cfg.Quick {
			hi = 14
		}
		var panels []string
		for _, u := range units {
			panels = append(panels, u.panel)
		}
		var tasks []Task
		for _, n := range sizes(10, hi) {
			key := fmt.Sprint("uniform", n)
			add := func(panels []string, series, engine, variant string) error {
				pr, err := lookup(series, engine, variant)
				if err == nil {
					tasks = append(tasks, errorTask(cfg, panels, pr, Uniform, key, 16, n, 16, componentwiseError))
				}
				return err
			}
			// fp32 on the CUDA cores is the same on both units: computed once.
			if err := add(panels, "fp32 (SGEMM)", fmaDim, cublasModel("fp32", n)); err != nil {
				return nil, err
			}
			for _, u := range units {
				for _, s := range series {
					v := s.variant
					if v == "" {
						v = cublasModel("double-fp16", n)
					}
					if err := add([]string{u.panel}, s.name, u.engine, v); err != nil {
						return nil, err
					}
				}
			}
		}
		return tasks, nil
	}
	return e
}

// symmetric is uniform in [−1, 1], the data of the multiword slides'
// backward-error plot.
var symmetric = Dist{"symmetric", "[-1,1]", func(r *rand.Rand) float64 { return 1 - 2*r.Float64() }}

// slidesBackward is the multiword slides' plot of the backward error of
// fp16, double-fp16 and fp32 on a V100 for data in [−1, 1], beside data in
// [0, 1], simulated on the V100 model.
func slidesBackward() *Experiment {
	e := errorColumns(&Experiment{
		Name:  "slides-backward",
		Title: "backward error of fp16, double-fp16 and fp32 on simulated V100 tensor cores, data in [−1,1] and [0,1]",
		Cites: "the plots \"From theory to practice\" of " + MaryLA21,
		Shows: "on a V100, double-fp16 up to 2× faster than fp32 with a similar backward error for data uniform in [−1,1], " +
			"decreasing with n as Higham and Mary's probabilistic analysis of random data predicts; for data uniform in [0,1] " +
			"double-fp16's error grows far above fp32's (\"[0,1] uniform entries!!\"), the round-toward-zero effect of the paper's section 4.3",
		Setup: "the slides' plots are images we do not have; their metric, sizes and library are not stated in their text, so ours " +
			"are: the normwise backward error ‖Ĉ−C‖∞/(‖A‖∞‖B‖∞) against fp64; A 16×n, B n×16 uniform in [−1,1] and in (0,1]; " +
			"n = 2^9..2^18 (--quick: 2^9..2^14); fp16 and double-fp16 (3 products) on the bit-exact V100 tensor-core model " +
			"(model:v100) under the multiword paper's model of cublasGemmEx (16 blocks of n/16 added in fp32 with RN, as in " +
			"fig4.3); fp32 the same blocks as FMA chains in fp32 with RN (" + fmaDim + "). The speed half of the slides' plot " +
			"needs a GPU: experiment fig4.1",
	}, "distribution", "normwise_backward_error", "normwise backward error ‖Ĉ−C‖∞/(‖A‖∞‖B‖∞)")
	e.Engines = "any" // the --engine values it takes
	e.Tasks = func(cfg Config) ([]Task, error) {
		tc := engineOr(cfg, "model:v100")
		hi := 18
		if cfg.Quick {
			hi = 14
		}
		var tasks []Task
		for _, d := range []Dist{symmetric, Uniform} {
			for _, n := range sizes(9, hi) {
				for _, s := range []struct{ series, engine string }{{"fp16", tc}, {"double-fp16", tc}, {"fp32", fmaDim}} {
					pr, err := lookup(s.series, s.engine, cublasModel(s.series, n))
					if err != nil {
						return nil, err
					}
					tasks = append(tasks, errorTask(cfg, []string{d.Label}, pr, d, fmt.Sprint(d.Name, n), 16, n, 16, InfNormError))
				}
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
// in the accumulation format, C unscaled in fp64. Without range limits
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
		accUnit = fmt.Sprintf("acc=fp64,accp=%d", c.acc.Precision())
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
		Cites: "Numerical experiments " + strings.Repeat("I", which) + " of " + MaryPASC25,
	}
	switch which {
	case 1, 2:
		e.Title = fmt.Sprintf("single-word fp8 inputs with %s accumulation, subnormals on/off, with and without range limits", acc.Name())
		e.Shows = "(the slides' conclusion; their plots are not available in text) underflows in narrow-range formats are not a " +
			"problem provided the three scalings are used: with scaling by powers of two there is no overflow at any n, the error " +
			"stays below the input format's u (2^-4 for E4M3, 2^-3 for E5M2), and subnormals on, off or no range limits at all " +
			"give nearly the same error"
	case 3:
		e.Title = "multiword fp8 (p = 1, 2, 3) with fp32 accumulation, subnormals on/off"
		e.Shows = "each extra word gains about a factor u of the input format until fp32's n·2^-24 is reached; the word scaling 2^(t·i) " +
			"keeps low words out of the subnormal range, so subnormals on or off barely matter"
	}
	e.Setup = fmt.Sprintf("The slides' plots are images we do not have; their text fixes A 10×n, B n×10 with entries in ±[1e-10, 1e10], the "+
		"error ‖Ĉ−C‖∞/(‖A‖∞‖B‖∞) against fp64, subnormals on and off, and a variant without range limits. Our choices: "+
		"the fp8 formats (E4M3 and E5M2, one panel each), the accumulation format (fp16 for narrow1, fp32 for narrow2 "+
		"and narrow3), the data (magnitudes log-uniform in [1e-10, 1e10], random signs, our seed), n = 2^4..2^16 "+
		"(--quick: 2^4..2^10), and the arithmetic below. "+
		"A 10×n, B n×10 with magnitudes log-uniform in [1e-10, 1e10] and random signs; "+
		"error ‖Ĉ−C‖∞/(‖A‖∞‖B‖∞) against fp64; rows of A and columns of B scaled by powers of two to θ = min(f_max, sqrt(F_max/n)), "+
		"words scaled by 2^(t·i) (engine %s,acc=...: an FMA chain in the accumulation format with RN, subnormals as the series says); "+
		"'no range limits' keeps the precisions and takes the exponent range 2^±500, unscaled; dashed: the slides' bound (subnormals off)", fmaDim)
	errorColumns(e, "input", "normwise_error", "normwise error ‖Ĉ−C‖∞/(‖A‖∞‖B‖∞)")
	e.Engines = "any" // the --engine values it takes
	e.Tasks = func(cfg Config) ([]Task, error) {
		engine := engineOr(cfg, fmaDim)
		hi := 16
		if cfg.Quick {
			hi = 10
		}
		var tasks []Task
		for _, low := range []format.Format{format.E4M3, format.E5M2} {
			panel := low.Name() // as users type it, and as the other experiments name formats
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
					if err := canRun(pr.engine, &pr.plan); err != nil {
						return nil, err
					}
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
