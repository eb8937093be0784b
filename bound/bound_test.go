package bound

import (
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/format"
)

const (
	uFP16 = 0x1p-11 // fp16, round to nearest
	uBF16 = 0x1p-8
	uFP32 = 0x1p-24
)

func TestU(t *testing.T) {
	sb8, err := format.StochasticBits(8)
	if err != nil {
		t.Fatal(err)
	}
	e4m3ftz := format.E4M3.WithSubnormals(false)
	for _, tt := range []struct {
		f    format.Format
		mode format.Mode
		want float64
	}{
		{format.Binary16, format.NearestEven, 0x1p-11},
		{format.Binary32, format.TowardZero, 0x1p-23},
		{format.Binary32, format.NearestEven, 0x1p-24},
		{format.Binary64, format.NearestEven, 0x1p-53},
		{format.BFloat16, format.NearestAway, 0x1p-8},
		{format.BFloat16, format.NearestTowardZero, 0x1p-8},
		{format.TF32, format.Up, 0x1p-10},
		{format.TF32, format.Down, 0x1p-10},
		{format.E4M3, format.AwayFromZero, 0x1p-3},
		{e4m3ftz, format.NearestEven, 0x1p-4}, // subnormals do not change u
		{format.E5M2, format.ToOdd, 0x1p-2},
		{format.E5M2, format.Stochastic, 0x1p-2},
		{format.E5M2, format.StochasticHalf, 0x1p-2},
		{format.E2M1, sb8, 0x1p-1},
	} {
		if got := U(tt.f, tt.mode); got != tt.want {
			t.Errorf("U(%s, %s) = %g, want %g", tt.f.Name(), tt.mode, got, tt.want)
		}
	}
}

func TestGamma(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, tt := range []struct{ n, u, want float64 }{
		{0, uFP32, 0},
		{5, 0, 0},
		{0, inf, 0},
		{1, 0.5, 1},         // 0.5/(1-0.5)
		{0.5, 0.5, 1.0 / 3}, // 0.25/0.75
		{2, 0.5, inf},       // nu = 1
		{3, 0.5, inf},       // nu > 1
		{1 << 24, uFP32, inf},
		{inf, uFP32, inf},
		{1 << 23, uFP32, 1},       // nu = 1/2
		{1 << 22, uFP32, 1.0 / 3}, // nu = 1/4
		{-1, uFP32, nan},
		{1, -uFP32, nan},
		{nan, uFP32, nan},
		{1, nan, nan},
	} {
		got := Gamma(tt.n, tt.u)
		if !(got == tt.want || math.IsNaN(got) && math.IsNaN(tt.want)) {
			t.Errorf("Gamma(%g, %g) = %g, want %g", tt.n, tt.u, got, tt.want)
		}
	}
	// First order: γ_n ≈ nu for nu ≪ 1.
	if g := Gamma(1000, uFP32); math.Abs(g-1000*uFP32) > 1000*uFP32*1e-4 {
		t.Errorf("Gamma(1000, 2^-24) = %g, want ≈ %g", g, 1000*uFP32)
	}
}

func TestTable21(t *testing.T) {
	rows := Table21()
	byName := map[string]Table21Row{}
	for _, r := range rows {
		byName[r.Name] = r
	}
	// The paper's five rows, verbatim.
	paper := []struct {
		name     string
		ulow     float64
		p        int
		dominant string
	}{
		{"fp16", uFP16, 1, "2 × 2^-11 + n × 2^-24"},
		{"double-fp16", uFP16, 2, "n × 2^-24"},
		{"bf16", uBF16, 1, "2 × 2^-8 + n × 2^-24"},
		{"double-bf16", uBF16, 2, "3 × 2^-16 + n × 2^-24"},
		{"triple-bf16", uBF16, 3, "n × 2^-24"},
	}
	for i, w := range paper {
		r := rows[i] // the paper's rows come first, in its order
		if r.Name != w.name || r.ULow != w.ulow || r.UHigh != uFP32 || r.P != w.p ||
			r.Products != w.p*(w.p+1)/2 || r.Dominant != w.dominant {
			t.Errorf("row %d = %+v, want %s, u_low %g, p = %d, %q", i, r, w.name, w.ulow, w.p, w.dominant)
		}
	}
	// More rows by the same rule: (p+1)u_low^p shown when u_low^p > 4u_high.
	for name, want := range map[string]string{
		"tf32":           "2 × 2^-11 + n × 2^-24",
		"double-tf32":    "n × 2^-24",
		"e4m3":           "2 × 2^-4 + n × 2^-24",
		"double-e4m3":    "3 × 2^-8 + n × 2^-24",
		"triple-e4m3":    "4 × 2^-12 + n × 2^-24",
		"quadruple-e4m3": "5 × 2^-16 + n × 2^-24",
		"e5m2":           "2 × 2^-3 + n × 2^-24",
		"double-e5m2":    "3 × 2^-6 + n × 2^-24",
		"triple-e5m2":    "4 × 2^-9 + n × 2^-24",
		"quadruple-e5m2": "5 × 2^-12 + n × 2^-24",
	} {
		if r, ok := byName[name]; !ok || r.Dominant != want {
			t.Errorf("%s: %+v, want %q", name, r, want)
		}
	}
	if len(rows) != 5+2+4+4 {
		t.Errorf("%d rows, want 15", len(rows))
	}
	if r := byName["quadruple-e5m2"]; r.P != 4 || r.Products != 10 || r.ULow != 0x1p-3 {
		t.Errorf("quadruple-e5m2: %+v", r)
	}
	// Each row's Dominant is what Multiword.Bound says for it.
	for _, r := range rows {
		res, err := Multiword{ULow: r.ULow, UHigh: r.UHigh, P: r.P, N: 1000}.Bound()
		if err != nil || res.Dominant != r.Dominant {
			t.Errorf("%s: Multiword.Bound dominant %q (%v), table %q", r.Name, res.Dominant, err, r.Dominant)
		}
	}
}

