package lu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/mwmm/mwmm/format"
)

// DefaultNB is the block size (panel width) when Options.NB is 0: a
// multiple of every preset's products per step (4, 8, 16, 32), so that no
// update ends in a partial block-FMA step.
const DefaultNB = 32

// Options tune a factorization.
type Options struct {
	// NB is the block size: the width of each panel and the inner
	// dimension of each update. 0 means DefaultNB.
	NB int
	// Pivot is how each column's pivot is chosen: partial pivoting (the
	// zero value) or none.
	Pivot Pivoting
	// Progress, when set, is called after each block step with the
	// multiply-adds done so far and in all (about n³/3).
	Progress func(done, total float64)
}

// Pivoting is how the panel chooses the pivot of each column.
type Pivoting uint8

const (
	// PartialPivoting takes the column's largest entry on or below the
	// diagonal (the first of equals, as LAPACK's getrf) and swaps its row up.
	PartialPivoting Pivoting = iota
	// NoPivoting takes the diagonal entry whatever it is: stable only on
	// matrices that need no interchanges (diagonally dominant by columns,
	// symmetric positive definite), and the algorithm of Blanchard et al.'s
	// experiments and of GPU codes that avoid the pivot search.
	NoPivoting
)

func (p Pivoting) String() string {
	if p == NoPivoting {
		return "none"
	}
	return "partial"
}

// ParsePivoting reads partial or none.
func ParsePivoting(s string) (Pivoting, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "partial":
		return PartialPivoting, nil
	case "none":
		return NoPivoting, nil
	}
	return 0, fmt.Errorf("lu: unknown pivoting %q: partial or none", s)
}

// ErrEmpty is returned for a 0×0 matrix.
var ErrEmpty = errors.New("lu: empty matrix")

// A SingularError says the factorization met a zero pivot: the matrix is
// singular in the arithmetic of the form (exactly singular, or so close
// that the storage format cannot tell). The factors are complete, as
// LAPACK's getrf leaves them, but U has a zero on its diagonal and cannot
// be solved with.
type SingularError struct {
	Column int // 0-based: U[Column][Column] is zero
	Form   string
}

func (e *SingularError) Error() string {
	return fmt.Sprintf("lu: the matrix is singular in %s arithmetic: zero pivot in column %d (U[%d][%d] = 0)", e.Form, e.Column+1, e.Column+1, e.Column+1)
}

// An OverflowError says an entry of the factors left the storage format's
// range: entries of A beyond it, or growth during elimination.
type OverflowError struct {
	Row, Column int // 0-based entry of the working matrix
	Step        int // block step (0-based) after which it was seen; -1: when A was read
	Form        string
	Storage     format.Format
}

func (e *OverflowError) Error() string {
	where := fmt.Sprintf("after block step %d", e.Step+1)
	if e.Step < 0 {
		where = "when A was rounded to it"
	}
	return fmt.Sprintf("lu: %s factorization overflowed %s (largest finite %g) at entry (%d, %d) %s: scale A, or use a wider form",
		e.Form, e.Storage.Name(), e.Storage.MaxFinite(), e.Row+1, e.Column+1, where)
}

// Factors is a computed P·A ≈ L̂·Û.
type Factors struct {
	N    int
	Form string
	// Storage is the format of the stored entries.
	Storage format.Format
	NB      int
	Pivot   Pivoting
	// LU holds L̂ strictly below the diagonal (its unit diagonal implied)
	// and Û on and above it, row-major n×n, values of Storage.
	LU []float64
	// Piv: at step i row i was swapped with row Piv[i] ≥ i (LAPACK's
	// ipiv, 0-based).
	Piv []int
	// Singular is the first column with a zero pivot, or -1.
	Singular int
	// Underflows counts nonzero entries of A that rounded to zero in Storage.
	Underflows int
	// Duration is the factorization's wall time.
	Duration time.Duration
}

