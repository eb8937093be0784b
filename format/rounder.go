package format

import "math"

// A Rounder rounds to one format in one deterministic mode with the mode's
// parameters worked out once: r.Round(x) is f.Round(x, m), bit for bit, in
// a few integer operations for normal values. It serves loops that round one
// value at a time, such as the unit models of package mma.
type Rounder struct {
	p   addAndMaskParams
	max uint64 // bits of MaxFinite: above it Round decides
	f   *Format
	m   Mode
}

// Rounder returns the rounder of f in mode m; it refers to f for the values
// off the fast path, so f must not be overwritten while it is in use. A mode
// Round refuses (stochastic, invalid) makes Round panic at the first value,
// as f.Round does.
func (f *Format) Rounder(m Mode) Rounder {
	r := Rounder{p: f.addAndMaskParams(m), max: f.maxBits, f: f, m: m}
	if m == ToOdd || m.IsStochastic() || !m.valid() || f.specials == Unsigned {
		// No |x| (sign bit clear) passes the fast test: all go to f.Round.
		r.p.minNormal, r.p.span = signBit, 0
	}
	return r
}

// Round is f.Round(x, m) for the rounder's f and m.
func (r *Rounder) Round(x float64) float64 {
	b := math.Float64bits(x)
	if a := b &^ signBit; a-r.p.minNormal <= r.p.span {
		if v := r.p.round(a, b); v <= r.max {
			return math.Float64frombits(v | b&signBit)
		}
	}
	return r.f.Round(x, r.m)
}
