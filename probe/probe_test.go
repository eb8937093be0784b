package probe

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/mma"
)

// agree checks the fitted model against the unit on n random dot products
// from every generator.
func agree(t *testing.T, u mma.Unit, r Report, rng *rand.Rand, n int) {
	t.Helper()
	fit, err := Fit(r)
	if err != nil {
		t.Error(err)
		return
	}
	gens := Generators()
	for _, g := range gens {
		k := 1 + rng.IntN(3*u.BlockK()+2)
		for _, c := range g.Draw(rng, u.Input(), u.Output(), k, n/len(gens)+1) {
			d := make([]float64, 1)
			if err := u.Dots(k, c.A, c.B, []float64{c.C}, d); err != nil {
				t.Fatal(err)
			}
			if got := fit.Dot(c.A, c.B, c.C); !same(got, d[0]) {
				desc := u.Name()
				if m, ok := u.(*mma.Model); ok {
					desc = Canonical(m.Params()).String()
				}
				t.Errorf("%s, %s: a=%v b=%v c=%v: unit %x, fitted model %x\n unit   %s\n fitted %s",
					u.Name(), g.Name, c.A, c.B, c.C, d[0], got, desc, Canonical(fit.Params()))
				return
			}
		}
	}
}

// For every preset the probe can measure, it recovers the preset's
// parameters (up to equivalence) and the fitted model agrees bit for bit.
//
// The probes are independent (each its own prober and random cases), so
// they run as parallel subtests, beside the random units' and models'.
func TestPresetsRecovered(t *testing.T) {
	t.Parallel()
	i := 0
	for _, pre := range mma.Presets() {
		for _, pair := range pre.Pairs {
			u, err := mma.Lookup(pre.Name, pair[0].Name(), pair[1].Name())
			if err != nil {
				t.Fatal(err)
			}
			i++
			rng := rand.New(rand.NewPCG(1, uint64(i)))
			t.Run(u.Name(), func(t *testing.T) {
				t.Parallel()
				presetRecovered(t, u, rng)
			})
		}
	}
}

func presetRecovered(t *testing.T, u *mma.Model, rng *rand.Rand) {
	r, err := Run(u)
	if err != nil {
		t.Logf("%s: %v", u.Name(), err)
		return
	}
	want, got := Canonical(u.Params()), Canonical(r.Fitted)
	// What no test can observe cannot be recovered.
	for _, f := range r.Findings {
		if !f.Observable {
			ft := featureNamed(f.Feature)
			ft.set(&got, ft.get(want))
		}
	}
	got = Canonical(got)
	if want.String() != got.String() {
		t.Errorf("%s:\n preset %v\n fitted %v", u.Name(), want, got)
	}
	for _, f := range r.Findings {
		if !f.Consistent {
			t.Errorf("%s: %s: no candidate explains the results", u.Name(), f.Feature)
		}
	}
	agree(t, u, r, rng, 10000)
	// The spec in the report rebuilds the fitted model.
	m, err := mma.Lookup(r.Spec, u.Input().Name(), u.Output().Name())
	if err != nil {
		t.Fatalf("%s: spec %q: %v", u.Name(), r.Spec, err)
	}
	if fit := Canonical(r.Fitted); Canonical(m.Params()).String() != fit.String() {
		t.Errorf("%s: spec %q builds %v, not %v", u.Name(), r.Spec, Canonical(m.Params()), fit)
	}
	oneTruth(t, u, r)
	checkMonotonicity(t, u, r)
}

// oneTruth checks that a report's table, model line and spec state the
// same parameters (issue 27: fp64 units said k=4, k=1 and k=2), and
// that every paper's test has a verdict.
func oneTruth(t *testing.T, u mma.Unit, r Report) {
	t.Helper()
	m, err := mma.Lookup(r.Spec, u.Input().Name(), u.Output().Name())
	if err != nil {
		t.Errorf("%s: spec %q: %v", u.Name(), r.Spec, err)
		return
	}
	spec := m.Params()
	if r.Model != spec.String() {
		t.Errorf("%s: model line %q, spec builds %q", u.Name(), r.Model, spec.String())
	}
	for _, f := range r.Findings {
		v := featureNamed(f.Feature).get(spec)
		if f.Value != v && !strings.HasPrefix(f.Value, v+" (") && f.Value != "at least "+v {
			t.Errorf("%s: %s: the table says %q, the spec %q", u.Name(), f.Feature, f.Value, v)
		}
	}
	for _, s := range r.Seeds {
		if strings.TrimSpace(s.Verdict) == "" || strings.Contains(s.Verdict, "\n") {
			t.Errorf("%s: %s: verdict %q", u.Name(), s.Name, s.Verdict)
		}
	}
}

