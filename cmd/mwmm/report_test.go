package main

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/internal/npy"
)

// A solve that stalls says which step's backward error it reports (the
// best, whose x it keeps), not only the last step's table row.
func TestSolveSaysBestStep(t *testing.T) {
	args := []string{"solve", "--size", "256", "--tol", "1e-30"} // stalls: steps 3, 4, 5 at 4.6e-17, 3.6e-17, 4.0e-17
	code, out, errOut := mwmm(t, "", args...)
	_, js, _ := mwmm(t, "", append(args, "--json")...)
	var rep struct {
		BestStep int `json:"best_step"`
		Steps    []struct {
			Iteration int `json:"iteration"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil || len(rep.Steps) == 0 {
		t.Fatalf("--json: %v\n%s", err, js)
	}
	best := fmt.Sprintf("best: step %d, backward error", rep.BestStep)
	if code != exitFailure || !strings.Contains(errOut, "best backward error") ||
		rep.BestStep == rep.Steps[len(rep.Steps)-1].Iteration || !strings.Contains(out, best) {
		t.Errorf("exit %d, best step %d of %d\nstdout %q\nstderr %q; want the best step said", code, rep.BestStep, len(rep.Steps), out, errOut)
	}
}

// NaN inputs are warned of, as overflow is.
func TestGemmWarnsNaNInputs(t *testing.T) {
	dir := t.TempDir()
	a := npy.Matrix{Rows: 2, Cols: 2, Data: []float64{1, 0, 0, 1}, Dtype: "float64"}
	b := npy.Matrix{Rows: 2, Cols: 2, Data: []float64{math.NaN(), 1, 1, 1}, Dtype: "float64"}
	pa, pb := filepath.Join(dir, "A.npy"), filepath.Join(dir, "B.npy")
	if err := npy.WriteFile(pa, a); err != nil {
		t.Fatal(err)
	}
	if err := npy.WriteFile(pb, b); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := mwmm(t, "", "gemm", "--a", pa, "--b", pb)
	if code != 0 || !strings.Contains(errOut, "warning: 0 entries of A and 1 entry of B are NaN or infinite") {
		t.Errorf("exit %d, stderr %q; want a warning of B's NaN", code, errOut)
	}
}

// Counts agree with their nouns (docs/cli.md).
func TestCountsAgree(t *testing.T) {
	_, out, _ := mwmm(t, "", "gemm", "--variants")
	if strings.Contains(out, "word(s)") || strings.Contains(out, " 1 products") || !strings.Contains(out, "1 e4m3 word, 1 product,") {
		t.Errorf("gemm --variants:\n%s", out)
	}
	for n, want := range map[int]string{1: "1 entry", 3: "3 entries"} {
		if got := count(n, "entry"); got != want {
			t.Errorf("count(%d, entry) = %q", n, got)
		}
	}
	if got := roundDuration(60e9); got != "1 minute" {
		t.Errorf("roundDuration(1m) = %q", got)
	}
}
