package gpu

import (
	"fmt"
	"testing"
)

// solverBench is the shared engine, its cuBLAS and cuSOLVER handles and
// the lu module for a solver benchmark; it skips without a GPU.
func solverBench(b *testing.B) (*Engine, *linalg, *Module) {
	b.Helper()
	if err := Available(); err != nil {
		b.Skipf("no GPU: %v", err)
	}
	e, err := SharedEngine(0)
	if err != nil {
		b.Fatal(err)
	}
	la, err := e.linalg()
	if err != nil {
		b.Fatal(err)
	}
	mod, err := e.d.Module("lu")
	if err != nil {
		b.Fatal(err)
	}
	return e, la, mod
}

// BenchmarkSolverLeaf times the recursive panel on m×w panels of random
// binary32 values, for several rows per leaf block (so grid sizes).
// ./gpu.test -test.run '^$' -test.bench SolverLeaf
func BenchmarkSolverLeaf(b *testing.B) {
	e, la, mod := solverBench(b)
	fill, err := mod.Function("fill_uniform")
	if err != nil {
		b.Fatal(err)
	}
	conv, err := mod.Function("f64_to_f32")
	if err != nil {
		b.Fatal(err)
	}
	defer func(r int) { leafRows = r }(leafRows)
	for _, shape := range [][2]int{{8192, 32}, {32768, 32}, {8192, 1024}, {32768, 1024}} {
		m, w := shape[0], shape[1]
		a64, err := e.d.Alloc(8 * m * w)
		if err != nil {
			b.Fatal(err)
		}
		a, err := e.d.Alloc(4 * m * w)
		if err != nil {
			b.Fatal(err)
		}
		ipiv, err := e.d.Alloc(4 * w)
		if err != nil {
			b.Fatal(err)
		}
		for _, rows := range []int{0, 128, 256, 512, 1024} { // 0: cuSOLVER's sgetrf
			leafRows = rows
			name := fmt.Sprintf("m=%d/w=%d/rows=%d", m, w, rows)
			if rows == 0 {
				name = fmt.Sprintf("m=%d/w=%d/sgetrf", m, w)
			}
			b.Run(name, func(b *testing.B) {
				pl, err := e.newPanelLU(la, mod)
				if err != nil {
					b.Fatal(err)
				}
				defer pl.free()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					if err := fill.Launch(grid(m*w), [3]uint32{256, 1, 1}, 0, nil, a64, int64(m*w), uint64(i), -0.5, 0.5); err != nil {
						b.Fatal(err)
					}
					if err := conv.Launch(grid(m*w), [3]uint32{256, 1, 1}, 0, nil, a64, a, int64(m*w)); err != nil {
						b.Fatal(err)
					}
					if err := e.d.Sync(); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					if rows == 0 {
						if err := e.getrf(la, false, m, w, a.ptr, m, ipiv.ptr); err != nil {
							b.Fatal(err)
						}
						continue
					}
					if err := pl.factor(nil, a.ptr, m, m, w, ipiv.ptr, e.d.Multiprocessors()); err != nil {
						b.Fatal(err)
					}
					if err := e.d.Sync(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*w), "µs/column")
			})
		}
		a64.Free()
		a.Free()
		ipiv.Free()
	}
}
