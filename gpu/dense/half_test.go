package dense

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/fp16"
	"github.com/mwmm/mwmm/gpu/internal/gputest"
	"github.com/mwmm/mwmm/solve"
)

// weaklyDominant is HPL-MxP's matrix (row-major): centered entries, each
// diagonal entry the sum of the others' magnitudes in its row.
func weaklyDominant(n int, seed uint64) []float64 {
	a := centered(n, seed)
	for i := range n {
		s := 0.0
		for j := range n {
			if j != i {
				s += math.Abs(a[i*n+j])
			}
		}
		a[i*n+i] = s
	}
	return a
}

// scaled is D₁·A·D₂ with diagonal entries 10^(±e) at random (not powers
// of two: the factorization's own scaling cannot undo them exactly).
func scaled(n int, a []float64, e float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 3))
	d1, d2 := make([]float64, n), make([]float64, n)
	for i := range n {
		d1[i], d2[i] = math.Pow(10, e*(2*rng.Float64()-1)), math.Pow(10, e*(2*rng.Float64()-1))
	}
	out := make([]float64, n*n)
	for i := range n {
		for j := range n {
			out[i*n+j] = d1[i] * a[i*n+j] * d2[j]
		}
	}
	return out
}

// needingPivotAt is weaklyDominant with row c zero left of the
// diagonal, 10^-6 on it, and a_(c+1,c) = a_(c+1,c+1): elimination
// without pivoting meets the pivot 10^-6 (row c is left alone by the
// steps before) and a multiplier of about 10^8 under it, whatever the
// scaling of the rows; partial pivoting swaps rows c and c+1.
func needingPivotAt(n, c int, seed uint64) []float64 {
	a := weaklyDominant(n, seed)
	for j := range c {
		a[c*n+j] = 0
	}
	a[c*n+c], a[(c+1)*n+c] = 1e-6, a[(c+1)*n+c+1]
	return a
}

// unscale turns the factors of R·A·C back into A's, exactly.
func TestUnscale(t *testing.T) {
	const n = 5
	a := weaklyDominant(n, 1)
	r, c := []float64{1, 0.5, 4, 0.25, 8}, []float64{2, 1, 0.125, 16, 0.5}
	l, u := make([]float64, n*n), make([]float64, n*n) // column-major LU of R·A·C
	cm := make([]float64, n*n)
	for i := range n {
		for j := range n {
			cm[i+j*n] = r[i] * a[i*n+j] * c[j]
		}
	}
	for k := range n { // Doolittle, no pivoting
		for j := k; j < n; j++ {
			u[k+j*n] = cm[k+j*n]
		}
		l[k+k*n] = 1
		for i := k + 1; i < n; i++ {
			l[i+k*n] = cm[i+k*n] / u[k+k*n]
			for j := k + 1; j < n; j++ {
				cm[i+j*n] -= l[i+k*n] * u[k+j*n]
			}
		}
	}
	packed := make([]float64, n*n)
	for i := range n {
		for j := range n {
			if i > j {
				packed[i+j*n] = l[i+j*n]
			} else {
				packed[i+j*n] = u[i+j*n]
			}
		}
	}
	unscale(packed, r, c)
	for i := range n {
		for j := range n {
			s := 0.0
			for k := 0; k <= min(i, j); k++ {
				lik := 1.0
				if i != k {
					lik = packed[i+k*n]
				}
				s += lik * packed[k+j*n]
			}
			if d := math.Abs(s - a[i*n+j]); d > 1e-13*math.Abs(a[i*n+i]) {
				t.Errorf("(L·U)(%d,%d) = %v, A's %v", i, j, s, a[i*n+j])
			}
		}
	}
}

