package main

import (
	"strings"
	"testing"

	"github.com/mwmm/mwmm/internal/budget"
)

// Sizes whose products overflow are a bad command line (2), with or
// without --force; no panic, no negative time.
func TestSizeOverflow(t *testing.T) {
	for _, args := range [][]string{
		{"gemm", "--size", "9223372036854775807,2,2"},
		{"gemm", "--size", "9223372036854775807,2,2", "--force"},
		{"lu", "--size", "3037000500", "--factor", "fp64"},
		{"lu", "--size", "4294967296"},
		{"solve", "--size", "4294967296", "--force"},
	} {
		code, out, errOut := mwmm(t, "", args...)
		if code != exitUsage || !strings.Contains(errOut, "more than any machine") || strings.Contains(errOut, "-") && strings.Contains(errOut, "h47m") || out != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2: the sizes overflow", args, code, out, errOut)
		}
	}
}

// Memory beyond the machine's is refused with the estimate (1), forced
// or not; time over an hour unless --force (2).
func TestSizeMemoryAndTime(t *testing.T) {
	if budget.Machine().Total == 0 {
		t.Skip("no /proc/meminfo")
	}
	for _, args := range [][]string{
		{"lu", "--size", "1000000"},
		{"lu", "--size", "1000000", "--force"},
		{"solve", "--size", "1000000", "--factor", "fp64"},
	} {
		code, out, errOut := mwmm(t, "", args...)
		if code != exitFailure || !strings.Contains(errOut, "GB of memory") || out != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 1 with the memory estimate", args, code, out, errOut)
		}
	}
	// As the 11.9 hours (40000 in fp64, 38 GB): refused before it
	// starts, as gemm refuses; 8000 in a multiword form fits in memory.
	for _, cmd := range []string{"lu", "solve"} {
		code, _, errOut := mwmm(t, "", cmd, "--size", "8000", "--factor", "double-fp16-fabsum")
		if code != exitUsage || !strings.Contains(errOut, "hours") || !strings.Contains(errOut, "--force") {
			t.Errorf("%s --size 8000: exit %d, stderr %q; want 2 with the estimate and --force", cmd, code, errOut)
		}
	}
}
