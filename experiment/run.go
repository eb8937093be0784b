package experiment

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mwmm/mwmm/internal/outfile"
	"github.com/mwmm/mwmm/internal/plotting"
	"github.com/mwmm/mwmm/internal/progress"
	"github.com/mwmm/mwmm/multiword"
)

// Result is what a run produced.
type Result struct {
	Rows        []Row         // in the order of the experiment's tasks
	Points      int           // tasks in the sweep
	Done        int           // tasks finished
	Interrupted bool          // the context was cancelled before the end
	Elapsed     time.Duration // wall-clock time of the sweep
	Files       []string      // the CSV, PNG and SVG written
}

// Run computes the experiment's points, Workers at a time, and writes
// NAME.csv, NAME.png and NAME.svg into outDir (no files when outDir is
// empty). It checks the engine and builds every task before it touches a
// file: a refused run (a *ConfigError) writes nothing. Rows reach
// NAME.csv.partial as their points finish; a complete run then replaces
// NAME.csv and the plots (through internal/outfile: atomically, mode 0666
// less the umask, as os.Create). An interrupted run (ctx cancelled, as by
// Ctrl-C) or a failed one stops waiting and keeps what it has without
// replacing a result with less: the
// rows, in task order, go to NAME.csv with plots when there is no NAME.csv
// yet, and to NAME.partial.csv beside an existing one otherwise; no rows,
// no files. It returns the result with Interrupted set and ctx's error.
// Progress, when not nil and a terminal, shows a bar.
func Run(ctx context.Context, e *Experiment, cfg Config, outDir string, progressTo io.Writer) (*Result, error) {
	if err := CheckEngine(e, cfg.Engine); err != nil {
		return nil, err
	}
	tasks, err := e.Tasks(cfg)
	if err != nil {
		return nil, &ConfigError{fmt.Errorf("experiment %s: %w", e.Name, err)}
	}
	res := &Result{Points: len(tasks)}
	var partial *os.File
	var out *csv.Writer
	if outDir != "" {
		if partial, out, err = e.openPartial(outDir); err != nil {
			return nil, err
		}
		defer partial.Close()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if e.Serial {
		workers = 1
	}
	results := runTasks(ctx, tasks, workers)
	c := newCollector(e, tasks, out, res, progressTo)
	defer c.bar.Finish()
	start := time.Now()
	runErr := c.collect(ctx, results)
	res.Elapsed = time.Since(start)
	if runErr == nil && res.Done < len(tasks) {
		res.Interrupted = true
		runErr = ctx.Err()
		if cause := context.Cause(ctx); cause != nil {
			runErr = cause
		}
	}
	cancel()
	c.bar.Finish()
	for _, rows := range c.byTask {
		res.Rows = append(res.Rows, rows...)
	}
	if outDir != "" {
		partial.Close()
		os.Remove(partial.Name()) // its rows are in res.Rows
		files, err := e.write(outDir, res.Rows, runErr == nil && res.Done == len(tasks))
		res.Files = files
		if err != nil {
			return res, errors.Join(runErr, err)
		}
	}
	return res, runErr
}

// openPartial opens NAME.csv.partial in dir, where the rows go as they
// come, with its header written.
func (e *Experiment) openPartial(dir string) (*os.File, *csv.Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, e.Name+".csv.partial"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, nil, err
	}
	out := csv.NewWriter(f)
	if err := writeRecord(out, e.header()); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, out, nil
}

// taskDone is one task's rows, or why it failed.
type taskDone struct {
	i    int
	rows []Row
	err  error
}

