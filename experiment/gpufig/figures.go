package gpufig

import (
	"context"
	"fmt"
	"slices"

	"github.com/mwmm/mwmm/experiment"
	"github.com/mwmm/mwmm/gpu/gemm"
)

const fasi = experiment.Fasi

// measurer is what the experiments need of an Engine (Time and Accuracy);
// the tests give a fake one, so that the task lists are checked without a
// GPU.
type measurer interface {
	Time(n, reps int, methods []gemm.Method, after func()) ([]gemm.Timing, error)
	Accuracy(m, n, dist int, seed uint64, methods []gemm.Method) ([]gemm.Accuracy, error)
}

// paperMethods are the methods of the paper's Figures 4.1 and 4.2: the
// baselines and the Algorithm 4.1 variants, all through cuBLASLt. The
// fused FABsum variants of BenchVariants belong to fig4.4 and fig4.5.
func paperMethods() []gemm.Method {
	ms := slices.Clone(gemm.Baselines)
	for _, v := range gemm.CublasVariants {
		ms = append(ms, gemm.Method{Name: v, Variant: v})
	}
	return ms
}

// paperDists are the distributions of the paper's Figure 4.2: the first
// two of DistNames.
const paperDists = 2

// Sweeps of the GPU figures: n = 2^10..2^hi.
func timingHi(cfg experiment.Config) int {
	if cfg.Quick {
		return 12
	}
	return 14
}

func errorHi(cfg experiment.Config) int {
	if cfg.Quick {
		return 14
	}
	return 20
}

// Register adds the papers' GPU figures (fig4.1–fig4.5) to the experiment
// registry; cmd/mwmm calls it once at start-up.
func Register() {
	experiment.Register(&experiment.Experiment{
		Name:  "fig4.1",
		Title: "throughput of cuBLASLt baselines and multiword variants on this GPU",
		Cites: "Figure 4.1 of " + fasi,
		Shows: "on V100 and A100, fp16 tensor cores run far above fp32; double-fp16 (Algorithm 4.1, three fp16 products) reaches 30 and 76 " +
			"effective Tflop/s, 2.2× and 7.3× fp32, about a third of fp16",
		Setup: "A, B n×n fp32 uniform in (0,1] made on the GPU; n = 2^10..2^14 (--quick: 2^10..2^12); 10 timed runs after 50 ms of warm-up runs " +
			"(CUDA events); effective Tflop/s = 2n³/t in two panels: " + timingPanels + "; baselines through cuBLASLt: " +
			"sgemm (pedantic fp32), sgemm-tf32, hgemm, bgemm (inputs converted beforehand), dgemm",
		Requires:    "gpu",
		Serial:      true,
		PanelColumn: "timing", SeriesColumn: "method", XColumn: "n", YColumn: "tflops",
		XLabel: "n (A, B n×n)", YLabel: "effective Tflop/s (2n³/t)", LogX: true, LogY: true,
		Tasks: func(cfg experiment.Config) ([]experiment.Task, error) {
			e, err := gemm.SharedEngine(0)
			if err != nil {
				return nil, err
			}
			return throughputTasks(cfg, e.Device().Name(), nil, paperMethods(), e), nil
		},
	})
	experiment.Register(paperErrors(16, &experiment.Experiment{
		Name:  "fig4.2",
		Title: "componentwise error of the baselines and multiword variants on this GPU",
		Cites: "Figure 4.2 of " + fasi,
		Shows: "on (−0.5,0.5] double-fp16 is often far more accurate than fp16 but not always as accurate as fp32; on (0,1] the tensor " +
			"cores' round-toward-zero makes double-fp16's error grow like n·2^-24, no better than fp16 for large n and far worse than fp32",
		Setup: "A 16×n, B n×16 (the paper's outer dimensions; fig4.2-512 runs A 512×n, B n×512) fp32 uniform in (0,1] and (−0.5,0.5] " +
			"made on the GPU; n = 2^10..2^20 (--quick: 2^10..2^14); " +
			"error max|C−Ĉ|/(|A||B|) against C and |A||B| by DGEMM from the same fp32 data (note column: normwise ‖C−Ĉ‖_F/‖C‖_F)",
	}))
	experiment.Register(paperErrors(512, &experiment.Experiment{
		Name:  "fig4.2-512",
		Title: "componentwise error of the baselines and multiword variants on this GPU, A 512×n and B n×512",
		Cites: "Figure 4.2 of " + fasi + ", with the outer dimensions of its Figures 4.4 and 4.5 (512) instead of 16",
		Shows: "as fig4.2",
		Setup: "as fig4.2, with A 512×n and B n×512: the error is the largest over 262144 entries instead of 256, and matches the " +
			"shape of fig4.4-error and fig4.5-error and of mwmm bench's accuracy sweep",
	}))
	for _, e := range fabsumFigure("fig4.4", "Figure 4.4", "Algorithm 4.4 (double-fp16, FABsum-v1/v2 on A₁B₁, b = 64..512)",
		"FABsum-v2 costs more than v1 but keeps the error low for very large n; a smaller b lowers both error and throughput; FABsum-v1 b=128 "+
			"and FABsum-v2 b=256 run at about the same speed and their error curves cross (v1 better for small n, v2 for large n) at "+
			"n ≈ 3e5 on V100 and n ≈ 1e5 on A100; with a moderately large b FABsum-v1 is as fast as cuBLAS double-fp16 (Algorithm 4.1) and far more "+
			"accurate for large n, and FABsum-v2 with a small b matches fp32's accuracy while running much faster than SGEMM",
		fig44Series) {
		experiment.Register(e)
	}
	for _, e := range fabsumFigure("fig4.5", "Figure 4.5", "fp16 FABsum-v2 (b = 128..1024) against double-fp16 FABsum-v2 b=256",
		"on A100 (V100 similar): fp16 with b = 128 is as accurate as double-fp16 FABsum-v2 b=256 for n ≈ 1e6, but slower than it "+
			"(its smaller block); with b ≥ 256 fp16 is faster than double-fp16 but less accurate up to the largest n shown: double-fp16 "+
			"stays of interest over a wide range of n",
		fig45Series) {
		experiment.Register(e)
	}
}

