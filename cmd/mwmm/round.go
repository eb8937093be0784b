package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/internal/npy"
	"github.com/mwmm/mwmm/internal/outfile"
)

var roundCmd = &command{
	name:    "round",
	summary: "round numbers to a format in a rounding mode",
	usage: "mwmm round --format NAME [--mode MODE] [--seed S] [--saturate] [--no-subnormals] [VALUE...]\n" +
		"mwmm round --format NAME [flags] --in X.npy --out Y.npy [--codes] [--dtype T] [--stats]\n" +
		"mwmm round --block-format NAME [--scale-rule R] [VALUE... | --in X.npy --out Y.npy [--codes] [--scales S.npy]]",
	help: roundHelp(),
	examples: `
mwmm round --format e4m3 448 460 465 1e9      # 448 448 NaN NaN: e4m3 overflows to NaN
mwmm round --format fp16 --mode rz 70000      # 65504
mwmm round --format e4m3 --in x.npy --out y.npy           # an array, any shape
mwmm round --format e4m3 --saturate 1e9       # 448
mwmm round --format fp16 70000                # +Inf
mwmm round --format fp16 --no-subnormals 1e-6 # 0
mwmm round --format bf16 -0.1 0x1p-130        # negative numbers and hex floats are values
mwmm round --format e5m2 --mode sr --seed 7 0.3 0.3 0.3
printf '0.1\n0.2\n' | mwmm round --format e2m1 --mode ru
mwmm round --format e4m3 --in x.npy --out c.npy --codes   # the e4m3 codes, uint8
mwmm round --format bf16 --mode sr --seed 3 --in x.npy --out y.npy --stats
mwmm round --block-format mxfp8 1000 1 0x1p-10 500       # 896 1 0 512: one shared scale 2
mwmm round --block-format mxfp8 --scale-rule noclip 1000 1 0x1p-10 500   # 1024 1 0 512
mwmm round --block-format nvfp4 --in w.npy --out q.npy --codes --scales s.npy`,
	brief: `
Rounding:
  format         the format to round to, e.g. fp16, bf16, e4m3, e2m1 (mwmm formats)
  mode           rne (default), rna, rz, ru, rd, ro, sr, sr-bits=N... (mwmm help round)
  seed           seed of the random bits of the stochastic modes
  saturate       clamp overflow and ±Inf to ±max finite
  no-subnormals  flush results below the smallest normal
Block-scaled formats:
  block-format   quantize to mxfp8, mxfp8-e5m2, mxfp6, mxfp6-e2m3, mxfp4 or nvfp4
  scale-rule     the block scale rule: spec or noclip
  scales         with --codes: write the block scales' codes (uint8) to this .npy
Arrays (.npy):
  in             round the array in this .npy file (needs --out)
  out            write the rounded array to this .npy file (- for standard output)
  codes          write the format's bit codes (uint8 or uint16), not values
  dtype          the values written: float32 or float64 (default: the narrowest exact)
  stats          print counts, time and values/s
`,
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
more digits than fp64 holds is rounded twice. Negative values may stand
anywhere, also right after the flags; after "--" every argument is a value.

Overflow follows the format (see 'mwmm formats'): the IEEE formats give
±Inf, e4m3 and the finite P3109 formats give NaN, fp6 and fp4 saturate; the
modes that round toward zero give ±max finite. --saturate makes overflow and
±Inf give ±max finite in every format. --no-subnormals flushes results below
the smallest normal number to 0 or to the smallest normal.

The stochastic modes draw their random bits from a PCG generator seeded
with --seed: the same seed and values give the same output.

Arrays: --in X.npy --out Y.npy rounds every element of a NumPy array of
any shape and order (float16, float32, float64, or integers, which must
convert to float64 exactly) and writes an array of the same shape and
order. The output holds the rounded values as float32 when the format fits
fp32 and the input is not float64, else float64; --dtype float32 or
float64 chooses (float32 is refused for formats it cannot hold). --codes
writes the format's bit codes instead, as uint8 (formats of up to 8 bits)
or uint16 (up to 16): a NaN in a format without one (fp6, fp4) is then an
error. The array streams through in chunks of 128 Ki values, so files larger
than memory work; Y.npy appears only when complete (written beside it,
then renamed), and the stochastic modes give the same output for the same
seed whatever the chunking or the number of cores. --stats prints the
count, the values that changed, that went to zero and the finite ones
beyond ±max finite, the time and the values/s.

Block-scaled formats (--block-format): OCP Microscaling v1.0 mxfp8 (e4m3
elements; mxfp8-e5m2), mxfp6 (e3m2; mxfp6-e2m3) and mxfp4 (e2m1), 32
values sharing a power-of-two E8M0 scale, and NVIDIA's nvfp4, 16 e2m1
values sharing an e4m3 scale under a per-tensor float32 scale (the amax
of all values / (6·448)). Blocks run along the last axis of an array (C
order), or over the values in the order given. The scale rule spec takes
the specification's scale (mx: 2^(floor(log2 amax) - emax of the element);
nvfp4: amax/6 to nearest e4m3), under which values near amax may clip to
the element's max; noclip rounds the scale up so that none clips. --mode
rounds the elements. A NaN or Inf makes its whole block NaN. Output: the
values the blocks stand for, as float64, or with --codes the elements'
codes (uint8, the array's shape) and --scales S.npy the scales' codes
(uint8: E8M0, or e4m3 for nvfp4; one per block along the last axis);
nvfp4 prints its tensor scale. docs/formats.md has the sources.

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
	in, out      string
	codes        bool
	dtype        string
	stats        bool
	blockFormat  string
	scaleRule    string
	scales       string
}

