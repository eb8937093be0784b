package experiment

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/matgen"
	"gonum.org/v1/gonum/mat"
)

func TestMatrixParse(t *testing.T) {
	good := []parseGood{
		{"uniform", MatrixSpec{Kind: "uniform"}, "uniform"},
		{" Centered ", MatrixSpec{Kind: "centered"}, "centered"},
		{"normal", MatrixSpec{Kind: "normal"}, "normal"},
		{"DIAGDOM", MatrixSpec{Kind: "diagdom"}, "diagdom"},
		{"randsvd", MatrixSpec{Kind: "randsvd", Kappa: 1e6, Mode: "geometric"}, "randsvd:kappa=1e6,mode=geometric"},
		{"randsvd:kappa=1e12", MatrixSpec{Kind: "randsvd", Kappa: 1e12, Mode: "geometric"}, "randsvd:kappa=1e12,mode=geometric"},
		{"RandSVD: Mode=One-Small , kappa = 100", MatrixSpec{Kind: "randsvd", Kappa: 100, Mode: "one-small"}, "randsvd:kappa=100,mode=one-small"},
		{"randsvd:kappa=1", MatrixSpec{Kind: "randsvd", Kappa: 1, Mode: "geometric"}, "randsvd:kappa=1,mode=geometric"},
		{"randsvd:kappa=25e-1", MatrixSpec{Kind: "randsvd", Kappa: 2.5, Mode: "geometric"}, "randsvd:kappa=2.5,mode=geometric"},
		{"randsvd:kappa=1.5e300,mode=geometric", MatrixSpec{Kind: "randsvd", Kappa: 1.5e300, Mode: "geometric"}, "randsvd:kappa=1.5e300,mode=geometric"},
		{"randsvd:kappa=1.0000000000000002", MatrixSpec{Kind: "randsvd", Kappa: 1.0000000000000002, Mode: "geometric"}, "randsvd:kappa=1.0000000000000002,mode=geometric"},
	}
	bad := []parseBad{
		{"", "uniform, centered, normal, diagdom, hpl-mxp, fasi-higham, randsvd"},
		{"hilbert", `unknown kind "hilbert": uniform, centered, normal, diagdom, hpl-mxp, fasi-higham, randsvd`},
		{"uniform:kappa=10", "uniform takes no options"},
		{"diagdom:mode=geometric", "diagdom takes no options"},
		{"normal:", "normal takes no options"},
		{"randsvd:kappa=0.5", "want a finite number ≥ 1"},
		{"randsvd:kappa=0", "want a finite number ≥ 1"},
		{"randsvd:kappa=-1e6", "want a finite number ≥ 1"},
		{"randsvd:kappa=NaN", "want a finite number ≥ 1"},
		{"randsvd:kappa=inf", "want a finite number ≥ 1"},
		{"randsvd:kappa=1e400", "want a finite number ≥ 1"},
		{"randsvd:kappa=1e6x", "want a finite number ≥ 1"},
		{"randsvd:kappa=", "want a finite number ≥ 1"},
		{"randsvd:kappa=1e3,kappa=1e4", "kappa given twice"},
		{"randsvd:mode=one-small,MODE=geometric", "mode given twice"},
		{"randsvd:mode=linear", `unknown mode "linear": geometric, one-small`},
		{"randsvd:mode=", `unknown mode "": geometric, one-small`},
		{"randsvd:cond=10", `unknown option "cond": randsvd takes kappa, mode`},
		{"randsvd:", "is not key=value"},
		{"randsvd:kappa", "is not key=value"},
		{"randsvd:kappa=1e3,", "is not key=value"},
		{"randsvd:=3", "is not key=value"},
	}
	checkParse(t, good, bad)
}

