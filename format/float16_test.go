package format

// Cross-check of fp16 round-to-nearest-even against
// github.com/x448/float16, an independent float32 → float16 conversion.

import (
	"flag"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/x448/float16"
)

const (
	float16Threshold = 0x477FF000 // float32 bits of 65520, the fp16 overflow threshold
	float16F32Max    = 0x7F7FFFFF // float32 bits of MaxFloat32
)

// float16Check compares Binary16.Round32 in NearestEven with float16 on the
// float32 bit patterns gen(i), i in [0, n), over GOMAXPROCS goroutines. It
// returns the number of mismatches and reports the first few.
func float16Check(t *testing.T, n uint64, gen func(i uint64) uint32) {
	workers := uint64(runtime.GOMAXPROCS(0))
	var mu sync.Mutex
	var bad uint64
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := n*w/workers, n*(w+1)/workers
		wg.Go(func() {
			var myBad uint64
			var first []uint32
			for i := lo; i < hi; i++ {
				u := gen(i)
				x := math.Float32frombits(u)
				got := Binary16.Round32(x, NearestEven)
				want := float16.Fromfloat32(x).Float32()
				if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
					if myBad++; len(first) < 5 {
						first = append(first, u)
					}
				}
			}
			mu.Lock()
			defer mu.Unlock()
			bad += myBad
			for _, u := range first {
				x := math.Float32frombits(u)
				t.Errorf("fp16 Round32(%v [%#08x], rne) = %v, float16 gives %v", x, u, Binary16.Round32(x, NearestEven), float16.Fromfloat32(x).Float32())
			}
		})
	}
	wg.Wait()
	if bad > 0 {
		t.Errorf("%d mismatches with float16 out of %d", bad, n)
	}
}

var float16All = flag.Bool("float16.all", false, "TestBinary16AgainstFloat16: every float32 up to 65520 (about 30 s on 2 cores)")

// TestBinary16AgainstFloat16 compares fp16 round to nearest even with
// float16 on float32 inputs of both signs:
//   - every pattern of the float32 binades where the fp16 rounding
//     position moves or overflow starts: [2^-25, 2^-14) (fp16's
//     subnormals), [1, 2), and [2^15, 65520];
//   - in every other binade up to 2^15 (and below 2^-25), all 2^13 patterns
//     of the 13 low bits (those fp16 drops) under 16 choices of the 10
//     high ones;
//   - above 65520, the first 2^20 patterns, then every 4099th, and ±MaxFloat32,
//     ±Inf and NaNs.
//
// With -float16.all, every float32 up to 65520 instead; with -short, a
// random sample of 2·10^6 patterns.
func TestBinary16AgainstFloat16(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		rng := rand.New(rand.NewPCG(11, 12))
		const n = 2_000_000
		pats := make([]uint32, n)
		for i := range pats {
			u := rng.Uint32()
			if i%4 != 0 { // mostly inside the range, the rest anywhere
				u = rng.Uint32N(float16Threshold+0x10000) | u&0x80000000
			}
			pats[i] = u
		}
		float16Check(t, n, func(i uint64) uint32 { return pats[i] })
		return
	}
	signed := func(i uint64, mag uint32) uint32 { return mag | uint32(i&1)<<31 } // i&1 picks the sign
	if *float16All {
		float16Check(t, 2*(float16Threshold+1), func(i uint64) uint32 { return signed(i, uint32(i>>1)) })
	} else {
		const binade = 1 << 23
		dense := []uint32{102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 127} // biased float32 exponents
		float16Check(t, 2*binade*uint64(len(dense)), func(i uint64) uint32 {
			j := i >> 1
			return signed(i, dense[j/binade]<<23|uint32(j%binade))
		})
		top := uint64(float16Threshold - 142<<23 + 1) // [2^15, 65520]
		float16Check(t, 2*top, func(i uint64) uint32 { return signed(i, 142<<23+uint32(i>>1)) })
		var sparse []uint32 // the other binades' exponents
		for e := uint32(0); e < 142; e++ {
			if !slices.Contains(dense, e) {
				sparse = append(sparse, e)
			}
		}
		high := []uint32{0, 1, 2, 3, 0x155, 0x2AA, 0x3FC, 0x3FD, 0x3FE, 0x3FF, 0x0F0, 0x1A7, 0x200, 0x201, 0x333, 0x0C1}
		const low = 1 << 13
		per := uint64(len(high) * low)
		float16Check(t, 2*per*uint64(len(sparse)), func(i uint64) uint32 {
			j := i >> 1
			e, k := sparse[j/per], j%per
			return signed(i, e<<23|high[k/low]<<13|uint32(k%low))
		})
	}
	// Above the threshold: all patterns in the first 2^20, then a stride.
	const dense = 1 << 20
	float16Check(t, 2*dense, func(i uint64) uint32 { return signed(i, uint32(float16Threshold+1+i>>1)) })
	const stride = 4099
	sparse := uint64(float16F32Max-float16Threshold-dense)/stride + 1
	float16Check(t, 2*sparse, func(i uint64) uint32 {
		return signed(i, uint32(float16Threshold+1+dense+(i>>1)*stride))
	})
	// ±MaxFloat32, ±Inf and NaNs.
	specials := []uint32{float16F32Max, 0x7F800000, 0x7F800001, 0x7FC00000, 0x7FFFFFFF}
	float16Check(t, 2*uint64(len(specials)), func(i uint64) uint32 { return signed(i, specials[i>>1]) })
}