// bigf is a math/big oracle for hand-written formulas.
type bigf struct{ *big.Float }

func bf(x float64) bigf        { return bigf{new(big.Float).SetPrec(256).SetFloat64(x)} }
func (a bigf) add(b bigf) bigf { return bigf{new(big.Float).SetPrec(256).Add(a.Float, b.Float)} }
func (a bigf) sub(b bigf) bigf { return bigf{new(big.Float).SetPrec(256).Sub(a.Float, b.Float)} }
func (a bigf) mul(b bigf) bigf { return bigf{new(big.Float).SetPrec(256).Mul(a.Float, b.Float)} }
func (a bigf) quo(b bigf) bigf { return bigf{new(big.Float).SetPrec(256).Quo(a.Float, b.Float)} }
func (a bigf) f64() float64    { f, _ := a.Float64(); return f }

// gammaBig is γ_n(u) = nu/(1-nu) in big arithmetic.
func gammaBig(n, u float64) bigf {
	nu := bf(n).mul(bf(u))
	return nu.quo(bf(1).sub(nu))
}

func relErr(got, want float64) float64 { return math.Abs(got-want) / math.Abs(want) }

func TestDoubleFP16ByHand(t *testing.T) {
	// Double-fp16, n = 10^6, products A1B1, A1B2, A2B1 (2.7):
	//   2u² + u⁴ + (γ_{n+3}(2^-24)·(1 + 2u) + u²)(1+u)²,  u = 2^-11,
	// where 1 + 2u bounds (|A1||B1| + |A1||B2| + |A2||B1|)/(|A||B|) and u²
	// the dropped |A2||B2|.
	u := bf(uFP16)
	one := bf(1)
	w := one.add(u).mul(one.add(u))
	u2 := u.mul(u)
	want := u2.add(u2).add(u2.mul(u2)).
		add(gammaBig(1e6+3, uFP32).mul(one.add(u).add(u)).add(u2).mul(w)).f64()
	r, err := Multiword{ULow: uFP16, UHigh: uFP32, P: 2, N: 1e6}.Bound()
	if err != nil {
		t.Fatal(err)
	}
	if relErr(r.Total, want) > 1e-14 {
		t.Errorf("double-fp16, n = 1e6: total %.17g, want %.17g", r.Total, want)
	}
	if len(r.Terms) != 3 || r.Terms[0].Name != "splitting" || r.Terms[1].Name != "dropped products" || r.Terms[2].Name != "accumulation" {
		t.Fatalf("terms %+v", r.Terms)
	}
	if got, want := r.Terms[1].Value, u2.mul(w).f64(); relErr(got, want) > 1e-15 {
		t.Errorf("dropped term %g, want %g", got, want)
	}
	if r.Dominant != "n × 2^-24" {
		t.Errorf("dominant %q", r.Dominant)
	}

	// All four products (2.5): 2u² + u⁴ + γ_{n+3}·(1+u)²(1+u)².
	want = u2.add(u2).add(u2.mul(u2)).add(gammaBig(1e6+3, uFP32).mul(w).mul(w)).f64()
	r, err = Multiword{ULow: uFP16, UHigh: uFP32, P: 2, N: 1e6, AllProducts: true}.Bound()
	if err != nil {
		t.Fatal(err)
	}
	if relErr(r.Total, want) > 1e-14 || len(r.Terms) != 2 {
		t.Errorf("double-fp16, all products: total %.17g, want %.17g; terms %+v", r.Total, want, r.Terms)
	}
}