// The new kinds' options: hpl-mxp's scale, fasi-higham's kappa and
// scale, and the errors of options on kinds that take other ones or none.
func TestMatrixParseClasses(t *testing.T) {
	good := []parseGood{
		{"hpl-mxp", MatrixSpec{Kind: "hpl-mxp", Scale: 1}, "hpl-mxp"},
		{"HPL-MxP:scale=1", MatrixSpec{Kind: "hpl-mxp", Scale: 1}, "hpl-mxp"},
		{"hpl-mxp: Scale = 0.5", MatrixSpec{Kind: "hpl-mxp", Scale: 0.5}, "hpl-mxp:scale=0.5"},
		{"hpl-mxp:scale=2e3", MatrixSpec{Kind: "hpl-mxp", Scale: 2000}, "hpl-mxp:scale=2000"},
		{"fasi-higham", MatrixSpec{Kind: "fasi-higham", Kappa: 1e6}, "fasi-higham:kappa=1e6"},
		{"fasi-higham:kappa=1e10", MatrixSpec{Kind: "fasi-higham", Kappa: 1e10}, "fasi-higham:kappa=1e10"},
		{"Fasi-Higham:scale=4,kappa=1.5", MatrixSpec{Kind: "fasi-higham", Kappa: 1.5, Scale: 4}, "fasi-higham:kappa=1.5,scale=4"},
		{"fasi-higham:scale=0", MatrixSpec{Kind: "fasi-higham", Kappa: 1e6}, "fasi-higham:kappa=1e6"},
	}
	bad := []parseBad{
		{"centered:scale=2", "centered takes no options (hpl-mxp takes scale; fasi-higham takes kappa, scale; randsvd takes kappa, mode)"},
		{"hpl-mxp:scale=0", `scale "0": want a finite number > 0`},
		{"hpl-mxp:scale=-1", `scale "-1": want a finite number > 0`},
		{"hpl-mxp:scale=inf", `scale "inf": want a finite number > 0`},
		{"hpl-mxp:scale=nan", `scale "nan": want a finite number > 0`},
		{"hpl-mxp:scale=half", `scale "half": want a finite number > 0`},
		{"hpl-mxp:kappa=10", `unknown option "kappa": hpl-mxp takes scale`},
		{"hpl-mxp:scale=1,scale=2", "scale given twice"},
		{"hpl-mxp:", "is not key=value (hpl-mxp takes scale)"},
		{"fasi-higham:kappa=1", `kappa "1": want a finite number > 1`},
		{"fasi-higham:kappa=0.5", `kappa "0.5": want a finite number > 1`},
		{"fasi-higham:kappa=1e400", `kappa "1e400": want a finite number > 1`},
		{"fasi-higham:kappa=", `kappa "": want a finite number > 1`},
		{"fasi-higham:scale=-1", `scale "-1": want a number of decades in [0, 100]`},
		{"fasi-higham:scale=101", `scale "101": want a number of decades in [0, 100]`},
		{"fasi-higham:mode=geometric", `unknown option "mode": fasi-higham takes kappa, scale`},
		{"fasi-higham:kappa=10,kappa=20", "kappa given twice"},
		{"randsvd:scale=2", `unknown option "scale": randsvd takes kappa, mode`},
	}
	checkParse(t, good, bad)
}

type parseGood struct {
	in   string
	want MatrixSpec
	text string
}

type parseBad struct{ in, want string }

// checkParse parses good's specs (and their String back) and bad's, whose
// errors must name the spec and say want.
func checkParse(t *testing.T, good []parseGood, bad []parseBad) {
	t.Helper()
	for _, g := range good {
		s, err := ParseMatrix(g.in)
		if err != nil || s != g.want {
			t.Errorf("ParseMatrix(%q) = %+v, %v; want %+v", g.in, s, err, g.want)
			continue
		}
		if s.String() != g.text {
			t.Errorf("%q: String() = %q, want %q", g.in, s.String(), g.text)
		}
		if back, err := ParseMatrix(s.String()); err != nil || back != s {
			t.Errorf("%q: String() %q reads back as %+v, %v", g.in, s.String(), back, err)
		}
	}
	for _, b := range bad {
		s, err := ParseMatrix(b.in)
		if err == nil {
			t.Errorf("ParseMatrix(%q) = %+v, want an error", b.in, s)
		} else if !strings.Contains(err.Error(), b.want) || !strings.Contains(err.Error(), fmt.Sprintf("%q", b.in)) {
			t.Errorf("ParseMatrix(%q): error %q should name the spec and say %q", b.in, err, b.want)
		}
	}
}

