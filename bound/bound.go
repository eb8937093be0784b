package bound

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mwmm/mwmm/format"
)

// U returns the unit roundoff of rounding to f with mode: 2^-p for the
// round-to-nearest modes (NearestEven, NearestAway, NearestTowardZero),
// 2^(1-p) for the directed ones (TowardZero, Up, Down, AwayFromZero, ToOdd)
// and for the stochastic ones, with p = f.Precision(). A directed or
// stochastic rounding may move a value by up to one whole spacing of the
// grid, twice the distance to the nearest neighbour; so u doubles, and every
// bound with it (the tensor cores' round-toward-zero makes u_high of fp32
// 2^-23, not 2^-24).
func U(f format.Format, mode format.Mode) float64 {
	p := f.Precision()
	switch mode {
	case format.NearestEven, format.NearestAway, format.NearestTowardZero:
		return math.Ldexp(1, -p)
	}
	return math.Ldexp(1, 1-p)
}

// Gamma returns γ_n = n u / (1 − n u), or +Inf when n u ≥ 1. n is float64 so
// that n can be huge or √n. γ_0 = 0 (also when u is 0); a negative or NaN
// argument gives NaN.
//
// γ_n bounds the relative error of n successive roundings: if |δ_i| ≤ u then
// |∏(1+δ_i) − 1| ≤ γ_n (Higham, Lemma 3.1), and γ_a + γ_b + γ_a γ_b ≤ γ_{a+b}.
func Gamma(n, u float64) float64 {
	switch {
	case math.IsNaN(n) || math.IsNaN(u) || n < 0 || u < 0:
		return math.NaN()
	case n == 0 || u == 0:
		return 0
	}
	nu := n * u
	if nu >= 1 {
		return math.Inf(1)
	}
	return nu / (1 - nu)
}

// Summation is how the n products of one dot product are accumulated.
type Summation uint8

const (
	Plain    Summation = iota // every product accumulated by the block FMA (Algorithm 2.1 / 4.1)
	FABsumV1                  // blocks of b summed in the unit, block sums added in the high precision (Alg. 4.2)
	FABsumV2                  // block sums added in fp64 (Alg. 4.3)
	// FABsumPair adds the block sums into an unevaluated pair (hi, lo) of
	// high-precision values with Knuth's TwoSum, each operation rounded to
	// nearest in the high precision (a = hi, b = the block sum):
	//
	//	s = a + b; bb = s − a; ab = s − bb; db = b − bb; da = a − ab; e = da + db
	//	hi = s; lo = lo + e
	//
	// The pair's value is fl(hi + lo). This is Ogita–Rump–Oishi's Sum2: nearly
	// v2's accuracy with only fp32 arithmetic, which GPUs run at full
	// speed and fp64 not.
	FABsumPair
)

// String returns "plain", "v1", "v2" or "pair".
func (s Summation) String() string {
	switch s {
	case Plain:
		return "plain"
	case FABsumV1:
		return "v1"
	case FABsumV2:
		return "v2"
	case FABsumPair:
		return "pair"
	}
	return "Summation(" + strconv.Itoa(int(s)) + ")"
}

// ParseSummation reads a summation by name, case-insensitively: "plain",
// "none" or "" for Plain, "v1" (or "fabsum-v1"), "v2" (or "fabsum-v2") and
// "pair" (or "twosum", "fabsum-pair") for FABsumPair.
func ParseSummation(s string) (Summation, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "plain", "none":
		return Plain, nil
	case "v1", "fabsum-v1", "fabsumv1":
		return FABsumV1, nil
	case "v2", "fabsum-v2", "fabsumv2":
		return FABsumV2, nil
	case "pair", "twosum", "fabsum-pair", "fabsumpair":
		return FABsumPair, nil
	}
	return Plain, fmt.Errorf("bound: unknown summation %q (want plain, v1, v2 or pair)", s)
}