func TestTripleBF16ByHand(t *testing.T) {
	// Triple-bf16, n = 4096: six products with i+j ≤ 4: i+j = 2 (one, size
	// 1), 3 (two, size u), 4 (three, size u²): 1 + 2u + 3u². Dropped: i+j = 5
	// (two, u³), 6 (one, u⁴).
	u := bf(uBF16)
	one := bf(1)
	w := one.add(u).mul(one.add(u))
	u2, u3 := u.mul(u), u.mul(u).mul(u)
	kept := one.add(u.mul(bf(2))).add(u2.mul(bf(3)))
	dropped := u3.mul(bf(2)).add(u3.mul(u))
	want := u3.mul(bf(2)).add(u3.mul(u3)).add(gammaBig(4096+8, uFP32).mul(kept).add(dropped).mul(w)).f64()
	r, err := Multiword{ULow: uBF16, UHigh: uFP32, P: 3, N: 4096}.Bound()
	if err != nil {
		t.Fatal(err)
	}
	if relErr(r.Total, want) > 1e-14 {
		t.Errorf("triple-bf16: total %.17g, want %.17g", r.Total, want)
	}
}

// Theorem 2.1 (2.8): c = (p+1)u_low^p + γ_{n+p²-1}(u_high) + O(u_high u_low + u_low^{p+1}).
func TestFirstOrder(t *testing.T) {
	for _, tt := range []struct {
		ul, uh float64
		p      int
		n      float64
	}{
		{uFP16, uFP32, 1, 1024}, {uFP16, uFP32, 2, 1024}, {uFP16, uFP32, 2, 1e5},
		{uBF16, uFP32, 2, 1e3}, {uBF16, uFP32, 3, 1e4}, {0x1p-4, uFP32, 4, 100},
		{uFP32, 0x1p-53, 1, 1e3}, {uFP32, 0x1p-53, 2, 1e6}, {uFP32, 0x1p-53, 3, 1e8},
		{0x1p-16, 0x1p-40, 2, 1e4}, {0x1p-16, 0x1p-40, 3, 1e4},
	} {
		r, err := Multiword{ULow: tt.ul, UHigh: tt.uh, P: tt.p, N: tt.n}.Bound()
		if err != nil {
			t.Fatal(err)
		}
		p := float64(tt.p)
		first := (p+1)*math.Pow(tt.ul, p) + (tt.n+p*p-1)*tt.uh
		nu := (tt.n + p*p) * tt.uh
		// The neglected terms: γ·((1+2u)(1+u)²-1) ≈ 4u·γ, (γ-nu) ≈ (nu)², and
		// the second-order dropped products, all of them below:
		higher := 4*p*(nu*tt.ul+math.Pow(tt.ul, p+1)) + 2*nu*nu
		if d := math.Abs(r.Total - first); d > higher {
			t.Errorf("u_low %g, u_high %g, p = %d, n = %g: total %g, first order %g, |difference| %g > %g",
				tt.ul, tt.uh, tt.p, tt.n, r.Total, first, d, higher)
		}
		if higher < 1e-4*first && relErr(r.Total, first) > 1e-3 {
			t.Errorf("u_low %g, u_high %g, p = %d, n = %g: total %g, first order %g", tt.ul, tt.uh, tt.p, tt.n, r.Total, first)
		}
		if r.Total < first {
			t.Errorf("u_low %g, p = %d, n = %g: total %g below the first-order %g", tt.ul, tt.p, tt.n, r.Total, first)
		}
	}
}