// A figureSeries is one curve of a figure: its legend, as the paper's, and
// the method drawn.
type figureSeries struct {
	Label  string
	Method gemm.Method
}

// algorithm44 is the spec of Algorithm 4.4 on the fused kernel: two
// fp16 words of A and B (row/column scaling, second word scaled by
// 2^11), FABsum with summation sum and block b on A₁B₁ only, the two
// correction products accumulated plainly. mwmm bench's FABsum grid uses
// the same spec.
func algorithm44(sum string, b int) string {
	return fmt.Sprintf("double-fp16:scale=on,shift=11,first=on,sum=%s,b=%d", sum, b)
}

func variantSeries(label, spec string) figureSeries {
	return figureSeries{label, gemm.Method{Name: spec, Variant: spec}}
}

// sgemmSeries is the fp32 baseline of the FABsum figures: cuBLASLt's
// pedantic SGEMM (the paper's cublasGemmEx in fp32).
func sgemmSeries() figureSeries {
	return figureSeries{"fp32 (SGEMM)", gemm.Baselines[0]}
}

// fig44Series are the curves of Figure 4.4: SGEMM, cuBLAS double-fp16
// (Algorithm 4.1 through cuBLASLt) and Algorithm 4.4 with FABsum-v1 and
// FABsum-v2 for b = 64, 128, 256, 512.
func fig44Series() []figureSeries {
	s := []figureSeries{sgemmSeries(), variantSeries("double-fp16 (cuBLAS)", "double-fp16")}
	for _, sum := range []string{"v1", "v2"} {
		for _, b := range []int{64, 128, 256, 512} {
			s = append(s, variantSeries(fmt.Sprintf("FABsum-%s b=%d", sum, b), algorithm44(sum, b)))
		}
	}
	return s
}