func TestMatrixKinds(t *testing.T) {
	var names []string
	for _, k := range MatrixKinds() {
		names = append(names, k.Name)
		if k.Doc == "" || strings.Contains(k.Doc, "\n") {
			t.Errorf("%s: want a one-line doc, have %q", k.Name, k.Doc)
		}
		s, err := ParseMatrix(k.Name)
		if err != nil || s.Kind != k.Name {
			t.Errorf("kind %s does not parse: %+v, %v", k.Name, s, err)
		}
		if got := s.Generate(1, "k", 3); len(got) != 9 {
			t.Errorf("%s: Generate(3) has %d entries", k.Name, len(got))
		}
	}
	if want := []string{"uniform", "centered", "normal", "diagdom", "hpl-mxp", "fasi-higham", "randsvd"}; !slices.Equal(names, want) {
		t.Errorf("MatrixKinds = %v, want %v", names, want)
	}
}

// A hand-built spec with zero Kappa and Mode gets the defaults; one that
// ParseMatrix would reject panics rather than yield an unknown matrix.
func TestMatrixHandBuilt(t *testing.T) {
	zero, parsed := MatrixSpec{Kind: "randsvd"}, MatrixSpec{Kind: "randsvd", Kappa: DefaultKappa, Mode: Geometric}
	if zero.String() != parsed.String() || !slices.Equal(zero.Generate(1, "z", 5), parsed.Generate(1, "z", 5)) {
		t.Errorf("MatrixSpec{Kind: randsvd} is not the default randsvd: %s", zero)
	}
	for text, s := range map[string]MatrixSpec{"hpl-mxp": {Kind: "hpl-mxp"}, "fasi-higham:kappa=1e6": {Kind: "fasi-higham"}} {
		parsed, _ := ParseMatrix(text)
		if s.String() != text || !slices.Equal(s.Generate(1, "z", 5), parsed.Generate(1, "z", 5)) {
			t.Errorf("%+v is not the default %s: %s", s, text, s)
		}
	}
	for _, s := range []MatrixSpec{{Kind: "hilbert"}, {Kind: "uniform", Kappa: 10}, {Kind: "randsvd", Kappa: 0.5},
		{Kind: "randsvd", Kappa: math.NaN()}, {Kind: "randsvd", Kappa: math.Inf(1)}, {Kind: "randsvd", Mode: "linear"},
		{Kind: "randsvd", Scale: 2}, {Kind: "uniform", Scale: 2}, {Kind: "hpl-mxp", Scale: -1}, {Kind: "hpl-mxp", Mode: Geometric},
		{Kind: "hpl-mxp", Kappa: 10}, {Kind: "fasi-higham", Kappa: 0.5}, {Kind: "fasi-higham", Scale: 200}} {
		if _, err := ParseMatrix(s.String()); err == nil {
			t.Errorf("invalid %+v prints as %q, which parses", s, s)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Generate with %+v did not panic", s)
				}
			}()
			s.Generate(1, "x", 4)
		}()
	}
}

func allSpecs(t *testing.T) []MatrixSpec {
	var specs []MatrixSpec
	for _, text := range []string{"uniform", "centered", "normal", "diagdom", "randsvd:kappa=1e3",
		"randsvd:kappa=1e3,mode=one-small", "hpl-mxp", "hpl-mxp:scale=0.5", "fasi-higham:kappa=1e3,scale=2"} {
		s, err := ParseMatrix(text)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, s)
	}
	return specs
}

func TestMatrixDeterministic(t *testing.T) {
	for _, s := range allSpecs(t) {
		for _, n := range []int{1, 2, 7, 40} {
			a := s.Generate(42, "n=7", n)
			if len(a) != n*n {
				t.Fatalf("%s: n = %d gives %d entries", s, n, len(a))
			}
			if !slices.Equal(a, s.Generate(42, "n=7", n)) {
				t.Errorf("%s n=%d: the same seed and key give another matrix", s, n)
			}
			// A 1×1 diagdom matrix is ±1: other draws give it half the time;
			// a 1×1 hpl-mxp matrix is 0.
			if n == 1 && (s.Kind == "diagdom" || s.Kind == "hpl-mxp") {
				continue
			}
			if slices.Equal(a, s.Generate(42, "n=8", n)) || slices.Equal(a, s.Generate(43, "n=7", n)) {
				t.Errorf("%s n=%d: another key or seed gives the same matrix", s, n)
			}
		}
	}
	// The counter kinds are matgen's, which the GPU draws.
	for _, kind := range matgen.CounterKinds() {
		want, err := matgen.Generate(kind, 9, matgen.Seed(7, "key"))
		if got := (MatrixSpec{Kind: kind}).Generate(7, "key", 9); err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: Generate differs from matgen's (%v)", kind, err)
		}
	}
}

