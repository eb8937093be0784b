package main

import (
	"maps"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/dense"
)

// The GPU solver's command line is checked before any GPU is looked for:
// the same errors (exit 2) on every machine.
func TestSolveGPUUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"solve", "--engine", "gpu", "--unit", "a100"}, "--unit"},
		{[]string{"solve", "--precond", "auto"}, "--precond auto"},
		{[]string{"solve", "--engine", "gpu", "--factor", "tc16"}, "tc16"},
		{[]string{"solve", "--engine", "gpu", "--factor", "tc32-bf16", "--input", "fp16"}, "names its input format"},
		{[]string{"solve", "--engine", "gpu", "--factor", "fp32,fp64"}, "one factorization"},
		{[]string{"solve", "--engine", "gpu", "--nb", "0"}, "--nb"},
		{[]string{"solve", "--engine", "tpu"}, "model:UNIT, reference or gpu"},
		{[]string{"solve", "--bench", "1024"}, "--engine gpu"},
		{[]string{"solve", "--engine", "gpu", "--tol", "-1"}, "want a positive number"},
		{[]string{"solve", "--engine", "gpu", "--matrix", "nosuch"}, "nosuch"},
		{[]string{"solve", "--engine", "gpu", "--bench", "64,x"}, "sizes"},
		{[]string{"solve", "--engine", "gpu", "--bench", "64", "--matrix", "centered,nosuch"}, "nosuch"},
		{[]string{"solve", "--engine", "gpu", "--panel", "lapack"}, "auto, sgetrf, recursive"},
		{[]string{"solve", "--engine", "gpu", "--panel", "recursive,sgetrf"}, "both with --bench"},
		{[]string{"solve", "--panel", "sgetrf"}, "--panel sets the GPU"},
		{[]string{"solve", "--lookahead-sms", "8"}, "--lookahead-sms sets the GPU"},
		{[]string{"solve", "--pivot", "butterfly"}, "butterfly is the GPU's"},
		{[]string{"solve", "--engine", "gpu", "--pivot", "rook"}, "auto, partial, none, butterfly"},
		{[]string{"solve", "--engine", "gpu", "--pivot", "partial,rook", "--bench", "64"}, `"rook"`},
		{[]string{"solve", "--engine", "gpu", "--pivot", "partial,butterfly"}, "several with --bench"},
		{[]string{"solve", "--profile"}, "--profile sets the GPU"},
		{[]string{"solve", "--gpus", "2"}, "--gpus sets the GPU"},
		{[]string{"solve", "--engine", "gpu", "--gpus", "0"}, "at least 1"},
		{[]string{"solve", "--engine", "gpu", "--gpus", "2x"}, "PxQ"},
		{[]string{"solve", "--engine", "gpu", "--gpus", "2", "--matrix", "randsvd"}, "hpl-mxp"},
		{[]string{"solve", "--engine", "gpu", "--gpus", "2", "--factor", "tc32"}, "fused"},
		{[]string{"solve", "--engine", "gpu", "--gpus", "2", "--bench", "64,x"}, "sizes"},
		{[]string{"solve", "--engine", "gpu", "--gpus", "2", "--b", "b.npy"}, "--b needs --a"},
		{[]string{"solve", "--engine", "gpu", "--gpus", "2", "--a", "A.npy", "--bench", "64"}, "--a is solved once"},
		{[]string{"solve", "--engine", "gpu", "--gpus", "2", "--size", "0"}, "at least 1"},
		{[]string{"solve", "--engine", "gpu", "--gpus", "2x1", "--pivot", "partial"}, "1xQ grid"},
		{[]string{"solve", "--engine", "gpu", "--gpus", "2", "--pivot", "butterfly"}, "auto, none or partial"},
	} {
		code, _, errOut := mwmm(t, "", c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 mentioning %q", c.args, code, errOut, c.want)
		}
	}
}