// fig45Series are the curves of Figure 4.5: SGEMM, double-fp16 FABsum-v2
// b=256 (Algorithm 4.4, the choice of Figure 4.4) and FABsum-v2 on one
// fp16 word for b = 128, 256, 512, 1024.
func fig45Series() []figureSeries {
	s := []figureSeries{sgemmSeries(), variantSeries("double-fp16 FABsum-v2 b=256", algorithm44("v2", 256))}
	for _, b := range []int{128, 256, 512, 1024} {
		s = append(s, variantSeries(fmt.Sprintf("fp16 FABsum-v2 b=%d", b), fmt.Sprintf("fp16:sum=v2,b=%d", b)))
	}
	return s
}

// fabsumFigure returns the two experiments of a figure of section 4.4:
// NAME, the throughput (left panel), and NAME-error, the componentwise
// error (right panel).
//
// Two experiments, not one with a "measure" panel column: an Experiment
// has one Y column and one Y label, and its panels share the Y range when
// plotted (internal/plotting), so Tflop/s (10 to 1000) and errors (1e-8 to
// 1e-3) in one figure would squash both; the left panel also sweeps other
// matrices (n×n) than the right (512×n by n×512). Each experiment is then
// a plain CSV with the columns of fig4.1 and fig4.2.
func fabsumFigure(name, figure, what, shows string, series func() []figureSeries) []*experiment.Experiment {
	var specs string
	for i, s := range series() {
		if i > 0 {
			specs += "; "
		}
		specs += s.Label + " = "
		if s.Method.Variant != "" {
			specs += s.Method.Variant
		} else {
			specs += s.Method.Name
		}
	}
	specs += ". Variants with FABsum run on the fused kernel, the others through cuBLASLt"
	return []*experiment.Experiment{{
		Name:  name,
		Title: "throughput of " + what + " on this GPU",
		Cites: figure + " (left) of " + fasi,
		Shows: shows,
		Setup: "A, B n×n fp32 uniform in (0,1] made on the GPU; n = 2^10..2^14 (--quick: 2^10..2^12); 10 timed runs after 50 ms of warm-up runs " +
			"(CUDA events); effective Tflop/s = 2n³/t in two panels: " + timingPanels + ". Curves: " + specs +
			". The error (right panel) is experiment " + name + "-error",
		Requires:    "gpu",
		Serial:      true,
		PanelColumn: "timing", SeriesColumn: "method", XColumn: "n", YColumn: "tflops",
		XLabel: "n (A, B n×n)", YLabel: "effective Tflop/s (2n³/t)", LogX: true, LogY: true,
		Tasks: func(cfg experiment.Config) ([]experiment.Task, error) {
			e, err := gemm.SharedEngine(0)
			if err != nil {
				return nil, err
			}
			s := series()
			return throughputTasks(cfg, e.Device().Name(), s, seriesMethods(s), e), nil
		},
	}, {
		Name:  name + "-error",
		Title: "componentwise error of " + what + " on this GPU",
		Cites: figure + " (right) of " + fasi,
		Shows: shows,
		Setup: "A 512×n, B n×512 fp32 uniform in (0,1] made on the GPU; n = 2^10..2^20 (--quick: 2^10..2^14); error max|C−Ĉ|/(|A||B|) " +
			"against C and |A||B| by DGEMM from the same fp32 data (note column: normwise ‖C−Ĉ‖_F/‖C‖_F). Curves: " + specs +
			". The throughput (left panel) is experiment " + name,
		Requires:    "gpu",
		Serial:      true,
		PanelColumn: "distribution", SeriesColumn: "method", XColumn: "n", YColumn: "componentwise_error", NoteColumn: "normwise_error",
		XLabel: "n (inner dimension)", YLabel: "componentwise error max|C−Ĉ|/(|A||B|)", LogX: true, LogY: true,
		Tasks: func(cfg experiment.Config) ([]experiment.Task, error) {
			e, err := gemm.SharedEngine(0)
			if err != nil {
				return nil, err
			}
			s := series()
			return errorTasks(cfg, 512, 1, s, seriesMethods(s), e), nil
		},
	}}
}

func seriesMethods(series []figureSeries) []gemm.Method {
	var ms []gemm.Method
	for _, s := range series {
		ms = append(ms, s.Method)
	}
	return ms
}