// The matrix must not depend on how many goroutines built it: n = 300
// takes the parallel path, over chunks that do not divide it.
func TestMatrixRandsvdGOMAXPROCS(t *testing.T) {
	s := MatrixSpec{Kind: "randsvd", Kappa: 1e8}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	one := s.Generate(3, "p", 300)
	for _, p := range []int{2, 3, 8} {
		runtime.GOMAXPROCS(p)
		if !slices.Equal(one, s.Generate(3, "p", 300)) {
			t.Errorf("GOMAXPROCS=%d gives another matrix than GOMAXPROCS=1", p)
		}
	}
}

func TestMatrixRanges(t *testing.T) {
	const n = 200
	check := func(kind string, lo, hi float64) []float64 {
		a := MatrixSpec{Kind: kind}.Generate(5, "r", n)
		for _, v := range a {
			if !(v > lo && v <= hi) {
				t.Fatalf("%s: entry %v outside (%v, %v]", kind, v, lo, hi)
			}
		}
		return a
	}
	for _, c := range []struct {
		kind         string
		lo, hi, mean float64
	}{{"uniform", 0, 1, 0.5}, {"centered", -0.5, 0.5, 0}, {"normal", math.Inf(-1), math.Inf(1), 0}} {
		a := check(c.kind, c.lo, c.hi)
		mean, sq := 0.0, 0.0
		for _, v := range a {
			mean += v / float64(len(a))
		}
		for _, v := range a {
			sq += (v - mean) * (v - mean) / float64(len(a))
		}
		want := map[string]float64{"uniform": 1. / 12, "centered": 1. / 12, "normal": 1}[c.kind]
		// 40000 draws: the bounds are 4 standard errors of the mean and 4 to
		// 7 of the variance.
		if math.Abs(mean-c.mean) > 0.02*math.Sqrt(want) || math.Abs(sq/want-1) > 0.03 {
			t.Errorf("%s: mean %.4f, variance %.4f; want %v, %.4f", c.kind, mean, sq, c.mean, want)
		}
	}

	a := MatrixSpec{Kind: "diagdom"}.Generate(5, "r", n)
	neg := 0
	for i := 0; i < n; i++ {
		off := 0.0
		for j := 0; j < n; j++ {
			if v := a[i*n+j]; j != i {
				if !(v > -0.5 && v <= 0.5) {
					t.Fatalf("diagdom: a[%d,%d] = %v outside (-0.5, 0.5]", i, j, v)
				}
				off += math.Abs(v)
			}
		}
		d := a[i*n+i]
		if !(math.Abs(d) > off) || math.Abs(math.Abs(d)-(1+off)) > 1e-12*off {
			t.Errorf("diagdom row %d: |a_ii| = %v, Σ|a_ij| = %v; want 1 + the sum", i, math.Abs(d), off)
		}
		if d < 0 {
			neg++
		}
	}
	if neg < n/4 || neg > 3*n/4 {
		t.Errorf("diagdom: %d of %d diagonal entries negative; want about half", neg, n)
	}
}

