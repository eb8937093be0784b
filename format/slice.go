package format

import (
	"fmt"
	"math"
	"runtime"
	"sync"
)

// chunk is the unit of parallel work and of random streams: chunk i of a
// slice always gets the i-th seed drawn from the caller's Source, so results
// do not depend on GOMAXPROCS.
const chunk = 1 << 14

// RoundSlice rounds src into dst (which may be src itself) in mode m, over
// several goroutines when the slice is long. Stochastic modes draw one Uint64
// from src per 16384 values as seeds of fast internal streams: the same seed
// gives the same result on any machine. rnd may be nil for deterministic modes.
func (f *Format) RoundSlice(dst, src []float64, m Mode, rnd Source) {
	roundChunks(f, dst, src, m, rnd, currentKernel())
}

// kernel is a set of loops: the portable ones, the AVX2 assembly, or the
// AVX2 assembly with the stochastic modes' loops in AVX-512 (8 lanes).
type kernel uint8

const (
	portableKernel kernel = iota
	avx2Kernel
	avx512Kernel
)

var kernelNames = [...]string{portableKernel: "portable", avx2Kernel: "avx2", avx512Kernel: "avx512"}

// currentKernel is the kernel this machine runs (useAVX2, useAVX512).
func currentKernel() kernel {
	switch {
	case useAVX2 && useAVX512:
		return avx512Kernel
	case useAVX2:
		return avx2Kernel
	}
	return portableKernel
}

// Kernel names the loops RoundSlice and RoundSlice32 run on this machine:
// "avx2" (assembly, amd64 CPUs with AVX2), "avx512" (the same, the
// stochastic modes 8 lanes wide where the CPU has AVX-512F) or "portable"
// (pure Go, every architecture). All give the same results, bit for bit.
func Kernel() string { return kernelNames[currentKernel()] }

// RoundSlice32 is RoundSlice for float32 values.
func (f *Format) RoundSlice32(dst, src []float32, m Mode, rnd Source) {
	roundChunks(f, dst, src, m, rnd, currentKernel())
}

// roundChunks is RoundSlice on kernel k (tests run each side by side).
func roundChunks[T float32 | float64](f *Format, dst, src []T, m Mode, rnd Source, k kernel) {
	if len(dst) != len(src) {
		panic(fmt.Sprintf("format: RoundSlice into %d values from %d", len(dst), len(src)))
	}
	if !m.valid() {
		panic(fmt.Sprintf("format: invalid rounding mode %d", m))
	}
	if m.IsStochastic() && rnd == nil {
		panic(fmt.Sprintf("format: RoundSlice with %v needs a Source", m))
	}
	n := (len(src) + chunk - 1) / chunk
	nextSeed := func() uint64 {
		if m.IsStochastic() {
			return rnd.Uint64()
		}
		return 0
	}
	rangeOf := func(i int) (lo, hi int) { return i * chunk, min((i+1)*chunk, len(src)) }
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 { // no allocation for short slices
		for i := range n {
			lo, hi := rangeOf(i)
			roundRange(f, dst[lo:hi], src[lo:hi], m, nextSeed(), k)
		}
		return
	}
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = nextSeed()
	}
	one := func(i int) {
		lo, hi := rangeOf(i)
		roundRange(f, dst[lo:hi], src[lo:hi], m, seeds[i], k)
	}
	var wg sync.WaitGroup
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	for range workers {
		wg.Go(func() {
			for i := range next {
				one(i)
			}
		})
	}
	wg.Wait()
}

// roundRange is the serial loop over one chunk, a block at a time (the
// portable loops take a float64 chunk whole); float32 values go through a
// float64 buffer (exact both ways), so both types take the same loops and
// give the same results.
func roundRange[T float32 | float64](f *Format, dst, src []T, m Mode, seed uint64, k kernel) {
	dst = dst[:len(src)]
	var rr blockRounder
	rr.init(f, m, k)
	state := seed
	if s64, ok := any(src).([]float64); ok {
		d64 := any(dst).([]float64)
		if rr.portable {
			rr.roundPortable(d64, s64, seed)
			return
		}
		for lo := 0; lo < len(src); lo += block {
			hi := min(lo+block, len(src))
			rr.round(d64[lo:hi], s64[lo:hi], state)
			state += uint64(hi-lo) * wyrandIncrement
		}
		return
	}
	var buf [block]float64
	for lo := 0; lo < len(src); lo += block {
		hi := min(lo+block, len(src))
		b := buf[:hi-lo]
		for i, x := range src[lo:hi] {
			b[i] = float64(x)
		}
		rr.round(b, b, state)
		for i, x := range b {
			dst[lo+i] = T(x)
		}
		state += uint64(hi-lo) * wyrandIncrement
	}
}

