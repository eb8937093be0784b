package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mwmm/mwmm/internal/outfile"
	"github.com/mwmm/mwmm/internal/progress"
	"github.com/mwmm/mwmm/mma"
	"github.com/mwmm/mwmm/probe"
)

var probeCmd = &command{
	name:    "probe",
	summary: "measure a matrix-multiply unit's numerical features and fit the generic model",
	usage: "mwmm probe [--unit UNIT] [--input FORMAT] [--output FORMAT] [--json] [--evidence]\n" +
		"mwmm probe [--unit UNIT] --crosscheck N [--against UNIT] [--record FILE] [--seed S]",
	help: `
Probe measures what a matrix-multiply unit does inside a dot product
d = a_1·b_1 + ... + a_k·b_k + c, using only its results, and fits the
generic model of 'mwmm mma' to them. It turns the tests of Fasi, Higham,
Mikaitis and Pranesh, "Numerical behavior of NVIDIA tensor cores" (PeerJ
Comput. Sci., 2021, https://doi.org/10.7717/peerj-cs.330), written as
pass/fail checks for one GPU, into measurements: for each feature it runs inputs that tell the
feature's possible values apart and keeps the values whose model predicts
every result. The features:

  products                 exact, or rounded to p bits (and how)
  subnormal inputs         kept or flushed
  subnormal outputs        kept or flushed (c, and results from normal inputs)
  accumulator precision    the bits the sum is rounded to (24: fp32)
  rounding of the sum      rz, rne, rna, ru or rd, from ties of both signs
  carry bits               the carries the adder keeps above the largest term
  products per block       where the rounding of a long dot product changes
  extra alignment bits     bits kept below the accumulator's last one
  normalisation            once at the end, or after each addition (and order)
  addend c                 aligned with the products, or added to their sum
  rounding of the output   when the output is narrower than the accumulator

The table gives each feature's value, the values that explain every result
(several when the tests cannot tell them apart; "not observable" when no
test can), and the number of test cases. Then: the order of the additions
the fit implies; a search for non-monotonicity (cases built from the fitted
adder's grid and rounding, the paper's example, then random cases with one
term pushed up); the paper's tests with verdicts
worded as in its text (2^-23 read as the accumulator's ulp of 1); the
fitted model, a unit spec that 'mwmm mma eval --unit' accepts, and how
often the fit disagrees with the unit on random dot products (0 unless
the unit is outside what the model can express).

--json prints the whole report, every test case with the unit's result
and each candidate value's prediction included; --evidence adds the cases
to the table. A UNIT is named as in 'mwmm mma' (a preset, optionally with
:key=value overrides) or is one of the GPU's own instructions:

  gpu:mma.sync   warp-level tensor-core MMA: fp16→fp32/fp16, bf16→fp32,
                 tf32→fp32 (m16n8k8), fp64 (m8n8k4), e4m3/e5m2→fp32/fp16
  gpu:wgmma      Hopper's warpgroup MMA (sm_90a): fp16, bf16, tf32, e4m3, e5m2
  gpu:fma        the CUDA cores' FMA chain: fp32 and fp64 (a baseline)

(gpuN:... for device N). A GPU unit runs each batch of test cases in one
kernel launch, eight dot products per instruction tile.

--crosscheck N then draws about N random dot products from the generators
(uniform, mixed signs, wide exponent spread, heavy cancellation, subnormal
inputs, c much larger or smaller than the products, near overflow) at
several lengths, runs them on the unit and on the fitted model — or on the
model --against names, such as the measured h100 preset — and counts every
case where they differ. A bit-exact model has no mismatches; the first few
of any are listed. With --against the probe itself is skipped. --record
FILE (with --crosscheck) keeps every cross-check case and the unit's result
as JSON lines; FILE is created before the work starts.`,
	examples: `
mwmm probe
mwmm probe --unit gpu:wgmma --input e4m3 --output fp32
mwmm probe --unit v100:extra=3,accmode=rne --evidence
mwmm probe --unit t4 --output fp16
mwmm probe --unit a100 --input bf16 --json > a100-bf16.json
mwmm probe --unit gpu:mma.sync --input bf16 --crosscheck 1000000 --against h100`,
	brief: `
The unit:
  unit        a preset (default v100), with :key=value overrides, or gpu:INSTR
  input       the format of a and b (default: the unit's first)
  output      the format of c and d (default: the unit's for the input)
  force       probe units of over 1024 products a block (slow: k^1.75)
Report:
  json        print the report as JSON, with every test case
  evidence    list each feature's test cases and the unit's results
Cross-check:
  crosscheck  compare the fit with the unit on about N random dot products
  against     compare this model unit (e.g. h100) instead of the fit
  record      write every case and the unit's result to this file (JSON lines)
  seed        the cross-check's random seed
`,
	flags: func() *flag.FlagSet { fs, _ := probeFlags(); return fs },
	run:   runProbe,
}

type probeOptions struct {
	unit, input, output, against string
	json, evidence               bool
	crosscheck                   int
	seed                         uint64
	record                       string
	force                        bool
}

