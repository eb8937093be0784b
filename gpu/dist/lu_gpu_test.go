package dist

import (
	"context"
	"math"
	"slices"
	"testing"
)

// The LU without pivoting on several GPUs (fp32 storage and fp16's),
// refined by GMRES-IR, solves dominant systems to the fp64 tolerance on every grid, with an order that
// is not a multiple of the block size; and the System's product and norm
// agree with a host product of the gathered matrix.
func TestSolveDominant(t *testing.T) {
	for _, g := range grids(t) {
		tm := team(t, g)
		for _, kind := range []string{"diagdom", "hpl-mxp"} {
			const n, nb = 1000, 128
			s, err := GenerateSystem(tm, n, nb, kind, 3)
			if err != nil {
				t.Fatal(err)
			}
			checkOperator(t, s)
			b := make([]float64, n)
			for i := range b {
				b[i] = float64(i%7) - 3
			}
			for _, c := range []struct {
				storage  Storage
				maxSteps int
			}{{StorageSingle, 3}, {StorageAuto, 5}} { // fp32 factors, fp16's
				x, rep, err := Solve(context.Background(), s, b, SolveOptions{Storage: c.storage})
				if err != nil || !rep.Refine.Converged || rep.Road.Half != (c.storage == StorageAuto) {
					t.Fatalf("%v grid, %s: %v, road %v (%+v)", g, kind, err, rep.Road, rep.Refine.Steps)
				}
				if len(x) != n || !finite(x) {
					t.Fatalf("%v grid, %s: x has %d entries, finite %v", g, kind, len(x), finite(x))
				}
				if steps := rep.Refine.Outer; steps > c.maxSteps {
					t.Errorf("%v grid, %s, %v: %d refinement steps for a dominant A", g, kind, rep.Road, steps)
				}
			}
			s.Free()
		}
		tm.Close()
	}
}

// checkOperator compares MulVec and NormInf with the matrix read back
// through an fp64 gather of each rank's part.
func checkOperator(t *testing.T, s *System) {
	t.Helper()
	n := s.N()
	a := gatherSystem(t, s)
	x := make([]float64, n)
	for i := range x {
		x[i] = math.Sin(float64(i))
	}
	y := make([]float64, n)
	if err := s.MulVec(x, y); err != nil {
		t.Fatal(err)
	}
	norm := 0.0
	for i := 0; i < n; i++ {
		var want, abs, off float64
		for j := 0; j < n; j++ {
			want += a[i*n+j] * x[j]
			abs += math.Abs(a[i*n+j] * x[j])
			if j != i {
				off += math.Abs(a[i*n+j])
			}
		}
		norm = max(norm, off+math.Abs(a[i*n+i]))
		if math.Abs(y[i]-want) > 1e-13*abs {
			t.Fatalf("row %d: A·x = %g, want %g", i, y[i], want)
		}
		if d := math.Abs(a[i*n+i]); d < off*(1-1e-12) {
			t.Fatalf("row %d is not dominant: |a_ii| = %g, off-diagonal sum %g", i, d, off)
		}
	}
	if math.Abs(s.NormInf()-norm) > 1e-12*norm {
		t.Errorf("NormInf = %g, want %g", s.NormInf(), norm)
	}
}

// gatherSystem returns A, row-major, read back from each rank's fp64 part.
func gatherSystem(t *testing.T, s *System) []float64 {
	t.Helper()
	n := s.N()
	a := make([]float64, n*n)
	for _, r := range s.A.Team.Ranks {
		rows, cols := s.A.localRows(r), s.A.localCols(r)
		local := make([]float64, rows*cols)
		if err := r.Engine.Device().Download(local, s.A.part(r)); err != nil {
			t.Fatal(err)
		}
		for lj := 0; lj < cols; lj++ {
			for li := 0; li < rows; li++ {
				a[s.A.GlobalRow(r.P, li)*n+s.A.GlobalCol(r.Q, lj)] = local[lj*rows+li]
			}
		}
	}
	return a
}

// cuSOLVERMg's getrf+getrs on the same GPUs solves a dominant system to
// fp64's backward error.
func TestCusolverMgBaseline(t *testing.T) {
	tm := team(t, Grid{1, 2})
	const n = 1000
	b := make([]float64, n)
	for i := range b {
		b[i] = math.Cos(float64(i))
	}
	res, err := BenchCusolverMg(tm, n, 256, "diagdom", 4, b)
	if err != nil {
		t.Fatal(err)
	}
	if res.BackwardError > 1e-14 || res.Total <= 0 || res.Getrf > res.Total {
		t.Errorf("cuSOLVERMg: %+v", res)
	}
}

