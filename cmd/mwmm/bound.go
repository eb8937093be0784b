package main

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/internal/jsonout"
	"github.com/mwmm/mwmm/lu"
)

var boundCmd = &command{
	name:    "bound",
	summary: "a-priori error bounds of multiword matrix multiplication, FABsum, narrow range, LU",
	usage: "mwmm bound --low FORMAT [--high FORMAT] [-p P] -n N [--all] [--fabsum v1|v2|pair [--block B]] [--prob]" +
		" [--split MODE] [--accmode MODE] [--json]\n" +
		"mwmm bound --table [--json]\n" +
		"mwmm bound --narrow --low FORMAT --high FORMAT [-p P] -n N [--theta T] [--json]\n" +
		"mwmm bound --lu -n N [--unit UNIT] [--nb NB] [--json]",
	help: `
Bound prints an a-priori error bound of multiword matrix multiplication:
how far the computed Ĉ can be from C = AB, from the formats, the number of
words p and the inner dimension n alone. A and B are split into p words of
the --low format, A = A_1 + ... + A_p up to u_low^p·|A|, and the products
A_i·B_j are computed by a block FMA (a tensor core) that accumulates in the
--high format (Algorithm 2.1 of Fasi, Higham, Lopez, Mary and Mikaitis,
"Matrix multiplication in multiword arithmetic: error analysis and
application to GPU tensor cores", SIAM J. Sci. Comput. 45(1), 2023,
https://hal.science/hal-03543925). The
bound is componentwise, |C − Ĉ| ≤ c·|A||B|: compare c with the
componentwise relative error max_ij |C − Ĉ|_ij / (|A||B|)_ij of an
experiment (eq. 3.1).

It evaluates the paper's full expressions, not only their first order:
eq. (2.7) for the p(p+1)/2 products with i+j ≤ p+1, or with --all eq. (2.5)
for all p² products. Each term is printed: the splitting (the words
represent A and B to u_low^p), the products left out, and the accumulation
of n products and of the p² products' sum, γ_k = k·u/(1 − k·u) for k
roundings. The dominant term is written as in Table 2.1, with n as a
symbol: one fp16 word gives 2 × 2^-11 + n × 2^-24 and two give n × 2^-24,
the bound of fp32 itself. More words pay only until u_low^p falls to a few
u_high; the splitting term is left out of the dominant term when
u_low^p ≤ 4·u_high, the paper's rule. A bound of +Inf means n·u_high ≥ 1:
the analysis then says nothing.

The unit roundoffs come from the formats and the rounding modes: u = 2^-p
for round to nearest, 2^(1-p) for the directed and stochastic modes.
--split is the rounding of the splitting into words (a variant's split=),
--accmode the rounding of the accumulation (a unit's accmode=; --mode-low
and --mode-high are older names of the two). NVIDIA's tensor cores
round toward zero (rz): that doubles u_high (2^-23 for fp32) and, for data
of one sign, makes the worst case the actual error, since every rounding
of a growing positive sum goes down.

--fabsum bounds FABsum (section 4.4), the paper's cure: the n products are
cut into blocks of b (--block or -b, default 256), each block summed by the unit, the
block sums added in the high precision (v1, to first order
(b + n/b)·u_high), in fp64 (v2, b·u_high + (n/b)·2^-53, plus one rounding
of the fp64 sum to the high precision) or into a pair (hi, lo) of the high
precision with Knuth's TwoSum (pair, b·u_high + (n/b)²·u_high², plus the
rounding of hi + lo: nearly v2's accuracy with only fp32 additions, which
GPUs run at full speed). A smaller b gives a smaller bound and a slower
product. A joint plan (the variant option joint=on, as in the -fabsum
variants: the P products of a block in one accumulator) has the FABsum
bound with b → P·b; 'mwmm gemm --check' prints the bound of a plan's own
schedule.

--prob replaces n, b and n/b by their square roots (section 4.3). That is
not a bound but the typical error when the rounding errors are independent
with mean zero: round to nearest usually behaves so and stochastic
rounding always does; round toward zero on data of one sign never does.

--table prints Table 2.1 of the paper (u_high = 2^-24: fp32, round to
nearest) with more rows: tf32 (double-tf32 is 3xTF32) and the 8-bit e4m3
and e5m2 with up to four words.

--narrow bounds the scaled algorithm of Mary and Mikaitis for narrow-range
formats such as fp8 ("Error analysis of matrix multiplication with narrow
range floating-point arithmetic", SIAM J. Sci. Comput., accepted 2025,
https://hal.science/hal-04671474; Part 4 of Mikaitis's PASC25 slides), normwise:
‖Ĉ − AB‖_∞ ≲ c·‖A‖_∞‖B‖_∞. The rows of A and columns of B are scaled by
powers of two to at most θ = min(f_max, √(F_max/n)) (or --theta), so that
neither the inputs nor a sum of n products overflows; the terms with g_min
and G_min, the largest errors of an underflow in the input and in the
accumulation format (f_min/2, or u·f_min with subnormals; twice that with
directed rounding), are the price of the narrow range. Add +ftz to a
format's name to turn its subnormals off.

--lu prints, for an n×n LU with block size --nb whose updates run on
--unit, the componentwise backward error bound |P·fl(A) − L̂Û| ≤ c·|L̂||Û|
of each factorization form of 'mwmm lu' (Blanchard, Higham, Lopez, Mary
and Pranesh, SIAM J. Sci. Comput. 2020, section 4: TC16 and TC32 block
FMAs, plain fp16, fp32 and fp64, a multiword update) and the condition
numbers up to which refinement in fp64 converges with u_f = c (Carson and
Higham 2018, constants omitted): κ·u_f < 1 for LU-IR and κ·u_f·2^-26.5 < 1
for GMRES-IR, whose analysis computes the preconditioned products
Û⁻¹L̂⁻¹A·v in u² = 2^-106; with them in fp64, as 'mwmm solve' does unless
--precond dd, the condition is about κ³·u_f²·2^-53 < 1 (Amestoy et al.,
SIAM J. Matrix Anal. Appl. 2024), the last column. Worst-case bounds are
pessimistic: 'mwmm experiment run gmres-ir' measures where each form
really stops.

--json prints the inputs and the result (terms, total, dominant term) as
JSON; an infinite value is written as the string "+Inf".`,
	examples: `
mwmm bound --low fp16 --high fp32 -p 2 -n 1e6
# the tensor cores round toward zero; FABsum-v2 brings the bound back down
mwmm bound --low fp16 -p 2 -n 1e6 --accmode rz --fabsum v2 --block 256
mwmm bound --table
mwmm bound --low fp16 -p 2 -n 1e6 --accmode rz
# the same in fp32 arithmetic: block sums added into a TwoSum pair
mwmm bound --low fp16 -p 2 -n 1e6 --accmode rz --fabsum pair -b 64
mwmm bound --low bf16 -p 3 -n 4096 --all
mwmm bound --low fp16 -p 2 -n 1e6 --prob
# the narrow-range slides' example: e4m3 inputs, fp16 accumulation, no subnormals
mwmm bound --narrow --low e4m3+ftz --high fp16+ftz -p 1 -n 4
mwmm bound --narrow --low e4m3+ftz --high fp16+ftz -p 1 -n 4 --theta 127
mwmm bound --low tf32 -p 2 -n 8192 --json
# LU with TC16, TC32, fp16, fp32 and multiword updates on the V100 model
mwmm bound --lu -n 1000 --unit v100`,
	brief: `
The product:
  low                the format of the words (the tensor core's input)
  high               the format the block FMA accumulates in
  p                  the number of words
  n                  the inner dimension of C = AB (1e6 and 0x1p20 are fine)
  all                all p² products, not only those with i+j ≤ p+1
  split,mode-low     how the words are split off: a rounding mode
  accmode,mode-high  the accumulation's rounding (rz on NVIDIA)
Summation:
  fabsum             plain (default), v1, v2 (block sums in fp64) or pair (TwoSum)
  block,b            the FABsum block size
  group              with --fabsum v2 or pair: add each G block sums first
  prob               the probabilistic bound (√n, √b, √(n/b): a heuristic)
Other bounds:
  table              print Table 2.1 of the multiword paper, with more rows
  narrow             the normwise bound of scaled narrow-range arithmetic
  theta              with --narrow: the scaling bound (default min(f_max, √(F_max/n)))
  lu                 the LU bounds of each factorization form, and the κ refinement takes
  unit               with --lu: the block FMA of tc16, tc32 and multiword forms
  nb                 with --lu: the LU's block size
Output:
  json               print the inputs and the result as JSON
`,
	flags: func() *flag.FlagSet { fs, _ := boundFlags(); return fs },
	run:   runBound,
}

