package main

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mwmm/mwmm/gpu/dist"
	"github.com/mwmm/mwmm/gpu/gemm"
	"github.com/mwmm/mwmm/internal/outfile"
	"github.com/mwmm/mwmm/internal/progress"
	"github.com/mwmm/mwmm/multiword"
)

var benchCmd = &command{
	name:     "bench",
	summary:  "the GPU report: speed and accuracy of cuBLASLt baselines and multiword variants",
	usage:    "mwmm bench [--sizes 4096,8192,16384] [--reps 10] [--accuracy 10..20] [--methods LIST] [--dists LIST] [--csv FILE] [--device I]",
	help:     benchHelp(),
	examples: benchExamples,
	brief: `
Speed:
  sizes     the square sizes n to time, comma-separated
  reps      timed runs per method and size (the median is reported)
  methods   the methods: all, or names and variant specs, comma-separated
Accuracy:
  accuracy  the sweep n = 2^LO..2^HI, or 0 to skip it
  dists     the sweep's distributions: all, or indices 0-3 or names
Output and device:
  csv       also write the measurements to this CSV file
  device    the index of the GPU (as gpu:I in --engine)
Several GPUs (the product alone, against GPU 0):
  gpus      time the product on N GPUs or a PxQ grid (SUMMA over NCCL)
  panel     the panel width of the SUMMA steps (default 8192)
`,
	flags: func() *flag.FlagSet { return benchFlags(new(benchOptions)) },
	run:   runBench,
}

func benchHelp() string {
	var names []string
	for _, m := range gemm.Methods() {
		names = append(names, m.Name)
	}
	var dists []string
	for i := range gemm.DistNames {
		dists = append(dists, distChoice(i))
	}
	return `
Bench measures, in one run on one GPU, the cuBLASLt baselines — sgemm
(fp32 with CUBLAS_COMPUTE_32F_PEDANTIC: no tensor cores), sgemm-tf32,
hgemm and bgemm (fp16 and bf16 inputs, fp32 accumulation), dgemm — and the
multiword variants: those of Algorithm 4.1 of Fasi et al., "Matrix
multiplication in multiword arithmetic", 2023 (mwmm help gemm) (split
kernel, then one cuBLASLt product per pair of words with fp32
accumulation) and those with FABsum, which a fused kernel runs: on Hopper
(sm_90) the wgmma kernel (words split once ahead of it, warpgroup MMAs,
every product of a block in one accumulator: joint=on), elsewhere — and
for plans it does not run, such as Algorithm 4.4's first=on — the mma.sync
kernel. A variant ending in @mma, @wgmma or @wgmma-smem (the wgmma kernel
splitting fp32 tiles in shared memory) names the kernel
(double-fp16-fabsum@mma).

Methods (all by default):
  ` + wrapList(names, 74, "\n  ") + `

--methods LIST measures only those: names from that list or any variant
spec of 'mwmm gemm --help', comma-separated; a spec's own options stay as
they are, since an item key=value continues the spec before it
(--methods double-fp16,double-fp16:sum=v2,b=256 is two methods); "all" is
the whole list. sgemm is always measured, added if missing: the speed-ups
are ratios to its time and the accuracy summary to its error. A method
that fails (a variant that no kernel of this build runs) is listed with
its error after the tables and in the CSV; the others are measured.

Speed: square n×n fp32 matrices uniform in (0,1], for each n of --sizes:
the median of --reps runs after warm-ups (50 ms of device time, so that
the clocks rise from idle), queued back to back as a library's calls on
a stream are and timed with CUDA events (the device's work, not the
host's trips between calls); effective TFLOP/s = 2n³/t with
the split and without it (the split of an Algorithm 4.1 variant is its
own kernel; "without" leaves out all of a fused kernel's passes before
its product kernel: the scans, the scalings and the wgmma split); the
speed-up is over sgemm measured in the same run. Each method runs on its
own (fresh operands of the same seed), so that one failure costs only its
own row.

Accuracy: A 512×n and B n×512 drawn from each distribution of --dists
(indices or names, comma-separated; all by default):
  ` + strings.Join(dists, "\n  ") + `
for n = 2^lo..2^hi (--accuracy lo..hi; 0 skips it): the componentwise
error max|C−Ĉ|/(|A||B|) (a table per distribution: methods down, n
across) and the normwise ‖C−Ĉ‖_F/‖C‖_F (in the CSV) against C and |A||B|
computed by DGEMM from the same fp32 data. Expect double-fp16 through
cuBLAS to be poor on (0,1] for large n: the tensor cores round toward zero
(section 4.2), which FABsum cures. After each table, a line per method
gives its worst ratio error/sgemm's error over the n's and over n ≥ 2^16,
against the targets of the FABsum work: no worse than sgemm at every n
(≤ 1) and 2× better from n = 2^16 on (≤ 0.5).

--csv writes both tables to FILE (one row per measurement, a "table"
column says which, an "error" column the failures). 'mwmm experiment run
fig4.1' and 'fig4.2' plot the Algorithm 4.1 measurements like the paper's
figures, 'fig4.4' and 'fig4.5' (with -error for the right panels) the
FABsum ones.`
}

