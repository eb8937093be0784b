package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

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
