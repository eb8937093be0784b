package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/mwmm/mwmm/gpu/dist"
	"github.com/mwmm/mwmm/gpu/gemm"
	"github.com/mwmm/mwmm/multiword"
)

// runBenchGPUs times the fused FABsum product on --gpus GPUs against GPU 0
// alone, for each size, in one process.
func runBenchGPUs(o *benchOptions, sizes []int, reps int, stdout io.Writer) error {
	if o.panel < 1 {
		return usagef("--panel %d: want at least 1", o.panel)
	}
	g, err := dist.ParseGPUs(o.gpus)
	if err != nil {
		return usage(err)
	}
	name := "double-fp16-fabsum"
	if o.methods != "all" {
		name = o.methods
	}
	plan, err := multiword.Lookup(name)
	if err == nil {
		err = gemm.FusedSupports(&plan)
	}
	if err != nil {
		return usagef("--methods %s: %v (--gpus times the fused kernels' plans)", name, err)
	}
	devs := make([]int, g.Size())
	for i := range devs {
		devs[i] = i
	}
	e, err := dist.OpenEngine(devs, g)
	if err != nil {
		return err
	}
	defer e.Close()
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "%s, best of %d\t\t\t\t\t\t\t\n", plan.Name, reps)
	fmt.Fprintln(w, "n\tGPUs\tgrid\tpanel\t1 GPU (s)\tN GPUs (s)\tspeed-up\tTFLOP/s per GPU\t")
	for _, n := range sizes {
		t, err := dist.Bench(e.Team, plan, n, o.panel, reps, true)
		if err != nil {
			return fmt.Errorf("n = %d: %w", n, err)
		}
		fmt.Fprintf(w, "%d\t%d\t%v\t%d\t%.4f\t%.4f\t%.2f×\t%.0f\t\n", n, t.GPUs, t.Grid, t.Panel,
			t.One.Seconds(), t.Team.Seconds(), t.Speedup(), t.TFLOPs()/float64(t.GPUs))
		w.Flush()
	}
	return w.Flush()
}
