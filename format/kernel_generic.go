//go:build !amd64

package format

// roundAddAndMask is the portable fast loop; an architecture may replace it
// with a vector kernel of the same contract (kernel_amd64.go).
func roundAddAndMask(_ kernel, dst, src []float64, p *addAndMaskParams, sp *subParams, slow *[block]uint8) int {
	return roundAddAndMaskPortable(dst, src, p, sp, slow)
}

// roundStochastic is the portable stochastic loop (kernel_amd64.go).
func roundStochastic(_ kernel, dst, src []float64, p *srParams, state uint64, slow *[block]uint8) int {
	return roundStochasticPortable(dst, src, p, state, slow)
}

// useAVX2 and the AVX2 kernels exist on amd64 only; these stand-ins let
// the tests build everywhere (they skip the kernel when useAVX2 is false).
var useAVX2, haveAVX2, useAVX512, haveAVX512 = false, false, false, false

func roundAddAndMaskAVX2(dst, src *float64, n int, p *addAndMaskParams, sp *subParams, slow *[block]uint8) int {
	panic("format: no AVX2 kernel on this architecture")
}

func roundStochasticAVX2(dst, src *float64, n int, p *srParams, state uint64, slow *[block]uint8) int {
	panic("format: no AVX2 kernel on this architecture")
}

func roundStochasticAVX512(dst, src *float64, n int, p *srParams, state uint64, slow *[block]uint8) int {
	panic("format: no AVX-512 kernel on this architecture")
}
