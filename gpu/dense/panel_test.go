package dense

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
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

// BenchmarkSolverLeaf times the recursive panel on m×w panels of random
// values, binary32 and binary64 (f64/), for several rows a leaf block
// (so grid sizes), against cuSOLVER's getrf.
// ./gpu_dense.test -test.run '^$' -test.bench SolverLeaf
func BenchmarkSolverLeaf(b *testing.B) {
	e, la, mod := solverSetup(b)
	fill, err := mod.Function("fill_uniform")
	if err != nil {
		b.Fatal(err)
	}
	conv, err := mod.Function("f64_to_f32")
	if err != nil {
		b.Fatal(err)
	}
	defer func(r int) { leafRows = r }(leafRows)
	for _, prec := range []Precision{FP32, FP64} {
		double := prec == FP64
		prefix, getrf, kinds := "", "sgetrf", []int{256, 512, 1024}
		if double {
			prefix, getrf, kinds = "f64/", "dgetrf", []int{256, 512}
		}
		for _, shape := range [][2]int{{8192, 32}, {32768, 32}, {8192, 1024}, {16384, 2048}, {32768, 1024}} {
			m, w := shape[0], shape[1]
			a64, err := e.d.Alloc(8 * m * w)
			if err != nil {
				b.Fatal(err)
			}
			a := a64
			if !double {
				if a, err = e.d.Alloc(4 * m * w); err != nil {
					b.Fatal(err)
				}
			}
			ipiv, err := e.d.Alloc(4 * w)
			if err != nil {
				b.Fatal(err)
			}
			for _, rows := range append([]int{0}, kinds...) { // 0: cuSOLVER's getrf
				leafRows = rows
				name := fmt.Sprintf("%sm=%d/w=%d/rows=%d", prefix, m, w, rows)
				if rows == 0 {
					name = fmt.Sprintf("%sm=%d/w=%d/%s", prefix, m, w, getrf)
				}
				b.Run(name, func(b *testing.B) {
					pl, err := newPanelLU(e.d, la, mod, prec)
					if err != nil {
						b.Fatal(err)
					}
					defer pl.free()
					for i := 0; i < b.N; i++ {
						b.StopTimer()
						if err := fill.Launch(gpu.StrideGrid(m*w), [3]uint32{256, 1, 1}, 0, nil, a64, int64(m*w), uint64(i), -0.5, 0.5); err != nil {
							b.Fatal(err)
						}
						if !double {
							if err := conv.Launch(gpu.StrideGrid(m*w), [3]uint32{256, 1, 1}, 0, nil, a64, a, int64(m*w)); err != nil {
								b.Fatal(err)
							}
						}
						if err := e.d.Sync(); err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
						if rows == 0 {
							if err := e.getrf(la, prec, m, w, a.Ptr(), m, ipiv.Ptr()); err != nil {
								b.Fatal(err)
							}
							continue
						}
						if err := pl.factor(nil, a.Ptr(), m, m, w, ipiv.Ptr(), e.d.Multiprocessors()); err != nil {
							b.Fatal(err)
						}
						if err := e.d.Sync(); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*w), "µs/column")
				})
			}
			if !double {
				a.Free()
			}
			a64.Free()
			ipiv.Free()
		}
	}
}

// A leaf (a panel of at most 32 columns, one kernel) factors as partial
// pivoting must in binary32 and binary64, bit for bit: pivots the largest
// magnitude, the lowest row on ties (as isamax), multipliers rounded
// quotients, and each update one fused multiply-add, all checked against
// math/big. Entries are multiples of 1/4 so that columns have ties; one
// column is zero (a zero pivot: no elimination), one holds a NaN (never a
// pivot). Shapes take one to several blocks of every kind (256, 512 and,
// in binary32, 1024 rows a block).
func TestSolverPanelLeaf(t *testing.T) {
	e, la, mod := solverSetup(t)
	defer func(r int) { leafRows = r }(leafRows)
	for _, prec := range []Precision{FP32, FP64} {
		pl, err := newPanelLU(e.d, la, mod, prec)
		if err != nil {
			t.Fatal(err)
		}
		if prec == FP64 {
			testLeaf[float64](t, e, pl)
		} else {
			testLeaf[float32](t, e, pl)
		}
		pl.free()
	}
}

