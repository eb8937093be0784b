package dense

import (
	"sync"
	"testing"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/gemm"
	"github.com/mwmm/mwmm/gpu/internal/gputest"
)

// testSolver is the solver of the tests, on the shared engine of device 0.
var testSolver struct {
	once sync.Once
	s    *Solver
	err  error
}

// engineGPU is the tests' solver; it skips without a GPU.
func engineGPU(tb testing.TB) *Solver {
	tb.Helper()
	gputest.Require(tb)
	testSolver.once.Do(func() {
		e, err := gemm.SharedEngine(0)
		testSolver.s, testSolver.err = New(e), err
	})
	if testSolver.err != nil {
		tb.Fatalf("SharedEngine: %v", testSolver.err)
	}
	return testSolver.s
}

// solverSetup is the tests' solver, its cuBLAS and cuSOLVER handles and
// the lu module for a solver test or benchmark; it skips without a GPU.
func solverSetup(tb testing.TB) (*Solver, *gpu.Linalg, *gpu.Module) {
	tb.Helper()
	e := engineGPU(tb)
	la, err := e.d.Linalg()
	if err != nil {
		tb.Fatal(err)
	}
	mod, err := e.d.Module(kernel("lu"))
	if err != nil {
		tb.Fatal(err)
	}
	return e, la, mod
}
