package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/internal/npy"
)

func saveNpy(t *testing.T, dir, name string, rows, cols int, data []float64) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := npy.WriteFile(p, npy.Matrix{Rows: rows, Cols: cols, Data: data}); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSolveCommand(t *testing.T) {
	dir := t.TempDir()
	a := saveNpy(t, dir, "A.npy", 3, 3, []float64{4, 1, 0, 1, 4, 1, 0, 1, 4})
	b := saveNpy(t, dir, "b.npy", 3, 1, []float64{5, 6, 5})
	x := filepath.Join(dir, "x.npy")
	code, out, errOut := mwmm(t, "", "solve", "--a", a, "--b", b, "--x", x, "--factor", "tc16")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	m, err := npy.ReadFile(x)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range m.Data {
		if math.Abs(v-1) > 1e-15 {
			t.Errorf("x[%d] = %v, want 1", i, v)
		}
	}
	// tc16 factors of a 3×3 system gain 100× a classical step: auto keeps
	// to classical refinement; --refine gmres names GMRES-IR.
	if !strings.Contains(out, "converged") || !strings.Contains(out, "auto: classical (each step gained 100× or more)") {
		t.Errorf("report:\n%s", out)
	}
	code, out, _ = mwmm(t, "", "solve", "--a", a, "--b", b, "--factor", "tc16", "--refine", "gmres")
	if code != 0 || !strings.Contains(out, "GMRES-IR") {
		t.Errorf("--refine gmres: exit %d, report:\n%s", code, out)
	}

	code, out, _ = mwmm(t, "", "solve", "--size", "40", "--factor", "double-fp16-fabsum", "--unit", "reference", "--json")
	var rep struct {
		Converged bool
		Steps     []struct {
			BackwardError float64 `json:"backward_error"`
		}
		Factor string
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || !rep.Converged || rep.Factor != "double-fp16-fabsum" || len(rep.Steps) < 2 {
		t.Errorf("--json: exit %d, %+v\n%s", code, rep, out)
	}

	// κ·u16 ≫ 1: classical refinement from fp16 factors cannot converge.
	x2 := filepath.Join(dir, "x2.npy")
	code, out, errOut = mwmm(t, "", "solve", "--size", "60", "--matrix", "randsvd:kappa=1e9", "--factor", "fp16", "--refine", "ir", "--x", x2)
	if code != 1 || !strings.Contains(out, "NOT converged") || !strings.Contains(errOut, "not written") {
		t.Errorf("divergent solve: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(x2); !os.IsNotExist(err) {
		t.Errorf("x written for a failed solve: %v", err)
	}
}

func TestSolveBadInput(t *testing.T) {
	dir := t.TempDir()
	sq := saveNpy(t, dir, "A.npy", 2, 2, []float64{1, 2, 3, 4})
	rect := saveNpy(t, dir, "R.npy", 2, 3, make([]float64, 6))
	nan := saveNpy(t, dir, "N.npy", 2, 2, []float64{1, math.NaN(), 3, 4})
	b2 := saveNpy(t, dir, "b2.npy", 2, 1, []float64{1, 1})
	b3 := saveNpy(t, dir, "b3.npy", 3, 1, []float64{1, 1, 1})
	binf := saveNpy(t, dir, "binf.npy", 2, 1, []float64{1, math.Inf(1)})
	empty := saveNpy(t, dir, "E.npy", 0, 0, nil)
	sing := saveNpy(t, dir, "S.npy", 2, 2, []float64{1, 2, 2, 4})
	swap := saveNpy(t, dir, "W.npy", 2, 2, []float64{0, 1, 1, 0})
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"solve", "--a", rect, "--b", b2}, 1, "square"},
		{[]string{"solve", "--a", sq, "--b", b3}, 1, "needs 2 entries"},
		{[]string{"solve", "--a", nan, "--b", b2}, 1, "NaN"},
		{[]string{"solve", "--a", sq, "--b", binf}, 1, "+Inf"},
		{[]string{"solve", "--a", empty, "--b", b2}, 1, "empty"},
		{[]string{"solve", "--a", sing, "--b", b2}, 1, "singular"},
		{[]string{"solve", "--a", sq}, 2, "--b"},
		{[]string{"solve", "--b", b2}, 2, "--a"},
		{[]string{"solve", "--a", sq, "--b", b2, "--size", "4"}, 2, "ignored"},
		{[]string{"solve", "--factor", "tc99"}, 2, "unknown factorization"},
		{[]string{"solve", "--factor", "tc32-bf16", "--input", "fp16"}, 2, "names its input format"},
		{[]string{"solve", "--factor", "tc32-fp99"}, 2, "fp99"},
		{[]string{"solve", "--factor", "ozaki-int8x5"}, 2, "ozaki-int8x5 is a GPU factorization: --engine gpu"},
		{[]string{"solve", "--unit", "nosuch"}, 2, "nosuch"},
		{[]string{"solve", "--refine", "cg"}, 2, "refinement"},
		{[]string{"solve", "--matrix", "randsvd:kappa=0.5"}, 2, "kappa"},
		{[]string{"solve", "--size", "0"}, 2, "order"},
		{[]string{"lu", "--a", sing}, 1, "zero pivot in column 2"},
		{[]string{"lu", "--a", rect}, 1, "square"},
		{[]string{"lu", "--size", "4", "--nb", "0"}, 2, "block size"},
		{[]string{"lu", "--size", "4", "--matrix", "uniform", "--factor", "fp16", "extra"}, 2, "unexpected"},
		{[]string{"lu", "--size", "4", "--pivot", "rook"}, 2, "partial or none"},
		{[]string{"solve", "--size", "4", "--precond", "qd"}, 2, "--precond"},
		{[]string{"solve", "--engine", "gpu", "--precond", "dd"}, 2, "this machine only"},
		// [[0 1] [1 0]]-like: the first pivot is zero without interchanges.
		{[]string{"lu", "--a", swap, "--pivot", "none"}, 1, "zero pivot in column 1"},
	}
	for _, c := range cases {
		code, _, errOut := mwmm(t, "", c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s", c.args, code, c.code, c.msg, errOut)
		}
	}
}

func TestLUCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "LU.npy")
	perm := filepath.Join(dir, "P.npy")
	code, stdout, errOut := mwmm(t, "", "lu", "--size", "50", "--factor", "tc32", "--out", out, "--perm", perm, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var s struct {
		Errors struct {
			Componentwise float64 `json:"componentwise_error"`
			Normwise      float64 `json:"backward_error"`
		}
		Bound float64
		N     int
	}
	if err := json.Unmarshal([]byte(stdout), &s); err != nil || s.N != 50 {
		t.Fatalf("%v: %s", err, stdout)
	}
	if !(s.Errors.Componentwise > 0 && s.Errors.Componentwise <= s.Bound && s.Errors.Normwise > 0) {
		t.Errorf("errors %+v, bound %v", s.Errors, s.Bound)
	}
	m, err := npy.ReadFile(out)
	if err != nil || m.Rows != 50 || m.Cols != 50 {
		t.Fatalf("LU.npy: %+v %v", m.Rows, err)
	}
	p, err := npy.ReadFile(perm)
	if err != nil || p.Rows != 50 {
		t.Fatalf("P.npy: %v", err)
	}
	seen := map[float64]bool{}
	for _, v := range p.Data {
		seen[v] = true
	}
	if len(seen) != 50 {
		t.Errorf("permutation has %d distinct entries", len(seen))
	}
}

// --pivot none factors without interchanges; partial pivoting swaps rows
// of the same centered matrix.
func TestLUPivotNone(t *testing.T) {
	swaps := func(args ...string) (int, string) {
		code, out, errOut := mwmm(t, "", append([]string{"lu", "--size", "40", "--nb", "16", "--factor", "fp32", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		var s struct {
			Pivot string `json:"pivoting"`
			Swaps int    `json:"row_swaps"`
		}
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatal(err)
		}
		return s.Swaps, s.Pivot
	}
	if n, p := swaps("--matrix", "diagdom", "--pivot", "none"); n != 0 || p != "none" {
		t.Errorf("--pivot none: %d swaps, pivoting %q", n, p)
	}
	if n, p := swaps("--matrix", "centered"); n == 0 || p != "partial" {
		t.Errorf("default: %d swaps, pivoting %q", n, p)
	}
}

func TestBoundLU(t *testing.T) {
	code, out, errOut := mwmm(t, "", "bound", "--lu", "-n", "1000", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r struct {
		Forms []struct {
			Form  string
			Bound struct{ Total float64 }
			Max   float64 `json:"max_kappa_gmres_ir"`
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	c := map[string]float64{}
	for _, f := range r.Forms {
		c[f.Form] = f.Bound.Total
		if !(f.Max > 1) {
			t.Errorf("%s: GMRES-IR limit %v", f.Form, f.Max)
		}
	}
	// TC32's constant is fp16's rounding of the factors, not n·u16.
	if !(c["tc32"] < c["tc16"]/50 && c["tc16"] < c["fp16"] && c["double-fp16-fabsum"] < c["tc32"]/10 && c["fp64"] < 1e-12) {
		t.Errorf("bounds out of order: %v", c)
	}
	for _, bad := range [][]string{{"bound", "--lu"}, {"bound", "--lu", "-n", "10", "--nb", "0"}, {"bound", "--lu", "-n", "10", "--unit", "nosuch"}, {"bound", "--lu", "-n", "10", "-p", "2"}} {
		if code, _, _ := mwmm(t, "", bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}

// --max-iter 0 is no refinement step under the method asked for (the
// library's NoSteps), not the library's default of 20 nor --refine none.
func TestSolveMaxIterZero(t *testing.T) {
	code, out, errOut := mwmm(t, "", "solve", "--size", "32", "--max-iter", "0", "--json")
	var s solveSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("exit %d, stdout %q, stderr %q: %v", code, out, errOut, err)
	}
	if code != 1 || s.Refine.String() != "auto" || s.Outer != 0 || len(s.Steps) != 1 || s.Converged ||
		s.Stop != "a limit of 0 refinement steps" {
		t.Errorf("tc32, --max-iter 0: exit %d, report %+v", code, s.Report)
	}
	code, out, _ = mwmm(t, "", "solve", "--size", "32", "--max-iter", "0", "--factor", "fp64")
	if code != 0 || !strings.Contains(out, "refine  auto: no steps taken") || !strings.Contains(out, "converged: backward error") {
		t.Errorf("fp64, --max-iter 0: exit %d, report:\n%s", code, out)
	}
}
