package matgen

import (
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

const u = 0x1p-53 // fp64's unit roundoff

// hpl-mxp's off-diagonal entries are centered's; its diagonal is S times
// the row's other magnitudes: bit for bit the sum from 0 in the order of
// j (the device's and gpu/dist's order), and within n·u of the exact sum
// (math/big).
func TestHPLMxP(t *testing.T) {
	for _, scale := range []float64{0, 1, 0.5, 3} { // 0: the default, 1
		for _, n := range []int{1, 2, 7, 300} {
			const seed = 11
			a, err := Spec{Kind: "hpl-mxp", Scale: scale}.Generate(n, seed)
			if err != nil {
				t.Fatal(err)
			}
			s := scale
			if s == 0 {
				s = 1
			}
			for i := range n {
				sum, exact := 0.0, new(big.Float)
				for j := range n {
					v := Unit(seed, uint64(i+j*n)) - 0.5
					if j == i {
						continue
					}
					if a[i*n+j] != v {
						t.Fatalf("S=%v n=%d: (%d, %d) = %v, want centered's %v", scale, n, i, j, a[i*n+j], v)
					}
					sum += math.Abs(v)
					exact.Add(exact, big.NewFloat(math.Abs(v)))
				}
				if want := s * sum; a[i*n+i] != want {
					t.Fatalf("S=%v n=%d: a_%d%d = %v, want %v", scale, n, i, i, a[i*n+i], want)
				}
				e, _ := exact.Float64()
				if math.Abs(a[i*n+i]-s*e) > float64(n)*u*s*e {
					t.Errorf("S=%v n=%d: a_%d%d = %v, exact S·Σ = %v", scale, n, i, i, a[i*n+i], s*e)
				}
			}
		}
	}
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// bigFasiHigham is the exact matrix for α, β (0-based): −α + jαβ below
// the diagonal, 1 + iαβ on it, −β + iαβ above.
func bigFasiHigham(n int, alpha, beta float64, prec uint) [][]*big.Float {
	nf := func(x float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(x) }
	ab := new(big.Float).SetPrec(prec).Mul(nf(alpha), nf(beta))
	a := make([][]*big.Float, n)
	for i := range a {
		a[i] = make([]*big.Float, n)
		for j := range a[i] {
			v := nf(float64(min(i, j)))
			v.Mul(v, ab)
			switch {
			case i > j:
				v.Sub(v, nf(alpha))
			case i == j:
				v.Add(v, nf(1))
			default:
				v.Sub(v, nf(beta))
			}
			a[i][j] = v
		}
	}
	return a
}

// bigCond is κ∞ of a by Gauss–Jordan elimination with partial pivoting at
// prec bits: the brute force, knowing nothing of A's structure.
func bigCond(a [][]*big.Float, prec uint) float64 {
	n := len(a)
	m := make([][]*big.Float, n)
	for i := range m {
		m[i] = make([]*big.Float, 2*n)
		for j := range m[i] {
			m[i][j] = new(big.Float).SetPrec(prec)
			if j < n {
				m[i][j].Set(a[i][j])
			} else if j-n == i {
				m[i][j].SetInt64(1)
			}
		}
	}
	t := new(big.Float).SetPrec(prec)
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if new(big.Float).Abs(m[r][c]).Cmp(new(big.Float).Abs(m[p][c])) > 0 {
				p = r
			}
		}
		m[c], m[p] = m[p], m[c]
		piv := new(big.Float).Set(m[c][c])
		for j := range m[c] {
			m[c][j].Quo(m[c][j], piv)
		}
		for r := range n {
			if r == c || m[r][c].Sign() == 0 {
				continue
			}
			f := new(big.Float).Set(m[r][c])
			for j := range m[r] {
				m[r][j].Sub(m[r][j], t.Mul(f, m[c][j]))
			}
		}
	}
	norm := func(rows [][]*big.Float, off int) float64 {
		best := 0.0
		for _, row := range rows {
			s := new(big.Float).SetPrec(prec)
			for _, v := range row[off : off+n] {
				s.Add(s, new(big.Float).Abs(v))
			}
			f, _ := s.Float64()
			best = max(best, f)
		}
		return best
	}
	return norm(a, 0) * norm(m, n)
}