func roundFlags() (*flag.FlagSet, *roundOptions) {
	o := new(roundOptions)
	fs := newFlagSet("round")
	fs.StringVar(&o.format, "format", "", "the `NAME` of the format to round to (required, unless --block-format)")
	fs.StringVar(&o.mode, "mode", "rne", "the rounding `MODE`")
	fs.BoolVar(&o.saturate, "saturate", false, "clamp overflow and ±Inf to ±max finite")
	fs.BoolVar(&o.noSubnormals, "no-subnormals", false, "flush results below the smallest normal (no gradual underflow)")
	fs.Uint64Var(&o.seed, "seed", 1, "the `SEED` of the random bits of the stochastic modes")
	fs.StringVar(&o.in, "in", "", "round the array in `FILE`.npy (needs --out)")
	fs.StringVar(&o.out, "out", "", "write the rounded array to `FILE`.npy")
	fs.BoolVar(&o.codes, "codes", false, "with --out: write the format's bit codes (uint8 or uint16), not values")
	fs.StringVar(&o.dtype, "dtype", "", "with --out: the `TYPE` of the values written, float32 or float64 (default: see above)")
	fs.BoolVar(&o.stats, "stats", false, "with --in: print counts, time and values/s")
	fs.StringVar(&o.blockFormat, "block-format", "", "quantize to the block-scaled format `NAME` (mxfp8, mxfp8-e5m2, mxfp6, mxfp6-e2m3, mxfp4, nvfp4) instead of --format")
	fs.StringVar(&o.scaleRule, "scale-rule", "spec", "with --block-format: the block scale `RULE`, spec or noclip")
	fs.StringVar(&o.scales, "scales", "", "with --block-format --codes: write the block scales' codes (uint8) to `FILE`.npy")
	return fs, o
}

