package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mwmm/mwmm/format"
)

var formatsCmd = &command{
	name:    "formats",
	summary: "list the floating-point formats and their parameters",
	usage:   "mwmm formats [--json] [NAME...]",
	help: `
Formats prints a table of the built-in floating-point formats, or of the
formats NAME... (any name that --format accepts, such as p3109-k8p2 or
custom:p=5,emin=-6,emax=7). For each format it shows:

  bits           storage width ("-" when the parameters fit no encoding)
  p              precision: significand bits, the implicit bit included
  emin, emax     exponents of the smallest normal and of the largest binade
  max finite     the largest finite value
  min normal     2^emin
  min subnormal  2^(emin-p+1), or "-" when the format has no subnormals
  u              the unit roundoff 2^-p, the relative error bound of round
                 to nearest
  specials       which codes are Inf and NaN, and so what overflow gives

Powers of two are written 2^k; --json prints every value as a number.
Format names are case-insensitive.`,
	examples: `
mwmm formats
mwmm formats --json
mwmm formats p3109-k8p2 p3109-k8p2-finite custom:p=5,emin=-6,emax=7`,
	brief: `
Output:
  json  print the formats as a JSON array instead of a table
`,
	flags: func() *flag.FlagSet { fs, _ := formatsFlags(); return fs },
	run:   runFormats,
}

func formatsFlags() (fs *flag.FlagSet, asJSON *bool) {
	fs = newFlagSet("formats")
	asJSON = fs.Bool("json", false, "print the formats as a JSON array instead of a table")
	return fs, asJSON
}

func runFormats(args []string, stdout, stderr io.Writer, stdin io.Reader) error {
	fs, asJSON := formatsFlags()
	names, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	fmts := format.Builtin()
	if len(names) > 0 {
		fmts = nil
		for _, n := range names {
			f, err := format.Parse(n)
			if err != nil {
				return usage(err)
			}
			fmts = append(fmts, f)
		}
	}
	aliases := aliasesByFormat()
	if *asJSON {
		return writeFormatsJSON(stdout, fmts, aliases)
	}
	tw := tabwriter.NewWriter(stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "name\tbits\tp\temin\temax\tmax finite\tmin normal\tmin subnormal\tu\tspecials")
	for _, f := range fmts {
		bits, sub := "-", "-"
		if f.Bits() > 0 {
			bits = strconv.Itoa(f.Bits())
		}
		if f.MinSubnormal() > 0 {
			sub = pow2(f.MinSubnormal())
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n",
			f.Name(), bits, f.Precision(), f.Emin(), f.Emax(), num(f.MaxFinite()),
			pow2(f.MinNormal()), sub, pow2(f.UnitRoundoff()), f.Specials())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(names) > 0 {
		return nil
	}
	_, err = io.WriteString(stdout, formatsFooter(aliases))
	return err
}

// num writes x in the shortest decimal that reads back as x.
func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// pow2 writes a power of two as 2^k, anything else as num does.
func pow2(x float64) string {
	if frac, exp := math.Frexp(x); frac == 0.5 {
		return "2^" + strconv.Itoa(exp-1)
	}
	return num(x)
}

// aliasesByFormat maps a built-in format's name to the other names that
// format.Parse accepts for it.
func aliasesByFormat() map[string][]string {
	builtin := map[string]bool{}
	for _, f := range format.Builtin() {
		builtin[f.Name()] = true
	}
	m := map[string][]string{}
	for _, n := range format.Names() {
		if builtin[n] || strings.ContainsAny(n, "[:") {
			continue // a canonical name or a pattern such as custom:...
		}
		if f, err := format.Parse(n); err == nil {
			m[f.Name()] = append(m[f.Name()], n)
		}
	}
	return m
}

func formatsFooter(aliases map[string][]string) string {
	var b strings.Builder
	b.WriteString(`
Specials: ieee = ±Inf and NaN, overflow gives ±Inf; nan = NaN but no Inf,
overflow gives NaN; none = no Inf or NaN, overflow saturates to ±max finite;
p3109-extended = one NaN, ±Inf, no -0; p3109-finite = one NaN, no Inf, no -0,
overflow gives NaN. The modes that round toward zero (rz, ro; ru below zero,
rd above) turn a finite overflow into ±max finite in every format.

Also accepted: any IEEE P3109 binary format p3109-kKpP or p3109-kKpP-finite
(1 <= P < K <= 16), e.g. p3109-k6p3; custom formats
custom:p=P,emin=E,emax=M[,subnormals=off][,specials=ieee|nan|none|p3109-extended|p3109-finite|unsigned];
and the suffixes +ftz (no subnormals) and +sat (saturating), e.g. e4m3+sat.
Names are case-insensitive.
Aliases:`)
	for _, f := range format.Builtin() {
		if as := aliases[f.Name()]; len(as) > 0 {
			fmt.Fprintf(&b, " %s = %s;", f.Name(), strings.Join(as, ", "))
		}
	}
	s := strings.TrimSuffix(b.String(), ";")
	return wrap(s, 78) + "\n"
}

// wrap breaks the lines of s longer than width at spaces.
func wrap(s string, width int) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		for len(line) > width {
			i := strings.LastIndexByte(line[:width+1], ' ')
			if i <= 0 {
				break
			}
			out = append(out, line[:i])
			line = line[i+1:]
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

type formatJSON struct {
	Name         string   `json:"name"`
	Aliases      []string `json:"aliases,omitempty"`
	Bits         int      `json:"bits"`
	P            int      `json:"p"`
	Emin         int      `json:"emin"`
	Emax         int      `json:"emax"`
	MaxFinite    float64  `json:"max_finite"`
	MinNormal    float64  `json:"min_normal"`
	MinSubnormal *float64 `json:"min_subnormal"` // null when there are no subnormals
	UnitRoundoff float64  `json:"unit_roundoff"`
	Specials     string   `json:"specials"`
	Subnormals   bool     `json:"subnormals"`
	Saturates    bool     `json:"saturates"`
	HasInf       bool     `json:"has_inf"`
	HasNaN       bool     `json:"has_nan"`
	HasNegZero   bool     `json:"has_negative_zero"`
}

func writeFormatsJSON(w io.Writer, fmts []format.Format, aliases map[string][]string) error {
	out := make([]formatJSON, 0, len(fmts))
	for _, f := range fmts {
		j := formatJSON{
			Name: f.Name(), Aliases: aliases[f.Name()], Bits: f.Bits(), P: f.Precision(),
			Emin: f.Emin(), Emax: f.Emax(), MaxFinite: f.MaxFinite(), MinNormal: f.MinNormal(),
			UnitRoundoff: f.UnitRoundoff(), Specials: f.Specials().String(),
			Subnormals: f.Subnormals(), Saturates: f.Saturates(),
			HasInf: f.Specials().HasInf(), HasNaN: f.Specials().HasNaN(), HasNegZero: f.Specials().HasNegativeZero(),
		}
		if s := f.MinSubnormal(); s > 0 {
			j.MinSubnormal = &s
		}
		out = append(out, j)
	}
	return writeJSON(w, out)
}