// boundAliases are older flag names and their current ones (docs/cli.md).
var boundAliases = map[string]string{"mode-low": "split", "mode-high": "accmode", "b": "block"}

type boundOptions struct {
	low, high, modeLow, modeHigh string
	p                            int
	n, b, group, theta, fabsum   string
	all, prob, narrow, table     bool
	json                         bool
	lu                           bool
	unit                         string
	nb                           int
}

func boundFlags() (*flag.FlagSet, *boundOptions) {
	o := new(boundOptions)
	fs := newFlagSet("bound")
	fs.StringVar(&o.low, "low", "fp16", "the `FORMAT` of the words (the tensor core's input)")
	fs.StringVar(&o.high, "high", "fp32", "the `FORMAT` the block FMA accumulates in")
	fs.StringVar(&o.modeLow, "split", "rne", "the rounding `MODE` of the splitting into words (a variant's split=)")
	fs.StringVar(&o.modeHigh, "accmode", "rne", "the rounding `MODE` of the accumulation (a unit's accmode=; rz on NVIDIA tensor cores: u_high doubles)")
	fs.StringVar(&o.modeLow, "mode-low", "rne", "the same as --split (an older `MODE` spelling)")
	fs.StringVar(&o.modeHigh, "mode-high", "rne", "the same as --accmode (an older `MODE` spelling)")
	fs.IntVar(&o.p, "p", 2, "the number of words `P`")
	fs.StringVar(&o.n, "n", "", "the inner dimension `N` of C = AB (1e6 and 0x1p20 are fine)")
	fs.BoolVar(&o.all, "all", false, "compute all p² products (eq. 2.5), not only those with i+j ≤ p+1")
	fs.StringVar(&o.fabsum, "fabsum", "plain", "the `SUMMATION`: plain, v1 (block sums in the high precision), v2 (in fp64) or pair (in a TwoSum pair of the high precision)")
	fs.StringVar(&o.b, "block", "256", "the FABsum block `SIZE` (with --fabsum v1, v2 or pair; also -b SIZE)")
	fs.StringVar(&o.b, "b", "256", "the same as --block `SIZE`")
	fs.StringVar(&o.group, "group", "", "with --fabsum v2 or pair: add each `G` block sums in the high precision before one fp64 addition (pair: TwoSum) (the GPU kernels' group=G)")
	fs.BoolVar(&o.prob, "prob", false, "the probabilistic bound: n, b and n/b replaced by their square roots (a heuristic)")
	fs.BoolVar(&o.table, "table", false, "print Table 2.1 of the paper, with more rows")
	fs.BoolVar(&o.narrow, "narrow", false, "the normwise bound of the scaled narrow-range algorithm (Mary and Mikaitis)")
	fs.StringVar(&o.theta, "theta", "", "with --narrow: the scaling bound `T` (default min(f_max, √(F_max/n)))")
	fs.BoolVar(&o.lu, "lu", false, "the LU bounds of Blanchard et al. for each factorization form, and the κ up to which refinement converges")
	fs.StringVar(&o.unit, "unit", "v100", "with --lu: the block FMA `UNIT` of the tc16, tc32 and multiword forms")
	fs.IntVar(&o.nb, "nb", lu.DefaultNB, "with --lu: the block size `NB` of the LU")
	fs.BoolVar(&o.json, "json", false, "print the inputs and the result as JSON")
	return fs, o
}

