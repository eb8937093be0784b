package main

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/internal/npy"
)

// Issue 28, defect 7: a key given twice in a format, unit or variant spec
// is refused; before, the last value won silently.
func TestSpecKeyGivenTwice(t *testing.T) {
	for _, args := range [][]string{
		{"formats", "custom:p=5,emin=-6,emax=7,p=6"},
		{"round", "--format", "custom:p=5,emin=-6,emax=7,p=6", "1"},
		{"mma", "eval", "--unit", "v100:k=4,k=8"},
		{"gemm", "--variant", "double-fp16:sum=v2,b=64,b=128"},
		{"gemm", "--variant", "double-fp16:sum=v2,b=64,block=128"}, // an alias is the same key
		{"gemm", "--variant", "double-fp16:b=64", "--fabsum", "v2", "-b", "128"},
	} {
		code, _, errOut := mwmm(t, "", args...)
		if code != exitUsage || !strings.Contains(errOut, "given") {
			t.Errorf("%q: exit %d, stderr %q; want 2 saying the key is given twice", args, code, errOut)
		}
	}
	// --fabsum's default block does not override the variant's b=.
	code, out, errOut := mwmm(t, "", "gemm", "--size", "2,64,2", "--variant", "double-fp16:b=16", "--fabsum", "v2")
	if code != 0 || !strings.Contains(out, "FABsum-v2 b=16") {
		t.Errorf("exit %d, stdout %q, stderr %q; want the variant's b=16", code, out, errOut)
	}
}

// Issue 28, defect 7: b=0 means one block of the whole inner dimension in
// the variant and in --block alike, and a block without FABsum is refused
// in both (double-fp16:b=0 was accepted and ignored).
func TestGemmBlockZero(t *testing.T) {
	var cs [2][]float64
	for i, args := range [][]string{
		{"--variant", "double-fp16:sum=v2,b=0"},
		{"--variant", "double-fp16", "--fabsum", "v2", "-b", "0"},
	} {
		dir := t.TempDir()
		out := filepath.Join(dir, "C.npy")
		args = append([]string{"gemm", "--size", "3,300,2", "--dist", "centered", "--out", out}, args...)
		code, stdout, errOut := mwmm(t, "", args...)
		if code != 0 || !strings.Contains(stdout, "FABsum-v2 b=k") {
			t.Fatalf("%q: exit %d, stdout %q, stderr %q; want FABsum-v2 b=k", args, code, stdout, errOut)
		}
		c, err := npy.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		cs[i] = c.Data
	}
	for i := range cs[0] {
		if cs[0][i] != cs[1][i] {
			t.Errorf("C[%d]: %g from the variant, %g from the flags", i, cs[0][i], cs[1][i])
		}
	}
	for _, args := range [][]string{
		{"gemm", "--variant", "double-fp16:b=0"},
		{"gemm", "--variant", "double-fp16:group=4"},
		{"gemm", "-b", "0"},
		{"gemm", "--fabsum", "v2", "--block", "-1"},
	} {
		if code, _, errOut := mwmm(t, "", args...); code != exitUsage || !strings.Contains(errOut, "fabsum") && !strings.Contains(errOut, "sum=") && !strings.Contains(errOut, "≥ 0") {
			t.Errorf("%q: exit %d, stderr %q; want 2 naming FABsum", args, code, errOut)
		}
	}
}