// The paper's tests give, on the models of V100 and T4, the verdicts the
// paper reports for those GPUs (numerical-behavior-tensor-cores.txt).
func TestSeedVerdictsMatchPaper(t *testing.T) {
	for _, name := range []string{"v100", "t4"} {
		u, err := mma.Lookup(name, "fp16", "fp32")
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(u)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{
			"subnormal inputs": "exact", "exact products": "exact",
			"rounding of a narrower output":              "not run",
			"one multi-operand addition: 1 + four 2^-24": "as V100",
		}
		if name == "t4" {
			// "the operation 1 + 2^-24 + 2^-24 ... can now be performed
			// exactly because of the presence of the extra bit"
			// and, with the paper's constants, in the tests below.
			for _, s := range []string{"one multi-operand addition: 1 + four 2^-24", "no guard digit",
				"normalisation in subtraction", "monotonicity"} { // "(so is T4/A100, ...)"
				want[s] = "T4"
			}
		}
		if len(r.Seeds) != len(seeds()) {
			t.Fatalf("%s: %d seed tests, want %d", name, len(r.Seeds), len(seeds()))
		}
		for _, s := range r.Seeds {
			w, ok := want[s.Name]
			if !ok {
				w = "as V100–A100"
			}
			if !strings.Contains(s.Verdict, w) {
				t.Errorf("%s: %s: verdict %q, want %q (paper: %s)", name, s.Name, s.Verdict, w, s.Paper)
			}
		}
	}
}

// The monotonicity search, on every preset (from TestPresetsRecovered): a
// reported counterexample is one (the larger case's terms are termwise at
// least the smaller's, the unit's results are as reported and in the wrong
// order); every adder that normalises once and truncates into an fp32
// output has one (the T4's needs terms 3·2^-25, 2^-25, ... against
// c = 1 - 2^-24, issue 27, not four equal ones); adders that normalise every
// sum or round once have none.
func checkMonotonicity(t *testing.T, u *mma.Model, r Report) {
	t.Helper()
	p := u.Params()
	want := !p.NormalizeEach && p.ExtraBits != mma.Unlimited && p.AccumulatorMode == format.TowardZero &&
		p.Output.Precision() >= 24
	monotone := p.NormalizeEach && p.AccumulatorMode == format.NearestEven || p.ExtraBits == mma.Unlimited && !p.NormalizeEach
	m := r.Monotonicity
	switch {
	case m.Tried < 1000:
		t.Errorf("%s: only %d pairs", u.Name(), m.Tried)
	case want && m.Monotonic:
		t.Errorf("%s: no counterexample found (%v)", u.Name(), m)
	case monotone && !m.Monotonic:
		t.Errorf("%s: a monotonic adder has a counterexample: %v", u.Name(), m)
	}
	if !m.Monotonic {
		checkCounterexample(t, u, m)
	}
}

func checkCounterexample(t *testing.T, u mma.Unit, m Monotonicity) {
	t.Helper()
	x, y := m.Smaller.Case, m.Larger.Case
	if len(x.A) != len(y.A) || y.C < x.C || m.Larger.Got >= m.Smaller.Got {
		t.Errorf("%s: not a counterexample: %v", u.Name(), m)
		return
	}
	for i := range x.A {
		if y.A[i]*y.B[i] < x.A[i]*x.B[i] {
			t.Errorf("%s: term %d smaller in the larger case: %v", u.Name(), i, m)
		}
	}
	for _, o := range []*Observation{m.Smaller, m.Larger} {
		d := make([]float64, 1)
		if err := u.Dots(len(o.A), o.A, o.B, []float64{o.C}, d); err != nil {
			t.Fatal(err)
		}
		if !same(d[0], o.Got) {
			t.Errorf("%s: the report says %g, the unit gives %g", u.Name(), o.Got, d[0])
		}
	}
}

// The issue-27 case is among the designed pairs of the T4's fit, and an
// adder that loses carries (h100 with 5 carry bits: 16 products s·s and c
// near 2 sum past 64) is caught by the carry chain: the largest drop of a
// designed pair is a wrap of about 64.
func TestDesignedPairs(t *testing.T) {
	prober := func(u mma.Unit) *prober {
		pr := &prober{u: u, in: u.Input(), out: u.Output(), cache: map[string]float64{}}
		pr.sigma = pr.scale()
		return pr
	}
	t4, _ := mma.Lookup("t4", "fp16", "fp32")
	pr := prober(t4)
	found := false
	for _, xy := range pr.designedPairs(t4.Params()) {
		x, y := xy[0], xy[1]
		s := x.C / (1 - 0x1p-24) // the scale of the case
		if len(x.A) == 4 && x.A[0]*x.B[0] == 0x3p-25*s && x.A[1]*x.B[1] == 0x1p-25*s && y.C == s {
			lo, hi := t4.Dot(x.A, x.B, x.C), t4.Dot(y.A, y.B, y.C)
			found = lo == (1+0x1p-23)*s && hi == s
		}
	}
	if !found {
		t.Error("t4: the pair 1-2^-24 + 3·2^-25 + 3·2^-25 against 1 + the same is not designed, or not a counterexample")
	}
	for _, c := range []struct {
		spec string
		wrap bool
	}{{"h100:carry=5", true}, {"h100", false}, {"v100:carry=3", true}, {"v100", false}, {"a100:carry=4", true}, {"a100", false}} {
		u, err := mma.Lookup(c.spec, "fp16", "fp32")
		if err != nil {
			t.Fatal(err)
		}
		drop := 0.0
		for _, xy := range prober(u).designedPairs(u.Params()) {
			x, y := xy[0], xy[1]
			drop = max(drop, u.Dot(x.A, x.B, x.C)-u.Dot(y.A, y.B, y.C))
		}
		if wrap := drop > 8; wrap != c.wrap {
			t.Errorf("%s: the largest drop of a designed pair is %g; want a wrap: %v", c.spec, drop, c.wrap)
		}
	}
}

