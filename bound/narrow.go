package bound

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mwmm/mwmm/format"
)

// NarrowRange is the normwise bound of Mary & Mikaitis for the scaled
// algorithm C = Λ^-1(Σ_{i+j<p} u^{i+j} A^(i)B^(j))M^-1 with inputs in a
// narrow-range format (fp8, fp6, fp4, fp16) and a block FMA that
// accumulates in a format of unit roundoff U (narrow-range slides, "Error
// analysis: summary"). Rows of A and columns of B are scaled by powers of
// two so that their largest entry lies in (θ/2, θ]; word i is scaled by u^-i
// before it is rounded. Underflow adds an absolute error of at most g_min
// per rounding to the input format and G_min per operation in the
// accumulation format, which the scaling turns into the θ^-1 and θ^-2 terms:
//
//	p = 1: 2u + nU + 4n²θ^-1·g_min + 4n²θ^-2·G_min
//	p ≥ 2: (p+1)u^p + 4nu^{p-1}θ^-1·g_min + (n+p²)U + 2p(p+1)n²θ^-2·G_min
//
// so that ‖Ĉ − AB‖_∞ ≲ Total·‖A‖_∞‖B‖_∞ (to first order, for round to
// nearest). The analysis assumes that nothing overflows (the slides'
// rounding model, "assuming no overflows occur"): a scaled input, at most
// θ, must fit the input format, θ ≤ f_max, and a sum of n products, at
// most nθ², the accumulation format, nθ² ≤ F_max. Bound refuses a larger
// θ, so it needs f_max and F_max whatever θ is.
type NarrowRange struct {
	U     float64 `json:"u"`      // u of the input format
	UHigh float64 `json:"u_high"` // U of the accumulation format
	N     float64 `json:"n"`      // inner dimension
	P     int     `json:"p"`      // words

	// Theta is θ, the largest magnitude of the scaled inputs, at most
	// Theta(FMax, FMaxHigh, N); 0 means that largest θ.
	Theta float64 `json:"theta"`

	// GMin and GMinHigh are g_min and G_min, the largest absolute errors of
	// rounding a value below the smallest normal of the input and of the
	// accumulation format: f_min/2 without subnormals, u·f_min with (GMin).
	GMin     float64 `json:"g_min"`
	GMinHigh float64 `json:"g_min_high"`

	// FMax and FMaxHigh are f_max and F_max, the largest finite values of
	// the two formats: they bound θ.
	FMax     float64 `json:"f_max"`
	FMaxHigh float64 `json:"f_max_high"`
}

// Theta returns min(fmax, sqrt(Fmax/n)) — the largest magnitude scaled rows
// of A and columns of B may have so that neither the inputs nor a sum of n
// products overflow: an input of magnitude θ ≤ f_max is finite, and n
// products of magnitude at most θ² sum to at most nθ² ≤ F_max. (The slides'
// e4m3 × fp16 example, n = 4: min(448, √16376) = 127.97, which they
// round down to 127.)
func Theta(fmax, Fmax, n float64) float64 {
	return math.Min(fmax, math.Sqrt(Fmax/n))
}

// GMin returns g_min of format f: f.MinNormal()/2 when f has no subnormals
// (a value below f_min rounds to 0 or f_min), u·f.MinNormal() with them (the
// subnormals' spacing is 2u·f_min), u = 2^-p. Both are for round to nearest;
// a directed or stochastic rounding may err by twice as much.
func GMin(f format.Format) float64 {
	if f.Subnormals() {
		return math.Ldexp(f.MinNormal(), -f.Precision())
	}
	return f.MinNormal() / 2
}

