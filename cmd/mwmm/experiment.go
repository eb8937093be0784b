package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/mwmm/mwmm/experiment"
	"github.com/mwmm/mwmm/multiword"
)

var experimentCmd = &command{
	name:    "experiment",
	summary: "reproduce the papers' figures and tables: CSV, PNG, SVG and a table",
	usage: "mwmm experiment list [--json]\n" +
		"mwmm experiment show NAME\n" +
		"mwmm experiment run NAME|all [--quick] [--out DIR] [--seed S] [--engine E | --unit U] [--workers N]",
	help: `
Experiment reproduces the figures and tables of the papers that
docs/experiments.md lists, one command each. 'list' names them with the
figure each reproduces; 'show NAME' says what the paper's version shows,
exactly what is computed and which choices are ours, and cites the paper
(authors, title, venue, year, link), so you know what to compare. 'run
NAME' computes it and writes NAME.csv, NAME.png and NAME.svg into --out,
then prints a compact table (n down, the curves across). 'run all' runs
every experiment this machine can run.

Rows reach the CSV as points finish, and points run in parallel on all
cores (--workers). A progress bar shows on stderr when it is a terminal and
the run lasts over a second. Ctrl-C stops the run: the rows already
computed stay in the CSV (rewritten in sweep order) and are plotted, and
the command exits with status 1; a closed terminal (SIGHUP) and SIGTERM do
the same. Nothing replaces a result with less: an engine or option the
experiment refuses is reported before any file is touched, and the rows of
an interrupted or failed run go to NAME.partial.csv when NAME.csv exists.

--quick runs a reduced sweep (smaller and fewer sizes, the same curves):
each CPU experiment in well under 30 s on two cores. Without it, fig3.1
goes to n = 2^20 through the bit-faithful block FMA model and takes
minutes.

--engine replaces an experiment's default engine (see 'show'): for
example 'reference' (fast, ideal rounding), 'model:a100' to see another
tensor core, or gpu (an NVIDIA GPU: see mwmm info). Experiments that change a unit's
rounding (fig4.3) need a model:<unit> engine; those with fixed arithmetic
(table2.1, the GPU figures) take none, and refuse one ('run all' skips
them). --seed changes the random
matrices; every curve of one panel at one n multiplies the same matrices.

Plots use log-log axes; an error of exactly 0 is drawn at the bottom of
the axis and the axis label says so.`,
	examples: `mwmm experiment list
mwmm experiment show fig3.1
# the main showcase: RZ against RN tensor cores, in seconds
mwmm experiment run fig4.3 --quick --out out
# the full figure (minutes)
mwmm experiment run fig3.1 --out out
mwmm experiment run all --quick --out out`,
	brief: `
Running (run):
  quick    the reduced sweep: each CPU experiment in under 30 s on 2 cores
  out      the folder for NAME.csv, .png and .svg (created if missing)
  seed     seed of the random matrices
  engine   replaces the experiment's default: reference, model:UNIT or gpu
  unit     the same as --engine model:UNIT
  workers  points computed at once (0: one per core)
Listing (list):
  json     print the registry as JSON
`,
	flags: func() *flag.FlagSet { return experimentFlags(new(experimentOptions)) },
	run:   runExperiment,
}

type experimentOptions struct {
	quick, json bool
	out, engine string
	unit        string
	seed        uint64
	workers     int
}

func experimentFlags(o *experimentOptions) *flag.FlagSet {
	fs := newFlagSet("experiment")
	fs.BoolVar(&o.quick, "quick", false, "run the reduced sweep (each CPU experiment in under 30 s on 2 cores)")
	fs.StringVar(&o.out, "out", "out", "`FOLDER` for NAME.csv, NAME.png and NAME.svg (created if missing)")
	fs.Uint64Var(&o.seed, "seed", 1, "`SEED` of the random matrices")
	fs.StringVar(&o.engine, "engine", "", "the `ENGINE` replacing the experiment's default: reference, model:UNIT (e.g. model:a100) or gpu")
	fs.StringVar(&o.unit, "unit", "", "the same as --engine model:`UNIT`")
	fs.IntVar(&o.workers, "workers", 0, "`N` points computed at once (0: one per core)")
	fs.BoolVar(&o.json, "json", false, "list: print the registry as JSON")
	return fs
}

