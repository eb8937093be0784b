package multiword

import (
	"errors"
	"fmt"
	"math"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/format"
)

// Engine computes C = A·B with a Plan. A is m×k, B is k×n and C is m×n,
// all row-major and dense in float64 (values of any format: the plan's
// splitting takes them to the words' format). C is overwritten.
//
// Every engine treats special values as IEEE arithmetic on the exact
// product would: an element of C is NaN or ±Inf exactly when its dot product
// of A's row and B's column in float64 is, with that value; the words carry
// only the finite entries, whose ±Inf−(±Inf) residuals would otherwise turn
// every Inf into NaN. Finite entries that overflow the words' format (no
// Scale) give non-finite elements, as the hardware would (the GPU's fused
// kernel computes their rows and columns in fp64 instead).
type Engine interface {
	Name() string
	Multiply(p Plan, m, n, k int, a, b, c []float64) error
}

// ErrEmpty is returned for products with a zero dimension: there is no
// matrix to multiply, and an empty C is more often a bug than a wish.
var ErrEmpty = errors.New("multiword: empty matrix")

// CheckArgs reports bad arguments to Multiply: an invalid plan, an empty or
// negative dimension, or slices too short.
func CheckArgs(p *Plan, m, n, k int, a, b, c []float64) error {
	if err := p.Check(); err != nil {
		return err
	}
	switch {
	case m < 0 || n < 0 || k < 0:
		return fmt.Errorf("multiword: negative dimensions %d×%d times %d×%d", m, k, k, n)
	case m == 0 || n == 0 || k == 0:
		return fmt.Errorf("%w: A is %d×%d and B is %d×%d", ErrEmpty, m, k, k, n)
	case len(a) != m*k:
		return fmt.Errorf("multiword: A has %d elements, %d×%d needs %d", len(a), m, k, m*k)
	case len(b) != k*n:
		return fmt.Errorf("multiword: B has %d elements, %d×%d needs %d", len(b), k, n, k*n)
	case len(c) != m*n:
		return fmt.Errorf("multiword: C has %d elements, %d×%d needs %d", len(c), m, n, m*n)
	}
	return nil
}

// A blockFMA is the arithmetic a CPU engine supplies: C = A·B + C through
// its block FMA, with A and B words of the plan's Low format and C values
// of its Acc format (row-major, leading dimensions lda, ldb, n).
type blockFMA interface {
	gemm(p *Plan, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64) error
}

// GemmFunc is a block FMA supplied from outside the package, as blockFMA:
// C = A·B + C with A (m×k, leading dimension lda) and B (k×n, ldb) words
// of p.Low and C (m×n, dense) values of p.Acc, all row-major.
type GemmFunc func(p *Plan, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64) error

func (f GemmFunc) gemm(p *Plan, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64) error {
	return f(p, m, n, k, a, lda, b, ldb, c)
}

// Drive runs the plan — scaling, splitting, products in order, summation,
// special values — with f as the block FMA: the driver of the CPU engines,
// for an engine that supplies only its block FMA (as the GPU engine does
// for the plans its fast path does not cover).
func Drive(f GemmFunc, p Plan, m, n, k int, a, b, c []float64) error {
	return multiply(f, &p, m, n, k, a, b, c)
}

