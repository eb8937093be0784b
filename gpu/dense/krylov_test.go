package dense

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
	"github.com/mwmm/mwmm/gpu/internal/gputest"
	"github.com/mwmm/mwmm/solve"
)

// gatherOf gives P·x as LAPACK's sequential interchanges do.
func TestGatherOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 7, 100} {
		ipiv := make([]int32, n)
		for i := range ipiv {
			ipiv[i] = int32(i + 1 + rng.IntN(n-i)) // LAPACK: ipiv[i] ≥ i
		}
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(i) + 0.5
		}
		want := append([]float64(nil), x...)
		for i, p := range ipiv {
			want[i], want[p-1] = want[p-1], want[i]
		}
		for i, p := range gatherOf(ipiv) {
			if x[p] != want[i] {
				t.Fatalf("n=%d: (P·x)[%d] = x[%d] = %v, want %v (ipiv %v)", n, i, p, x[p], want[i], ipiv)
			}
		}
	}
}

// hostBasisOnly hides the factors' device basis: GMRES keeps its vectors
// on the host, the reference for the device's.
type hostBasisOnly struct{ solve.Factorization }

// butterfly_vec is bit-equal to the host's mix and unmixT; GMRES-IR on
// the device's Krylov basis converges as on the host's, to fp64
// accuracy, with the same refinement steps and at most one GMRES
// iteration more or less a step; the basis is made only for the factors'
// own system.
func TestSolverKrylovBasis(t *testing.T) {
	e := engineGPU(t)
	level := gputest.Function(t, e.d, kernel("lu"), "butterfly_vec")
	for _, n := range []int{1, 37, 300} {
		bf := newButterfly(n, butterflySeed)
		rng := rand.New(rand.NewPCG(uint64(n), 1))
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		want := append([]float64(nil), x...)
		bf.mix(want)
		bf.unmixT(want)
		v := gputest.Upload(t, e.d, x)
		for _, st := range []struct {
			l          int
			transposed int32
			diag       []float64
		}{{0, 0, bf.r[0]}, {1, 0, bf.r[1]}, {1, 1, bf.s[1]}, {0, 1, bf.s[0]}} {
			count := len(bf.pairs[st.l]) / 2
			if err := level.Launch([3]uint32{uint32((count + 255) / 256), 1, 1}, [3]uint32{256, 1, 1}, 0, nil,
				v, gputest.Upload(t, e.d, bf.pairs[st.l]), int32(count), gputest.Upload(t, e.d, st.diag), st.transposed); err != nil {
				t.Fatal(err)
			}
		}
		got := make([]float64, n)
		if err := e.d.Download(got, v); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("n=%d: entry %d is %v on the device, %v here", n, i, got[i], want[i])
			}
		}
	}

	const n = 1000
	a := centered(n, 21)
	s, err := e.NewSystem(n, a)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Free()
	other, err := e.NewSystem(n, a)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Free()
	b := make([]float64, n)
	for i := range b {
		b[i] = math.Sin(float64(i))
	}
	for _, c := range []struct {
		form  string
		pivot Pivoting
	}{{"tc32-fp16", PivotPartial}, {"tc32-bf16", PivotPartial}, {"fp32", PivotButterfly}} {
		f, _ := ParseLUForm(c.form)
		f.NB, f.Pivoting = 128, c.pivot
		fa, err := s.Factor(f)
		if err != nil {
			t.Fatal(err)
		}
		if basis, err := fa.NewKrylovBasis(other, b, 10); basis != nil || err != nil {
			t.Errorf("%s: a basis for another system: %v, %v", c.form, basis, err)
		}
		opt := solve.Options{Refine: solve.GMRES}
		x, dev, err := solve.RefineOperator(context.Background(), s, b, fa, opt)
		if err != nil {
			t.Fatalf("%s, device basis: %v", c.form, err)
		}
		_, host, err := solve.RefineOperator(context.Background(), s, b, hostBasisOnly{fa}, opt)
		if err != nil {
			t.Fatalf("%s, host basis: %v", c.form, err)
		}
		if be := solve.BackwardError(n, a, x, b); be > dev.Tol {
			t.Errorf("%s: backward error %.3g > %.3g", c.form, be, dev.Tol)
		}
		if dev.GMRES == 0 || dev.Outer != host.Outer || math.Abs(float64(dev.GMRES-host.GMRES)) > float64(dev.Outer) {
			t.Errorf("%s: device basis %d steps, %d GMRES iterations; host basis %d, %d", c.form, dev.Outer, dev.GMRES, host.Outer, host.GMRES)
		}
		t.Logf("%s (%s): %d steps, %d GMRES iterations on the device's basis, %d on the host's; %.3g s against %.3g s",
			c.form, fa.Pivoting, dev.Outer, dev.GMRES, host.GMRES, dev.RefineSeconds, host.RefineSeconds)
		fa.Free()
	}
}

