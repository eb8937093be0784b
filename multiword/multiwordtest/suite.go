// Package multiwordtest is the conformance suite of multiword engines: one
// set of tests that every Engine must pass, in the manner of gonum's
// blas/testblas. An engine's own test calls Run:
//
//	func TestConformance(t *testing.T) {
//		multiwordtest.Run(t, multiword.Reference{}, multiwordtest.Options{})
//	}
//
// The suite checks shapes (1×1, non-square, inner dimensions that are not a
// multiple of the unit's block or of the FABsum block), exact results where
// every rounding is exact, the a-priori bound where they are not, clear
// errors for empty matrices and short slices, IEEE propagation of NaN and
// Inf, and overflow and underflow with and without narrow-range scaling.
package multiwordtest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mwmm/mwmm/multiword"
)

// ErrorModel is multiword.ErrorModel: engines that implement it get the
// bound checks.
type ErrorModel = multiword.ErrorModel

// Options adapt the suite to an engine.
type Options struct {
	// Plans to run besides the default ones, which use fp16 words and
	// fp32 accumulation (every tensor core has that pair).
	Plans []multiword.Plan
	// MaxSize caps the outer dimensions, for slow engines; 0 means 24.
	MaxSize int
}

// Run runs the suite against e.
func Run(t *testing.T, e multiword.Engine, opt Options) {
	plans := append(defaultPlans(t), opt.Plans...)
	size := opt.MaxSize
	if size == 0 {
		size = 24
	}
	t.Run("Exact", func(t *testing.T) { exact(t, e, plans) })
	t.Run("Bound", func(t *testing.T) { withinBound(t, e, plans, size) })
	t.Run("Errors", func(t *testing.T) { badArgs(t, e, plans[0]) })
	t.Run("Specials", func(t *testing.T) { specials(t, e, plans) })
	t.Run("Range", func(t *testing.T) { outOfRange(t, e) })
}

func defaultPlans(t *testing.T) []multiword.Plan {
	var ps []multiword.Plan
	for _, spec := range []string{
		"fp16", "double-fp16", "double-fp16:products=all,order=largest",
		"double-fp16:sum=v1,b=5", "double-fp16:sum=v2,b=3", "double-fp16:sum=v2,b=4,first=on",
		"double-fp16:scale=on,shift=u",
	} {
		p, err := multiword.Lookup(spec)
		if err != nil {
			t.Fatalf("suite plan %q: %v", spec, err)
		}
		ps = append(ps, p)
	}
	return ps
}

// shapes are m, n, k: 1×1, non-square, k below, at and off the blocks.
var shapes = [][3]int{{1, 1, 1}, {1, 1, 5}, {3, 5, 7}, {5, 3, 13}, {2, 4, 16}, {4, 2, 33}}

func mul(t *testing.T, e multiword.Engine, p multiword.Plan, m, n, k int, a, b []float64) []float64 {
	t.Helper()
	c := make([]float64, m*n)
	for i := range c {
		c[i] = math.NaN() // C is overwritten, never read
	}
	if err := e.Multiply(p, m, n, k, a, b, c); err != nil {
		t.Fatalf("%s %s %d×%d×%d: %v", e.Name(), p.Name, m, n, k, err)
	}
	return c
}

// exact: small integers are exact in every format from e5m2 up, and so are
// their products and sums in fp32, so C must equal AB exactly however
// the engine rounds.
func exact(t *testing.T, e multiword.Engine, plans []multiword.Plan) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range plans {
		for _, s := range shapes {
			m, n, k := s[0], s[1], s[2]
			a, b := ints(rng, m*k), ints(rng, k*n)
			got := mul(t, e, p, m, n, k, a, b)
			want := Naive(m, n, k, a, b)
			for x := range want {
				if got[x] != want[x] {
					t.Errorf("%s %s %d×%d×%d: C[%d,%d] = %g, want %g exactly", e.Name(), p.Name, m, n, k, x/n, x%n, got[x], want[x])
					break
				}
			}
		}
	}
}