func TestFABsum(t *testing.T) {
	const n = 1e6
	base := Multiword{ULow: uFP16, UHigh: uFP32, P: 2, N: n}
	plain, _ := base.Bound()

	// b = n: one block is the plain dot product; the one block sum adds
	// γ_1 = u_high at most (n/b = 1 addition counted).
	v1 := base
	v1.Sum, v1.B = FABsumV1, n
	r, err := v1.Bound()
	if err != nil {
		t.Fatal(err)
	}
	if d := r.Total - plain.Total; d < -1e-3*plain.Total || d > 2*uFP32*(1+1e-2) {
		t.Errorf("v1 with b = n: %g, plain %g; difference %g not within [0, 2u_high]", r.Total, plain.Total, d)
	}

	// v2, b = 256: (1+γ_256(2^-24))(1+γ_{n/256}(2^-53))(1+γ_4(2^-24)) − 1 ≈
	// 256·2^-24 + (n/256)·2^-53 + 4·2^-24, times (1+2u)(1+u)², plus the
	// splitting and dropped terms 2u² + u⁴ + u²(1+u)².
	v2 := base
	v2.Sum, v2.B = FABsumV2, 256
	r, err = v2.Bound()
	if err != nil {
		t.Fatal(err)
	}
	u := uFP16
	w := (1 + u) * (1 + u)
	acc := 256*uFP32 + n/256*0x1p-53 + 4*uFP32
	want := 2*u*u + u*u*u*u + u*u*w + acc*(1+2*u)*w
	if relErr(r.Total, want) > 1e-3 {
		t.Errorf("v2, b = 256, n = 1e6: total %g, want ≈ %g", r.Total, want)
	}
	// Section 4.4: b × 2^-24 + n/b × 2^-53, the paper's first order.
	if paper := 256*uFP32 + n/256*0x1p-53; relErr(r.Total, paper) > 0.1 {
		t.Errorf("v2: total %g, the paper's first order %g", r.Total, paper)
	}
	if r.Dominant != "256 × 2^-24 + n/256 × 2^-53" {
		t.Errorf("v2 dominant %q", r.Dominant)
	}
	// Grouped v2, b = 32, g = 8: (1+γ_32)(1+γ_7)(1+γ_{n/256}(2^-53))(1+γ_4) − 1
	// ≈ (32 + 7 + 4)·2^-24 + (n/256)·2^-53; g = 1 is plain v2.
	g8 := v2
	g8.B, g8.Group = 32, 8
	rg, err := g8.Bound()
	if err != nil {
		t.Fatal(err)
	}
	acc = (32+7+4)*uFP32 + n/256*0x1p-53
	if want := 2*u*u + u*u*u*u + u*u*w + acc*(1+2*u)*w; relErr(rg.Total, want) > 1e-3 {
		t.Errorf("v2, b = 32, g = 8: total %g, want ≈ %g", rg.Total, want)
	}
	if rg.Dominant != "39 × 2^-24 + n/256 × 2^-53" {
		t.Errorf("grouped v2 dominant %q", rg.Dominant)
	}
	// Grouped pair, b = 32, g = 8: (1+γ_32)(1+γ_7)(1+u+γ_{n/256}²)(1+γ_4) − 1.
	gp := g8
	gp.Sum = FABsumPair
	rp, err := gp.Bound()
	if err != nil {
		t.Fatal(err)
	}
	gnb := Gamma(n/256, uFP32)
	acc = (32+7+4+1)*uFP32 + gnb*gnb
	if want := 2*u*u + u*u*u*u + u*u*w + acc*(1+2*u)*w; relErr(rp.Total, want) > 1e-3 {
		t.Errorf("pair, b = 32, g = 8: total %g, want ≈ %g", rp.Total, want)
	}
	if rp.Dominant != "39 × 2^-24 + (n/256)² × 2^-48" {
		t.Errorf("grouped pair dominant %q", rp.Dominant)
	}
	g1 := v2
	g1.Group = 1
	if r1, _ := g1.Bound(); r1.Total != r.Total {
		t.Errorf("v2 with g = 1: %g, without groups %g", r1.Total, r.Total)
	}
	// v1 with b = 256: (b + n/b)u_high.
	v1.B = 256
	r1, _ := v1.Bound()
	if want := (256 + n/256 + 3) * uFP32 * (1 + 4*u); relErr(r1.Total-2*u*u-u*u*w, want) > 1e-3 {
		t.Errorf("v1, b = 256: total %g, want ≈ %g + splitting", r1.Total, want)
	}
	if r1.Dominant != "(256 + n/256) × 2^-24" {
		t.Errorf("v1 dominant %q", r1.Dominant)
	}
	if !(r.Total < r1.Total && r1.Total < plain.Total) {
		t.Errorf("want v2 %g < v1 %g < plain %g at n = 1e6, b = 256", r.Total, r1.Total, plain.Total)
	}
	// U64 sets the inter-block precision: with u_64 = u_high, v2 is v1 with one more rounding.
	v2.U64 = uFP32
	r, _ = v2.Bound()
	if d := r.Total - r1.Total; d <= 0 || d > 1.01*uFP32*(1+4*u) {
		t.Errorf("v2 with u_64 = u_high: %g, v1 %g", r.Total, r1.Total)
	}
	// The splitting term stays visible: bf16, p = 1.
	r, _ = Multiword{ULow: uBF16, UHigh: uFP32, P: 1, N: n, Sum: FABsumV1, B: 128}.Bound()
	if r.Dominant != "2 × 2^-8 + (128 + n/128) × 2^-24" {
		t.Errorf("bf16 v1 dominant %q", r.Dominant)
	}
}

