package gemm

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestDistNames(t *testing.T) {
	// The first two are in the CSVs of earlier runs: they must not change.
	want := []string{"(0,1]", "(-0.5,0.5]", "normal", "log-uniform ±[1e-3,1e3]"}
	if !slices.Equal(DistNames, want) {
		t.Errorf("DistNames = %q, want %q", DistNames, want)
	}
}

// hash24 and fillRandom mirror kernels/split.cu's hash24 and fill_random.
func hash24(seed uint64, i int64, stream uint64) uint32 {
	z := seed + stream*0xd1b54a32d192ed03 + uint64(i)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return uint32(z >> 40)
}

func fillRandom(seed uint64, i int64, dist int) float32 {
	u := float32(hash24(seed, i, 0)) * (1.0 / 16777216)
	switch dist {
	case 0:
		return 1 - u
	case 1:
		return 0.5 - u
	case 2:
		u1 := float32(hash24(seed, i, 1)+1) * (1.0 / 16777216)
		r := float32(math.Sqrt(float64(-2 * float32(math.Log(float64(u1))))))
		return r * float32(math.Cos(float64(float32(2*math.Pi)*u)))
	}
	e := float32(hash24(seed, i, 1)) * (1.0 / 16777215)
	v := float32(math.Pow(10, float64(6*e-3)))
	v = min(max(v, 1e-3), 1e3)
	if hash24(seed, i, 2)&1 != 0 {
		v = -v
	}
	return v
}

// TestFillRandomMirror checks the distributions of the fill's algorithm on
// the CPU mirror: ranges, moments, and that stream 0 is the hash of the
// earlier fill_uniform (the uniform data of a seed are unchanged).
func TestFillRandomMirror(t *testing.T) {
	const n = 1 << 17
	const seed = 12345
	for i := int64(0); i < 100; i++ {
		z := seed + uint64(i)*0x9e3779b97f4a7c15
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		if old := 1 - float32(z>>40)*(1.0/16777216); fillRandom(seed, i, 0) != old {
			t.Fatalf("dist 0 at %d: %g, the earlier fill gave %g", i, fillRandom(seed, i, 0), old)
		}
	}
	type stats struct{ lo, hi, mean, variance, neg float64 }
	moments := func(f func(i int64) float64) stats {
		s := stats{lo: math.Inf(1), hi: math.Inf(-1)}
		var sum, sum2 float64
		for i := int64(0); i < n; i++ {
			x := f(i)
			s.lo, s.hi = min(s.lo, x), max(s.hi, x)
			sum += x
			sum2 += x * x
			if x < 0 {
				s.neg++
			}
		}
		s.mean = sum / n
		s.variance = sum2/n - s.mean*s.mean
		s.neg /= n
		return s
	}
	near := func(what string, got, want, tol float64) {
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %.4g, want %.4g ± %.2g", what, got, want, tol)
		}
	}
	// 5σ tolerances for n = 2^17 draws.
	u := moments(func(i int64) float64 { return float64(fillRandom(seed, i, 0)) })
	if u.lo <= 0 || u.hi > 1 {
		t.Errorf("(0,1]: range [%g, %g]", u.lo, u.hi)
	}
	near("(0,1] mean", u.mean, 0.5, 5*math.Sqrt(1.0/12/n))
	c := moments(func(i int64) float64 { return float64(fillRandom(seed, i, 1)) })
	if c.lo <= -0.5 || c.hi > 0.5 {
		t.Errorf("(-0.5,0.5]: range [%g, %g]", c.lo, c.hi)
	}
	near("(-0.5,0.5] mean", c.mean, 0, 5*math.Sqrt(1.0/12/n))
	g := moments(func(i int64) float64 { return float64(fillRandom(seed, i, 2)) })
	near("normal mean", g.mean, 0, 5/math.Sqrt(n))
	near("normal variance", g.variance, 1, 5*math.Sqrt(2.0/n))
	near("normal fraction < 0", g.neg, 0.5, 5*0.5/math.Sqrt(n))
	if g.lo < -5.8 || g.hi > 5.8 || math.IsNaN(g.mean) {
		t.Errorf("normal: range [%g, %g]", g.lo, g.hi)
	}
	// |x| ≤ 1 holds with probability 0.6827.
	within := moments(func(i int64) float64 {
		if math.Abs(float64(fillRandom(seed, i, 2))) <= 1 {
			return 1
		}
		return 0
	})
	near("normal P(|x| ≤ 1)", within.mean, 0.6827, 5*math.Sqrt(0.6827*0.3173/n))
	// The two streams of Box–Muller are not correlated.
	corr := moments(func(i int64) float64 {
		return (float64(hash24(seed, i, 0)) / (1 << 24)) * (float64(hash24(seed, i, 1)) / (1 << 24))
	})
	near("E[u·u1]", corr.mean, 0.25, 5*math.Sqrt(7.0/144/n))
	lu := moments(func(i int64) float64 { return float64(fillRandom(seed, i, 3)) })
	near("log-uniform fraction < 0", lu.neg, 0.5, 5*0.5/math.Sqrt(n))
	l := moments(func(i int64) float64 { return math.Log10(math.Abs(float64(fillRandom(seed, i, 3)))) })
	if l.lo < math.Log10(float64(float32(1e-3))) || l.hi > 3 || l.lo > -2.99 || l.hi < 2.99 {
		t.Errorf("log-uniform: log10|x| in [%g, %g], want [-3, 3]", l.lo, l.hi)
	}
	near("log-uniform mean of log10|x|", l.mean, 0, 5*math.Sqrt(3.0/n))
	near("log-uniform variance of log10|x|", l.variance, 3, 0.05) // 36/12
	// Reproducible, and the seed matters.
	if fillRandom(seed, 5, 2) != fillRandom(seed, 5, 2) || fillRandom(seed, 5, 2) == fillRandom(seed+1, 5, 2) {
		t.Error("normal draws are not a function of (seed, index)")
	}
}

// TestEngineFillRandom compares fill_random on the device with the mirror:
// exactly for the uniform data, within a few ulps of the math functions
// for the others. (Not a TestGPU test: the fake CUDA of TestFakeCUDA runs
// no such kernel.)
func TestEngineFillRandom(t *testing.T) {
	e := engineGPU(t)
	const m, k = 64, 1000
	for dist := range DistNames {
		e.mu.Lock()
		o, err := e.newOperands(m, m, k, dist, 99, false)
		if err != nil {
			e.mu.Unlock()
			t.Fatal(err)
		}
		got := make([]float32, m*k)
		err = e.d.Download(got, o.a)
		o.free()
		e.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range got {
			want := float64(fillRandom(99, int64(i), dist))
			// Uniform: exact. Normal: logf, sqrtf, cosf within a few ulps.
			// Log-uniform: exp10f within 2 ulps, and 6v − 3 maybe one FMA.
			tol := [4]float64{0, 0, 1e-5 * max(1, math.Abs(want)), 1e-5 * math.Abs(want)}[dist]
			if math.Abs(float64(g)-want) > tol || (g < 0) != (want < 0) {
				t.Fatalf("%s: element %d = %g, the mirror gives %g", DistNames[dist], i, g, want)
			}
		}
	}
	e.mu.Lock()
	_, err := e.newOperands(4, 4, 4, len(DistNames), 1, false)
	e.mu.Unlock()
	if err == nil || !strings.Contains(err.Error(), "distribution") {
		t.Errorf("newOperands with dist %d: %v", len(DistNames), err)
	}
}
