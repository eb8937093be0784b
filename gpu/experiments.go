package gpu

import (
	"context"
	"fmt"

	"github.com/mwmm/mwmm/experiment"
)

const fasi = "Fasi, Higham, Lopez, Mary, Mikaitis, Matrix multiplication in multiword arithmetic (SISC 2023; papers/multiword-matmul-tensor-cores.txt)"

func init() {
	experiment.Register(&experiment.Experiment{
		Name:  "fig4.1",
		Title: "throughput of cuBLASLt baselines and multiword variants on this GPU",
		Cites: fasi + ", Figure 4.1",
		Shows: "on V100 and A100, fp16 tensor cores run far above fp32; double-fp16 (Algorithm 4.1, three fp16 products) reaches 30 and 76 " +
			"effective Tflop/s, 2.2× and 7.3× fp32, about a third of fp16",
		Setup: "A, B n×n fp32 uniform in (0,1] made on the GPU; n = 2^10..2^14 (--quick: 2^10..2^12); median of 10 timed runs after 2 warm-ups " +
			"(CUDA events); effective Tflop/s = 2n³/t with the split included (the note column: without it); baselines through cuBLASLt: " +
			"sgemm (pedantic fp32), sgemm-tf32, hgemm, bgemm (inputs converted beforehand), dgemm",
		Requires:    "gpu",
		Serial:      true,
		PanelColumn: "device", SeriesColumn: "method", XColumn: "n", YColumn: "tflops", NoteColumn: "tflops_without_split",
		XLabel: "n (A, B n×n)", YLabel: "effective Tflop/s (2n³/t)", LogX: true, LogY: true,
		Tasks: func(cfg experiment.Config) ([]experiment.Task, error) {
			e, err := SharedEngine(0)
			if err != nil {
				return nil, err
			}
			hi := 14
			if cfg.Quick {
				hi = 12
			}
			var tasks []experiment.Task
			for x := 10; x <= hi; x++ {
				n := 1 << x
				tasks = append(tasks, experiment.Task{Panel: e.d.Name(), Series: "all methods", X: float64(n), Cost: float64(n) * float64(n) * float64(n),
					Run: func(context.Context) ([]experiment.Row, error) {
						ts, err := e.Time(n, 10, Methods(), nil)
						if err != nil {
							return nil, err
						}
						var rows []experiment.Row
						for _, t := range ts {
							rows = append(rows, experiment.Row{Panel: e.d.Name(), Series: t.Method, X: float64(n),
								Y: TFLOPs(n, t.Total), Note: fmt.Sprintf("%.4g", TFLOPs(n, t.Products))})
						}
						return rows, nil
					}})
			}
			return tasks, nil
		},
	})
	experiment.Register(&experiment.Experiment{
		Name:  "fig4.2",
		Title: "componentwise error of the baselines and multiword variants on this GPU",
		Cites: fasi + ", Figure 4.2",
		Shows: "on (−0.5,0.5] double-fp16 is often far more accurate than fp16 but not always as accurate as fp32; on (0,1] the tensor " +
			"cores' round-toward-zero makes double-fp16's error grow like n·2^-24, no better than fp16 for large n and far worse than fp32",
		Setup: "A 512×n, B n×512 fp32 uniform in (0,1] and (−0.5,0.5] made on the GPU; n = 2^10..2^20 (--quick: 2^10..2^14); " +
			"error max|C−Ĉ|/(|A||B|) against C and |A||B| by DGEMM from the same fp32 data (note column: normwise ‖C−Ĉ‖_F/‖C‖_F)",
		Requires:    "gpu",
		Serial:      true,
		PanelColumn: "distribution", SeriesColumn: "method", XColumn: "n", YColumn: "componentwise_error", NoteColumn: "normwise_error",
		XLabel: "n (inner dimension)", YLabel: "componentwise error max|C−Ĉ|/(|A||B|)", LogX: true, LogY: true,
		Tasks: func(cfg experiment.Config) ([]experiment.Task, error) {
			e, err := SharedEngine(0)
			if err != nil {
				return nil, err
			}
			hi := 20
			if cfg.Quick {
				hi = 14
			}
			var tasks []experiment.Task
			for dist, name := range DistNames {
				for x := 10; x <= hi; x++ {
					n := 1 << x
					tasks = append(tasks, experiment.Task{Panel: name, Series: "all methods", X: float64(n), Cost: float64(n),
						Run: func(context.Context) ([]experiment.Row, error) {
							acc, err := e.Accuracy(512, n, dist, cfg.Seed, Methods())
							if err != nil {
								return nil, err
							}
							var rows []experiment.Row
							for _, a := range acc {
								rows = append(rows, experiment.Row{Panel: name, Series: a.Method, X: float64(n), Y: a.Componentwise,
									Note: fmt.Sprintf("%.4g", a.Normwise)})
							}
							return rows, nil
						}})
				}
			}
			return tasks, nil
		},
	})
}