// FasiHighamCond's O(n) recurrences are κ∞ of the exact matrix, as a
// brute-force inverse in enough bits finds it, for α = β and α ≠ β.
func TestFasiHighamCond(t *testing.T) {
	for _, n := range []int{2, 3, 5, 8, 17, 64} {
		for _, ab := range [][2]float64{{1e-3, 1e-3}, {0.05, 0.05}, {0.5, 0.5}, {2, 2}, {0.3, 0.07}, {0.01, 0.9}} {
			if n == 64 && ab[0] > 0.3 {
				continue // κ ≈ 1e50 and beyond: slow in math/big, and no new case
			}
			// Elimination loses about log2 κ bits; κ < (1+α)^(2n)·(2+nαβ)².
			prec := uint(128 + 2*float64(n)*math.Log2(1+max(ab[0], ab[1])) + 4*math.Log2(2+float64(n)*ab[0]*ab[1]))
			want := bigCond(bigFasiHigham(n, ab[0], ab[1], prec), prec)
			if got := FasiHighamCond(n, ab[0], ab[1]); math.Abs(got-want) > 1e-13*want {
				t.Errorf("n=%d α=%v β=%v: κ∞ = %v, brute force %v", n, ab[0], ab[1], got, want)
			}
		}
	}
	// n = 2: A = [1 −α; −α 1+α²], A⁻¹ = [1+α² α; α 1].
	for _, a := range []float64{0.25, 3} {
		if got, want := FasiHighamCond(2, a, a), math.Pow(1+a+a*a, 2); math.Abs(got-want) > 4*u*want {
			t.Errorf("n=2 α=%v: κ∞ = %v, want (1+α+α²)² = %v", a, got, want)
		}
	}
}

// κ∞ increases with α (so the bisection's root is the only one), and
// FasiHighamAlpha's α gives κ∞ = K: the last float64 below it gives less.
func TestFasiHighamAlpha(t *testing.T) {
	for _, n := range []int{2, 3, 5, 20, 200} {
		prev := 1.0
		for k := -30; k <= 40; k++ {
			c := FasiHighamCond(n, math.Exp2(float64(k)/4), math.Exp2(float64(k)/4))
			if !(c > prev) && !math.IsInf(c, 1) {
				t.Errorf("n=%d: κ∞(2^%v) = %v, not above κ∞ at the α before, %v", n, float64(k)/4, c, prev)
			}
			prev = c
		}
	}
	for _, n := range []int{2, 5, 64, 1000, 20000} {
		for _, k := range []float64{1 + 1e-9, 1.5, 1e2, 1e6, 1e12, 1e100, 1e300} {
			a := FasiHighamAlpha(n, k)
			c, below := FasiHighamCond(n, a, a), FasiHighamCond(n, math.Nextafter(a, 0), math.Nextafter(a, 0))
			if !(a > 0) || !(c >= k) || !(below < k) || c-k > 1e-11*k {
				t.Errorf("n=%d K=%v: α = %v gives κ∞ = %v (the float below: %v)", n, k, a, c, below)
			}
		}
	}
	if a := FasiHighamAlpha(1, 1e6); a != 0 {
		t.Errorf("n=1: α = %v, want 0 (A = [1])", a)
	}
}

