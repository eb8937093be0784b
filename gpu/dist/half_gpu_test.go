package dist

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/mwmm/mwmm/gpu/fp16"
	"github.com/mwmm/mwmm/solve"
)

// halfGrids are the grids FactorHalf is tested on: 1×1, and 1×2, 2×1
// (2×2) where the GPUs are there.
func halfGrids(t *testing.T) []Grid {
	gs := []Grid{{1, 1}}
	if gpusAtLeast(2) {
		gs = append(gs, grids(t)...)
	}
	return gs
}

// weaklyDominant is HPL-MxP's matrix (row-major), its rows and columns
// scaled by 10^(±e) (not powers of two: FactorHalf's scaling cannot undo
// them exactly).
func weaklyDominant(n int, e float64) []float64 {
	a := make([]float64, n*n)
	d := func(i, salt int) float64 { return math.Pow(10, e*math.Sin(float64(7*i+salt))) }
	for i := range n {
		s := 0.0
		for j := range n {
			if j != i {
				a[i*n+j] = math.Sin(float64(i*n+j)*0.37) / 2
				s += math.Abs(a[i*n+j])
			}
		}
		a[i*n+i] = s
	}
	for i := range n {
		for j := range n {
			a[i*n+j] *= d(i, 1) * d(j, 2)
		}
	}
	return a
}

// needingPivotAt is weaklyDominant with row c zero left of the diagonal,
// 10^-6 on it, and a_(c+1,c) = a_(c+1,c+1): elimination without pivoting
// meets the pivot 10^-6 and a multiplier of about 10^8 under it.
func needingPivotAt(n, c int) []float64 {
	a := weaklyDominant(n, 0)
	for j := range c {
		a[c*n+j] = 0
	}
	a[c*n+c], a[(c+1)*n+c] = 1e-6, a[(c+1)*n+c+1]
	return a
}

// FactorHalf's factors of R·A·C, gathered, are within the fp16 bound of
// the one-GPU fp16-store (normwise, 4·(steps+3)·u₁₆·‖|L̂||Û|‖∞), R and C
// are powers of two, and Solve refines them to fp64 accuracy, on every
// grid, with orders that are not multiples of the block size.
func TestFactorHalf(t *testing.T) {
	for _, g := range halfGrids(t) {
		tm := team(t, g)
		for _, c := range []struct {
			n, nb int
			e     float64
		}{{300, 64, 0}, {1000, 128, 0}, {777, 128, 3}} {
			a := weaklyDominant(c.n, c.e)
			s, err := NewSystem(tm, c.nb, a)
			if err != nil {
				t.Fatal(err)
			}
			lu, err := FactorHalf(context.Background(), s, true)
			if err != nil {
				t.Fatalf("%v, n=%d: %v", g, c.n, err)
			}
			host := checkHalfFactors(t, lu, a, c.n, c.nb)
			checkHalfSolve(t, lu, host)
			b := make([]float64, c.n)
			for i := range b {
				b[i] = math.Cos(float64(i))
			}
			x, rep, err := Solve(context.Background(), s, b, SolveOptions{Storage: StorageHalf})
			if err != nil || !rep.Road.Half || len(rep.Attempts) != 0 {
				t.Fatalf("%v, n=%d: %v, road %v after %v", g, c.n, err, rep.Road, rep.Attempts)
			}
			if be := solve.BackwardError(c.n, a, x, b); be > 4*rep.Refine.Tol {
				t.Errorf("%v, n=%d: backward error %.3g", g, c.n, be)
			}
			s.Free()
		}
		tm.Close()
	}
}

// checkHalfFactors compares L̂Û with R·A·C on the host, and returns the
// gathered factors (column-major).
func checkHalfFactors(t *testing.T, lu *HalfLU, a []float64, n, nb int) []float32 {
	t.Helper()
	for i := range n {
		for _, s := range []float64{lu.Rows[i], lu.Cols[i]} {
			if fr, _ := math.Frexp(s); fr != 0.5 {
				t.Fatalf("scaling %g is not a power of two", s)
			}
		}
	}
	f, err := Gather(lu.W)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Free()
	m := make([]float32, n*n) // column-major
	for i, v := range gatheredValues(t, f) {
		m[i] = float32(v)
	}
	l := func(i, k int) float64 {
		switch {
		case i == k:
			return 1
		case i > k:
			return float64(m[i+k*n])
		}
		return 0
	}
	u := func(k, j int) float64 {
		if k <= j {
			return float64(m[k+j*n])
		}
		return 0
	}
	var errNorm, luNorm float64
	for i := range n {
		var rowErr, rowLU float64
		for j := range n {
			var p, q float64
			for k := range min(i, j) + 1 {
				p += l(i, k) * u(k, j)
				q += math.Abs(l(i, k) * u(k, j))
			}
			rowErr += math.Abs(lu.Rows[i]*a[i*n+j]*lu.Cols[j] - p)
			rowLU += q
		}
		errNorm, luNorm = max(errNorm, rowErr), max(luNorm, rowLU)
	}
	steps := float64((n + nb - 1) / nb)
	if bnd := 4 * (steps + 3) * 0x1p-11 * luNorm; !(errNorm <= bnd) {
		t.Errorf("n=%d: ‖R·A·C − L̂Û‖∞ = %.3g above %.3g", n, errNorm, bnd)
	}
	return m
}