func ints(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(rng.IntN(15) - 7)
	}
	return v
}

// Naive is the float64 product, the reference of the exact and special tests.
func Naive(m, n, k int, a, b []float64) []float64 {
	c := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for l := 0; l < k; l++ {
				s += a[i*k+l] * b[l*n+j]
			}
			c[i*n+j] = s
		}
	}
	return c
}

// Componentwise is the componentwise error of multiword.Errors.
func Componentwise(m, n, k int, a, b, c []float64) float64 {
	e, _ := multiword.Errors(m, n, k, a, b, c)
	return e
}

// Check multiplies random matrices from gen with the plan and reports an
// error when the componentwise error exceeds the plan's a-priori bound
// (with a relative slack of 2^-40 for the float64 reference). It returns
// the error and the bound.
func Check(e multiword.Engine, p multiword.Plan, m, n, k int, a, b []float64) (err, bnd float64, problem error) {
	em, ok := e.(ErrorModel)
	if !ok {
		return 0, 0, fmt.Errorf("engine %s has no error model", e.Name())
	}
	ue, problem := em.UnitError(&p)
	if problem != nil {
		return 0, 0, problem
	}
	r, problem := p.Bound(k, ue)
	if problem != nil {
		return 0, 0, problem
	}
	c := make([]float64, m*n)
	if problem := e.Multiply(p, m, n, k, a, b, c); problem != nil {
		return 0, 0, problem
	}
	err = Componentwise(m, n, k, a, b, c)
	if err > r.Total*(1+0x1p-40) {
		return err, r.Total, fmt.Errorf("%s %s %d×%d×%d: componentwise error %.3g exceeds the bound %.3g", e.Name(), p.Name, m, n, k, err, r.Total)
	}
	return err, r.Total, nil
}

func withinBound(t *testing.T, e multiword.Engine, plans []multiword.Plan, size int) {
	if _, ok := e.(ErrorModel); !ok {
		t.Skipf("engine %s has no error model", e.Name())
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, p := range plans {
		for _, s := range append(shapes, [3]int{min(size, 16), min(size, 16), 100}) {
			m, n, k := s[0], s[1], s[2]
			a, b := unit(rng, m*k), unit(rng, k*n)
			if _, _, err := Check(e, p, m, n, k, a, b); err != nil {
				t.Error(err)
			}
		}
	}
}

// unit draws from (0, 1]: nonzero mean, the tensor cores' hard case.
func unit(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 1 - rng.Float64()
	}
	return v
}

func badArgs(t *testing.T, e multiword.Engine, p multiword.Plan) {
	for _, s := range [][3]int{{0, 2, 2}, {2, 0, 2}, {2, 2, 0}} {
		m, n, k := s[0], s[1], s[2]
		err := e.Multiply(p, m, n, k, make([]float64, m*k), make([]float64, k*n), make([]float64, m*n))
		if !errors.Is(err, multiword.ErrEmpty) {
			t.Errorf("%s: %d×%d times %d×%d: got %v, want ErrEmpty", e.Name(), m, k, k, n, err)
		}
	}
	if err := e.Multiply(p, 2, 2, 2, make([]float64, 3), make([]float64, 4), make([]float64, 4)); err == nil {
		t.Errorf("%s: short A accepted", e.Name())
	}
	if err := e.Multiply(p, 2, 2, 2, make([]float64, 4), make([]float64, 4), make([]float64, 3)); err == nil {
		t.Errorf("%s: short C accepted", e.Name())
	}
	bad := p
	bad.Words = 0
	if err := e.Multiply(bad, 1, 1, 1, []float64{1}, []float64{1}, []float64{0}); err == nil {
		t.Errorf("%s: plan with 0 words accepted", e.Name())
	}
}