// boundJSON is the output of 'mwmm bound --json' (without --table).
type boundJSON struct {
	Low         string             `json:"low"`
	ModeLow     string             `json:"mode_low"`
	High        string             `json:"high"`
	ModeHigh    string             `json:"mode_high"`
	Multiword   *bound.Multiword   `json:"multiword,omitempty"`
	NarrowRange *bound.NarrowRange `json:"narrow_range,omitempty"`
	Result      bound.Result       `json:"result"`
}

func runBound(args []string, stdout, stderr io.Writer, stdin io.Reader) error {
	fs, o := boundFlags()
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("bound takes no arguments (got %q); give n with -n", rest[0])
	}
	set, err := boundFlagsSet(fs)
	if err != nil {
		return err
	}
	modes := boundModes(o)
	m := modes[slices.IndexFunc(modes, func(m boundMode) bool { return m.on })]
	if err := m.check(set, modes); err != nil {
		return err
	}
	return m.run(stdout, o, set)
}

// A boundMode is one of bound's modes: the flag that chooses it, the
// flags it reads besides its own, and what it prints.
type boundMode struct {
	flag  string // "" for the multiword bound, the default
	on    bool   // chosen
	takes []string
	run   func(stdout io.Writer, o *boundOptions, set map[string]bool) error
}

