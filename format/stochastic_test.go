package format

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

func mustStochasticBits(t testing.TB, n int) Mode {
	m, err := StochasticBits(n)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// upProbability is the chance that a value at fraction eta of the way from
// its lower neighbour rounds up, from the definitions of the modes.
func upProbability(m Mode, eta float64) float64 {
	switch {
	case eta == 0:
		return 0
	case m == StochasticHalf:
		return 0.5
	default:
		n := float64(m.randomBits())
		return math.Floor(eta*math.Exp2(n)) / math.Exp2(n)
	}
}

type stochasticCase struct {
	name   string
	f      Format
	lo, hi float64 // neighbours; x = lo + eta·(hi-lo)
}

// stochasticCases has pairs of neighbours in the normal range (the fast
// path), in the subnormal range and in the flushed gap (the slow path), and
// in the negative range.
func stochasticCases() []stochasticCase {
	return []stochasticCase{
		{"fp16-normal", Binary16, 1, 1 + 0x1p-10},
		{"fp16-negative", Binary16, -2, -2 - 0x1p-9},
		{"fp16-subnormal", Binary16, 3 * 0x1p-24, 4 * 0x1p-24},
		{"fp16-ftz-gap", Binary16.WithSubnormals(false), 0, 0x1p-14},
		{"bf16-normal", BFloat16, 0x1p100, 0x1p100 * (1 + 0x1p-7)},
		{"e4m3-normal", E4M3, 3, 3.25},
		{"e4m3-subnormal", E4M3, 0x1p-9, 0x2p-9},
		{"e2m1", E2M1, 4, 6},
		{"p3109-k8p3", P3109K8P3, 0x1p-17, 0x2p-17},
	}
}

// TestStochasticFrequency checks that the rate of rounding up matches the
// mode's probability within 5 standard deviations, through RoundRand (the
// caller's source) and RoundSlice (the internal streams).
func TestStochasticFrequency(t *testing.T) {
	const draws = 20000
	modes := []Mode{Stochastic, StochasticHalf, mustStochasticBits(t, 1), mustStochasticBits(t, 3), mustStochasticBits(t, 8)}
	etas := []float64{0, 0.001, 0.1, 0.3, 0.5, 0.625, 0.77, 0.999}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, c := range stochasticCases() {
		for _, m := range modes {
			for _, eta := range etas {
				x := c.lo + eta*(c.hi-c.lo)
				// The neighbours are on the grid, so x's η is exact only where
				// x is: recompute it from x.
				eta := (x - c.lo) / (c.hi - c.lo)
				p := upProbability(m, eta)
				src := make([]float64, draws)
				for i := range src {
					src[i] = x
				}
				viaSlice := make([]float64, draws)
				c.f.RoundSlice(viaSlice, src, m, rng)
				for _, way := range []string{"RoundRand", "RoundSlice"} {
					ups := 0
					for i := range draws {
						y := viaSlice[i]
						if way == "RoundRand" {
							y = c.f.RoundRand(x, m, rng)
						}
						switch y {
						case c.hi:
							ups++
						case c.lo:
						default:
							t.Fatalf("%s %v %s: %v rounded to %v, not a neighbour %v or %v", c.name, m, way, x, y, c.lo, c.hi)
						}
					}
					mean := draws * p
					tol := 5*math.Sqrt(draws*p*(1-p)) + 1
					if math.Abs(float64(ups)-mean) > tol {
						t.Errorf("%s %v %s: x=%v (η=%v) rounded up %d times of %d, want %.0f ± %.0f", c.name, m, way, x, eta, ups, draws, mean, tol)
					}
				}
			}
		}
	}
}

// TestStochasticBitsThreshold checks the exact rule of StochasticBits(n):
// η < 2^-n never rounds up, whatever the random bits.
func TestStochasticBitsThreshold(t *testing.T) {
	m := mustStochasticBits(t, 2)
	rng := rand.New(rand.NewPCG(1, 1))
	x := 1 + 0.2*0x1p-10 // η = 0.2 < 1/4 in fp16
	for range 10000 {
		if y := Binary16.RoundRand(x, m, rng); y != 1 {
			t.Fatalf("sr-bits=2 rounded %v (η=0.2) up to %v", x, y)
		}
	}
	// η = 0.25 rounds up exactly when R = 3: probability 1/4, and a word with
	// top bits 11 must do it.
	x = 1 + 0.25*0x1p-10
	if y := Binary16.roundStochastic(x, m, 3<<62); y != 1+0x1p-10 {
		t.Errorf("sr-bits=2, η=1/4, R=3: got %v, want %v", y, 1+0x1p-10)
	}
	if y := Binary16.roundStochastic(x, m, 2<<62|1<<61); y != 1 {
		t.Errorf("sr-bits=2, η=1/4, R=2: got %v, want 1", y)
	}
}

// TestStochasticFastMatchesSlow checks, for random inputs and random words,
// that the fast path gives what the general slow path gives for the same r.
func TestStochasticFastMatchesSlow(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	modes := []Mode{Stochastic, StochasticHalf, mustStochasticBits(t, 1), mustStochasticBits(t, 7), mustStochasticBits(t, 40)}
	for _, f := range append(signedFormats(), Binary16.WithSubnormals(false), E4M3.WithSaturation(true)) {
		for _, m := range modes {
			for range 20000 {
				x := randomValueNear(rng, f)
				r := rng.Uint64()
				got, want := f.roundStochastic(x, m, r), f.roundSlow(x, m, r)
				if !identical(got, want) {
					t.Fatalf("%s %v: x=%v r=%#x: fast path %v, slow path %v", f.Name(), m, x, r, got, want)
				}
			}
		}
	}
}

// TestDeterministicFastMatchesSlow is the same check for the fixed modes.
func TestDeterministicFastMatchesSlow(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, f := range append(signedFormats(), Binary16.WithSubnormals(false), E4M3.WithSaturation(true)) {
		for _, m := range Modes() {
			if m.IsStochastic() {
				continue
			}
			for range 20000 {
				x := randomValueNear(rng, f)
				if got, want := f.Round(x, m), f.roundSlow(x, m, 0); !identical(got, want) {
					t.Fatalf("%s %v: x=%v: fast path %v, slow path %v", f.Name(), m, x, got, want)
				}
			}
		}
	}
}

// TestRoundSliceMatchesScalar checks the slice loops, under each kernel,
// against the scalar functions: deterministic modes element by element;
// stochastic modes against roundStochastic with the documented per-chunk
// streams.
func TestRoundSliceMatchesScalar(t *testing.T) {
	t.Parallel()
	for _, k := range testKernels() {
		t.Run(k, func(t *testing.T) {
			t.Parallel()
			testRoundSliceMatchesScalar(t, k)
		})
	}
}

func testRoundSliceMatchesScalar(t *testing.T, k string) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, f := range []Format{Binary16, BFloat16, E4M3, E2M1, P3109K8P3, Binary64, Binary16.WithSubnormals(false), E2M3, E3M2.WithSubnormals(false), P3109K8P5, P3109K8P4Finite, mustP3109(8, 6, false)} {
		src := make([]float64, 3*chunk+77)
		for i := range src {
			src[i] = randomValueNear(rng, f)
		}
		src32 := make([]float32, len(src))
		for i, x := range src {
			src32[i] = float32(x)
		}
		for _, m := range append(Modes(), mustStochasticBits(t, 5)) {
			seed := rng.Uint64()
			dst := make([]float64, len(src))
			roundSliceWith(k, &f, dst, src, m, rand.New(rand.NewPCG(seed, 0)))
			dst32 := make([]float32, len(src))
			roundSliceWith(k, &f, dst32, src32, m, rand.New(rand.NewPCG(seed, 0)))
			seeds := rand.New(rand.NewPCG(seed, 0))
			var state uint64
			for i, x := range src {
				var want, want32 float64
				if m.IsStochastic() {
					if i%chunk == 0 {
						state = seeds.Uint64()
					}
					r := wyrandAt(state, uint64(i%chunk))
					want, want32 = f.roundStochastic(x, m, r), f.roundStochastic(float64(src32[i]), m, r)
				} else {
					want, want32 = f.Round(x, m), f.Round(float64(src32[i]), m)
				}
				if !identical(dst[i], want) {
					t.Fatalf("%s %v: RoundSlice[%d] of %v = %v, want %v", f.Name(), m, i, x, dst[i], want)
				}
				if !identical(float64(dst32[i]), float64(float32(want32))) {
					t.Fatalf("%s %v: RoundSlice32[%d] of %v = %v, want %v", f.Name(), m, i, src32[i], dst32[i], want32)
				}
			}
		}
	}
}

