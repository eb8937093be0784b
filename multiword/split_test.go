package multiword_test

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/multiword"
)

// checkSplit checks eq. (2.3) and the decay |w_i| ≤ u^i(1+u)|x| with an
// exact math/big sum of the words.
func checkSplit(t *testing.T, x []float64, low format.Format, p, shift int, mode format.Mode) {
	t.Helper()
	u := bound.U(low, mode)
	words := multiword.Split(x, low, p, mode, shift, nil)
	for e, v := range x {
		sum := new(big.Float).SetPrec(2000)
		for i := range words {
			w := words[i][e]
			if !low.IsRepresentable(w) {
				t.Fatalf("%s p=%d x=%g: word %d = %g is not a %s value", low.Name(), p, v, i, w, low.Name())
			}
			wv := math.Ldexp(w, -shift*i)
			if math.Abs(wv) > math.Pow(u, float64(i))*(1+u)*math.Abs(v) {
				t.Fatalf("%s p=%d x=%g: word %d = %g·2^-%d exceeds u^i(1+u)|x|", low.Name(), p, v, i, w, shift*i)
			}
			sum.Add(sum, new(big.Float).SetFloat64(wv))
		}
		d := new(big.Float).Sub(new(big.Float).SetFloat64(v), sum)
		df, _ := d.Float64()
		if math.Abs(df) > math.Pow(u, float64(p))*math.Abs(v) {
			t.Fatalf("%s %s p=%d shift=%d x=%g: |x − Σw| = %g > u^p|x| = %g", low.Name(), mode, p, shift, v, math.Abs(df), math.Pow(u, float64(p))*math.Abs(v))
		}
	}
}

// Every fp16 value, split into 1..3 E4M3 words (with the word shift
// that keeps low words out of E4M3's subnormals, and inside the range that
// E4M3 covers) and into E5M2 words: exhaustive over a 16-bit domain.
func TestSplitExhaustiveBinary16(t *testing.T) {
	var xs []float64
	for code := uint64(0); code < 1<<16; code++ {
		v, err := format.Binary16.Decode(code)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		xs = append(xs, v)
	}
	for _, tc := range []struct {
		low      format.Format
		lo, hi   float64
		shift    int
		maxWords int
	}{
		{format.E4M3, 0x1p-6, 448, 4, 3},
		{format.E5M2, 0x1p-14, 57344, 3, 3},
		{format.BFloat16, 0, math.Inf(1), 0, 2},
	} {
		for _, mode := range []format.Mode{format.NearestEven, format.TowardZero} {
			hi := tc.hi
			if mode == format.TowardZero && tc.shift > 0 {
				// A directed residual reaches a whole ulp: scaled by 2^p it
				// can be twice the value (Plan halves θ for this).
				hi /= 2
			}
			var in []float64
			for _, v := range xs {
				// Values whose last word would fall below the format's
				// subnormals lose bits to underflow, which (2.3) excludes.
				if a := math.Abs(v); a == 0 || (a >= tc.lo && a <= hi) {
					in = append(in, v)
				}
			}
			for p := 1; p <= tc.maxWords; p++ {
				checkSplit(t, in, tc.low, p, tc.shift, mode)
			}
		}
	}
}

func TestSplitRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, f := range []format.Format{format.Binary16, format.BFloat16, format.TF32} {
		// Within fp16's normal range; the shift keeps its low words
		// out of the subnormals.
		x := make([]float64, 20000)
		for i := range x {
			x[i] = math.Ldexp(rng.Float64()+0.5, rng.IntN(28)-13) * float64(1-2*rng.IntN(2))
		}
		for p := 1; p <= 4; p++ {
			shift := 0
			if f == format.Binary16 {
				shift = 11
			}
			checkSplit(t, x, f, p, shift, format.NearestEven)
		}
	}
}