// boundModes are bound's modes, the first one on chosen: --lu, --table
// or --narrow, or else the multiword bound.
func boundModes(o *boundOptions) []boundMode {
	inputs := []string{"low", "high", "split", "accmode", "p", "n", "json"}
	return []boundMode{
		{"lu", o.lu, []string{"n", "unit", "nb", "json"}, runLUBound},
		{"table", o.table, []string{"json"}, runTableBound},
		{"narrow", o.narrow, slices.Concat(inputs, []string{"theta"}), runNarrowBound},
		// The other modes' flags given as false (--lu=false) change nothing.
		{"", true, slices.Concat(inputs, []string{"all", "fabsum", "block", "group", "prob", "lu", "table", "narrow"}), runMultiwordBound},
	}
}

// check refuses the flags given that the mode does not read, naming the
// first in alphabetical order (and, for the multiword bound, the mode
// that reads it).
func (m boundMode) check(set map[string]bool, modes []boundMode) error {
	for _, name := range slices.Sorted(maps.Keys(set)) {
		if name == m.flag || slices.Contains(m.takes, name) {
			continue
		}
		if m.flag != "" {
			return usagef("--%s does not go with --%s", name, m.flag)
		}
		for _, other := range modes {
			if slices.Contains(other.takes, name) {
				return usagef("%s goes with --%s", dashed(name), other.flag)
			}
		}
	}
	return nil
}

// runTableBound is bound --table: Table 2.1, with more rows.
func runTableBound(stdout io.Writer, o *boundOptions, _ map[string]bool) error {
	rows := bound.Table21()
	if o.json {
		return writeJSON(stdout, rows)
	}
	return writeTable21(stdout, rows)
}

// boundFlagsSet returns the flags given, by their canonical names; a flag
// given under two of its spellings is a usage error.
func boundFlagsSet(fs *flag.FlagSet) (map[string]bool, error) {
	set := map[string]bool{}
	spelled := map[string]string{} // the canonical name's spelling given first
	var twice error
	fs.Visit(func(f *flag.Flag) {
		name := f.Name
		if c, ok := boundAliases[name]; ok {
			name = c
		}
		if set[name] && twice == nil {
			twice = usagef("%s and %s are one flag (docs/cli.md): give one", dashed(spelled[name]), dashed(f.Name))
		}
		set[name] = true
		spelled[name] = f.Name
	})
	return set, twice
}

