package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mwmm/mwmm/format"
)

var roundCmd = &command{
	name:    "round",
	summary: "round numbers to a format in a rounding mode",
	usage:   "mwmm round --format NAME [--mode MODE] [--saturate] [--no-subnormals] [--seed S] [VALUE...]",
	help:    roundHelp(),
	examples: `
mwmm round --format e4m3 448 460 465 1e9      # 448 448 NaN NaN: e4m3 overflows to NaN
mwmm round --format e4m3 --saturate 1e9       # 448
mwmm round --format fp16 70000                # +Inf
mwmm round --format fp16 --mode rz 70000      # 65504
mwmm round --format fp16 --no-subnormals 1e-6 # 0
mwmm round --format bf16 -0.1 0x1p-130        # negative numbers and hex floats are values
mwmm round --format e5m2 --mode sr --seed 7 0.3 0.3 0.3
printf '0.1\n0.2\n' | mwmm round --format e2m1 --mode ru`,
	flags: func() *flag.FlagSet { fs, _ := roundFlags(); return fs },
	run:   runRound,
}

func roundHelp() string {
	var b strings.Builder
	b.WriteString(`
Round prints each VALUE rounded to the format given by --format, one result
per line, as the shortest decimal that reads back as the same float64:
448, 0.001953125, -0, +Inf, NaN. With no VALUE it reads the values from
standard input, one per line, skipping blank lines and lines that start
with # (as mma eval does); a bad line stops it with its line number and
exit status 1.

A VALUE is anything Go's strconv.ParseFloat reads: 1.5, -2e-3, 0x1p-10,
inf, -inf, nan. It is read as the nearest float64 first, so a decimal with
more digits than binary64 holds is rounded twice. Negative values may stand
anywhere, also right after the flags; after "--" every argument is a value.

Overflow follows the format (see 'mwmm formats'): the IEEE formats give
±Inf, e4m3 and the finite P3109 formats give NaN, fp6 and fp4 saturate; the
modes that round toward zero give ±max finite. --saturate makes overflow and
±Inf give ±max finite in every format. --no-subnormals flushes results below
the smallest normal number to 0 or to the smallest normal.

The stochastic modes draw their random bits from a PCG generator seeded
with --seed: the same seed and values give the same output.

Rounding modes (--mode):
`)
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	for _, m := range format.Modes() {
		fmt.Fprintf(tw, "  %s\t%s\n", m, m.Description())
	}
	fmt.Fprintf(tw, "  sr-bits=N\tstochastic with N random bits, 1 <= N <= %d (P3109 StochasticA)\n", format.MaxStochasticBits)
	tw.Flush()
	b.WriteString(`
Formats (--format), case-insensitive: fp64, fp32, tf32, fp16, bf16, e5m2,
e4m3, e3m2, e2m3, e2m1, p3109-kKpP[-finite], custom:p=P,emin=E,emax=M and
their aliases; 'mwmm formats' lists them with their parameters.`)
	return b.String()
}

type roundOptions struct {
	format       string
	mode         string
	saturate     bool
	noSubnormals bool
	seed         uint64
}

func roundFlags() (*flag.FlagSet, *roundOptions) {
	o := new(roundOptions)
	fs := newFlagSet("round")
	fs.StringVar(&o.format, "format", "", "the `NAME` of the format to round to (required)")
	fs.StringVar(&o.mode, "mode", "rne", "the rounding `MODE`")
	fs.BoolVar(&o.saturate, "saturate", false, "clamp overflow and ±Inf to ±max finite")
	fs.BoolVar(&o.noSubnormals, "no-subnormals", false, "flush results below the smallest normal (no gradual underflow)")
	fs.Uint64Var(&o.seed, "seed", 1, "the `SEED` of the random bits of the stochastic modes")
	return fs, o
}

func runRound(args []string, stdout, stderr io.Writer, stdin io.Reader) error {
	fs, o := roundFlags()
	values, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if o.format == "" {
		return usagef("--format is required, e.g. --format fp16 ('mwmm formats' lists the formats)")
	}
	f, err := format.Parse(o.format)
	if err != nil {
		return usage(err)
	}
	if o.noSubnormals {
		f = f.WithSubnormals(false)
	}
	if o.saturate {
		f = f.WithSaturation(true)
	}
	mode, err := format.ParseMode(o.mode)
	if err != nil {
		return usage(err)
	}
	var src format.Source
	if mode.IsStochastic() {
		src = rand.New(rand.NewPCG(o.seed, o.seed^0x9e3779b97f4a7c15))
	}

	w := bufio.NewWriter(stdout)
	roundOne := func(x float64) {
		w.WriteString(strconv.FormatFloat(f.RoundRand(x, mode, src), 'g', -1, 64))
		w.WriteByte('\n')
	}
	if len(values) > 0 {
		xs := make([]float64, len(values))
		for i, v := range values { // check them all before printing any
			if xs[i], err = parseNumber(v); err != nil {
				return usage(err)
			}
		}
		for _, x := range xs {
			roundOne(x)
		}
		return w.Flush()
	}

	return roundLines(stdin, w, roundOne)
}

// roundLines rounds each line of r, as mma eval reads its cases: blank lines
// and lines starting with # are skipped, a UTF-8 byte order mark at the
// start is ignored, and lines may be of any length. A line that is not a
// number stops it (exit status 1: bad input, not a bad command line) after
// the results of the lines before.
func roundLines(r io.Reader, w *bufio.Writer, roundOne func(float64)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), math.MaxInt)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte("\uFEFF"))
		}
		s := strings.TrimSpace(string(b))
		if s == "" || s[0] == '#' {
			continue
		}
		x, err := parseNumber(s)
		if err != nil {
			w.Flush()
			if len(s) > 40 {
				err = fmt.Errorf("%.40q… (%d characters) is not a number", s, len(s))
			}
			return fmt.Errorf("standard input, line %d: %v", line, err)
		}
		roundOne(x)
	}
	if err := sc.Err(); err != nil {
		w.Flush()
		return fmt.Errorf("standard input, after line %d: %v", line, err)
	}
	return w.Flush()
}