// MarshalText writes the summation's name, so that JSON shows "v1", not 1.
func (s Summation) MarshalText() ([]byte, error) {
	if s > FABsumPair {
		return nil, fmt.Errorf("bound: invalid summation %d", uint8(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads a name that ParseSummation accepts.
func (s *Summation) UnmarshalText(b []byte) error {
	v, err := ParseSummation(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Multiword describes Algorithm 2.1 for the bounds of section 2 and 4.4 of
// the paper: A and B split into P words of a format of unit roundoff ULow,
// the products A_i·B_j computed by a block FMA that accumulates with unit
// roundoff UHigh and summed in that precision.
type Multiword struct {
	ULow  float64 `json:"u_low"`  // unit roundoff of the words' format
	UHigh float64 `json:"u_high"` // unit roundoff of the block FMA's accumulation
	P     int     `json:"p"`      // words
	N     float64 `json:"n"`      // inner dimension n

	// AllProducts computes all p² products A_i·B_j (eq. 2.5) instead of
	// those with i+j ≤ p+1 (eq. 2.7/2.8).
	AllProducts bool `json:"all_products"`

	Sum Summation `json:"summation"`
	B   float64   `json:"b,omitempty"`   // FABsum block size b (ignored for Plain)
	U64 float64   `json:"u64,omitempty"` // unit roundoff of FABsum-v2's inter-block sums; 0 means 2^-53
	// Group (FABsumV2 and FABsumPair, 0 or 1: none) adds each run of Group
	// block sums in the high precision first, rounding to nearest, and only
	// those group sums in fp64 (into the pair): a kernel then does one
	// fp64 addition (TwoSum) per Group blocks (see multiword.Plan.Group).
	Group float64 `json:"group,omitempty"`

	// Probabilistic replaces the dimension-dependent constants n, b and n/b
	// by their square roots (paper section 4.3). This is a heuristic, not a
	// bound: it holds with high probability when the rounding errors are
	// independent with mean zero, which round to nearest usually and
	// stochastic rounding always gives, and round toward zero on data of one
	// sign never does.
	Probabilistic bool `json:"probabilistic"`
}

// Term is one part of a bound.
type Term struct {
	Name    string  `json:"name"`    // e.g. "splitting", "accumulation"
	Formula string  `json:"formula"` // e.g. "2u_low^p + u_low^2p", "γ_{n+p²-1}(u_high)·S_kept·(1+u_low)²"
	Value   float64 `json:"value"`
}

// Result is a bound, its terms and its dominant term.
type Result struct {
	Terms []Term `json:"terms"`
	// Total is the constant c in |C − Ĉ| ≤ c |A||B| (componentwise), or in
	// the normwise ‖Ĉ − AB‖_∞ ≲ c ‖A‖_∞‖B‖_∞ for NarrowRange. It is the sum
	// of the terms' values; +Inf when n·u ≥ 1, where the bound says nothing.
	Total float64 `json:"total"`
	// Dominant is the first-order bound in the style of Table 2.1, e.g.
	// "n × 2^-24", "2 × 2^-11 + n × 2^-24" or "3 × 2^-16 + n × 2^-24".
	Dominant string `json:"dominant"`
}

// jsonNumber is x, or its name ("+Inf", "NaN") where JSON has no number for it.
func jsonNumber(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return x
}

// MarshalJSON writes a Value of ±Inf or NaN as the string "+Inf", "-Inf" or
// "NaN", which JSON numbers cannot hold.
func (t Term) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Name    string `json:"name"`
		Formula string `json:"formula"`
		Value   any    `json:"value"`
	}{t.Name, t.Formula, jsonNumber(t.Value)})
}

// MarshalJSON writes a Total of +Inf as the string "+Inf" (see Term.MarshalJSON).
func (r Result) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Terms    []Term `json:"terms"`
		Total    any    `json:"total"`
		Dominant string `json:"dominant"`
	}{r.Terms, jsonNumber(r.Total), r.Dominant})
}