const benchExamples = `mwmm bench
mwmm bench --sizes 8192 --accuracy 0
mwmm bench --sizes 4096,8192,16384 --accuracy 10..20 --csv bench.csv
# FABsum against cuBLAS double-fp16 on (0,1] only (sgemm is added)
mwmm bench --dists 0 \\
    --methods double-fp16,double-fp16-fabsum,double-fp16:scale=on,shift=11,first=on,sum=v2,b=256
# the wgmma kernel against the mma.sync kernel, speed only
mwmm bench --sizes 2048,8192 --accuracy 0 --methods double-fp16-fabsum,double-fp16-fabsum@mma
# one size timed; accuracy on normal and log-uniform data only
mwmm bench --sizes 4096 --methods double-fp16,triple-bf16-fabsum --dists normal,logu:3`

type benchOptions struct {
	sizes, accuracy, csv, methods, dists string
	reps, device, panel                  int
	gpus                                 string
}

func benchFlags(o *benchOptions) *flag.FlagSet {
	fs := newFlagSet("bench")
	fs.StringVar(&o.sizes, "sizes", "4096,8192,16384", "square `SIZES` n to time, comma-separated")
	fs.IntVar(&o.reps, "reps", 10, "`N` timed runs per method and size (after 50 ms of warm-up runs); the median is reported")
	fs.StringVar(&o.accuracy, "accuracy", "10..20", "accuracy sweep n = 2^lo..2^hi, as `LO..HI`, or 0 to skip")
	fs.StringVar(&o.methods, "methods", "all", "methods to measure, a `LIST`: names of the list above or variant specs, comma-separated (sgemm is always added)")
	fs.StringVar(&o.dists, "dists", "all", "distributions of the accuracy sweep, a `LIST`: indices 0-3 or names, comma-separated")
	fs.StringVar(&o.csv, "csv", "", "also write the measurements to this CSV `FILE`")
	fs.IntVar(&o.device, "device", 0, "the `I` of the GPU (as gpu:I in --engine)")
	fs.StringVar(&o.gpus, "gpus", "", "time the product on `N` GPUs (the squarest grid) or a PxQ grid of them (SUMMA over NCCL) against GPU 0 alone")
	fs.IntVar(&o.panel, "panel", dist.DefaultPanel, "with --gpus: the panel `WIDTH` of the SUMMA steps")
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

// wrapList joins items with ", " in lines of at most width characters,
// separated by sep.
func wrapList(items []string, width int, sep string) string {
	var lines []string
	line := ""
	for i, it := range items {
		if i < len(items)-1 {
			it += ","
		}
		if line != "" && len(line)+1+len(it) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += it
	}
	return strings.Join(append(lines, line), sep)
}

// parseMethods reads --methods: "all", or names of gemm.Methods() and
// variant specs, comma-separated, where an item key=value (with no ':')
// continues the spec before it. sgemm comes first when it is not listed.
func parseMethods(list string) ([]gemm.Method, error) {
	all := gemm.Methods()
	items := splitSpecs(list)
	if slices.Contains(items, "") {
		return nil, usagef("--methods %q: an empty item", list)
	}
	var ms []gemm.Method
	add := func(m gemm.Method) {
		if !slices.ContainsFunc(ms, func(x gemm.Method) bool { return x.Name == m.Name }) {
			ms = append(ms, m)
		}
	}
	for _, it := range items {
		if strings.EqualFold(it, "all") {
			for _, m := range all {
				add(m)
			}
			continue
		}
		if i := slices.IndexFunc(all, func(m gemm.Method) bool { return m.Name == it }); i >= 0 {
			add(all[i])
			continue
		}
		m, err := gemm.ParseMethod(it)
		if err != nil {
			return nil, usagef("--methods: %v", err)
		}
		if _, err := multiword.Lookup(m.Variant); err != nil {
			var names []string
			for _, m := range gemm.Baselines {
				names = append(names, m.Name)
			}
			return nil, usagef("--methods: %q is neither a method of mwmm bench (baselines %s, or a variant: see mwmm bench --help) "+
				"nor a variant spec: %v", it, strings.Join(names, ", "), err)
		}
		add(m)
	}
	if !slices.ContainsFunc(ms, func(m gemm.Method) bool { return m.Name == "sgemm" }) {
		ms = append([]gemm.Method{all[slices.IndexFunc(all, func(m gemm.Method) bool { return m.Name == "sgemm" })]}, ms...)
	}
	return ms, nil
}

// failures are the methods that failed, in the order they first did.
type failures struct {
	methods []string
	first   map[string]error
	count   map[string]int
}

func (f *failures) add(method string, err error) {
	if f.first == nil {
		f.first, f.count = map[string]error{}, map[string]int{}
	}
	if _, ok := f.first[method]; !ok {
		f.methods = append(f.methods, method)
		f.first[method] = err
	}
	f.count[method]++
}

func (f *failures) write(w io.Writer) {
	if len(f.methods) == 0 {
		return
	}
	fmt.Fprintf(w, "\nfailed (the other methods were measured):\n")
	for _, m := range f.methods {
		more := ""
		switch c := f.count[m]; {
		case c == 2:
			more = " (and 1 more point)"
		case c > 2:
			more = fmt.Sprintf(" (and %d more points)", c-1)
		}
		fmt.Fprintf(w, "  %s: %v%s\n", m, f.first[m], more)
	}
}

// largeN is where the FABsum target tightens: 2× better than sgemm for
// n ≥ 2^16.
const largeN = 1 << 16

func runBench(args []string, stdout, stderr io.Writer, _ io.Reader) error {
	var o benchOptions
	pos, err := parseFlags(benchFlags(&o), args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected arguments %q", pos)
	}
	var p benchPlan
	if p.sizes, p.reps, err = benchSizes(&o); err != nil {
		return err
	}
	if o.gpus != "" {
		return runBenchGPUs(&o, p.sizes, p.reps, stdout)
	}
	if err := p.parseSweep(&o, stderr); err != nil {
		return err
	}
	if err := checkOutputs(output{"csv", o.csv}); err != nil {
		return err
	}
	return p.run(&o, stdout, stderr)
}

// benchSizes reads --sizes and --reps, and refuses a negative --device.
func benchSizes(o *benchOptions) (sizes []int, reps int, err error) {
	for _, f := range strings.Split(o.sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 16 {
			return nil, 0, usagef("--sizes: %q is not a size ≥ 16", f)
		}
		sizes = append(sizes, n)
	}
	if o.reps < 1 {
		return nil, 0, usagef("--reps %d: want at least 1", o.reps)
	}
	if o.device < 0 {
		// Refused on every machine; an index past the GPUs is this machine's (1).
		return nil, 0, usagef("--device %d: want a GPU index ≥ 0", o.device)
	}
	return sizes, o.reps, nil
}

// parseSweep reads --accuracy, --methods and --dists, with the notes of
// the distribution names it reads as other data.
func (p *benchPlan) parseSweep(o *benchOptions, stderr io.Writer) (err error) {
	if p.lo, p.hi, err = parseRange(o.accuracy); err != nil {
		return err
	}
	if p.methods, err = parseMethods(o.methods); err != nil {
		return err
	}
	if p.dists, err = parseDists(o.dists); err != nil {
		return err
	}
	for _, note := range distNotes(o.dists) {
		fmt.Fprintln(stderr, "mwmm bench: note: "+note)
	}
	return nil
}

// run measures on --device's GPU, prints the tables and writes --csv
// (which may be "-", the real stdout: then the tables go to stderr).
func (p *benchPlan) run(o *benchOptions, stdout, stderr io.Writer) error {
	report := reportTo(stdout, stderr, output{"csv", o.csv})
	e, err := gemm.SharedEngine(o.device)
	if err != nil {
		return fmt.Errorf("no GPU to benchmark: %w", err)
	}
	fmt.Fprintf(report, "device: %s (%s), driver %d\n\n", e.Device().Name(), e.Device().Arch(), e.Device().DriverVersion())
	bar := progress.New(stderr, p.steps(), "bench")
	records, failed := p.measure(report, e, func() { bar.Add(1) })
	bar.Finish()
	failed.write(report)
	if o.csv != "" {
		err := outfile.WriteFile(context.Background(), o.csv, stdout, func(f io.Writer) error {
			w := csv.NewWriter(f)
			w.Write(benchHeader)
			return w.WriteAll(records)
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(report, "\nwrote %s\n", o.csv)
	}
	if err := failed.first["sgemm"]; err != nil {
		return fmt.Errorf("the baseline sgemm failed, so there are no speed-ups or error ratios: %w", err)
	}
	return nil
}

// benchEngine is what the bench needs of a GPU engine (*gemm.Engine); the
// tests give a fake one.
type benchEngine interface {
	Time(n, reps int, methods []gemm.Method, after func()) ([]gemm.Timing, error)
	Accuracy(m, n, dist int, seed uint64, methods []gemm.Method) ([]gemm.Accuracy, error)
}

// benchPlan is what a bench measures, from the command line.
type benchPlan struct {
	sizes   []int
	reps    int
	lo, hi  int // accuracy sweep n = 2^lo..2^hi; none when hi < lo
	methods []gemm.Method
	dists   []int
}

// benchHeader are the columns of the CSV.
var benchHeader = []string{"table", "method", "distribution", "n", "ms", "ms_without_split", "tflops", "tflops_without_split",
	"speedup_vs_sgemm", "componentwise_error", "normwise_error", "error"}

// accMethods are the methods of the accuracy sweep: all but dgemm, the
// reference.
func (p *benchPlan) accMethods() []gemm.Method {
	var ms []gemm.Method
	for _, m := range p.methods {
		if m.Name != "dgemm" {
			ms = append(ms, m)
		}
	}
	return ms
}

// steps is the number of measurements, for the progress bar.
func (p *benchPlan) steps() int64 {
	return int64(len(p.sizes)*len(p.methods) + len(p.dists)*max(0, p.hi-p.lo+1)*len(p.accMethods()))
}

// measure runs the bench on e, prints the tables to w and returns the CSV
// records and the failures. Each method runs alone (one Time or Accuracy
// call each), so that a failing method costs only its own results. step
// is called after each measurement.
func (p *benchPlan) measure(w io.Writer, e benchEngine, step func()) (records [][]string, failed failures) {
	r := &benchRun{e: e, step: step}
	p.measureSpeed(w, r)
	if p.hi >= p.lo {
		p.measureAccuracy(w, r)
	}
	return r.records, r.failed
}

// A benchRun collects a bench's CSV records and failures as it measures.
type benchRun struct {
	e       benchEngine
	step    func()
	records [][]string
	failed  failures
}

// measureSpeed times each method at each size and prints the speed table.
func (p *benchPlan) measureSpeed(w io.Writer, r *benchRun) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "method\tn\tms\tms w/o split\tTFLOP/s\tTFLOP/s w/o split\t× sgemm\t")
	for _, n := range p.sizes {
		times, errs := p.timeMethods(r, n)
		sgemm := math.NaN()
		if t, ok := times["sgemm"]; ok {
			sgemm = t.Total.Seconds()
		}
		for _, m := range p.methods {
			t, ok := times[m.Name]
			if !ok {
				fmt.Fprintf(tw, "%s\t%d\t-\t-\t-\t-\t-\t\n", m.Name, n)
				r.records = append(r.records, []string{"speed", m.Name, gemm.DistNames[0], strconv.Itoa(n), "", "", "", "", "", "", "",
					errs[m.Name].Error()})
				continue
			}
			speedup, speedupCell, speedupCSV := sgemm/t.Total.Seconds(), "-", "" // no sgemm time: no speed-up
			if !math.IsNaN(speedup) {
				speedupCell, speedupCSV = fmt.Sprintf("%.2f", speedup), fmtG(speedup)
			}
			ms, msp := float64(t.Total.Microseconds())/1e3, float64(t.Products.Microseconds())/1e3
			fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.1f\t%.1f\t%s\t\n", m.Name, n, ms, msp,
				gemm.TFLOPs(n, t.Total), gemm.TFLOPs(n, t.Products), speedupCell)
			r.records = append(r.records, []string{"speed", m.Name, gemm.DistNames[0], strconv.Itoa(n), fmtG(ms), fmtG(msp),
				fmtG(gemm.TFLOPs(n, t.Total)), fmtG(gemm.TFLOPs(n, t.Products)), speedupCSV, "", "", ""})
		}
		fmt.Fprintln(tw, "\t\t\t\t\t\t\t")
	}
	tw.Flush()
}