func TestProbabilistic(t *testing.T) {
	for _, n := range []float64{4, 100, 1e4, 1e6} {
		for _, s := range []Summation{Plain, FABsumV1, FABsumV2, FABsumPair} {
			m := Multiword{ULow: uFP16, UHigh: 0x1p-23, P: 2, N: n, Sum: s, B: 4}
			worst, err := m.Bound()
			if err != nil {
				t.Fatal(err)
			}
			m.Probabilistic = true
			prob, err := m.Bound()
			if err != nil {
				t.Fatal(err)
			}
			if !(prob.Total < worst.Total) {
				t.Errorf("n = %g, %s: probabilistic %g not below worst case %g", n, s, prob.Total, worst.Total)
			}
		}
	}
	// Plain, n = 10^6: the accumulation constant is √n + p² − 1 = 1003.
	m := Multiword{ULow: uFP16, UHigh: uFP32, P: 2, N: 1e6, Probabilistic: true}
	r, _ := m.Bound()
	u := uFP16
	want := 2*u*u + u*u*u*u + (Gamma(1003, uFP32)*(1+2*u)+u*u)*(1+u)*(1+u)
	if relErr(r.Total, want) > 1e-14 || r.Dominant != "√n × 2^-24" {
		t.Errorf("probabilistic double-fp16: %g %q, want %g, √n × 2^-24", r.Total, r.Dominant, want)
	}
	m.Sum, m.B = FABsumV1, 256
	if r, _ := m.Bound(); r.Dominant != "(16 + √(n/256)) × 2^-24" || !strings.Contains(r.Terms[2].Formula, "γ_{√b}") {
		t.Errorf("probabilistic v1: %q, %+v", r.Dominant, r.Terms)
	}
	m.B = 200
	if r, _ := m.Bound(); r.Dominant != "(√200 + √(n/200)) × 2^-24" {
		t.Errorf("probabilistic v1, b = 200: %q", r.Dominant)
	}
	// n = 1: √1 = 1, nothing to gain.
	a, _ := Multiword{ULow: uFP16, UHigh: uFP32, P: 2, N: 1}.Bound()
	b, _ := Multiword{ULow: uFP16, UHigh: uFP32, P: 2, N: 1, Probabilistic: true}.Bound()
	if a.Total != b.Total {
		t.Errorf("n = 1: probabilistic %g, worst case %g", b.Total, a.Total)
	}
}

func TestMoreWords(t *testing.T) {
	// More words lower the bound until the accumulation dominates; then the
	// p²-1 additions of the products make it grow again (bf16, n = 16:
	// p = 4 adds 7u_high and saves only 4u_low³ = 2^-22).
	prev := math.Inf(1)
	for p := 1; p <= 4; p++ {
		r, _ := Multiword{ULow: uBF16, UHigh: uFP32, P: p, N: 16}.Bound()
		if p < 4 && !(r.Total < prev) || p == 4 && !(r.Total > prev) {
			t.Errorf("p = %d: total %g, p-1's %g", p, r.Total, prev)
		}
		prev = r.Total
	}
	// p = 200 (u_low^k underflows long before k = 2p-2) stays finite and fast.
	r, err := Multiword{ULow: uBF16, UHigh: uFP32, P: 200, N: 16}.Bound()
	if err != nil || math.IsInf(r.Total, 0) || math.IsNaN(r.Total) {
		t.Errorf("p = 200: %g, %v", r.Total, err)
	}
	// n·u_high ≥ 1: the bound is +Inf, and its JSON says so.
	r, err = Multiword{ULow: uFP16, UHigh: uFP32, P: 2, N: 1 << 24}.Bound()
	if err != nil || !math.IsInf(r.Total, 1) {
		t.Fatalf("n = 2^24: %g, %v", r.Total, err)
	}
	j, err := json.Marshal(r)
	if err != nil || !strings.Contains(string(j), `"total":"+Inf"`) {
		t.Errorf("JSON of an infinite bound: %s, %v", j, err)
	}
}

