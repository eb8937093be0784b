package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mwmm/mwmm/mma"
	"github.com/mwmm/mwmm/probe"
)

var probeCmd = &command{
	name:    "probe",
	summary: "measure a matrix-multiply unit's numerical features and fit the generic model",
	usage:   "mwmm probe [--unit SPEC] [--input FORMAT] [--output FORMAT] [--json] [--evidence]",
	help: `
Probe measures what a matrix-multiply unit does inside a dot product
d = a_1·b_1 + ... + a_k·b_k + c, using only its results, and fits the
generic model of 'mwmm mma' to them. It turns the tests of
numerical-behavior-tensor-cores.txt (written as pass/fail checks for one
GPU) into measurements: for each feature it runs inputs that tell the
feature's possible values apart and keeps the values whose model predicts
every result. The features:

  products                 exact, or rounded to p bits (and how)
  subnormal inputs         kept or flushed
  subnormal outputs        kept or flushed (c, and results from normal inputs)
  accumulator precision    the bits the sum is rounded to (24: binary32)
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
the fit implies; a search for non-monotonicity (the paper's example, then
random cases with one term pushed up); the paper's tests with verdicts
worded as in its text (2^-23 read as the accumulator's ulp of 1); the
fitted model, a unit spec that 'mwmm mma eval --unit' accepts, and how
often the fit disagrees with the unit on random dot products (0 unless
the unit is outside what the model can express).

--json prints the whole report, every test case with the unit's result
and each candidate value's prediction included; --evidence adds the cases
to the table. Units are SPECs as in 'mwmm mma' (presets, optionally with
:key=value overrides). Hardware units join in a later release.`,
	examples: `
mwmm probe
mwmm probe --unit t4 --output fp16
mwmm probe --unit a100 --input bf16 --json > a100-bf16.json
mwmm probe --unit v100:extra=3,accmode=rne --evidence`,
	flags: func() *flag.FlagSet { fs, _ := probeFlags(); return fs },
	run:   runProbe,
}

type probeOptions struct {
	unit, input, output string
	json, evidence      bool
}

func probeFlags() (*flag.FlagSet, *probeOptions) {
	o := new(probeOptions)
	fs := newFlagSet("probe")
	fs.StringVar(&o.unit, "unit", "v100", "the unit: a `SPEC`, a preset with optional :key=value overrides")
	fs.StringVar(&o.input, "input", "", "the `FORMAT` of a and b (default: the preset's first)")
	fs.StringVar(&o.output, "output", "", "the `FORMAT` of c and d (default: the preset's for the input)")
	fs.BoolVar(&o.json, "json", false, "print the report as JSON, with every test case")
	fs.BoolVar(&o.evidence, "evidence", false, "list each feature's test cases and the unit's results")
	return fs, o
}

func runProbe(args []string, stdout, stderr io.Writer, stdin io.Reader) error {
	fs, o := probeFlags()
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("probe takes no arguments (got %q); name the unit with --unit", rest[0])
	}
	u, err := mma.Lookup(o.unit, o.input, o.output)
	if err != nil {
		return usage(err)
	}
	r, err := probe.Run(u)
	if err != nil {
		return err
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return writeReport(stdout, r, o.evidence)
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
	fmt.Fprintln(w, "the tests of numerical-behavior-tensor-cores.txt (U: the accumulator's ulp of 1, 2^-23 in binary32):")
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
