package lu

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/mma"
	"github.com/mwmm/mwmm/multiword"
)

// A Form is how a factorization computes: the format its factors are
// stored in, and the arithmetic of its Schur-complement updates
// C ← C − L21·U12. The panel (the unblocked factorization of a block
// column, with its pivoting) and the triangular solve for U12 run in the
// storage format with one rounding to nearest per operation, as in the
// block LU of Blanchard et al. (section 4); only the updates differ.
type Form struct {
	// Name is the form as typed: tc16, tc32, fp16, fp32, fp64 or a
	// multiword variant.
	Name string
	// Storage is the format of the stored factors (and of A once it is
	// read): the block FMA's output format for tensor-core forms.
	Storage format.Format
	// Update says in words how the updates compute, for reports; Kind
	// says it as a value.
	Update string
	Kind   UpdateKind

	update updater
	// step is the first-order error of one update's contribution to an
	// element, for the bound: see Bound.
	boundTerms func(n, nb int) (bound.LUUpdate, error)
}

// An UpdateKind is which of the three kinds of trailing update a Form
// runs.
type UpdateKind int

const (
	ScalarUpdate    UpdateKind = iota + 1 // plain arithmetic of one format (Scalar)
	BlockFMAUpdate                        // through a matrix-multiply unit (BlockFMA)
	MultiwordUpdate                       // a multiword plan on an engine (Multiword)
)

// updater computes C ← C − A·B: A is m×k (leading dimension lda), B is
// k×n (ldb) and C is m×n (ldc), all row-major values of the storage format.
// It stops with ctx's error when ctx ends: one update of a large matrix
// can take minutes, so updaters check ctx between rows or bands of rows.
type updater func(ctx context.Context, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) error

// bandRows is the rows of C an updater computes between checks of ctx: a
// second or so of the slowest (model) arithmetic for n in the tens of
// thousands.
const bandRows = 64

// inBands calls f on the row bands [lo, hi) of m rows, bandRows at a
// time, and stops with ctx's error between bands.
func inBands(ctx context.Context, m int, f func(lo, hi int) error) error {
	for lo := 0; lo < m; lo += bandRows {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := f(lo, min(m, lo+bandRows)); err != nil {
			return err
		}
	}
	return nil
}

// Scalar is LU in plain arithmetic of format f: every multiplication,
// subtraction and division rounded to nearest in f (fp16, fp32 and fp64
// are the paper's "standard" factorizations).
func Scalar(f format.Format) Form {
	u := bound.U(f, format.NearestEven)
	return Form{
		Name:    strings.TrimPrefix(formatShort(f), "+"),
		Storage: f,
		Update:  fmt.Sprintf("%s arithmetic: c ← fl(c − fl(l·u)), one term at a time", f.Name()),
		Kind:    ScalarUpdate,
		update:  scalarUpdate(f),
		boundTerms: func(n, nb int) (bound.LUUpdate, error) {
			// A scalar update of inner dimension nb is nb chain roundings
			// of the element, and one own rounding per product.
			return bound.LUUpdate{Chain: u, ChainSteps: nb, Own: u}, nil
		},
	}
}

// BlockFMA is LU whose updates go through the matrix-multiply unit u: L21
// and U12 are rounded to nearest into u's input format and every element
// of C is accumulated through u's blocks of BlockK products in order of k,
// each block's result (u's output format) the next block's addend. The
// factors are stored in u's output format: with an fp16 output this is
// the paper's TC16 form, with fp32 its TC32 form.
func BlockFMA(u mma.Unit) Form {
	in, out := u.Input(), u.Output()
	conv := 0.0
	if in.Precision() < out.Precision() || in.Emin() > out.Emin() || in.Emax() < out.Emax() {
		conv = bound.U(in, format.NearestEven)
	}
	name := "tc" + strings.TrimPrefix(formatShort(out), "fp")
	return Form{
		Name:    name,
		Storage: out,
		Update: fmt.Sprintf("block FMA %s: L21, U12 rounded to %s, accumulated through the unit in %d-product steps into %s",
			u.Name(), in.Name(), u.BlockK(), out.Name()),
		Kind:   BlockFMAUpdate,
		update: unitUpdate(u),
		boundTerms: func(n, nb int) (bound.LUUpdate, error) {
			m, ok := u.(*mma.Model)
			if !ok {
				return bound.LUUpdate{}, fmt.Errorf("lu: no error model for unit %s", u.Name())
			}
			ue := multiword.ModelError(m.Params())
			steps := (nb + ue.K - 1) / ue.K
			return bound.LUUpdate{Chain: ue.U * float64(ue.K), ChainSteps: steps, Conversion: conv}, nil
		},
	}
}

