package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/internal/progress"
)

var benchCmd = &command{
	name:    "bench",
	summary: "the GPU performance report: cuBLASLt baselines and every multiword variant, speed and accuracy",
	usage:   "mwmm bench [--sizes 4096,8192,16384] [--reps 10] [--accuracy 10..20] [--csv FILE] [--device I]",
	help: `
Bench measures, in one run on one GPU, the cuBLASLt baselines — sgemm
(fp32 with CUBLAS_COMPUTE_32F_PEDANTIC: no tensor cores), sgemm-tf32,
hgemm and bgemm (fp16 and bf16 inputs, fp32 accumulation), dgemm — and
every multiword variant (Algorithm 4.1 of
multiword-matmul-tensor-cores.txt: split kernel, then one cuBLASLt product
per pair of words with fp32 accumulation).

Speed: square n×n fp32 matrices uniform in (0,1], for each n of --sizes:
the median of --reps runs after two warm-ups, timed with CUDA events;
effective TFLOP/s = 2n³/t with the split and without it (the split of a
variant is its own kernel: the fused kernel of a later release removes
it); the speed-up is over sgemm measured in the same run.

Accuracy: A 512×n and B n×512, uniform in (0,1] and in (−0.5,0.5], for
n = 2^lo..2^hi (--accuracy lo..hi; 0 skips it): the componentwise error
max|C−Ĉ|/(|A||B|) and the normwise ‖C−Ĉ‖_F/‖C‖_F against C and |A||B|
computed by DGEMM from the same fp32 data. Expect double-fp16 to be poor
on (0,1] for large n: the tensor cores round toward zero (section 4.2),
which FABsum cures.

--csv writes both tables to FILE (one row per measurement, a "table"
column says which). 'mwmm experiment run fig4.1' and 'fig4.2' plot the
same measurements like the paper's figures.`,
	examples: `mwmm bench
mwmm bench --sizes 8192 --accuracy 0
mwmm bench --sizes 4096,8192,16384 --accuracy 10..20 --csv bench.csv`,
	flags: func() *flag.FlagSet { return benchFlags(new(benchOptions)) },
	run:   runBench,
}

type benchOptions struct {
	sizes, accuracy, csv string
	reps, device         int
}

func benchFlags(o *benchOptions) *flag.FlagSet {
	fs := newFlagSet("bench")
	fs.StringVar(&o.sizes, "sizes", "4096,8192,16384", "square sizes n to time, comma-separated")
	fs.IntVar(&o.reps, "reps", 10, "timed runs per method and size (after 2 warm-ups); the median is reported")
	fs.StringVar(&o.accuracy, "accuracy", "10..20", "accuracy sweep n = 2^lo..2^hi, or 0 to skip")
	fs.StringVar(&o.csv, "csv", "", "also write the measurements to this CSV file")
	fs.IntVar(&o.device, "device", 0, "GPU index")
	return fs
}

func parseRange(s string) (lo, hi int, err error) {
	if s == "0" {
		return 0, -1, nil
	}
	a, b, ok := strings.Cut(s, "..")
	if !ok {
		b = a
	}
	lo, err1 := strconv.Atoi(a)
	hi, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || lo < 1 || hi < lo || hi > 24 {
		return 0, 0, usagef("--accuracy %q: want lo..hi with 1 ≤ lo ≤ hi ≤ 24, or 0", s)
	}
	return lo, hi, nil
}

func runBench(args []string, stdout, stderr io.Writer, _ io.Reader) error {
	var o benchOptions
	pos, err := parseFlags(benchFlags(&o), args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected arguments %q", pos)
	}
	var sizes []int
	for _, f := range strings.Split(o.sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 16 {
			return usagef("--sizes: %q is not a size ≥ 16", f)
		}
		sizes = append(sizes, n)
	}
	if o.reps < 1 {
		return usagef("--reps %d: want at least 1", o.reps)
	}
	lo, hi, err := parseRange(o.accuracy)
	if err != nil {
		return err
	}
	e, err := gpu.SharedEngine(o.device)
	if err != nil {
		return fmt.Errorf("no GPU to benchmark: %w", err)
	}
	methods := gpu.Methods()
	fmt.Fprintf(stdout, "device: %s (%s), driver %d\n\n", e.Device().Name(), e.Device().Arch(), e.Device().DriverVersion())

	var records [][]string
	header := []string{"table", "method", "distribution", "n", "ms", "ms_without_split", "tflops", "tflops_without_split", "speedup_vs_sgemm", "componentwise_error", "normwise_error"}
	bar := progress.New(stderr, int64(len(sizes)*len(methods)+2*max(0, hi-lo+1)), "bench")
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "method\tn\tms\tms w/o split\tTFLOP/s\tTFLOP/s w/o split\t× sgemm\t")
	for _, n := range sizes {
		ts, err := e.Time(n, o.reps, methods, func() { bar.Add(1) })
		if err != nil {
			return err
		}
		var sgemm float64
		for _, t := range ts {
			if t.Method == "sgemm" {
				sgemm = t.Total.Seconds()
			}
		}
		for _, t := range ts {
			speedup := sgemm / t.Total.Seconds()
			ms, msp := float64(t.Total.Microseconds())/1e3, float64(t.Products.Microseconds())/1e3
			fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.1f\t%.1f\t%.2f\t\n", t.Method, n, ms, msp,
				gpu.TFLOPs(n, t.Total), gpu.TFLOPs(n, t.Products), speedup)
			records = append(records, []string{"speed", t.Method, "(0,1]", strconv.Itoa(n), fmtG(ms), fmtG(msp),
				fmtG(gpu.TFLOPs(n, t.Total)), fmtG(gpu.TFLOPs(n, t.Products)), fmtG(speedup), "", ""})
		}
		fmt.Fprintln(tw, "\t\t\t\t\t\t\t")
	}
	tw.Flush()

	if hi >= lo {
		fmt.Fprintln(stdout, "\ncomponentwise error max|C−Ĉ|/(|A||B|), A 512×n, B n×512 (normwise in the CSV)")
		for dist, name := range gpu.DistNames {
			fmt.Fprintf(stdout, "\ndistribution %s\n", name)
			tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
			var head []string
			for _, m := range methods {
				if m.Name != "dgemm" {
					head = append(head, m.Name)
				}
			}
			fmt.Fprintf(tw, "n\t%s\t\n", strings.Join(head, "\t"))
			for x := lo; x <= hi; x++ {
				n := 1 << x
				acc, err := e.Accuracy(512, n, dist, 1, methods)
				bar.Add(1)
				if err != nil {
					return err
				}
				cells := []string{fmt.Sprintf("2^%d", x)}
				for _, a := range acc {
					cells = append(cells, strconv.FormatFloat(a.Componentwise, 'g', 3, 64))
					records = append(records, []string{"accuracy", a.Method, name, strconv.Itoa(n), "", "", "", "", "",
						fmtG(a.Componentwise), fmtG(a.Normwise)})
				}
				fmt.Fprintf(tw, "%s\t\n", strings.Join(cells, "\t"))
			}
			tw.Flush()
		}
	}
	bar.Finish()
	if o.csv != "" {
		f, err := os.Create(o.csv)
		if err != nil {
			return err
		}
		w := csv.NewWriter(f)
		w.Write(header)
		w.WriteAll(records)
		if err := w.Error(); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nwrote %s\n", o.csv)
	}
	return nil
}

func fmtG(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
