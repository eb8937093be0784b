package main

import (
	"encoding/csv"
	"flag"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/experiment"
	"github.com/mwmm/mwmm/gpu"
)

// The matrix classes people use solve end to end on the CPU engines:
// Fasi and Higham's matrix at κ∞ = 1e6 and HPL-MxP's with a milder
// diagonal, refined to the fp64 tolerance; the first factors without a
// row interchange.
func TestSolveMatrixClasses(t *testing.T) {
	for _, m := range []string{"fasi-higham:kappa=1e6", "hpl-mxp:scale=0.5", "hpl-mxp", "fasi-higham:kappa=1e3,scale=3"} {
		code, out, errOut := mwmm(t, "", "solve", "--size", "64", "--matrix", m)
		canon, _ := experiment.ParseMatrix(m)
		if code != 0 || !strings.Contains(out, "\nconverged: ") || !strings.Contains(out, "matrix  "+canon.String()+", 64×64") {
			t.Errorf("solve --matrix %s: exit %d\n%s%s", m, code, out, errOut)
		}
	}
	code, out, errOut := mwmm(t, "", "lu", "--size", "64", "--matrix", "fasi-higham:kappa=1e4", "--pivot", "none", "--factor", "fp64")
	be := regexp.MustCompile(`backward error +([0-9.e+-]+)`).FindStringSubmatch(out)
	if code != 0 || !strings.Contains(out, "none, 0 row swaps") || be == nil || !(atof(be[1]) < 1e-14) {
		t.Errorf("lu --pivot none on fasi-higham: exit %d\n%s%s", code, out, errOut)
	}
}

func atof(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// A bad --matrix fails alike on every command and engine (exit 2), and
// names what is wrong; --bench a needs --a, and --bench SIZES refuses it.
func TestMatrixClassesUsage(t *testing.T) {
	dir := t.TempDir()
	a := saveNpy(t, dir, "A.npy", 2, 2, []float64{2, 1, 1, 2})
	b := saveNpy(t, dir, "b.npy", 2, 1, []float64{1, 1})
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"solve", "--matrix", "hpl-mxp:scale=0"}, `scale "0": want a finite number > 0`},
		{[]string{"lu", "--matrix", "hpl-mxp:kappa=3"}, `unknown option "kappa": hpl-mxp takes scale`},
		{[]string{"solve", "--matrix", "fasi-higham:kappa=1"}, `kappa "1": want a finite number > 1`},
		{[]string{"lu", "--matrix", "fasi-higham:scale=200"}, "decades in [0, 100]"},
		{[]string{"solve", "--matrix", "diagdom:scale=2"}, "diagdom takes no options"},
		{[]string{"solve", "--engine", "gpu", "--matrix", "fasi-higham:cond=3"}, `unknown option "cond": fasi-higham takes kappa, scale`},
		{[]string{"solve", "--engine", "gpu", "--bench", "64", "--matrix", "centered,hpl-mxp:scale=-1"}, "want a finite number > 0"},
		{[]string{"solve", "--engine", "gpu", "--gpus", "2", "--matrix", "hpl-mxp:scale=0.5"}, "hpl-mxp at its default scale"},
		{[]string{"solve", "--engine", "gpu", "--bench", "a"}, "--bench a times the system of --a"},
		{[]string{"solve", "--engine", "gpu", "--bench", "64", "--a", a, "--b", b}, "--bench a times the system of --a"},
		{[]string{"solve", "--engine", "gpu", "--bench", "64", "--b", b}, "--bench a times the system of --a"},
		{[]string{"solve", "--engine", "gpu", "--bench", "a", "--a", a, "--size", "4"}, "--size and --matrix describe a random A"},
		{[]string{"solve", "--engine", "gpu", "--csv", "t.csv", "--a", a, "--b", b}, "--bench a with --a"},
	} {
		code, _, errOut := mwmm(t, "", c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 mentioning %q", c.args, code, errOut, c.want)
		}
	}
}