func runExperiment(args []string, stdout, stderr io.Writer, _ io.Reader) error {
	var o experimentOptions
	fs := experimentFlags(&o)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if flagSet(fs, "unit") {
		if flagSet(fs, "engine") {
			return usagef("--unit %s is --engine model:%s: give one of --unit and --engine", o.unit, o.unit)
		}
		o.engine = "model:" + o.unit
	}
	if len(pos) == 0 {
		return usagef("want a verb: list, show NAME or run NAME")
	}
	switch verb, rest := pos[0], pos[1:]; verb {
	case "list":
		if len(rest) > 0 {
			return usagef("list takes no arguments, got %q", rest)
		}
		return listExperiments(stdout, o.json)
	case "show":
		if len(rest) != 1 {
			return usagef("show takes one experiment name (see 'mwmm experiment list')")
		}
		e, err := experiment.Lookup(rest[0])
		if err != nil {
			return usage(err)
		}
		showExperiment(stdout, e)
		return nil
	case "run":
		if len(rest) != 1 {
			return usagef("run takes one experiment name or 'all' (see 'mwmm experiment list')")
		}
		return runExperiments(&o, rest[0], stdout, stderr)
	default:
		return usagef("unknown verb %q: want list, show or run", verb)
	}
}

// runExperiments runs the experiment named, or all of them, into --out.
func runExperiments(o *experimentOptions, name string, stdout, stderr io.Writer) error {
	all := name == "all"
	es := experiment.List()
	if !all {
		e, err := experiment.Lookup(name)
		if err != nil {
			return usage(err)
		}
		es = []*experiment.Experiment{e}
	}
	if o.workers < 0 {
		return usagef("--workers %d: want 0 (one per core) or more", o.workers)
	}
	if o.out == "" {
		return usagef("--out \"\": want a folder for the files (--out . for this one)")
	}
	if len(es) == 1 {
		if err := experiment.CheckEngine(es[0], o.engine); err != nil {
			return usage(err)
		}
	} else if o.engine != "" { // an unknown engine is refused before anything runs
		if _, err := multiword.Open(o.engine); err != nil {
			return usage(fmt.Errorf("--engine: %w", err))
		}
	}
	// SIGHUP (the terminal closed) ends a run as Ctrl-C does: rows kept, CSV sorted, plots drawn.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	cfg := experiment.Config{Quick: o.quick, Seed: o.seed, Engine: o.engine, Workers: o.workers}
	for i, e := range es {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		if err := runOne(ctx, e, cfg, o.out, stdout, stderr, all); err != nil {
			return err
		}
	}
	return nil
}

func runOne(ctx context.Context, e *experiment.Experiment, cfg experiment.Config, out string, stdout, stderr io.Writer, all bool) error {
	fmt.Fprintf(stdout, "%s: %s\n%s\n\n", e.Name, e.Title, e.Cites)
	if err := experiment.CheckEngine(e, cfg.Engine); err != nil && all { // 'all' runs what takes the engine
		fmt.Fprintf(stdout, "skipped: %v\n", err)
		return nil
	}
	res, err := experiment.Run(ctx, e, cfg, out, stderr)
	if res == nil {
		if all && e.Requires != "" {
			fmt.Fprintf(stdout, "skipped: %v\n", err)
			return nil
		}
		var ce *experiment.ConfigError
		if errors.As(err, &ce) {
			return usage(err)
		}
		return err
	}
	e.PrintTable(stdout, res.Rows)
	fmt.Fprintf(stdout, "\n%d of %d points in %s", res.Done, res.Points, res.Elapsed.Round(10*time.Millisecond))
	if len(res.Files) > 0 {
		fmt.Fprintf(stdout, "; wrote %s", strings.Join(res.Files, ", "))
	} else {
		fmt.Fprint(stdout, "; wrote no files (no rows)")
	}
	fmt.Fprintln(stdout)
	kept := "no rows were computed, no file was written"
	if len(res.Files) > 0 {
		kept = "the rows computed are in " + res.Files[0]
		if strings.HasSuffix(res.Files[0], ".partial.csv") {
			kept += " (the earlier results are kept)"
		}
	}
	if res.Interrupted {
		return fmt.Errorf("interrupted after %d of %d points; %s", res.Done, res.Points, kept)
	}
	if err != nil && errors.Is(err, context.Canceled) {
		return fmt.Errorf("interrupted")
	}
	if err != nil && res.Done < res.Points {
		return fmt.Errorf("%w; %s", err, kept)
	}
	return err
}