// BenchmarkKrylovExpand times one GMRES iteration on the device's basis at
// n = 8192 and its parts: the product with A, the preconditioner, and a
// pass of classical Gram–Schmidt against k vectors.
func BenchmarkKrylovExpand(b *testing.B) {
	e := engineGPU(b)
	const n, size = 8192, 1000
	s, err := e.GenerateSystem(n, "centered", 1)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Free()
	f, _ := ParseLUForm("fp32")
	fa, err := s.Factor(f)
	if err != nil {
		b.Fatal(err)
	}
	defer fa.Free()
	v0 := make([]float64, n)
	v0[0] = 1
	kb, err := fa.NewKrylovBasis(s, v0, size)
	if err != nil {
		b.Fatal(err)
	}
	basis := kb.(*deviceBasis)
	defer basis.Free()
	rng := rand.New(rand.NewPCG(1, 2))
	fill := make([]float64, n*(size+1))
	for i := range fill {
		fill[i] = rng.NormFloat64() / math.Sqrt(n)
	}
	if err := e.d.Upload(basis.v, fill); err != nil {
		b.Fatal(err)
	}
	timeQueue := func(b *testing.B, queue func(q *gpu.LaunchQueue) error) {
		for b.Loop() {
			q := e.d.NewLaunchQueue()
			if err := queue(q); err != nil {
				b.Fatal(err)
			}
			if err := q.Flush(); err != nil {
				b.Fatal(err)
			}
			if err := e.d.Sync(); err != nil {
				b.Fatal(err)
			}
		}
	}
	w := basis.v.View(8 * n * size)
	b.Run("matvec", func(b *testing.B) {
		timeQueue(b, func(q *gpu.LaunchQueue) error {
			q.Do(func() error {
				return cuda.Dgemv(basis.la.Blas, cuda.OpN, n, n, 1, s.a.Ptr(), n, basis.v.Ptr(), 0, basis.tmp.Ptr())
			})
			return nil
		})
	})
	b.Run("preconditioner", func(b *testing.B) {
		timeQueue(b, func(q *gpu.LaunchQueue) error { return basis.pc.enqueue(q, basis.la, basis.tmp, w) })
	})
	for _, k := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("cgs-pass/k=%d", k), func(b *testing.B) {
			timeQueue(b, func(q *gpu.LaunchQueue) error { basis.orthogonalize(q, w, basis.coef, k); return nil })
		})
		b.Run(fmt.Sprintf("expand/k=%d", k), func(b *testing.B) {
			j := min(k, size-1)
			h := make([]float64, j+2)
			for b.Loop() {
				if err := basis.Expand(j, h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTriangularSolves times the factors' two triangular solves from
// fp64 factors (dtrsv, what Solve runs) and from fp32 ones (strsv).
func BenchmarkTriangularSolves(b *testing.B) {
	e, la, mod := solverSetup(b)
	for _, n := range []int{8192, 32768} {
		s, err := e.GenerateSystem(n, "diagdom", 1)
		if err != nil {
			b.Fatal(err)
		}
		f, _ := ParseLUForm("tc32-fp16")
		fa, err := s.Factor(f)
		if err != nil {
			b.Fatal(err)
		}
		lu32, err := e.d.Alloc(4 * n * n)
		if err != nil {
			b.Fatal(err)
		}
		x, err := e.d.Alloc(8 * n)
		if err != nil {
			b.Fatal(err)
		}
		if err := e.d.Upload(x, make([]float64, n)); err != nil {
			b.Fatal(err)
		}
		if err := launch(mod, "f64_to_f32", fa.lu, lu32, int64(n)*int64(n)); err != nil {
			b.Fatal(err)
		}
		for _, c := range []struct {
			name string
			trsv func(h uintptr, uplo, trans, diag, n int, a uintptr, lda int, x uintptr) error
			lu   *gpu.Buffer
		}{{"dtrsv", cuda.Dtrsv, fa.lu}, {"strsv", cuda.Strsv, lu32}} {
			b.Run(fmt.Sprintf("n=%d/%s", n, c.name), func(b *testing.B) {
				for b.Loop() {
					if err := e.d.Do(func() error {
						if err := cuda.CublasSetStream(la.Blas, 0); err != nil {
							return err
						}
						if err := c.trsv(la.Blas, cuda.FillLower, cuda.OpN, cuda.DiagUnit, n, c.lu.Ptr(), n, x.Ptr()); err != nil {
							return err
						}
						return c.trsv(la.Blas, cuda.FillUpper, cuda.OpN, cuda.DiagNonUnit, n, c.lu.Ptr(), n, x.Ptr())
					}); err != nil {
						b.Fatal(err)
					}
					if err := e.d.Sync(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		gpu.FreeAll(lu32, x)
		fa.Free()
		s.Free()
	}
}

// BenchmarkRefinePieces times what one refinement step of fp16-store is
// made of, hpl-mxp of order 8192 and 32768: a trip to the device's
// thread, a vector's allocation and freeing, its upload and download,
// the product with A and the solve as refinement calls them
// (System.MulVec, Factors.Solve), the same two on the device alone, and
// the whole refinement from the factors.
func BenchmarkRefinePieces(b *testing.B) {
	e, la, _ := solverSetup(b)
	for _, n := range []int{8192, 32768} {
		s, err := e.GenerateSystem(n, "hpl-mxp", 1)
		if err != nil {
			b.Fatal(err)
		}
		f, _ := ParseLUForm(HalfForm)
		fa, err := s.Factor(f)
		if err != nil {
			b.Fatal(err)
		}
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i] = math.Sin(float64(i))
		}
		if err := fa.Solve(append([]float64(nil), x...)); err != nil { // the preconditioner, once
			b.Fatal(err)
		}
		v, err := e.d.Alloc(16 * n)
		if err != nil {
			b.Fatal(err)
		}
		pc := fa.pc
		res, err := fa.NewResident(s, x)
		if err != nil {
			b.Fatal(err)
		}
		if err := res.Start(); err != nil {
			b.Fatal(err)
		}
		norms := func(f func() (float64, float64, error)) func() error {
			return func() error { _, _, err := f(); return err }
		}
		sync := func(f func(q *gpu.LaunchQueue) error) func() error {
			return func() error {
				q := e.d.NewLaunchQueue()
				if err := f(q); err != nil {
					return err
				}
				if err := q.Flush(); err != nil {
					return err
				}
				return e.d.Sync()
			}
		}
		pieces := []struct {
			name string
			run  func() error
		}{
			{"trip", func() error { return e.d.Do(func() error { return nil }) }},
			{"alloc-free", func() error {
				w, err := e.d.Alloc(16 * n)
				if err != nil {
					return err
				}
				return w.Free()
			}},
			{"upload-download", func() error {
				if err := e.d.Upload(v, x); err != nil {
					return err
				}
				return e.d.Download(y, v.View(8*n))
			}},
			{"mulvec", func() error { return s.MulVec(x, y) }},
			{"solve", func() error { copy(y, x); return fa.Solve(y) }},
			{"dgemv-device", sync(func(q *gpu.LaunchQueue) error {
				q.Do(func() error {
					if err := cuda.CublasSetStream(la.Blas, 0); err != nil {
						return err
					}
					return cuda.Dgemv(la.Blas, cuda.OpN, n, n, 1, s.a.Ptr(), n, v.Ptr(), 0, v.Ptr()+uintptr(8*n))
				})
				return nil
			})},
			{"precond-device", sync(func(q *gpu.LaunchQueue) error { return pc.enqueue(q, la, v, v.View(8*n)) })},
			{"trisolve-device", sync(func(q *gpu.LaunchQueue) error { return pc.tri.Solve(q, pc.single) })},
			{"resident-residual", norms(res.Residual)},
			{"resident-residual-dw", norms(res.(solve.DoubleWordResident).ResidualDoubleWord)},
			{"refine", func() error {
				bb := append([]float64(nil), x...)
				_, rep, err := solve.RefineOperator(context.Background(), s, bb, fa, solve.Options{})
				if err == nil && rep.Outer > 6 {
					err = fmt.Errorf("%d steps to %.3g", rep.Outer, rep.BackwardError)
				}
				return err
			}},
		}
		for _, p := range pieces {
			b.Run(fmt.Sprintf("n=%d/%s", n, p.name), func(b *testing.B) {
				for b.Loop() {
					if err := p.run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		gpu.FreeAll(v)
		res.Free()
		fa.Free()
		s.Free()
	}
}

// hostVectors hide the factors' resident vectors and Krylov basis:
// refinement keeps its vectors on the host, the reference.
type hostVectors struct{ solve.Factorization }

// Refinement with its vectors on the device (Factors.NewResident) takes
// the steps it takes with them on the host, to backward errors within a
// few units of each other (b − A·x is rounded once on the device, twice
// here); the norms are the vectors' own, a NaN among them is reported,
// and the vectors are made only for the factors' own system.
func TestSolverResident(t *testing.T) {
	e := engineGPU(t)
	for _, c := range []struct {
		form  string
		n, nb int
		pivot Pivoting
	}{{HalfForm, 1000, 256, PivotAuto}, {"tc32-fp16", 700, 128, PivotPartial}} {
		a := weaklyDominant(c.n, uint64(c.n))
		s, err := e.NewSystem(c.n, a)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := ParseLUForm(c.form)
		f.NB, f.Pivoting = c.nb, c.pivot
		fa, err := s.Factor(f)
		if err != nil {
			t.Fatal(err)
		}
		b := rhs(c.n)
		opt := solve.Options{Refine: solve.IR}
		_, want, err := solve.RefineOperator(context.Background(), s, b, hostVectors{fa}, opt)
		if err != nil {
			t.Fatalf("%s, host vectors: %v", c.form, err)
		}
		x, rep, err := solve.RefineOperator(context.Background(), s, b, fa, opt)
		if err != nil {
			t.Fatalf("%s, device vectors: %v", c.form, err)
		}
		if rep.Outer != want.Outer || solve.BackwardError(c.n, a, x, b) > rep.Tol {
			t.Errorf("%s: %d steps to %.3g, host vectors %d to %.3g", c.form, rep.Outer, rep.BackwardError, want.Outer, want.BackwardError)
		}
		for i, st := range rep.Steps {
			if w := want.Steps[i].BackwardError; !(math.Abs(st.BackwardError-w) <= 0.5*w+1e-17) {
				t.Errorf("%s step %d: backward error %.3g, host vectors %.3g", c.form, i, st.BackwardError, w)
			}
		}
		checkResident(t, s, fa, b)
		if r, err := fa.NewResident(&System{n: c.n}, b); r != nil || err != nil {
			t.Errorf("%s: another system's vectors: %v, %v", c.form, r, err)
		}
		fa.Free()
		s.Free()
	}
}

// checkResident compares a Resident's norms with its vectors' and sees a
// NaN in x reported.
func checkResident(t *testing.T, s *System, fa *Factors, b []float64) {
	t.Helper()
	res, err := fa.NewResident(s, b)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Free()
	if err := res.Start(); err != nil {
		t.Fatal(err)
	}
	nr, nx, err := res.Residual()
	if err != nil {
		t.Fatal(err)
	}
	x, r := make([]float64, len(b)), make([]float64, len(b))
	if err := errors.Join(res.Read(solve.IterateVector, x), res.Read(solve.ResidualVector, r)); err != nil {
		t.Fatal(err)
	}
	if maxAbsOf(r) != nr || maxAbsOf(x) != nx || nx == 0 {
		t.Errorf("norms %v, %v; the vectors' %v, %v", nr, nx, maxAbsOf(r), maxAbsOf(x))
	}
	d := make([]float64, len(b))
	d[len(d)/2] = math.NaN()
	if err := res.Add(d); err != nil {
		t.Fatal(err)
	}
	if nr, nx, err := res.Residual(); err != nil || !math.IsNaN(nr) || !math.IsNaN(nx) {
		t.Errorf("a NaN in x: norms %v, %v (%v)", nr, nx, err)
	}
}

func maxAbsOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}
