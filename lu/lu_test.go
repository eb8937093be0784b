package lu_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/lu"
	"github.com/mwmm/mwmm/mma"
)

// refLU is an independent unblocked LU with partial pivoting in fp64,
// one rounding per operation: the textbook algorithm, nothing shared with
// the package.
func refLU(n int, a []float64) ([]float64, []int) {
	w := append([]float64(nil), a...)
	piv := make([]int, n)
	for j := 0; j < n; j++ {
		p := j
		for i := j + 1; i < n; i++ {
			if math.Abs(w[i*n+j]) > math.Abs(w[p*n+j]) {
				p = i
			}
		}
		piv[j] = p
		for c := 0; c < n; c++ {
			w[j*n+c], w[p*n+c] = w[p*n+c], w[j*n+c]
		}
		for i := j + 1; i < n; i++ {
			w[i*n+j] /= w[j*n+j]
			for c := j + 1; c < n; c++ {
				w[i*n+c] -= float64(w[i*n+j] * w[j*n+c])
			}
		}
	}
	return w, piv
}

func mustForm(t *testing.T, name, unit, input string) lu.Form {
	t.Helper()
	f, err := lu.ParseForm(name, unit, input)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func randomMatrix(seed uint64, n int, draw func(r *rand.Rand) float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	a := make([]float64, n*n)
	for i := range a {
		a[i] = draw(r)
	}
	return a
}

func centered(r *rand.Rand) float64 { return 0.5 - r.Float64() }
func positive(r *rand.Rand) float64 { return 1 - r.Float64() }

// The blocked fp64 factorization performs the textbook algorithm's
// operations in the same order on every entry, so it must agree bit for
// bit, whatever the block size.
func TestFP64MatchesTextbookLU(t *testing.T) {
	for _, n := range []int{1, 2, 17, 64, 100} {
		a := randomMatrix(uint64(n), n, centered)
		want, wantPiv := refLU(n, a)
		for _, nb := range []int{1, 3, 32, 200} {
			f, err := lu.Factor(context.Background(), lu.Scalar(format.Binary64), n, a, lu.Options{NB: nb})
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if f.LU[i] != want[i] {
					t.Fatalf("n=%d nb=%d: entry (%d,%d) = %v, textbook %v", n, nb, i/n, i%n, f.LU[i], want[i])
				}
			}
			for i := range wantPiv {
				if f.Piv[i] != wantPiv[i] {
					t.Fatalf("n=%d nb=%d: piv %v, textbook %v", n, nb, f.Piv, wantPiv)
				}
			}
		}
	}
}

// exactCase builds A = P⁻¹·L·U with L unit lower triangular, its entries
// ±1/2, ±1/4 or 0 (so partial pivoting keeps the diagonal), and U of small
// integers: every operation of every form is exact, in fp16 too, so
// every form must return L and U themselves.
func exactCase(n int) (a, l, u []float64) {
	r := rand.New(rand.NewPCG(uint64(n), 3))
	l = make([]float64, n*n)
	u = make([]float64, n*n)
	for i := 0; i < n; i++ {
		l[i*n+i] = 1
		for j := 0; j < i; j++ {
			l[i*n+j] = []float64{0, 0.5, -0.5, 0.25, -0.25}[r.IntN(5)]
		}
		for j := i; j < n; j++ {
			u[i*n+j] = float64(r.IntN(7) - 3)
		}
		u[i*n+i] = float64(4 + r.IntN(4))
	}
	a = make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			for k := 0; k < n; k++ {
				a[i*n+j] += l[i*n+k] * u[k*n+j]
			}
		}
	}
	return a, l, u
}

