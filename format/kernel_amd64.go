package format

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useAVX2 selects the AVX2 kernel for float64 slices (cpu.X86.HasAVX2 also
// checks that the OS saves the YMM state). Tests may turn it off to reach
// the Go loop.
var useAVX2 = cpu.X86.HasAVX2

// roundAddAndMaskAVX2 is roundAddAndMaskGo for n ≤ block float64 values,
// 8 (then 4) per iteration, bit for bit; dst may be src. Implemented in kernel_amd64.s.
//
//go:noescape
func roundAddAndMaskAVX2(dst, src *float64, n int, p *addAndMaskParams, sp *subParams, slow *[block]uint8) int

// roundAddAndMask is the fast loop of roundRange: the AVX2 kernel for
// float64 values when the CPU has AVX2, the portable Go loop otherwise.
func roundAddAndMask[T float32 | float64](dst, src []T, p *addAndMaskParams, sp *subParams, slow *[block]uint8) int {
	// T is float32 or float64: a size of 8 means float64 (evaluated per
	// instantiation shape, so no interface conversion in the call).
	if unsafe.Sizeof(*new(T)) == 8 && useAVX2 && len(src) > 0 {
		dst = dst[:len(src)] // the bounds check of the Go loop
		return roundAddAndMaskAVX2((*float64)(unsafe.Pointer(&dst[0])), (*float64)(unsafe.Pointer(&src[0])), len(src), p, sp, slow)
	}
	return roundAddAndMaskGo(dst, src, p, sp, slow)
}
