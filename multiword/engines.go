package multiword

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/mwmm/mwmm/mma"
)

// Reference is the fast CPU engine: each product of words is a float64 dot
// product rounded once to the plan's Acc format, as an ideal block FMA as
// wide as the inner dimension (or the FABsum block) would compute it.
type Reference struct{}

func (Reference) Name() string { return "reference" }

func (r Reference) Multiply(p Plan, m, n, k int, a, b, c []float64) error {
	return multiply(r, &p, m, n, k, a, b, c)
}

// UnitError is ReferenceError, for Plan.Bound.
func (Reference) UnitError(p *Plan) (UnitError, error) { return ReferenceError(p), nil }

func (Reference) gemm(p *Plan, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64) error {
	bt := make([]float64, n*k) // columns of B, contiguous
	for l := 0; l < k; l++ {
		for j := 0; j < n; j++ {
			bt[j*k+l] = b[l*ldb+j]
		}
	}
	parallelRows(m, func(i int) {
		row := a[i*lda : i*lda+k]
		for j := 0; j < n; j++ {
			col := bt[j*k : (j+1)*k]
			s := c[i*n+j]
			for l, v := range row {
				s += v * col[l]
			}
			c[i*n+j] = p.Acc.Round(s, accMode)
		}
	})
	return nil
}

// parallelRows calls f for every row index on all cores.
func parallelRows(m int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), m)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < m; i += workers {
				f(i)
			}
		}(w)
	}
	wg.Wait()
}

// Model is the bit-faithful CPU engine: every block FMA goes through an
// mma unit (a preset such as v100 or a100, with overrides), built for the
// plan's Low and Acc formats. It is as slow as the model: keep the outer
// dimensions small.
type Model struct {
	spec  string
	mu    sync.Mutex
	units map[[2]string]*mma.Model
}

// NewModel returns the engine "model:<spec>" for an mma unit spec; the unit
// is checked against each plan's formats when the plan is run.
func NewModel(spec string) (*Model, error) {
	if _, err := mma.FindPreset(presetName(spec)); err != nil {
		return nil, err
	}
	return &Model{spec: spec, units: map[[2]string]*mma.Model{}}, nil
}

func presetName(spec string) string {
	name, _, _ := strings.Cut(spec, ":")
	return strings.TrimSpace(name)
}

func (e *Model) Name() string { return "model:" + e.spec }

// Unit returns the unit the engine uses for the plan.
func (e *Model) Unit(p *Plan) (*mma.Model, error) {
	key := [2]string{p.Low.Name(), p.Acc.Name()}
	e.mu.Lock()
	defer e.mu.Unlock()
	if u, ok := e.units[key]; ok {
		return u, nil
	}
	u, err := mma.Lookup(e.spec, key[0], key[1])
	if err != nil {
		return nil, fmt.Errorf("multiword: engine %s cannot run plan %q (%s words, %s accumulation): %w", e.Name(), p.Name, key[0], key[1], err)
	}
	if u.Input().Name() != key[0] || u.Output().Name() != key[1] {
		return nil, fmt.Errorf("multiword: engine %s built a %s→%s unit for plan %q, which needs %s→%s", e.Name(), u.Input().Name(), u.Output().Name(), p.Name, key[0], key[1])
	}
	e.units[key] = u
	return u, nil
}

func (e *Model) Multiply(p Plan, m, n, k int, a, b, c []float64) error {
	if err := p.Check(); err != nil {
		return err
	}
	if _, err := e.Unit(&p); err != nil {
		return err
	}
	return multiply(e, &p, m, n, k, a, b, c)
}

// UnitError is the error model of the engine's unit for the plan, for
// Plan.Bound.
func (e *Model) UnitError(p *Plan) (UnitError, error) {
	u, err := e.Unit(p)
	if err != nil {
		return UnitError{}, err
	}
	return ModelError(u.Params()), nil
}

func (e *Model) gemm(p *Plan, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64) error {
	u, err := e.Unit(p)
	if err != nil {
		return err
	}
	return mma.Gemm(u, m, n, k, a, lda, b, ldb, c, n)
}

// An Opener builds an engine from the text after its name's colon (empty
// when there is none).
type Opener func(arg string) (Engine, error)

var (
	openersMu sync.Mutex
	openers   = map[string]Opener{
		"reference": func(arg string) (Engine, error) {
			if arg != "" {
				return nil, fmt.Errorf("multiword: engine reference takes no argument, got %q", arg)
			}
			return Reference{}, nil
		},
		"model": func(arg string) (Engine, error) {
			if arg == "" {
				return nil, fmt.Errorf("multiword: engine model needs a unit, e.g. model:a100 (see 'mwmm mma list')")
			}
			return NewModel(arg)
		},
	}
)

// Register makes an engine available to Open under name (the GPU engine
// registers "gpu" from its own package).
func Register(name string, open Opener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	openers[name] = open
}

// Engines returns the registered engine names.
func Engines() []string {
	openersMu.Lock()
	defer openersMu.Unlock()
	var ns []string
	for n := range openers {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

// Open returns the engine named "reference", "model:<unit spec>" or any
// registered name, with an optional ":argument".
func Open(name string) (Engine, error) {
	base, arg, _ := strings.Cut(name, ":")
	openersMu.Lock()
	open, ok := openers[strings.TrimSpace(base)]
	openersMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("multiword: unknown engine %q; engines: %s", name, strings.Join(Engines(), ", "))
	}
	return open(arg)
}