// multiply is Algorithm 2.1 with the plan's scaling, splitting and
// summation, for an engine's block FMA.
func multiply(e blockFMA, p *Plan, m, n, k int, a, b, c []float64) error {
	if err := CheckArgs(p, m, n, k, a, b, c); err != nil {
		return err
	}
	a0, b0 := a, b
	a, b, badRows, badCols := finiteParts(m, n, k, a, b)

	// Narrow-range scaling: powers of two, so exact in float64.
	var lambda, mu []float64
	if p.Scale {
		theta := p.ScaleTarget(k)
		lambda, mu = RowScales(a, m, k, theta), ColScales(b, k, n, theta)
		as, bs := make([]float64, len(a)), make([]float64, len(b))
		for i := 0; i < m; i++ {
			for l := 0; l < k; l++ {
				as[i*k+l] = a[i*k+l] * lambda[i]
			}
		}
		for l := 0; l < k; l++ {
			for j := 0; j < n; j++ {
				bs[l*n+j] = b[l*n+j] * mu[j]
			}
		}
		a, b = as, bs
	}

	var rnd = newSource(p.Seed)
	aw := Split(a, p.Low, p.Words, p.SplitMode, p.WordShift, rnd)
	bw := Split(b, p.Low, p.Words, p.SplitMode, p.WordShift, rnd)

	// acc holds C as the summation leaves it: values of Acc, or (wide) of
	// fp64 after FABsum-v2 additions or the high parts of FABsum-pair's
	// pairs (hi, lo) of Acc values, lo their low parts.
	acc := make([]float64, m*n)
	wide := false
	var lo []float64
	if p.Sum == fabsumPair {
		lo = make([]float64, m*n)
	}
	d := make([]float64, m*n)
	bsz := p.block(k)
	// mid holds the group sums (Plan.Group; Check allows them for v2 and
	// pair only) as Acc values; inGroup counts the block results in them.
	var mid []float64
	inGroup := 0
	if p.Group > 1 {
		mid = make([]float64, m*n)
	}
	flush := func() {
		if inGroup > 0 {
			for x, v := range mid {
				if lo != nil {
					acc[x], lo[x] = twoSumAdd(&p.Acc, acc[x], lo[x], v)
				} else {
					acc[x] += v
				}
				mid[x] = 0
			}
			inGroup = 0
		}
	}
	// promote adds the block result in d, times s, to C with Sum.
	promote := func(s float64) {
		if mid != nil {
			for x, v := range d {
				mid[x] = p.Acc.Round(mid[x]+v*s, accMode)
			}
			if inGroup++; inGroup == p.Group {
				flush()
			}
			wide = true
			return
		}
		if lo != nil {
			for x, v := range d {
				acc[x], lo[x] = twoSumAdd(&p.Acc, acc[x], lo[x], v*s)
			}
			wide = true
			return
		}
		for x, v := range d {
			sum := acc[x] + v*s
			if p.Sum == fabsumV1 {
				// Rounding the float64 sum again is the same as rounding
				// the exact sum: 53 ≥ 2·24+2 (and more so for narrower Acc).
				sum = p.Acc.Round(sum, accMode)
			}
			acc[x] = sum
		}
		wide = p.Sum == fabsumV2
	}
	if p.FABsumJoint {
		// One accumulator per block: the products take turns, one k-step
		// of the block FMA each, as a kernel with one accumulator per
		// output issues them. WordShift is 0, so every product's scale is 1.
		// With JointProducts, each product over the block's steps in turn.
		step := p.jointStep()
		pairs := p.pairs()
		call := func(pr Pair, l0, kb, ks int) error {
			kc, l := min(step, kb-ks), l0+ks
			return e.gemm(p, m, n, kc, aw[pr.I][l:], k, bw[pr.J][l*n:], n, d)
		}
		for l0 := 0; l0 < k; l0 += bsz {
			kb := min(bsz, k-l0)
			clear(d)
			if p.JointOrder == JointProducts {
				for _, pr := range pairs {
					for ks := 0; ks < kb; ks += step {
						if err := call(pr, l0, kb, ks); err != nil {
							return err
						}
					}
				}
			} else {
				for ks := 0; ks < kb; ks += step {
					for _, pr := range pairs {
						if err := call(pr, l0, kb, ks); err != nil {
							return err
						}
					}
				}
			}
			promote(1)
		}
	} else {
		for _, pr := range p.pairs() {
			s := math.Ldexp(1, -p.WordShift*(pr.I+pr.J))
			ai, bj := aw[pr.I], bw[pr.J]
			if !p.fabsum(pr) {
				// C is the block FMA's addend, rescaled to the product's scale
				// (exactly, by a power of two) and back.
				for x, v := range acc {
					if wide && lo != nil {
						// The pair collapses to one Acc value, the addend.
						v, lo[x] = p.Acc.Round(v+lo[x], accMode), 0
					} else if wide {
						v = p.Acc.Round(v, accMode)
					}
					d[x] = v / s
				}
				if err := e.gemm(p, m, n, k, ai, k, bj, n, d); err != nil {
					return err
				}
				for x, v := range d {
					acc[x] = v * s
				}
				wide = false
				continue
			}
			for l0 := 0; l0 < k; l0 += bsz {
				kb := min(bsz, k-l0)
				clear(d)
				if err := e.gemm(p, m, n, kb, ai[l0:], k, bj[l0*n:], n, d); err != nil {
					return err
				}
				promote(s)
			}
		}
	}

	flush() // a last, shorter group
	if wide && lo != nil {
		for x, v := range acc {
			acc[x] = p.Acc.Round(v+lo[x], accMode)
		}
	}
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			v := acc[i*n+j]
			if p.Scale {
				v = v / lambda[i] / mu[j]
			}
			c[i*n+j] = p.Out.Round(v, accMode)
		}
	}
	patchSpecials(m, n, k, a0, b0, c, badRows, badCols)
	return nil
}