// --engine model:UNIT and reference mean --unit, as in gemm.
func TestSolveEngineNames(t *testing.T) {
	_, viaUnit, _ := mwmm(t, "", "lu", "--size", "40", "--factor", "tc32", "--unit", "a100", "--json")
	_, viaEngine, _ := mwmm(t, "", "lu", "--size", "40", "--factor", "tc32", "--engine", "model:a100", "--json")
	noTime := regexp.MustCompile(`"seconds": [0-9.e-]+`)
	viaUnit, viaEngine = noTime.ReplaceAllString(viaUnit, ""), noTime.ReplaceAllString(viaEngine, "")
	if viaUnit == "" || viaUnit != viaEngine {
		t.Errorf("lu --unit a100 and --engine model:a100 differ:\n%s\n%s", viaUnit, viaEngine)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"lu", "--engine", "model:a100", "--unit", "v100"}, "two units"},
		{[]string{"lu", "--engine", "gpu"}, "solve --engine gpu"},
		{[]string{"solve", "--engine", "cpu"}, "model:UNIT"},
	} {
		code, _, errOut := mwmm(t, "", c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 mentioning %q", c.args, code, errOut, c.want)
		}
	}
}

// The report names how each GPU form factors, with the word a TC32 update
// rounds to as the docs name it.
func TestGPUUpdateName(t *testing.T) {
	for name, want := range map[string]string{
		"tc32-fp16":          "cuBLASLt (fp16 words",
		"tc32-bf16":          "cuBLASLt (bf16 words",
		"tc32-tf32":          "cuBLASLt (TF32 words",
		"double-fp16-fabsum": "fused kernel (double-fp16-fabsum)",
		"fp64":               "cuSOLVER dgetrf (fp64)",
		"ozaki-int8x6":       "blocked LU in fp64, nb 1024, updates on the int8 tensor cores (Ozaki scheme, 6 digits)",
	} {
		f, err := dense.ParseLUForm(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := gpuUpdateName(f, 1024); !strings.Contains(got, want) {
			t.Errorf("%s: %q, want it to say %q", name, got, want)
		}
	}
}

// On a GPU, the report says how the LU pivoted: not at all for the
// diagonally dominant kind, partially for a centered A.
func TestSolveGPUPivoting(t *testing.T) {
	if err := gpu.Available(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	for kind, want := range map[string]string{
		"diagdom":  "pivoting  none: A is strictly diagonally dominant by rows",
		"centered": "pivoting  partial",
	} {
		code, out, errOut := mwmm(t, "", "solve", "--engine", "gpu", "--size", "300", "--nb", "64", "--matrix", kind, "--factor", "tc32")
		if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "converged") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want it to say %q", kind, code, out, errOut, want)
		}
	}
	// An ill-conditioned A that fp32-accurate factors leave to hundreds of
	// GMRES iterations: 7 digits of int8 words converge in a few.
	code, out, errOut := mwmm(t, "", "solve", "--engine", "gpu", "--size", "1000", "--matrix", "randsvd:kappa=1e10",
		"--factor", "ozaki-int8x7", "--refine", "gmres")
	if code != 0 || !strings.Contains(out, "Ozaki scheme, 7 digits") || !regexp.MustCompile(`converged: .*; [0-2] steps?, [0-5] GMRES`).MatchString(out) {
		t.Errorf("ozaki-int8x7, κ = 1e10: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ = mwmm(t, "", "solve", "--engine", "gpu", "--size", "300", "--nb", "64", "--matrix", "diagdom", "--pivot", "partial")
	if code != 0 || !strings.Contains(out, "pivoting  partial") {
		t.Errorf("--pivot partial: exit %d, stdout %q", code, out)
	}
	// --factor auto below n = 16384: fp64 after the butterfly transform on
	// a random A; on the reversal permutation, which the transform cannot
	// mix, partial pivoting, saying why.
	code, out, errOut = mwmm(t, "", "solve", "--engine", "gpu", "--size", "300", "--matrix", "centered")
	if code != 0 || !strings.Contains(out, "pivoting  none, after a random butterfly transform") || !strings.Contains(out, "dgetrf") {
		t.Errorf("auto on centered: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	const n = 64
	rev := make([]float64, n*n)
	for i := 0; i < n; i++ {
		rev[i*n+n-1-i] = 1
	}
	a := saveNpy(t, t.TempDir(), "rev.npy", n, n, rev)
	// The bench times auto as a solve runs it, and says which form answered.
	code, out, errOut = mwmm(t, "", "solve", "--engine", "gpu", "--bench", "300", "--matrix", "centered,diagdom", "--factor", "auto,tc32")
	for _, want := range []string{"mwmm auto", "ok: fp64 (butterfly, no pivoting)", "ok: fp64 (no pivoting)", "mwmm tc32-fp16"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("--bench --factor auto: exit %d, stdout %q, stderr %q; want %q", code, out, errOut, want)
		}
	}
	rhs := make([]float64, n)
	for i := range rhs {
		rhs[i] = float64(i%3) - 1
	}
	b := saveNpy(t, t.TempDir(), "b.npy", n, 1, rhs)
	code, out, errOut = mwmm(t, "", "solve", "--engine", "gpu", "--a", a, "--b", b)
	if code != 0 || !strings.Contains(out, "pivoting  partial, as the butterfly transform failed") || !strings.Contains(out, "converged") {
		t.Errorf("auto on the reversal: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// The benchmark's timing wrappers keep GMRES's basis on the device: its
// iterations show up as GMRES time, not as the wrappers' products and
// solves one by one.
func TestSolveGPUBenchGMRESOnDevice(t *testing.T) {
	if err := gpu.Available(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	table := filepath.Join(t.TempDir(), "t.csv")
	code, out, errOut := mwmm(t, "", "solve", "--engine", "gpu", "--bench", "512", "--nb", "128", "--matrix", "centered",
		"--factor", "tc32-bf16", "--refine", "gmres", "--profile", "--csv", table)
	if code != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	recs, col := readTable(t, table)
	found := false
	for _, r := range recs[1:] {
		if r[col["method"]] != "mwmm tc32-bf16" {
			continue
		}
		found = true
		inner, _ := strconv.Atoi(r[col["inner"]])
		gmres, _ := strconv.ParseFloat(r[col["gmres_seconds"]], 64)
		if inner == 0 || !(gmres > 0) {
			t.Errorf("%d GMRES iterations in %v s on the device's basis; want some, timed", inner, gmres)
		}
	}
	if !found {
		t.Errorf("no tc32-bf16 row in %v", recs)
	}
}

// --panel sgetrf,recursive times each blocked form both ways, named by
// its panel, and cuSOLVER's own getrf once; the pivoting column says which
// panel pivoted.
func TestSolveGPUBenchPanels(t *testing.T) {
	if err := gpu.Available(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	table := filepath.Join(t.TempDir(), "t.csv")
	code, out, errOut := mwmm(t, "", "solve", "--engine", "gpu", "--bench", "300", "--nb", "64", "--matrix", "centered",
		"--factor", "double-fp16-fabsum,fp64", "--pivot", "partial", "--panel", "sgetrf,recursive", "--csv", table)
	if code != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	recs, col := readTable(t, table)
	got := map[string]string{}
	for _, r := range recs[1:] {
		if m := r[col["method"]]; strings.HasPrefix(m, "mwmm ") {
			got[strings.TrimPrefix(m, "mwmm ")] = r[col["pivoting"]]
		}
	}
	want := map[string]string{
		"double-fp16-fabsum+sgetrf":    "partial",
		"double-fp16-fabsum+recursive": "partial, recursive panels",
		"fp64":                         "partial",
	}
	if !maps.Equal(got, want) {
		t.Errorf("methods and pivoting %v, want %v", got, want)
	}
}

// readTable reads a --csv table: its records (the header first) and each
// column's index by name.
func readTable(t *testing.T, path string) ([][]string, map[string]int) {
	t.Helper()
	recs := readCSV(t, path)
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	return recs, col
}
