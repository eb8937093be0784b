package format

import (
	"fmt"
	"math"
	"math/bits"
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
	roundChunks(f, dst, src, m, rnd)
}

// RoundSlice32 is RoundSlice for float32 values.
func (f *Format) RoundSlice32(dst, src []float32, m Mode, rnd Source) {
	roundChunks(f, dst, src, m, rnd)
}

func roundChunks[T float32 | float64](f *Format, dst, src []T, m Mode, rnd Source) {
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
			roundRange(f, dst[lo:hi], src[lo:hi], m, nextSeed())
		}
		return
	}
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = nextSeed()
	}
	one := func(i int) {
		lo, hi := rangeOf(i)
		roundRange(f, dst[lo:hi], src[lo:hi], m, seeds[i])
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

// roundRange is the serial loop over one chunk: a fast loop over runs of
// block values for the add-and-mask and stochastic modes, then roundSlow for
// the positions it could not do; Round value by value for ToOdd.
func roundRange[T float32 | float64](f *Format, dst, src []T, m Mode, seed uint64) {
	dst = dst[:len(src)]
	switch {
	case m.addAndMask():
		p := f.addAndMaskParams(m)
		for lo := 0; lo < len(src); lo += block {
			hi := min(lo+block, len(src))
			var slow [block]uint8
			n := roundAddAndMask(dst[lo:hi], src[lo:hi], &p, &slow)
			for _, j := range slow[:n] {
				dst[lo+int(j)] = T(f.roundSlow(float64(src[lo+int(j)]), m, 0))
			}
		}
	case m.IsStochastic():
		p := f.stochasticParams(m)
		state := seed
		for lo := 0; lo < len(src); lo += block {
			hi := min(lo+block, len(src))
			var slow [block]uint8
			n := roundStochasticRun(dst[lo:hi], src[lo:hi], &p, state, &slow)
			for _, j := range slow[:n] {
				r := wyrandAt(state, uint64(j))
				dst[lo+int(j)] = T(f.roundSlow(float64(src[lo+int(j)]), m, r))
			}
			state += uint64(hi-lo) * wyrandIncrement
		}
	default:
		for i, x := range src {
			dst[i] = T(f.Round(float64(x), m))
		}
	}
}

// The stochastic streams use Wang Yi's wyrand, a counter-based generator
// (output i is a mix of seed + (i+1)·increment) that passes BigCrush and
// PractRand: the slow path can recompute the word the fast loop used.
const (
	wyrandIncrement = 0xa0761d6478bd642f
	wyrandXor       = 0xe7037ed1a0b428db
)

func wyrandMix(s uint64) uint64 {
	hi, lo := bits.Mul64(s, s^wyrandXor)
	return hi ^ lo
}

// wyrandAt is the i-th word (from 0) of the stream that starts at state.
func wyrandAt(state, i uint64) uint64 { return wyrandMix(state + (i+1)*wyrandIncrement) }

// roundStochasticRun is the fast loop of a stochastic mode over ≤ block
// values, with the i-th value using wyrandAt(state, i); like
// roundAddAndMaskGo it notes the positions that need roundSlow.
func roundStochasticRun[T float32 | float64](dst, src []T, p *stochasticParams, state uint64, slow *[block]uint8) int {
	dst = dst[:len(src)]
	n := 0
	for i, x := range src {
		state += wyrandIncrement
		r := wyrandMix(state)
		b := math.Float64bits(float64(x))
		a := b &^ signBit
		res := (a + (r>>(p.rshift&63))*p.mul) & p.keep
		// a must be normal (a subnormal a would round at float64's finer
		// spacing, with the wrong probability) and below MaxFinite (so that
		// the result cannot overflow).
		_, out := bits.Sub64(a-p.minNormal, p.span, 0) // borrow iff in range
		dst[i] = T(math.Float64frombits(res | (b ^ a)))
		slow[n&(block-1)] = uint8(i)
		n += int(out ^ 1)
	}
	return n
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

// roundAddAndMaskGo applies p to len(src) ≤ block values, writing the fast
// result everywhere and noting in slow the positions that need roundSlow;
// it returns their count. No branch and no call in the loop.
func roundAddAndMaskGo[T float32 | float64](dst, src []T, p *addAndMaskParams, slow *[block]uint8) int {
	dst = dst[:len(src)]
	n := 0
	for i, x := range src {
		b := math.Float64bits(float64(x))
		a := b &^ signBit
		r := p.round(a, b)
		_, out := bits.Sub64(p.span, r-p.minNormal, 0)
		dst[i] = T(math.Float64frombits(r | (b ^ a)))
		slow[n&(block-1)] = uint8(i)
		n += int(out)
	}
	return n
}
