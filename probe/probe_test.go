package probe

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
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
func TestPresetsRecovered(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, pre := range mma.Presets() {
		for _, pair := range pre.Pairs {
			u, err := mma.Lookup(pre.Name, pair[0].Name(), pair[1].Name())
			if err != nil {
				t.Fatal(err)
			}
			r, err := Run(u)
			if err != nil {
				t.Logf("%s: %v", u.Name(), err)
				continue
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
			if Canonical(m.Params()).String() != got.String() {
				t.Errorf("%s: spec %q builds %v, not %v", u.Name(), r.Spec, Canonical(m.Params()), got)
			}
		}
	}
}

// The paper's tests give, on the models of V100 and T4, the verdicts the
// paper reports for those GPUs (numerical-behavior-tensor-cores.txt).
func TestSeedVerdictsMatchPaper(t *testing.T) {
	for _, name := range []string{"v100", "t4"} {
		u, err := mma.Lookup(name, "binary16", "binary32")
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

// The search finds the paper's non-monotonicity on V100 and none for
// adders that normalise every sum or round once.
func TestMonotonicity(t *testing.T) {
	for _, c := range []struct {
		spec string
		want bool
	}{{"v100", false}, {"a100", false}, {"ieee", true}, {"exact", true}} {
		u, err := mma.Lookup(c.spec, "binary16", "binary32")
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(u)
		if err != nil {
			t.Fatal(err)
		}
		m := r.Monotonicity
		if m.Monotonic != c.want || m.Tried < 1000 {
			t.Errorf("%s: %v", c.spec, m)
			continue
		}
		if !m.Monotonic {
			x, y := m.Smaller.Case, m.Larger.Case
			if y.C < x.C || m.Larger.Got >= m.Smaller.Got {
				t.Errorf("%s: not a counterexample: %v", c.spec, m)
			}
			for i := range x.A {
				if y.A[i]*y.B[i] < x.A[i]*x.B[i] {
					t.Errorf("%s: term %d smaller in the larger case: %v", c.spec, i, m)
				}
			}
			if d := u.Dot(y.A, y.B, y.C); d != m.Larger.Got {
				t.Errorf("%s: the report says %g, the unit gives %g", c.spec, m.Larger.Got, d)
			}
		}
	}
}

// Units of other formats: narrow-range inputs, narrower or wider
// accumulators than the output, narrow outputs. The fitted model must agree
// with the unit bit for bit.
func TestRandomUnitsRecovered(t *testing.T) {
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
			// binary32 adder that adds c after the products or normalises
			// each addition can look like a binary16 one on every designed
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
	parallel(n, func(i int) {
		p := ps[i]
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

// parallel runs f(0..n-1) on every core.
func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
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
	rng := rand.New(rand.NewPCG(3, 4))
	n := 200
	if testing.Short() {
		n = 40
	}
	ps := make([]mma.Params, n)
	for i := range ps {
		ps[i] = randomParams(rng)
	}
	parallel(n, func(i int) {
		p := ps[i]
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
	})
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
