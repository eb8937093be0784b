package main

import (
	"encoding/json"
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

	code, out, errOut = mwmm(t, "", "solve", "--size", "8", "--tol", "nan", "--json")
	var s struct {
		Tol any `json:"tol"`
	}
	if json.Unmarshal([]byte(out), &s) != nil || s.Tol != "NaN" {
		t.Errorf("solve --tol nan --json: exit %d, stdout %q, stderr %q; want tol \"NaN\"", code, out, errOut)
	}
}

func isNonFinite(v any) bool {
	s, ok := v.(string)
	return ok && (s == "NaN" || s == "+Inf" || s == "-Inf")
}
