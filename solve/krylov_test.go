package solve_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mwmm/mwmm/lu"
	"github.com/mwmm/mwmm/solve"
)

// cgs2Factors hold their own Krylov basis for one operator, as gpu.Factors
// do on the device: classical Gram–Schmidt applied twice, with dense
// products, the device's algorithm on the host. It counts the calls.
type cgs2Factors struct {
	*lu.Factors
	pair             solve.Operator
	fail             error
	expands, frees   int
	bases, combines  int
	largestBasisSize int
}

type cgs2Basis struct {
	f *cgs2Factors
	v [][]float64
}

func (f *cgs2Factors) NewKrylovBasis(a solve.Operator, v0 []float64, size int) (solve.KrylovBasis, error) {
	if f.fail != nil {
		return nil, f.fail
	}
	if a != f.pair {
		return nil, nil
	}
	f.bases++
	f.largestBasisSize = max(f.largestBasisSize, size)
	return &cgs2Basis{f: f, v: [][]float64{append([]float64(nil), v0...)}}, nil
}

func (b *cgs2Basis) Expand(k int, h []float64) error {
	b.f.expands++
	w := make([]float64, len(b.v[0]))
	if err := b.f.pair.MulVec(b.v[k], w); err != nil {
		return err
	}
	if err := b.f.Solve(w); err != nil {
		return err
	}
	clear(h)
	for range 2 {
		c := make([]float64, k+1)
		for j := range c {
			for i, wi := range w {
				c[j] += b.v[j][i] * wi
			}
		}
		for j, cj := range c {
			for i := range w {
				w[i] -= cj * b.v[j][i]
			}
			h[j] += cj
		}
	}
	s := 0.0
	for _, wi := range w {
		s += wi * wi
	}
	h[k+1] = math.Sqrt(s)
	if h[k+1] != 0 {
		for i := range w {
			w[i] /= h[k+1]
		}
		b.v = append(b.v, w)
	}
	return nil
}

func (b *cgs2Basis) Combine(y, d []float64) error {
	b.f.combines++
	clear(d)
	for j, c := range y {
		for i := range d {
			d[i] += c * b.v[j][i]
		}
	}
	return nil
}

func (b *cgs2Basis) Free() error { b.f.frees++; return nil }

// GMRES runs on the factorization's own basis when it pairs with the
// operator (every iteration through Expand, each basis freed), converges
// as with the host's basis within an iteration a correction, falls back to
// the host's basis for an operator it does not pair with, and returns the
// basis's error.
func TestKrylovFactorization(t *testing.T) {
	ctx := context.Background()
	const n = 120
	a, b := system(5, n)
	cm := columnMajor(n, a)
	fa, err := lu.Factor(ctx, form(t, "tc32", "v100"), n, a, lu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opt := solve.Options{Refine: solve.GMRES, MaxInner: 50}
	op := &colMajor{n: n, a: cm}
	_, host, err := solve.RefineOperator(ctx, op, b, fa, opt)
	if err != nil || host.GMRES == 0 {
		t.Fatalf("host basis: %v, %d GMRES iterations (want some)", err, host.GMRES)
	}

	own := &cgs2Factors{Factors: fa, pair: op}
	x, rep, err := solve.RefineOperator(ctx, op, b, own, opt)
	if err != nil {
		t.Fatalf("own basis: %v %v", err, steps(rep))
	}
	if be := solve.BackwardError(n, a, x, b); be > rep.Tol {
		t.Errorf("own basis: backward error %.3g > %.3g", be, rep.Tol)
	}
	if own.expands != rep.GMRES || own.bases != rep.Outer || own.frees != own.bases || own.combines != own.bases || own.largestBasisSize != 50 {
		t.Errorf("own basis: %d expansions for %d GMRES iterations; %d bases, %d frees, %d combinations for %d corrections; size %d (want 50)",
			own.expands, rep.GMRES, own.bases, own.frees, own.combines, rep.Outer, own.largestBasisSize)
	}
	if rep.Outer != host.Outer || math.Abs(float64(rep.GMRES-host.GMRES)) > float64(rep.Outer) {
		t.Errorf("own basis: %d steps, %d GMRES iterations; host basis %d, %d", rep.Outer, rep.GMRES, host.Outer, host.GMRES)
	}

	other := &cgs2Factors{Factors: fa, pair: &colMajor{n: n, a: cm}}
	if _, rep, err := solve.RefineOperator(ctx, op, b, other, opt); err != nil || other.expands != 0 || rep.GMRES == 0 {
		t.Errorf("unpaired operator: %v, %d expansions on the factors' basis, %d GMRES iterations", err, other.expands, rep.GMRES)
	}

	boom := errors.New("no device memory for the basis")
	failing := &cgs2Factors{Factors: fa, pair: op, fail: boom}
	if _, _, err := solve.RefineOperator(ctx, op, b, failing, opt); !errors.Is(err, boom) {
		t.Errorf("a basis that cannot be made: %v, want %v", err, boom)
	}
}

// slowFactors take a while to solve, as large factors on a GPU do.
type slowFactors struct {
	solve.Factorization
	pause time.Duration
}

func (s slowFactors) Solve(x []float64) error {
	time.Sleep(s.pause)
	return s.Factorization.Solve(x)
}

// A time budget ends refinement as not converged, with its best iterate
// and the reason, whether it runs out inside GMRES or between steps; the
// same solve without one converges.
func TestTimeBudget(t *testing.T) {
	ctx := context.Background()
	const n = 120
	a, b := system(5, n)
	fa, err := lu.Factor(ctx, form(t, "fp16", ""), n, a, lu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	slow := slowFactors{fa, 2 * time.Millisecond}
	_, free, err := solve.Refine(ctx, n, a, b, slow, solve.Options{Refine: solve.GMRES})
	if err != nil || free.GMRES < 8 {
		t.Fatalf("no budget: %v, %d GMRES iterations (want at least 8 to cut short)", err, free.GMRES)
	}
	for _, c := range []struct {
		opt  solve.Options
		want string
	}{
		{solve.Options{Refine: solve.GMRES, TimeBudget: 10 * time.Millisecond}, "GMRES iterations of this step"},
		{solve.Options{Refine: solve.IR, TimeBudget: time.Nanosecond}, "spent"},
	} {
		x, rep, err := solve.Refine(ctx, n, a, b, slow, c.opt)
		if !errors.Is(err, solve.ErrNotConverged) || !strings.Contains(rep.Stop, "time budget") || !strings.Contains(rep.Stop, c.want) {
			t.Errorf("%v budget %v: %v, stop %q; want not converged, %q", c.opt.Refine, c.opt.TimeBudget, err, rep.Stop, c.want)
		}
		if x == nil || math.Abs(solve.BackwardError(n, a, x, b)-rep.BackwardError) > 1e-6*rep.BackwardError || rep.GMRES >= free.GMRES {
			t.Errorf("%v budget %v: best iterate %v with backward error %.3g reported; %d GMRES iterations against %d", c.opt.Refine, c.opt.TimeBudget, x != nil, rep.BackwardError, rep.GMRES, free.GMRES)
		}
	}
}