// checkHalfSolve holds GatherHalf's solve to C·Û⁻¹L̂⁻¹·R·x computed on the
// host in fp64 from the gathered factors m; it frees lu. (The kept
// inverses are of the diagonal blocks' fp32 LU, m holds it in fp16: the
// two solves differ by about u₁₆, far less than a misplaced block.)
func checkHalfSolve(t *testing.T, lu *HalfLU, m []float32) {
	t.Helper()
	f, err := GatherHalf(lu)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Free()
	n := lu.W.Rows
	x, want := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = math.Cos(float64(3 * i))
		want[i] = x[i] * lu.Rows[i]
	}
	for i := range n { // forward, unit lower
		for k := range i {
			want[i] -= float64(m[i+k*n]) * want[k]
		}
	}
	for i := n - 1; i >= 0; i-- {
		for k := i + 1; k < n; k++ {
			want[i] -= float64(m[i+k*n]) * want[k]
		}
		want[i] /= float64(m[i+i*n])
	}
	if err := f.Solve(x); err != nil {
		t.Fatal(err)
	}
	var diff, norm float64
	for i := range x {
		want[i] *= lu.Cols[i]
		diff, norm = max(diff, math.Abs(x[i]-want[i])), max(norm, math.Abs(want[i]))
	}
	if !(diff <= 1e-2*norm) {
		t.Errorf("n=%d: GatherHalf's solve is off by %.3g of %.3g", n, diff, norm)
	}
}

// A matrix built to need pivoting at the first panel, in the middle and
// at the last fails FactorHalf's check there, on every grid; Solve's auto
// road then pivots on 1×Q grids and answers.
func TestFactorHalfNeedsPivoting(t *testing.T) {
	const n, nb = 600, 64
	for _, g := range halfGrids(t) {
		tm := team(t, g)
		for _, c := range []int{0, 300, n - 2} {
			a := needingPivotAt(n, c)
			s, err := NewSystem(tm, nb, a)
			if err != nil {
				t.Fatal(err)
			}
			_, err = FactorHalf(context.Background(), s, true)
			var ge *fp16.GrowthError
			if !errors.As(err, &ge) || ge.Column != c/nb*nb {
				t.Errorf("%v, pivot needed at %d: %v, want a GrowthError at column %d", g, c, err, c/nb*nb)
			}
			if g.P == 1 {
				b := make([]float64, n)
				b[c] = 1
				x, rep, err := Solve(context.Background(), s, b, SolveOptions{})
				if err != nil || !rep.Road.Pivoted || len(rep.Attempts) != 1 || !errors.As(rep.Attempts[0].Err, &ge) {
					t.Errorf("%v, pivot needed at %d: %v, road %v after %v", g, c, err, rep.Road, rep.Attempts)
				} else if be := solve.BackwardError(n, a, x, b); be > 4*rep.Refine.Tol {
					t.Errorf("%v, pivot needed at %d: backward error %.3g", g, c, be)
				}
			}
			s.Free()
		}
		tm.Close()
	}
}