// finiteParts returns A and B with their non-finite entries replaced by 0
// (copies, only when there are any) and the rows of A and columns of B
// that had them.
func finiteParts(m, n, k int, a, b []float64) (af, bf []float64, rows, cols []int) {
	af, bf = a, b
	for i := 0; i < m; i++ {
		for l := 0; l < k; l++ {
			if v := a[i*k+l]; math.IsInf(v, 0) || math.IsNaN(v) {
				if len(af) > 0 && &af[0] == &a[0] {
					af = append([]float64(nil), a...)
				}
				af[i*k+l] = 0
				if len(rows) == 0 || rows[len(rows)-1] != i {
					rows = append(rows, i)
				}
			}
		}
	}
	seen := make([]bool, n)
	for l := 0; l < k; l++ {
		for j := 0; j < n; j++ {
			if v := b[l*n+j]; math.IsInf(v, 0) || math.IsNaN(v) {
				if len(bf) > 0 && &bf[0] == &b[0] {
					bf = append([]float64(nil), b...)
				}
				bf[l*n+j] = 0
				seen[j] = true
			}
		}
	}
	for j, s := range seen {
		if s {
			cols = append(cols, j)
		}
	}
	return af, bf, rows, cols
}

// patchSpecials sets the elements of C in the given rows and columns to the
// float64 dot product of A's row and B's column, which is non-finite there:
// a non-finite term makes the whole sum non-finite.
func patchSpecials(m, n, k int, a, b, c []float64, rows, cols []int) {
	dot := func(i, j int) float64 {
		s := 0.0
		for l := 0; l < k; l++ {
			s += a[i*k+l] * b[l*n+j]
		}
		return s
	}
	for _, i := range rows {
		for j := 0; j < n; j++ {
			c[i*n+j] = dot(i, j)
		}
	}
	for _, j := range cols {
		for i := 0; i < m; i++ {
			c[i*n+j] = dot(i, j)
		}
	}
}

// accMode is the rounding of the additions outside the block FMA (FABsum's
// inter-block sums, the output): round to nearest, as in standard arithmetic.
const accMode = format.NearestEven

const (
	fabsumV1   = bound.FABsumV1
	fabsumV2   = bound.FABsumV2
	fabsumPair = bound.FABsumPair
)

// twoSumAdd adds b to the pair (hi, lo) of acc values as the fused GPU kernel
// does: Knuth's TwoSum of hi and b, each operation rounded to nearest in acc,
// its error added to lo. Rounding the float64 sum or difference of two
// values of acc is rounding the exact one when acc has at most 25 bits
// (53 ≥ 2p+2), as fp32 has. TwoSum is exact (s + e = hi + b) unless s
// overflows; then lo becomes Inf − Inf = NaN and so does the pair's value.
func twoSumAdd(acc *format.Format, hi, lo, b float64) (float64, float64) {
	r := func(x float64) float64 { return acc.Round(x, accMode) }
	s := r(hi + b)
	bb := r(s - hi)
	ab := r(s - bb)
	db := r(b - bb)
	da := r(hi - ab)
	e := r(da + db)
	return s, r(lo + e)
}