// runTasks runs the tasks on workers goroutines until ctx ends; their
// results come on the returned channel, in the order they finish.
func runTasks(ctx context.Context, tasks []Task, workers int) chan taskDone {
	next := make(chan int)
	results := make(chan taskDone, len(tasks)) // buffered: abandoned workers never block
	go func() {
		defer close(next)
		for i := range tasks {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	for w := 0; w < min(workers, len(tasks)); w++ {
		go func() {
			for i := range next {
				rows, err := tasks[i].Run(ctx)
				results <- taskDone{i, rows, err}
			}
		}()
	}
	return results
}

// A collector takes the tasks' results as they come: it keeps their rows
// in task order, writes them to the partial CSV and moves the progress
// bar by each task's cost.
type collector struct {
	e               *Experiment
	tasks           []Task
	out             *csv.Writer
	res             *Result
	bar             *progress.Bar
	cost            func(Task) float64
	total, costDone float64
	byTask          [][]Row
}

const progressTicks = 1000

func newCollector(e *Experiment, tasks []Task, out *csv.Writer, res *Result, progressTo io.Writer) *collector {
	c := &collector{e: e, tasks: tasks, out: out, res: res, byTask: make([][]Row, len(tasks)),
		cost: func(t Task) float64 { return math.Max(t.Cost, 0) }}
	for _, t := range tasks {
		c.total += c.cost(t)
	}
	if c.total == 0 { // no costs given: count points
		c.cost = func(Task) float64 { return 1 }
		c.total = float64(len(tasks))
	}
	c.bar = progress.New(progressTo, progressTicks, e.Name)
	return c
}

func (c *collector) take(d taskDone) error {
	if d.err != nil {
		t := c.tasks[d.i]
		return fmt.Errorf("experiment %s: %s %s at %s: %w", c.e.Name, t.Panel, t.Series, formatX(t.X), d.err)
	}
	c.res.Done++
	c.byTask[d.i] = d.rows
	if c.out != nil {
		for _, r := range d.rows {
			if err := writeRecord(c.out, c.e.record(r)); err != nil {
				return err
			}
		}
	}
	before := int64(c.costDone / c.total * progressTicks)
	c.costDone += c.cost(c.tasks[d.i])
	c.bar.Add(int64(c.costDone/c.total*progressTicks) - before)
	return nil
}

// collect takes results until every task is done, a task fails, or ctx
// ends; after an interrupt it keeps what finished before it (the rest
// failed because of it).
func (c *collector) collect(ctx context.Context, results chan taskDone) error {
	var runErr error
	drain := func() {
		for len(results) > 0 && runErr == nil {
			if d := <-results; d.err == nil {
				runErr = c.take(d)
			}
		}
	}
	for c.res.Done < len(c.tasks) {
		select {
		case <-ctx.Done():
			drain()
			return runErr
		case d := <-results:
			if d.err != nil && ctx.Err() != nil {
				drain() // a task stopped by the interrupt, seen before ctx.Done
				return runErr
			}
			if runErr = c.take(d); runErr != nil {
				return runErr
			}
		}
	}
	return runErr
}

// A ConfigError is a run refused before it started (an engine the
// experiment does not take, an unknown engine): nothing was computed or
// written.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// CheckEngine says whether the experiment takes engine (Config.Engine) and
// whether the engine exists; empty always passes. It returns a *ConfigError.
func CheckEngine(e *Experiment, engine string) error {
	if engine == "" {
		return nil
	}
	switch e.Engines {
	case "":
		return &ConfigError{fmt.Errorf("%s takes no --engine: its arithmetic is fixed (see 'mwmm experiment show %s')", e.Name, e.Name)}
	case "model":
		if !strings.HasPrefix(engine, "model:") {
			return &ConfigError{fmt.Errorf("%s runs its products through unit models, so --engine must be model:<unit>, not %q", e.Name, engine)}
		}
	}
	if _, err := multiword.Open(engine); err != nil {
		return &ConfigError{err}
	}
	return nil
}

func writeRecord(w *csv.Writer, rec []string) error {
	if err := w.Write(rec); err != nil {
		return err
	}
	w.Flush()
	return w.Error()
}

func (e *Experiment) header() []string {
	h := []string{e.PanelColumn, e.SeriesColumn, e.XColumn, e.YColumn}
	if e.NoteColumn != "" {
		h = append(h, e.NoteColumn)
	}
	return h
}

func (e *Experiment) record(r Row) []string {
	rec := []string{r.Panel, r.Series, strconv.FormatFloat(r.X, 'g', -1, 64), strconv.FormatFloat(r.Y, 'g', -1, 64)}
	if e.NoteColumn != "" {
		rec = append(rec, r.Note)
	}
	return rec
}

// write writes the rows in task order and their plots. A complete run
// replaces NAME.csv, .png and .svg; an incomplete one writes them only where
// there is no NAME.csv yet, and NAME.partial.csv (no plots) otherwise. No
// rows, no files.
func (e *Experiment) write(dir string, rows []Row, complete bool) ([]string, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	path := filepath.Join(dir, e.Name+".csv")
	writeCSV := func(w io.Writer) error { return e.writeCSV(w, rows) }
	if !complete {
		if _, err := os.Stat(path); err == nil {
			path = filepath.Join(dir, e.Name+".partial.csv")
			return []string{path}, outfile.WriteFile(context.Background(), path, nil, writeCSV)
		}
	}
	// Not stopped by the interrupt: these are the rows it kept.
	if err := outfile.WriteFile(context.Background(), path, nil, writeCSV); err != nil {
		return nil, err
	}
	files := []string{path}
	fig := e.Figure(rows)
	for _, ext := range []string{".png", ".svg"} {
		p := filepath.Join(dir, e.Name+ext)
		if err := plotting.Save(fig, p); err != nil { // whole or not at all
			return files, fmt.Errorf("experiment %s: plot: %w", e.Name, err)
		}
		files = append(files, p)
	}
	return files, nil
}

func (e *Experiment) writeCSV(f io.Writer, rows []Row) error {
	w := csv.NewWriter(f)
	_ = w.Write(e.header())
	for _, r := range rows {
		_ = w.Write(e.record(r))
	}
	w.Flush()
	return w.Error()
}

// Figure is the plot of rows: one panel per Panel value, one curve per
// Series, in the order they first appear.
func (e *Experiment) Figure(rows []Row) plotting.Figure {
	fig := plotting.Figure{Title: e.Name + ": " + e.Title, XLabel: e.XLabel, YLabel: e.YLabel, LogX: e.LogX, LogY: e.LogY, Columns: e.Columns}
	for _, panel := range unique(rows, func(r Row) string { return r.Panel }) {
		in := filterPanel(rows, panel)
		p := plotting.Panel{Title: panel}
		for _, series := range unique(in, func(r Row) string { return r.Series }) {
			s := plotting.Series{Name: series, Dashed: strings.HasPrefix(series, "bound")}
			for _, r := range in {
				if r.Series == series {
					s.X, s.Y = append(s.X, r.X), append(s.Y, r.Y)
				}
			}
			p.Series = append(p.Series, s)
		}
		fig.Panels = append(fig.Panels, p)
	}
	return fig
}

func unique(rows []Row, key func(Row) string) []string {
	var ks []string
	for _, r := range rows {
		if k := key(r); !slices.Contains(ks, k) {
			ks = append(ks, k)
		}
	}
	return ks
}

func filterPanel(rows []Row, panel string) []Row {
	var in []Row
	for _, r := range rows {
		if r.Panel == panel {
			in = append(in, r)
		}
	}
	return in
}

// PrintTable writes the compact table of rows: the experiment's Summary, or
// one block per panel with X down and the series across.
func (e *Experiment) PrintTable(w io.Writer, rows []Row) {
	if e.Summary != nil {
		e.Summary(w, rows)
		return
	}
	for k, panel := range unique(rows, func(r Row) string { return r.Panel }) {
		if k > 0 {
			fmt.Fprintln(w)
		}
		in := filterPanel(rows, panel)
		fmt.Fprintf(w, "%s = %s (%s)\n", e.PanelColumn, panel, e.YColumn)
		series := unique(in, func(r Row) string { return r.Series })
		xs := []float64{}
		for _, r := range in {
			if !slices.Contains(xs, r.X) {
				xs = append(xs, r.X)
			}
		}
		slices.Sort(xs)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "%s\t%s\t\n", e.XColumn, strings.Join(series, "\t"))
		for _, x := range xs {
			cells := []string{formatX(x)}
			for _, s := range series {
				cell := "-"
				for _, r := range in {
					if r.Series == s && r.X == x {
						cell = strconv.FormatFloat(r.Y, 'g', 3, 64)
					}
				}
				cells = append(cells, cell)
			}
			fmt.Fprintf(tw, "%s\t\n", strings.Join(cells, "\t"))
		}
		tw.Flush()
	}
}