// gonum's SVD is the oracle for randsvd's singular values. Rounding A or
// its factors moves every σ by up to about √n·u·σ_1, so the bound is
// absolute, tol·σ_1 (the largest error seen is a quarter of it at n = 2,
// a ninth at n = 129), and κ̂ = σ̂_1/σ̂_n is κ to a relative tol·(κ+1).
func TestMatrixRandsvdSingularValues(t *testing.T) {
	const u = 0x1p-53
	for _, n := range []int{2, 3, 50, 129} {
		tol := 8 * math.Sqrt(float64(n)) * u
		for _, kappa := range []float64{1, 2, 1e4, 1e12} {
			for _, mode := range []string{Geometric, OneSmall} {
				s := MatrixSpec{Kind: "randsvd", Kappa: kappa, Mode: mode}
				want := s.Sigmas(n)
				if want[0] != 1 || want[n-1] != 1/kappa {
					t.Errorf("%s n=%d: σ_1 = %v, σ_n = %v", s, n, want[0], want[n-1])
				}
				for key := range 3 {
					a := s.Generate(11, fmt.Sprint(key), n)
					var svd mat.SVD
					if !svd.Factorize(mat.NewDense(n, n, a), mat.SVDNone) {
						t.Fatalf("%s n=%d: SVD failed", s, n)
					}
					got := svd.Values(nil)
					worst := 0.0
					for i := range got {
						worst = max(worst, math.Abs(got[i]-want[i]))
					}
					if worst > tol {
						t.Errorf("%s n=%d key %d: max |σ̂_i − σ_i| = %.2g > %.2g", s, n, key, worst, tol)
					}
					if rel := math.Abs(got[0]/got[n-1]/kappa - 1); rel > tol*(kappa+1)*1.01 {
						t.Errorf("%s n=%d key %d: κ̂ = %.17g, relative error %.2g > %.2g", s, n, key, got[0]/got[n-1], rel, tol*(kappa+1))
					}
					if n == 50 && key == 0 {
						t.Logf("%-34s n=%d: max |σ̂_i − σ_i| = %.2g (tol %.2g), κ̂/κ − 1 = %.2g",
							s, n, worst, tol, got[0]/got[n-1]/kappa-1)
					}
				}
			}
		}
	}
	// Modes differ in the middle only.
	g, o := MatrixSpec{Kind: "randsvd", Kappa: 100, Mode: Geometric}.Sigmas(5), MatrixSpec{Kind: "randsvd", Kappa: 100, Mode: OneSmall}.Sigmas(5)
	if !slices.Equal(g, []float64{1, math.Pow(100, -0.25), 0.1, math.Pow(100, -0.75), 0.01}) ||
		!slices.Equal(o, []float64{1, 1, 1, 1, 0.01}) {
		t.Errorf("σ: geometric %v, one-small %v", g, o)
	}
}

