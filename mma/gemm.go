package mma

import (
	"fmt"
	"runtime"
	"sync"
)

// Gemm overwrites the m×n matrix C with A·B + C computed through the unit:
// every element is one dot product of length k, cut into the unit's blocks
// in order of k, each block's rounded result the next block's addend. This
// is how a GEMM built on the unit accumulates; it is the engine of the
// simulated experiments.
//
// The matrices are row-major with leading dimensions lda ≥ k, ldb ≥ n and
// ldc ≥ n. A and B should hold values of the unit's input format and C values
// of its output format. Rows are computed in parallel on all cores.
func Gemm(u Unit, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) error {
	switch {
	case m < 0 || n < 0 || k < 0:
		return fmt.Errorf("mma: Gemm with negative dimensions %d×%d×%d", m, n, k)
	case lda < max(1, k) || ldb < max(1, n) || ldc < max(1, n):
		return fmt.Errorf("mma: Gemm leading dimensions lda=%d ldb=%d ldc=%d too small for %d×%d×%d", lda, ldb, ldc, m, n, k)
	case m > 0 && k > 0 && len(a) < (m-1)*lda+k:
		return fmt.Errorf("mma: Gemm: A has %d elements, needs %d", len(a), (m-1)*lda+k)
	case k > 0 && n > 0 && len(b) < (k-1)*ldb+n:
		return fmt.Errorf("mma: Gemm: B has %d elements, needs %d", len(b), (k-1)*ldb+n)
	case m > 0 && n > 0 && len(c) < (m-1)*ldc+n:
		return fmt.Errorf("mma: Gemm: C has %d elements, needs %d", len(c), (m-1)*ldc+n)
	}
	if m == 0 || n == 0 {
		return nil
	}
	// Columns of B, contiguous.
	bt := make([]float64, n*k)
	for l := 0; l < k; l++ {
		for j := 0; j < n; j++ {
			bt[j*k+l] = b[l*ldb+j]
		}
	}
	model, direct := u.(*Model)
	workers := min(runtime.GOMAXPROCS(0), m)
	rows := make(chan int, m)
	for i := 0; i < m; i++ {
		rows <- i
	}
	close(rows)
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var as, cs, ds []float64
			for i := range rows {
				row := a[i*lda : i*lda+k]
				crow := c[i*ldc : i*ldc+n]
				if direct {
					for j := range crow {
						crow[j] = model.Dot(row, bt[j*k:(j+1)*k], crow[j])
					}
					continue
				}
				// Any other unit gets one batch per row.
				as = as[:0]
				for j := 0; j < n; j++ {
					as = append(as, row...)
				}
				cs = append(cs[:0], crow...)
				ds = append(ds[:0], crow...)
				if err := u.Dots(k, as, bt, cs, ds); err != nil {
					errs[w] = err
					return
				}
				copy(crow, ds)
			}
		}(w)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