// timeMethods times each method at size n: its timing, or why it failed.
func (p *benchPlan) timeMethods(r *benchRun, n int) (map[string]gemm.Timing, map[string]error) {
	times, errs := map[string]gemm.Timing{}, map[string]error{}
	for _, m := range p.methods {
		ts, err := r.e.Time(n, p.reps, []gemm.Method{m}, nil)
		r.step()
		if err == nil && len(ts) != 1 {
			err = fmt.Errorf("%s at n=%d: %d timings", m.Name, n, len(ts))
		}
		if err != nil {
			r.failed.add(m.Name, err)
			errs[m.Name] = err
			continue
		}
		times[m.Name] = ts[0]
	}
	return times, errs
}

// measureAccuracy runs the accuracy sweep on each distribution and prints
// its errors and their ratios to sgemm's.
func (p *benchPlan) measureAccuracy(w io.Writer, r *benchRun) {
	fmt.Fprintln(w, "\ncomponentwise error max|C−Ĉ|/(|A||B|), A 512×n, B n×512 (normwise in the CSV)")
	var ns []int
	for x := p.lo; x <= p.hi; x++ {
		ns = append(ns, 1<<x)
	}
	var names []string
	for _, m := range p.accMethods() {
		names = append(names, m.Name)
	}
	for _, dist := range p.dists {
		name := gemm.DistNames[dist]
		acc := p.sweep(r, dist, ns)
		fmt.Fprintf(w, "\ndistribution %s\n", name)
		writeAccuracyTable(w, names, ns, acc)
		fmt.Fprintf(w, "\nerror ÷ sgemm's error on %s, worst over n (target ≤ 1) and over n ≥ %s (target ≤ 0.5)\n", name, fmtN(largeN))
		writeRatios(w, worstRatios(acc, names, "sgemm", largeN))
	}
}

