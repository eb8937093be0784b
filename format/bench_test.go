package format

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// benchN is the length of the benchmarks' slices: 1 Mi float64 values.
const benchN = 1 << 20

// benchSource is the benchmarks' input: benchN values uniform in [-2, 2].
func benchSource() []float64 {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float64, benchN)
	for i := range src {
		src[i] = 4*rng.Float64() - 2
	}
	return src
}

// benchCase is a format and a mode timed by the benchmarks.
type benchCase struct {
	f Format
	m Mode
}

func (c benchCase) name() string { return c.f.Name() + "/" + c.m.String() }

// benchCases: the formats (fp16, bf16, e4m3, e5m2, e2m1, e2m3) in
// rne, rz and sr, then a few others.
func benchCases() []benchCase {
	var cs []benchCase
	for _, m := range []Mode{NearestEven, TowardZero, Stochastic} {
		for _, f := range []Format{Binary16, BFloat16, E4M3, E5M2, E2M1, E2M3} {
			cs = append(cs, benchCase{f, m})
		}
	}
	sr8, _ := StochasticBits(8)
	return append(cs, benchCase{TF32, NearestEven}, benchCase{Binary16, ToOdd}, benchCase{Binary16, Up},
		benchCase{Binary16, StochasticHalf}, benchCase{Binary16, sr8}, benchCase{P3109K8P3, sr8})
}

// benchFloat32 is the baseline: the plain float32(x) conversion loop.
func benchFloat32(dst []float32, src []float64) {
	for i, x := range src {
		dst[i] = float32(x)
	}
}

// BenchmarkRoundSlice rounds 1 Mi float64 values in [-2, 2] (one op), on
// one goroutine with -cpu 1, under each kernel this machine has: names are
// kernel/format/mode, e.g. avx2/fp16/rne and portable/fp16/rne. The
// baseline-float32 sub-benchmark is the plain float32(x) conversion loop
// over the same slice; compare values/s against it.
func BenchmarkRoundSlice(b *testing.B) {
	src := benchSource()
	dst := slices.Clone(src) // its pages faulted in, untimed
	report := func(b *testing.B) {
		b.ReportMetric(float64(b.N)*benchN/b.Elapsed().Seconds(), "values/s")
	}
	b.Run("baseline-float32", func(b *testing.B) {
		dst32 := make([]float32, benchN)
		benchFloat32(dst32, src)
		for b.Loop() {
			benchFloat32(dst32, src)
		}
		report(b)
	})
	for _, k := range testKernels() {
		for _, c := range benchCases() {
			b.Run(k+"/"+c.name(), func(b *testing.B) {
				defer useKernel(k)()
				rnd := rand.New(rand.NewPCG(3, 4))
				for b.Loop() {
					c.f.RoundSlice(dst, src, c.m, rnd)
				}
				report(b)
			})
		}
	}
}

// BenchmarkRoundSliceRatios times the same work as BenchmarkRoundSlice,
// interleaved: each iteration runs the baseline and every kernel/case once,
// in a rotating order, so that load from elsewhere on the machine hits all
// alike. It reports values/s of each and the ratios the issue asks for:
// to the float32 loop (x-float32), portable to kernel (portable/kernel),
// and sr to rne of the same format and kernel (sr/rne).
func BenchmarkRoundSliceRatios(b *testing.B) {
	src := benchSource()
	dst := make([]float64, benchN)
	dst32 := make([]float32, benchN)
	rnd := rand.New(rand.NewPCG(3, 4))
	names := []string{"baseline-float32"}
	runs := []func(){func() { benchFloat32(dst32, src) }}
	for _, k := range testKernels() {
		for _, c := range benchCases() {
			names = append(names, k+"/"+c.name())
			runs = append(runs, func() {
				defer useKernel(k)()
				c.f.RoundSlice(dst, src, c.m, rnd)
			})
		}
	}
	for _, run := range runs { // fault the pages in, untimed
		run()
	}
	spent := make([]time.Duration, len(runs))
	for it := 0; b.Loop(); it++ {
		for j := range runs {
			i := (j + it) % len(runs)
			t0 := time.Now()
			runs[i]()
			spent[i] += time.Since(t0)
		}
	}
	rate := make(map[string]float64, len(runs))
	for i, name := range names {
		rate[name] = float64(b.N) * benchN / spent[i].Seconds()
		b.ReportMetric(rate[name], name+"-values/s")
	}
	for _, name := range names[1:] {
		b.ReportMetric(rate[name]/rate[names[0]], name+"-x-float32")
		k, fm, _ := strings.Cut(name, "/")
		if k != "portable" && slices.Contains(names, "portable/"+fm) {
			b.ReportMetric(rate["portable/"+fm]/rate[name], fm+"-portable/"+k)
		}
		if f, ok := strings.CutSuffix(name, "/sr"); ok {
			b.ReportMetric(rate[name]/rate[f+"/rne"], name+"/rne")
		}
	}
}

// BenchmarkSubnormalRange compares formats whose inputs mostly fall below
// 2^Emin (e2m1, e2m3: half of [-2, 2] and more) with fp16, where none
// do, in the same run: each iteration rounds the same 1 Mi values to every
// format in turn, so machine load hits all alike. It reports each format's
// values/s and the ratio fp16 / format (the target: ≤ 2).
func BenchmarkSubnormalRange(b *testing.B) {
	src := benchSource()
	dst := make([]float64, benchN)
	for _, m := range []Mode{NearestEven, TowardZero, Up, NearestAway} {
		b.Run(m.String(), func(b *testing.B) {
			fs := []Format{Binary16, E2M1, E2M3, E3M2}
			spent := make([]time.Duration, len(fs))
			for it := 0; b.Loop(); it++ {
				for k := range fs {
					i := (k + it) % len(fs) // each format first in turn
					t0 := time.Now()
					fs[i].RoundSlice(dst, src, m, nil)
					spent[i] += time.Since(t0)
				}
			}
			rate := func(i int) float64 { return float64(b.N) * benchN / spent[i].Seconds() }
			for i, f := range fs {
				b.ReportMetric(rate(i), f.Name()+"-values/s")
				if i > 0 {
					b.ReportMetric(rate(0)/rate(i), "fp16/"+f.Name())
				}
			}
		})
	}
}