// boundInputs are the formats, modes and n of a product's bound.
type boundInputs struct {
	low, high         format.Format
	modeLow, modeHigh format.Mode
	n                 float64
}

func (in boundInputs) json() boundJSON {
	return boundJSON{Low: in.low.Name(), ModeLow: in.modeLow.String(), High: in.high.Name(), ModeHigh: in.modeHigh.String()}
}

func parseBoundInputs(o *boundOptions, set map[string]bool) (in boundInputs, err error) {
	if in.low, err = format.Parse(o.low); err != nil {
		return in, usage(err)
	}
	if in.high, err = format.Parse(o.high); err != nil {
		return in, usage(err)
	}
	if in.modeLow, err = format.ParseMode(o.modeLow); err != nil {
		return in, usage(err)
	}
	if in.modeHigh, err = format.ParseMode(o.modeHigh); err != nil {
		return in, usage(err)
	}
	if o.p < 1 {
		return in, usagef("-p %d: the number of words must be at least 1", o.p)
	}
	if !set["n"] {
		return in, usagef("give the inner dimension with -n (e.g. -n 1e6)")
	}
	in.n, err = parseCount("-n", o.n)
	return in, err
}

// runNarrowBound is bound --narrow: Mary and Mikaitis's normwise bound.
func runNarrowBound(stdout io.Writer, o *boundOptions, set map[string]bool) error {
	in, err := parseBoundInputs(o, set)
	if err != nil {
		return err
	}
	low, high, modeLow, modeHigh, n := in.low, in.high, in.modeLow, in.modeHigh, in.n
	uLow, uHigh := bound.U(low, modeLow), bound.U(high, modeHigh)
	out := in.json()
	theta := bound.Theta(low.MaxFinite(), high.MaxFinite(), n)
	if set["theta"] {
		if theta, err = parseNumber(o.theta); err != nil {
			return usage(err)
		}
		if !(theta > 0) || math.IsInf(theta, 0) {
			return usagef("--theta %s: θ must be a finite number > 0", o.theta)
		}
	}
	// g_min and G_min are for round to nearest; a directed or
	// stochastic rounding may err by a whole spacing, twice as much,
	// as u does.
	nr := bound.NarrowRange{
		U: uLow, UHigh: uHigh, N: n, P: o.p, Theta: theta,
		FMax: low.MaxFinite(), FMaxHigh: high.MaxFinite(),
		GMin:     bound.GMin(low) * uLow / low.UnitRoundoff(),
		GMinHigh: bound.GMin(high) * uHigh / high.UnitRoundoff(),
	}
	r, err := nr.Bound()
	if err != nil && set["theta"] {
		// The library's condition, with the formats it is about.
		return usage(fmt.Errorf("--theta %s with %s inputs and %s accumulation: %w", o.theta, low.Name(), high.Name(), err))
	}
	if err != nil {
		return usage(err)
	}
	if o.json {
		out.NarrowRange, out.Result = &nr, r
		return writeJSON(stdout, out)
	}
	return writeNarrow(stdout, low, high, modeLow, modeHigh, nr, set["theta"], r)
}