// sweep measures each accuracy method's error at each n on distribution
// dist.
func (p *benchPlan) sweep(r *benchRun, dist int, ns []int) []gemm.Accuracy {
	name := gemm.DistNames[dist]
	var acc []gemm.Accuracy
	for _, n := range ns {
		for _, m := range p.accMethods() {
			a, err := r.e.Accuracy(512, n, dist, 1, []gemm.Method{m})
			r.step()
			if err == nil && len(a) != 1 {
				err = fmt.Errorf("%s at n=%d: %d results", m.Name, n, len(a))
			}
			if err != nil {
				r.failed.add(m.Name, err)
				r.records = append(r.records, []string{"accuracy", m.Name, name, strconv.Itoa(n), "", "", "", "", "", "", "", err.Error()})
				continue
			}
			acc = append(acc, a[0])
			r.records = append(r.records, []string{"accuracy", m.Name, name, strconv.Itoa(n), "", "", "", "", "",
				fmtG(a[0].Componentwise), fmtG(a[0].Normwise), ""})
		}
	}
	return acc
}

// fmtN writes a power of two as 2^k.
func fmtN(n int) string {
	if n > 0 && n&(n-1) == 0 {
		return fmt.Sprintf("2^%d", int(math.Log2(float64(n))))
	}
	return strconv.Itoa(n)
}