// fp16-store factors weakly dominant matrices, and diagonally scaled
// ones, without pivoting: the growth check passes, the factors' backward
// error is within fp16's (the steps' roundings of the trailing matrix,
// the inverted triangles' and the scaling's), and GMRES-IR reaches fp64
// accuracy. Orders not multiples of the block exercise the edges.
func TestSolverHalf(t *testing.T) {
	e := engineGPU(t)
	f, err := ParseLUForm(HalfForm)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n, nb int
		scale float64
	}{{2, 64, 0}, {17, 64, 0}, {300, 64, 0}, {1000, 128, 0}, {300, 64, 6}, {1000, 256, 3}} {
		a := weaklyDominant(c.n, uint64(c.n))
		if c.scale > 0 {
			a = scaled(c.n, a, c.scale, 5)
		}
		s, err := e.NewSystem(c.n, a)
		if err != nil {
			t.Fatal(err)
		}
		f.NB = c.nb
		fa, err := s.Factor(f)
		if err != nil {
			t.Errorf("n=%d scale 10^±%g: %v", c.n, c.scale, err)
			s.Free()
			continue
		}
		if fa.Pivoting.Kind != PivotNone || fa.Pivoting.Reason != ReasonGrowthChecked {
			t.Errorf("n=%d: pivoting %q", c.n, fa.Pivoting)
		}
		h, err := fa.Host()
		if err != nil {
			t.Fatal(err)
		}
		got, err := h.Errors(a)
		if err != nil {
			t.Fatal(err)
		}
		steps := float64((c.n + c.nb - 1) / c.nb)
		if bnd := 4 * (steps + 3) * 0x1p-11 * got.LUNorm; !(got.Normwise <= bnd) {
			t.Errorf("n=%d scale 10^±%g: normwise error %.3g above %.3g", c.n, c.scale, got.Normwise, bnd)
		}
		b := rhs(c.n)
		x, rep, err := solve.RefineOperator(context.Background(), s, b, fa, solve.Options{Refine: solve.GMRES})
		if err != nil {
			t.Errorf("n=%d scale 10^±%g: %v (%+v)", c.n, c.scale, err, rep)
		} else if be := solve.BackwardError(c.n, a, x, b); be > 4*rep.Tol {
			t.Errorf("n=%d: backward error %.3g measured here, %.3g reported", c.n, be, rep.BackwardError)
		}
		fa.Free()
		s.Free()
	}
}

// A matrix that needs pivoting in the first panel, in the middle or in
// the last fails fp16-store's growth check at that panel, and Solve's
// default policy then pivots, reaching fp64 accuracy and saying why.
func TestSolverHalfGrowthCheck(t *testing.T) {
	e := engineGPU(t)
	const n, nb = 600, 128
	for _, c := range []int{0, 300, 520} {
		a := needingPivotAt(n, c, 7)
		s, err := e.NewSystem(n, a)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := ParseLUForm(HalfForm)
		f.NB = nb
		var ge *GrowthError
		if fa, err := s.Factor(f); !errors.As(err, &ge) || ge.Column != c/nb*nb {
			t.Errorf("pivot needed at column %d: err %v, want a GrowthError at column %d", c, err, c/nb*nb)
			if fa != nil {
				fa.Free()
			}
		}
		b := rhs(n)
		x, rep, err := Solve(context.Background(), s, b, Policy{Tuning: LUForm{NB: nb}})
		if err != nil {
			t.Errorf("column %d: Solve: %v", c, err)
		} else if be := solve.BackwardError(n, a, x, b); be > 4*rep.Final().Refine.Tol {
			t.Errorf("column %d: backward error %.3g", c, be)
		}
		if p := rep.Final().Pivoting; p.Reason != ReasonGrowthFailed || p.Kind == PivotNone {
			t.Errorf("column %d: final pivoting %q", c, p)
		}
		s.Free()
	}
}

// halfBench is the benchmarks' set-up: the Solver, a system of the kind
// drawn on the device (freed at the end), the device's handles and the
// fp16-store form.
func halfBench(b *testing.B, n int, kind string) (*Solver, *System, *gpu.Linalg, LUForm) {
	b.Helper()
	e := engineGPU(b)
	sys, err := e.GenerateSystem(n, kind, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sys.Free() })
	la, err := e.d.Linalg()
	if err != nil {
		b.Fatal(err)
	}
	f, _ := ParseLUForm(HalfForm)
	return e, sys, la, f
}

