package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/bits"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/mma"
)

var mmaCmd = &command{
	name:    "mma",
	summary: "list the simulated tensor cores; evaluate dot products on one",
	usage: "mwmm mma list [--sources] [--json] [PRESET...]\n" +
		"mwmm mma eval [--unit UNIT] [--input FORMAT] [--output FORMAT] < CASES",
	help: mmaHelp(),
	examples: `
mwmm mma list
mwmm mma list --sources a100
mwmm mma eval --unit a100 --input bf16 < cases.txt
mwmm mma list --json a100
# The non-monotonicity of the V100 (Fasi et al., "Numerical behavior of NVIDIA tensor cores"):
# four products 1·2^-24 added to c = 1-2^-24 give 1+2^-23, added to c = 1 give 1.
echo '3f800000 3f800000 3f800000 3f800000 ; 33800000 33800000 33800000 33800000 ; 3f7fffff' |
    mwmm mma eval   # 3f800001
echo '3f800000 3f800000 3f800000 3f800000 ; 33800000 33800000 33800000 33800000 ; 3f800000' |
    mwmm mma eval   # 3f800000
mwmm mma eval --unit t4:extra=2,carry=unlimited --output fp16 < cases.txt`,
	brief: `
mma list:
  sources  each unit's parameters, input→output pair by pair, and their sources
  json     print the presets, their units and sources as JSON
mma eval:
  unit     a preset (default v100), with :key=value overrides, or gpu:INSTR
  input    the format of a and b (default: the preset's)
  output   the format of c and d (default: the preset's for the input)
`,
	flags: mmaFlags,
	run:   runMMA,
}

func mmaHelp() string {
	var b strings.Builder
	b.WriteString(`
Mma simulates the matrix-multiply units of GPUs (tensor cores) bit for bit.
Each element of D = A·B + C is a dot product d = a_1·b_1 + ... + a_k·b_k + c,
a and b in the unit's input format, c and d in its output format, computed
as the unit does it. The NVIDIA tensor cores fuse a block of products in one
step (4 on the V100), align the terms on a grid hung from the largest
exponent sum e_a+e_b, dropping the bits below it, normalise once and round
toward zero. Longer dot products are cut into blocks taken in order, each
block's result the next block's c, as a GEMM accumulates.

mwmm mma list prints the units (presets), one a line. With --sources it
prints for each the formats it takes, the parameters of each input→output
pair (the first is the default) on one line, and where each parameter comes
from: the papers' sections and the measurements, "not measured" where they
leave it open. PRESET... restricts the list; --json prints everything
--sources does, as JSON.

mwmm mma eval reads test cases from standard input, one a line:

  a_1 ... a_k ; b_1 ... b_k ; c

each value the 8 hex digits of its fp32 bit pattern (3f800000 is 1; a
0x prefix is allowed), separated by spaces or tabs. Blank lines and lines
starting with # are skipped. k may be 0 and may change from line to line.
For each case it prints d, as the unit computes it, as the 8 lowercase hex
digits of an fp32, one a line, in input order. A result in a narrower
format (fp16) is written as the fp32 of the same value; every NaN is
written as 7fffffff, NVIDIA's canonical NaN.

a and b must be values of the input format (fp16 1 is 3f800000 here, not
3c00) and c a value of the output format; with a tf32 input any fp32 is
accepted, since the unit converts it as the hardware does. At the first line
that breaks these rules eval reports "line N: ..." and exits with status 1,
after printing the results of the lines before it. Units whose formats hold
values fp32 cannot (a100 --input fp64) cannot be evaluated this way.

Units (--unit) are a preset, optionally followed by parameter overrides,
e.g. t4:extra=2,carry=unlimited. --input and --output choose the formats
(default: the preset's first pair; --input alone picks the output the preset
pairs with it). The presets:
`)
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	for _, p := range mma.Units() {
		fmt.Fprintf(tw, "  %s\t%s\n", p.Name, p.Summary)
	}
	tw.Flush()
	b.WriteString(`
The GPU's own instructions are units too, evaluated on the hardware (one
kernel launch a batch, eight cases per instruction tile): gpu:mma.sync,
gpu:wgmma (Hopper) and gpu:fma (the CUDA cores' FMA chain), gpuN:... for
device N; see 'mwmm help probe' for their formats.

Override keys (a UNIT is PRESET:key=value,key=value...):

  k=N                    products per block
  extra=N|unlimited      alignment bits below the accumulator's last bit
                         (v100 0, t4 and a100 1); unlimited: exact alignment
  carry=N|unlimited      carry bits above the anchor (v100 and t4 4)
  align=truncate|rne     what happens to the bits shifted below the grid
  sticky=on|off          keep a sticky bit below the grid (with truncate)
  anchor=exp|lead        the grid hangs from the largest exponent sum
                         e_a+e_b (every NVIDIA preset), or from the leading
                         bit of the largest term
  range=ieee|fixed       IEEE overflow and zero signs, or a sign-magnitude
                         adder: Inf on overflow even toward zero, zeros +0
                         (the Hopper presets)
  norm=end|each          normalise once at the end, or after every addition
  order=largest|inorder  order of the additions with norm=each
  addend=with|after      c aligned with the products, or added to their sum
  products=exact|FORMAT  exact products, or products rounded to FORMAT
  productmode=MODE       the rounding of the products
  productp=N             products rounded to N bits (fp64's range)
  acc=FORMAT             the accumulator's format (fp32 on NVIDIA)
  accp=N                 the accumulator's precision, its range kept
  accmode=MODE           the rounding into the accumulator (rz on NVIDIA)
  outmode=MODE           the rounding from the accumulator to the output
  convert=MODE           the conversion of inputs outside the input format
  subnormals=on|off      subnormal inputs and outputs

With overrides any input and output formats are allowed. FORMAT and MODE
are the names 'mwmm formats' and 'mwmm help round' list.`)
	return b.String()
}