// blockRounder holds one mode's parameters for the block loops, and the
// loops' list of positions (its old entries are never read: no clearing).
type blockRounder struct {
	f        *Format
	m        Mode
	p        addAndMaskParams
	sp       subParams
	pc       portableConsts
	portable bool // the portable loops of an add-and-mask or stochastic mode: roundPortable
	k        kernel
	srp      srParams
	ss       stochasticSubParams
	sub      bool // ss applies
	slow     [block]uint8
}

// init sets rr up in place (the struct is large: no copies per chunk).
func (rr *blockRounder) init(f *Format, m Mode, k kernel) {
	rr.f, rr.m, rr.k = f, m, k
	switch {
	case m.addAndMask():
		rr.p, rr.sp = f.addAndMaskParams(m), f.subParams(m)
		rr.pc.init(&rr.p, &rr.sp)
	case m.IsStochastic():
		rr.srp = f.srParams(m)
		rr.ss, rr.sub = f.stochasticSubParams(m)
	}
	rr.portable = k == portableKernel && f.specials != Unsigned && m != ToOdd
}

// round rounds ≤ block values (dst may be src): the fast loop of the mode
// family, then the positions it could not do; the i-th value of a
// stochastic mode uses wyrandAt(state, i).
func (rr *blockRounder) round(dst, src []float64, state uint64) {
	f, m, slow := rr.f, rr.m, &rr.slow
	dst = dst[:len(src)]
	switch {
	case f.specials == Unsigned: // exponents only, no zero: value by value
		for i, x := range src {
			dst[i] = f.roundUnsigned(x, m, wyrandAt(state, uint64(i)))
		}
	case m.addAndMask():
		n := roundAddAndMask(rr.k, dst, src, &rr.p, &rr.sp, slow)
		// The loops leave x itself at the positions they list, so this
		// reads the input even when dst is src.
		for _, j := range slow[:n] {
			dst[j] = f.roundSlow(dst[j], m, 0)
		}
	case m.IsStochastic():
		n := roundStochastic(rr.k, dst, src, &rr.srp, state, slow)
		rr.finishStochastic(dst, slow[:n], state)
	default: // ToOdd
		n := roundToOdd(dst, src, f, slow)
		for _, j := range slow[:n] {
			dst[j] = f.Round(dst[j], m)
		}
	}
}

// roundPortable rounds a float64 chunk by the portable loops, without
// blocks: the general path takes the values they leave, one by one (the
// i-th of a stochastic mode with the word wyrandAt(seed, i)).
func (rr *blockRounder) roundPortable(dst, src []float64, seed uint64) {
	d, s := bitsOf(dst), bitsOf(src)
	d = d[:len(s)]
	for i := 0; i < len(s); i++ {
		if !rr.m.IsStochastic() {
			if i += rr.pc.next(d[i:], s[i:], &rr.sp); i == len(s) {
				break
			}
			dst[i] = rr.f.roundSlow(math.Float64frombits(s[i]), rr.m, 0)
			continue
		}
		if i += rr.srp.next(d[i:], s[i:], seed+uint64(i)*wyrandIncrement); i == len(s) {
			break
		}
		dst[i] = rr.stochasticOne(math.Float64frombits(s[i]), wyrandAt(seed, uint64(i)))
	}
}

// block is the length of the runs over which the fast loops note the
// positions of slow cases (an index array of bytes on the stack).
const block = 256

// addAndMask reports whether the mode's fast path is "add an increment to
// |x|'s bit pattern, clear the dropped bits" (all deterministic modes but ToOdd).
func (m Mode) addAndMask() bool { return m < numFixedModes && m != ToOdd && !m.IsStochastic() }

// addAndMaskParams describes the fast path of a deterministic mode: with a
// = |x|'s bits, the result's bits are
//
//	r = (a + base + (a>>shift)&tieEven + (x<0 ? dirNeg : dirPos)) &^ dropMask
//
// valid when r-minNormal ≤ span (unsigned); other positions need roundSlow.
// One range check on r suffices: an input just below 2^emin that rounds at
// float64's finer spacing up to 2^emin rounds there at the subnormal spacing
// too. The layout is shared with the assembly kernel: keep it.
type addAndMaskParams struct {
	base, tieEven, dirPos, dirNeg uint64
	shift, keep                   uint64 // keep = ^dropMask
	minNormal, span               uint64
}