// BenchmarkHalfPieces times each piece of one fp16-store step alone at
// order n = 32768, nb 1024: the diagonal block's
// sgetrf and inverses, the L₂₁ and U₁₂ products, the first update, and
// the scaling and conversion passes over A (go test -bench HalfPieces).
func BenchmarkHalfPieces(b *testing.B) {
	n, nb := 32768, 1024
	e, sys, la, f := halfBench(b, n, "diagdom")
	h, err := e.newHalfLU(la, n, nb, f)
	if err != nil {
		b.Fatal(err)
	}
	defer h.free()
	r, _ := e.d.Alloc(8 * n)
	c, _ := e.d.Alloc(8 * n)
	lu64, _ := e.d.Alloc(8 * n * n)
	defer gpu.FreeAll(r, c, lu64)
	s := stepOf(0, nb, n)
	// beside queues the update on 100 multiprocessors, then the diagonal
	// block's sgetrf on the other stream.
	beside := func() error {
		if err := h.update(s, 2*nb, n, 2*nb, n-2*nb, 100); err != nil {
			return err
		}
		start := time.Now()
		err := h.getrf(h.side, nb)
		b.Logf("  sgetrf returned after %.3f ms", time.Since(start).Seconds()*1e3)
		return err
	}
	pieces := []struct {
		name string
		run  func() error
	}{
		{"scale", func() error { return h.scale(sys.a, r, c) }},
		{"to_f32", func() error {
			return h.launch("to_f32_f16", fp16.BlockGrid(n, n), nil, h.w, int64(n), lu64, int64(n), int32(n), int32(n))
		}},
		{"panel", func() error { return h.panel(0, h.main) }},
		{"getrf", func() error { return h.getrf(h.main, nb) }},
		{"inverse", func() error { return h.inverse(h.main, h.la.Blas, true, 0, nb, h.invU) }},
		{"strsm-inverse", func() error { return fp16.StrsmInverse(e.d, h.main, h.la.Blas, h.diag, h.inv32, nb, true) }},
		{"u12", func() error { return h.u12(h.main, s, 0) }},
		{"update-next", func() error { return h.update(s, nb, n, nb, nb, 0) }},
		{"update-rest", func() error { return h.update(s, 2*nb, n, 2*nb, n-2*nb, 0) }},
		{"update-rest-100", func() error { return h.update(s, 2*nb, n, 2*nb, n-2*nb, 100) }},
		// The look-ahead: the update on 100 multiprocessors, the next panel
		// beside it; overlapped, this takes the longer of the two.
		{"overlap", func() error {
			if err := h.update(s, 2*nb, n, 2*nb, n-2*nb, 100); err != nil {
				return err
			}
			start := time.Now()
			err := h.panel(nb, h.side)
			b.Logf("  the panel's calls returned after %.3f ms", time.Since(start).Seconds()*1e3)
			return err
		}},
		{"getrf-beside", beside},
	}
	for _, p := range pieces {
		best := time.Duration(math.MaxInt64)
		for range 4 {
			if err := e.d.Sync(); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			if err := p.run(); err != nil {
				b.Fatalf("%s: %v", p.name, err)
			}
			if err := e.d.Sync(); err != nil {
				b.Fatal(err)
			}
			best = min(best, time.Since(start))
		}
		b.Logf("%-12s %8.3f ms", p.name, best.Seconds()*1e3)
	}
	flops := 2 * float64(n-nb) * float64(n-2*nb) * float64(nb)
	b.Logf("(update-rest: %.3g flops)", flops)
}

// BenchmarkHalfFailure splits what fp16-store's attempt costs on a matrix
// that needs pivoting (centered, n = 8192) before its growth check says
// so: the whole Factor, then set-up alone, set-up and scaling, and
// set-up, scaling, the first panel and the check (go test -bench
// HalfFailure).
func BenchmarkHalfFailure(b *testing.B) {
	n, nb := 8192, 1024
	e, sys, la, f := halfBench(b, n, "centered")
	f.NB = nb
	r, c := gputest.Alloc(b, e.d, 8*n), gputest.Alloc(b, e.d, 8*n)
	upTo := func(stage int) func() error {
		return func() error {
			h, err := e.newHalfLU(la, n, nb, f)
			if err != nil {
				return err
			}
			defer h.free()
			if stage >= 1 {
				if err := h.scale(sys.a, r, c); err != nil {
					return err
				}
			}
			if stage >= 2 {
				if err := h.d.Do(func() error { return h.panel(0, h.main) }); err != nil {
					return err
				}
				if err := h.verdict(1); err == nil {
					return errors.New("the growth check passed")
				}
			}
			return e.d.Sync()
		}
	}
	for _, p := range []struct {
		name string
		run  func() error
	}{
		{"factor", func() error {
			fa, err := sys.Factor(f)
			if err == nil {
				fa.Free()
				return errors.New("fp16-store factored a centered matrix")
			}
			return nil
		}},
		{"setup", upTo(0)}, {"setup-scale", upTo(1)}, {"setup-scale-panel-check", upTo(2)},
	} {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				if err := p.run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// halfFactors is a System of a (n×n, row-major) factored by fp16-store in
// blocks of 256, both freed at the end of the test.
func halfFactors(t *testing.T, e *Solver, n int, a []float64) *Factors {
	t.Helper()
	s, err := e.NewSystem(n, a)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Free() })
	f, _ := ParseLUForm(HalfForm)
	f.NB = 256
	fa, err := s.Factor(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fa.Free() })
	return fa
}

// The work space the Solver keeps between fp16-store factorizations
// changes nothing: factoring again (kept work space), at another order
// (a new one) and back, and after FreeScratch, gives the same fp16
// factors bit for bit.
func TestHalfScratchReuse(t *testing.T) {
	e := engineGPU(t)
	factors := func(n int) []uint16 {
		t.Helper()
		fa := halfFactors(t, e, n, weaklyDominant(n, uint64(n)))
		w := make([]uint16, n*n)
		if err := e.d.Download(w, fa.lu); err != nil {
			t.Fatal(err)
		}
		return w
	}
	first := factors(1000)
	for i, step := range []func() []uint16{
		func() []uint16 { return factors(1000) },
		func() []uint16 { factors(700); return factors(1000) },
		func() []uint16 { e.FreeScratch(); return factors(1000) },
	} {
		if got := step(); !slices.Equal(got, first) {
			t.Errorf("case %d: the factors differ from the first factorization's", i)
		}
	}
}