func mmaListFlags() (*flag.FlagSet, *bool) {
	fs := newFlagSet("mma list")
	asJSON := fs.Bool("json", false, "(list) print the presets, their units and sources as JSON")
	fs.Bool("sources", false, "(list) print each unit's parameters, pair by pair, and where each comes from")
	return fs, asJSON
}

type evalOptions struct{ unit, input, output string }

func mmaEvalFlags() (*flag.FlagSet, *evalOptions) {
	o := new(evalOptions)
	fs := newFlagSet("mma eval")
	fs.StringVar(&o.unit, "unit", "v100", "(eval) the `UNIT`: a preset with optional :key=value overrides, or gpu:INSTR")
	fs.StringVar(&o.input, "input", "", "(eval) the `FORMAT` of a and b (default: the preset's)")
	fs.StringVar(&o.output, "output", "", "(eval) the `FORMAT` of c and d (default: the preset's for the input)")
	return fs, o
}

// mmaFlags gathers the flags of both subcommands for the help text.
func mmaFlags() *flag.FlagSet {
	all := newFlagSet("mma")
	add := func(f *flag.Flag) { all.Var(f.Value, f.Name, f.Usage) }
	fs, _ := mmaListFlags()
	fs.VisitAll(add)
	fs, _ = mmaEvalFlags()
	fs.VisitAll(add)
	return all
}

func runMMA(args []string, stdout, stderr io.Writer, stdin io.Reader) error {
	if len(args) == 0 {
		return usagef("missing subcommand: list or eval")
	}
	switch args[0] {
	case "list":
		return runMMAList(args[1:], stdout)
	case "eval":
		return runMMAEval(args[1:], stdout, stdin)
	case "-h", "-help", "--help", "help":
		return flag.ErrHelp
	}
	return usagef("unknown subcommand %q: want list or eval", args[0])
}

// A presetJSON is one preset in 'mma list --json'.
type presetJSON struct {
	Name    string     `json:"name"`
	Summary string     `json:"summary"`
	Open    bool       `json:"open"` // any formats accepted; units are examples
	Units   []unitJSON `json:"units"`
	Doc     string     `json:"doc"`
}

