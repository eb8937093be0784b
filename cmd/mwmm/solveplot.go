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
// time, without it) and refinement iterations against n, a panel per matrix kind; or, when the table has one n and
// its matrices are randsvd ones differing in κ, against κ. Solves that
// failed or did not converge are left out; cuSOLVER's refinement solvers
// count their own iterations, mwmm's forms their GMRES iterations.
func solveFigures(rows []solvePlotRow) (times, iterations plotting.Figure) {
	var sizes []int
	var kinds []string
	for _, r := range rows {
		if !slices.Contains(sizes, r.n) {
			sizes = append(sizes, r.n)
		}
		if !slices.Contains(kinds, r.matrix) {
			kinds = append(kinds, r.matrix)
		}
	}
	byKappa := len(sizes) == 1 && len(kinds) > 1
	kappa := map[string]float64{}
	mode := ""
	for _, k := range kinds {
		spec, err := experiment.ParseMatrix(k)
		// One mode only: at one κ the modes are different matrices.
		if err != nil || spec.Kind != "randsvd" || (mode != "" && spec.Mode != mode) {
			byKappa = false
			break
		}
		mode = spec.Mode
		kappa[k] = spec.Kappa
		if spec.Kappa == 0 {
			kappa[k] = experiment.DefaultKappa
		}
	}
	panels := kinds
	xLabel := "n"
	if byKappa {
		panels = []string{fmt.Sprintf("randsvd, %s singular values, n = %d", mode, sizes[0])}
		xLabel = "κ (2-norm condition number)"
	}
	// Speed-up over getrf+getrs of the same system, where the table has it.
	base := map[string]float64{}
	key := func(r solvePlotRow) string { return fmt.Sprint(r.n, "/", r.matrix) }
	for _, r := range rows {
		if r.method == "cuSOLVER getrf+getrs" && r.status == "ok" {
			base[key(r)] = r.seconds
		}
	}
	speedup := len(base) > 0
	times = plotting.Figure{Title: "GPU solve: time to an fp64-accurate x", XLabel: xLabel, YLabel: "seconds", LogX: true, LogY: true}
	if speedup {
		times.Title = "GPU solve: speed-up over cuSOLVER getrf+getrs (fp64), to an x as accurate"
		times.YLabel = "getrf+getrs time / time"
	}
	iterations = plotting.Figure{Title: "GPU solve: corrections solved (mwmm: steps + GMRES iterations; *gesv: its steps)", XLabel: xLabel,
		YLabel: "iterations", LogX: true, LogY: true}
	for _, title := range panels {
		var tp, ip plotting.Panel
		tp.Title, ip.Title = title, title
		var methods []string
		for _, r := range rows {
			if (byKappa || r.matrix == title) && !slices.Contains(methods, r.method) {
				methods = append(methods, r.method)
			}
		}
		for _, m := range methods {
			ts, is := plotting.Series{Name: m}, plotting.Series{Name: m}
			for _, r := range rows {
				if r.method != m || (!byKappa && r.matrix != title) {
					continue
				}
				x := float64(r.n)
				if byKappa {
					x = kappa[r.matrix]
				}
				t, it := r.seconds, math.NaN()
				if b, ok := base[key(r)]; speedup && ok {
					t = b / r.seconds
				} else if speedup {
					t = math.NaN() // nothing to compare with
				}
				// auto's status names the form that answered: "ok: fp64".
				ok := r.status == "ok" || strings.HasPrefix(r.status, "ok: ")
				switch {
				case ok && strings.HasPrefix(m, "mwmm "):
					if r.outer+r.inner > 0 { // fp64 factors need no refinement
						it = float64(r.outer + r.inner)
					}
				case ok && r.outer > 0:
					it = float64(r.outer)
				case r.status == "fell back to fp64":
				case !ok:
					t = math.NaN()
				}
				ts.X, ts.Y = append(ts.X, x), append(ts.Y, t)
				is.X, is.Y = append(is.X, x), append(is.Y, it)
			}
			tp.Series = append(tp.Series, ts)
			if slices.ContainsFunc(is.Y, func(v float64) bool { return !math.IsNaN(v) }) {
				ip.Series = append(ip.Series, is)
			}
		}
		times.Panels = append(times.Panels, tp)
		iterations.Panels = append(iterations.Panels, ip)
	}
	return times, iterations
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
