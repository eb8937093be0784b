package lu

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/mwmm/mwmm/format"
)

// Errors measures a factorization against the matrix it factored.
type Errors struct {
	// Normwise is ‖P·A − L̂Û‖∞ / ‖A‖∞, A as given.
	Normwise float64 `json:"backward_error"`
	// Componentwise is max |P·fl(A) − L̂Û|_ij / (|L̂||Û|)_ij, fl(A) being A
	// rounded to the storage format: the quantity the form's Bound bounds.
	Componentwise float64 `json:"componentwise_error"`
	// Growth is max|Û_ij| / max|A_ij|, the growth factor of the elimination.
	Growth float64 `json:"growth"`
	// LUNorm is ‖|L̂||Û|‖∞ / ‖A‖∞, which multiplies the bound in norms.
	LUNorm float64 `json:"lu_norm"`
}

// Errors computes the backward errors of fa as factors of a (the n×n
// matrix given to Factor). L̂Û is formed with compensated products and
// sums (double-word arithmetic), so the measurement's own error is of order
// 2^-106, far below that of any factorization, fp64's included.
func (fa *Factors) Errors(a []float64) (Errors, error) {
	return fa.ErrorsContext(context.Background(), a)
}

// ErrorsContext is Errors that stops with ctx's error when ctx ends: it
// costs about as much as the factorization.
func (fa *Factors) ErrorsContext(ctx context.Context, a []float64) (Errors, error) {
	n := fa.N
	if len(a) != n*n {
		return Errors{}, fmt.Errorf("lu: A has %d entries, the factors are %d×%d", len(a), n, n)
	}
	perm := fa.Perm()
	w := fa.LU
	rowRes := make([]float64, n)  // Σ_j |P·A − L̂Û|_ij
	rowA := make([]float64, n)    // Σ_j |A_ij|
	rowAbs := make([]float64, n)  // Σ_j (|L̂||Û|)_ij
	rowComp := make([]float64, n) // max_j of the componentwise ratio
	var maxA, maxU float64
	var mu sync.Mutex
	parallelRows(n, func(i int) {
		if ctx.Err() != nil {
			return
		}
		src := a[perm[i]*n : (perm[i]+1)*n]
		var res, sa, sabs, comp, ma, mu2 float64
		for j := 0; j < n; j++ {
			hi, lo, abs := 0.0, 0.0, 0.0
			for k := 0; k <= min(i, j); k++ {
				l := 1.0
				if k < i {
					l = w[i*n+k]
				}
				u := w[k*n+j]
				p := float64(l * u) // unfused: TwoSum needs the rounded product
				e := math.FMA(l, u, -p)
				hi, lo = twoSum(hi, lo, p, e)
				abs += math.Abs(p)
			}
			x := src[j]
			xs := fa.Storage.Round(x, format.NearestEven)
			r := (x - hi) - lo
			rs := (xs - hi) - lo
			res += math.Abs(r)
			sa += math.Abs(x)
			sabs += abs
			switch {
			case abs > 0:
				comp = math.Max(comp, math.Abs(rs)/abs)
			case rs != 0:
				comp = math.Inf(1)
			}
			ma = math.Max(ma, math.Abs(x))
			if j >= i {
				mu2 = math.Max(mu2, math.Abs(w[i*n+j]))
			}
		}
		rowRes[i], rowA[i], rowAbs[i], rowComp[i] = res, sa, sabs, comp
		mu.Lock()
		maxA, maxU = math.Max(maxA, ma), math.Max(maxU, mu2)
		mu.Unlock()
	})
	if err := ctx.Err(); err != nil {
		return Errors{}, err
	}
	var e Errors
	var normA, normRes, normAbs float64
	for i := 0; i < n; i++ {
		normA = math.Max(normA, rowA[i])
		normRes = math.Max(normRes, rowRes[i])
		normAbs = math.Max(normAbs, rowAbs[i])
		e.Componentwise = math.Max(e.Componentwise, rowComp[i])
	}
	if normA > 0 {
		e.Normwise = normRes / normA
		e.LUNorm = normAbs / normA
		e.Growth = maxU / maxA
	}
	return e, nil
}

// twoSum adds p + e to the double-word (hi, lo).
func twoSum(hi, lo, p, e float64) (float64, float64) {
	s := hi + p
	bb := s - hi
	err := (hi - (s - bb)) + (p - bb)
	lo += err + e
	s2 := s + lo
	lo = lo - (s2 - s)
	return s2, lo
}