// The stored matrix (unscaled) is L·U up to one rounding per entry, with
// L and U as the paper's: the product taken in math/big, entry by entry
// within 2u of |L||U|; its κ∞, by gonum's inverse, is K; and elimination
// without pivoting in fp64 is backward stable on it, with no growth.
func TestFasiHighamLU(t *testing.T) {
	for _, n := range []int{5, 17, 40} {
		for _, k := range []float64{10, 1e4, 1e6} {
			a, err := Spec{Kind: "fasi-higham", Kappa: k}.Generate(n, 1)
			if err != nil {
				t.Fatal(err)
			}
			alpha := FasiHighamAlpha(n, k)
			checkLU(t, n, a, alpha, alpha)
			inv := mat.NewDense(n, n, nil)
			if err := inv.Inverse(mat.NewDense(n, n, a)); err != nil {
				t.Fatal(err)
			}
			c := mat.Norm(mat.NewDense(n, n, a), math.Inf(1)) * mat.Norm(inv, math.Inf(1))
			if math.Abs(c-k) > 1e-6*k {
				t.Errorf("n=%d K=%v: the stored A has κ∞ = %v", n, k, c)
			}
			checkNoPivoting(t, n, a, k)
		}
	}
}

// checkLU compares a with L·U computed in math/big from L's and U's own
// entries.
func checkLU(t *testing.T, n int, a []float64, alpha, beta float64) {
	t.Helper()
	l := func(i, k int) float64 { return map[bool]float64{true: -alpha}[i > k] + boolf(i == k) }
	r := func(k, j int) float64 { return map[bool]float64{true: -beta}[k < j] + boolf(k == j) }
	for i := range n {
		for j := range n {
			lu, abs := new(big.Float).SetPrec(300), new(big.Float).SetPrec(300)
			for k := range n {
				p := new(big.Float).SetPrec(300).Mul(big.NewFloat(l(i, k)), big.NewFloat(r(k, j)))
				lu.Add(lu, p)
				abs.Add(abs, p.Abs(p))
			}
			d := new(big.Float).Sub(big.NewFloat(a[i*n+j]), lu)
			df, _ := d.Abs(d).Float64()
			if bound, _ := abs.Float64(); df > 2*u*bound {
				t.Fatalf("n=%d α=%v: a_%d%d = %v is %v from (L·U)_ij", n, alpha, i, j, a[i*n+j], df)
			}
		}
	}
}

// checkNoPivoting factors a without pivoting in fp64 (Doolittle):
// ‖A − L̂Û‖∞ is within n·u of ‖|L̂||Û|‖∞, which is within 3·‖A‖∞, and L̂
// is −α below the diagonal to κ·u.
func checkNoPivoting(t *testing.T, n int, a []float64, kappa float64) {
	t.Helper()
	f := slices.Clone(a)
	for c := range n {
		for r := c + 1; r < n; r++ {
			f[r*n+c] /= f[c*n+c]
			for j := c + 1; j < n; j++ {
				f[r*n+j] -= f[r*n+c] * f[c*n+j]
			}
		}
	}
	alpha := FasiHighamAlpha(n, kappa)
	var normA, normLU, resid float64
	for i := range n {
		var ra, rlu, rr float64
		for j := range n {
			var s, abs float64
			for k := 0; k <= min(i, j); k++ {
				lik := f[i*n+k]
				if k == i {
					lik = 1
				}
				s += lik * f[k*n+j]
				abs += math.Abs(lik * f[k*n+j])
			}
			ra, rlu, rr = ra+math.Abs(a[i*n+j]), rlu+abs, rr+math.Abs(a[i*n+j]-s)
			if j < i && math.Abs(f[i*n+j]+alpha) > 10*kappa*u*alpha {
				t.Errorf("n=%d K=%v: L̂_%d%d = %v, want −α = %v", n, kappa, i, j, f[i*n+j], -alpha)
			}
		}
		normA, normLU, resid = max(normA, ra), max(normLU, rlu), max(resid, rr)
	}
	if resid > float64(n)*u*normLU || normLU > 3*normA {
		t.Errorf("n=%d K=%v: ‖A − L̂Û‖ = %v, ‖|L̂||Û|‖ = %v, ‖A‖ = %v", n, kappa, resid, normLU, normA)
	}
}

