package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mwmm/mwmm/internal/npy"
)

// --json writes NaN and ±Inf as strings, as bound --json does, instead of
// failing with "json: unsupported value" (and no JSON).
func TestJSONNonFinite(t *testing.T) {
	dir := t.TempDir()
	// 1e6·1e6 overflows double-fp16's words: C and its errors are not finite.
	a := writeNpy(t, dir, "Abig.npy", npy.Matrix{Rows: 2, Cols: 2, Data: []float64{1e6, 1e6, 1, 1}})
	b := writeNpy(t, dir, "B.npy", npy.Matrix{Rows: 2, Cols: 2, Data: []float64{1e6, 1, 1, 1}})
	code, out, errOut := mwmm(t, "", "gemm", "--a", a, "--b", b, "--check", "--json")
	var g struct {
		NonFinite int `json:"nonfinite"`
		Check     struct {
			Componentwise any `json:"componentwise"`
			Normwise      any `json:"normwise"`
		} `json:"check"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &g) != nil {
		t.Fatalf("gemm --json: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if g.NonFinite == 0 || !isNonFinite(g.Check.Componentwise) && !isNonFinite(g.Check.Normwise) {
		t.Errorf("gemm --json: %s: want non-finite errors as strings", out)
	}

	// A NaN tolerance is no longer a value to report: it is refused.
	code, out, errOut = mwmm(t, "", "solve", "--size", "8", "--tol", "nan", "--json")
	if code != exitUsage || out != "" || !strings.Contains(errOut, "--tol") {
		t.Errorf("solve --tol nan --json: exit %d, stdout %q, stderr %q; want a usage error", code, out, errOut)
	}
}

func isNonFinite(v any) bool {
	s, ok := v.(string)
	return ok && (s == "NaN" || s == "+Inf" || s == "-Inf")
}

// Every command that writes checks its output paths before the work: a
// path that cannot be written fails at once (exit 1) with nothing on
// stdout and no temporary file; the message names the flag and the path.
func TestOutputsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	nodir := filepath.Join(dir, "nodir", "x.npy")
	x := writeNpy(t, dir, "x.npy", npy.Matrix{Rows: 3, Cols: 1, Data: []float64{1, 2, 3}})
	csv := writeFile(t, dir, "t.csv", []byte("n,matrix,method,seconds,outer,inner,status\n64,centered,fp32,0.1,1,0,ok\n"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"gemm", "--size", "2,16,2", "--out", nodir}, "--out " + nodir + ": no folder"},
		{[]string{"lu", "--size", "300", "--factor", "tc16", "--out", nodir}, "--out " + nodir + ": no folder"},
		{[]string{"lu", "--size", "300", "--factor", "tc16", "--perm", dir}, "--perm " + dir + " is a folder"},
		{[]string{"solve", "--size", "300", "--factor", "tc16", "--x", nodir}, "--x " + nodir + ": no folder"},
		{[]string{"round", "--format", "fp16", "--in", x, "--out", dir}, "--out " + dir + " is a folder"},
		{[]string{"round", "--block-format", "mxfp8", "--codes", "--in", x, "--out", filepath.Join(dir, "c.npy"), "--scales", nodir}, "--scales " + nodir + ": no folder"},
		{[]string{"probe", "--unit", "t4", "--crosscheck", "40", "--record", nodir}, "--record " + nodir + ": no folder"},
		{[]string{"bench", "--csv", nodir}, "--csv " + nodir + ": no folder"},
		{[]string{"solve", "--engine", "gpu", "--bench", "64", "--csv", nodir}, "--csv " + nodir + ": no folder"},
		{[]string{"solve", "--engine", "gpu", "--bench", "64", "--plot", filepath.Join(dir, "nodir", "p")}, "--plot " + filepath.Join(dir, "nodir", "p") + "-time.png: no folder"},
		{[]string{"solve", "--replot", csv, "--plot", filepath.Join(dir, "nodir", "p")}, "--plot " + filepath.Join(dir, "nodir", "p") + "-time.png: no folder"},
	} {
		code, out, errOut := mwmm(t, "", tc.args...)
		if code != exitFailure || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 and %q before any work", tc.args, code, out, errOut, tc.want)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*partial")); len(m) > 0 {
		t.Errorf("left behind: %v", m)
	}
	// One stdout, one file per path: a bad command line.
	for _, args := range [][]string{
		{"lu", "--size", "8", "--out", "-", "--perm", "-"},
		{"lu", "--size", "8", "--out", x, "--perm", x},
	} {
		if code, _, errOut := mwmm(t, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d, stderr %q; want 2", args, code, errOut)
		}
	}
}

// lu --perm writes int64 indices (NumPy cannot index with floats).
func TestLUPermInt64(t *testing.T) {
	perm := filepath.Join(t.TempDir(), "P.npy")
	if code, _, errOut := mwmm(t, "", "lu", "--size", "20", "--factor", "fp32", "--perm", perm); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	p, err := npy.ReadFile(perm)
	if err != nil || p.Dtype != "int64" || p.Rows != 20 {
		t.Fatalf("P.npy: %v, %+v", err, p)
	}
	seen := map[float64]bool{}
	for _, v := range p.Data {
		seen[v] = v >= 0 && v < 20
	}
	if len(seen) != 20 {
		t.Errorf("not a permutation of 0..19: %v", p.Data)
	}
}

// --out - writes the array to stdout; the report goes to stderr.
func TestOutStdout(t *testing.T) {
	code, out, errOut := mwmm(t, "", "gemm", "--size", "3,4,5", "--out", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	c, err := npy.Read(strings.NewReader(out))
	if err != nil || c.Rows != 3 || c.Cols != 5 || !strings.Contains(errOut, "plan") {
		t.Errorf("gemm --out -: %v, %d×%d; stderr %q", err, c.Rows, c.Cols, errOut)
	}
	code, out, errOut = mwmm(t, "", "solve", "--size", "6", "--x", "-", "--json")
	x, err := npy.Read(strings.NewReader(out))
	if code != 0 || err != nil || x.Rows != 6 || !strings.Contains(errOut, `"converged": true`) {
		t.Errorf("solve --x -: exit %d, %v, %d rows; stderr %q", code, err, x.Rows, errOut)
	}
}

// An output that is a FIFO is written in place: it stays a FIFO (round
// renamed its temporary file over it, as over /dev/full).
func TestOutputFIFO(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "y.npy")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Skip("no FIFOs:", err)
	}
	x := writeNpy(t, dir, "x.npy", npy.Matrix{Rows: 3, Cols: 1, Data: []float64{1, 1.0 / 3, 70000}})
	got := make(chan []byte)
	go func() {
		f, err := os.Open(pipe) // blocks until round opens the FIFO
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- b
	}()
	code, _, errOut := mwmm(t, "", "round", "--format", "fp16", "--in", x, "--out", pipe)
	st, statErr := os.Lstat(pipe)
	// Unblock the reader if round did not open the FIFO: the reader gets
	// nothing more.
	if f, err := os.OpenFile(pipe, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
	if statErr != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("y.npy is now %v (%v), not a FIFO", st.Mode(), statErr)
	}
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	y, err := npy.Read(bytes.NewReader(<-got))
	if err != nil || len(y.Data) != 3 || y.Data[1] != 0.333251953125 || !math.IsInf(y.Data[2], 1) {
		t.Errorf("read from the FIFO: %v %v", y.Data, err)
	}
}