// runMultiwordBound is bound's default: Theorem 2.1 of the multiword
// paper, with FABsum and the probabilistic forms.
func runMultiwordBound(stdout io.Writer, o *boundOptions, set map[string]bool) error {
	in, err := parseBoundInputs(o, set)
	if err != nil {
		return err
	}
	low, high, modeLow, modeHigh, n := in.low, in.high, in.modeLow, in.modeHigh, in.n
	uLow, uHigh := bound.U(low, modeLow), bound.U(high, modeHigh)
	out := in.json()
	sum, err := bound.ParseSummation(o.fabsum)
	if err != nil {
		return usage(err)
	}
	m := bound.Multiword{ULow: uLow, UHigh: uHigh, P: o.p, N: n, AllProducts: o.all, Sum: sum, Probabilistic: o.prob}
	if sum == bound.Plain {
		if set["block"] {
			return usagef("--block (-b) is FABsum's block size: it needs --fabsum v1, v2 or pair")
		}
	} else {
		if m.B, err = parseCount("--block", o.b); err != nil {
			return err
		}
		if m.B > n {
			return usagef("--block %s is larger than n = %s: a block holds at most n products", o.b, numText(n))
		}
	}
	if set["group"] {
		if sum != bound.FABsumV2 && sum != bound.FABsumPair {
			return usagef("--group goes with --fabsum v2 or pair")
		}
		if m.Group, err = parseCount("--group", o.group); err != nil {
			return err
		}
	}
	r, err := m.Bound()
	if err != nil {
		return usage(err)
	}
	if o.json {
		out.Multiword, out.Result = &m, r
		return writeJSON(stdout, out)
	}
	return writeMultiword(stdout, low, high, modeLow, modeHigh, m, r)
}

// parseCount reads a dimension or block size: a whole number ≥ 1, in any
// notation strconv.ParseFloat reads (1e6, 0x1p20).
func parseCount(flagName, s string) (float64, error) {
	x, err := parseNumber(s)
	if err != nil {
		return 0, usagef("%s %s", flagName, err)
	}
	if !(x >= 1) || math.IsInf(x, 0) || x != math.Trunc(x) {
		return 0, usagef("%s %s: need a whole number ≥ 1", flagName, s)
	}
	return x, nil
}

// writeJSON writes every --json output: NaN and ±Inf as "NaN", "+Inf" and
// "-Inf", which JSON numbers cannot hold.
func writeJSON(w io.Writer, v any) error { return jsonout.Encode(w, v) }

