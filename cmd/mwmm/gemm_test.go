package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/internal/npy"
	"github.com/mwmm/mwmm/multiword"
)

func writeNpy(t *testing.T, dir, name string, m npy.Matrix) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := npy.WriteFile(path, m); err != nil {
		t.Fatal(err)
	}
	return path
}

// gemm reads A and B, writes C as float32 (the variant's output is
// fp32), and C is the library's result.
func TestGemmFiles(t *testing.T) {
	dir := t.TempDir()
	a := npy.Matrix{Rows: 2, Cols: 3, Data: []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, Dtype: "float64"}
	b := npy.Matrix{Rows: 3, Cols: 2, Data: []float64{1.5, -2, 1.0 / 3, 4, 5, 1e-3}, Dtype: "float32"}
	pa, pb := writeNpy(t, dir, "A.npy", a), writeNpy(t, dir, "B.npy", b)
	b, _ = npy.ReadFile(pb) // the float32 values gemm sees
	out := filepath.Join(dir, "C.npy")
	code, stdout, stderr := mwmm(t, "", "gemm", "--a", pa, "--b", pb, "--out", out, "--variant", "double-bf16", "--fabsum", "v1", "-b", "2", "--check")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"double-bf16:sum=v1,b=2", "componentwise error", "a-priori bound", "wrote"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	c, err := npy.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if c.Dtype != "float32" || c.Rows != 2 || c.Cols != 2 {
		t.Fatalf("C is %s %d×%d, want float32 2×2", c.Dtype, c.Rows, c.Cols)
	}
	plan, err := multiword.Lookup("double-bf16:sum=v1,b=2")
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float64, 4)
	if err := (multiword.Reference{}).Multiply(plan, 2, 2, 3, a.Data, b.Data, want); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if c.Data[i] != want[i] {
			t.Errorf("C[%d] = %g, want %g", i, c.Data[i], want[i])
		}
	}
}

func TestGemmJSON(t *testing.T) {
	code, stdout, stderr := mwmm(t, "", "gemm", "--size", "4,300,3", "--variant", "double-fp16", "--engine", "model:v100", "--check", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var s gemmSummary
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if s.M != 4 || s.K != 300 || s.N != 3 || s.Products != 3 || s.Engine != "model:v100" || s.Check == nil {
		t.Fatalf("summary %+v", s)
	}
	if !(s.Check.Componentwise > 0 && s.Check.Componentwise <= s.Check.Bound) {
		t.Errorf("error %g, bound %g: want 0 < error ≤ bound", s.Check.Componentwise, s.Check.Bound)
	}
}

// --fabsum pair adds the block sums into a TwoSum pair: the plan says so,
// C is the library's, and on a unit that rounds toward zero the error
// stays below the plan's bound.
func TestGemmFABsumPair(t *testing.T) {
	dir := t.TempDir()
	a := npy.Matrix{Rows: 2, Cols: 5, Data: []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1}, Dtype: "float64"}
	b := npy.Matrix{Rows: 5, Cols: 1, Data: []float64{1.0 / 3, 1.0 / 7, 1e-3, 2, 5}, Dtype: "float64"}
	pa, pb := writeNpy(t, dir, "A.npy", a), writeNpy(t, dir, "B.npy", b)
	out := filepath.Join(dir, "C.npy")
	code, stdout, stderr := mwmm(t, "", "gemm", "--a", pa, "--b", pb, "--out", out, "--variant", "double-fp16", "--fabsum", "pair", "-b", "2", "--first")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "double-fp16:sum=pair,b=2,first=on") || !strings.Contains(stdout, "FABsum-pair") {
		t.Errorf("the plan is not the pair's:\n%s", stdout)
	}
	c, err := npy.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := multiword.Lookup("double-fp16:sum=pair,b=2,first=on")
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float64, 2)
	if err := (multiword.Reference{}).Multiply(plan, 2, 1, 5, a.Data, b.Data, want); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if c.Data[i] != want[i] {
			t.Errorf("C[%d] = %g, want %g", i, c.Data[i], want[i])
		}
	}

	code, stdout, stderr = mwmm(t, "", "gemm", "--size", "3,2048,2", "--fabsum", "pair", "-b", "64", "--engine", "model:v100", "--check", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var s gemmSummary
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if !strings.HasPrefix(s.Plan, "double-fp16:sum=pair,b=64") || s.Check == nil || !(s.Check.Componentwise <= s.Check.Bound) {
		t.Errorf("summary %+v, check %+v: want the pair's plan and error ≤ bound", s, s.Check)
	}
}

