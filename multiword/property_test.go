package multiword_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/multiword"
	"github.com/mwmm/mwmm/multiword/multiwordtest"
)

// A distribution fills a slice with random entries.
type distribution struct {
	name string
	draw func(rng *rand.Rand) float64
}

var distributions = []distribution{
	{"uniform(0,1]", func(rng *rand.Rand) float64 { return 1 - rng.Float64() }},
	{"uniform(-0.5,0.5]", func(rng *rand.Rand) float64 { return 0.5 - rng.Float64() }},
	{"normal", func(rng *rand.Rand) float64 { return rng.NormFloat64() }},
	{"log-uniform ±[1e-10,1e10]", func(rng *rand.Rand) float64 {
		return math.Pow(10, 20*rng.Float64()-10) * float64(1-2*rng.IntN(2))
	}},
}

func (d distribution) matrix(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = d.draw(rng)
	}
	return v
}

// wideRange reports whether the words' format spans the log-uniform data
// (and their products) without underflow, so the componentwise bound of
// Theorem 2.1 applies; narrow formats get the normwise narrow-range bound.
func wideRange(p multiword.Plan) bool { return p.Low.Emin() <= -126 }

// engineVariants lists, per engine, the variants its units accept.
func engineVariants(t *testing.T) map[string][]string {
	all := []string{}
	for _, v := range multiword.Variants() {
		all = append(all, v.Name)
	}
	fp16 := []string{"fp16", "double-fp16"}
	return map[string][]string{
		"reference":  all,
		"model:ieee": all,
		"model:a100": append(fp16, "bf16", "double-bf16", "triple-bf16", "tf32", "double-tf32"),
		"model:v100": fp16,
		"model:h100": append(fp16, "triple-bf16", "double-tf32", "double-fp16-fabsum", "triple-bf16-fabsum", "3xtf32-fabsum"),
	}
}

// The measured error never exceeds the a-priori bound: for every variant
// (with plain, FABsum-v1, -v2, -pair and Algorithm 4.4 summation and all p²
// products), every engine and four distributions of the entries.
func TestErrorWithinBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const m, n = 4, 3
	ks := []int{37, 300}
	if testing.Short() {
		ks = []int{37}
	}
	for engName, names := range engineVariants(t) {
		e, err := multiword.Open(engName)
		if err != nil {
			t.Fatal(err)
		}
		ue := func(p *multiword.Plan) multiword.UnitError {
			u, err := e.(multiwordtest.ErrorModel).UnitError(p)
			if err != nil {
				t.Fatal(err)
			}
			return u
		}
		for _, name := range names {
			for _, opt := range []string{"", ":sum=v1,b=16", ":sum=v2,b=16", ":sum=v2,b=16,first=on",
				":sum=pair,b=16", ":sum=pair,b=16,first=on", ":products=all"} {
				spec := name + opt
				if base, _ := multiword.Lookup(name); base.FABsumJoint && strings.Contains(opt, "first=on") {
					spec += ",joint=off" // A_1B_1 alone by blocks cannot share the accumulator
				}
				plan, err := multiword.Lookup(spec)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range distributions {
					for _, k := range ks {
						a, b := d.matrix(rng, m*k), d.matrix(rng, k*n)
						if d.name[:3] != "log" || wideRange(plan) {
							if _, _, err := multiwordtest.Check(e, plan, m, n, k, a, b); err != nil {
								t.Errorf("%s: %v", d.name, err)
							}
							continue
						}
						// Narrow formats: scaled rows and columns, words ×1/u,
						// and the normwise bound of Mary and Mikaitis.
						if !plan.Scale {
							spec := spec + ",scale=on,shift=u"
							if opt == "" {
								spec = name + ":scale=on,shift=u"
							}
							if plan, err = multiword.Lookup(spec); err != nil {
								t.Fatal(err)
							}
						}
						checkNarrow(t, e, plan, ue(&plan), m, n, k, a, b)
					}
				}
			}
		}
	}
}

// checkNarrow checks ‖Ĉ − AB‖_∞ ≤ c·‖A‖_∞‖B‖_∞ for the narrow-range bound.
func checkNarrow(t *testing.T, e multiword.Engine, p multiword.Plan, ue multiword.UnitError, m, n, k int, a, b []float64) {
	t.Helper()
	nr := bound.NarrowRange{
		U: bound.U(p.Low, p.SplitMode), UHigh: ue.U,
		N: float64(k), P: p.Words,
		Theta: bound.Theta(p.Low.MaxFinite(), p.Acc.MaxFinite(), float64(k)),
		GMin:  bound.GMin(p.Low), GMinHigh: bound.GMin(p.Acc),
		FMax: p.Low.MaxFinite(), FMaxHigh: p.Acc.MaxFinite(),
	}
	// The bound stores word i ×u^-i; a smaller shift t leaves the last
	// word's underflow 2^((p_low−t)(p−1)) larger than it counts.
	if t := p.WordShift; t < p.Low.Precision() {
		nr.GMin = math.Ldexp(nr.GMin, (p.Low.Precision()-t)*(p.Words-1))
	}
	// A joint plan's term meets the unit steps of all P products of its
	// block (whole steps per k-step call), then the promotions and the
	// final roundings: scale U so that (n+p²)U covers that chain.
	if p.FABsumJoint {
		b := p.Block
		if b == 0 || b > k {
			b = k
		}
		steps := 0
		for ks := 0; ks < b; ks += p.JointStep() {
			kc := min(p.JointStep(), b-ks)
			steps += ue.K * ((kc + ue.K - 1) / ue.K)
		}
		chain := float64(p.Products()*steps + (k+b-1)/b + 2)
		if n := float64(k + p.Words*p.Words); chain > n {
			nr.UHigh *= chain / n
		}
	}
	r, err := nr.Bound()
	if err != nil {
		t.Fatal(err)
	}
	c := make([]float64, m*n)
	if err := e.Multiply(p, m, n, k, a, b, c); err != nil {
		t.Fatal(err)
	}
	ref := multiwordtest.Naive(m, n, k, a, b)
	var errInf, aInf, bInf float64
	for i := 0; i < m; i++ {
		var row, arow float64
		for j := 0; j < n; j++ {
			row += math.Abs(c[i*n+j] - ref[i*n+j])
		}
		for l := 0; l < k; l++ {
			arow += math.Abs(a[i*k+l])
		}
		errInf, aInf = max(errInf, row), max(aInf, arow)
	}
	for l := 0; l < k; l++ {
		var row float64
		for j := 0; j < n; j++ {
			row += math.Abs(b[l*n+j])
		}
		bInf = max(bInf, row)
	}
	if got := errInf / (aInf * bInf); !(got <= r.Total) {
		t.Errorf("%s %s k=%d log-uniform: normwise error %.3g exceeds the narrow-range bound %.3g", e.Name(), p.Name, k, got, r.Total)
	}
}
