// Command mwmm is the command line of the mwmm library: it rounds numbers
// to low-precision floating-point formats, simulates and probes tensor
// cores, multiplies matrices in multiword arithmetic, factors and solves
// linear systems with block FMAs, computes a-priori error bounds, and
// reproduces the papers' experiments.
//
// Usage:
//
//	mwmm <command> [flags] [arguments]
//
// Run "mwmm help" for the commands and "mwmm help <command>" for one
// command's flags and examples; docs/cli.md gives the words the commands
// share and the exit-status rule.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mwmm/mwmm/experiment/gpufig"
	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/dist"
	"github.com/mwmm/mwmm/gpu/gemm"
)

// A command is one subcommand of mwmm. To add one, write a file with a
// *command value and list it in init below.
type command struct {
	name     string // as typed: mwmm <name>
	summary  string // one line for the overview
	usage    string // the synopsis, e.g. "mwmm round --format NAME [VALUE...]"
	help     string // what the command does, in paragraphs
	examples string // example command lines, one per line, with optional "# comment" lines; -h shows the first three
	brief    string // the flags for -h, grouped: "Title:" lines, then "  name[,alias] one-line text" (see parseBrief)

	// flags returns a fresh flag set with the command's flags, for the help
	// text; nil when the command takes none.
	flags func() *flag.FlagSet

	// run executes the command on its arguments (those after the command's
	// name). It returns flag.ErrHelp when asked for help (-h), a usage error
	// (see usagef) for bad arguments, and any other error for failures.
	run func(args []string, stdout, stderr io.Writer, stdin io.Reader) error
}

// commands lists the subcommands in the order the overview shows them. It is
// filled in init because the help command refers to it.
var commands []*command

// init also registers the GPU's engine, units and experiments: the
// libraries register nothing by being imported.
func init() {
	gemm.Register()
	dist.Register()
	gpufig.Register()
	commands = []*command{formatsCmd, roundCmd, helpCmd, mmaCmd, probeCmd, gemmCmd, luCmd, solveCmd, boundCmd, experimentCmd, benchCmd, infoCmd, versionCmd}
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

func commandNames() string {
	var ns []string
	for _, c := range commands {
		ns = append(ns, c.name)
	}
	return strings.Join(ns, ", ")
}

// Exit statuses: the rule of docs/cli.md. 2 is for a command line that
// would fail the same way on every machine; what depends on the machine or
// the data (no GPU, a missing file, a bad line of input) is 1.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and failed, or this machine cannot run it (no GPU)
	exitUsage   = 2 // bad command line: unknown command, flag, name or value, or values that cannot go together
)

// noGPU says whether err is the absence of a GPU or of part of CUDA: a
// failure of this machine (exit 1), even where the command line named the
// GPU (--engine gpu, --unit gpu:fma).
func noGPU(err error) bool {
	for _, e := range []error{gpu.ErrNoDriver, gpu.ErrDriverTooOld, gpu.ErrNoDevice, gpu.ErrNoNVRTC, gpu.ErrNoCublasLt} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is mwmm with its arguments (without the program name) and streams; it
// returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		writeOverview(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		writeOverview(stdout)
		return exitOK
	case "-version", "--version":
		args = append([]string{"version"}, args[1:]...)
	}
	cmd := lookup(args[0])
	if cmd == nil {
		fmt.Fprintf(stderr, "mwmm: unknown command %q; commands: %s\nRun 'mwmm help' for usage.\n", args[0], commandNames())
		return exitUsage
	}
	err := cmd.run(args[1:], stdout, stderr, stdin)
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		writeShortHelp(stdout, cmd)
		return exitOK
	case errors.As(err, &ue) && !noGPU(err):
		hint := "mwmm help " + cmd.name
		if cmd == helpCmd {
			hint = "mwmm help"
		}
		fmt.Fprintf(stderr, "mwmm %s: %s\nRun '%s' for usage.\n", cmd.name, oneMessage(err), hint)
		return exitUsage
	case errors.Is(err, context.Canceled):
		// Ctrl-C, SIGTERM or SIGHUP: said in words, not Go's "context canceled".
		fmt.Fprintf(stderr, "mwmm %s: interrupted\n", cmd.name)
		return exitFailure
	default:
		fmt.Fprintf(stderr, "mwmm %s: %s\n", cmd.name, oneMessage(err))
		return exitFailure
	}
}

// pkgPrefix is a library package's prefix at the start of an error, after
// a ": " of its chain or after "(" (an error quoted in parentheses).
var pkgPrefix = regexp.MustCompile(`(^|: |\()(?:format|mma|multiword|bound|probe|experiment|npy|lu|solve|gpu|plotting): `)

// oneMessage is err's text without the package prefixes of its chain
// ("multiword: variant …: sum=v9: bound: unknown summation"): "mwmm NAME: "
// is a message's one prefix.
func oneMessage(err error) string {
	s := err.Error()
	for {
		t := pkgPrefix.ReplaceAllString(s, "$1")
		if t == s {
			return s
		}
		s = t
	}
}

// usageError marks an error in the command line, reported with exit status 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usagef returns a usage error.
func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// usage wraps err as a usage error.
func usage(err error) error {
	if err == nil {
		return nil
	}
	return &usageError{err}
}