func testLeaf[E float32 | float64](t *testing.T, e *Solver, pl *panelLU) {
	rng := rand.New(rand.NewPCG(7, 26))
	for _, c := range []struct{ m, w, blocks int }{{1, 1, 32}, {17, 17, 32}, {300, 32, 32}, {3000, 20, 32}, {9000, 32, 8}, {20000, 7, 132}} {
		a := make([]E, c.m*c.w) // column-major
		for i := range a {
			a[i] = E(rng.IntN(17)-8) / 4
		}
		if c.w > 5 {
			for i := 0; i < c.m; i++ {
				a[i+5*c.m] = 0
			}
			a[c.m-1+(c.w-1)*c.m] = E(math.NaN())
		}
		wantLU, wantPiv := leafReference(a, c.m, c.w)
		for _, rows := range []int{0, 256, 512, 1024} {
			leafRows = rows
			buf, err := e.d.Alloc(pl.prec.Size() * len(a))
			if err != nil {
				t.Fatal(err)
			}
			ipiv, err := e.d.Alloc(4 * c.w)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.d.Upload(buf, a); err != nil {
				t.Fatal(err)
			}
			err = pl.factor(nil, buf.Ptr(), c.m, c.m, c.w, ipiv.Ptr(), c.blocks)
			lu, piv := make([]E, len(a)), make([]int32, c.w)
			if err == nil {
				err = e.d.Download(lu, buf)
			}
			if err == nil {
				err = e.d.Download(piv, ipiv)
			}
			buf.Free()
			ipiv.Free()
			if err != nil {
				t.Fatal(err)
			}
			for j := range piv {
				if piv[j] != wantPiv[j] {
					t.Fatalf("%d-byte %+v, %d rows a block: pivot %d is row %d, want %d", pl.prec.Size(), c, leafRows, j, piv[j], wantPiv[j])
				}
			}
			for i := range lu {
				same := lu[i] == wantLU[i] && math.Signbit(float64(lu[i])) == math.Signbit(float64(wantLU[i]))
				if !same && !(lu[i] != lu[i] && wantLU[i] != wantLU[i]) {
					t.Fatalf("%d-byte %+v, %d rows a block: entry (%d, %d) is %g, want %g", pl.prec.Size(), c, leafRows, i%c.m, i/c.m, lu[i], wantLU[i])
				}
			}
		}
	}
	if _, _, err := pl.leafShape(maxPanelRows(pl.sms, pl.prec)+1, 32); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("a panel too tall for the leaves: %v", err)
	}
}

// leafReference is partial pivoting on the column-major m×w a, each
// operation rounded once to E (math/big): l = a/p, a − l·u by one fused
// multiply-add. A zero pivot eliminates nothing; NaNs are never pivots,
// and a column without a candidate keeps its diagonal row. Pivots are
// 1-based, as LAPACK's.
func leafReference[E float32 | float64](a []E, m, w int) ([]E, []int32) {
	lu := append([]E(nil), a...)
	piv := make([]int32, w)
	round := func(x *big.Float) E {
		if _, single := any(E(0)).(float32); single {
			f, _ := x.Float32()
			return E(f)
		}
		f, _ := x.Float64()
		return E(f)
	}
	exact := func(x E) *big.Float { return new(big.Float).SetPrec(200).SetFloat64(float64(x)) }
	special := func(xs ...E) bool {
		for _, x := range xs {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return true
			}
		}
		return false
	}
	for j := 0; j < w; j++ {
		p, best := j, E(-1)
		for i := j; i < m; i++ {
			if v := E(math.Abs(float64(lu[i+j*m]))); v > best {
				p, best = i, v
			}
		}
		piv[j] = int32(p + 1)
		for c := 0; c < w; c++ {
			lu[j+c*m], lu[p+c*m] = lu[p+c*m], lu[j+c*m]
		}
		d := lu[j+j*m]
		if d == 0 {
			continue
		}
		for i := j + 1; i < m; i++ {
			var l E
			if x := lu[i+j*m]; special(x, d) || x == 0 {
				l = x / d // IEEE: NaN, or a signed zero as the GPU's
			} else {
				l = round(new(big.Float).SetPrec(200).Quo(exact(x), exact(d)))
			}
			lu[i+j*m] = l
			for c := j + 1; c < w; c++ {
				x, u := lu[i+c*m], lu[j+c*m]
				if special(x, u, l) || l == 0 || u == 0 {
					lu[i+c*m] = E(math.FMA(float64(-l), float64(u), float64(x))) // exact product: rounds once
					continue
				}
				prod := new(big.Float).SetPrec(200).Mul(exact(l), exact(u))
				lu[i+c*m] = round(prod.Sub(exact(x), prod))
			}
		}
	}
	return lu, piv
}