// A value below E4M3's normal range without subnormals vanishes from the
// first word but not from the second, which the shift keeps in range.
func TestSplitShiftKeepsUnderflow(t *testing.T) {
	low := format.E4M3.WithSubnormals(false)
	x := []float64{0x1p-8, 1, 125}
	w := multiword.Split(x, low, 2, format.NearestEven, 4, nil)
	want := [][]float64{{0, 1, 128}, {0x1p-4, 0, -48}}
	for i := range want {
		for e := range want[i] {
			if w[i][e] != want[i][e] {
				t.Errorf("word %d of %g = %g, want %g", i, x[e], w[i][e], want[i][e])
			}
		}
	}
	unshifted := multiword.Split(x, low, 2, format.NearestEven, 0, nil)
	if unshifted[1][0] != 0 {
		t.Errorf("without the shift 2^-8 should underflow in both words, got %g", unshifted[1][0])
	}
}

// An overflowing word ends the expansion instead of leaving Inf − Inf.
func TestSplitOverflow(t *testing.T) {
	w := multiword.Split([]float64{1e6, -1e6}, format.Binary16, 3, format.NearestEven, 0, nil)
	if !math.IsInf(w[0][0], 1) || w[1][0] != 0 || w[2][0] != 0 || !math.IsInf(w[0][1], -1) || w[1][1] != 0 {
		t.Errorf("split of ±1e6 into fp16 = %v, want ±Inf then zeros", w)
	}
}

// Stochastic splitting is reproducible for a seed and still satisfies
// (2.3) with u = 2^(1-p).
func TestSplitStochastic(t *testing.T) {
	p, err := multiword.Lookup("double-bf16:split=sr,seed=7")
	if err != nil {
		t.Fatal(err)
	}
	a := []float64{0.1, 0.2, 0.3, 0.7}
	b := []float64{1, 1, 1, 1}
	c1, c2 := make([]float64, 1), make([]float64, 1)
	for _, c := range [][]float64{c1, c2} {
		if err := (multiword.Reference{}).Multiply(p, 1, 1, 4, a, b, c); err != nil {
			t.Fatal(err)
		}
	}
	if c1[0] != c2[0] {
		t.Errorf("same seed, different results %g and %g", c1[0], c2[0])
	}
	checkSplit(t, a, format.BFloat16, 2, 0, format.Stochastic)
}

func TestScales(t *testing.T) {
	a := []float64{500, 1, 1, 0x1p-6, 128, 128, 128, 128, 0, 0, 0, 0, -3, math.Inf(1), 0.5, 1}
	got := multiword.RowScales(a, 4, 4, 127.96874237060547)
	want := []float64{0x1p-2, 0x1p-1, 1, 0x1p5} // row 4: max finite |−3| → 2^5·3 = 96 ≤ 127.97 < 192
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("λ_%d = %g, want %g", i+1, got[i], want[i])
		}
	}
	cols := multiword.ColScales([]float64{1, 128, 1, 3}, 1, 4, 448)
	for j, w := range []float64{256, 2, 256, 128} {
		if cols[j] != w {
			t.Errorf("μ_%d = %g, want %g", j+1, cols[j], w)
		}
	}
}

// Residual is exactly x minus the words Split makes (math/big adds them),
// within the split's bound u^p·|x| in nearest modes while no word is
// subnormal, and 0 when a word overflows.
func TestResidual(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, mode := range []format.Mode{format.NearestEven, format.TowardZero} {
		for trial := 0; trial < 2000; trial++ {
			x := math.Copysign((1+rng.Float64())*math.Ldexp(1, rng.IntN(20)-10), rng.Float64()-0.5) // words stay normal
			words := multiword.Split([]float64{x}, format.Binary16, 2, mode, 11, nil)
			sum := new(big.Float).SetPrec(2000).SetFloat64(x)
			for i, w := range words {
				sum.Sub(sum, new(big.Float).SetPrec(2000).SetFloat64(math.Ldexp(w[0], -11*i)))
			}
			want, _ := sum.Float64()
			got := multiword.Residual(x, format.Binary16, 2, mode, 11)
			if got != want {
				t.Fatalf("%v: Residual(%g) = %g, x − Σ words = %g", mode, x, got, want)
			}
			if u := math.Ldexp(1, -11); mode == format.NearestEven && math.Abs(got) > u*u*math.Abs(x) {
				t.Fatalf("Residual(%g) = %g above u²|x|", x, got)
			}
		}
	}
	if r := multiword.Residual(1e10, format.Binary16, 2, format.NearestEven, 11); r != 0 {
		t.Errorf("a word that overflows: Residual = %g, want 0", r)
	}
}