// Multiword is LU whose updates form L21·U12 with a multiword plan on an
// engine (double-fp16-fabsum on model:v100, say: fp32-accurate products
// from fp16 tensor cores) and subtract it from C in the plan's output
// format, where the factors are stored.
func Multiword(p multiword.Plan, e multiword.Engine) Form {
	out := p.Out
	return Form{
		Name:    p.Name,
		Storage: out,
		Update: fmt.Sprintf("multiword %s on %s: P = L21·U12, then c ← fl(c − p) in %s",
			p.Name, e.Name(), out.Name()),
		Kind:   MultiwordUpdate,
		update: multiwordUpdate(p, e),
		boundTerms: func(n, nb int) (bound.LUUpdate, error) {
			em, ok := e.(multiword.ErrorModel)
			if !ok {
				return bound.LUUpdate{}, fmt.Errorf("lu: engine %s has no error model", e.Name())
			}
			ue, err := em.UnitError(&p)
			if err != nil {
				return bound.LUUpdate{}, err
			}
			pb, err := p.Bound(nb, ue)
			if err != nil {
				return bound.LUUpdate{}, err
			}
			return bound.LUUpdate{Chain: bound.U(out, format.NearestEven), ChainSteps: 1, Own: pb.Total}, nil
		},
	}
}

// ParseForm returns the form a name says: tc16 and tc32 (the unit's block
// FMA with fp16 or fp32 output; input is its input format, fp16
// if empty; tc32-bf16 names the input as the GPU's forms do, in place of
// input), fp16, bf16, fp32 and fp64 (plain arithmetic), or a multiword
// variant (mwmm gemm --variants) whose products run on engine model:UNIT,
// or on the fast float64 reference engine when unit is "reference". unit
// is otherwise a preset or spec as mwmm mma takes it; empty means v100.
func ParseForm(name, unit, input string) (Form, error) {
	if unit == "" {
		unit = "v100"
	}
	if input == "" {
		input = "fp16"
	}
	key := strings.ToLower(strings.TrimSpace(name))
	if base, in, ok := strings.Cut(key, "-"); ok && (base == "tc16" || base == "tc32") && in != "" {
		key, input = base, in
	}
	switch key {
	case "tc16", "tc32":
		out := "fp16"
		if key == "tc32" {
			out = "fp32"
		}
		u, err := mma.Open(unit, input, out)
		if err != nil {
			return Form{}, fmt.Errorf("lu: %s: %w", key, err)
		}
		return BlockFMA(u), nil
	case "fp16", "bf16", "fp32", "fp64", "binary16", "bfloat16", "binary32", "binary64":
		f, err := format.Parse(key)
		if err != nil {
			return Form{}, err
		}
		return Scalar(f), nil
	case "":
		return Form{}, fmt.Errorf("lu: no factorization named; forms: %s", formNames)
	}
	plan, err := multiword.Lookup(name)
	if err != nil {
		return Form{}, fmt.Errorf("lu: unknown factorization %q: not one of %s, nor a multiword variant (%v)", name, formNames, err)
	}
	if strings.EqualFold(unit, "reference") {
		return Multiword(plan, multiword.Reference{}), nil
	}
	e, err := multiword.NewModel(unit)
	if err != nil {
		return Form{}, err
	}
	return Multiword(plan, e), nil
}

const formNames = "tc16, tc32, fp16, bf16, fp32, fp64"

// formShort names the common formats as users type them.
func formatShort(f format.Format) string {
	switch f {
	case format.Binary16:
		return "fp16"
	case format.Binary32:
		return "fp32"
	case format.Binary64:
		return "fp64"
	case format.BFloat16:
		return "bf16"
	}
	return f.Name()
}

// Bound returns the a-priori componentwise bound c of
// |P·fl(A) − L̂Û| ≤ c·|L̂||Û| for an n×n factorization with block size nb
// in this form (bound.LU), without underflow and overflow.
func (f Form) Bound(n, nb int) (bound.Result, error) {
	if f.boundTerms == nil {
		return bound.Result{}, fmt.Errorf("lu: form %s has no bound", f.Name)
	}
	up, err := f.boundTerms(n, nb)
	if err != nil {
		return bound.Result{}, err
	}
	return bound.LU{N: n, NB: nb, UStorage: bound.U(f.Storage, format.NearestEven), Update: up}.Bound()
}