// pow2Text writes a unit roundoff as 2^e when it is a power of two.
func pow2Text(x float64) string {
	if fr, e := math.Frexp(x); fr == 0.5 {
		return "2^" + strconv.Itoa(e-1)
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// numText writes a count as an integer up to 10^15, else in %g.
func numText(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// valueText writes a bound's value in %.3g; +Inf with what it means.
func valueText(x float64) string {
	if math.IsInf(x, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

func writeMultiword(w io.Writer, low, high format.Format, modeLow, modeHigh format.Mode, m bound.Multiword, r bound.Result) error {
	products := m.P * (m.P + 1) / 2
	which := "i+j ≤ p+1"
	if m.AllProducts {
		products, which = m.P*m.P, "all"
	}
	var sum string
	switch m.Sum {
	case bound.Plain:
		sum = "plain: every product accumulated by the block FMA"
	case bound.FABsumV1:
		sum = fmt.Sprintf("FABsum-v1: blocks of b = %s products in the unit, block sums in %s (u_high)", numText(m.B), high.Name())
	case bound.FABsumV2:
		sum = fmt.Sprintf("FABsum-v2: blocks of b = %s products in the unit, block sums in fp64 (u_64 = 2^-53)", numText(m.B))
		if m.Group > 1 {
			sum = fmt.Sprintf("FABsum-v2: blocks of b = %s products in the unit, groups of %s block sums in %s (u_high), group sums in fp64 (u_64 = 2^-53)",
				numText(m.B), numText(m.Group), high.Name())
		}
	case bound.FABsumPair:
		sum = fmt.Sprintf("FABsum-pair: blocks of b = %s products in the unit, block sums added into a pair (hi, lo) of %s by TwoSum (u_high)", numText(m.B), high.Name())
		if m.Group > 1 {
			sum = fmt.Sprintf("FABsum-pair: blocks of b = %s products in the unit, groups of %s block sums in %s (u_high), group sums added into a pair (hi, lo) by TwoSum", numText(m.B), numText(m.Group), high.Name())
		}
	default:
		sum = m.Sum.String()
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "words\t%s, u_low = %s (%s); p = %d, %s A_i·B_j (%s)\n", low.Name(), pow2Text(m.ULow), modeLow, m.P, productsText(products), which)
	fmt.Fprintf(tw, "accumulation\t%s, u_high = %s (%s)\n", high.Name(), pow2Text(m.UHigh), modeHigh)
	fmt.Fprintf(tw, "summation\t%s\n", sum)
	fmt.Fprintf(tw, "n\t%s\n", numText(m.N))
	tw.Flush()

	kind, eq := "bound", "eq. 2.7"
	if m.AllProducts {
		eq = "eq. 2.5"
	}
	if m.Probabilistic {
		kind = "probabilistic estimate (n, b, n/b → their square roots; section 4.3)"
	}
	fmt.Fprintf(w, "\ncomponentwise %s: |C − Ĉ| ≤ c·|A||B| (%s)\n", kind, eq)
	writeTerms(w, r)
	if math.IsInf(r.Total, 1) {
		fmt.Fprintln(w, "(n·u_high ≥ 1: the bound says nothing)")
	}
	fmt.Fprintf(w, "dominant term (Table 2.1): %s\n", r.Dominant)
	if m.Probabilistic && m.UHigh != high.UnitRoundoff() {
		fmt.Fprintf(w, "note: the accumulation rounds with %s; with data of one sign its errors do not have mean zero, and the worst case, not this estimate, is what to expect\n", modeHigh)
	}
	return nil
}

func productsText(k int) string {
	if k == 1 {
		return "1 product"
	}
	return strconv.Itoa(k) + " products"
}

func writeTerms(w io.Writer, r bound.Result) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  TERM\tFORMULA\tVALUE")
	for _, t := range r.Terms {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", t.Name, t.Formula, valueText(t.Value))
	}
	fmt.Fprintf(tw, "  total\tc\t%s\n", valueText(r.Total))
	tw.Flush()
}

func writeNarrow(w io.Writer, low, high format.Format, modeLow, modeHigh format.Mode, nr bound.NarrowRange, thetaGiven bool, r bound.Result) error {
	theta := fmt.Sprintf("min(f_max, √(F_max/n)) = min(%s, √(%s/%s))", numText(low.MaxFinite()), numText(high.MaxFinite()), numText(nr.N))
	if thetaGiven {
		theta = "given"
	}
	sub := func(f format.Format) string {
		if f.Subnormals() {
			return "with subnormals: u·f_min"
		}
		return "no subnormals: f_min/2"
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "input\t%s, u = %s (%s), g_min = %s (%s); p = %d, %s\n",
		low.Name(), pow2Text(nr.U), modeLow, pow2Text(nr.GMin), sub(low), nr.P, productsText(nr.P*(nr.P+1)/2))
	fmt.Fprintf(tw, "accumulation\t%s, U = %s (%s), G_min = %s (%s)\n",
		high.Name(), pow2Text(nr.UHigh), modeHigh, pow2Text(nr.GMinHigh), sub(high))
	fmt.Fprintf(tw, "n\t%s\n", numText(nr.N))
	fmt.Fprintf(tw, "θ\t%s (%s)\n", strconv.FormatFloat(nr.Theta, 'g', 6, 64), theta)
	tw.Flush()
	fmt.Fprintln(w, "\nnormwise bound: ‖Ĉ − AB‖_∞ ≲ c·‖A‖_∞‖B‖_∞ (narrow-range slides, Part 4)")
	writeTerms(w, r)
	fmt.Fprintf(w, "dominant terms: %s\n", r.Dominant)
	return nil
}

func writeTable21(w io.Writer, rows []bound.Table21Row) error {
	fmt.Fprintln(w, "Table 2.1 of Fasi et al., \"Matrix multiplication in multiword arithmetic\", 2023,")
	fmt.Fprintln(w, "https://hal.science/hal-03543925: the dominant term of the bound (2.8);")
	fmt.Fprintln(w, "the rows after triple-bf16 are added")
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "u_high\tu_low\tsplit\tname\tproducts\tbound")
	var lastHigh, lastLow float64
	for _, r := range rows {
		uh, ul := "", ""
		if r.UHigh != lastHigh {
			uh = pow2Text(r.UHigh) + " (fp32)"
		}
		if r.ULow != lastLow || r.P == 1 {
			ul = pow2Text(r.ULow) + " (" + r.Name + ")"
		}
		lastHigh, lastLow = r.UHigh, r.ULow
		fmt.Fprintf(tw, "%s\t%s\tp = %d\t%s\t%d\t%s\n", uh, ul, r.P, r.Name, r.Products, r.Dominant)
	}
	return tw.Flush()
}

// luBoundRow is one form of 'mwmm bound --lu'.
type luBoundRow struct {
	Form       string       `json:"form"`
	Storage    string       `json:"storage"`
	Bound      bound.Result `json:"bound"`
	KappaIR    float64      `json:"max_kappa_ir"`
	KappaGMRES float64      `json:"max_kappa_gmres_ir"`
	// KappaGMRES64 is GMRES-IR's limit with the preconditioned products in
	// fp64 (mwmm solve's default), not in u².
	KappaGMRES64 float64 `json:"max_kappa_gmres_ir_fp64_products"`
}

// runLUBound is bound --lu: the LU bounds of each factorization form and
// the κ up to which refinement converges.
func runLUBound(stdout io.Writer, o *boundOptions, set map[string]bool) error {
	if !set["n"] {
		return usagef("give the order of the matrix with -n (e.g. -n 1000)")
	}
	n, err := parseCount("-n", o.n)
	if err != nil {
		return err
	}
	if n > 1<<40 {
		return usagef("-n %s is too large", o.n)
	}
	if o.nb < 1 {
		return usagef("--nb %d: the block size must be at least 1", o.nb)
	}
	var rows []luBoundRow
	for _, name := range []string{"fp16", "tc16", "tc32", "double-fp16-fabsum", "fp32", "fp64"} {
		f, err := lu.ParseForm(name, o.unit, "fp16")
		if err != nil {
			return usage(err)
		}
		r, err := f.Bound(int(n), o.nb)
		if err != nil {
			return err
		}
		ref := bound.Refinement{UF: r.Total, U: 0x1p-53, UR: 0x1p-53}
		ref64 := ref
		ref64.UP = 0x1p-53
		rows = append(rows, luBoundRow{Form: name, Storage: f.Storage.Name(), Bound: r, KappaIR: ref.MaxKappaIR(),
			KappaGMRES: ref.MaxKappaGMRES(), KappaGMRES64: ref64.MaxKappaGMRES()})
	}
	if o.json {
		return writeJSON(stdout, struct {
			N    float64      `json:"n"`
			NB   int          `json:"nb"`
			Unit string       `json:"unit"`
			Rows []luBoundRow `json:"forms"`
		}{n, o.nb, o.unit, rows})
	}
	fmt.Fprintf(stdout, "LU of order n = %s, block size %d, block FMA %s: |P·fl(A) − L̂Û| ≤ c·|L̂||Û|\n\n", numText(n), o.nb, o.unit)
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "FORM\tSTORAGE\tc\tFIRST ORDER\tLU-IR TO κ\tGMRES-IR TO κ\t(FP64 PRODUCTS)\n")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t%.3g\t%s\t%.2g\t%.2g\t%.2g\n", r.Form, r.Storage, r.Bound.Total, r.Bound.Dominant, r.KappaIR, r.KappaGMRES, r.KappaGMRES64)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\nκ limits with u_f = c, working precision and residuals fp64, constants omitted: LU-IR κ·u_f < 1; GMRES-IR")
	fmt.Fprintln(stdout, "κ·u_f·u^½ < 1 with the preconditioned products in u² (Carson and Higham 2018), about κ³·u_f²·u < 1 with")
	fmt.Fprintln(stdout, "them in fp64 as 'mwmm solve' computes them by default (Amestoy et al. 2024).")
	return nil
}

// dashed is a flag's name as the help writes it: -b, --block.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}