// Factor computes P·A = L̂·Û of the n×n row-major matrix a in form f: a
// right-looking blocked LU with partial pivoting (the first largest entry
// of the column wins ties, as LAPACK's), or without pivoting (P = I) when
// opt.Pivot is NoPivoting. A is first rounded to the form's storage
// format; a itself is not changed.
//
// It returns an error for an empty or ill-shaped a, NaN or ±Inf in a,
// an *OverflowError when the factors leave the storage format's range, and
// ctx's error when ctx ends: checked between the rows (or bands of 64
// rows) of every update, so that a signal stops even a large factorization
// within about a second.
// A zero pivot gives the factors and a *SingularError.
func Factor(ctx context.Context, f Form, n int, a []float64, opt Options) (*Factors, error) {
	switch {
	case n < 0:
		return nil, fmt.Errorf("lu: negative order %d", n)
	case n == 0:
		return nil, ErrEmpty
	case len(a) != n*n:
		return nil, fmt.Errorf("lu: A has %d entries; an %d×%d matrix has %d", len(a), n, n, n*n)
	case f.update == nil:
		return nil, fmt.Errorf("lu: form %q has no update arithmetic (use Scalar, BlockFMA, Multiword or ParseForm)", f.Name)
	}
	if i := firstNonFinite(a); i >= 0 {
		return nil, fmt.Errorf("lu: A(%d, %d) is %v: the factorization needs finite entries", i/n+1, i%n+1, a[i])
	}
	nb := opt.NB
	if nb == 0 {
		nb = DefaultNB
	}
	if nb < 1 {
		return nil, fmt.Errorf("lu: block size %d, want ≥ 1", nb)
	}
	if opt.Pivot > NoPivoting {
		return nil, fmt.Errorf("lu: unknown pivoting %d", opt.Pivot)
	}
	start := time.Now()
	st := f.Storage
	fa := &Factors{N: n, Form: f.Name, Storage: st, NB: nb, Pivot: opt.Pivot, LU: make([]float64, n*n), Piv: make([]int, n), Singular: -1}
	w := fa.LU
	for i, x := range a {
		w[i] = st.Round(x, format.NearestEven)
		if w[i] == 0 && x != 0 {
			fa.Underflows++
		}
		if !isFinite(w[i]) {
			return nil, &OverflowError{Row: i / n, Column: i % n, Step: -1, Form: f.Name, Storage: st}
		}
	}
	total := float64(n) * float64(n) * float64(n) / 3
	round := func(x float64) float64 { return st.Round(x, format.NearestEven) }
	for k0, step := 0, 0; k0 < n; k0, step = k0+nb, step+1 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		kb := min(nb, n-k0)
		if err := fa.panel(ctx, k0, kb, round); err != nil {
			return nil, err
		}
		rest := n - k0 - kb
		if rest > 0 {
			// U12 ← L11⁻¹·A12 in the storage format.
			for r := k0 + 1; r < k0+kb; r++ {
				row := w[r*n : (r+1)*n]
				for j := k0; j < r; j++ {
					l := row[j]
					if l == 0 {
						continue
					}
					urow := w[j*n : (j+1)*n]
					for c := k0 + kb; c < n; c++ {
						row[c] = round(row[c] - round(l*urow[c]))
					}
				}
			}
			// A22 ← A22 − L21·U12 in the form's arithmetic.
			off := (k0+kb)*n + k0
			if err := f.update(ctx, rest, rest, kb, w[off:], n, w[k0*n+k0+kb:], n, w[(k0+kb)*n+k0+kb:], n); err != nil {
				if ctxErr := ctx.Err(); ctxErr != nil {
					return nil, ctxErr
				}
				return nil, fmt.Errorf("lu: update at block step %d: %w", step+1, err)
			}
			for i := k0 + kb; i < n; i++ {
				for j, x := range w[i*n+k0+kb : (i+1)*n] {
					if !isFinite(x) {
						return nil, &OverflowError{Row: i, Column: k0 + kb + j, Step: step, Form: f.Name, Storage: st}
					}
				}
			}
		}
		if opt.Progress != nil {
			done := total - float64(rest)*float64(rest)*float64(rest)/3
			opt.Progress(done, total)
		}
	}
	for i, x := range w {
		if !isFinite(x) {
			return nil, &OverflowError{Row: i / n, Column: i % n, Step: n / nb, Form: f.Name, Storage: st}
		}
	}
	fa.Duration = time.Since(start)
	if fa.Singular >= 0 {
		return fa, &SingularError{Column: fa.Singular, Form: f.Name}
	}
	return fa, nil
}