// Bound returns the componentwise bound |C − Ĉ| ≤ Total·|A||B| of
// Algorithm 2.1.
//
// Without AllProducts it is the first line of (2.7), with one correction:
//
//	2u_low^p + u_low^2p + (γ_acc·S_kept + S_dropped)(1+u_low)²
//
// where S_kept = Σ_{i+j≤p+1} u_low^{i+j-2} = Σ_{k=0}^{p-1} (k+1) u_low^k
// bounds Σ|A_i||B_j|/(|A||B|) over the computed products by (2.6), and
// S_dropped = Σ_{i+j>p+1, i,j≤p} u_low^{i+j-2} = Σ_{i=1}^{p-1} (p−i) u_low^{p+i-1}
// is the size of the products left out. The paper writes
// (1 + Σ_{k=1}^{p-1} u_low^k) for S_kept, which undercounts: there are s−1
// products with i+j = s, each bounded by u_low^{s-2}, so the coefficient of
// u_low^k is k+1, not 1 (for p = 2: A_1B_2 and A_2B_1 give 2u_low). The
// difference is of second order and does not change (2.8).
//
// With AllProducts it is (2.5) with (2.6) applied to Σ|A_i||B_j|:
//
//	2u_low^p + u_low^2p + γ_acc·(Σ_{k=0}^{p-1} u_low^k)²(1+u_low)².
//
// γ_acc bounds the relative error of the accumulation of one product A_i·B_j
// and of the sum of the p² products (p²−1 additions, as the paper counts them
// also when fewer products are computed):
//
//	Plain     γ_{n+p²-1}(u_high)                                   (2.5)
//	FABsumV1  (1+γ_b(u_high))(1+γ_{n/b}(u_high))(1+γ_{p²-1}(u_high)) − 1
//	FABsumV2  (1+γ_b(u_high))(1+γ_{n/b}(u_64))(1+γ_{p²}(u_high)) − 1
//	grouped   (1+γ_b(u_high))(1+γ_{g−1}(u_high))(1+γ_{n/(bg)}(u_64))(1+γ_{p²}(u_high)) − 1
//	pair      (1+γ_b(u_high))(1+u_high+γ_{n/b}(u_high)²)(1+γ_{p²}(u_high)) − 1
//
// A FABsum block of b products is one block-FMA dot product (γ_b); the
// ⌈n/b⌉ block sums take ⌈n/b⌉−1 < n/b additions (γ_{n/b}), in u_high for v1
// and in u_64 (fp64) for v2. To first order this is (b + n/b)u_high for
// v1 and b·u_high + (n/b)·u_64 for v2, as in section 4.4. FABsum-v2 ends
// with one more rounding, of the fp64 sum to the high precision
// (Algorithm 4.3, line 7), hence γ_{p²} there: p²−1 additions and that
// rounding (for p ≥ 2 the additions of the products already round to the
// high precision, so this overcounts by one u_high).
//
// FABsumPair's block sums x_i are added by the compensated summation Sum2 of
// Ogita, Rump and Oishi (2005, Prop. 4.5), whose error is
// |ŝ − s| ≤ u_high|s| + γ_{n/b}(u_high)²·Σ|x_i|: the u_high is the final
// fl(hi + lo), and since |s| ≤ Σ|x_i| the two give the middle factor. The
// last factor is v2's, kept for the same reason (and overcounting as much).
// To first order this is b·u_high + u_high + (n/b)²·u_high²: the inter-block
// term is of second order, below v1's (n/b)·u_high for every n/b < 1/u_high,
// and above v2's (n/b)·u_64 once n/b > u_64/u_high² (n/b > 2^-5 for
// fp32: always).
//
// FABsumV2 with Group g > 1 adds each group of g block sums in u_high (g−1
// additions, the first block enters exactly) and the ⌈n/(bg)⌉ group sums
// in u_64: to first order (b + g − 1)·u_high + n/(bg)·u_64, so a group
// costs what g more products in a block would, and divides the fp64
// additions by g. FABsumPair with Group g adds the group sums into the
// pair: (1+γ_b)(1+γ_{g−1})(1 + u_high + γ_{n/(bg)}²)(1+γ_{p²}) − 1.
//
// With Probabilistic, n, b, n/b, g−1 and n/(bg) are replaced by their
// square roots; p²−1 stays.
//
// Bound returns an error for P < 1, N < 1, unit roundoffs outside (0, 1),
// and, with FABsum, B < 1 or B > N.
func (m Multiword) Bound() (Result, error) {
	if err := m.check(); err != nil {
		return Result{}, err
	}
	p, ul := m.P, m.ULow
	split := 2*powInt(ul, p) + powInt(ul, 2*p)
	w := (1 + ul) * (1 + ul)

	// S_kept and S_dropped, as sums over k = i+j-2 of (products with
	// i+j-2 = k)·u_low^k; the loops stop when u_low^k underflows.
	var kept, dropped float64
	if m.AllProducts {
		var s float64
		for k, uk := 0, 1.0; k < p && uk > 0; k, uk = k+1, uk*ul {
			s += uk
		}
		kept = s * s
	} else {
		for k, uk := 0, 1.0; k <= 2*p-2 && uk > 0; k, uk = k+1, uk*ul {
			if k < p {
				kept += float64(k+1) * uk
			} else {
				dropped += float64(2*p-k-1) * uk
			}
		}
	}

	g, gFormula := m.accumulation()
	r := Result{Terms: []Term{{Name: "splitting", Formula: "2u_low^p + u_low^2p", Value: split}}}
	if m.AllProducts {
		r.Terms = append(r.Terms, Term{
			Name:    "accumulation",
			Formula: gFormula + "·(Σ_{k<p} u_low^k)²·(1+u_low)²",
			Value:   mulInf(g, kept*w),
		})
	} else {
		r.Terms = append(r.Terms,
			Term{Name: "dropped products", Formula: "Σ_{i+j>p+1} u_low^{i+j-2}·(1+u_low)²", Value: dropped * w},
			Term{Name: "accumulation", Formula: gFormula + "·Σ_{i+j≤p+1} u_low^{i+j-2}·(1+u_low)²", Value: mulInf(g, kept*w)},
		)
	}
	for _, t := range r.Terms {
		r.Total += t.Value
	}
	coef := p + 1
	if m.AllProducts {
		coef = 2
	}
	r.Dominant = dominant(ul, m.UHigh, p, coef, m.accumulationDominant())
	return r, nil
}