type unitJSON struct {
	Input   string `json:"input"`
	Output  string `json:"output"`
	Default bool   `json:"default"`
	Params  string `json:"params"`
}

func runMMAList(args []string, stdout io.Writer) error {
	fs, asJSON := mmaListFlags()
	names, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	list, err := presetList(names)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, list)
	}
	if !flagSet(fs, "sources") {
		return listUnits(stdout, list)
	}
	return listSources(stdout, list)
}

// presetList describes the presets named (all of them when none is).
func presetList(names []string) ([]presetJSON, error) {
	presets := mma.Units()
	if len(names) > 0 {
		presets = presets[:0:0]
		for _, n := range names {
			p, err := mma.FindUnit(n)
			if err != nil {
				return nil, unitError(err)
			}
			presets = append(presets, p)
		}
	}
	list := make([]presetJSON, 0, len(presets))
	for _, p := range presets {
		j := presetJSON{Name: p.Name, Summary: p.Summary, Open: p.Open, Doc: p.Doc, Units: []unitJSON{}}
		for i, pair := range p.Pairs {
			desc, err := p.Describe(pair[0], pair[1])
			if err != nil {
				return nil, err
			}
			j.Units = append(j.Units, unitJSON{pair[0].Name(), pair[1].Name(), i == 0, desc})
		}
		list = append(list, j)
	}
	return list, nil
}