// Issue 28, defect 7: flags that draw random matrices are refused beside
// --a and --b, and -b read as the block size says so when --b is missing.
func TestGemmInputFlags(t *testing.T) {
	dir := t.TempDir()
	pa := writeNpy(t, dir, "A.npy", npy.Matrix{Rows: 2, Cols: 2, Data: []float64{1, 2, 3, 4}})
	pb := writeNpy(t, dir, "B.npy", npy.Matrix{Rows: 2, Cols: 2, Data: []float64{1, 2, 3, 4}})
	for _, f := range [][]string{{"--size", "4,4,4"}, {"--dist", "normal"}, {"--seed", "3"}} {
		args := append([]string{"gemm", "--a", pa, "--b", pb}, f...)
		if code, _, errOut := mwmm(t, "", args...); code != exitUsage || !strings.Contains(errOut, f[0]) {
			t.Errorf("%q: exit %d, stderr %q; want 2 naming %s", args, code, errOut, f[0])
		}
	}
	code, _, errOut := mwmm(t, "", "gemm", "-b", "x64")
	if code != exitUsage || !strings.Contains(errOut, "--b x64 names B's file") || !strings.Contains(errOut, "-b 256") {
		t.Errorf("-b x64 alone: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = mwmm(t, "", "gemm", "--a", pa, "--fabsum", "v2", "-b", "64")
	if code != exitUsage || !strings.Contains(errOut, "-b 64 is the FABsum block size") {
		t.Errorf("-b 64 beside --a: exit %d, stderr %q", code, errOut)
	}
}

// Issue 28, defect 2: inputs that underflow the words warn (A of 1e-40s
// gave error 1 and exit 0 silently); data whose tiny entries do not matter
// (uniform in (0,1], most of whose rows hold entries below fp16's normal
// range) does not; with --scale there is nothing to warn about.
func TestGemmUnderflowWarning(t *testing.T) {
	dir := t.TempDir()
	tiny := make([]float64, 4*8)
	for i := range tiny {
		tiny[i] = 1e-40
	}
	ones := make([]float64, 8*3)
	for i := range ones {
		ones[i] = 1
	}
	pa := writeNpy(t, dir, "A.npy", npy.Matrix{Rows: 4, Cols: 8, Data: tiny, Dtype: "float32"})
	pb := writeNpy(t, dir, "B.npy", npy.Matrix{Rows: 8, Cols: 3, Data: ones, Dtype: "float32"})
	code, out, errOut := mwmm(t, "", "gemm", "--a", pa, "--b", pb, "--check", "--json")
	var s gemmSummary
	if code != 0 || json.Unmarshal([]byte(out), &s) != nil || s.Check == nil {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if s.Check.Componentwise != 1 {
		t.Errorf("componentwise error %g; the words of 1e-40 are 0 in fp16, so 1 is expected", s.Check.Componentwise)
	}
	for _, want := range []string{"warning", "4 of 4 rows of A and 0 of 3 columns of B underflow", "fp16", "--scale"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q lacks %q", errOut, want)
		}
	}
	code, out, errOut = mwmm(t, "", "gemm", "--a", pa, "--b", pb, "--check", "--json", "--scale")
	s = gemmSummary{}
	if code != 0 || errOut != "" || json.Unmarshal([]byte(out), &s) != nil || s.Check == nil || s.Check.Componentwise > 1e-6 {
		t.Errorf("--scale: exit %d, stderr %q, check %+v; want no warning and a small error", code, errOut, s.Check)
	}
	for _, dist := range []string{"uniform", "centered", "normal"} {
		if code, _, errOut := mwmm(t, "", "gemm", "--size", "16,1024,16", "--dist", dist); code != 0 || errOut != "" {
			t.Errorf("--dist %s: exit %d, stderr %q; want no warning", dist, code, errOut)
		}
	}
}

// With --scale on, the overflow warning does not suggest --scale.
func TestGemmOverflowHintWithScale(t *testing.T) {
	code, _, errOut := mwmm(t, "", "gemm", "--size", "2,8,2", "--variant", "fp16:theta=1e6", "--scale")
	if code != 0 || !strings.Contains(errOut, "overflow") || strings.Contains(errOut, "try --scale") || !strings.Contains(errOut, "θ = 1e+06") {
		t.Errorf("exit %d, stderr %q; want an overflow warning naming θ, not --scale", code, errOut)
	}
}

// Issue 28, defect 8: sizes the CPU engines would take hours over are
// refused with the estimate (16384³ was accepted); --check's time shows.
func TestGemmCost(t *testing.T) {
	code, _, errOut := mwmm(t, "", "gemm", "--size", "16384,16384,16384")
	if code != exitUsage || !strings.Contains(errOut, "hours") || !strings.Contains(errOut, "--force") {
		t.Errorf("exit %d, stderr %q; want 2 with the estimate and --force", code, errOut)
	}
	// The issue measured ~10 s for this one on the V100 model: gemm says
	// "estimated" on stderr from 10 s and shows progress from 3 s.
	if c := gemmEstimate("model:v100", 3, 128, 4096, 128); c.Seconds < 5 || c.Seconds > 60 {
		t.Errorf("128×4096×128 on model:v100 estimated %v s; measured ~10 s", c.Seconds)
	}
	code, out, _ := mwmm(t, "", "gemm", "--size", "2,16,2", "--check")
	if code != 0 || !strings.Contains(out, "check time") {
		t.Errorf("exit %d, stdout %q; want the check's time", code, out)
	}
}

// Issue 28, defect 8: a probe of a unit with huge blocks is refused with
// its estimate (v100:k=65536 ran out of memory after minutes).
func TestProbeLargeK(t *testing.T) {
	code, _, errOut := mwmm(t, "", "probe", "--unit", "v100:k=65536")
	if code != exitUsage || !strings.Contains(errOut, "hours") || !strings.Contains(errOut, "--force") || !strings.Contains(errOut, "k ≤ 1024") {
		t.Errorf("exit %d, stderr %q; want 2 with the estimate, the limit and --force", code, errOut)
	}
	if d, _ := probeCost(1024); d.Seconds() < 5 || d.Seconds() > 60 {
		t.Errorf("k=1024 estimated %v; measured 12 s", d)
	}
}

// Issue 28, defect 3: θ beyond the formats' range is refused with the
// condition that fails.
func TestBoundThetaRange(t *testing.T) {
	for _, c := range []struct{ theta, want string }{
		{"1e30", "θ = 1e+30 > f_max = 448"},
		{"400", "n·θ² = 6.4e+05 > F_max = 65504"},
	} {
		code, _, errOut := mwmm(t, "", "bound", "--narrow", "--low", "e4m3", "--high", "fp16", "-n", "4", "--theta", c.theta)
		if code != exitUsage || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "e4m3 inputs and fp16 accumulation") ||
			strings.Count(errOut, "bound:") != 1 {
			t.Errorf("--theta %s: exit %d, stderr %q; want 2, %q, the formats and one prefix", c.theta, code, errOut, c.want)
		}
	}
	if code, _, errOut := mwmm(t, "", "bound", "--narrow", "--low", "e4m3", "--high", "fp16", "-n", "4", "--theta", "100"); code != 0 {
		t.Errorf("--theta 100 (n·θ² = 40000 ≤ 65504): exit %d, %s", code, errOut)
	}
}

// Issue 28, defect 10: messages name the format, use the right article and
// number, and carry one prefix, the command's.
func TestMessages(t *testing.T) {
	for _, c := range []struct {
		args     []string
		want     []string
		notWant  []string
		toStdout bool
	}{
		{args: []string{"formats", "custom:p=0,emin=-6,emax=7"}, want: []string{"format custom:p=0,emin=-6,emax=7: precision p=0"}, notWant: []string{"format :"}},
		{args: []string{"gemm", "--variant", "e4m3", "--size", "1,1,1"}, want: []string{"1×e4m3 word,", "1 product of words"}, notWant: []string{"1×e4m3 words", "products of"}, toStdout: true},
		{args: []string{"gemm", "--variant", "double-fp16:sum=v9"}, want: []string{"mwmm gemm: variant \"double-fp16:sum=v9\": sum=v9: unknown summation"}, notWant: []string{"multiword:", "bound:"}},
		{args: []string{"mma", "eval", "--unit", "v100:k=x"}, want: []string{"mwmm mma: unit \"v100:k=x\": k=x: \"x\" is not a number"}, notWant: []string{"mwmm mma: mma:", "strconv"}},
		{args: []string{"gemm", "--variant", "double-fp16:sum=v2,b=1.5"}, want: []string{"b=1.5: \"1.5\" is not a number"}, notWant: []string{"strconv", "multiword:"}},
	} {
		code, out, errOut := mwmm(t, "", c.args...)
		got := errOut
		if c.toStdout {
			got = out
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q: exit %d, output %q lacks %q", c.args, code, got, w)
			}
		}
		for _, w := range c.notWant {
			if strings.Contains(got, w) {
				t.Errorf("%q: output %q has %q", c.args, got, w)
			}
		}
	}
	for in, want := range map[string]string{
		"multiword: variant \"x\": sum=v9: bound: unknown":   "variant \"x\": sum=v9: unknown",
		"multiword: bound: format: x":                        "x",
		"the words' format: e4m3":                            "the words' format: e4m3", // not a prefix
		"unknown factorization (multiword: unknown variant)": "unknown factorization (unknown variant)",
	} {
		if got := oneMessage(errors.New(in)); got != want {
			t.Errorf("oneMessage(%q) = %q, want %q", in, got, want)
		}
	}
}