// scalarUpdate is the update in plain arithmetic of f; fp64 and
// fp32 use the machine's own operations, other formats round every
// float64 result (exact for products of narrower formats, and innocuous
// double rounding for the sum: 53 ≥ 2p+2 for p ≤ 25).
func scalarUpdate(f format.Format) updater {
	return func(ctx context.Context, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) error {
		parallelRows(m, func(i int) {
			if ctx.Err() != nil {
				return // cancelled: the rows left stay as they are
			}
			crow := c[i*ldc : i*ldc+n]
			arow := a[i*lda : i*lda+k]
			switch f {
			case format.Binary64:
				for l, x := range arow {
					brow := b[l*ldb : l*ldb+n]
					for j := range crow {
						// The conversion keeps Go from fusing into an FMA.
						crow[j] -= float64(x * brow[j])
					}
				}
			case format.Binary32:
				for l, x := range arow {
					x32 := float32(x)
					brow := b[l*ldb : l*ldb+n]
					for j := range crow {
						crow[j] = float64(float32(crow[j]) - float32(x32*float32(brow[j])))
					}
				}
			default:
				for l, x := range arow {
					brow := b[l*ldb : l*ldb+n]
					for j := range crow {
						crow[j] = f.Round(crow[j]-f.Round(x*brow[j], format.NearestEven), format.NearestEven)
					}
				}
			}
		})
		return ctx.Err()
	}
}

// unitUpdate negates and rounds L21 and rounds U12 into the unit's input
// format, then lets mma.Gemm accumulate C + (−L21)·U12 through the unit.
func unitUpdate(u mma.Unit) updater {
	in := u.Input()
	return func(ctx context.Context, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) error {
		na := make([]float64, m*k)
		for i := 0; i < m; i++ {
			for l := 0; l < k; l++ {
				na[i*k+l] = -in.Round(a[i*lda+l], format.NearestEven)
			}
		}
		rb := make([]float64, k*n)
		for l := 0; l < k; l++ {
			for j := 0; j < n; j++ {
				rb[l*n+j] = in.Round(b[l*ldb+j], format.NearestEven)
			}
		}
		return inBands(ctx, m, func(lo, hi int) error {
			return mma.Gemm(u, hi-lo, n, k, na[lo*k:], k, rb, n, c[lo*ldc:], ldc)
		})
	}
}

// multiwordUpdate forms P = L21·U12 with the plan, then C ← fl(C − P) in
// the plan's output format, in bands of rows: each row of P depends on
// its row of L21 and on U12 alone (the scaling of U12's columns sees all
// of it in every band), so bands give the same P. Stochastic splits,
// whose draws follow the order of the whole matrix, run in one band.
func multiwordUpdate(p multiword.Plan, e multiword.Engine) updater {
	out := p.Out
	return func(ctx context.Context, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) error {
		da := make([]float64, m*k)
		for i := 0; i < m; i++ {
			copy(da[i*k:(i+1)*k], a[i*lda:i*lda+k])
		}
		db := make([]float64, k*n)
		for l := 0; l < k; l++ {
			copy(db[l*n:(l+1)*n], b[l*ldb:l*ldb+n])
		}
		prod := make([]float64, m*n)
		if p.SplitMode.IsStochastic() {
			if err := e.Multiply(p, m, n, k, da, db, prod); err != nil {
				return err
			}
		} else if err := inBands(ctx, m, func(lo, hi int) error {
			return e.Multiply(p, hi-lo, n, k, da[lo*k:hi*k], db, prod[lo*n:hi*n])
		}); err != nil {
			return err
		}
		for i := 0; i < m; i++ {
			crow := c[i*ldc : i*ldc+n]
			for j := range crow {
				crow[j] = out.Round(crow[j]-prod[i*n+j], format.NearestEven)
			}
		}
		return nil
	}
}

// parallelRows runs f(i) for i in [0, m) on all cores.
func parallelRows(m int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), m)
	if workers <= 1 || m < 16 {
		for i := 0; i < m; i++ {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int, m)
	for i := 0; i < m; i++ {
		next <- i
	}
	close(next)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// isFinite reports whether x is neither NaN nor ±Inf.
func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
