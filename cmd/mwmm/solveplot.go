package main

import (
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/mwmm/mwmm/experiment"
	"github.com/mwmm/mwmm/internal/plotting"
)

// solvePlotRow is what the figures of a solve benchmark need of a row.
type solvePlotRow struct {
	n              int
	matrix, method string
	seconds        float64
	outer, inner   int
	status         string
}

// readSolveCSV reads the table --bench --csv wrote.
func readSolveCSV(path string) ([]solvePlotRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) < 2 {
		return nil, fmt.Errorf("%s: no rows", path)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, h := range []string{"n", "matrix", "method", "seconds", "outer", "inner", "status"} {
		if _, ok := col[h]; !ok {
			return nil, fmt.Errorf("%s: no column %q: not a table of solve --bench --csv", path, h)
		}
	}
	var rows []solvePlotRow
	for i, r := range recs[1:] {
		n, err1 := strconv.Atoi(r[col["n"]])
		sec, err2 := strconv.ParseFloat(r[col["seconds"]], 64)
		outer, err3 := strconv.Atoi(r[col["outer"]])
		inner, err4 := strconv.Atoi(r[col["inner"]])
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			return nil, fmt.Errorf("%s: row %d: %w", path, i+2, err)
		}
		rows = append(rows, solvePlotRow{n, r[col["matrix"]], r[col["method"]], sec, outer, inner, r[col["status"]]})
	}
	return rows, nil
}

// solveFigures draws a solve benchmark: speed-up over getrf+getrs (or
// time, without it) and refinement iterations against n, a panel per
// matrix kind; or, when the table has one n and its matrices are randsvd
// ones differing in κ, against κ. Solves that failed or did not converge
// are left out; cuSOLVER's refinement solvers count their own iterations,
// mwmm's forms their GMRES iterations.
func solveFigures(rows []solvePlotRow) (times, iterations plotting.Figure) {
	ax := newSolveAxis(rows)
	// Speed-up over getrf+getrs of the same system, where the table has it.
	base := map[string]float64{}
	for _, r := range rows {
		if r.method == "cuSOLVER getrf+getrs" && r.status == "ok" {
			base[solveKey(r)] = r.seconds
		}
	}
	times = plotting.Figure{Title: "GPU solve: time to an fp64-accurate x", XLabel: ax.label, YLabel: "seconds", LogX: true, LogY: true}
	if len(base) > 0 {
		times.Title = "GPU solve: speed-up over cuSOLVER getrf+getrs (fp64), to an x as accurate"
		times.YLabel = "getrf+getrs time / time"
	}
	iterations = plotting.Figure{Title: "GPU solve: corrections solved (mwmm: steps + GMRES iterations; *gesv: its steps)", XLabel: ax.label,
		YLabel: "iterations", LogX: true, LogY: true}
	for _, title := range ax.panels {
		tp, ip := solvePanels(rows, ax, title, base)
		times.Panels = append(times.Panels, tp)
		iterations.Panels = append(iterations.Panels, ip)
	}
	return times, iterations
}

// A solveAxis is the figures' x axis: n, with a panel per matrix kind; or
// κ, with one panel, when the table has one n and randsvd matrices of one
// mode (at one κ the modes are different matrices) differing in κ.
type solveAxis struct {
	label   string
	panels  []string
	byKappa bool
	kappa   map[string]float64 // by matrix, with byKappa
}

func newSolveAxis(rows []solvePlotRow) solveAxis {
	var sizes []int
	ax := solveAxis{label: "n", kappa: map[string]float64{}}
	for _, r := range rows {
		if !slices.Contains(sizes, r.n) {
			sizes = append(sizes, r.n)
		}
		if !slices.Contains(ax.panels, r.matrix) {
			ax.panels = append(ax.panels, r.matrix)
		}
	}
	ax.byKappa = len(sizes) == 1 && len(ax.panels) > 1
	mode := ""
	for _, k := range ax.panels {
		spec, err := experiment.ParseMatrix(k)
		if err != nil || spec.Kind != "randsvd" || (mode != "" && spec.Mode != mode) {
			ax.byKappa = false
			break
		}
		mode = spec.Mode
		ax.kappa[k] = spec.Kappa
		if spec.Kappa == 0 {
			ax.kappa[k] = experiment.DefaultKappa
		}
	}
	if ax.byKappa {
		ax.panels = []string{fmt.Sprintf("randsvd, %s singular values, n = %d", mode, sizes[0])}
		ax.label = "κ (2-norm condition number)"
	}
	return ax
}

