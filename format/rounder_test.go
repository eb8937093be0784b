package format

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRounderMatchesRound: a Rounder gives f.Round's bits (NaN payloads
// included) on every format's special and boundary values and on random
// ones, in every deterministic mode; E8M0 and ToOdd take Round itself.
func TestRounderMatchesRound(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(17, 18))
	fs := append(oracleFormats(t), E8M0)
	for _, base := range fs {
		for _, f := range []Format{base, base.WithSubnormals(false), base.WithSaturation(true)} {
			xs := kernelInputs(f, rng, 2000)
			for m := range numFixedModes {
				if m.IsStochastic() {
					continue
				}
				r := f.Rounder(m)
				for _, x := range xs {
					if got, want := r.Round(x), f.Round(x, m); math.Float64bits(got) != math.Float64bits(want) {
						t.Fatalf("%s %v: Rounder(%v) = %v, Round %v", f.Name(), m, x, got, want)
					}
				}
			}
		}
	}
}

// A stochastic or invalid mode panics at the first value, as Round does.
func TestRounderRefusesAsRound(t *testing.T) {
	for _, m := range []Mode{Stochastic, StochasticHalf, Mode(100)} {
		r := Binary16.Rounder(m)
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%v: Rounder.Round did not panic", m)
				}
			}()
			r.Round(1.5)
		}()
	}
}