func TestExactFactorsEveryForm(t *testing.T) {
	const n = 12 // small enough that every entry of A fits fp16's 11 bits
	a, l, u := exactCase(n)
	forms := []lu.Form{
		mustForm(t, "fp64", "", ""), mustForm(t, "fp32", "", ""), mustForm(t, "fp16", "", ""),
		mustForm(t, "tc16", "v100", ""), mustForm(t, "tc32", "v100", ""), mustForm(t, "tc32", "a100", "bf16"),
		mustForm(t, "tc32", "h100", ""), mustForm(t, "tc32", "t4", ""),
		mustForm(t, "double-fp16-fabsum", "v100", ""), mustForm(t, "double-fp16", "a100", ""),
	}
	for _, spec := range [][3]string{{"ieee", "fp64", "fp64"}, {"exact", "fp32", "fp32"}, {"exact", "fp16", "fp32"}} {
		unit, err := mma.Open(spec[0], spec[1], spec[2])
		if err != nil {
			t.Fatal(err)
		}
		forms = append(forms, lu.BlockFMA(unit))
	}
	for _, f := range forms {
		for _, nb := range []int{4, 5, 32} {
			got, err := lu.Factor(context.Background(), f, n, a, lu.Options{NB: nb})
			if err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			for i := 0; i < n; i++ {
				if got.Piv[i] != i {
					t.Fatalf("%s nb=%d: pivoted row %d with %d", f.Name, nb, i, got.Piv[i])
				}
				for j := 0; j < n; j++ {
					want := u[i*n+j]
					if j < i {
						want = l[i*n+j]
					}
					if got.LU[i*n+j] != want {
						t.Fatalf("%s nb=%d: (%d,%d) = %v, want %v", f.Name, nb, i, j, got.LU[i*n+j], want)
					}
				}
			}
		}
	}
}

func TestPivoting(t *testing.T) {
	ctx := context.Background()
	fp64 := lu.Scalar(format.Binary64)
	cases := []struct {
		name string
		n    int
		a    []float64
		piv  []int
	}{
		{"zero leading entry", 2, []float64{0, 1, 1, 0}, []int{1, 1}},
		{"tie keeps the first", 2, []float64{1, 2, -1, 3}, []int{0, 1}},
		{"tie below the diagonal", 3, []float64{1, 0, 0, 2, 1, 0, -2, 0, 1}, []int{1, 2, 2}},
		{"largest last", 3, []float64{1, 1, 1, 2, 1, 1, 4, 1, 2}, []int{2, 2, 2}},
	}
	for _, c := range cases {
		f, err := lu.Factor(ctx, fp64, c.n, c.a, lu.Options{NB: 2})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if fmt.Sprint(f.Piv) != fmt.Sprint(c.piv) {
			t.Errorf("%s: piv %v, want %v", c.name, f.Piv, c.piv)
		}
		e, _ := f.Errors(c.a)
		if e.Normwise > 0x1p-52 {
			t.Errorf("%s: backward error %v", c.name, e.Normwise)
		}
	}
}