// x is row r's place on the axis.
func (ax solveAxis) x(r solvePlotRow) float64 {
	if ax.byKappa {
		return ax.kappa[r.matrix]
	}
	return float64(r.n)
}

// solveKey names a row's system, for the baseline of the speed-ups.
func solveKey(r solvePlotRow) string { return fmt.Sprint(r.n, "/", r.matrix) }

// solvePanels are the time and iteration panels of one panel title: a
// series per method.
func solvePanels(rows []solvePlotRow, ax solveAxis, title string, base map[string]float64) (tp, ip plotting.Panel) {
	tp.Title, ip.Title = title, title
	var methods []string
	for _, r := range rows {
		if (ax.byKappa || r.matrix == title) && !slices.Contains(methods, r.method) {
			methods = append(methods, r.method)
		}
	}
	for _, m := range methods {
		ts, is := plotting.Series{Name: m}, plotting.Series{Name: m}
		for _, r := range rows {
			if r.method != m || (!ax.byKappa && r.matrix != title) {
				continue
			}
			t, it := solvePoint(r, base)
			ts.X, ts.Y = append(ts.X, ax.x(r)), append(ts.Y, t)
			is.X, is.Y = append(is.X, ax.x(r)), append(is.Y, it)
		}
		tp.Series = append(tp.Series, ts)
		if slices.ContainsFunc(is.Y, func(v float64) bool { return !math.IsNaN(v) }) {
			ip.Series = append(ip.Series, is)
		}
	}
	return tp, ip
}

// solvePoint is row r's time, or its speed-up when base is not empty (NaN
// where base lacks its system), and its iterations (NaN: not drawn). A
// solve that failed has neither.
func solvePoint(r solvePlotRow, base map[string]float64) (t, it float64) {
	t, it = r.seconds, math.NaN()
	if b, ok := base[solveKey(r)]; ok {
		t = b / r.seconds
	} else if len(base) > 0 {
		t = math.NaN() // nothing to compare with
	}
	// auto's status names the form that answered: "ok: fp64".
	ok := r.status == "ok" || strings.HasPrefix(r.status, "ok: ")
	switch {
	case ok && strings.HasPrefix(r.method, "mwmm "):
		if r.outer+r.inner > 0 { // fp64 factors need no refinement
			it = float64(r.outer + r.inner)
		}
	case ok && r.outer > 0:
		it = float64(r.outer)
	case r.status == "fell back to fp64":
	case !ok:
		t = math.NaN()
	}
	return t, it
}

// saveSolveFigures writes PREFIX-time.png and PREFIX-iterations.png.
func saveSolveFigures(rows []solvePlotRow, prefix string) ([]string, error) {
	times, its := solveFigures(rows)
	files := []string{prefix + "-time.png", prefix + "-iterations.png"}
	for i, fig := range []plotting.Figure{times, its} {
		if err := plotting.Save(fig, files[i]); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// replotSolve draws --plot's figures from a saved table.
func replotSolve(fs *flag.FlagSet, o *systemOptions, stdout io.Writer) error {
	var other []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "replot" && f.Name != "plot" {
			other = append(other, "--"+f.Name)
		}
	})
	if len(other) > 0 {
		return usagef("--replot draws a saved table; %s would not change it", strings.Join(other, ", "))
	}
	if o.plot == "" {
		return usagef("--replot %s: say where with --plot PREFIX", o.replot)
	}
	if err := checkOutputs(benchOutputs(o)...); err != nil {
		return err
	}
	rows, err := readSolveCSV(o.replot)
	if err != nil {
		return err
	}
	files, err := saveSolveFigures(rows, o.plot)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", strings.Join(files, ", "))
	return nil
}