// listSources prints each preset's units and the sources of their
// parameters (--sources).
func listSources(w io.Writer, list []presetJSON) error {
	var b strings.Builder
	for i, p := range list {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s: %s\n", p.Name, p.Summary)
		if p.Open {
			b.WriteString("  units (any input and output formats; for example):\n")
		} else {
			b.WriteString("  units:\n")
		}
		for _, u := range p.Units {
			fmt.Fprintf(&b, "    %s", u.Params)
			if u.Default {
				b.WriteString(" (default)")
			}
			b.WriteByte('\n')
		}
		b.WriteString("  sources:\n")
		for _, line := range strings.Split(strings.TrimSpace(p.Doc), "\n") {
			fmt.Fprintf(&b, "    %s\n", line)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// listUnits prints one line a preset; --sources prints the rest.
func listUnits(w io.Writer, list []presetJSON) error {
	var b strings.Builder
	for _, p := range list {
		fmt.Fprintf(&b, "%s: %s\n", p.Name, p.Summary)
	}
	b.WriteString("\n'mwmm mma list --sources [PRESET...]': the units' parameters and where each comes from.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func runMMAEval(args []string, stdout io.Writer, stdin io.Reader) error {
	fs, o := mmaEvalFlags()
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("eval takes no arguments (got %q): it reads the cases from standard input", rest[0])
	}
	u, err := mma.Open(o.unit, o.input, o.output)
	if err != nil {
		return unitError(err)
	}
	if err := checkBinary32Unit(u); err != nil {
		return usage(err)
	}
	return evalCases(u, stdin, stdout)
}

// unitError is a usage error for a unit that cannot be opened, without the
// package's "mma: " prefix (the command names itself).
func unitError(err error) error {
	msg := errors.New(strings.TrimPrefix(err.Error(), "mma: "))
	if noGPU(err) {
		return msg // this machine cannot run it: exit 1
	}
	return usage(msg)
}

// holdsBinary32 reports whether every value of f is an fp32, so that eval's
// fp32 bit patterns can carry them.
func holdsBinary32(f format.Format) bool {
	return f.Precision() <= 24 && f.Emax() <= 127 && f.Emin()-f.Precision()+1 >= -149
}

func checkBinary32Unit(u mma.Unit) error {
	for _, f := range []struct {
		what string
		f    format.Format
	}{{"input", u.Input()}, {"output", u.Output()}} {
		if !holdsBinary32(f.f) {
			return fmt.Errorf("%s has %s %s, but eval's line format carries fp32 values only", u.Name(), f.what, f.f.Name())
		}
	}
	return nil
}

// isTF32 reports whether f is tf32 (perhaps without subnormals): a unit with
// tf32 inputs reads fp32 values and converts them itself.
func isTF32(f format.Format) bool {
	return f.Precision() == format.TF32.Precision() && f.Emin() == format.TF32.Emin() && f.Emax() == format.TF32.Emax()
}

// A b32Check tells from its bits whether an fp32 is a value of a format
// narrower than fp32, without the float64 rounding of IsRepresentable
// (this runs for every value eval reads). It accepts the format's subnormals
// even when the format flushes them: their codes exist, and the unit reads
// them as the hardware does.
type b32Check struct {
	all            bool // accept every fp32 (tf32 inputs)
	p, emin        int
	maxMag         uint32 // bits of the largest finite value
	nan, inf, neg0 bool
	unsigned       bool // no sign and no zero (E8M0)
}

func newB32Check(f format.Format, all bool) b32Check {
	s := f.Specials()
	return b32Check{
		all: all, p: f.Precision(), emin: f.Emin(),
		maxMag: math.Float32bits(float32(f.MaxFinite())),
		nan:    s.HasNaN(), inf: s.HasInf(), neg0: s.HasNegativeZero(),
		unsigned: s == format.Unsigned,
	}
}

func (c *b32Check) ok(x uint32) bool {
	if c.all {
		return true
	}
	mag := x &^ (1 << 31)
	switch {
	case mag > 0x7f800000:
		return c.nan
	case c.unsigned && (mag != x || mag == 0):
		return false
	case mag == 0x7f800000:
		return c.inf
	case mag == 0:
		return mag == x || c.neg0
	case mag > c.maxMag:
		return false
	}
	// The value is m·2^(low) with m odd; it lies on the format's grid if
	// its last bit is no finer than the grid at its leading bit.
	e, frac := int(mag>>23), mag&(1<<23-1)
	var lead, low int
	if e == 0 { // fp32 subnormal
		lead = bits.Len32(frac) - 1 - 149
		low = bits.TrailingZeros32(frac) - 149
	} else {
		lead = e - 127
		low = lead - 23 + bits.TrailingZeros32(frac|1<<23)
	}
	return low >= max(lead, c.emin)-c.p+1
}

// Eval splits its input into chunks of whole lines, which workers parse and
// compute in parallel; the chunks' results are written in input order.
const (
	evalChunkSize   = 256 << 10 // bytes read into a chunk at a time
	evalBatchCases  = 1024      // cases per Dots call
	evalBatchValues = 1 << 16   // values of a per Dots call, for long lines
)

type evalChunk struct {
	in   []byte // whole lines
	line int    // number of the first line
	out  []byte // the results
	err  error
	done chan struct{} // closed when out and err are set
}

// evalCases runs the cases of r through u and writes the results to w. It
// returns at the first bad line, having written the results before it; then
// a goroutine may still be blocked reading r.
func evalCases(u mma.Unit, r io.Reader, w io.Writer) error {
	workers := runtime.GOMAXPROCS(0)
	nchunks := 2*workers + 2
	free := make(chan *evalChunk, nchunks)
	work := make(chan *evalChunk, nchunks)
	order := make(chan *evalChunk, nchunks)
	quit := make(chan struct{})
	for range nchunks {
		free <- &evalChunk{in: make([]byte, 0, evalChunkSize)}
	}
	parser := newEvalParser(u)
	for range workers {
		go func() {
			p := parser // a copy: each worker has its own buffers
			for ch := range work {
				select {
				case <-quit:
				default:
					p.run(ch)
				}
				close(ch.done)
			}
		}()
	}

	var readErr error
	go func() {
		defer close(work)
		defer close(order)
		readErr = readChunks(r, free, quit, func(ch *evalChunk) {
			work <- ch
			order <- ch
		})
	}()

	for ch := range order {
		<-ch.done
		if _, err := w.Write(ch.out); err != nil {
			close(quit)
			return err
		}
		if ch.err != nil {
			close(quit)
			return ch.err
		}
		free <- ch
	}
	if readErr != nil {
		return fmt.Errorf("reading standard input: %v", readErr)
	}
	return nil
}

// readChunks fills chunks from free with whole lines of r and passes them to
// send. A chunk goes out as soon as a read completes a line, so that results
// come back line by line when the input does.
func readChunks(r io.Reader, free <-chan *evalChunk, quit <-chan struct{}, send func(*evalChunk)) error {
	var partial []byte // an incomplete line from the previous read
	line := 1
	for {
		var ch *evalChunk
		select {
		case ch = <-free:
		case <-quit:
			return nil
		}
		buf := append(ch.in[:0], partial...)
		var err error
		for {
			if cap(buf)-len(buf) < 4096 {
				buf = append(buf, make([]byte, cap(buf))...)[:len(buf)]
			}
			var n int
			n, err = r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if err != nil || bytes.IndexByte(buf[len(buf)-n:], '\n') >= 0 {
				break
			}
		}
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof {
			return err
		}
		partial = partial[:0]
		if !eof {
			i := bytes.LastIndexByte(buf, '\n') + 1
			partial = append(partial, buf[i:]...)
			buf = buf[:i]
		}
		ch.in, ch.line, ch.err, ch.done = buf, line, nil, make(chan struct{})
		line += bytes.Count(buf, []byte{'\n'})
		if len(buf) > 0 {
			send(ch)
		}
		if eof {
			return nil
		}
	}
}

// An evalParser parses and computes chunks for one worker.
type evalParser struct {
	u          mma.Unit
	in, out    b32Check
	inName     string
	outName    string
	la, lb     []float64 // the current line's a and b
	a, b, c, d []float64 // the batch: cases of one k
	k          int
}

func newEvalParser(u mma.Unit) evalParser {
	in, out := u.Input(), u.Output()
	return evalParser{
		u: u, inName: in.Name(), outName: out.Name(),
		in: newB32Check(in, isTF32(in)), out: newB32Check(out, false),
	}
}

// run computes the lines of ch into ch.out, stopping at the first bad line.
func (p *evalParser) run(ch *evalChunk) {
	ch.out = ch.out[:0]
	p.a, p.b, p.c = p.a[:0], p.b[:0], p.c[:0]
	data, line := ch.in, ch.line
	for ; len(data) > 0; line++ {
		var l []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			l, data = data, nil
		}
		i := skipBlanks(l, 0)
		if i == len(l) || l[i] == '#' {
			continue
		}
		c, err := p.parseLine(l[i:])
		if err == nil && len(p.c) > 0 && (len(p.la) != p.k || len(p.c) == evalBatchCases || len(p.a) > evalBatchValues) {
			err = p.flush(ch)
		}
		if err != nil {
			if ferr := p.flush(ch); ferr != nil {
				err = ferr
			}
			ch.err = fmt.Errorf("line %d: %w", line, err)
			return
		}
		p.k = len(p.la)
		p.a = append(p.a, p.la...)
		p.b = append(p.b, p.lb...)
		p.c = append(p.c, c)
	}
	if err := p.flush(ch); err != nil {
		ch.err = err
	}
}

// flush computes the batch and appends its results to ch.out.
func (p *evalParser) flush(ch *evalChunk) error {
	n := len(p.c)
	if n == 0 {
		return nil
	}
	p.d = append(p.d[:0], p.c...)
	err := p.u.Dots(p.k, p.a, p.b, p.c, p.d)
	p.a, p.b, p.c = p.a[:0], p.b[:0], p.c[:0]
	if err != nil {
		return err
	}
	out := ch.out
	for _, d := range p.d {
		x := uint32(0x7fffffff) // NVIDIA's canonical NaN
		if d == d {
			x = math.Float32bits(float32(d)) // exact: the output format is within fp32
		}
		out = append(out,
			hexDigits[x>>28], hexDigits[x>>24&15], hexDigits[x>>20&15], hexDigits[x>>16&15],
			hexDigits[x>>12&15], hexDigits[x>>8&15], hexDigits[x>>4&15], hexDigits[x&15], '\n')
	}
	ch.out = out
	return nil
}

const hexDigits = "0123456789abcdef"

// hexValue maps an ASCII hex digit to its value and anything else to 0xff.
var hexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i, c := range hexDigits {
		t[c] = byte(i)
		t[c-'a'+'A'] = byte(i)
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	return t
}()

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' }

func skipBlanks(l []byte, i int) int {
	for i < len(l) && isBlank(l[i]) {
		i++
	}
	return i
}

// parseLine reads "a_1 ... a_k ; b_1 ... b_k ; c" into p.la and p.lb and
// returns c.
func (p *evalParser) parseLine(l []byte) (c float64, err error) {
	p.la, p.lb = p.la[:0], p.lb[:0]
	part, nc := 0, 0 // part: 0 a, 1 b, 2 c
	for i := skipBlanks(l, 0); i < len(l); i = skipBlanks(l, i) {
		if l[i] == ';' {
			if part++; part > 2 {
				return 0, errors.New("more than two ';'; want a_1 ... a_k ; b_1 ... b_k ; c")
			}
			i++
			continue
		}
		x, n := parseHex32(l[i:])
		if n == 0 {
			return 0, fmt.Errorf("%q is not an fp32 bit pattern (8 hex digits such as 3f800000, optionally after 0x)", token(l[i:]))
		}
		i += n
		switch part {
		case 0, 1:
			if !p.in.ok(x) {
				name := [2]string{"a", "b"}[part]
				idx := len(p.la) + 1
				if part == 1 {
					idx = len(p.lb) + 1
				}
				return 0, valueError(name, idx, x, p.inName)
			}
			v := float64(math.Float32frombits(x))
			if part == 0 {
				p.la = append(p.la, v)
			} else {
				p.lb = append(p.lb, v)
			}
		default:
			if nc++; nc > 1 {
				return 0, fmt.Errorf("more than one value of c after the second ';'")
			}
			if !p.out.ok(x) {
				return 0, valueError("c", 0, x, p.outName)
			}
			c = float64(math.Float32frombits(x))
		}
	}
	switch {
	case part < 2:
		return 0, fmt.Errorf("found %d ';', want two: a_1 ... a_k ; b_1 ... b_k ; c", part)
	case nc == 0:
		return 0, errors.New("no value of c after the second ';'")
	case len(p.la) != len(p.lb):
		return 0, fmt.Errorf("%d values of a but %d of b", len(p.la), len(p.lb))
	}
	return c, nil
}

func valueError(name string, idx int, x uint32, f string) error {
	if idx > 0 {
		name += "_" + strconv.Itoa(idx)
	}
	v := strconv.FormatFloat(float64(math.Float32frombits(x)), 'g', -1, 32)
	return fmt.Errorf("%s = %08x (%s) is not a value of %s", name, x, v, f)
}

// token returns the text up to the next blank or ';'.
func token(l []byte) []byte {
	i := 0
	for i < len(l) && !isBlank(l[i]) && l[i] != ';' {
		i++
	}
	return l[:i]
}

// parseHex32 reads a token of 8 hex digits, optionally after 0x, that ends
// at a blank, a ';' or the end of l. It returns the bits and the token's
// length, 0 if there is no such token.
func parseHex32(l []byte) (uint32, int) {
	i := 0
	if len(l) >= 2 && l[0] == '0' && l[1]|0x20 == 'x' {
		i = 2
	}
	if len(l) < i+8 || len(l) > i+8 && !isBlank(l[i+8]) && l[i+8] != ';' {
		return 0, 0
	}
	h := l[i : i+8]
	d0, d1, d2, d3 := hexValue[h[0]], hexValue[h[1]], hexValue[h[2]], hexValue[h[3]]
	d4, d5, d6, d7 := hexValue[h[4]], hexValue[h[5]], hexValue[h[6]], hexValue[h[7]]
	if (d0|d1|d2|d3|d4|d5|d6|d7)&0xf0 != 0 {
		return 0, 0
	}
	x := uint32(d0)<<28 | uint32(d1)<<24 | uint32(d2)<<20 | uint32(d3)<<16 |
		uint32(d4)<<12 | uint32(d5)<<8 | uint32(d6)<<4 | uint32(d7)
	return x, i + 8
}