func TestNarrowRangeSlides(t *testing.T) {
	// The slides' single-word example: e4m3 inputs and fp16
	// accumulation, both without subnormals, n = 4.
	e4m3, fp16 := format.E4M3.WithSubnormals(false), format.Binary16.WithSubnormals(false)
	g, G := GMin(e4m3), GMin(fp16)
	if g != 0x1p-7 || G != 0x1p-15 {
		t.Fatalf("g_min %g, G_min %g; want f_min/2 = 2^-7 and 2^-15", g, G)
	}
	if got := GMin(format.Binary16); got != 0x1p-25 { // u·f_min = 2^-11·2^-14
		t.Errorf("GMin(fp16) = %g, want 2^-25", got)
	}
	if got := GMin(format.E4M3); got != 0x1p-10 { // 2^-4·2^-6
		t.Errorf("GMin(e4m3) = %g, want 2^-10", got)
	}
	theta := Theta(448, 65504, 4)
	if want := math.Sqrt(16376); theta != want || math.Floor(theta) != 127 {
		t.Errorf("θ = %g, want √16376 = %g (the slides' ≈ 127)", theta, want)
	}
	if got := Theta(448, 65504, 0.25); got != 448 {
		t.Errorf("Theta(448, 65504, 1/4) = %g, want f_max = 448", got)
	}
	const n, u, U = 4.0, 0x1p-4, 0x1p-11
	want := 2*u + n*U + 4*n*n/theta*0x1p-7 + 4*n*n/(theta*theta)*0x1p-15
	nr := NarrowRange{U: U4(e4m3), UHigh: U4(fp16), N: n, P: 1, Theta: theta, GMin: g, GMinHigh: G, FMax: 448, FMaxHigh: 65504}
	r, err := nr.Bound()
	if err != nil {
		t.Fatal(err)
	}
	if relErr(r.Total, want) > 1e-15 || len(r.Terms) != 4 {
		t.Errorf("slides' example: total %.17g, want %.17g; terms %+v", r.Total, want, r.Terms)
	}
	if r.Dominant != "2 × 2^-4" {
		t.Errorf("dominant %q, want 2 × 2^-4", r.Dominant)
	}
	// θ = 0 computes θ from f_max and F_max.
	nr.Theta = 0
	if r2, err := nr.Bound(); err != nil || r2.Total != r.Total {
		t.Errorf("θ from f_max, F_max: %g, %v; want %g", r2.Total, err, r.Total)
	}
	// Two words: 3u² + 4nuθ^-1·g_min + (n+4)U + 12n²θ^-2·G_min.
	nr.P = 2
	want = 3*u*u + 4*n*u/theta*0x1p-7 + (n+4)*U + 12*n*n/(theta*theta)*0x1p-15
	if r, err := nr.Bound(); err != nil || relErr(r.Total, want) > 1e-15 {
		t.Errorf("two words: %.17g, %v; want %.17g", r.Total, err, want)
	} else if r.Dominant != "3 × 2^-8 + 8 × 2^-11" {
		t.Errorf("two words: dominant %q", r.Dominant)
	}
}

// The bound holds only for θ that overflow nothing: θ ≤ f_max and nθ² ≤
// F_max. With the slides' e4m3 and fp16 (f_max = 448, F_max = 65504):
// n = 4 allows θ up to √16376 ≈ 127.97 (128 gives 4·128² = 65536 >
// F_max), and n = 1/4 up to f_max = 448 (√262016 ≈ 511.9 is larger).
func TestNarrowRangeTheta(t *testing.T) {
	nr := NarrowRange{U: 0x1p-4, UHigh: 0x1p-11, N: 4, P: 1, GMin: 0x1p-7, GMinHigh: 0x1p-15, FMax: 448, FMaxHigh: 65504}
	for _, c := range []struct {
		n, theta float64
		want     string // in the error; "" for none
	}{
		{4, 127, ""}, {4, math.Sqrt(16376), ""}, {4, math.Nextafter(math.Sqrt(16376), 200), "n·θ² = 6.55e+04 > F_max = 65504"},
		{4, 128, "n·θ² = 6.554e+04 > F_max = 65504"}, {4, 448, "n·θ² = 8.028e+05"}, {4, 449, "θ = 449 > f_max = 448"},
		{0.25, 448, ""}, {0.25, 449, "θ = 449 > f_max = 448"}, {1, 255.9, ""}, {1, 256, "n·θ² = 6.554e+04"},
	} {
		nr.N, nr.Theta = c.n, c.theta
		if c.n < 1 {
			nr.N = 1 // Bound wants n ≥ 1: check theta alone
		}
		_, err := nr.Bound()
		if c.n < 1 {
			r := nr
			r.N = c.n
			_, err = r.theta()
		}
		switch {
		case c.want == "" && err != nil:
			t.Errorf("n = %g, θ = %g: %v", c.n, c.theta, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "would not hold")):
			t.Errorf("n = %g, θ = %g: error %v, want one saying %q", c.n, c.theta, err, c.want)
		}
	}
}

// U4 is u of a format with round to nearest.
func U4(f format.Format) float64 { return U(f, format.NearestEven) }

