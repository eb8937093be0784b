package format

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2 kernels (cpu.X86.HasAVX2 also checks that the
// OS saves the YMM state; GODEBUG=cpu.avx2=off clears it). Tests turn it
// off to reach the portable loops.
var useAVX2 = cpu.X86.HasAVX2

// haveAVX2 is whether the CPU could run the kernels, whatever useAVX2 says.
var haveAVX2 = cpu.X86.HasAVX2

// roundAddAndMaskAVX2 is roundAddAndMaskGo for n ≤ block float64 values,
// 8 (then 4) per iteration, bit for bit; dst may be src. Implemented in kernel_amd64.s.
//
//go:noescape
func roundAddAndMaskAVX2(dst, src *float64, n int, p *addAndMaskParams, sp *subParams, slow *[block]uint8) int

// roundAddAndMask is the fast loop of blockRounder: the AVX2 kernel when
// avx2 is set (useAVX2: the CPU has AVX2), the portable loop otherwise.
func roundAddAndMask(avx2 bool, dst, src []float64, p *addAndMaskParams, sp *subParams, slow *[block]uint8) int {
	if avx2 && len(src) > 0 {
		dst = dst[:len(src)]
		return roundAddAndMaskAVX2(&dst[0], &src[0], len(src), p, sp, slow)
	}
	return roundAddAndMaskPortable(dst, src, p, sp, slow)
}

// roundStochasticAVX2 is roundStochasticPortable for n ≤ block values, 4
// per iteration (wyrand's 64×64→128 product from 32-bit multiplies), bit
// for bit. Implemented in stochastic_amd64.s.
//
//go:noescape
func roundStochasticAVX2(dst, src *float64, n int, p *srParams, state uint64, slow *[block]uint8) int

// roundStochastic is the fast loop of a stochastic mode: the AVX2 kernel
// when avx2 is set, the portable loop otherwise.
func roundStochastic(avx2 bool, dst, src []float64, p *srParams, state uint64, slow *[block]uint8) int {
	if avx2 && len(src) > 0 {
		dst = dst[:len(src)]
		return roundStochasticAVX2(&dst[0], &src[0], len(src), p, state, slow)
	}
	return roundStochasticPortable(dst, src, p, state, slow)
}
