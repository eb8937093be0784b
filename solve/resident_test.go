package solve_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/mwmm/mwmm/lu"
	"github.com/mwmm/mwmm/solve"
)

// residentFactors keep refinement's vectors themselves for one operator,
// as gpu.Factors do on the device, and count the calls.
type residentFactors struct {
	*lu.Factors
	pair  solve.Operator
	fail  error
	nanAt int // Residual's call (from 1) that reports a NaN norm; 0: none
	calls map[string]int
}

type residentVectors struct {
	f                *residentFactors
	b, x, r, best, d []float64
}

func (f *residentFactors) NewResident(a solve.Operator, b []float64) (solve.Resident, error) {
	if f.fail != nil {
		return nil, f.fail
	}
	if a != f.pair {
		return nil, nil
	}
	f.calls["new"]++
	n := len(b)
	return &residentVectors{f: f, b: append([]float64(nil), b...), x: make([]float64, n), r: make([]float64, n), best: make([]float64, n), d: make([]float64, n)}, nil
}

func (v *residentVectors) Start() error {
	v.f.calls["start"]++
	copy(v.x, v.b)
	return v.f.Solve(v.x)
}

func (v *residentVectors) Residual() (float64, float64, error) {
	v.f.calls["residual"]++
	if err := v.f.pair.MulVec(v.x, v.r); err != nil {
		return 0, 0, err
	}
	nr, nx := 0.0, 0.0
	for i := range v.r {
		v.r[i] = v.b[i] - v.r[i]
		nr, nx = math.Max(nr, math.Abs(v.r[i])), math.Max(nx, math.Abs(v.x[i]))
	}
	if v.f.calls["residual"] == v.f.nanAt {
		nr = math.NaN()
	}
	return nr, nx, nil
}

func (v *residentVectors) Correct() error {
	v.f.calls["correct"]++
	copy(v.d, v.r)
	if err := v.f.Solve(v.d); err != nil {
		return err
	}
	return v.add(v.d)
}

func (v *residentVectors) Add(d []float64) error {
	v.f.calls["add"]++
	return v.add(d)
}

func (v *residentVectors) add(d []float64) error {
	for i := range v.x {
		v.x[i] += d[i]
	}
	return nil
}

func (v *residentVectors) Keep() error { v.f.calls["keep"]++; copy(v.best, v.x); return nil }

func (v *residentVectors) Read(which solve.ResidentVector, dst []float64) error {
	copy(dst, [...][]float64{v.x, v.r, v.best}[which])
	return nil
}

func (v *residentVectors) Free() error { v.f.calls["free"]++; return nil }

// Refinement with the factors' resident vectors takes the same steps to
// the same x as with its own host vectors, classical steps by Correct
// and GMRES's by Add; it uses them only with the factors' own operator,
// frees them, passes NewResident's error on, and stops on a NaN norm
// with no x.
func TestRefineResident(t *testing.T) {
	const n = 120
	a, b := system(5, n)
	fa, err := lu.Factor(context.Background(), form(t, "tc32", "v100"), n, a, lu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	op := &colMajor{n: n, a: columnMajor(n, a)}
	for _, m := range []solve.Method{solve.IR, solve.GMRES} {
		opt := solve.Options{Refine: m}
		want, wrep, err := solve.RefineOperator(context.Background(), op, b, fa, opt)
		if err != nil {
			t.Fatalf("%v, host vectors: %v", m, err)
		}
		rf := &residentFactors{Factors: fa, pair: op, calls: map[string]int{}}
		x, rep, err := solve.RefineOperator(context.Background(), op, b, rf, opt)
		if err != nil {
			t.Fatalf("%v, resident vectors: %v", m, err)
		}
		if rep.Outer != wrep.Outer || rep.BackwardError != wrep.BackwardError || rep.BestStep != wrep.BestStep {
			t.Errorf("%v: %d steps to %.3g (best step %d), host vectors %d to %.3g (%d)", m, rep.Outer, rep.BackwardError, rep.BestStep, wrep.Outer, wrep.BackwardError, wrep.BestStep)
		}
		for i := range x {
			if x[i] != want[i] {
				t.Fatalf("%v: x[%d] = %v, host vectors %v", m, i, x[i], want[i])
			}
		}
		c := rf.calls
		corrections := map[solve.Method]string{solve.IR: "correct", solve.GMRES: "add"}[m]
		if c["new"] != 1 || c["start"] != 1 || c["free"] != 1 || c["residual"] != rep.Outer+1 || c[corrections] != rep.Outer || c["keep"] < 1 {
			t.Errorf("%v: calls %v for %d steps", m, c, rep.Outer)
		}
	}
	other := &residentFactors{Factors: fa, pair: &colMajor{n: n, a: columnMajor(n, a)}, calls: map[string]int{}}
	if _, _, err := solve.RefineOperator(context.Background(), op, b, other, solve.Options{}); err != nil || other.calls["new"] != 0 {
		t.Errorf("another operator: %v, calls %v", err, other.calls)
	}
	broken := errors.New("no memory")
	failing := &residentFactors{Factors: fa, pair: op, fail: broken, calls: map[string]int{}}
	if _, _, err := solve.RefineOperator(context.Background(), op, b, failing, solve.Options{}); !errors.Is(err, broken) {
		t.Errorf("NewResident's error: %v", err)
	}
	nan := &residentFactors{Factors: fa, pair: op, nanAt: 1, calls: map[string]int{}}
	x, rep, err := solve.RefineOperator(context.Background(), op, b, nan, solve.Options{})
	if !errors.Is(err, solve.ErrNotConverged) || x != nil || rep.Stop != "the iterate is not finite" || nan.calls["free"] != 1 {
		t.Errorf("a NaN norm: x %v, %v, stop %q, calls %v", x != nil, err, rep.Stop, nan.calls)
	}
}