// round is the formula above for a = |x|'s bits and b = x's bits.
func (p *addAndMaskParams) round(a, b uint64) uint64 {
	neg := -(b >> 63) // all ones when x < 0
	// p's fields are read here, not copied to locals: in the loops they
	// become memory operands and leave the registers to the loop's values.
	return (a + p.base + (a>>(p.shift&63))&p.tieEven + p.dirNeg&neg + p.dirPos&^neg) & p.keep
}

func (f *Format) addAndMaskParams(m Mode) addAndMaskParams {
	p := addAndMaskParams{shift: uint64(f.shift), keep: ^f.dropMask, minNormal: f.minNormal, span: f.normalSpan}
	switch m {
	case NearestEven:
		p.base, p.tieEven = f.tieBase, f.tieBit
	case NearestAway:
		p.base = (f.dropMask + 1) >> 1
	case NearestTowardZero:
		p.base = f.halfMinusOne
	case Up:
		p.dirPos = f.dropMask
	case Down:
		p.dirNeg = f.dropMask
	case AwayFromZero:
		p.base = f.dropMask
	}
	return p
}

// subParams describes the fixed-point rounding below 2^Emin (roundSub) for
// the kernels, each field repeated in 4 lanes so that the AVX2 kernel reads
// it as a memory operand. With a = |x|'s bits, E = a>>52, E1 = max(E, 1),
// mant = a - (E1-1)<<52 and s = min(k - E1, 63) (as 32-bit lanes: the
// kernel's VPMINUD), drop = 2^s - 1:
//
//	inc = (drop>>1)&h1 + h0 + (mant>>s)&tie + drop&(dirPos ^ (x<0 ? dirX : 0))
//	q   = (mant + inc) >> s
//	res = float64(q)·2^qe, with x's sign unless q = 0 and noNegZero
//
// where a < limit (limit is 0 where roundSub does not apply: nothing is).
// float64(q) is computed as bits(q + 2^52 as float64) - 2^52 (magic), exact
// for q ≤ 2^52. The layout is shared with the assembly kernel: keep it.
type subParams struct {
	limit, one, k, c63, h1, h0, tie, dirPos, dirX, magic, noNegZero, quantum [4]uint64

	// rneC, when not 0, is 2^(qe+52): NearestEven in a format with -0
	// and emin ≥ subAlwaysEmin, which the kernel rounds in floating point
	// alone (FP4 in rneloop; rneC is the add for values below 2^Emin).
	// always (lane 0) asks for the subnormal step on every group rather
	// than behind a branch (emin ≥ subAlwaysEmin).
	rneC, always [4]uint64

	// fltC, when not 0, is 2^(qe+52) for the kernel's float path in the
	// other add-and-mask modes (formats with -0, emin ≥ subAlwaysEmin):
	// v = (|x| + fltC) - fltC rounds to nearest even, d = |x| - v is exact,
	// and v moves one quantum up where d > 0 and the lane's up mask is set
	// (upPos or upNeg by x's sign) or d = q/2 and tieUp; down where d < 0
	// and the down mask, or d = -q/2 and tieDn.
	fltC, zero, halfQ, negHalfQ, upPos, upNeg, dnPos, dnNeg, tieUp, tieDn [4]uint64

	// mxRC (lane 0), when not 0, is the MXCSR rounding control of
	// TowardZero, Up or Down (same formats): the kernel sets it and rounds
	// in floating point alone (FP4 in mxloop, fltC the add below 2^Emin);
	// NearestAway, NearestTowardZero and AwayFromZero take the float path
	// above (fltloop).
	mxRC [4]uint64

	// For FP4, the kernel's all-float path of rneloop and mxloop (where
	// rneC or mxRC is set): |x|'s exponent bits (expMask) plus pShift =
	// (53-p)<<52 are 2^(e+53-p), the add that rounds x in binade e;
	// maxBits is MaxFinite's bits, above which a lane goes to roundSlow.
	expMask, pShift, maxBits [4]uint64

	// eminExp, set where the format has subnormals, is 2^Emin's bits: FP4's
	// C below 2^Emin is then its C at Emin, max(exponent bits, eminExp)
	// + pShift (FP4MAX).
	eminExp [4]uint64

	// tab (where always is set) is the portable loops' expTable.
	tab *expTable
}