// Bound returns the normwise bound. It returns an error for unit roundoffs
// outside (0, 1), N < 1, P < 1, a negative g_min or G_min, f_max or F_max
// not finite and positive, and a θ for which the bound does not hold:
// negative, above f_max, or with nθ² above F_max (θ > √(F_max/n)).
//
// Dominant lists, with numbers, the terms at least a tenth of the largest,
// e.g. "2 × 2^-4" for the slides' e4m3 example.
func (r NarrowRange) Bound() (Result, error) {
	unit := func(name string, u float64) error {
		if !(u > 0 && u < 1) {
			return fmt.Errorf("bound: %s = %g is not a unit roundoff in (0, 1)", name, u)
		}
		return nil
	}
	nonneg := func(name string, x float64) error {
		if !(x >= 0) || math.IsInf(x, 0) {
			return fmt.Errorf("bound: %s = %g; need a finite value ≥ 0", name, x)
		}
		return nil
	}
	for _, err := range []error{
		unit("u", r.U), unit("U", r.UHigh),
		nonneg("θ", r.Theta), nonneg("g_min", r.GMin), nonneg("G_min", r.GMinHigh),
	} {
		if err != nil {
			return Result{}, err
		}
	}
	switch {
	case r.P < 1:
		return Result{}, fmt.Errorf("bound: p = %d words; need at least 1", r.P)
	case !(r.N >= 1) || math.IsInf(r.N, 0):
		return Result{}, fmt.Errorf("bound: n = %g; the inner dimension must be finite and at least 1", r.N)
	}
	theta, err := r.theta()
	if err != nil {
		return Result{}, err
	}

	// Each term is coef × base, base a power of two for binary formats.
	type part struct {
		name, formula string
		coef, base    float64
	}
	n, p := r.N, float64(r.P)
	var parts []part
	if r.P == 1 {
		parts = []part{
			{"rounding of the inputs", "2u", 2, r.U},
			{"underflow of the inputs", "4n²θ^-1·g_min", 4 * n * n / theta, r.GMin},
			{"accumulation", "nU", n, r.UHigh},
			{"underflow in the accumulation", "4n²θ^-2·G_min", 4 * n * n / (theta * theta), r.GMinHigh},
		}
	} else {
		parts = []part{
			{"splitting", "(p+1)u^p", p + 1, powInt(r.U, r.P)},
			{"underflow of the inputs", "4nu^{p-1}θ^-1·g_min", 4 * n / theta, powInt(r.U, r.P-1) * r.GMin},
			{"accumulation", "(n+p²)U", n + p*p, r.UHigh},
			{"underflow in the accumulation", "2p(p+1)n²θ^-2·G_min", 2 * p * (p + 1) * n * n / (theta * theta), r.GMinHigh},
		}
	}
	var res Result
	largest := 0.0
	for _, t := range parts {
		v := t.coef * t.base
		res.Terms = append(res.Terms, Term{Name: t.name, Formula: t.formula, Value: v})
		res.Total += v
		largest = math.Max(largest, v)
	}
	var dom []string
	for _, t := range parts {
		if v := t.coef * t.base; v > 0 && v >= largest/10 {
			dom = append(dom, strconv.FormatFloat(t.coef, 'g', 3, 64)+" × "+powString(t.base))
		}
	}
	res.Dominant = strings.Join(dom, " + ")
	return res, nil
}

// theta returns θ, Theta(FMax, FMaxHigh, N) when r.Theta is 0, or an error
// when the bound does not hold for r.Theta: a scaled input or a sum of n
// products could overflow. The test is against Theta's own rounding, so
// that the default θ always passes.
func (r NarrowRange) theta() (float64, error) {
	for _, f := range []struct {
		name string
		v    float64
	}{{"f_max", r.FMax}, {"F_max", r.FMaxHigh}} {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			return 0, fmt.Errorf("bound: %s = %g; need the format's largest finite value (FMax, FMaxHigh) to bound θ", f.name, f.v)
		}
	}
	most := Theta(r.FMax, r.FMaxHigh, r.N)
	switch {
	case r.Theta == 0:
		return most, nil
	case r.Theta > r.FMax:
		return 0, fmt.Errorf("bound: θ = %g > f_max = %g: the scaled inputs would overflow the input format, and the bound would not hold", r.Theta, r.FMax)
	case r.Theta > most:
		return 0, fmt.Errorf("bound: θ = %g: n·θ² = %.4g > F_max = %g: a sum of n products could overflow the accumulation format, and the bound would not hold (θ ≤ √(F_max/n) = %.6g)",
			r.Theta, r.N*r.Theta*r.Theta, r.FMaxHigh, math.Sqrt(r.FMaxHigh/r.N))
	}
	return r.Theta, nil
}