// scale=D multiplies A by D₁ on the left and D₂ on the right, their
// entries 10^(D(u−½)) from two streams of the seed: each entry one
// rounding after the other, as the device does. Unscaled, the matrix does
// not depend on the seed.
func TestFasiHighamScaled(t *testing.T) {
	const n, d = 50, 4
	plain, _ := Spec{Kind: "fasi-higham", Kappa: 1e3}.Generate(n, 1)
	if other, _ := (Spec{Kind: "fasi-higham", Kappa: 1e3}).Generate(n, 2); !slices.Equal(plain, other) {
		t.Error("unscaled fasi-higham depends on the seed")
	}
	spec := Spec{Kind: "fasi-higham", Kappa: 1e3, Scale: d}
	scaled, _ := spec.Generate(n, 1)
	p := NewFasiHigham(spec, n, 1)
	if NewFasiHigham(Spec{Kind: "fasi-higham", Kappa: 1e3}, n, 1).D1 != nil {
		t.Error("scale 0 draws scalings")
	}
	for name, s := range map[string]struct {
		d   []float64
		key string
	}{"D1": {p.D1, "fasi-higham D1"}, "D2": {p.D2, "fasi-higham D2"}} {
		mean := 0.0
		for i, v := range s.d {
			e := math.Log10(v)
			want := d * (Unit(Seed(1, s.key), uint64(i)) - 0.5)
			if math.Abs(e-want) > 1e-13 || math.Abs(e) > d/2+1e-13 {
				t.Fatalf("%s[%d] = 10^%v, want 10^%v", name, i, e, want)
			}
			mean += e / n
		}
		if math.Abs(mean) > 1 {
			t.Errorf("%s: mean exponent %v", name, mean)
		}
	}
	if slices.Equal(p.D1, p.D2) {
		t.Error("D1 = D2")
	}
	for i := range n {
		for j := range n {
			if want := float64(float64(p.D1[i]*plain[i*n+j]) * p.D2[j]); scaled[i*n+j] != want {
				t.Fatalf("(%d, %d) = %v, want d1·a·d2 = %v", i, j, scaled[i*n+j], want)
			}
		}
	}
	if again, _ := spec.Generate(n, 2); slices.Equal(again, scaled) {
		t.Error("another seed gives the same scalings")
	}
}

// Specs take the options of their kind, in range; zero options are the
// defaults.
func TestSpecCheck(t *testing.T) {
	if s := (Spec{Kind: "hpl-mxp"}).Normalized(); s.Scale != 1 {
		t.Errorf("hpl-mxp's default scale: %v", s.Scale)
	}
	if s := (Spec{Kind: "fasi-higham"}).Normalized(); s.Kappa != DefaultKappa || s.Scale != 0 {
		t.Errorf("fasi-higham's defaults: %+v", s)
	}
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Kind: "hilbert"}, "no counter kind"},
		{Spec{Kind: "normal", Kappa: 2}, "takes no options"},
		{Spec{Kind: "hpl-mxp", Scale: math.NaN()}, "scale NaN: want a finite number > 0"},
		{Spec{Kind: "hpl-mxp", Scale: -0.5}, "want a finite number > 0"},
		{Spec{Kind: "hpl-mxp", Kappa: 1e3}, "takes no kappa"},
		{Spec{Kind: "fasi-higham", Kappa: 0.5}, "kappa 0.5: want a finite number > 1"},
		{Spec{Kind: "fasi-higham", Kappa: math.Inf(1)}, "want a finite number > 1"},
		{Spec{Kind: "fasi-higham", Kappa: 10, Scale: 101}, "decades in [0, 100]"},
		{Spec{Kind: "fasi-higham", Kappa: 10, Scale: math.NaN()}, "decades in [0, 100]"},
	} {
		err := c.spec.Normalized().Check()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
		}
		if _, gerr := c.spec.Generate(3, 1); gerr == nil {
			t.Errorf("%+v: Generate drew it", c.spec)
		}
	}
}