// seriesLabel maps a method's name to its curve's legend; without series
// (fig4.1, fig4.2) the curves are named by method.
func seriesLabel(series []figureSeries) func(method string) string {
	return func(method string) string {
		for _, s := range series {
			if s.Method.Name == method {
				return s.Label
			}
		}
		return method
	}
}

// The two timings of the throughput figures, as panel titles: the
// multiword paper's (eq. 4.1: the mean of R = 10 runs, the split left
// out) and ours (the median, every pass included).
const (
	paperTiming  = "paper's t_avg: mean of 10, split excluded"
	ourTiming    = "ours: median of 10, split included"
	timingPanels = "\"" + paperTiming + "\" (the paper's eq. 4.1) and \"" + ourTiming + "\" (what a caller waits for), each " +
		"titled with the device"
)

// throughputTasks times the methods on n×n matrices, one point per n with
// every method (on the same operands, one after another), and reports
// each timing twice: the paper's definition and ours, a panel each.
func throughputTasks(cfg experiment.Config, device string, series []figureSeries, methods []gemm.Method, m measurer) []experiment.Task {
	label := seriesLabel(series)
	paper, ours := device+": "+paperTiming, device+": "+ourTiming
	var tasks []experiment.Task
	for x := 10; x <= timingHi(cfg); x++ {
		n := 1 << x
		tasks = append(tasks, experiment.Task{Panel: paper + ", " + ours, Series: "all methods", X: float64(n),
			Cost: float64(n) * float64(n) * float64(n) * float64(len(methods)),
			Run: func(context.Context) ([]experiment.Row, error) {
				ts, err := m.Time(n, 10, methods, nil)
				if err != nil {
					return nil, err
				}
				var rows []experiment.Row
				for _, t := range ts {
					rows = append(rows, experiment.Row{Panel: paper, Series: label(t.Method), X: float64(n), Y: gemm.TFLOPs(n, t.MeanProducts)})
				}
				for _, t := range ts {
					rows = append(rows, experiment.Row{Panel: ours, Series: label(t.Method), X: float64(n), Y: gemm.TFLOPs(n, t.Total)})
				}
				return rows, nil
			}})
	}
	return tasks
}

// errorTasks measures the methods' errors for A outer×n and B n×outer
// drawn from the first dists distributions of DistNames, one point per
// distribution and n with every method.
func errorTasks(cfg experiment.Config, outer, dists int, series []figureSeries, methods []gemm.Method, m measurer) []experiment.Task {
	label := seriesLabel(series)
	var tasks []experiment.Task
	for dist, name := range gemm.DistNames[:dists] {
		for x := 10; x <= errorHi(cfg); x++ {
			n := 1 << x
			tasks = append(tasks, experiment.Task{Panel: name, Series: "all methods", X: float64(n), Cost: float64(n) * float64(len(methods)),
				Run: func(context.Context) ([]experiment.Row, error) {
					acc, err := m.Accuracy(outer, n, dist, cfg.Seed, methods)
					if err != nil {
						return nil, err
					}
					var rows []experiment.Row
					for _, a := range acc {
						rows = append(rows, experiment.Row{Panel: name, Series: label(a.Method), X: float64(n), Y: a.Componentwise,
							Note: fmt.Sprintf("%.4g", a.Normwise)})
					}
					return rows, nil
				}})
		}
	}
	return tasks
}

// paperErrors completes fig4.2's experiments (e names and describes one):
// the error of the paper's methods on its distributions, A rows×n and B
// n×rows, on this GPU.
func paperErrors(rows int, e *experiment.Experiment) *experiment.Experiment {
	e.Requires, e.Serial = "gpu", true
	e.PanelColumn, e.SeriesColumn, e.XColumn, e.YColumn, e.NoteColumn = "distribution", "method", "n", "componentwise_error", "normwise_error"
	e.XLabel, e.YLabel, e.LogX, e.LogY = "n (inner dimension)", "componentwise error max|C−Ĉ|/(|A||B|)", true, true
	e.Tasks = func(cfg experiment.Config) ([]experiment.Task, error) {
		eng, err := gemm.SharedEngine(0)
		if err != nil {
			return nil, err
		}
		return errorTasks(cfg, rows, paperDists, nil, paperMethods(), eng), nil
	}
	return e
}