// writeAccuracyTable prints the componentwise errors of acc: one row per
// method, one column per n; "-" where the method failed.
func writeAccuracyTable(w io.Writer, methods []string, ns []int, acc []gemm.Accuracy) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"method"}
	for _, n := range ns {
		head = append(head, fmtN(n))
	}
	fmt.Fprintf(tw, "%s\t\n", strings.Join(head, "\t"))
	for _, m := range methods {
		cells := []string{m}
		for _, n := range ns {
			cell := "-"
			for _, a := range acc {
				if a.Method == m && a.N == n {
					cell = strconv.FormatFloat(a.Componentwise, 'g', 3, 64)
				}
			}
			cells = append(cells, cell)
		}
		fmt.Fprintf(tw, "%s\t\n", strings.Join(cells, "\t"))
	}
	tw.Flush()
}

// An errorRatio is a method's componentwise error divided by the
// baseline's at the same n, at its worst over an accuracy sweep.
type errorRatio struct {
	method    string
	worst     float64 // the largest ratio over the n's
	worstN    int     // where; 0 when no n had both errors
	threshold int     // largeN of worstRatios
	large     float64 // the largest ratio over n ≥ threshold
	largeN    int     // where; 0 when no such n
}

// meets says whether r meets the targets: no worse than the baseline at
// every n, and at least 2× better for n ≥ largeN (when measured there).
func (r errorRatio) meets() bool {
	return r.worstN > 0 && r.worst <= 1 && (r.largeN == 0 || r.large <= 0.5)
}

