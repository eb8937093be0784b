package matgen

import (
	"fmt"
	"math"
	"math/big"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// ulps is |x − y| in units in the last place of y.
func ulps(x, y float64) float64 {
	return math.Abs(x-y) / (math.Nextafter(math.Abs(y), math.Inf(1)) - math.Abs(y))
}

// The hash is splitmix64's: its first outputs from state 0 are the
// published ones, and Unit's values were computed by hand (Python
// integers) from the formula in the package doc.
func TestMixUnit(t *testing.T) {
	x := uint64(0)
	for _, want := range []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f} {
		x += 0x9e3779b97f4a7c15
		if got := Mix(x); got != want {
			t.Errorf("splitmix64 output %#x, want %#x", got, want)
		}
	}
	for _, c := range []struct {
		seed, k uint64
		bits    uint64 // (r >> 11) + 1
	}{{0, 0, 3096421220607531}, {1, 0, 8650606541436693}, {42, 7, 6453450763638701}, {math.MaxUint64, 12345, 633173655034660}} {
		if got, want := Unit(c.seed, c.k), float64(c.bits)*0x1p-53; got != want {
			t.Errorf("Unit(%d, %d) = %v, want %v", c.seed, c.k, got, want)
		}
	}
}

// The polynomials' coefficients are the correctly rounded Taylor
// coefficients, exactly.
func TestCoefficients(t *testing.T) {
	fact := func(m int) *big.Int { return new(big.Int).MulRange(1, int64(max(m, 1))) }
	check := func(name string, got []float64, coef func(k int) *big.Rat) {
		for k, g := range got {
			if want, _ := coef(k).Float64(); g != want {
				t.Errorf("%s[%d] = %x, want %x", name, k, g, want)
			}
		}
	}
	sign := func(k int) int64 { return 1 - 2*int64(k%2) }
	check("logCoef", logCoef[:], func(k int) *big.Rat { return big.NewRat(1, int64(2*k+1)) })
	check("cosCoef", cosCoef[:], func(k int) *big.Rat { return new(big.Rat).SetFrac(big.NewInt(sign(k)), fact(2*k)) })
	check("sinCoef", sinCoef[:], func(k int) *big.Rat { return new(big.Rat).SetFrac(big.NewInt(sign(k)), fact(2*k+1)) })
}