func (m Multiword) check() error {
	unit := func(name string, u float64) error {
		if !(u > 0 && u < 1) {
			return fmt.Errorf("bound: %s = %g is not a unit roundoff in (0, 1)", name, u)
		}
		return nil
	}
	switch {
	case m.P < 1:
		return fmt.Errorf("bound: p = %d words; need at least 1", m.P)
	case !(m.N >= 1) || math.IsInf(m.N, 0):
		return fmt.Errorf("bound: n = %g; the inner dimension must be finite and at least 1", m.N)
	}
	if err := errors.Join(unit("u_low", m.ULow), unit("u_high", m.UHigh)); err != nil {
		return err
	}
	switch m.Sum {
	case Plain:
		return nil
	case FABsumV1, FABsumV2, FABsumPair:
	default:
		return fmt.Errorf("bound: unknown summation %d", uint8(m.Sum))
	}
	if !(m.B >= 1 && m.B <= m.N) {
		return fmt.Errorf("bound: FABsum block size b = %g; need 1 ≤ b ≤ n = %g", m.B, m.N)
	}
	switch {
	case m.Group != 0 && m.Sum != FABsumV2 && m.Sum != FABsumPair:
		return fmt.Errorf("bound: groups of block sums (g = %g) are a FABsum-v2 or pair option, not %s", m.Group, m.Sum)
	case m.Group != 0 && !(m.Group >= 1 && !math.IsInf(m.Group, 0)):
		return fmt.Errorf("bound: group g = %g; need g ≥ 1", m.Group)
	}
	if m.Sum == FABsumV2 && m.U64 != 0 {
		return unit("u_64", m.U64)
	}
	return nil
}

// u64 is the unit roundoff of FABsum-v2's inter-block sums.
func (m Multiword) u64() float64 {
	if m.U64 == 0 {
		return 0x1p-53
	}
	return m.U64
}

// dim is a dimension-dependent constant, or its square root when the bound
// is probabilistic.
func (m Multiword) dim(x float64) float64 {
	if m.Probabilistic {
		return math.Sqrt(x)
	}
	return x
}

// accumulation returns γ_acc and its formula.
func (m Multiword) accumulation() (float64, string) {
	sq := func(s string) string {
		if m.Probabilistic {
			if len(s) == 1 {
				return "√" + s
			}
			return "√(" + s + ")"
		}
		return s
	}
	pp := float64(m.P)*float64(m.P) - 1
	uh := m.UHigh
	switch m.Sum {
	case FABsumV1:
		g := compose(Gamma(m.dim(m.B), uh), Gamma(m.dim(m.N/m.B), uh), Gamma(pp, uh))
		return g, "[(1+γ_{" + sq("b") + "}(u_high))(1+γ_{" + sq("n/b") + "}(u_high))(1+γ_{p²-1}(u_high)) − 1]"
	case FABsumV2:
		if m.Group > 1 {
			g := compose(Gamma(m.dim(m.B), uh), Gamma(m.dim(m.Group-1), uh), Gamma(m.dim(m.N/(m.B*m.Group)), m.u64()), Gamma(pp+1, uh))
			return g, "[(1+γ_{" + sq("b") + "}(u_high))(1+γ_{" + sq("g−1") + "}(u_high))(1+γ_{" + sq("n/(bg)") + "}(u_64))(1+γ_{p²}(u_high)) − 1]"
		}
		g := compose(Gamma(m.dim(m.B), uh), Gamma(m.dim(m.N/m.B), m.u64()), Gamma(pp+1, uh))
		return g, "[(1+γ_{" + sq("b") + "}(u_high))(1+γ_{" + sq("n/b") + "}(u_64))(1+γ_{p²}(u_high)) − 1]"
	case FABsumPair:
		if m.Group > 1 {
			gng := Gamma(m.dim(m.N/(m.B*m.Group)), uh)
			g := compose(Gamma(m.dim(m.B), uh), Gamma(m.dim(m.Group-1), uh), uh+gng*gng, Gamma(pp+1, uh))
			return g, "[(1+γ_{" + sq("b") + "}(u_high))(1+γ_{" + sq("g−1") + "}(u_high))(1+u_high+γ_{" + sq("n/(bg)") + "}(u_high)²)(1+γ_{p²}(u_high)) − 1]"
		}
		gnb := Gamma(m.dim(m.N/m.B), uh)
		g := compose(Gamma(m.dim(m.B), uh), uh+gnb*gnb, Gamma(pp+1, uh))
		return g, "[(1+γ_{" + sq("b") + "}(u_high))(1+u_high+γ_{" + sq("n/b") + "}(u_high)²)(1+γ_{p²}(u_high)) − 1]"
	}
	return Gamma(m.dim(m.N)+pp, uh), "γ_{" + sq("n") + "+p²-1}(u_high)"
}

