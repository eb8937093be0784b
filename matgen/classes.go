package matgen

import (
	"fmt"
	"math"
)

// The kinds with options: HPL-MxP's generator and Fasi and Higham's
// matrices. Their device twins are the last section of
// gpu/dense/kernels/lu.cu (hpl_mxp_rows, fasi_higham).

// A Spec is a counter kind with its options. Zero options are the kind's
// defaults (Normalized fills them in); kinds without options take none.
type Spec struct {
	Kind string
	// Kappa is fasi-higham's κ∞(A) > 1 (default DefaultKappa).
	Kappa float64
	// Scale is hpl-mxp's S > 0, a_ii = S·Σ_{j≠i}|a_ij| (default 1), or
	// fasi-higham's D in [0, MaxDecades]: the scalings D₁·A·D₂ have entries
	// 10^(D·(u−½)), u uniform (default 0: no scaling).
	Scale float64
}

// MaxDecades bounds fasi-higham's scale D: the scalings stay within
// 10^±50, so that D₁·A·D₂ keeps far from overflow and underflow.
const MaxDecades = 100

// Normalized fills in the defaults of options left zero.
func (s Spec) Normalized() Spec {
	switch s.Kind {
	case "hpl-mxp":
		if s.Scale == 0 {
			s.Scale = 1
		}
	case "fasi-higham":
		if s.Kappa == 0 {
			s.Kappa = DefaultKappa
		}
	}
	return s
}

// Check says what is wrong with a normalized spec: an unknown kind, an
// option the kind does not take, or a value out of range.
func (s Spec) Check() error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("matgen: %s: %s", s.Kind, fmt.Sprintf(format, args...))
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch s.Kind {
	case "uniform", "centered", "normal", "diagdom":
		if s.Kappa != 0 || s.Scale != 0 {
			return fail("takes no options")
		}
	case "hpl-mxp":
		if s.Kappa != 0 {
			return fail("takes no kappa")
		}
		if !(s.Scale > 0) || !finite(s.Scale) {
			return fail("scale %v: want a finite number > 0", s.Scale)
		}
	case "fasi-higham":
		if !(s.Kappa > 1) || !finite(s.Kappa) {
			return fail("kappa %v: want a finite number > 1", s.Kappa)
		}
		if !(s.Scale >= 0 && s.Scale <= MaxDecades) {
			return fail("scale %v: want a number of decades in [0, %d]", s.Scale, MaxDecades)
		}
	default:
		return fmt.Errorf("matgen: no counter kind %q; the kinds are %v", s.Kind, CounterKinds())
	}
	return nil
}

// hplDiagonal sets row[i] = scale·Σ_{j≠i}|row[j]|, the sum from 0 in the
// order of j: the device's hpl_mxp_rows, and on grids of one column
// gpu/dist's hpl-mxp (row_abs_sums, set_diag) too. With scale 1 the
// product is exact: HPL-MxP's weakly dominant diagonal.
func hplDiagonal(row []float64, i int, scale float64) {
	s := 0.0
	for j, v := range row {
		if j != i {
			s += math.Abs(v)
		}
	}
	row[i] = scale * s
}

// FasiHigham holds what draws a fasi-higham matrix: α, β and the
// scalings, worked out here on the host; the device takes them as they
// are (gpu/dense uploads D1 and D2), so the two agree bit for bit.
type FasiHigham struct {
	Alpha, Beta float64
	D1, D2      []float64 // the diagonals of D₁ and D₂; nil: no scaling
}

// NewFasiHigham returns the parameters of the n×n fasi-higham matrix of
// the normalized spec s: α = β with κ∞(A) = s.Kappa (FasiHighamAlpha),
// and with s.Scale = D > 0 the scalings d_i = 10^(D·(u_i − ½)), u_i =
// Unit(Seed(seed, "fasi-higham D1"), i) for D₁ and key "fasi-higham D2"
// for D₂ (math.Pow: computed here only).
func NewFasiHigham(s Spec, n int, seed uint64) FasiHigham {
	a := FasiHighamAlpha(n, s.Kappa)
	f := FasiHigham{Alpha: a, Beta: a}
	if s.Scale == 0 || n <= 0 {
		return f
	}
	scaling := func(key string) []float64 {
		st, d := Seed(seed, key), make([]float64, n)
		for i := range d {
			d[i] = math.Pow(10, float64(s.Scale*(Unit(st, uint64(i))-0.5)))
		}
		return d
	}
	f.D1, f.D2 = scaling("fasi-higham D1"), scaling("fasi-higham D2")
	return f
}

