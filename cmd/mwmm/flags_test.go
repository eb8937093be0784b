package main

import (
	"strings"
	"testing"
)

// Flag errors in the project's words, not Go's flag package's; a flag
// given twice is refused as a key given twice in a spec is.
func TestFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"round", "--format", "fp16", "--seed", "-1", "0.1"}, "--seed -1: want a whole number ≥ 0"},
		{[]string{"round", "--format", "fp16", "--format", "bf16", "0.1"}, "--format is given twice"},
		{[]string{"gemm", "--size", "2,2,2", "--json", "--json"}, "--json is given twice"},
		{[]string{"solve", "--max-iter", "x"}, "--max-iter x: want a whole number"},
		{[]string{"solve", "--max-iter", "1.5"}, "--max-iter 1.5: want a whole number"},
		{[]string{"solve", "--tol"}, "--tol needs a value"},
		{[]string{"solve", "--nosuch", "1"}, "unknown flag --nosuch"},
		{[]string{"bound", "-n", "4", "-b", "3", "--block", "4"}, "-b and --block are one flag"},
		{[]string{"bound", "--lu", "-n", "4", "--nb", "1e40"}, "--nb 1e40: want a whole number"},
	} {
		code, _, errOut := mwmm(t, "", c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "parse error") || strings.Contains(errOut, "for flag") {
			t.Errorf("%q: exit %d, stderr %q; want 2 saying %q", c.args, code, errOut, c.want)
		}
	}
}

// Counts written 1e6 (as the README writes 10^6) are the integers they are.
func TestFlagIntegerExponent(t *testing.T) {
	code, out, errOut := mwmm(t, "", "bound", "--lu", "-n", "1e6", "--nb", "3.2e1")
	code2, out2, _ := mwmm(t, "", "bound", "--lu", "-n", "1000000", "--nb", "32")
	if code != 0 || code2 != 0 || out != out2 {
		t.Errorf("--nb 3.2e1: exit %d, stderr %q, stdout %q; want that of --nb 32 (%q)", code, errOut, out, out2)
	}
}

// Values refused the same way on every machine are 2, before any work:
// a model unit that cannot run the plan (as mma eval and gemm say), a
// negative device, tolerances that are not positive numbers.
func TestExitUsageBeforeWork(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"experiment", "run", "fig3.1", "--quick", "--unit", "a100", "--out", dir}, "a100 has no fp32→fp32 unit"},
		{[]string{"bench", "--device", "-1"}, "--device -1"},
		{[]string{"solve", "--tol", "nan"}, "--tol"},
		{[]string{"solve", "--tol", "0"}, "--tol 0"},
		{[]string{"solve", "--max-inner", "0"}, "--max-inner 0"},
		{[]string{"solve", "--gmres-tol", "inf"}, "--gmres-tol"},
	} {
		code, out, errOut := mwmm(t, "", c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) || strings.Contains(out, "points") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 saying %q before any work", c.args, code, out, errOut, c.want)
		}
	}
}