// newFlagSet returns a flag set that reports errors to its caller and prints
// nothing itself.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parseFlags parses args with fs and returns the positional arguments. Flags
// and positional arguments may be mixed in any order, and an argument that
// reads as a number (-0.5, -inf, -0x1p-3) is positional, not a flag, unless it
// is the value of a flag that takes one (--seed 3). Everything after "--" is
// positional. It returns flag.ErrHelp for -h and a usage error for bad
// flags, in the project's words (setFlag): one flag, one value.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	given := map[string]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(positional, args[i+1:]...), nil
		case len(a) < 2 || a[0] != '-' || isNumber(a):
			positional = append(positional, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		switch {
		case f == nil && (name == "h" || name == "help"):
			return nil, flag.ErrHelp
		case f == nil:
			return nil, usagef("unknown flag --%s", name)
		case given[f.Name] && !isRepeatable(f):
			return nil, usagef("--%s is given twice: give it once", f.Name)
		case !hasValue && isBoolFlag(f):
			value = "true"
		case !hasValue && i+1 == len(args):
			return nil, usagef("--%s needs a value", f.Name)
		case !hasValue:
			i++
			value = args[i]
		}
		given[f.Name] = true
		if err := setFlag(fs, f, value); err != nil {
			return nil, err
		}
	}
	return positional, nil
}

// setFlag sets f to value. An integer flag takes a count written with an
// exponent (1e6, as the docs write 10^6) when it is an exact integer;
// a value it refuses is named with the kind of value it takes.
func setFlag(fs *flag.FlagSet, f *flag.Flag, value string) error {
	err := fs.Set(f.Name, value)
	if err == nil {
		return nil
	}
	var want string
	var v any
	if g, ok := f.Value.(flag.Getter); ok {
		v = g.Get()
	}
	switch v.(type) {
	case int, int64:
		want = "a whole number"
	case uint, uint64:
		want = "a whole number ≥ 0"
	case float64:
		want = "a number"
	case bool:
		want = "true or false"
	default: // the flag's own check: its message says what it wants
		return usagef("--%s %s: %v", f.Name, value, err)
	}
	if v, perr := parseNumber(value); perr == nil && v == math.Trunc(v) && math.Abs(v) < 1<<63 && value != strconv.FormatFloat(v, 'f', -1, 64) {
		if fs.Set(f.Name, strconv.FormatFloat(v, 'f', -1, 64)) == nil {
			return nil
		}
	}
	return usagef("--%s %s: want %s", f.Name, value, want)
}

// A repeatable flag value takes several values of different meanings and
// refuses in its Set a meaning given twice (gemm's -b: B's file and the
// FABsum block).
type repeatable interface{ repeatable() }

func isRepeatable(f *flag.Flag) bool {
	_, ok := f.Value.(repeatable)
	return ok
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func isNumber(s string) bool {
	_, err := parseNumber(s)
	return err == nil
}

// parseNumber reads a value as strconv.ParseFloat does (decimal, hex float,
// inf, nan); a decimal beyond float64's range reads as ±Inf or ±0.
func parseNumber(s string) (float64, error) {
	if t := strings.TrimLeft(s, "+-"); len(s)-len(t) == 1 && strings.EqualFold(t, "nan") {
		if s[0] == '-' { // ParseFloat takes no sign on NaN
			return math.Copysign(math.NaN(), -1), nil
		}
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && errors.Is(err, strconv.ErrRange) {
		err = nil
	}
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v, nil
}

const overviewText = `mwmm simulates and explains low-precision matrix arithmetic. It rounds
numbers to any binary floating-point format (fp64 down to the 4-bit e2m1,
the OCP fp8/fp6/fp4 formats, IEEE P3109 and custom formats) in every
rounding mode; models tensor cores (V100, T4, A100, H100 and a generic
block FMA) bit for bit and probes a unit, model or GPU, for its numerical
features; multiplies matrices in multiword arithmetic (double-fp16,
triple-bf16, 3xTF32, fp8 with scaling; FABsum) on the CPU models or an
NVIDIA GPU; factors and solves linear systems with block-FMA LU and
GMRES-based iterative refinement; prints the papers' a-priori error
bounds; and reproduces the papers' figures and tables.

Usage:

  mwmm <command> [flags] [arguments]

Commands:

`

func writeOverview(w io.Writer) {
	io.WriteString(w, overviewText)
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	tw.Flush()
	io.WriteString(w, "\n'mwmm <command> -h' prints a command's flags and examples on a screen, 'mwmm help <command>'\n"+
		"its manual.\n"+
		"Exit status: 0 success; 1 the command ran and failed, or this machine cannot run it\n"+
		"(no GPU, a missing file, bad input data); 2 a bad command line, the same on every\n"+
		"machine. docs/cli.md lists the words the commands share.\n")
}

var helpCmd = &command{
	name:    "help",
	summary: "show help for mwmm or one of its commands",
	usage:   "mwmm help [COMMAND]",
	help: `
Help prints the list of commands, or with a COMMAND, its manual: what the
command does, its flags in full with their defaults, and examples.
"mwmm COMMAND -h" prints a synopsis that fits a screen: the usage, the
flags grouped by purpose on one line each, and three examples.`,
	examples: `
mwmm help
mwmm help round`,
	run: runHelp,
}

func runHelp(args []string, stdout, stderr io.Writer, stdin io.Reader) error {
	fs := newFlagSet("help")
	args, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch len(args) {
	case 0:
		writeOverview(stdout)
		return nil
	case 1:
		c := lookup(args[0])
		if c == nil {
			return usagef("unknown command %q; commands: %s", args[0], commandNames())
		}
		writeHelp(stdout, c)
		return nil
	}
	return usagef("help takes one command name, got %d arguments", len(args))
}

// plural is "the e4m3 word" for 1 and "the 2 fp16 words" for more.
func plural(n int, noun string) string {
	if n == 1 {
		return "the " + noun
	}
	return fmt.Sprintf("the %d %ss", n, noun)
}

// count is "1 row" for 1 and "4 rows" otherwise.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if stem, ok := strings.CutSuffix(noun, "y"); ok && !strings.ContainsAny(stem[len(stem)-1:], "aeiou") {
		return fmt.Sprintf("%d %sies", n, stem) // entry, entries
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