// panel factors columns k0..k0+kb−1 of rows k0..n−1 unblocked, rounding
// every operation to the storage format, and swaps whole rows as it
// pivots (LAPACK applies the same swaps to the left and right of the
// panel); without pivoting the diagonal entry is the pivot.
// It stops with ctx's error between columns (a panel of a large NB is long).
func (fa *Factors) panel(ctx context.Context, k0, kb int, round func(float64) float64) error {
	n, w := fa.N, fa.LU
	for j := k0; j < k0+kb; j++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		p, best := j, math.Abs(w[j*n+j])
		for i := j + 1; i < n && fa.Pivot == PartialPivoting; i++ {
			if v := math.Abs(w[i*n+j]); v > best {
				p, best = i, v
			}
		}
		fa.Piv[j] = p
		if p != j {
			rj, rp := w[j*n:(j+1)*n], w[p*n:(p+1)*n]
			for c := range rj {
				rj[c], rp[c] = rp[c], rj[c]
			}
		}
		pivot := w[j*n+j]
		if pivot == 0 {
			if fa.Singular < 0 {
				fa.Singular = j
			}
			continue
		}
		urow := w[j*n : (j+1)*n]
		for i := j + 1; i < n; i++ {
			row := w[i*n : (i+1)*n]
			l := round(row[j] / pivot)
			row[j] = l
			if l == 0 {
				continue
			}
			for c := j + 1; c < k0+kb; c++ {
				row[c] = round(row[c] - round(l*urow[c]))
			}
		}
	}
	return nil
}

// Perm returns the row permutation: row i of P·A is row Perm()[i] of A.
func (fa *Factors) Perm() []int {
	p := make([]int, fa.N)
	for i := range p {
		p[i] = i
	}
	for i, q := range fa.Piv {
		p[i], p[q] = p[q], p[i]
	}
	return p
}

// Solve overwrites x with Û⁻¹·L̂⁻¹·P·x, in fp64 on the stored
// factors: the correction solve of iterative refinement and the
// preconditioner of GMRES-IR.
func (fa *Factors) Solve(x []float64) error {
	n := fa.N
	if len(x) != n {
		return fmt.Errorf("lu: solve with a vector of length %d for an %d×%d system", len(x), n, n)
	}
	if fa.Singular >= 0 {
		return &SingularError{Column: fa.Singular, Form: fa.Form}
	}
	w := fa.LU
	for i, q := range fa.Piv {
		x[i], x[q] = x[q], x[i]
	}
	for i := 1; i < n; i++ {
		s := x[i]
		for j, l := range w[i*n : i*n+i] {
			s -= float64(l * x[j])
		}
		x[i] = s
	}
	for i := n - 1; i >= 0; i-- {
		s := x[i]
		row := w[i*n : (i+1)*n]
		for j := i + 1; j < n; j++ {
			s -= float64(row[j] * x[j])
		}
		x[i] = s / row[i]
	}
	return nil
}

// firstNonFinite returns the index of the first NaN or ±Inf in x, or -1.
func firstNonFinite(x []float64) int {
	for i, v := range x {
		if !isFinite(v) {
			return i
		}
	}
	return -1
}
