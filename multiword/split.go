package multiword

import (
	"math"
	"math/rand/v2"

	"github.com/mwmm/mwmm/format"
)

// Split returns p words of x (eq. 2.2 of Fasi et al., with the word scaling
// of Mary and Mikaitis): word i is
//
//	w_i = fl_low((x − Σ_{k<i} 2^(−t·k) w_k) · 2^(t·i)),
//
// so that x ≈ Σ_i 2^(−t·i) w_i with |x − Σ| ≤ u_low^p |x| while nothing
// underflows. Each residual is exact in float64 because it is the error of
// rounding a float64 to fewer bits. A word that overflows (±Inf or NaN in
// low) ends the expansion: the remaining words are 0, so that the overflow
// shows in the product instead of becoming Inf − Inf. rnd supplies the bits
// of a stochastic mode (nil means a generator seeded with 0).
func Split(x []float64, low format.Format, p int, mode format.Mode, shift int, rnd format.Source) [][]float64 {
	if rnd == nil && mode.IsStochastic() {
		rnd = newSource(0)
	}
	words := make([][]float64, p)
	for i := range words {
		words[i] = make([]float64, len(x))
	}
	sp := newSplitter(low, p, mode, shift, rnd)
	for e, v := range x {
		sp.one(v, words, e)
	}
	return words
}

// Residual returns what Split's p words of x miss, x − Σ_i 2^(−t·i) w_i,
// in a deterministic mode: 0 when a word overflows (the overflow, not the
// residual, is then the error).
func Residual(x float64, low format.Format, p int, mode format.Mode, shift int) float64 {
	sp := newSplitter(low, p, mode, shift, nil)
	return sp.one(x, nil, 0)
}

// A splitter holds one split's parameters, its rounder made once.
type splitter struct {
	low   format.Format
	rr    format.Rounder // low in mode, for deterministic modes
	p     int
	mode  format.Mode
	shift int
	rnd   format.Source
}

func newSplitter(low format.Format, p int, mode format.Mode, shift int, rnd format.Source) *splitter {
	sp := &splitter{low: low, p: p, mode: mode, shift: shift, rnd: rnd}
	sp.rr = sp.low.Rounder(mode)
	return sp
}

// one splits x into p words, storing word i in words[i][e] when words
// is given, and returns the residual (0 after an overflow).
func (sp *splitter) one(x float64, words [][]float64, e int) float64 {
	r := x
	for i := 0; i < sp.p && r != 0; i++ {
		scaled := r
		if sp.shift != 0 {
			scaled = math.Ldexp(r, sp.shift*i)
		}
		var w float64
		if sp.mode.IsStochastic() {
			w = sp.low.RoundRand(scaled, sp.mode, sp.rnd)
		} else {
			w = sp.rr.Round(scaled)
		}
		if words != nil {
			words[i][e] = w
		}
		if math.IsInf(w, 0) || math.IsNaN(w) {
			return 0
		}
		if sp.shift != 0 {
			w = math.Ldexp(w, -sp.shift*i)
		}
		r -= w
	}
	return r
}

// newSource returns the generator of a plan's stochastic splitting.
func newSource(seed uint64) format.Source { return rand.NewPCG(seed, 0x6d776d6d) }

// RowScales returns the narrow-range scaling of the rows of the m×k matrix a
// (row-major): λ_i = 2^e with e the largest integer such that
// λ_i·max_j |a_ij| ≤ theta, so the row's largest magnitude lands in
// (theta/2, theta]. Rows of zeros (and non-finite entries, which scaling
// cannot help) count as 1.
func RowScales(a []float64, m, k int, theta float64) []float64 {
	s := make([]float64, m)
	for i := range s {
		big := 0.0
		for _, v := range a[i*k : (i+1)*k] {
			if v := math.Abs(v); v > big && !math.IsInf(v, 0) {
				big = v
			}
		}
		s[i] = powerBelow(theta, big)
	}
	return s
}

// ColScales is RowScales for the columns of the k×n matrix b: μ_j.
func ColScales(b []float64, k, n int, theta float64) []float64 {
	big := make([]float64, n)
	for l := 0; l < k; l++ {
		for j, v := range b[l*n : (l+1)*n] {
			if v := math.Abs(v); v > big[j] && !math.IsInf(v, 0) {
				big[j] = v
			}
		}
	}
	for j, v := range big {
		big[j] = powerBelow(theta, v)
	}
	return big
}

// powerBelow returns the largest power of two 2^e with 2^e·x ≤ theta, or 1
// for x = 0.
func powerBelow(theta, x float64) float64 {
	if x == 0 || math.IsNaN(x) {
		return 1
	}
	e := math.Ilogb(theta) - math.Ilogb(x)
	for math.Ldexp(x, e) > theta {
		e--
	}
	for math.Ldexp(x, e+1) <= theta {
		e++
	}
	return math.Ldexp(1, e)
}
