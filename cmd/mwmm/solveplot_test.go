package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A κ sweep is drawn against κ, speed-ups against getrf+getrs of the same
// system; a stalled solve is left out of both figures, cuSOLVER's
// fallback keeps its time but not its iterations, and auto's answers
// (status "ok: FORM") count as ok.
func TestSolveFigures(t *testing.T) {
	rows := []solvePlotRow{
		{8192, "randsvd:kappa=1e2", "cuSOLVER getrf+getrs", 0.04, 0, 0, "ok"},
		{8192, "randsvd:kappa=1e2", "cuSOLVER DHgesv", 0.08, 13, 0, "ok"},
		{8192, "randsvd:kappa=1e2", "mwmm tc32-fp16", 0.02, 2, 14, "ok"},
		{8192, "randsvd:kappa=1e8", "cuSOLVER getrf+getrs", 0.05, 0, 0, "ok"},
		{8192, "randsvd:kappa=1e8", "cuSOLVER DHgesv", 0.1, -50, 0, "fell back to fp64"},
		{8192, "randsvd:kappa=1e8", "mwmm tc32-fp16", 1, 4, 800, "not converged: stalled"},
		{8192, "randsvd:kappa=1e2", "mwmm fp64", 0.04, 0, 0, "ok"},
		{8192, "randsvd:kappa=1e8", "mwmm fp64", 0.05, 0, 0, "ok"},
		{8192, "randsvd:kappa=1e2", "mwmm auto", 0.02, 2, 14, "ok: tc32-fp16"},
		{8192, "randsvd:kappa=1e8", "mwmm auto", 0.025, 1, 0, "ok: fp64"},
	}
	times, its := solveFigures(rows)
	if len(times.Panels) != 1 || !strings.Contains(times.XLabel, "κ") || !strings.Contains(times.Panels[0].Title, "geometric") {
		t.Fatalf("one n and randsvd kinds: %d panels against %q, want one against κ naming the mode", len(times.Panels), times.XLabel)
	}
	want := map[string][2][]float64{ // series → speed-ups, iterations at κ = 1e2, 1e8
		"cuSOLVER getrf+getrs": {{1, 1}, nil},
		"cuSOLVER DHgesv":      {{0.5, 0.5}, {13, math.NaN()}},
		"mwmm tc32-fp16":       {{2, math.NaN()}, {16, math.NaN()}}, // 2 steps + 14 GMRES iterations
		"mwmm fp64":            {{1, 1}, nil},
		"mwmm auto":            {{2, 2}, {16, 1}}, // its status names the form that answered
	}
	same := func(a, b []float64) bool {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if a[i] != b[i] && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
				return false
			}
		}
		return true
	}
	for _, s := range times.Panels[0].Series {
		if !same(s.X, []float64{1e2, 1e8}) || !same(s.Y, want[s.Name][0]) {
			t.Errorf("time %s: %v at %v, want %v", s.Name, s.Y, s.X, want[s.Name][0])
		}
	}
	names := []string{}
	for _, s := range its.Panels[0].Series {
		names = append(names, s.Name)
		if !same(s.Y, want[s.Name][1]) {
			t.Errorf("iterations %s: %v, want %v", s.Name, s.Y, want[s.Name][1])
		}
	}
	if len(names) != 3 { // getrf+getrs and fp64 factors have no iterations
		t.Errorf("iteration series %v, want DHgesv, tc32-fp16 and auto", names)
	}

	// Two modes at one κ are different matrices: one panel each, not one line.
	times, _ = solveFigures(append(rows, solvePlotRow{8192, "randsvd:kappa=1e8,mode=one-small", "mwmm tc32-fp16", 0.03, 2, 3, "ok"}))
	if times.XLabel != "n" || len(times.Panels) != 3 {
		t.Errorf("two modes: %d panels against %q, want one per kind against n", len(times.Panels), times.XLabel)
	}

	times, _ = solveFigures(append(rows, solvePlotRow{16384, "centered", "mwmm tc32-fp16", 0.1, 2, 3, "ok"}))
	if times.XLabel != "n" || len(times.Panels) != 3 {
		t.Errorf("two sizes: %d panels against %q, want one per kind against n", len(times.Panels), times.XLabel)
	}
}

// --replot redraws a saved table without a GPU, and says what is missing.
func TestSolveReplot(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "t.csv")
	csvText := "n,matrix,method,seconds,tflops,factor_seconds,outer,inner,backward_error,status\n" +
		"4096,centered,cuSOLVER getrf+getrs,0.0158,2.9,0,0,0,2.4e-15,ok\n" +
		"4096,centered,mwmm double-fp16-fabsum,0.0246,1.9,0.02,2,5,3e-17,ok\n" +
		"8192,centered,cuSOLVER getrf+getrs,0.042,8.7,0,0,0,4.2e-15,ok\n" +
		"8192,centered,mwmm double-fp16-fabsum,0.054,6.8,0.038,2,5,3e-17,ok\n"
	if err := os.WriteFile(table, []byte(csvText), 0o644); err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(dir, "fig")
	code, out, errOut := mwmm(t, "", "solve", "--replot", table, "--plot", prefix)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, f := range []string{prefix + "-time.png", prefix + "-iterations.png"} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 || !strings.Contains(out, f) {
			t.Errorf("%s: %v (stdout %q)", f, err, out)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"solve", "--replot", table}, "--plot PREFIX"},
		{[]string{"solve", "--replot", table, "--plot", prefix, "--factor", "fp32"}, "--factor"},
		{[]string{"solve", "--plot", prefix}, "add --engine gpu"},
		{[]string{"solve", "--engine", "gpu", "--plot", prefix}, "add --bench"},
	} {
		if code, _, errOut := mwmm(t, "", c.args...); code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 mentioning %q", c.args, code, errOut, c.want)
		}
	}
	if code, _, errOut := mwmm(t, "", "solve", "--replot", filepath.Join(dir, "none.csv"), "--plot", prefix); code != 1 || !strings.Contains(errOut, "none.csv") {
		t.Errorf("a missing table: exit %d, %q", code, errOut)
	}
}
