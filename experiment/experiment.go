package experiment

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
)

// Config is what the caller chooses for a run.
type Config struct {
	// Quick runs the reduced sweep (each CPU experiment in well under 30 s on
	// two cores): fewer and smaller sizes, the same series.
	Quick bool
	// Seed seeds every random matrix; a point's matrices depend only on the
	// seed and the point, not on which worker ran it or when.
	Seed uint64
	// Engine replaces the experiment's default engine (see each
	// experiment's Setup); empty keeps the default.
	Engine string
	// Workers is the number of points run at once; 0 means GOMAXPROCS.
	Workers int
}

// A Row is one measured point: Y at X on one curve (Series) of one
// sub-plot (Panel). Note is an optional text column, such as the dominant
// term of a bound.
type Row struct {
	Panel, Series string
	X, Y          float64
	Note          string
}

// A Task computes the rows of one point of a sweep. Tasks run concurrently,
// so Run must not share mutable state with other tasks.
type Task struct {
	Panel, Series string
	X             float64
	// Cost is the task's work in any unit common to the experiment (such as
	// multiply-adds); it weights the progress bar.
	Cost float64
	Run  func(ctx context.Context) ([]Row, error)
}

// An Experiment reproduces one figure or table of a paper.
type Experiment struct {
	Name  string // as typed: mwmm experiment run NAME
	Title string // one line
	// Cites names the paper and the figure or table; Shows says what the
	// paper's version shows, so the user knows what to compare.
	Cites, Shows string
	// Setup says what is computed: matrices, arithmetic, engine, sizes.
	Setup string
	// Requires names what the experiment needs beyond the CPU ("gpu"), or is
	// empty.
	Requires string
	// Engines says which --engine values (Config.Engine) the experiment
	// takes: "" none (its arithmetic is fixed), "any" every multiword
	// engine, "model" model:<unit> engines only. Run refuses the others.
	Engines string
	// Serial runs the points one at a time whatever Config.Workers says:
	// timings on one GPU must not overlap.
	Serial bool

	// Column names of the CSV (and axis labels of the plot).
	PanelColumn, SeriesColumn, XColumn, YColumn, NoteColumn string
	XLabel, YLabel                                          string
	LogX, LogY                                              bool
	// Columns, when positive, draws the panels in rows of that many
	// (plotting.Figure.Columns); 0 draws them in one row.
	Columns int

	// Tasks lists the points to compute. Series whose name starts with
	// "bound" are drawn dashed.
	Tasks func(cfg Config) ([]Task, error)

	// Summary, when set, prints a table of its own instead of the default
	// one (X down, series across, one block per panel).
	Summary func(w io.Writer, rows []Row)
}

var (
	registryMu sync.Mutex
	registry   []*Experiment
)

// Register adds an experiment to the registry; packages with their own
// experiments (the GPU engine's) register them from init. It panics on a
// duplicate name, which is a programming error.
func Register(e *Experiment) {
	registryMu.Lock()
	defer registryMu.Unlock()
	for _, r := range registry {
		if strings.EqualFold(r.Name, e.Name) {
			panic("experiment: " + e.Name + " registered twice")
		}
	}
	registry = append(registry, e)
}

// List returns the registered experiments in the order they were
// registered.
func List() []*Experiment {
	registryMu.Lock()
	defer registryMu.Unlock()
	return slices.Clone(registry)
}

// Lookup returns the experiment of that name (case-insensitive).
func Lookup(name string) (*Experiment, error) {
	var names []string
	for _, e := range List() {
		if strings.EqualFold(e.Name, strings.TrimSpace(name)) {
			return e, nil
		}
		names = append(names, e.Name)
	}
	return nil, fmt.Errorf("experiment: unknown experiment %q; experiments: %s", name, strings.Join(names, ", "))
}

// sizes returns 2^lo, 2^(lo+1), ..., 2^hi.
func sizes(lo, hi int) []int {
	var ns []int
	for e := lo; e <= hi; e++ {
		ns = append(ns, 1<<e)
	}
	return ns
}

// pow2 formats 2^e sizes as such in tables ("2^14"), others plainly.
func formatX(x float64) string {
	if x > 0 && x == math.Trunc(x) {
		if e := math.Log2(x); e == math.Trunc(e) && e >= 4 {
			return fmt.Sprintf("2^%d", int(e))
		}
		return fmt.Sprintf("%d", int64(x))
	}
	return fmt.Sprintf("%.4g", x)
}
