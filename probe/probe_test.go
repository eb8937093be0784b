package probe

import (
	"math/rand/v2"
	"testing"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/mma"
)

// agree checks the fitted model against the unit on n random dot products
// from every generator.
func agree(t *testing.T, u mma.Unit, fit *mma.Model, rng *rand.Rand, n int) {
	t.Helper()
	gens := Generators()
	for _, g := range gens {
		k := 1 + rng.IntN(3*u.BlockK()+2)
		for _, c := range g.Draw(rng, u.Input(), u.Output(), k, n/len(gens)+1) {
			d := make([]float64, 1)
			if err := u.Dots(k, c.A, c.B, []float64{c.C}, d); err != nil {
				t.Fatal(err)
			}
			if got := fit.Dot(c.A, c.B, c.C); !same(got, d[0]) {
				t.Fatalf("%s, %s: a=%v b=%v c=%v: unit %x, fitted model %x", u.Name(), g.Name, c.A, c.B, c.C, d[0], got)
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
			if want.String() != got.String() {
				t.Errorf("%s:\n preset %v\n fitted %v", u.Name(), want, got)
			}
			for _, f := range r.Findings {
				if !f.Consistent {
					t.Errorf("%s: %s: no candidate explains the results", u.Name(), f.Feature)
				}
			}
			fit, err := Fit(r)
			if err != nil {
				t.Fatal(err)
			}
			agree(t, u, fit, rng, 10000)
		}
	}
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
	for i := 0; i < n; i++ {
		p := randomParams(rng)
		u, err := mma.NewModel(p)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(u)
		if err != nil {
			t.Fatal(err)
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
		fit, err := Fit(r)
		if err != nil {
			t.Fatal(err)
		}
		agree(t, u, fit, rng, 10000)
	}
}