func TestErrors(t *testing.T) {
	ok := Multiword{ULow: uFP16, UHigh: uFP32, P: 2, N: 100}
	if _, err := ok.Bound(); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*Multiword){
		"p = 0":        func(m *Multiword) { m.P = 0 },
		"p < 0":        func(m *Multiword) { m.P = -1 },
		"n = 0":        func(m *Multiword) { m.N = 0 },
		"n = 0.5":      func(m *Multiword) { m.N = 0.5 },
		"n NaN":        func(m *Multiword) { m.N = math.NaN() },
		"n Inf":        func(m *Multiword) { m.N = math.Inf(1) },
		"u_low 0":      func(m *Multiword) { m.ULow = 0 },
		"u_low 1":      func(m *Multiword) { m.ULow = 1 },
		"u_high < 0":   func(m *Multiword) { m.UHigh = -uFP32 },
		"u_high NaN":   func(m *Multiword) { m.UHigh = math.NaN() },
		"v1, b = 0":    func(m *Multiword) { m.Sum = FABsumV1 },
		"v1, b = 0.5":  func(m *Multiword) { m.Sum, m.B = FABsumV1, 0.5 },
		"v2, b > n":    func(m *Multiword) { m.Sum, m.B = FABsumV2, 101 },
		"v2, u_64 = 2": func(m *Multiword) { m.Sum, m.B, m.U64 = FABsumV2, 10, 2 },
		"v2, g = 0.5":  func(m *Multiword) { m.Sum, m.B, m.Group = FABsumV2, 10, 0.5 },
		"v1, g = 8":    func(m *Multiword) { m.Sum, m.B, m.Group = FABsumV1, 10, 8 },
		"summation 7":  func(m *Multiword) { m.Sum = 7 },
		"summation 4":  func(m *Multiword) { m.Sum, m.B = FABsumPair+1, 10 },
		"pair, b = 0":  func(m *Multiword) { m.Sum = FABsumPair },
		"pair, b > n":  func(m *Multiword) { m.Sum, m.B = FABsumPair, 101 },
	} {
		m := ok
		change(&m)
		if _, err := m.Bound(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// Plain ignores B and U64.
	if _, err := (Multiword{ULow: uFP16, UHigh: uFP32, P: 1, N: 10, B: 1e9, U64: 5}).Bound(); err != nil {
		t.Errorf("plain with a stray B: %v", err)
	}

	nok := NarrowRange{U: 0x1p-4, UHigh: 0x1p-11, N: 4, P: 1, Theta: 127, GMin: 0x1p-7, GMinHigh: 0x1p-15, FMax: 448, FMaxHigh: 65504}
	if _, err := nok.Bound(); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*NarrowRange){
		"u = 0":           func(r *NarrowRange) { r.U = 0 },
		"U = 1":           func(r *NarrowRange) { r.UHigh = 1 },
		"n = 0":           func(r *NarrowRange) { r.N = 0 },
		"p = 0":           func(r *NarrowRange) { r.P = 0 },
		"θ < 0":           func(r *NarrowRange) { r.Theta = -1 },
		"θ = 0, no f_max": func(r *NarrowRange) { r.Theta, r.FMax = 0, 0 },
		"no F_max":        func(r *NarrowRange) { r.FMaxHigh = 0 },
		"f_max Inf":       func(r *NarrowRange) { r.FMax = math.Inf(1) },
		"g_min < 0":       func(r *NarrowRange) { r.GMin = -1 },
		"G_min NaN":       func(r *NarrowRange) { r.GMinHigh = math.NaN() },
	} {
		r := nok
		change(&r)
		if _, err := r.Bound(); err == nil {
			t.Errorf("narrow range, %s: no error", name)
		}
	}
}