// Entry returns element (i, j), 0-based, of the matrix: with p = fl(α·β),
// −α + j·p below the diagonal, 1 + i·p on it and −β + i·p above, each one
// fused multiply-add (the device's __fma_rn), then fl(fl(d1_i·a)·d2_j)
// when scaled. In exact arithmetic (p = αβ) this is L·U with L unit lower
// triangular, −α below the diagonal, and U unit upper triangular, −β
// above: (L·U)_ij = −α·[i>j] − β·[i<j] + [i=j] + min(i, j)·αβ.
func (f FasiHigham) Entry(i, j int) float64 {
	p := float64(f.Alpha * f.Beta)
	var v float64
	switch {
	case i > j:
		v = math.FMA(float64(j), p, -f.Alpha)
	case i == j:
		v = math.FMA(float64(i), p, 1)
	default:
		v = math.FMA(float64(i), p, -f.Beta)
	}
	if f.D1 != nil {
		v = float64(float64(f.D1[i]*v) * f.D2[j])
	}
	return v
}

// FasiHighamCond returns κ∞(A) = ‖A‖∞·‖A⁻¹‖∞ of the exact n×n matrix
// with α, β > 0, unscaled, in O(n). A⁻¹ = U⁻¹L⁻¹ has no negative entry
// (L⁻¹ has α(1+α)^(i−j−1) below the diagonal, U⁻¹ β(1+β)^(j−i−1) above),
// so ‖A⁻¹‖∞ = max_i (U⁻¹L⁻¹e)_i: y = L⁻¹e by y_i = 1 + α·Σ_{j<i} y_j,
// then z = U⁻¹y by z_i = y_i + β·Σ_{j>i} z_j. Row i of A has the
// magnitudes α|jβ − 1| (j < i), 1 + iαβ and β|iα − 1| (n−1−i times), so
// its sum takes a running Σ_{j<i}|jβ − 1|. Sums of positive terms: the
// result is good to a relative few n·2⁻⁵³; +Inf where A⁻¹ overflows.
func FasiHighamCond(n int, alpha, beta float64) float64 {
	// Every product is rounded by itself (float64(·): Go may not fuse it),
	// so that α, and the matrix, are the same on every architecture.
	y := make([]float64, n)
	s := 0.0
	for i := range y {
		y[i] = 1 + float64(alpha*s)
		s += y[i]
	}
	inv := 0.0
	s = 0
	for i := n - 1; i >= 0; i-- {
		z := y[i] + float64(beta*s)
		s += z
		inv = max(inv, z)
	}
	p := float64(alpha * beta)
	norm, below := 0.0, 0.0
	for i := range n {
		x := float64(i)
		upper := float64(float64(float64(n-1-i)*beta) * math.Abs(float64(x*alpha)-1))
		row := float64(alpha*below) + 1 + float64(x*p) + upper
		norm = max(norm, row)
		below += math.Abs(float64(x*beta) - 1)
	}
	return norm * inv
}

// FasiHighamAlpha returns α such that the n×n matrix with α = β has
// κ∞(A) = kappa > 1, by bisection in float64: κ∞ is continuous in α, 1 at
// α = 0 and unbounded (it grows as (1+α)^(2n−2)), and increasing where the
// tests look. The α returned is the smallest float64 found with κ∞ ≥
// kappa. A 1×1 matrix is [1], κ = 1 whatever kappa is: α = 0.
func FasiHighamAlpha(n int, kappa float64) float64 {
	if n < 2 {
		return 0
	}
	cond := func(a float64) float64 { return FasiHighamCond(n, a, a) }
	// A bracket [lo, hi] with hi = 2·lo, then halve it to one ulp. α ≤
	// 2^300 keeps α² finite: there κ∞ ≥ α⁴ is +Inf already.
	hi := 1.0
	for cond(hi) < kappa && hi < 0x1p300 {
		hi *= 2
	}
	for cond(hi/2) >= kappa && hi > 0x1p-900 {
		hi /= 2
	}
	lo := hi / 2
	for {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			return hi
		}
		if cond(mid) < kappa {
			lo = mid
		} else {
			hi = mid
		}
	}
}