// Issue 28, defect 10: 'mwmm help' describes mwmm, not only rounding, and
// lists every command with its summary and the exit statuses.
func TestOverview(t *testing.T) {
	code, out, _ := mwmm(t, "", "help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, c := range commands {
		if !strings.Contains(out, "  "+c.name+" ") || !strings.Contains(out, c.summary) {
			t.Errorf("help lacks %s: %s", c.name, c.summary)
		}
	}
	for _, w := range []string{"tensor cores", "multiword", "bounds", "figures and tables", "Exit status", "docs/cli.md"} {
		if !strings.Contains(out, w) {
			t.Errorf("help lacks %q", w)
		}
	}
}

// Issue 28, defect 10: mwmm version.
func TestVersion(t *testing.T) {
	code, out, errOut := mwmm(t, "", "version")
	if code != 0 || !strings.Contains(out, "github.com/mwmm/mwmm") || !strings.Contains(out, runtime.Version()) {
		t.Errorf("exit %d, stdout %q, stderr %q; want the module and %s", code, out, errOut, runtime.Version())
	}
	code, out, _ = mwmm(t, "", "--version", "--json")
	var v buildVersion
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.Go != runtime.Version() || v.Version == "" {
		t.Errorf("--version --json: exit %d, %q", code, out)
	}
	if code, _, _ := mwmm(t, "", "version", "extra"); code != exitUsage {
		t.Errorf("version extra: exit %d, want 2", code)
	}
}

// An --out folder that does not exist fails before the product (exit 1:
// the file system, not the command line), not after it.
func TestGemmOutFolder(t *testing.T) {
	out := filepath.Join(t.TempDir(), "missing", "C.npy")
	code, stdout, errOut := mwmm(t, "", "gemm", "--size", "2,16,2", "--out", out)
	if code != exitFailure || stdout != "" || !strings.Contains(errOut, "no folder") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1 before any output", code, stdout, errOut)
	}
}
