package mma

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// An Opener opens a unit of real hardware from a spec such as
// "gpu:mma.sync" or "gpu1:wgmma" (the family's name, an optional device
// index, then what the family takes after the colon) and the input and
// output format names ("" for the family's defaults).
type Opener func(spec, input, output string) (Unit, error)

type family struct {
	name, help string
	open       Opener
}

var (
	familiesMu sync.Mutex
	families   []family
)

// RegisterHardware makes Open resolve specs of the family name (name,
// name:..., nameN:...) with open; help is one line for listings. Packages
// that drive hardware (gpu) register themselves when imported, so that this
// package needs none of their dependencies.
func RegisterHardware(name, help string, open Opener) {
	familiesMu.Lock()
	defer familiesMu.Unlock()
	families = slices.DeleteFunc(families, func(f family) bool { return f.name == name })
	families = append(families, family{name, help, open})
}

// Hardware lists the registered hardware families as "name: help" lines.
func Hardware() []string {
	familiesMu.Lock()
	defer familiesMu.Unlock()
	var out []string
	for _, f := range families {
		out = append(out, f.name+": "+f.help)
	}
	return out
}

// Open returns the unit a spec names: a registered hardware unit (see
// RegisterHardware), one of SyncPresets, or a model (Lookup).
func Open(spec, input, output string) (Unit, error) {
	head, _, _ := strings.Cut(spec, ":")
	name := strings.TrimRight(head, "0123456789")
	familiesMu.Lock()
	var open Opener
	for _, f := range families {
		if f.name == name {
			open = f.open
		}
	}
	familiesMu.Unlock()
	for _, name := range SyncPresets {
		if strings.EqualFold(spec, name) {
			return openSync(strings.ToLower(spec), input, output)
		}
	}
	if open != nil {
		u, err := open(spec, input, output)
		if err != nil {
			return nil, fmt.Errorf("mma: unit %q: %w", spec, err)
		}
		return u, nil
	}
	return Lookup(spec, input, output)
}