func runRound(args []string, stdout, stderr io.Writer, stdin io.Reader) error {
	fs, o := roundFlags()
	values, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if o.blockFormat != "" {
		return runRoundBlock(o, values, stdout, stderr, stdin)
	}
	if o.scales != "" || o.scaleRule != "spec" {
		return usagef("--scales and --scale-rule go with --block-format")
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
	mode, src, arrays, err := roundSetup(o, values, "--format NAME")
	if err != nil {
		return err
	}
	if arrays {
		return roundArray(f, mode, src, o, stdout, stderr)
	}
	if o.codes || o.dtype != "" || o.stats {
		return usagef("--codes, --dtype and --stats apply to arrays (--in X.npy --out Y.npy)")
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

// arrayChunk is how many values roundArray holds at a time: a multiple of
// RoundSlice's 16384, so that the stochastic modes draw the same seeds as
// for the whole array at once, and small enough (1 MiB of float64) that a
// chunk stays in cache from the read through the rounding to the write:
// 1 Mi values took 1.5× the time on the 2-core VM (docs/perf/npy.md).
var arrayChunk = 1 << 17

// fitsBinary32 reports whether every value of f is a float32.
func fitsBinary32(f format.Format) bool {
	return f.Precision() <= 24 && f.Emin() >= -126 && f.Emax() <= 127
}

// roundArray rounds the array in o.in into o.out, chunk by chunk.
func roundArray(f format.Format, mode format.Mode, src format.Source, o *roundOptions, stdout, stderr io.Writer) error {
	dtype, err := arrayDtype(f, o)
	if err != nil {
		return err
	}
	outs := []output{{"out", o.out}}
	if err := checkOutputs(outs...); err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	r, closeIn, err := openArray(o.in)
	if err != nil {
		return err
	}
	defer closeIn()
	if dtype == "" {
		dtype = "float64"
		if r.Dtype != "float64" && fitsBinary32(f) {
			dtype = "float32"
		}
	}
	out, err := createArray(ctx, o.out, dtype, r.Shape, r.Fortran, stdout)
	if err != nil {
		return err
	}
	defer out.abort()

	var st roundStats
	start := time.Now()
	if err := roundStream(ctx, f, mode, src, o, r, out, &st); err != nil {
		return err
	}
	elapsed := time.Since(start)
	if err := out.commit(); err != nil {
		return err
	}
	if o.stats {
		what := "values"
		if o.codes {
			what = "codes"
		}
		fmt.Fprintf(reportTo(stdout, stderr, outs...), "%s: %d values (%s %s) to %s %s in %s, as %s %s: %d changed, %d to zero, %d beyond ±max finite; %.3g s, %.3g values/s\n",
			o.out, r.Len, r.Dtype, shapeString(r.Shape), f.Name(), mode, o.in, dtype, what,
			st.changed, st.zero, st.overflow, elapsed.Seconds(), float64(r.Len)/elapsed.Seconds())
	}
	return nil
}

// arrayDtype is the dtype --out's array is written as: --codes' unsigned
// integers, or --dtype ("" when not given: it then follows the input).
func arrayDtype(f format.Format, o *roundOptions) (string, error) {
	switch dtype := o.dtype; {
	case o.codes && dtype != "":
		return "", usagef("--codes writes codes: --dtype %s does not apply", dtype)
	case o.codes && f.Bits() == 0:
		return "", usagef("--codes: %s has no encoding (its exponent range fills no exponent field)", f.Name())
	case o.codes && f.Bits() > 16:
		return "", usagef("--codes: %s codes have %d bits, more than uint16 holds; write the values instead", f.Name(), f.Bits())
	case o.codes && f.Bits() <= 8:
		return "uint8", nil
	case o.codes:
		return "uint16", nil
	case dtype == "float32" && !fitsBinary32(f):
		return "", usagef("--dtype float32 cannot hold every %s value; use float64", f.Name())
	case dtype != "" && dtype != "float32" && dtype != "float64":
		return "", usagef("--dtype %q: float32 or float64", dtype)
	}
	return o.dtype, nil
}

// roundStream rounds r's elements into out, a chunk at a time, while a
// goroutine reads the next chunk.
func roundStream(ctx context.Context, f format.Format, mode format.Mode, src format.Source, o *roundOptions,
	r *npy.Reader, out *arrayOut, st *roundStats) error {
	size := min(arrayChunk, max(r.Len, 1))
	y := make([]float64, size)
	var codes []uint64
	if o.codes {
		codes = make([]uint64, size)
	}
	at := 0
	return streamArray(ctx, r, o.in, size, func(x []float64) error {
		k := len(x)
		f.RoundSlice(y[:k], x, mode, src)
		if o.stats {
			st.add(&f, x, y[:k])
		}
		var err error
		if o.codes {
			if i, err := f.EncodeSlice(codes[:k], y[:k]); err != nil {
				return fmt.Errorf("%s: element %d rounds to %v, which has no %s code", o.in, at+i, y[i], f.Name())
			}
			err = out.w.WriteCodes(codes[:k])
		} else {
			err = out.w.Write(y[:k])
		}
		if err != nil {
			return err // it names o.out
		}
		at += k
		return nil
	})
}

// openArray opens the .npy file at path for streaming.
func openArray(path string) (*npy.Reader, func(), error) {
	in, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	r, err := npy.NewReader(in)
	if err != nil {
		in.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, func() { in.Close() }, nil // read-only: Close cannot lose data
}

// streamArray calls fn on the elements of r in order, size at a time (the
// last chunk may be shorter). A goroutine reads and converts the next chunk
// while fn works on this one: the two halves of the work overlap. An
// interrupt (ctx done) stops it between chunks.
func streamArray(ctx context.Context, r *npy.Reader, path string, size int, fn func(x []float64) error) error {
	type chunk struct {
		x   []float64
		err error
	}
	full, empty := make(chan chunk, 1), make(chan []float64, 2)
	empty <- make([]float64, size)
	empty <- make([]float64, size)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(full)
		send := func(c chunk) bool {
			select {
			case full <- c:
				return true
			case <-stop:
				return false
			}
		}
		for at := 0; at < r.Len; {
			var buf []float64
			select {
			case buf = <-empty:
			case <-stop:
				return
			}
			k := 0
			for k < len(buf) && at+k < r.Len {
				n, err := r.Read(buf[k:])
				if err != nil {
					send(chunk{err: fmt.Errorf("%s: %w", path, err)})
					return
				}
				k += n
			}
			if !send(chunk{x: buf[:k]}) {
				return
			}
			at += k
		}
	}()
	for c := range full {
		if c.err != nil {
			return c.err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted (%v)", context.Cause(ctx))
		}
		if err := fn(c.x); err != nil {
			return err
		}
		empty <- c.x[:cap(c.x)]
	}
	return nil
}

// arrayOut is an array being written through outfile: at its path, whole,
// once committed; an abort (a failure, an interrupt) leaves an earlier file
// as it was and no temporary file.
type arrayOut struct {
	f *outfile.File
	w *npy.Writer
}

func createArray(ctx context.Context, path, dtype string, shape []int, fortran bool, stdout io.Writer) (*arrayOut, error) {
	f, err := outfile.Create(ctx, path, stdout)
	if err != nil {
		return nil, err
	}
	w, err := npy.NewWriter(f, dtype, shape, fortran)
	if err != nil {
		f.Abort()
		return nil, err
	}
	return &arrayOut{f, w}, nil
}

func (a *arrayOut) commit() error {
	if err := a.w.Close(); err != nil {
		a.f.Abort()
		return err
	}
	return a.f.Commit()
}

func (a *arrayOut) abort() { a.f.Abort() }

// roundStats counts what rounding did to an array: values that changed,
// nonzero values that became zero, finite values beyond ±max finite.
type roundStats struct{ changed, zero, overflow int }

func (s *roundStats) add(f *format.Format, before, after []float64) {
	maxF := f.MaxFinite()
	for i, x := range before {
		y := after[i]
		if math.Float64bits(x) != math.Float64bits(y) && !(x != x && y != y) {
			s.changed++
		}
		if y == 0 && x != 0 {
			s.zero++
		}
		if math.Abs(x) > maxF && !math.IsInf(x, 0) {
			s.overflow++
		}
	}
}

// shapeString writes a shape as Python does: (), (3,), (2, 3).
func shapeString(shape []int) string {
	s := make([]string, len(shape))
	for i, d := range shape {
		s[i] = strconv.Itoa(d)
	}
	if len(s) == 1 {
		return "(" + s[0] + ",)"
	}
	return "(" + strings.Join(s, ", ") + ")"
}

// runRoundBlock quantizes to a block-scaled format: values (one row, in
// the order given) or an array (blocks along its last axis).
func runRoundBlock(o *roundOptions, values []string, stdout, stderr io.Writer, stdin io.Reader) error {
	b, err := format.ParseBlockFormat(o.blockFormat)
	if err != nil {
		return usage(err)
	}
	switch {
	case o.format != "":
		return usagef("--format %s and --block-format %s: choose one", o.format, o.blockFormat)
	case o.saturate || o.noSubnormals:
		return usagef("--saturate and --no-subnormals do not apply to block formats (their elements saturate, with subnormals)")
	}
	rule, err := format.ParseScaleRule(o.scaleRule)
	if err != nil {
		return usage(err)
	}
	mode, src, arrays, err := roundSetup(o, values, "--block-format NAME")
	if err != nil {
		return err
	}
	if arrays {
		return roundBlockArray(b, rule, mode, src, o, stdout, stderr)
	}
	if o.codes || o.dtype != "" || o.stats || o.scales != "" {
		return usagef("--codes, --dtype, --scales and --stats apply to arrays (--in X.npy --out Y.npy)")
	}

	var xs []float64
	w := bufio.NewWriter(stdout)
	if len(values) > 0 {
		for _, v := range values {
			x, err := parseNumber(v)
			if err != nil {
				return usage(err)
			}
			xs = append(xs, x)
		}
	} else if err := roundLines(stdin, w, func(x float64) { xs = append(xs, x) }); err != nil {
		return err
	}
	g := b.TensorScale(format.AbsMax(xs))
	b.Quantize(xs, nil, xs, 0, g, rule, mode, src, nil)
	for _, x := range xs {
		w.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		w.WriteByte('\n')
	}
	return w.Flush()
}

// roundBlockArray quantizes the array in o.in to b, blocks along the last
// axis, and writes the values (float64) or, with --codes, the elements'
// codes to o.out and the scales' codes to o.scales.
func roundBlockArray(b format.BlockFormat, rule format.ScaleRule, mode format.Mode, src format.Source, o *roundOptions, stdout, stderr io.Writer) error {
	switch {
	case o.dtype != "" && o.dtype != "float64":
		return usagef("--dtype %s: block-format values are float64 (nvfp4's are products of three scales, not float32 values)", o.dtype)
	case o.codes && o.scales == "":
		return usagef("--codes with --block-format needs --scales S.npy for the block scales")
	case !o.codes && o.scales != "":
		return usagef("--scales goes with --codes")
	}
	outs := []output{{"out", o.out}, {"scales", o.scales}}
	if err := checkOutputs(outs...); err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	r, closeIn, g, err := openBlockInput(ctx, b, o.in)
	if err != nil {
		return err
	}
	defer closeIn()
	bs := &blockStream{b: b, rule: rule, mode: mode, src: src, g: g, in: o.in, rowLen: lastAxis(r.Shape)}
	if err := bs.create(ctx, o, r, stdout); err != nil {
		return err
	}
	defer bs.abort()
	start := time.Now()
	if err := streamArray(ctx, r, o.in, bs.chunk(r.Len), bs.write); err != nil {
		return err
	}
	elapsed := time.Since(start)
	if err := bs.commit(); err != nil {
		return err
	}
	stdout = reportTo(stdout, stderr, outs...)
	if b.HasTensorScale() && (o.codes || o.stats) {
		fmt.Fprintf(stdout, "%s tensor scale: %s (float32 %#08x)\n", b.Name(), strconv.FormatFloat(g, 'g', -1, 64), math.Float32bits(float32(g)))
	}
	if o.stats {
		fmt.Fprintf(stdout, "%s: %d values (%s %s) to %s (scale rule %s, elements %s) in %s: %.3g s, %.3g values/s\n",
			o.out, r.Len, r.Dtype, shapeString(r.Shape), b.Name(), rule, mode, o.in, elapsed.Seconds(), float64(r.Len)/elapsed.Seconds())
	}
	return nil
}

// lastAxis is the length of an array's last axis (1 for a scalar).
func lastAxis(shape []int) int {
	if len(shape) == 0 {
		return 1
	}
	return shape[len(shape)-1]
}

// openBlockInput opens the array in path, refusing Fortran order (the
// blocks run along the last axis), and for a format with a tensor scale
// reads it once for its amax and opens it again: the reader returned is
// at the start, with its close, and g is the tensor scale (1 without).
func openBlockInput(ctx context.Context, b format.BlockFormat, path string) (*npy.Reader, func(), float64, error) {
	r, closeIn, err := openArray(path)
	if err != nil {
		return nil, nil, 0, err
	}
	if r.Fortran && len(r.Shape) > 1 {
		closeIn()
		return nil, nil, 0, fmt.Errorf("%s: Fortran order: the blocks run along the last axis, which is not contiguous; write the array in C order (numpy.ascontiguousarray)", path)
	}
	if !b.HasTensorScale() {
		return r, closeIn, 1, nil
	}
	amax := 0.0
	err = streamArray(ctx, r, path, min(arrayChunk, max(r.Len, 1)), func(x []float64) error {
		amax = max(amax, format.AbsMax(x))
		return nil
	})
	closeIn()
	if err != nil {
		return nil, nil, 0, err
	}
	if r, closeIn, err = openArray(path); err != nil {
		return nil, nil, 0, err
	}
	return r, closeIn, b.TensorScale(amax), nil
}

// A blockStream quantizes an array's chunks to a block format and writes
// the values, or the elements' codes and the scales' codes.
type blockStream struct {
	b      format.BlockFormat
	rule   format.ScaleRule
	mode   format.Mode
	src    format.Source
	g      float64 // the tensor scale
	in     string  // the input's path, for errors
	rowLen int

	out, scales *arrayOut // scales: with --codes only
	y           []float64
	codes       []uint64
	blocks      []format.Block
	scaleCodes  []uint64
	at          int // elements written
}

// create creates --out (and --scales with --codes) for the array r.
func (s *blockStream) create(ctx context.Context, o *roundOptions, r *npy.Reader, stdout io.Writer) error {
	dtype := "float64"
	if o.codes {
		dtype = "uint8"
	}
	var err error
	if s.out, err = createArray(ctx, o.out, dtype, r.Shape, false, stdout); err != nil || !o.codes {
		return err
	}
	shape := append([]int(nil), r.Shape...)
	if len(shape) == 0 {
		shape = []int{1}
	}
	shape[len(shape)-1] = (s.rowLen + s.b.BlockSize() - 1) / s.b.BlockSize()
	if s.scales, err = createArray(ctx, o.scales, "uint8", shape, false, stdout); err != nil {
		s.out.abort()
		return err
	}
	return nil
}

// chunk is the number of values a chunk of the n values holds: whole
// rows, so that no block straddles two chunks. It sizes the buffers.
func (s *blockStream) chunk(n int) int {
	size := max(1, arrayChunk/max(s.rowLen, 1)) * max(s.rowLen, 1)
	size = min(size, max(n, 1))
	s.y, s.codes = make([]float64, size), make([]uint64, size)
	s.scaleCodes = make([]uint64, 0, size/s.b.BlockSize()+1)
	return size
}

// write quantizes the chunk x and writes it.
func (s *blockStream) write(x []float64) error {
	k := len(x)
	if s.scales == nil {
		s.b.Quantize(s.y[:k], nil, x, s.rowLen, s.g, s.rule, s.mode, s.src, nil)
		return s.out.w.Write(s.y[:k])
	}
	s.blocks = s.b.Quantize(x, s.y[:k], x, s.rowLen, s.g, s.rule, s.mode, s.src, s.blocks[:0])
	s.scaleCodes = s.scaleCodes[:0]
	for _, blk := range s.blocks {
		s.scaleCodes = append(s.scaleCodes, blk.ScaleCode)
	}
	elem := s.b.Element()
	if i, err := elem.EncodeSlice(s.codes[:k], s.y[:k]); err != nil {
		return fmt.Errorf("%s: element %d: %v", s.in, s.at+i, err)
	}
	s.at += k
	if err := s.out.w.WriteCodes(s.codes[:k]); err != nil {
		return err
	}
	return s.scales.w.WriteCodes(s.scaleCodes)
}

func (s *blockStream) commit() error {
	if err := s.out.commit(); err != nil {
		return err
	}
	if s.scales != nil {
		return s.scales.commit()
	}
	return nil
}

// abort removes what commit did not put in place.
func (s *blockStream) abort() {
	s.out.abort()
	if s.scales != nil {
		s.scales.abort()
	}
}

// roundSetup reads --mode (seeding the stochastic modes with --seed) and
// says whether the command rounds an array (--in and --out, and no values);
// what names the format flag in the synopsis of its errors.
func roundSetup(o *roundOptions, values []string, what string) (format.Mode, format.Source, bool, error) {
	mode, err := format.ParseMode(o.mode)
	if err != nil {
		return mode, nil, false, usage(err)
	}
	var src format.Source
	if mode.IsStochastic() {
		src = rand.New(rand.NewPCG(o.seed, o.seed^0x9e3779b97f4a7c15))
	}
	if o.in == "" && o.out == "" {
		return mode, src, false, nil
	}
	if o.in == "" || o.out == "" {
		return mode, src, false, usagef("--in and --out go together: mwmm round %s --in X.npy --out Y.npy", what)
	}
	if len(values) > 0 {
		return mode, src, false, usagef("values %q beside --in: round either an array or values", values)
	}
	return mode, src, true, nil
}