// --bench a times the solvers on --a's system, at its order, b from --b
// or random: a row for getrf+getrs and each form, labelled with the file.
// Without a GPU it gets as far as looking for one.
func TestSolveBenchFile(t *testing.T) {
	dir := t.TempDir()
	const n = 64
	a := saveNpy(t, dir, "dominant.npy", n, n, experiment.MatrixSpec{Kind: "diagdom"}.Generate(1, "A", n))
	b := saveNpy(t, dir, "b.npy", n, 1, experiment.RandomVector(1, "b", n))
	table := filepath.Join(dir, "bench.csv")
	for _, extra := range [][]string{{"--b", b, "--csv", table}, nil} {
		args := append([]string{"solve", "--engine", "gpu", "--bench", "a", "--a", a, "--factor", "fp64,tc32"}, extra...)
		code, out, errOut := mwmm(t, "", args...)
		if err := gpu.Available(); err != nil {
			if code != 1 || !strings.Contains(errOut, "CUDA") {
				t.Errorf("%q without a GPU: exit %d, stderr %q", args, code, errOut)
			}
			continue
		}
		for _, want := range []string{"cuSOLVER getrf+getrs", "mwmm fp64", "mwmm tc32-fp16"} {
			if code != 0 || !regexp.MustCompile(`\n +64  dominant\.npy +`+regexp.QuoteMeta(want)).MatchString(out) {
				t.Errorf("%q: exit %d, no row %q:\n%s%s", args, code, want, out, errOut)
			}
		}
	}
	if gpu.Available() == nil {
		f, err := os.Open(table)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rows, err := csv.NewReader(f).ReadAll()
		if err != nil || len(rows) < 3 || rows[1][0] != "64" || rows[1][1] != "dominant.npy" {
			t.Errorf("--csv: %v, %q", err, rows)
		}
	}
}

// --bench's list of kinds keeps each kind's options together.
func TestBenchKindsClasses(t *testing.T) {
	o := &systemOptions{gpuOptions: gpuOptions{bench: "64"},
		systemSource: systemSource{matrix: "centered, hpl-mxp:scale=0.5,fasi-higham:kappa=1e8,scale=2,hpl-mxp"}}
	sizes, kinds, err := benchSystems(systemFlagsFor(t), o)
	var got []string
	for _, k := range kinds {
		got = append(got, k.spec.String())
	}
	want := "centered|hpl-mxp:scale=0.5|fasi-higham:kappa=1e8,scale=2|hpl-mxp"
	if err != nil || len(sizes) != 1 || strings.Join(got, "|") != want {
		t.Errorf("benchSystems: %v, %q, %v; want %q", sizes, got, err, want)
	}
}

func systemFlagsFor(t *testing.T) *flag.FlagSet {
	fs, _ := systemFlags("solve")
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	return fs
}

// On a GPU the new kinds are drawn there and solve: fasi-higham without
// pivoting, as it is meant, hpl-mxp with the milder diagonal by auto.
func TestSolveGPUMatrixClasses(t *testing.T) {
	if err := gpu.Available(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	for _, args := range [][]string{
		{"--matrix", "fasi-higham:kappa=1e6", "--pivot", "none", "--factor", "tc32"},
		{"--matrix", "fasi-higham:kappa=1e4,scale=2", "--pivot", "none", "--factor", "double-fp16-fabsum"},
		{"--matrix", "hpl-mxp:scale=0.5"},
		{"--matrix", "hpl-mxp", "--pivot", "none", "--factor", "tc32"},
	} {
		all := append([]string{"solve", "--engine", "gpu", "--size", "300", "--nb", "64"}, args...)
		code, out, errOut := mwmm(t, "", all...)
		if code != 0 || !strings.Contains(out, "drawn on the GPU") || !strings.Contains(out, "\nconverged: ") {
			t.Errorf("%q: exit %d\n%s%s", all, code, out, errOut)
		}
	}
}
