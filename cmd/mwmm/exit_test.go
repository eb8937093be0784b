package main

import (
	"strings"
	"testing"

	"github.com/mwmm/mwmm/gpu"
)

// Issue 28, defect 4: one exit-status rule (docs/cli.md). No GPU is a
// failure of this machine, 1, from every command; a value the command
// cannot take is 2 on every machine.
func TestExitNoGPU(t *testing.T) {
	if gpu.Available() == nil {
		t.Skip("this machine has a GPU")
	}
	dir := t.TempDir()
	for _, args := range [][]string{
		{"gemm", "--engine", "gpu"},
		{"bench"},
		{"probe", "--unit", "gpu:fma"},
		{"mma", "eval", "--unit", "gpu:fma"},
		{"experiment", "run", "fig4.1", "--quick", "--out", dir},
		{"experiment", "run", "fig3.1", "--quick", "--engine", "gpu", "--out", dir},
	} {
		code, _, errOut := mwmm(t, "", args...)
		if code != exitFailure || !strings.Contains(errOut, "CUDA") || strings.Contains(errOut, "for usage") {
			t.Errorf("%q: exit %d, stderr %q; want 1 saying why, without a usage hint", args, code, errOut)
		}
	}
}

func TestExitUsage(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"experiment", "run", "fig4.3", "--quick", "--engine", "gpu", "--out", dir},
		{"gemm", "--engine", "gpu:x"},
		{"gemm", "--engine", "model:nosuch"},
		{"bound", "--narrow", "--low", "e4m3", "--high", "fp16", "-n", "4", "--theta", "1e30"},
		{"round", "--format", "fp16", "x"},
	} {
		if code, _, errOut := mwmm(t, "", args...); code != exitUsage {
			t.Errorf("%q: exit %d, stderr %q; want 2", args, code, errOut)
		}
	}
}
