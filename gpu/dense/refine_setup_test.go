package dense

import (
	"testing"
	"time"
)

// BenchmarkRefineSetup splits what refinement's first step costs after
// an fp16-store factorization at n = 32768: the Resident (vectors and the
// preconditioner: pivots, TriSolver), the first solve, the first
// residual (go test -bench RefineSetup).
func BenchmarkRefineSetup(b *testing.B) {
	n := 32768
	e, sys, _, f := halfBench(b, n, "hpl-mxp")
	rhs := make([]float64, n)
	for i := range rhs {
		rhs[i] = float64(i%7) - 3
	}
	for b.Loop() {
		fa, err := sys.Factor(f)
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		pc, err := fa.precond()
		if err != nil {
			b.Fatal(err)
		}
		_ = pc
		t1 := time.Now()
		res, err := fa.NewResident(sys, rhs)
		if err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if err := res.Start(); err != nil {
			b.Fatal(err)
		}
		if err := e.d.Sync(); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		if _, _, err := res.Residual(); err != nil {
			b.Fatal(err)
		}
		t4 := time.Now()
		if err := res.Start(); err != nil {
			b.Fatal(err)
		}
		if err := e.d.Sync(); err != nil {
			b.Fatal(err)
		}
		t5 := time.Now()
		b.Logf("precond %.3f ms, resident %.3f ms, first solve %.3f ms, residual %.3f ms, second solve %.3f ms",
			ms(t1.Sub(t0)), ms(t2.Sub(t1)), ms(t3.Sub(t2)), ms(t4.Sub(t3)), ms(t5.Sub(t4)))
		res.Free()
		fa.Free()
	}
}

func ms(d time.Duration) float64 { return d.Seconds() * 1e3 }
