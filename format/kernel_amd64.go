package format

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2 kernels (cpu.X86.HasAVX2 also checks that the
// OS saves the YMM state; GODEBUG=cpu.avx2=off clears it). Tests turn it
// off to reach the portable loops.
var useAVX2 = cpu.X86.HasAVX2

// haveAVX2 is whether the CPU could run the kernels, whatever useAVX2 says.
var haveAVX2 = cpu.X86.HasAVX2

// useAVX512 selects the stochastic kernel's 8-lane loops where the CPU has
// AVX-512F (and AVX2) and the OS saves its state (GODEBUG=cpu.avx512f=off
// clears it); haveAVX512 is whether it could.
var useAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX2

var haveAVX512 = useAVX512

// roundAddAndMaskAVX2 is roundAddAndMaskGo for n ≤ block float64 values,
// 8 (then 4) per iteration, bit for bit; dst may be src. Implemented in kernel_amd64.s.
//
//go:noescape
func roundAddAndMaskAVX2(dst, src *float64, n int, p *addAndMaskParams, sp *subParams, slow *[block]uint8) int

// roundAddAndMask is the fast loop of blockRounder: the AVX2 kernel but
// for the portable kernel k.
func roundAddAndMask(k kernel, dst, src []float64, p *addAndMaskParams, sp *subParams, slow *[block]uint8) int {
	if k != portableKernel && len(src) > 0 {
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

// roundStochasticAVX512 is roundStochasticAVX2 in 8 lanes, for the modes
// and formats where srParams.zmm is set, bit for bit. Implemented in
// stochastic_amd64.s.
//
//go:noescape
func roundStochasticAVX512(dst, src *float64, n int, p *srParams, state uint64, slow *[block]uint8) int

// roundStochastic is the fast loop of a stochastic mode: the AVX2 kernel
// (its AVX-512 loops for k = avx512Kernel where they cover p), the
// portable loop for the portable kernel.
func roundStochastic(k kernel, dst, src []float64, p *srParams, state uint64, slow *[block]uint8) int {
	if k != portableKernel && len(src) > 0 {
		dst = dst[:len(src)]
		if k == avx512Kernel && p.zmm != 0 {
			return roundStochasticAVX512(&dst[0], &src[0], len(src), p, state, slow)
		}
		return roundStochasticAVX2(&dst[0], &src[0], len(src), p, state, slow)
	}
	return roundStochasticPortable(dst, src, p, state, slow)
}