// BenchmarkHalfRefinePieces times the two halves of a refinement step on
// a 1×2 grid, hpl-mxp of order 32768 and 65536 in blocks of 1024: the
// product A·x over the grid (System.MulVec) and the solve with the
// gathered fp16 factors on GPU 0 (HalfFactors.Solve); the factorization
// and the gather are timed once each.
func BenchmarkHalfRefinePieces(b *testing.B) {
	tm := team(b, Grid{1, 2})
	for _, n := range []int{32768, 65536} {
		s, err := GenerateSystem(tm, n, 1024, "hpl-mxp", 1)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		lu, err := FactorHalf(context.Background(), s, true)
		if err != nil {
			b.Fatal(err)
		}
		factored := time.Since(start)
		f, err := GatherHalf(lu)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("n=%d: factored in %v, gathered in %v", n, factored, time.Since(start)-factored)
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i] = math.Sin(float64(i))
		}
		b.Run(fmt.Sprint("mulvec/n=", n), func(b *testing.B) {
			for b.Loop() {
				if err := s.MulVec(x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprint("solve/n=", n), func(b *testing.B) {
			for b.Loop() {
				copy(y, x)
				if err := f.Solve(y); err != nil {
					b.Fatal(err)
				}
			}
		})
		f.Free()
		s.Free()
	}
}

// BenchmarkHalfSteps times FactorHalf of hpl-mxp in blocks of 1024 where
// the weak-scaling and one-GPU comparisons stand (order 32768 on one GPU;
// 46080 and 65536 on a 1×2 grid) and logs each step's marks (-test.v):
// the panel's chain on the transfer stream, the update's on the compute one.
func BenchmarkHalfSteps(b *testing.B) {
	for _, c := range []struct {
		g Grid
		n int
	}{{Grid{1, 1}, 32768}, {Grid{1, 2}, 46080}, {Grid{1, 2}, 65536}} {
		if c.g.Size() > 1 && !gpusAtLeast(c.g.Size()) {
			continue
		}
		tm := team(b, c.g)
		s, err := GenerateSystem(tm, c.n, 1024, "hpl-mxp", 1)
		if err != nil {
			b.Fatal(err)
		}
		factor := func() error {
			lu, err := FactorHalf(context.Background(), s, true)
			if err == nil {
				lu.Free()
			}
			return err
		}
		if err := factor(); err != nil { // compiles and allocates
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%v/n=%d", c.g, c.n), func(b *testing.B) {
			for b.Loop() {
				if err := factor(); err != nil {
					b.Fatal(err)
				}
			}
		})
		start := time.Now()
		w, err := allocMatrix(tm, s.A.Layout, false, true)
		if err != nil {
			b.Fatal(err)
		}
		allocated := time.Since(start)
		w.Free()
		b.Logf("%v, n=%d: the fp16 working matrix allocated and zeroed in %v, freed in %v", c.g, c.n, allocated, time.Since(start)-allocated)
		start = time.Now()
		var took time.Duration
		marks := stepTimeline(b, func() error { err := factor(); took = time.Since(start); return err })
		b.Logf("%v, n=%d, FactorHalf in %v; steps' marks, ms from each rank's first:\n%s", c.g, c.n, took, marks)
		s.Free()
		tm.Close()
	}
}

// halfFactored is weaklyDominant(n, e) on a team of grid g, in blocks of
// 128, factored by FactorHalf and gathered.
func halfFactored(t *testing.T, g Grid, n int, e float64) (*Team, []float64, *System, *HalfFactors) {
	t.Helper()
	tm := team(t, g)
	a := weaklyDominant(n, e)
	s, err := NewSystem(tm, 128, a)
	if err != nil {
		t.Fatal(err)
	}
	lu, err := FactorHalf(context.Background(), s, true)
	if err != nil {
		t.Fatal(err)
	}
	f, err := GatherHalf(lu)
	if err != nil {
		t.Fatal(err)
	}
	return tm, a, s, f
}

// hostVectors hide the factors' resident vectors: refinement keeps its
// vectors on the host, the reference.
type hostVectors struct{ solve.Factorization }

// Refinement with its vectors on the first GPU (HalfFactors.NewResident)
// takes the steps it takes with them on the host, to backward errors
// within a few units of each other, on every grid (A·x gathered along
// grid rows and from them); for an operator that is not a System
// NewResident declines. A NaN in x is reported.
func TestHalfResident(t *testing.T) {
	for _, g := range halfGrids(t) {
		const n = 1000
		tm, a, s, f := halfFactored(t, g, n, 0)
		b := make([]float64, n)
		for i := range b {
			b[i] = math.Cos(float64(i))
		}
		res, err := f.NewResident(s, b)
		if err != nil || res == nil {
			t.Fatalf("%v: resident %v, %v", g, res != nil, err)
		}
		if other, err := f.NewResident(struct{ solve.Operator }{s}, b); other != nil || err != nil {
			t.Errorf("%v: an operator that is not a System: %v, %v", g, other != nil, err)
		}
		{
			opt := solve.Options{Refine: solve.IR}
			_, want, err1 := solve.RefineOperator(context.Background(), s, b, hostVectors{f}, opt)
			x, rep, err2 := solve.RefineOperator(context.Background(), s, b, f, opt)
			if err := errors.Join(err1, err2); err != nil {
				t.Fatalf("%v: %v", g, err)
			}
			if rep.Outer != want.Outer || solve.BackwardError(n, a, x, b) > rep.Tol {
				t.Errorf("%v: %d steps to %.3g, host vectors %d to %.3g", g, rep.Outer, rep.BackwardError, want.Outer, want.BackwardError)
			}
			d := make([]float64, n)
			d[n/3] = math.NaN()
			if err := errors.Join(res.Start(), res.Add(d)); err != nil {
				t.Fatal(err)
			}
			if nr, nx, err := res.Residual(); err != nil || !math.IsNaN(nr) || !math.IsNaN(nx) {
				t.Errorf("%v: a NaN in x: norms %v, %v (%v)", g, nr, nx, err)
			}
			res.Free()
		}
		f.Free()
		s.Free()
		tm.Close()
	}
}