// specials: NaN and Inf in A and B give what IEEE arithmetic on the exact
// product gives, and leave the other elements alone.
func specials(t *testing.T, e multiword.Engine, plans []multiword.Plan) {
	inf, nan := math.Inf(1), math.NaN()
	const m, n, k = 4, 5, 6
	rng := rand.New(rand.NewPCG(5, 6))
	a, b := unit(rng, m*k), unit(rng, k*n)
	a[0*k+1] = nan  // row 0: NaN everywhere
	a[1*k+0] = inf  // row 1: +Inf, except where B's row 0 is 0 (Inf·0)
	b[0*n+2] = 0    // C[1,2] = NaN
	b[3*n+3] = -inf // column 3: -Inf, and Inf − Inf = NaN at C[1,3]
	a[2*k+4] = -inf // row 2: -Inf
	b[4*n+4] = inf  // column 4: +Inf, but -Inf·+Inf + ... at C[2,4]
	want := Naive(m, n, k, a, b)
	// The same matrices with the specials replaced: elements whose row and
	// column hold none must come out bit for bit the same.
	ca, cb := append([]float64(nil), a...), append([]float64(nil), b...)
	for _, v := range [][]float64{ca, cb} {
		for x := range v {
			if math.IsNaN(v[x]) || math.IsInf(v[x], 0) {
				v[x] = 0.5
			}
		}
	}
	for _, p := range plans {
		got := mul(t, e, p, m, n, k, a, b)
		clean := mul(t, e, p, m, n, k, ca, cb)
		for x, w := range want {
			g := got[x]
			switch {
			case math.IsNaN(w) && !math.IsNaN(g), math.IsInf(w, 0) && g != w:
				t.Errorf("%s %s: C[%d,%d] = %g, want %g", e.Name(), p.Name, x/n, x%n, g, w)
			case !math.IsNaN(w) && !math.IsInf(w, 0) && g != clean[x]:
				t.Errorf("%s %s: C[%d,%d] = %g, want %g as without the specials elsewhere", e.Name(), p.Name, x/n, x%n, g, clean[x])
			}
		}
	}
}

// outOfRange: entries beyond fp16's range overflow the words without
// scaling and not with it; entries below it underflow without scaling.
func outOfRange(t *testing.T, e multiword.Engine) {
	plain, err := multiword.Lookup("double-fp16")
	if err != nil {
		t.Fatal(err)
	}
	scaled, err := multiword.Lookup("double-fp16:scale=on,shift=u")
	if err != nil {
		t.Fatal(err)
	}
	const m, n, k = 3, 3, 8
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		name   string
		factor float64
	}{{"overflow", 1e6}, {"underflow", 1e-9}} {
		a, b := unit(rng, m*k), unit(rng, k*n)
		for l := 0; l < k; l++ {
			a[0*k+l] *= tc.factor // row 0 out of fp16's range
		}
		got := mul(t, e, plain, m, n, k, a, b)
		want := Naive(m, n, k, a, b)
		rel := math.Abs(got[0]-want[0]) / math.Abs(want[0])
		switch tc.name {
		case "overflow":
			if !math.IsInf(got[0], 0) && !math.IsNaN(got[0]) {
				t.Errorf("%s: row of 1e6 without scaling: C[0,0] = %g, want overflow to Inf or NaN", e.Name(), got[0])
			}
		case "underflow":
			if !(rel > 1e-4) {
				t.Errorf("%s: row of 1e-9 without scaling: relative error %g; fp16 words should have underflowed", e.Name(), rel)
			}
		}
		if _, _, err := Check(e, scaled, m, n, k, a, b); err != nil {
			if _, ok := e.(ErrorModel); ok {
				t.Errorf("%s with scaling: %v", tc.name, err)
			}
		}
		got = mul(t, e, scaled, m, n, k, a, b)
		if rel := math.Abs(got[0]-want[0]) / math.Abs(want[0]); !(rel < 1e-6) {
			t.Errorf("%s: row scaled by %g with scaling: C[0,0] = %g, want %g (relative error %g)", e.Name(), tc.factor, got[0], want[0], rel)
		}
	}
}
