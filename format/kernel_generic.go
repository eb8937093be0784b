//go:build !amd64

package format

// roundAddAndMask is the portable fast loop; an architecture may replace it
// with a vector kernel of the same contract (kernel_amd64.go).
func roundAddAndMask(dst, src []float64, p *addAndMaskParams, sp *subParams, slow *[block]uint8) int {
	return roundAddAndMaskPortable(dst, src, p, sp, slow)
}

// useAVX2 and roundAddAndMaskAVX2 exist on amd64 only; these stand-ins let
// the tests build everywhere (they skip the kernel when useAVX2 is false).
var useAVX2, haveAVX2 = false, false

func roundAddAndMaskAVX2(dst, src *float64, n int, p *addAndMaskParams, sp *subParams, slow *[block]uint8) int {
	panic("format: no AVX2 kernel on this architecture")
}