// The probe's time and memory grow as about k^1.75 in the unit's block
// size k (two cores: k=1024 12 s and 0.9 GB, k=2048 40 s and 3 GB, and
// k=65536 ran out of 24 GB). Presets have k ≤ 16.
const probeMaxK = 1024

// probeCost is the probe's estimated time and memory for block size k.
func probeCost(k int) (time.Duration, float64) {
	f := math.Pow(float64(k)/1024, 1.75)
	return time.Duration(f * 12 * float64(time.Second)), f * 0.9e9
}

func probeFlags() (*flag.FlagSet, *probeOptions) {
	o := new(probeOptions)
	fs := newFlagSet("probe")
	fs.StringVar(&o.unit, "unit", "v100", "the `UNIT`: a preset with optional :key=value overrides, or gpu:INSTR")
	fs.StringVar(&o.input, "input", "", "the `FORMAT` of a and b (default: the preset's first)")
	fs.StringVar(&o.output, "output", "", "the `FORMAT` of c and d (default: the preset's for the input)")
	fs.BoolVar(&o.json, "json", false, "print the report as JSON, with every test case")
	fs.BoolVar(&o.evidence, "evidence", false, "list each feature's test cases and the unit's results")
	fs.IntVar(&o.crosscheck, "crosscheck", 0, "compare the fit (or --against) with the unit on about `N` random dot products")
	fs.StringVar(&o.against, "against", "", "cross-check this model `UNIT` (e.g. h100) instead of the fit; skips the probe")
	fs.Uint64Var(&o.seed, "seed", 1, "the cross-check's random `SEED`")
	fs.StringVar(&o.record, "record", "", "write every cross-check case and the unit's result to `FILE` (JSON lines)")
	fs.BoolVar(&o.force, "force", false, fmt.Sprintf("probe units with more than %d products per block (the work grows as k^1.75)", probeMaxK))
	return fs, o
}

func runProbe(args []string, stdout, stderr io.Writer, stdin io.Reader) error {
	fs, o := probeFlags()
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := checkProbeFlags(o, rest); err != nil {
		return err
	}
	u, model, err := probeUnits(o, stderr)
	if err != nil {
		return err
	}
	// A path that cannot be written fails at once, not after the probe.
	if err := checkOutputs(output{"record", o.record}); err != nil {
		return err
	}
	report := reportTo(stdout, stderr, output{"record", o.record}) // --record -: the report goes to stderr
	var out probeJSON
	if o.against == "" {
		r, err := probe.Run(u)
		if err != nil {
			return err
		}
		out.Report = &r
		if !o.json {
			if err := writeReport(report, r, o.evidence); err != nil {
				return err
			}
		}
		if o.crosscheck > 0 {
			if model, err = probe.Fit(r); err != nil {
				return err
			}
		}
	}
	if o.crosscheck > 0 {
		cc, err := crosscheck(u, model, o, stdout, stderr)
		if err != nil {
			return err
		}
		out.Crosscheck = &cc
		if !o.json {
			writeCrosscheck(report, cc)
		}
	}
	if o.json {
		if out.Crosscheck == nil {
			return writeJSON(report, out.Report) // the report alone, as before
		}
		return writeJSON(report, out)
	}
	return nil
}

// probeJSON is probe --json's output with --crosscheck.
type probeJSON struct {
	Report     *probe.Report     `json:"probe,omitempty"`
	Crosscheck *probe.Crosscheck `json:"crosscheck,omitempty"`
}

// checkProbeFlags refuses arguments and flags that do not go together.
func checkProbeFlags(o *probeOptions, rest []string) error {
	if len(rest) > 0 {
		return usagef("probe takes no arguments (got %q); name the unit with --unit", rest[0])
	}
	if o.crosscheck < 0 {
		return usagef("--crosscheck takes a number of cases, got %d", o.crosscheck)
	}
	if o.against != "" && o.crosscheck == 0 {
		return usagef("--against names the model of a cross-check: add --crosscheck N")
	}
	if o.record != "" && o.crosscheck == 0 {
		return usagef("--record keeps the cases of a cross-check: add --crosscheck N")
	}
	return nil
}

// probeUnits opens --unit, refusing (without --force) a block size whose
// probe would take too long, and --against's model when it is given.
func probeUnits(o *probeOptions, stderr io.Writer) (u, model mma.Unit, err error) {
	if u, err = mma.Open(o.unit, o.input, o.output); err != nil {
		return nil, nil, unitError(err)
	}
	if k := u.BlockK(); o.against == "" {
		d, bytes := probeCost(k)
		if k > probeMaxK && !o.force {
			return nil, nil, usagef("--unit %s: k = %d products per block; the probe would take about %s and %.1f GB (its work grows as k^1.75): "+
				"probe k ≤ %d, or add --force", o.unit, k, roundDuration(d), bytes/1e9, probeMaxK)
		}
		if d >= 5*time.Second {
			fmt.Fprintf(stderr, "mwmm probe: k = %d: estimated %s and %.1f GB\n", k, roundDuration(d), bytes/1e9)
		}
		return u, nil, nil
	}
	if model, err = mma.Open(o.against, u.Input().Name(), u.Output().Name()); err != nil {
		return nil, nil, unitError(err)
	}
	return u, model, nil
}