// Entries beyond fp16's range overflow without --scale, with a warning.
func TestGemmOverflowWarning(t *testing.T) {
	dir := t.TempDir()
	pa := writeNpy(t, dir, "A.npy", npy.Matrix{Rows: 1, Cols: 2, Data: []float64{1e6, 1}})
	pb := writeNpy(t, dir, "B.npy", npy.Matrix{Rows: 2, Cols: 1, Data: []float64{1, 1}})
	code, _, stderr := mwmm(t, "", "gemm", "--a", pa, "--b", pb, "--variant", "fp16")
	if code != 0 || !strings.Contains(stderr, "overflow fp16") || !strings.Contains(stderr, "--scale") {
		t.Errorf("exit %d, stderr %q: want a warning about overflow and --scale", code, stderr)
	}
	code, stdout, stderr := mwmm(t, "", "gemm", "--a", pa, "--b", pb, "--variant", "fp16", "--scale", "--check")
	if code != 0 || stderr != "" || !strings.Contains(stdout, "componentwise error") {
		t.Errorf("with --scale: exit %d, stderr %q", code, stderr)
	}
}

func TestGemmErrors(t *testing.T) {
	dir := t.TempDir()
	pa := writeNpy(t, dir, "A.npy", npy.Matrix{Rows: 2, Cols: 3, Data: make([]float64, 6)})
	pb := writeNpy(t, dir, "B.npy", npy.Matrix{Rows: 2, Cols: 2, Data: make([]float64, 4)})
	ints := filepath.Join(dir, "I.npy") // complex64: no reader takes it
	header := "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }"
	header += strings.Repeat(" ", 128-10-len(header)-1) + "\n"
	raw := append([]byte("\x93NUMPY\x01\x00\x76\x00"), header...)
	if err := os.WriteFile(ints, append(raw, 0, 0, 0x80, 0x3f, 0, 0, 0, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--a", pa, "--b", pb}, 1, "A's columns and B's rows differ"},
		{[]string{"--a", ints, "--b", pb}, 1, "<c8"},
		{[]string{"--a", pa}, 2, "both --a and --b"},
		{[]string{"--a", filepath.Join(dir, "missing.npy"), "--b", pb}, 1, "missing.npy"},
		{[]string{"--variant", "quad-fp16"}, 2, "unknown variant"},
		{[]string{"--engine", "tpu"}, 2, "unknown engine"},
		{[]string{"--engine", "model:h900"}, 2, "h900"},
		{[]string{"-b", "64"}, 2, "needs --fabsum v1, v2 or pair"},
		{[]string{"--first"}, 2, "needs --fabsum v1, v2 or pair"},
		{[]string{"--fabsum", "v3"}, 2, "v3"},
		{[]string{"--size", "3,0,2"}, 2, "positive integer"},
		{[]string{"--size", "3,2"}, 2, "M,K,N"},
		{[]string{"--dist", "cauchy"}, 2, "cauchy"},
		{[]string{"--variant", "fp16", "--engine", "model:v100:k=0"}, 2, "k"},
		{[]string{"--variant", "bf16", "--engine", "model:v100"}, 2, "bf16"},
		{[]string{"--gpus", "2"}, 2, "--gpus goes with --engine gpu"},
		{[]string{"--engine", "gpu", "--gpus", "0"}, 2, "want at least 1"},
		{[]string{"--engine", "gpu", "--gpus", "two"}, 2, "PxQ"},
		{[]string{"--engine", "gpu", "--gpus", "0x2"}, 2, "PxQ"},
	} {
		code, _, stderr := mwmm(t, "", append([]string{"gemm"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("gemm %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

func TestGemmVariants(t *testing.T) {
	code, stdout, _ := mwmm(t, "", "gemm", "--variants")
	if code != 0 {
		t.Fatal(code)
	}
	for _, v := range multiword.Variants() {
		if !strings.Contains(stdout, v.Name) {
			t.Errorf("--variants lacks %s", v.Name)
		}
	}
	for _, s := range []string{"sum (plain|v1|v2|pair)", "fused kernel", "sum=pair", "joint (on", "joint=on"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("--variants: no %q in its footer:\n%s", s, stdout)
		}
	}
	_, stdout, _ = mwmm(t, "", "help", "gemm")
	for _, s := range []string{"--fabsum v1|v2|pair", "pair (in an fp32 TwoSum pair)", "TwoSum", "fused kernel", "joint=on"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("help gemm: no %q", s)
		}
	}
}

// B with fewer rows than columns (k < n): the underflow check read B's
// columns past its end and panicked.
func TestGemmWideB(t *testing.T) {
	if code, _, errOut := mwmm(t, "", "gemm", "--size", "3,4,5"); code != 0 {
		t.Errorf("gemm --size 3,4,5: exit %d: %s", code, errOut)
	}
}