// TestRoundSliceStochasticEdges holds RoundSlice's stochastic modes, under
// each kernel, to roundStochastic word by word on kernelInputs (specials,
// float64 subnormals, any bit pattern, ties, values far below the spacing
// 2^qe where the portable tables switch from one shift to another) for
// every format variant, in and out of place.
func TestRoundSliceStochasticEdges(t *testing.T) {
	for _, k := range testKernels() {
		t.Run(k, func(t *testing.T) {
			defer useKernel(k)()
			testRoundSliceStochasticEdges(t, k)
		})
	}
}

func testRoundSliceStochasticEdges(t *testing.T, k string) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, f := range append(kernelFormats(), Binary64) {
		xs := kernelInputs(f, rng, chunk+333)
		for _, m := range kernelStochasticModes(t) {
			seed := rng.Uint64()
			for _, inPlace := range []bool{false, true} {
				dst, src := make([]float64, len(xs)), xs
				if inPlace {
					copy(dst, xs)
					src = dst
				}
				f.RoundSlice(dst, src, m, rand.New(rand.NewPCG(seed, 0)))
				seeds := rand.New(rand.NewPCG(seed, 0))
				var state uint64
				for i, x := range xs {
					if i%chunk == 0 {
						state = seeds.Uint64()
					}
					if want := f.roundStochastic(x, m, wyrandAt(state, uint64(i%chunk))); !identical(dst[i], want) {
						t.Fatalf("%s %s %v in-place=%v: RoundSlice[%d] of %v [%#x] = %v, want %v",
							k, f.Name(), m, inPlace, i, x, math.Float64bits(x), dst[i], want)
					}
				}
			}
		}
	}
}