func TestSummation(t *testing.T) {
	for in, want := range map[string]Summation{
		"": Plain, "plain": Plain, "None": Plain, "v1": FABsumV1, "V2": FABsumV2, "fabsum-v1": FABsumV1,
		"pair": FABsumPair, "PAIR": FABsumPair, " TwoSum ": FABsumPair, "fabsum-pair": FABsumPair,
	} {
		if got, err := ParseSummation(in); err != nil || got != want {
			t.Errorf("ParseSummation(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"v3", "kahan", "1"} {
		if _, err := ParseSummation(bad); err == nil {
			t.Errorf("ParseSummation(%q): no error", bad)
		}
	}
	for s, want := range map[Summation]string{Plain: "plain", FABsumV1: "v1", FABsumV2: "v2", FABsumPair: "pair", 9: "Summation(9)"} {
		if s.String() != want {
			t.Errorf("%d.String() = %q, want %q", uint8(s), s.String(), want)
		}
	}
	// Every summation's name parses back to it, as text too.
	for _, s := range []Summation{Plain, FABsumV1, FABsumV2, FABsumPair} {
		txt, err := s.MarshalText()
		var back Summation
		if err != nil || back.UnmarshalText(txt) != nil || back != s {
			t.Errorf("%v: text %q, %v; back %v", s, txt, err, back)
		}
		if got, err := ParseSummation(s.String()); err != nil || got != s {
			t.Errorf("ParseSummation(%q) = %v, %v", s.String(), got, err)
		}
	}
	if _, err := (FABsumPair + 1).MarshalText(); err == nil {
		t.Errorf("MarshalText of %v: no error", FABsumPair+1)
	}
	m := Multiword{ULow: uFP16, UHigh: uFP32, P: 2, N: 1e6, Sum: FABsumV2, B: 256}
	j, err := json.Marshal(m)
	if err != nil || !strings.Contains(string(j), `"summation":"v2"`) {
		t.Fatalf("JSON %s, %v", j, err)
	}
	var back Multiword
	if err := json.Unmarshal(j, &back); err != nil || back != m {
		t.Errorf("JSON round trip: %+v, %v; want %+v", back, err, m)
	}
	m.Sum = FABsumPair
	j, err = json.Marshal(m)
	back = Multiword{}
	if err != nil || !strings.Contains(string(j), `"summation":"pair"`) || json.Unmarshal(j, &back) != nil || back != m {
		t.Errorf("pair: JSON %s, %v; back %+v", j, err, back)
	}
}

// FABsumPair: the compensated sum's bound u_high|s| + γ_{n/b}(u_high)²Σ|x_i|
// between the block FMA's γ_b and the p² products' γ_{p²}.
func TestFABsumPair(t *testing.T) {
	const n, b = 1 << 20, 64
	m := Multiword{ULow: uFP16, UHigh: uFP32, P: 2, N: n, Sum: FABsumPair, B: b}
	r, err := m.Bound()
	if err != nil {
		t.Fatal(err)
	}
	// By hand, in big arithmetic: 2u² + u⁴ + (γ_acc(1 + 2u) + u²)(1+u)² with
	// 1+γ_acc = (1+γ_64)(1+u_high+γ_{n/64}²)(1+γ_4).
	u, one := bf(uFP16), bf(1)
	w := one.add(u).mul(one.add(u))
	u2 := u.mul(u)
	gnb := gammaBig(n/b, uFP32)
	acc := one.add(gammaBig(b, uFP32)).mul(one.add(bf(uFP32)).add(gnb.mul(gnb))).mul(one.add(gammaBig(4, uFP32))).sub(one)
	want := u2.add(u2).add(u2.mul(u2)).add(acc.mul(one.add(u).add(u)).add(u2).mul(w)).f64()
	if relErr(r.Total, want) > 1e-14 {
		t.Errorf("pair, n = 2^20, b = 64: total %.17g, want %.17g", r.Total, want)
	}
	// At least the first order b·u_high + u_high + (n/b)²u_high² (and the
	// p²−1 additions and the splitting), and not much more.
	first := (b+1+4)*uFP32 + (n/b)*(n/b)*uFP32*uFP32 + 3*uFP16*uFP16
	if r.Total < first || relErr(r.Total, first) > 1e-2 {
		t.Errorf("pair: total %g, first order %g", r.Total, first)
	}
	if r.Dominant != "64 × 2^-24 + (n/64)² × 2^-48" {
		t.Errorf("pair dominant %q", r.Dominant)
	}
	if !strings.Contains(r.Terms[2].Formula, "γ_{n/b}(u_high)²") {
		t.Errorf("pair formula %q", r.Terms[2].Formula)
	}
	// Between v2 (fp64 inter-block sums) and v1 (fp32 ones).
	for _, ul := range []float64{uFP16, uBF16, uFP32} {
		m.ULow = ul
		m.Sum = FABsumV1
		r1, _ := m.Bound()
		m.Sum = FABsumV2
		r2, _ := m.Bound()
		m.Sum = FABsumPair
		rp, _ := m.Bound()
		if !(r2.Total < rp.Total && rp.Total < r1.Total) {
			t.Errorf("u_low %g: want v2 %g < pair %g < v1 %g at n = 2^20, b = 64", ul, r2.Total, rp.Total, r1.Total)
		}
	}
	// One block (b = n): the plain sum and two roundings more at most
	// (u_high, one of the p² additions), the γ_1² term aside.
	m = Multiword{ULow: uFP16, UHigh: uFP32, P: 2, N: 1e4, Sum: FABsumPair, B: 1e4}
	rp, _ := m.Bound()
	m.Sum = Plain
	pl, _ := m.Bound()
	if d := rp.Total - pl.Total; d < 0 || d > 2.01*uFP32*(1+4*uFP16) {
		t.Errorf("pair with b = n: %g, plain %g", rp.Total, pl.Total)
	}
	// Probabilistic: √b and (√(n/b))² = n/b.
	m = Multiword{ULow: uFP16, UHigh: uFP32, P: 2, N: n, Sum: FABsumPair, B: b, Probabilistic: true}
	if r, _ := m.Bound(); r.Dominant != "8 × 2^-24 + n/64 × 2^-48" {
		t.Errorf("probabilistic pair dominant %q", r.Dominant)
	}
}