// subAlwaysEmin: from this emin up (fp8 e4m3, fp6, fp4, P3109 p ≥ 4), values
// of everyday magnitude fall below 2^Emin, so often that a branch on them
// mispredicts; the kernel then does the subnormal step on every group. For
// wider ranges (fp16 and up) it stays behind a branch, which costs
// nothing while no value takes it.
const subAlwaysEmin = -7

func (f *Format) subParams(m Mode) subParams {
	var sp subParams
	set := func(v *[4]uint64, x uint64) { *v = [4]uint64{x, x, x, x} }
	set(&sp.one, 1)
	set(&sp.c63, 63)
	set(&sp.magic, 0x4330000000000000) // 2^52
	qe := f.subQuantumExp()
	if qe <= -1074 || !m.addAndMask() {
		return sp // limit 0: roundSub's cases stay with roundSlow
	}
	set(&sp.limit, f.minNormal)
	set(&sp.k, uint64(qe+1075))
	set(&sp.quantum, math.Float64bits(math.Ldexp(1, qe)))
	if !f.specials.HasNegativeZero() {
		set(&sp.noNegZero, ^uint64(0))
	}
	ones := ^uint64(0)
	set(&sp.expMask, 0x7ff0000000000000)
	set(&sp.pShift, uint64(53-f.p)<<52)
	set(&sp.maxBits, f.maxBits)
	if f.emin >= subAlwaysEmin {
		sp.always[0] = 1
		sp.tab = f.expTable(m)
		if f.subnormals && f.specials.HasNegativeZero() {
			set(&sp.eminExp, f.minNormal)
		}
		if m != NearestEven && f.specials.HasNegativeZero() {
			set(&sp.fltC, math.Float64bits(math.Ldexp(1, qe+52)))
			set(&sp.halfQ, math.Float64bits(math.Ldexp(1, qe-1)))
			set(&sp.negHalfQ, math.Float64bits(-math.Ldexp(1, qe-1)))
			switch m { // the masks say which way |x| moves, by x's sign
			case NearestAway:
				set(&sp.tieUp, ^uint64(0))
			case NearestTowardZero:
				set(&sp.tieDn, ^uint64(0))
			case TowardZero:
				set(&sp.dnPos, ^uint64(0))
				set(&sp.dnNeg, ^uint64(0))
				sp.mxRC[0] = 0x6000
			case AwayFromZero:
				set(&sp.upPos, ^uint64(0))
				set(&sp.upNeg, ^uint64(0))
			case Up: // toward +Inf: |x| up for x > 0, down for x < 0
				set(&sp.upPos, ^uint64(0))
				set(&sp.dnNeg, ^uint64(0))
				sp.mxRC[0] = 0x4000
			case Down:
				set(&sp.dnPos, ^uint64(0))
				set(&sp.upNeg, ^uint64(0))
				sp.mxRC[0] = 0x2000
			}
		}
	}
	switch m {
	case NearestEven:
		set(&sp.h1, ones)
		set(&sp.tie, 1)
		if f.specials.HasNegativeZero() && f.emin >= subAlwaysEmin {
			set(&sp.rneC, math.Float64bits(math.Ldexp(1, qe+52)))
		}
	case NearestAway:
		set(&sp.h1, ones)
		set(&sp.h0, 1)
	case NearestTowardZero:
		set(&sp.h1, ones)
	case Up:
		set(&sp.dirPos, ones)
		set(&sp.dirX, ones)
	case Down:
		set(&sp.dirX, ones)
	case AwayFromZero:
		set(&sp.dirPos, ones)
	}
	return sp
}

// round is subParams' formula for x's bits b, lane 0, as the kernel computes
// it (valid when |x|'s bits are below limit).
func (sp *subParams) round(b uint64) uint64 {
	a := b &^ signBit
	neg := -(b >> 63)
	e1 := max(a>>52, sp.one[0])
	mant := a - (e1-sp.one[0])<<52
	s := uint64(min(uint32(sp.k[0]-e1), uint32(sp.c63[0])))
	drop := sp.one[0]<<s - sp.one[0]
	inc := (drop>>1)&sp.h1[0] + sp.h0[0] + (mant>>s)&sp.tie[0] + drop&(sp.dirPos[0]^neg&sp.dirX[0])
	q := (mant + inc) >> s
	v := math.Float64frombits(q+sp.magic[0]) - math.Float64frombits(sp.magic[0])
	sign := b & signBit
	if v == 0 {
		sign &^= sp.noNegZero[0]
	}
	return math.Float64bits(v*math.Float64frombits(sp.quantum[0])) | sign
}