// crosscheck compares u with model on --crosscheck random cases, with a
// progress bar, writing them to --record when it is given (stdout: the
// file "-").
func crosscheck(u, model mma.Unit, o *probeOptions, stdout, stderr io.Writer) (probe.Crosscheck, error) {
	bar := progress.New(stderr, int64(o.crosscheck), "cross-check")
	opts := probe.CrosscheckOptions{Cases: o.crosscheck, Seed: o.seed, Done: func(n int) { bar.Add(int64(n)) }}
	var rec *recorder
	if o.record != "" {
		ctx, stop := signalContext() // the record only: nothing else to clean up
		defer stop()
		var err error
		if rec, err = newRecorder(ctx, o.record, stdout); err != nil {
			return probe.Crosscheck{}, err
		}
		defer rec.f.Abort() // after close, nothing
		opts.Record = rec.add
	}
	cc, err := probe.RunCrosscheck(u, model, opts)
	bar.Finish()
	if rec != nil {
		if cerr := rec.close(); err == nil {
			err = cerr
		}
	}
	return cc, err
}

// recorder writes cross-check cases as JSON lines (probe.RecordLine).
// An interrupt stops it between two lines: the record keeps the cases so
// far and ends on a whole line.
type recorder struct {
	ctx  context.Context // the interrupt
	f    *outfile.File
	path string
	n    int // lines written
}

func newRecorder(ctx context.Context, path string, stdout io.Writer) (*recorder, error) {
	// The file itself is not stopped by the interrupt, so that close
	// keeps the lines written.
	f, err := outfile.Create(context.Background(), path, stdout)
	if err != nil {
		return nil, err
	}
	return &recorder{ctx: ctx, f: f, path: path}, nil
}

func (r *recorder) add(gen string, c probe.Case, d float64) error {
	if r.ctx.Err() != nil {
		return fmt.Errorf("interrupted (%v): %s holds the first %s", context.Cause(r.ctx), r.path, count(r.n, "case"))
	}
	line, err := probe.RecordLine(gen, c, d)
	if err != nil {
		return err
	}
	if _, err := r.f.Write(append(line, '\n')); err != nil {
		return err
	}
	r.n++
	return nil
}

// close puts the record in place, complete or up to an interrupt.
func (r *recorder) close() error { return r.f.Commit() }

func writeCrosscheck(w io.Writer, cc probe.Crosscheck) {
	fmt.Fprintf(w, "\ncross-check of %s against %s, lengths k = %v:\n", cc.Unit, cc.Model, cc.Lengths)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  GENERATOR\tCASES\tMISMATCHES")
	for _, r := range cc.Rows {
		fmt.Fprintf(tw, "  %s\t%d\t%d\n", r.Generator, r.Cases, r.Mismatches)
	}
	fmt.Fprintf(tw, "  all\t%d\t%d\n", cc.Cases, cc.Mismatches)
	tw.Flush()
	for _, r := range cc.Rows {
		for _, m := range r.Examples {
			fmt.Fprintf(w, "  %s: a=%v b=%v c=%v: unit %v, model %v\n", r.Generator, m.A, m.B, m.C, m.Unit, m.Model)
		}
	}
}

func writeReport(w io.Writer, r probe.Report, evidence bool) error {
	fmt.Fprintf(w, "%s: %s × %s → %s, %d dot products run\n\n", r.Unit, r.Input, r.Input, r.Output, r.Runs)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "FEATURE\tVALUE\tVALUES THAT EXPLAIN THE RESULTS\tTESTS")
	for _, f := range r.Findings {
		cands := strings.Join(f.Candidates, ", ")
		if !f.Consistent {
			cands = "none: no value explains every result"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", f.Feature, f.Value, cands, len(f.Evidence))
	}
	tw.Flush()
	fmt.Fprintf(w, "\norder of the additions: %s\nmonotonicity: %v\n\n", r.Order, r.Monotonicity)
	fmt.Fprintln(w, "the tests of Fasi et al., \"Numerical behavior of NVIDIA tensor cores\", 2021,")
	fmt.Fprintln(w, "https://doi.org/10.7717/peerj-cs.330 (U: the accumulator's ulp of 1, 2^-23 in fp32):")
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  TEST\tVERDICT\tTHE PAPER (V100)")
	for _, s := range r.Seeds {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Name, s.Verdict, s.Paper)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nfitted model: %s\nspec: %s\n", r.Model, r.Spec)
	fmt.Fprintf(w, "random check: the fit disagrees with the unit on %d of %d random dot products\n", r.Misses, r.SampleSize)
	if evidence {
		for _, f := range r.Findings {
			fmt.Fprintf(w, "\n%s:\n", f.Feature)
			for _, o := range f.Evidence {
				fmt.Fprintf(w, "  %-60s %v → %g\n", o.Note, o.Case, o.Got)
			}
		}
	}
	return nil
}
