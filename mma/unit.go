package mma

import (
	"fmt"

	"github.com/mwmm/mwmm/format"
)

// A Unit is a matrix-multiply unit: it computes D = A·B + C for a tile the way
// one piece of hardware (or a model of it) does, with A and B in its input
// format and C and D in its output format.
//
// Every element of D is the dot product of a row of A with a column of B, plus
// the element of C, and the elements do not interact, so a Unit's primitive is
// a batch of independent dot products: Dots. Longer dot products than the
// unit's block (BlockK products per hardware step) are cut into blocks taken
// in order, each block's rounded result becoming the next block's addend, as
// when a GEMM loops over k. Tile and Gemm build whole products from Dots.
type Unit interface {
	// Name identifies the unit, e.g. "v100 fp16→fp32".
	Name() string
	// Input is the format of A and B, Output the format of C and D.
	Input() format.Format
	Output() format.Format
	// BlockK is the number of products one hardware step fuses.
	BlockK() int
	// Dots sets d[i] = a[i*k:(i+1)*k]·b[i*k:(i+1)*k] + c[i] for each of the
	// len(c) cases, as the unit computes it. The a and b values should be
	// values of the input format and c values of the output format; others
	// are converted as the unit's documentation says.
	Dots(k int, a, b, c, d []float64) error
}

// CheckDots validates the slice lengths of a Dots call: for implementations
// of Unit.
func CheckDots(k int, a, b, c, d []float64) error {
	n := len(c)
	switch {
	case k < 0:
		return fmt.Errorf("mma: negative dot-product length k=%d", k)
	case len(d) != n:
		return fmt.Errorf("mma: %d addends but %d results", n, len(d))
	case len(a) != n*k || len(b) != n*k:
		return fmt.Errorf("mma: %d cases of length %d need %d values of a and of b, have %d and %d", n, k, n*k, len(a), len(b))
	}
	return nil
}