// ratioOf is e/b, 1 when both are 0, +Inf when only b is (or either is
// NaN: a broken result is the worst).
func ratioOf(e, b float64) float64 {
	if e == 0 && b == 0 {
		return 1
	}
	r := e / b
	if math.IsNaN(r) {
		return math.Inf(1)
	}
	return r
}

// worstRatios returns the errorRatio of each of methods but the baseline,
// in that order, over the n's at which acc has the errors of both the
// method and the baseline.
func worstRatios(acc []gemm.Accuracy, methods []string, baseline string, largeN int) []errorRatio {
	base := map[int]float64{}
	for _, a := range acc {
		if a.Method == baseline {
			base[a.N] = a.Componentwise
		}
	}
	var out []errorRatio
	for _, m := range methods {
		if m == baseline {
			continue
		}
		x := errorRatio{method: m, threshold: largeN}
		for _, a := range acc {
			b, ok := base[a.N]
			if a.Method != m || !ok {
				continue
			}
			r := ratioOf(a.Componentwise, b)
			if x.worstN == 0 || r > x.worst {
				x.worst, x.worstN = r, a.N
			}
			if a.N >= largeN && (x.largeN == 0 || r > x.large) {
				x.large, x.largeN = r, a.N
			}
		}
		out = append(out, x)
	}
	return out
}

// writeRatios prints a line per method: its worst ratios, where, and
// whether it meets the targets.
func writeRatios(w io.Writer, rs []errorRatio) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range rs {
		if r.worstN == 0 {
			fmt.Fprintf(tw, "  %s\t-\t-\tno error to compare (failed, or no sgemm error at its n)\n", r.method)
			continue
		}
		large := fmt.Sprintf("no n ≥ %s measured", fmtN(r.threshold))
		if r.largeN > 0 {
			large = fmt.Sprintf("n ≥ %s: %.3g at %s", fmtN(r.threshold), r.large, fmtN(r.largeN))
		}
		verdict := "misses the targets"
		if r.meets() {
			verdict = "meets the targets"
		}
		fmt.Fprintf(tw, "  %s\tworst %.3g at %s\t%s\t%s\n", r.method, r.worst, fmtN(r.worstN), large, verdict)
	}
	tw.Flush()
}

func fmtG(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