// Log and Cos2Pi are within a few ulps of the true values: the oracles
// are math.Log and math.Cos (below 1 ulp), and the values at multiples
// of 1/8.
func TestLogCos(t *testing.T) {
	worst := 0.0
	for k := uint64(0); k < 100000; k++ {
		u := Unit(5, k)
		if u != 1 {
			worst = max(worst, ulps(Log(u), math.Log(u)))
		}
		// 2π·u rounds by up to 4.4e-16 (u < 1), and cos with it.
		if d := math.Abs(Cos2Pi(u) - math.Cos(2*math.Pi*u)); d > 7e-16 {
			t.Fatalf("Cos2Pi(%v) = %v, cos = %v", u, Cos2Pi(u), math.Cos(2*math.Pi*u))
		}
	}
	if worst > 4 {
		t.Errorf("Log is %.1f ulps from math.Log", worst)
	}
	for _, c := range []struct{ x, want float64 }{{1, 0}, {0.5, -math.Ln2}, {0x1p-53, -53 * math.Ln2}} {
		if got := Log(c.x); ulps(got, c.want) > 1 {
			t.Errorf("Log(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	h := math.Sqrt(0.5)
	for k, want := range []float64{h, 0, -h, -1, -h, 0, h, 1} {
		u := float64(k+1) / 8
		if got := Cos2Pi(u); math.Abs(got-want) > 0x1p-53 || (want != 0 && ulps(got, want) > 1) {
			t.Errorf("Cos2Pi(%v) = %v, want %v", u, got, want)
		}
	}
}

// Normal is Box–Muller's formula to a few ulps: the wanted values are
// √(−2 ln u₁)·cos(2πu₂) in 200-bit arithmetic (mpmath), rounded.
func TestNormal(t *testing.T) {
	for _, c := range []struct {
		seed, k uint64
		want    float64
	}{{42, 7, -0x1.77fc884138fcap-4}, {1, 0, -0x1.fa83087de3160p-3}, {3, 1000, 0x1.5128161946e54p+1}} {
		if got := Normal(c.seed, c.k); ulps(got, c.want) > 4 {
			t.Errorf("Normal(%d, %d) = %x, want %x", c.seed, c.k, got, c.want)
		}
	}
	const m = 200000
	var sum, sq, tail float64
	for k := uint64(0); k < m; k++ {
		z := Normal(9, k)
		sum, sq = sum+z, sq+z*z
		if math.Abs(z) > 1.959963984540054 {
			tail++
		}
	}
	// Four standard errors: of the mean 1/√m, of the variance √(2/m), of
	// the 5% two-sided tail √(0.05·0.95/m).
	if mean, v, p := sum/m, sq/m, tail/m; math.Abs(mean) > 4/math.Sqrt(m) || math.Abs(v-1) > 4*math.Sqrt(2./m) ||
		math.Abs(p-0.05) > 4*math.Sqrt(0.05*0.95/m) {
		t.Errorf("normal draws: mean %v, variance %v, P(|z| > 1.96) = %v", mean, v, p)
	}
}

// Generate's element (i, j) is entry i + j·n of the stream, and
// diagdom's diagonal the sum of its row (the other kinds: classes_test.go).
func TestGenerate(t *testing.T) {
	const n, seed = 7, 99
	for _, kind := range []string{"uniform", "centered", "normal", "diagdom"} {
		a, err := Generate(kind, n, seed)
		if err != nil || len(a) != n*n {
			t.Fatalf("%s: %d entries, %v", kind, len(a), err)
		}
		for i := range n {
			for j := range n {
				k := uint64(i + j*n)
				want := map[string]float64{"uniform": Unit(seed, k), "centered": Unit(seed, k) - 0.5,
					"normal": Normal(seed, k), "diagdom": Unit(seed, k) - 0.5}[kind]
				if kind == "diagdom" && i == j {
					want = 1
					for l := range n {
						if l != i {
							want += math.Abs(Unit(seed, uint64(i+l*n)) - 0.5)
						}
					}
					want = math.Copysign(want, Unit(seed, k)-0.5)
				}
				if a[i*n+j] != want {
					t.Errorf("%s (%d, %d) = %v, want %v", kind, i, j, a[i*n+j], want)
				}
			}
		}
	}
	if a, err := Generate("centered", 0, 1); err != nil || a == nil || len(a) != 0 {
		t.Errorf("n = 0: %v, %v", a, err)
	}
	if _, err := Generate("randsvd", 3, 1); err == nil || !strings.Contains(err.Error(), "diagdom") {
		t.Errorf("randsvd is no counter kind: %v", err)
	}
}

// The parallel path (n = 300) gives what one goroutine does.
func TestGenerateGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, kind := range CounterKinds() {
		runtime.GOMAXPROCS(1)
		one, _ := Generate(kind, 300, 3)
		runtime.GOMAXPROCS(7)
		if many, _ := Generate(kind, 300, 3); !slices.Equal(one, many) {
			t.Errorf("%s: GOMAXPROCS = 7 gives another matrix", kind)
		}
	}
}

func TestSeed(t *testing.T) {
	seen := map[uint64]string{}
	for _, s := range []uint64{0, 1, 2} {
		for _, key := range []string{"", "A", "B", "b"} {
			v := Seed(s, key)
			if prev, ok := seen[v]; ok {
				t.Errorf("Seed(%d, %q) = Seed of %s", s, key, prev)
			}
			seen[v] = fmt.Sprint(s, key)
		}
	}
}

func TestKinds(t *testing.T) {
	if got, want := CounterKinds(), []string{"uniform", "centered", "normal", "diagdom", "hpl-mxp", "fasi-higham"}; !slices.Equal(got, want) {
		t.Errorf("CounterKinds = %v, want %v", got, want)
	}
	for _, k := range Kinds() {
		if k.Doc == "" || strings.Contains(k.Doc, "\n") {
			t.Errorf("%+v: want a one-line doc", k)
		}
		// A kind's parameters are in its doc's synopsis, and Generate
		// draws exactly the counter kinds.
		for _, p := range strings.Split(k.Params, ",") {
			if key, _, _ := strings.Cut(p, "="); p != "" && !strings.Contains(k.Doc, key+"=") {
				t.Errorf("%s: the doc does not show %s", k.Name, key)
			}
		}
		if _, err := Generate(k.Name, 3, 1); (err == nil) != k.Counter {
			t.Errorf("%s: Counter %v, but Generate says %v", k.Name, k.Counter, err)
		}
	}
	g, o := Sigmas(5, 100, Geometric), Sigmas(5, 100, OneSmall)
	if ulps(g[2], 0.1) > 1 || g[4] != 0.01 || !slices.Equal(o, []float64{1, 1, 1, 1, 0.01}) || Sigmas(1, 100, Geometric)[0] != 1 {
		t.Errorf("Sigmas: geometric %v, one-small %v", g, o)
	}
}

// The device's generators (gpu/dense/kernels/lu.cu) are this package's
// formulas: the same coefficients and constants, written out there.
func TestDeviceTwin(t *testing.T) {
	src, err := os.ReadFile("../gpu/dense/kernels/lu.cu")
	if err != nil {
		t.Skip(err)
	}
	table := func(name string) string {
		m := regexp.MustCompile(`const double ` + name + `\[\d+\] = \{([^}]*)\}`).FindSubmatch(src)
		if m == nil {
			t.Fatalf("lu.cu has no table %s", name)
		}
		return strings.Join(strings.Fields(string(m[1])), "")
	}
	hex := func(c []float64) string {
		var s string
		for _, v := range c {
			s += fmt.Sprintf("%x,", v)
		}
		return s
	}
	for name, c := range map[string][]float64{"c": logCoef[:], "cc": cosCoef[:], "sc": sinCoef[:]} {
		if got, want := table(name), hex(c); got != want {
			t.Errorf("lu.cu's %s = %s, want %s", name, got, want)
		}
	}
	for _, v := range []float64{math.Sqrt2, math.Ln2, math.Pi / 2} {
		if lit := fmt.Sprintf("%x", v); !strings.Contains(string(src), lit) {
			t.Errorf("lu.cu lacks the constant %s (%v)", lit, v)
		}
	}
	for _, line := range []string{"0x9e3779b97f4a7c15ull + mix(i + 0x632be59bd9b4e019ull)", "0xbf58476d1ce4e5b9ull", "0x94d049bb133111ebull"} {
		if !strings.Contains(string(src), line) {
			t.Errorf("lu.cu's hash lacks %q", line)
		}
	}
	// hplDiagonal and FasiHigham.Entry, operation for operation.
	for _, line := range []string{"double s = 0.0;", "s = __dadd_rn(s, fabs(a[i + j * ld]));", "a[i + i * ld] = __dmul_rn(scale, s);",
		"const double p = __dmul_rn(alpha, beta);", "v = __fma_rn((double)j, p, -alpha);", "v = __fma_rn((double)i, p, 1.0);",
		"v = __fma_rn((double)i, p, -beta);", "v = __dmul_rn(__dmul_rn(d1[i], v), d2[j]);"} {
		if !strings.Contains(string(src), line) {
			t.Errorf("lu.cu's hpl_mxp_rows or fasi_higham lacks %q", line)
		}
	}
}