// A system from the host: NewSystem spreads a row-major matrix, and the
// solve is the generated one's.
func TestSolveFromHost(t *testing.T) {
	tm := team(t, Grid{1, 2})
	const n = 300
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			a[i*n+j] = math.Sin(float64(i*n + j))
		}
		a[i*n+i] = float64(n)
	}
	s, err := NewSystem(tm, 64, a)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Free()
	b := make([]float64, n)
	b[0] = 1
	x, rep, err := Solve(context.Background(), s, b, SolveOptions{})
	if err != nil || !rep.Refine.Converged {
		t.Fatalf("%v, %+v", err, rep.Refine.Steps)
	}
	for i := 0; i < n; i++ { // the host's residual
		r := b[i]
		for j := 0; j < n; j++ {
			r -= a[i*n+j] * x[j]
		}
		if math.Abs(r) > 1e-12 {
			t.Fatalf("row %d: residual %g", i, r)
		}
	}
	if _, err := NewSystem(tm, 64, a[:n*n-1]); err == nil {
		t.Error("a matrix of n²−1 values was taken")
	}
}

// Partial pivoting on a 1×2 grid solves random systems, which need it,
// with an order that is not a multiple of the block size; and a 2×1 grid
// is refused.
func TestSolvePivoted(t *testing.T) {
	tm := team(t, Grid{1, 2})
	const n, nb = 1000, 128
	for _, kind := range []string{"centered", "uniform"} {
		s, err := GenerateSystem(tm, n, nb, kind, 9)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]float64, n)
		for i := range b {
			b[i] = math.Cos(float64(3 * i))
		}
		x, rep, err := Solve(context.Background(), s, b, SolveOptions{Pivot: PivotPartial})
		if err != nil || !rep.Refine.Converged || len(x) != n {
			t.Fatalf("%s: %v (%+v)", kind, err, rep.Refine.Steps)
		}
		s.Free()
	}
	tm.Close()
	if !gpusAtLeast(2) {
		return
	}
	tall := team(t, Grid{2, 1})
	s, err := GenerateSystem(tall, 256, 64, "centered", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Free()
	if _, _, err := Solve(context.Background(), s, make([]float64, 256), SolveOptions{Pivot: PivotPartial}); err == nil {
		t.Error("partial pivoting on a 2×1 grid was accepted")
	}
}

// Factors.Solve is a backward-stable solve with the gathered factors: in
// fp64 (|L̂Û·y − P·x| ≤ 4n·u₆₄·|L̂||Û||y|, which solves rounded to fp32
// miss by nine digits) and, without the room for fp64, in fp32.
func TestFactorsSolve(t *testing.T) {
	g := Grid{1, 1}
	if gpusAtLeast(2) {
		g = Grid{1, 2}
	}
	tm := team(t, g)
	defer tm.Close()
	const n, nb = 300, 64
	s, err := GenerateSystem(tm, n, nb, "centered", 5)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Free()
	w, perm, err := FactorPivoted(context.Background(), s, plan(t))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Free()
	defer func() { gatherWide = true }()
	for _, wide := range []bool{true, false} {
		gatherWide = wide
		f, err := Gather(w)
		if err != nil {
			t.Fatal(err)
		}
		f.perm = perm
		if f.wide != wide {
			t.Fatalf("wide %v: the factors were gathered with wide %v", wide, f.wide)
		}
		lu := gatheredValues(t, f)
		x := make([]float64, n)
		for i := range x {
			x[i] = math.Sin(float64(i) + 0.5)
		}
		y := slices.Clone(x)
		if err := f.Solve(y); err != nil {
			t.Fatal(err)
		}
		f.Free()
		bound := 4 * n * 0x1p-53
		if !wide {
			bound = 4 * n * 0x1p-24
		}
		if e := solveBackwardError(lu, n, perm, x, y); e > bound || wide && e == 0 {
			t.Errorf("wide %v: backward error %.3g of the solve, bound %.3g", wide, e, bound)
		} else {
			t.Logf("wide %v: backward error %.3g of the solve, bound %.3g", wide, e, bound)
		}
	}
}

// solveBackwardError is max_i |L̂Û·y − P·x|_i / (|L̂||Û||y|)_i for the
// column-major factors lu (unit L̂ below the diagonal, Û on and above).
func solveBackwardError(lu []float64, n int, perm []int, x, y []float64) float64 {
	z, za := make([]float64, n), make([]float64, n) // Û·y and |Û||y|
	for j := range n {
		for i := 0; i <= j; i++ {
			z[i] += lu[i+j*n] * y[j]
			za[i] += math.Abs(lu[i+j*n] * y[j])
		}
	}
	worst := 0.0
	for i := range n {
		r, ra := z[i]-x[perm[i]], za[i]
		for j := 0; j < i; j++ {
			r += lu[i+j*n] * z[j]
			ra += math.Abs(lu[i+j*n]) * za[j]
		}
		worst = max(worst, math.Abs(r)/ra)
	}
	return worst
}

// gatheredValues downloads the gathered factors, fp64 or fp32.
func gatheredValues(t *testing.T, f *Factors) []float64 {
	t.Helper()
	d, v := f.r.Engine.Device(), make([]float64, f.n*f.n)
	if f.wide {
		if err := d.Download(v, f.lu); err != nil {
			t.Fatal(err)
		}
		return v
	}
	v32 := make([]float32, f.n*f.n)
	if err := d.Download(v32, f.lu); err != nil {
		t.Fatal(err)
	}
	for i, x := range v32 {
		v[i] = float64(x)
	}
	return v
}
