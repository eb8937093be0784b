package probe

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/mma"
)

// A Crosscheck compares a model with a unit, case by case, on random dot
// products from every Generator: the test that a model is bit-exact.
type Crosscheck struct {
	Unit       string          `json:"unit"`
	Model      string          `json:"model"`
	Lengths    []int           `json:"lengths"` // the dot-product lengths k drawn
	Rows       []CrosscheckRow `json:"generators"`
	Cases      int             `json:"cases"`
	Mismatches int             `json:"mismatches"`
}

// A CrosscheckRow is one generator's count, with its first few mismatches.
type CrosscheckRow struct {
	Generator  string     `json:"generator"`
	Cases      int        `json:"cases"`
	Mismatches int        `json:"mismatches"`
	Examples   []Mismatch `json:"examples,omitempty"`
}

// A Mismatch is a case where the unit and the model differ.
type Mismatch struct {
	Case
	Unit  float64 `json:"unit"`
	Model float64 `json:"model"`
}

// MarshalJSON writes results that are NaN or ±Inf as strings (see
// jsonNumber), so that a report with an overflowing mismatch still encodes.
func (m Mismatch) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"A": jsonNumbers(m.A), "B": jsonNumbers(m.B), "C": jsonNumber(m.C),
		"unit": jsonNumber(m.Unit), "model": jsonNumber(m.Model)})
}

// RecordLine is one cross-check case and the unit's answer as a line of
// JSON, as 'mwmm probe --record' writes it:
// {"gen":"uniform (0,1]","a":[...],"b":[...],"c":0.5,"d":1.25}, NaN and ±Inf
// as strings.
func RecordLine(generator string, c Case, unit float64) ([]byte, error) {
	return json.Marshal(map[string]any{"gen": generator, "a": jsonNumbers(c.A), "b": jsonNumbers(c.B),
		"c": jsonNumber(c.C), "d": jsonNumber(unit)})
}

// crossBatch is the cases per Dots call: one launch on a GPU unit.
const crossBatch = 1 << 16

// CrosscheckLengths are the dot-product lengths a cross-check draws for a
// unit of block size b: within one block, just over one, and several.
func CrosscheckLengths(b int) []int {
	ks := []int{1, 3, b, b + 1, 2*b + 3, 4 * b}
	slices.Sort(ks)
	return slices.Compact(ks)
}

// CrosscheckOptions are RunCrosscheck's settings.
type CrosscheckOptions struct {
	Cases int    // about this many cases in all
	Seed  uint64 // of the random cases
	// Done, if not nil, is told how many more cases are finished.
	Done func(n int)
	// Record, if not nil, gets every case with the unit's result: to keep
	// a unit's answers and fit models to them offline.
	Record func(generator string, c Case, unit float64) error
}

// RunCrosscheck draws about o.Cases cases (split evenly over the generators
// and the lengths of CrosscheckLengths(u.BlockK())), runs them on u and on
// the model, and counts where they differ (NaNs of any payload agree).
func RunCrosscheck(u, model mma.Unit, o CrosscheckOptions) (Crosscheck, error) {
	n, seed, done := o.Cases, o.Seed, o.Done
	in, out := u.Input(), u.Output()
	// The model may flush what the unit's format keeps (a fitted unit
	// without subnormal outputs): compare precision and range.
	alike := func(f, g format.Format) bool {
		return f.Precision() == g.Precision() && f.Emin() == g.Emin() && f.Emax() == g.Emax()
	}
	if !alike(model.Input(), in) || !alike(model.Output(), out) {
		return Crosscheck{}, fmt.Errorf("probe: the model is %s→%s but the unit %s→%s",
			model.Input().Name(), model.Output().Name(), in.Name(), out.Name())
	}
	gens := Generators()
	ks := CrosscheckLengths(u.BlockK())
	per := max(1, (n+len(gens)*len(ks)-1)/(len(gens)*len(ks)))
	cc := Crosscheck{Unit: u.Name(), Model: model.Name(), Lengths: ks}
	rng := rand.New(rand.NewPCG(seed, 0x6d776d6d))
	for _, g := range gens {
		row := CrosscheckRow{Generator: g.Name}
		for _, k := range ks {
			for left := per; left > 0; {
				m := min(left, crossBatch)
				left -= m
				cs := g.Draw(rng, in, out, k, m)
				got, err := runCases(u, k, cs)
				if err != nil {
					return cc, err
				}
				want, err := modelCases(model, k, cs)
				if err != nil {
					return cc, err
				}
				if o.Record != nil {
					for i, c := range cs {
						if err := o.Record(g.Name, c, got[i]); err != nil {
							return cc, err
						}
					}
				}
				for i := range cs {
					if !same(got[i], want[i]) {
						row.Mismatches++
						if len(row.Examples) < 3 {
							row.Examples = append(row.Examples, Mismatch{cs[i], got[i], want[i]})
						}
					}
				}
				row.Cases += m
				if done != nil {
					done(m)
				}
			}
		}
		cc.Rows = append(cc.Rows, row)
		cc.Cases += row.Cases
		cc.Mismatches += row.Mismatches
	}
	return cc, nil
}

// runCases runs cases of length k on u in one Dots call.
func runCases(u mma.Unit, k int, cs []Case) ([]float64, error) {
	a := make([]float64, 0, k*len(cs))
	b := make([]float64, 0, k*len(cs))
	c := make([]float64, len(cs))
	for i, x := range cs {
		a, b, c[i] = append(a, x.A...), append(b, x.B...), x.C
	}
	d := make([]float64, len(cs))
	return d, u.Dots(k, a, b, c, d)
}

// modelCases evaluates the cases on the model, on every core (models are
// safe for concurrent use).
func modelCases(model mma.Unit, k int, cs []Case) ([]float64, error) {
	want := make([]float64, len(cs))
	workers := runtime.GOMAXPROCS(0)
	chunk := (len(cs) + workers - 1) / workers
	var wg sync.WaitGroup
	errs := make([]error, workers+1)
	for w, lo := 0, 0; lo < len(cs); w, lo = w+1, lo+chunk {
		hi := min(lo+chunk, len(cs))
		wg.Go(func() {
			part, err := runCases(model, k, cs[lo:hi])
			copy(want[lo:hi], part)
			errs[w] = err
		})
	}
	wg.Wait()
	return want, errors.Join(errs...)
}