// At κ = 1, A = U·Vᵀ is orthogonal: AAᵀ = I checks the factors at an order
// where the SVD would be slow.
func TestMatrixRandsvdOrthogonal(t *testing.T) {
	const n = 300
	a := mat.NewDense(n, n, MatrixSpec{Kind: "randsvd", Kappa: 1}.Generate(9, "o", n))
	var p mat.Dense
	p.Mul(a, a.T())
	worst := 0.0
	for i := range n {
		for j := range n {
			worst = max(worst, math.Abs(p.At(i, j)-b2f(i == j)))
		}
	}
	if tol := 4 * n * 0x1p-53; worst > tol {
		t.Errorf("n=%d: max |AAᵀ − I| = %.2g > %.2g", n, worst, tol)
	}
	t.Logf("n=%d, κ=1: max |AAᵀ − I| = %.2g", n, worst)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Haar: at κ = 1, Q = U·Vᵀ is Haar on O(n), so E tr Q = 0, E (tr Q)² = 1
// (Diaconis and Shahshahani) and det Q = ±1 equally. With one-small, AAᵀ =
// I − (1 − κ⁻²)·u·uᵀ for u = U·e_n, which checks U alone: Haar makes u
// uniform on the sphere, E u_i² = 1/n and E Σ u_i⁴ = 3/(n+2). Without
// Stewart's signs det Q would be fixed and E Q_11 < 0.
func TestMatrixRandsvdHaar(t *testing.T) {
	const n, draws = 4, 4000
	var tr, tr2, pos, q11, fourth float64
	var u2 [n]float64
	for key := range draws {
		q := MatrixSpec{Kind: "randsvd", Kappa: 1}.Generate(1, fmt.Sprint(key), n)
		tq := q[0] + q[5] + q[10] + q[15]
		tr, tr2, q11 = tr+tq/draws, tr2+tq*tq/draws, q11+q[0]/draws
		if mat.Det(mat.NewDense(n, n, q)) > 0 {
			pos += 1. / draws
		}

		a := mat.NewDense(n, n, MatrixSpec{Kind: "randsvd", Kappa: 2, Mode: OneSmall}.Generate(1, fmt.Sprint(key), n))
		var aat mat.Dense
		aat.Mul(a, a.T())
		for i := range n {
			ui2 := (1 - aat.At(i, i)) / (1 - 0.25) // u_i²
			u2[i] += ui2 / draws
			fourth += ui2 * ui2 / draws
		}
	}
	// The bounds are about 4.5 standard errors of the means.
	if math.Abs(tr) > 0.07 || math.Abs(tr2-1) > 0.1 || math.Abs(pos-0.5) > 0.04 || math.Abs(q11) > 0.04 {
		t.Errorf("Q = U·Vᵀ: E tr Q = %.3f (0), E (tr Q)² = %.3f (1), P(det > 0) = %.3f (0.5), E Q_11 = %.3f (0)", tr, tr2, pos, q11)
	}
	for i, v := range u2 {
		if math.Abs(v-1./n) > 0.015 {
			t.Errorf("U·e_n: E u_%d² = %.4f, want %.4f", i+1, v, 1./n)
		}
	}
	if want := 3. / (n + 2); math.Abs(fourth-want) > 0.02 {
		t.Errorf("U·e_n: E Σ u_i⁴ = %.4f, want %.4f", fourth, want)
	}
	t.Logf("E tr Q = %.3f, E (tr Q)² = %.3f, P(det Q > 0) = %.3f, E Q_11 = %.3f, E u_i² = %.4f, E Σ u_i⁴ = %.4f",
		tr, tr2, pos, q11, u2, fourth)
}

func TestMatrixSmallOrders(t *testing.T) {
	for _, s := range allSpecs(t) {
		for _, n := range []int{0, -1, -5} {
			if a := s.Generate(1, "e", n); a == nil || len(a) != 0 {
				t.Errorf("%s: n = %d gives %v, want an empty slice", s, n, a)
			}
		}
	}
	// 1×1 randsvd is ±1 whatever κ: both signs occur.
	signs := map[float64]bool{}
	for key := range 20 {
		for _, mode := range []string{Geometric, OneSmall} {
			a := MatrixSpec{Kind: "randsvd", Kappa: 1e8, Mode: mode}.Generate(1, fmt.Sprint(key), 1)
			if len(a) != 1 || math.Abs(a[0]) != 1 {
				t.Fatalf("1×1 randsvd %s = %v, want ±1", mode, a)
			}
			signs[a[0]] = true
		}
	}
	if len(signs) != 2 {
		t.Errorf("1×1 randsvd takes only the values %v", signs)
	}
	// 2×2: σ = (1, 1/κ) in both modes, so ‖A‖_F² = 1 + κ⁻² and |det A| = 1/κ.
	for _, mode := range []string{Geometric, OneSmall} {
		a := MatrixSpec{Kind: "randsvd", Kappa: 1e3, Mode: mode}.Generate(2, "two", 2)
		if f := a[0]*a[0] + a[1]*a[1] + a[2]*a[2] + a[3]*a[3]; math.Abs(f-(1+1e-6)) > 1e-15 {
			t.Errorf("2×2 %s: ‖A‖_F² = %.17g, want 1 + 1e-6", mode, f)
		}
		if d := math.Abs(a[0]*a[3] - a[1]*a[2]); math.Abs(d-1e-3) > 1e-15 {
			t.Errorf("2×2 %s: |det A| = %.17g, want 1e-3", mode, d)
		}
	}
	for _, s := range allSpecs(t)[:4] {
		if a := s.Generate(1, "one", 1); s.Kind == "diagdom" && math.Abs(a[0]) != 1 {
			t.Errorf("1×1 diagdom = %v, want ±1", a)
		}
	}
}

func TestMatrixRandomVector(t *testing.T) {
	x := RandomVector(4, "b", 1000)
	if len(x) != 1000 || !slices.Equal(x, RandomVector(4, "b", 1000)) {
		t.Fatal("RandomVector is not deterministic")
	}
	if slices.Equal(x, RandomVector(4, "c", 1000)) || slices.Equal(x, RandomVector(5, "b", 1000)) {
		t.Error("another key or seed gives the same vector")
	}
	for _, v := range x {
		if !(v > -0.5 && v <= 0.5) {
			t.Fatalf("entry %v outside (-0.5, 0.5]", v)
		}
	}
	// A vector may share its matrix's key without repeating its entries.
	a := MatrixSpec{Kind: "centered"}.Generate(4, "b", 1000)
	if slices.Equal(x[:10], a[:10]) {
		t.Error("RandomVector repeats Generate's stream for the same key")
	}
	if v := RandomVector(4, "b", 0); v == nil || len(v) != 0 || len(RandomVector(4, "b", -3)) != 0 {
		t.Error("n ≤ 0 should give an empty slice")
	}
}

func BenchmarkMatrixRandsvd(b *testing.B) {
	for _, n := range []int{128, 512, 1024} {
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) {
			for b.Loop() {
				MatrixSpec{Kind: "randsvd"}.Generate(1, "bench", n)
			}
		})
	}
}