func listExperiments(w io.Writer, asJSON bool) error {
	es := experiment.List()
	if asJSON {
		type item struct {
			Name     string `json:"name"`
			Title    string `json:"title"`
			Cites    string `json:"cites"`
			Shows    string `json:"shows"`
			Setup    string `json:"setup"`
			Requires string `json:"requires,omitempty"`
		}
		var items []item
		for _, e := range es {
			items = append(items, item{e.Name, e.Title, e.Cites, e.Shows, e.Setup, e.Requires})
		}
		return writeJSON(w, items)
	}
	// Three columns in helpWidth, WHAT wrapped in its own.
	rows := [][2]string{{"NAME", "REPRODUCES"}}
	whats := []string{"WHAT"}
	w1, w2 := 0, 0
	for _, e := range es {
		what := e.Title
		if e.Requires != "" { // first, where wrapping cannot split it
			what = "[needs " + e.Requires + "] " + what
		}
		rows = append(rows, [2]string{e.Name, shortCite(e.Cites)})
		whats = append(whats, what)
	}
	for _, r := range rows {
		w1, w2 = max(w1, utf8.RuneCountInString(r[0])), max(w2, utf8.RuneCountInString(r[1]))
	}
	w2 = min(w2, 30) // wider citations wrap
	var b strings.Builder
	for i, r := range rows {
		cites, what := wrapLine(r[1], w2), wrapLine(whats[i], helpWidth-1-w1-w2-4)
		for j := range max(len(cites), len(what)) {
			name, c, wh := "", "", ""
			if j == 0 {
				name = r[0]
			}
			if j < len(cites) {
				c = cites[j]
			}
			if j < len(what) {
				wh = what[j]
			}
			line := fmt.Sprintf("%-*s  %s%*s  %s", w1, name, c, w2-utf8.RuneCountInString(c), "", wh)
			b.WriteString(strings.TrimRight(line, " ") + "\n")
		}
	}
	b.WriteString("\n'mwmm experiment show NAME' cites the paper in full and says what is computed.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

var citeYear = regexp.MustCompile(`\b(19|20)\d\d\b`)

// shortCite is the part of the paper an experiment reproduces and the
// paper's first author and year, "Fig. 4.3, Fasi 2023", from a citation
// "Figure 4.3 of Fasi, …, 2023, https://…" or "Blanchard, …, 2020,
// https://…, sections 3 and 6; …".
func shortCite(c string) string {
	part, paper := "", c
	if i := strings.Index(c, " of "); i >= 0 && i < 40 {
		part, paper = c[:i], c[i+len(" of "):]
	} else if i := strings.Index(c, "https://"); i >= 0 {
		if _, after, ok := strings.Cut(c[i:], ", "); ok {
			part, _, _ = strings.Cut(after, ";")
		}
	}
	author := strings.FieldsFunc(paper, func(r rune) bool { return r == ',' || r == '(' })[0]
	if p, _, ok := strings.Cut(part, " ("); ok { // "Figure 4.4 (right panel: the error)"
		side, _, _ := strings.Cut(strings.TrimPrefix(part[len(p):], " ("), " ")
		part = p + " (" + strings.TrimSuffix(side, ")") + ")"
	}
	part = strings.Replace(part, "Figure ", "Fig. ", 1)
	part = strings.Replace(part, "Numerical experiments", "Experiments", 1)
	part = strings.Replace(part, "the plots ", "plots ", 1)
	part = strings.Replace(strings.Replace(part, "sections ", "§§", 1), "section ", "§", 1)
	return strings.TrimSpace(part) + ", " + strings.TrimSpace(author) + " " + citeYear.FindString(paper)
}

func showExperiment(w io.Writer, e *experiment.Experiment) {
	fmt.Fprintf(w, "%s: %s\n\nReproduces: %s\n\nThe paper shows: %s\n\nComputed: %s\n", e.Name, e.Title, e.Cites, e.Shows, e.Setup)
	if e.Requires != "" {
		fmt.Fprintf(w, "\nNeeds: %s\n", e.Requires)
	}
	fmt.Fprintf(w, "\nCSV columns: %s\n", strings.Join(nonEmpty(e.PanelColumn, e.SeriesColumn, e.XColumn, e.YColumn, e.NoteColumn), ", "))
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
