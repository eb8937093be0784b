package main

import (
	"fmt"
	"io"

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
	fmt.Fprintf(stdout, "%s, best of %d\n", plan.Name, reps)
	fmt.Fprintf(stdout, "%7s %5s %5s %6s %10s %11s %9s %16s\n", "n", "GPUs", "grid", "panel", "1 GPU (s)", "N GPUs (s)", "speed-up", "TFLOP/s per GPU")
	for _, n := range sizes {
		t, err := dist.Bench(e.Team, plan, n, o.panel, reps, true)
		if err != nil {
			return fmt.Errorf("n = %d: %w", n, err)
		}
		fmt.Fprintf(stdout, "%7d %5d %5v %6d %10.4f %11.4f %8.2f× %16.0f\n", n, t.GPUs, t.Grid, t.Panel,
			t.One.Seconds(), t.Team.Seconds(), t.Speedup(), t.TFLOPs()/float64(t.GPUs))
	}
	return nil
}