// TestRoundSliceDeterministic checks that a seed fixes the result whatever
// the number of goroutines, and that in-place rounding works.
func TestRoundSliceDeterministic(t *testing.T) {
	src := make([]float64, 5*chunk+3)
	rng := rand.New(rand.NewPCG(3, 3))
	for i := range src {
		src[i] = rng.NormFloat64()
	}
	run := func(procs int) []float64 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		dst := slices.Clone(src)
		BFloat16.RoundSlice(dst, dst, Stochastic, rand.New(rand.NewPCG(42, 0)))
		return dst
	}
	one, many := run(1), run(4)
	if !slices.Equal(one, many) {
		t.Fatal("stochastic RoundSlice differs between GOMAXPROCS 1 and 4")
	}
	if again := run(2); !slices.Equal(one, again) {
		t.Fatal("stochastic RoundSlice differs between runs with the same seed")
	}
	if other := BFloat16; true {
		dst := make([]float64, len(src))
		other.RoundSlice(dst, src, Stochastic, rand.New(rand.NewPCG(43, 0)))
		if slices.Equal(one, dst) {
			t.Fatal("different seeds gave the same stochastic rounding")
		}
	}
}

// randomValueNear draws values that exercise a format: its normal range,
// subnormals, the flush gap, overflow, specials, and random bit patterns.
func randomValueNear(rng *rand.Rand, f Format) float64 {
	sign := 1.0
	if rng.IntN(2) == 0 {
		sign = -1
	}
	switch rng.IntN(10) {
	case 0:
		return math.Float64frombits(rng.Uint64())
	case 1:
		return []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), f.MaxFinite(), f.MinNormal(), f.MinSubnormal()}[rng.IntN(8)]
	case 2: // around the largest values
		return sign * f.MaxFinite() * (0.9 + 0.2*rng.Float64())
	case 3: // subnormal range and below
		return sign * f.MinNormal() * math.Ldexp(rng.Float64(), -rng.IntN(f.Precision()+3))
	case 4: // a grid point plus a small multiple of the float64 ulp
		y := f.Round(sign*math.Ldexp(1+rng.Float64(), f.Emin()+rng.IntN(f.Emax()-f.Emin()+1)), NearestEven)
		return y + float64(rng.IntN(5)-2)*math.Abs(y)*0x1p-52
	default:
		e := f.Emin() - 3 + rng.IntN(f.Emax()-f.Emin()+5)
		return sign * math.Ldexp(1+rng.Float64(), e)
	}
}

// identical compares bit patterns, treating all NaNs as equal.
func identical(a, b float64) bool {
	if a != a || b != b {
		return a != a && b != b
	}
	return math.Float64bits(a) == math.Float64bits(b)
}

// TestSRTableBoundary holds the portable tables' stochastic formula
// (srTableLane) to roundStochastic at the random words where rounding
// turns from down to up: the result is monotone in r, so a binary search
// over r with roundStochastic finds the first word that rounds up, and the
// formula must agree there and one below (random words hit that edge with
// probability η, which far below the spacing is under 2^-11).
func TestSRTableBoundary(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	for _, f := range kernelFormats() {
		for _, m := range kernelStochasticModes(t) {
			p := f.srParams(m)
			if p.tab == nil {
				continue
			}
			lane := func(b, r uint64) uint64 {
				if m == StochasticHalf {
					return srTableLane(b, uint64(int64(r)>>63), p.tab)
				}
				return srTableLane(b, r&p.tn, p.tab)
			}
			for _, x := range kernelInputs(f, rng, 3000) {
				down := math.Float64bits(f.roundStochastic(x, m, 0))
				lo, hi := uint64(0), ^uint64(0) // the first r that rounds up is in (lo, hi], or none
				if math.Float64bits(f.roundStochastic(x, m, hi)) == down {
					lo = hi
				}
				for hi-lo > 1 {
					mid := lo + (hi-lo)/2
					if math.Float64bits(f.roundStochastic(x, m, mid)) == down {
						lo = mid
					} else {
						hi = mid
					}
				}
				for _, r := range []uint64{0, lo, hi, ^uint64(0), rng.Uint64()} {
					b := math.Float64bits(x)
					got := lane(b, r)
					if got<<1 > p.lo2+p.span2 { // left to the exception path
						continue
					}
					if want := f.roundStochastic(x, m, r); !identical(math.Float64frombits(got), want) {
						t.Fatalf("%s %v: x=%v [%#x] r=%#x: table %v [%#x], roundStochastic %v", f.Name(), m, x, b, r,
							math.Float64frombits(got), got, want)
					}
				}
			}
		}
	}
}