// accumulationDominant is the first-order accumulation term with numbers,
// n kept as a symbol: "n × 2^-24", "(256 + n/256) × 2^-24", ...
func (m Multiword) accumulationDominant() string {
	uh := powString(m.UHigh)
	b := numString(m.B)
	if m.Probabilistic {
		if s := math.Sqrt(m.B); s == math.Trunc(s) {
			b = numString(s)
		} else {
			b = "√" + b
		}
	}
	nb := "n/" + numString(m.B)
	n := "n"
	if m.Probabilistic {
		nb = "√(" + nb + ")"
		n = "√n"
	}
	switch m.Sum {
	case FABsumV1:
		return "(" + b + " + " + nb + ") × " + uh
	case FABsumV2:
		if m.Group > 1 {
			g := "n/" + numString(m.B*m.Group)
			if m.Probabilistic {
				g = "√(" + g + ")"
				return "(" + b + " + √" + numString(m.Group-1) + ") × " + uh + " + " + g + " × " + powString(m.u64())
			}
			return numString(m.B+m.Group-1) + " × " + uh + " + " + g + " × " + powString(m.u64())
		}
		return b + " × " + uh + " + " + nb + " × " + powString(m.u64())
	case FABsumPair:
		// (n/b)² u_high², or (√(n/b))² = n/b when probabilistic; the final
		// rounding u_high is left out, as v2's is.
		bg, gb := m.B, b
		if m.Group > 1 {
			bg = m.B * m.Group
			gb = numString(m.B + m.Group - 1)
			if m.Probabilistic {
				gb = "(" + b + " + √" + numString(m.Group-1) + ")"
			}
		}
		sq := "(n/" + numString(bg) + ")²"
		if m.Probabilistic {
			sq = "n/" + numString(bg)
		}
		return gb + " × " + uh + " + " + sq + " × " + powString(m.UHigh*m.UHigh)
	}
	return n + " × " + uh
}

// dominant writes a first-order bound in the style of Table 2.1:
// "coef × u_low^p + acc", where the splitting term coef·u_low^p is left out
// when u_low^p ≤ 4·u_high. That is the paper's rule: for double-fp16
// u_low² = 2^-22 = 4u_high, and the table gives n × 2^-24 alone, since
// (p+1)u_low^p is then a few u_high, below the accumulation term for every
// n that matters; for double-bf16 u_low² = 2^-16 = 256u_high, and the table
// keeps 3 × 2^-16.
func dominant(uLow, uHigh float64, p, coef int, acc string) string {
	up := powInt(uLow, p)
	if up <= 4*uHigh {
		return acc
	}
	return strconv.Itoa(coef) + " × " + powString(up) + " + " + acc
}

// compose returns (1+x_1)(1+x_2)...(1+x_k) − 1, computed without the
// cancellation of forming the product first.
func compose(xs ...float64) float64 {
	var r float64
	for _, x := range xs {
		if math.IsInf(x, 1) || math.IsInf(r, 1) {
			return math.Inf(1)
		}
		r = r + x + r*x
	}
	return r
}

// mulInf is g·c, with +Inf·0 = 0 (a bound on nothing); g ≥ 0, c ≥ 0.
func mulInf(g, c float64) float64 {
	if c == 0 {
		return 0
	}
	return g * c
}

// powInt returns x^k for an integer k ≥ 0, exact when x is a power of two
// and the result is in range.
func powInt(x float64, k int) float64 {
	return math.Pow(x, float64(k))
}

// powString writes x as 2^e when it is a power of two, else in %.3g.
func powString(x float64) string {
	if fr, e := math.Frexp(x); fr == 0.5 {
		return "2^" + strconv.Itoa(e-1)
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

// numString writes a count: 256, 1e+06, 2.5.
func numString(x float64) string {
	return strconv.FormatFloat(x, 'g', -1, 64)
}