// Units of other formats: narrow-range inputs, narrower or wider
// accumulators than the output, narrow outputs. The fitted model must agree
// with the unit bit for bit.
func TestRandomUnitsRecovered(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	n := 40
	if testing.Short() {
		n = 8
	}
	ins := []format.Format{format.Binary16, format.BFloat16, format.E4M3, format.E5M2}
	ps := make([]mma.Params, n)
	for i := range ps {
		p := randomParams(rng)
		p.Input = ins[rng.IntN(len(ins))]
		q := []int{14, 16, 20, 24, 24}[rng.IntN(5)]
		if p.Input == format.Binary16 && rng.IntN(2) == 0 {
			// A known blind spot (docs/probe.md): through a narrow output, a
			// fp32 adder that adds c after the products or normalises
			// each addition can look like an fp16 one on every designed
			// test. Tensor-core-like adders are seen through.
			p.Output, p.AddendAfter, p.NormalizeEach = format.Binary16, false, false
			q = 24
		}
		acc, err := mma.WithPrecision(format.Binary32, q)
		if err != nil {
			t.Fatal(err)
		}
		p.Accumulator = acc
		if p.Output == format.Binary32 && q == 24 {
			p.Accumulator = p.Output
		}
		ps[i] = p
	}
	for i, p := range ps {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			u, r, ok := probeParams(t, p)
			if !ok {
				return
			}
			for _, f := range r.Findings {
				if !f.Consistent {
					t.Errorf("unit %d (%v): %s: no candidate explains the results", i, Canonical(p), f.Feature)
				}
			}
			agree(t, u, r, rng, 10000)
		})
	}
}

// probeParams builds the model of p and probes it.
func probeParams(t *testing.T, p mma.Params) (*mma.Model, Report, bool) {
	u, err := mma.NewModel(p)
	if err != nil {
		t.Error(err)
		return nil, Report{}, false
	}
	r, err := Run(u)
	if err != nil {
		t.Error(err)
		return nil, Report{}, false
	}
	return u, r, true
}

// randomParams draws a generic model over the knobs the probe measures.
func randomParams(rng *rand.Rand) mma.Params {
	pick := func(xs ...int) int { return xs[rng.IntN(len(xs))] }
	p := mma.Params{
		Input: format.Binary16, Output: format.Binary32, Accumulator: format.Binary32,
		InputConversion: format.NearestEven, OutputMode: format.NearestEven,
		BlockK:          pick(1, 2, 3, 4, 5, 8, 16),
		ExtraBits:       pick(0, 1, 2, 3, 4, 5, 6, mma.Unlimited),
		CarryBits:       pick(1, 2, 3, 4, 5, mma.Unlimited),
		AccumulatorMode: modes[rng.IntN(len(modes))],
		NormalizeEach:   rng.IntN(3) == 0,
		Order:           mma.Order(rng.IntN(2)),
		AddendAfter:     rng.IntN(3) == 0,
	}
	return p
}

func TestRandomModelsRecovered(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	n := 200
	if testing.Short() {
		n = 40
	}
	ps := make([]mma.Params, n)
	for i := range ps {
		ps[i] = randomParams(rng)
	}
	for i, p := range ps {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			randomModelRecovered(t, i, p)
		})
	}
}

func randomModelRecovered(t *testing.T, i int, p mma.Params) {
	rng := rand.New(rand.NewPCG(uint64(i), 3))
	u, r, ok := probeParams(t, p)
	if !ok {
		return
	}
	// Every feature holds the true value among the values that explain
	// the results; where the tests leave several, the fit must still
	// agree with the unit on every random case below.
	truth := Canonical(p)
	for _, f := range r.Findings {
		q := r.Fitted
		ok := false
		for _, v := range f.Candidates {
			feat := featureNamed(f.Feature)
			feat.set(&q, v)
			ok = ok || Canonical(q).String() == truth.String() || feat.get(p) == v
		}
		if !ok || !f.Consistent {
			t.Errorf("model %d (%v): %s: candidates %v exclude the true value %q", i, truth, f.Feature, f.Candidates, featureNamed(f.Feature).get(p))
		}
	}
	agree(t, u, r, rng, 10000)
}

// A NaN or infinite result survives JSON as a string.
func TestObservationJSON(t *testing.T) {
	o := Observation{Case: Case{A: []float64{1}, B: []float64{2}}, Got: math.NaN(),
		Predictions: map[string]float64{"rz": math.Inf(-1), "rne": 2}}
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"A":[1],"B":[2],"C":0,"note":"","got":"NaN","predictions":{"rne":2,"rz":"-Inf"}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}