func TestDominantMatrix(t *testing.T) {
	const n = 50
	for _, c := range []struct{ lo, hi float64 }{{-1, 1}, {0, 1}} {
		a := DominantMatrix(3, "d", n, c.lo, c.hi)
		if b := DominantMatrix(3, "d", n, c.lo, c.hi); !slices.Equal(a, b) {
			t.Fatal("not deterministic")
		}
		for i := 0; i < n; i++ {
			var row, col float64
			for j := 0; j < n; j++ {
				v := a[i*n+j]
				if i == j {
					if v != n {
						t.Fatalf("a_%d%d = %v, want %d", i, i, v, n)
					}
					continue
				}
				if !(v > c.lo && v <= c.hi) {
					t.Fatalf("a_%d%d = %v outside (%v, %v]", i, j, v, c.lo, c.hi)
				}
				row += math.Abs(v)
				col += math.Abs(a[j*n+i])
			}
			if row >= n || col >= n {
				t.Fatalf("row or column %d not strictly dominated by its diagonal: %v, %v", i, row, col)
			}
		}
	}
}

// SPDMatrix is Q·diag(σ)·Qᵀ: symmetric, with the trace and the Frobenius
// norm of diag(σ) (an orthogonal similarity keeps both) and its
// eigenvalues.
func TestSPDMatrix(t *testing.T) {
	const n, c = 40, 3.0
	a := SPDMatrix(5, "s", n, c)
	sigma := matgen.Sigmas(n, 1e3, Geometric)
	var tr, fro, wantTr, wantFro float64
	for i := 0; i < n; i++ {
		tr += a[i*n+i]
		wantTr += sigma[i]
		wantFro += sigma[i] * sigma[i]
		for j := 0; j < n; j++ {
			fro += a[i*n+j] * a[i*n+j]
			if a[i*n+j] != a[j*n+i] {
				t.Fatalf("not symmetric at (%d,%d)", i, j)
			}
		}
	}
	if math.Abs(tr-wantTr) > 1e-12*wantTr || math.Abs(fro-wantFro) > 1e-12*wantFro {
		t.Errorf("trace %v (want %v), ‖A‖_F² %v (want %v)", tr, wantTr, fro, wantFro)
	}
	// Its eigenvalues are σ: positive, κ₂ = 10^c.
	var eig mat.EigenSym
	if !eig.Factorize(mat.NewSymDense(n, slices.Clone(a)), false) {
		t.Fatal("no eigenvalues")
	}
	ev := eig.Values(nil)
	slices.Sort(ev)
	if !(ev[0] > 0) || math.Abs(ev[n-1]/ev[0]-1e3) > 1e-9*1e3 {
		t.Errorf("eigenvalues %v … %v: κ₂ = %v, want 1e3", ev[0], ev[n-1], ev[n-1]/ev[0])
	}
	if d := SPDMatrix(5, "s", n, c); !slices.Equal(a, d) {
		t.Error("not deterministic")
	}
}