func TestSingular(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		form lu.Form
		n    int
		a    []float64
		col  int
	}{
		{"zero matrix", lu.Scalar(format.Binary64), 2, []float64{0, 0, 0, 0}, 0},
		{"dependent rows", lu.Scalar(format.Binary64), 3, []float64{1, 2, 3, 2, 4, 6, 1, 0, 1}, 2},
		// 1 + 2^-30 is 1 in fp16: singular there, not in fp64.
		{"singular in fp16 only", lu.Scalar(format.Binary16), 2, []float64{1, 1, 1, 1 + 0x1p-30}, 1},
		{"singular in tc16", mustForm(t, "tc16", "v100", ""), 2, []float64{1, 1, 1, 1 + 0x1p-30}, 1},
	}
	for _, c := range cases {
		f, err := lu.Factor(ctx, c.form, c.n, c.a, lu.Options{})
		var se *lu.SingularError
		if !errors.As(err, &se) {
			t.Fatalf("%s: error %v, want a SingularError", c.name, err)
		}
		if se.Column != c.col || f == nil || f.Singular != c.col {
			t.Fatalf("%s: singular column %d (factors %v), want %d", c.name, se.Column, f, c.col)
		}
		x := make([]float64, c.n)
		if err := f.Solve(x); !errors.As(err, &se) {
			t.Fatalf("%s: Solve on singular factors gave %v", c.name, err)
		}
		for _, v := range f.LU {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%s: factors hold %v", c.name, f.LU)
			}
		}
	}
	if _, err := lu.Factor(ctx, lu.Scalar(format.Binary64), 2, []float64{1, 1, 1, 1 + 0x1p-30}, lu.Options{}); err != nil {
		t.Fatalf("fp64 should factor the nearly singular matrix: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	fp32 := lu.Scalar(format.Binary32)
	if _, err := lu.Factor(ctx, fp32, 0, nil, lu.Options{}); !errors.Is(err, lu.ErrEmpty) {
		t.Errorf("empty: %v", err)
	}
	if _, err := lu.Factor(ctx, fp32, 3, make([]float64, 6), lu.Options{}); err == nil {
		t.Error("3×2 data accepted as 3×3")
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		_, err := lu.Factor(ctx, fp32, 2, []float64{1, 2, bad, 4}, lu.Options{})
		if err == nil || !contains(err.Error(), "A(2, 1)") {
			t.Errorf("%v in A: %v", bad, err)
		}
	}
	var oe *lu.OverflowError
	if _, err := lu.Factor(ctx, lu.Scalar(format.Binary16), 2, []float64{1e5, 1, 1, 1}, lu.Options{}); !errors.As(err, &oe) || oe.Step != -1 {
		t.Errorf("1e5 in fp16: %v", err)
	}
	// Growth: each step doubles the last column (the classic 2^(n-1) example).
	n := 20
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		a[i*n+i], a[i*n+n-1] = 1, 1
		for j := 0; j < i; j++ {
			a[i*n+j] = -1
		}
	}
	if _, err := lu.Factor(ctx, lu.Scalar(format.Binary16), n, a, lu.Options{NB: 4}); !errors.As(err, &oe) || oe.Step < 0 {
		t.Errorf("growth 2^19 in fp16: %v", err)
	}
	if _, err := lu.Factor(ctx, fp32, 2, []float64{1, 2, 3, 4}, lu.Options{NB: -1}); err == nil {
		t.Error("block size -1 accepted")
	}
	if _, err := lu.ParseForm("tc64x", "", ""); err == nil {
		t.Error("unknown form accepted")
	}
	if _, err := lu.ParseForm("tc32", "nosuch", ""); err == nil {
		t.Error("unknown unit accepted")
	}
	// tc32-bf16 is tc32 with bf16 inputs, the GPU's spelling.
	joined, err1 := lu.ParseForm("tc32-bf16", "a100", "fp16")
	apart, err2 := lu.ParseForm("tc32", "a100", "bf16")
	if err1 != nil || err2 != nil || joined.Update != apart.Update || joined.Storage != apart.Storage {
		t.Errorf("tc32-bf16 = %q (%v), tc32 with bf16 input = %q (%v)", joined.Update, err1, apart.Update, err2)
	}
	if _, err := lu.ParseForm("tc32-fp99", "a100", ""); err == nil {
		t.Error("tc32 with an unknown input format accepted")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := lu.Factor(cctx, fp32, 2, []float64{1, 2, 3, 4}, lu.Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// The measured componentwise backward error never exceeds the form's
// a-priori bound, over forms, units, sizes, block sizes and data.
func TestBackwardErrorWithinBound(t *testing.T) {
	type fc struct{ name, unit, input string }
	forms := []fc{
		{"fp16", "", ""}, {"bf16", "", ""}, {"fp32", "", ""}, {"fp64", "", ""},
		{"tc16", "v100", ""}, {"tc32", "v100", ""}, {"tc16", "t4", ""}, {"tc32", "t4", ""},
		{"tc32", "a100", ""}, {"tc32", "a100", "bf16"}, {"tc32", "a100", "tf32"},
		{"tc32", "h100", ""}, {"tc32", "v100:extra=2", ""},
		{"double-fp16-fabsum", "v100", ""}, {"double-fp16", "v100", ""}, {"triple-bf16-fabsum", "a100", ""},
		{"fp16", "v100", ""},
	}
	sizes := []int{5, 40, 96}
	if testing.Short() {
		sizes = []int{5, 40}
	}
	dists := map[string]func(*rand.Rand) float64{"centered": centered, "positive": positive, "normal": func(r *rand.Rand) float64 { return r.NormFloat64() }}
	for _, c := range forms {
		f := mustForm(t, c.name, c.unit, c.input)
		for _, n := range sizes {
			for dname, d := range dists {
				for _, nb := range []int{8, 32} {
					a := randomMatrix(uint64(n*nb), n, d)
					fa, err := lu.Factor(context.Background(), f, n, a, lu.Options{NB: nb})
					if err != nil {
						t.Fatalf("%s/%s n=%d: %v", c.name, c.unit, n, err)
					}
					e, err := fa.Errors(a)
					if err != nil {
						t.Fatal(err)
					}
					b, err := f.Bound(n, nb)
					if err != nil {
						t.Fatal(err)
					}
					if !(e.Componentwise <= b.Total) {
						t.Errorf("%s on %s (%s) n=%d nb=%d %s: componentwise error %.3g > bound %.3g",
							c.name, c.unit, c.input, n, nb, dname, e.Componentwise, b.Total)
					}
					if e.Componentwise == 0 && f.Storage != format.Binary64 && n > 5 {
						t.Errorf("%s n=%d: zero error: the check is not looking", c.name, n)
					}
				}
			}
		}
	}
}

// TC32 must beat TC16 entry by entry (the paper's finding; in norm the two
// come close as n grows, docs/solve.md), and multiword factors must be near
// fp32's.
func TestFormsOrderedByAccuracy(t *testing.T) {
	n := 128
	a := randomMatrix(11, n, positive)
	errOf := func(name, unit string) (float64, float64) {
		f := mustForm(t, name, unit, "")
		fa, err := lu.Factor(context.Background(), f, n, a, lu.Options{})
		if err != nil {
			t.Fatal(err)
		}
		e, _ := fa.Errors(a)
		return e.Componentwise, e.Normwise
	}
	tc16, _ := errOf("tc16", "v100")
	tc32, tc32n := errOf("tc32", "v100")
	_, mw := errOf("double-fp16-fabsum", "v100")
	_, fp32 := errOf("fp32", "")
	t.Logf("n=%d: componentwise tc16 %.2e tc32 %.2e; normwise tc32 %.2e double-fp16-fabsum %.2e fp32 %.2e", n, tc16, tc32, tc32n, mw, fp32)
	if !(tc32 < tc16/2) {
		t.Errorf("tc32 %.3g not well below tc16 %.3g", tc32, tc16)
	}
	if !(mw < tc32n/100 && mw < 4*fp32) {
		t.Errorf("multiword %.3g: not near fp32's %.3g, or not far below tc32's %.3g", mw, fp32, tc32n)
	}
}

func TestSolveInverts(t *testing.T) {
	n := 30
	a := randomMatrix(5, n, centered)
	fa, err := lu.Factor(context.Background(), lu.Scalar(format.Binary64), n, a, lu.Options{NB: 7})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, n)
	b := make([]float64, n)
	for i := range x {
		x[i] = float64(i%5) - 2
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			b[i] += a[i*n+j] * x[j]
		}
	}
	if err := fa.Solve(b); err != nil {
		t.Fatal(err)
	}
	for i := range x {
		if math.Abs(b[i]-x[i]) > 1e-12 {
			t.Fatalf("x[%d] = %v, want %v", i, b[i], x[i])
		}
	}
	if err := fa.Solve(make([]float64, n+1)); err == nil {
		t.Error("wrong length accepted")
	}
}
