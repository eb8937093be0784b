package format

import (
	"fmt"
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
	seeds := make([]uint64, n)
	if m.IsStochastic() {
		for i := range seeds {
			seeds[i] = rnd.Uint64()
		}
	}
	one := func(i int) {
		lo, hi := i*chunk, min((i+1)*chunk, len(src))
		roundRange(f, dst[lo:hi], src[lo:hi], m, seeds[i])
	}
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			one(i)
		}
		return
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

// roundRange is the serial loop; nearest-even, the common case, gets its
// own loop with the mode switch hoisted out.
func roundRange[T float32 | float64](f *Format, dst, src []T, m Mode, seed uint64) {
	dst = dst[:len(src)]
	switch {
	case m == NearestEven:
		for i, x := range src {
			dst[i] = T(f.Round(float64(x), NearestEven))
		}
	case m.IsStochastic():
		g := wyrand(seed)
		for i, x := range src {
			dst[i] = T(f.roundStochastic(float64(x), m, g.next()))
		}
	default:
		for i, x := range src {
			dst[i] = T(f.Round(float64(x), m))
		}
	}
}

// wyrand is a small fast generator (Wang Yi's wyrand) for the per-chunk
// streams; it passes BigCrush and PractRand, enough for rounding decisions.
type wyrandState struct{ s uint64 }

func wyrand(seed uint64) *wyrandState { return &wyrandState{seed} }

func (g *wyrandState) next() uint64 {
	g.s += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(g.s, g.s^0xe7037ed1a0b428db)
	return hi ^ lo
}
