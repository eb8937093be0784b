package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/internal/budget"
	"github.com/mwmm/mwmm/internal/progress"
	"github.com/mwmm/mwmm/multiword"
)

// Multiply-adds a second on two cores of the development VM, conservative:
// the reference engine's float64 loops and the bit-exact block FMA model.
const (
	referenceRate = 3e8
	modelRate     = 1e7
)

// gemmEstimate is the CPU engines' time for m×k by k×n with plan's products
// (0 for other engines, which this cannot predict) and the memory the
// command needs: A, B, their words, C and --check's float64 product.
func gemmEstimate(engine string, products, m, k, n int) budget.Cost {
	work := float64(products) * float64(m) * float64(k) * float64(n)
	var secs float64
	switch {
	case engine == "reference":
		secs = work / referenceRate
	case strings.HasPrefix(engine, "model:"):
		secs = work / modelRate
	}
	words := math.Sqrt(float64(products)) + 1
	bytes := 8 * ((float64(m)*float64(k)+float64(k)*float64(n))*(1+words) + 3*float64(m)*float64(n))
	return budget.Cost{Seconds: secs, Bytes: bytes}
}

// checkCost refuses random matrices whose product would take over an hour
// or more memory than the machine has available, unless --force (the
// policy of package budget).
func checkCost(o *gemmOptions, m, k, n int) error {
	plan, err := multiword.Lookup(o.variant)
	products := 3
	if err == nil {
		products = plan.Products()
	}
	c := gemmEstimate(o.engine, products, m, k, n)
	err = budget.Machine().Check(c, o.force)
	var tl *budget.TooLongError
	if errors.As(err, &tl) {
		return usagef("--size %d,%d,%d: about %s on the %s engine (%s of %.3g multiply-adds each); run it with --force, or on --engine gpu",
			m, k, n, budget.Words(c.Seconds), o.engine, count(products, "product"), float64(m)*float64(k)*float64(n))
	}
	if err != nil {
		// This machine's limit, not the command line's: exit 1.
		return fmt.Errorf("--size %d,%d,%d: %w", m, k, n, err)
	}
	return nil
}

// roundDuration says d in words (budget.Words).
func roundDuration(d time.Duration) string { return budget.Words(d.Seconds()) }

// splitLoss counts the rows of x (rows×cols, row-major; the columns when
// byRows is false) that the plan's words represent worse than the split's
// bound allows because entries underflow the words' format: with scaling,
// after the rows (or columns) are scaled as the plan scales them. A row
// counts when what its words miss, summed, exceeds the bound times the sum
// of its magnitudes: the error it brings to C even where the other factor
// weighs its entries alike. Tiny entries beside large ones do not count
// (uniform data in (0,1] has entries below fp16's normal range whose loss
// C never sees); a row of 1e-40s does.
func splitLoss(p *multiword.Plan, x []float64, rows, cols int, byRows bool, k int) int {
	scales := []float64(nil)
	if p.Scale {
		theta := p.ScaleTarget(k)
		if byRows {
			scales = multiword.RowScales(x, rows, cols, theta)
		} else {
			scales = multiword.ColScales(x, rows, cols, theta)
		}
	}
	u := math.Ldexp(1, -p.Low.Precision())
	if !(p.SplitMode == format.NearestEven || p.SplitMode == format.NearestAway || p.SplitMode == format.NearestTowardZero) {
		u *= 2
	}
	tol := 4 * math.Pow(u, float64(p.Words))
	mode := p.SplitMode
	if mode.IsStochastic() {
		mode = format.TowardZero // the same grid, deterministic: the check is of range, not of the draws
	}
	lines, length := rows, cols
	if !byRows {
		lines, length = cols, rows
	}
	lost := 0
	for l := 0; l < lines; l++ {
		s := 1.0
		if scales != nil {
			s = scales[l]
		}
		var mag, miss float64
		for e := 0; e < length; e++ {
			var v float64 // entry e of row (or column) l
			if byRows {
				v = x[l*cols+e]
			} else {
				v = x[e*cols+l]
			}
			if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			mag += math.Abs(v * s)
			miss += math.Abs(multiword.Residual(v*s, p.Low, p.Words, mode, p.WordShift))
		}
		if miss > tol*mag {
			lost++
		}
	}
	return lost
}

// multiplyRows multiplies on eng, in bands of rows with a progress bar on a
// terminal when the CPU engines would take over a few seconds. Each row of C
// depends only on its row of A and on B (the scaling of B's columns sees all
// of B in every band), so bands give the same C; stochastic splits, whose
// draws follow the order of the whole matrix, run in one call.
func multiplyRows(eng multiword.Engine, plan multiword.Plan, m, n, k int, a, b, c []float64, stderr io.Writer) error {
	secs := gemmEstimate(eng.Name(), plan.Products(), m, k, n).Seconds
	if secs >= 10 {
		fmt.Fprintf(stderr, "mwmm gemm: estimated %s on the %s engine\n", budget.Words(secs), eng.Name())
	}
	bands := min(m, 50)
	if secs < 3 || plan.SplitMode.IsStochastic() || bands < 2 || !progress.IsTerminal(stderr) {
		return eng.Multiply(plan, m, n, k, a, b, c)
	}
	bar := progress.New(stderr, int64(m), "gemm")
	defer bar.Finish()
	for lo := 0; lo < m; {
		hi := min(m, lo+(m+bands-1)/bands)
		if err := eng.Multiply(plan, hi-lo, n, k, a[lo*k:hi*k], b, c[lo*n:hi*n]); err != nil {
			return err
		}
		bar.Add(int64(hi - lo))
		lo = hi
	}
	return nil
}
