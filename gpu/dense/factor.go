package dense

import (
	"errors"
	"fmt"
	"time"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/fp16"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
)

// Factors are the LU factors of a System on the device, P·A = L·U, held
// in fp64 (the exact values of lower-precision factors; the Half form's
// in fp16) with their pivots: Solve applies Û⁻¹L̂⁻¹P in the
// factors' precision, refinement's residuals being fp64.
type Factors struct {
	s        *System
	lu, ipiv *gpu.Buffer
	half     bool       // lu holds fp16 words (Half): a quarter of fp64's bytes for each solve to read
	bf       *butterfly // with PivotButterfly: Solve applies M before the factors and Nᵀ after
	// rows and cols (Half) are the powers of two R and C of the factored
	// R·A·C: Solve applies R before the factors and C after.
	rows, cols *gpu.Buffer
	// inverses (Half) holds each diagonal block's L⁻¹ (fp32, nb×nb a
	// block), then each one's U⁻¹: Solve's blocks are products with them.
	inverses *gpu.Buffer
	pc       *preconditioner // Solve's device side, made on first use
	update   Update          // the form's: Form is only a label
	Form     string
	NB       int
	// Pivoting is how the pivots were picked, and why.
	Pivoting PivotingDone
	Duration time.Duration // the factorization, from A in fp64 on the device to the factors
	// Phases splits the blocked LU's time (with LUForm.Profile): the
	// panels, the interchanges, the triangular solves for U₁₂, the
	// trailing updates, and the conversions between fp64 and fp32.
	Phases *Phases
}

// Phases is where a blocked LU's time goes.
type Phases struct {
	Panel, Swap, Trsm, Update, Convert time.Duration
}

// SingularError says that U has an exact zero pivot.
type SingularError struct {
	Column int // from 0, as lu.SingularError's: U(Column, Column) = 0
}

// Error names the column from 1, as lu's does.
func (e *SingularError) Error() string {
	return fmt.Sprintf("gpu: the matrix is singular to working precision: U(%d,%d) = 0", e.Column+1, e.Column+1)
}

// Factor factors A in the form. The time covers the whole factorization
// on the device.
func (s *System) Factor(f LUForm) (*Factors, error) {
	if f.Update == nil {
		return nil, fmt.Errorf("gpu: the form %q has no Update (ParseLUForm makes forms)", f.Name)
	}
	la, mod, fa, err := s.newFactors(f)
	if err != nil {
		return nil, err
	}
	d := s.e.d
	fail := func(err error) (*Factors, error) { fa.Free(); return nil, err }
	if err := d.Sync(); err != nil {
		return fail(err)
	}
	start := time.Now()
	var piv uintptr
	if _, half := f.Update.(Half); half {
		err = fa.factorHalf(la, f)
	} else if piv, err = fa.pickPivots(mod, f); err != nil {
		return fail(err)
	} else if f.Update.Working() == FP64 {
		err = fa.factorFP64(la, mod, f, piv)
	} else {
		// The fp32 copy is freed after the check, outside the time: its
		// free waits for the device.
		w, werr := d.Alloc(4 * s.n * s.n)
		if werr != nil {
			return fail(werr)
		}
		defer w.Free()
		err = fa.factorFP32(la, mod, f, piv, w)
	}
	if err != nil {
		return fail(err)
	}
	if err := d.Sync(); err != nil {
		return fail(err)
	}
	fa.Duration = time.Since(start)
	if err := fa.check(mod); err != nil {
		if fa.bf != nil {
			err = fmt.Errorf("%w (%w; with partial pivoting it may factor)", err, ErrButterflyFailed)
		} else if piv == 0 {
			err = fmt.Errorf("%w (without pivoting; with partial pivoting it may factor)", err)
		}
		return fail(err)
	}
	return fa, nil
}

// newFactors allocates the factors (fp64) and their pivots.
func (s *System) newFactors(f LUForm) (*gpu.Linalg, *gpu.Module, *Factors, error) {
	n, d := s.n, s.e.d
	la, err := d.Linalg()
	if err != nil {
		return nil, nil, nil, err
	}
	mod, err := d.Module(kernel("lu"))
	if err != nil {
		return nil, nil, nil, err
	}
	ipiv, err := d.Alloc(4 * n)
	if err != nil {
		return nil, nil, nil, err
	}
	if _, half := f.Update.(Half); half {
		// factorHalf's fp16 working matrix becomes the factors.
		return la, mod, &Factors{s: s, ipiv: ipiv, half: true, update: f.Update, Form: f.Name}, nil
	}
	lu, err := d.Alloc(8 * n * n)
	if err != nil {
		ipiv.Free()
		return nil, nil, nil, err
	}
	return la, mod, &Factors{s: s, lu: lu, ipiv: ipiv, update: f.Update, Form: f.Name}, nil
}

// pickPivots sets fa.Pivoting (and fa.bf for PivotButterfly) and returns
// where the pivots go: nowhere without pivoting (cuSOLVER's getrf then
// does not pivot), and ipiv becomes the identity.
func (fa *Factors) pickPivots(mod *gpu.Module, f LUForm) (uintptr, error) {
	s, d, n := fa.s, fa.s.e.d, fa.s.n
	fa.Pivoting = PivotingDone{Kind: PivotPartial}
	switch f.Pivoting {
	case PivotNone:
		fa.Pivoting.Kind = PivotNone
	case PivotButterfly:
		fa.Pivoting.Kind = PivotButterfly
	case PivotAuto:
		rows, cols, err := s.takeDominance(mod)
		if err != nil {
			return 0, err
		}
		fa.Pivoting = autoPivoting(rows, cols, f.Update)
	}
	if fa.Pivoting.Kind == PivotButterfly {
		fa.bf = newButterfly(n, butterflySeed)
	}
	if !fa.Pivoting.Pivots() {
		return 0, d.Upload(fa.ipiv, identityPivots(n))
	}
	fa.Pivoting.RecursivePanels = f.Blocked() && f.recursivePanels(n, d.Multiprocessors())
	return fa.ipiv.Ptr(), nil
}

// autoPivoting is PivotAuto's choice for a matrix diagonally dominant by
// rows or by columns, or neither, factored by u.
func autoPivoting(rows, cols bool, u Update) PivotingDone {
	switch {
	case rows:
		return PivotingDone{Kind: PivotNone, Reason: ReasonRowDominant}
	case cols:
		return PivotingDone{Kind: PivotNone, Reason: ReasonColumnDominant}
	}
	if g, ok := u.(Getrf); ok && g.Precision == FP64 {
		return PivotingDone{Kind: PivotButterfly, Reason: ReasonNotDominant}
	}
	return PivotingDone{Kind: PivotPartial, Reason: ReasonNotDominant}
}

// setNB sets fa.NB: the form's, or DefaultNB's.
func (fa *Factors) setNB(f LUForm, pivots bool) error {
	if fa.NB = f.NB; fa.NB == 0 {
		fa.NB = DefaultNB(f, fa.s.n, pivots)
	}
	if fa.NB > 4096 {
		return fmt.Errorf("gpu: block size %d: at most 4096 (the interchanges of a panel pass through shared memory)", fa.NB)
	}
	return nil
}

// factorFP64 factors in fp64, from A in place in fa.lu: cuSOLVER's
// dgetrf, or the Ozaki forms' blocked LU.
func (fa *Factors) factorFP64(la *gpu.Linalg, mod *gpu.Module, f LUForm, piv uintptr) error {
	s, n := fa.s, fa.s.n
	var err error
	if fa.bf != nil {
		err = s.transform(mod, fa.bf, fa.lu, nil)
	} else {
		err = s.e.d.Copy(fa.lu, s.a)
	}
	if err != nil {
		return err
	}
	if !f.Update.Blocked() {
		return s.e.getrf(la, FP64, n, n, fa.lu.Ptr(), n, piv)
	}
	if err := fa.setNB(f, piv != 0); err != nil {
		return err
	}
	if f.Profile {
		fa.Phases = new(Phases)
	}
	return s.e.blockedLU(la, mod, f, fa.NB, n, fa.lu, fa.ipiv, piv != 0, fa.Phases)
}

// factorFP32 factors in the fp32 copy w of A (or of the butterflies'
// transform) and brings the factors back to fa.lu in fp64.
func (fa *Factors) factorFP32(la *gpu.Linalg, mod *gpu.Module, f LUForm, piv uintptr, w *gpu.Buffer) error {
	s, d, n := fa.s, fa.s.e.d, fa.s.n
	var ph *Phases
	if f.Profile {
		ph = new(Phases)
	}
	if err := timed(d, ph, phaseConvert, func() error {
		if fa.bf != nil {
			return s.transform(mod, fa.bf, fa.lu, w)
		}
		return launch(mod, "f64_to_f32", s.a, w, int64(n)*int64(n))
	}); err != nil {
		return err
	}
	var err error
	if !f.Update.Blocked() {
		err = timed(d, ph, phasePanel, func() error {
			return s.e.getrf(la, FP32, n, n, w.Ptr(), n, piv)
		})
	} else if err = fa.setNB(f, piv != 0); err == nil {
		err = s.e.blockedLU(la, mod, f, fa.NB, n, w, fa.ipiv, piv != 0, ph)
	}
	if err != nil {
		return err
	}
	if err := timed(d, ph, phaseConvert, func() error {
		return launch(mod, "f32_to_f64", w, fa.lu, int64(n)*int64(n))
	}); err != nil {
		return err
	}
	fa.Phases = ph
	return nil
}

// DefaultNB is the blocked LU's block size for the form at order n, with
// or without pivoting: 1024; 1536 for the fused kernel's forms with
// pivoting from n = 32768, where the wider panels' updates run faster and
// the factorization took 0.384–0.388 s against 0.410–0.448 s on an H100
// (double-fp16-fabsum, uniform in (−0.5, 0.5)); 2048 for the Ozaki forms,
// whose updates pass through memory once per level whatever their depth:
// with the default look-ahead, factorizations of 0.044 s and 0.138 s
// against 0.049 s and 0.153 s with 1024 at n = 8192 and 16384
// (docs/perf/solve-h100.md).
func DefaultNB(f LUForm, n int, pivots bool) int {
	switch f.Update.(type) {
	case Ozaki:
		return 2048
	case Fused:
		if pivots && n >= 32768 {
			return 1536
		}
	}
	return 1024
}

// A phase is where Phases puts a blocked LU's time.
type phase int

const (
	phasePanel phase = iota
	phaseSwap
	phaseTrsm
	phaseUpdate
	phaseConvert
)

// of is the duration of the phase.
func (p *Phases) of(which phase) *time.Duration {
	return [...]*time.Duration{&p.Panel, &p.Swap, &p.Trsm, &p.Update, &p.Convert}[which]
}

// timed runs f and, when ph is not nil, waits for the GPU and adds the
// time to the phase.
func timed(d *gpu.Device, ph *Phases, which phase, f func() error) error {
	start := time.Now()
	if err := f(); err != nil {
		return err
	}
	if ph == nil {
		return nil
	}
	if err := d.Sync(); err != nil {
		return err
	}
	*ph.of(which) += time.Since(start)
	return nil
}

// launch runs a grid-stride kernel of lu.cu on (x, y, count).
func launch(mod *gpu.Module, name string, x, y *gpu.Buffer, count int64) error {
	f, err := mod.Function(name)
	if err != nil {
		return err
	}
	return f.Launch([3]uint32{4096, 1, 1}, [3]uint32{256, 1, 1}, 0, nil, x, y, count)
}

// getrf factors the m×n matrix at a (ld lda) with cuSOLVER; the pivots
// go to ipiv. A zero pivot is reported by check, not here.
func (e *Solver) getrf(la *gpu.Linalg, prec Precision, m, n int, a uintptr, lda int, ipiv uintptr) error {
	work, err := e.getrfWork(la, prec, m, n, a, lda)
	if err != nil {
		return err
	}
	defer work.Free()
	err = e.d.Do(func() error {
		return cuda.Getrf(la.Solver, prec.double(), m, n, a, lda, work.Ptr(), ipiv, work.Ptr()+uintptr(work.Bytes()-256))
	})
	if err != nil {
		return err
	}
	return e.d.Sync() // the work space is freed after getrf is done
}

// getrfWork allocates getrf's work space for an m×n matrix, and 256 bytes
// at its end for the info word.
func (e *Solver) getrfWork(la *gpu.Linalg, prec Precision, m, n int, a uintptr, lda int) (*gpu.Buffer, error) {
	var lwork int
	if err := e.d.Do(func() error {
		var err error
		lwork, err = cuda.GetrfBufferSize(la.Solver, prec.double(), m, n, a, lda)
		return err
	}); err != nil {
		return nil, err
	}
	return e.d.Alloc((prec.Size()*max(lwork, 1)+255)&^255 + 256)
}

// trsm and trmm are cuBLAS's, with alpha 1, in prec.
func trsm(h uintptr, prec Precision, side, uplo, trans, diag, m, n int, a uintptr, lda int, b uintptr, ldb int) error {
	if prec == FP64 {
		return cuda.Dtrsm(h, side, uplo, trans, diag, m, n, 1, a, lda, b, ldb)
	}
	return cuda.Strsm(h, side, uplo, trans, diag, m, n, 1, a, lda, b, ldb)
}

func trmm(h uintptr, prec Precision, side, uplo, trans, diag, m, n int, a uintptr, lda int, b uintptr, ldb int, c uintptr, ldc int) error {
	if prec == FP64 {
		return cuda.Dtrmm(h, side, uplo, trans, diag, m, n, 1, a, lda, b, ldb, c, ldc)
	}
	return cuda.Strmm(h, side, uplo, trans, diag, m, n, 1, a, lda, b, ldb, c, ldc)
}

// check reports a zero pivot or a non-finite factor.
func (fa *Factors) check(mod *gpu.Module) error {
	d, n := fa.s.e.d, fa.s.n
	count, err := d.Alloc(4)
	if err != nil {
		return err
	}
	defer count.Free()
	if err := d.Memset32(count, 0); err != nil {
		return err
	}
	name := "diag_check"
	if fa.half {
		name, mod = "diag_check_f16", nil
		if mod, err = d.Module(fp16.Kernels()); err != nil {
			return err
		}
	}
	f, err := mod.Function(name)
	if err != nil {
		return err
	}
	if err := f.Launch([3]uint32{4096, 1, 1}, [3]uint32{256, 1, 1}, 0, nil, fa.lu, int64(n), int32(n), count); err != nil {
		return err
	}
	var c [1]int32
	if err := d.Download(c[:], count); err != nil {
		return err
	}
	return diagCheckError(c[0])
}

// diagCheckError is the error of diag_check's answer: −1 for a NaN or
// an Inf, else the first zero pivot's column, from 1 (0: none).
func diagCheckError(c int32) error {
	switch {
	case c < 0:
		return errors.New("gpu: the LU factors have a NaN or an Inf: the factorization overflowed")
	case c > 0:
		return &SingularError{Column: int(c) - 1}
	}
	return nil
}

// Free frees the factors.
func (fa *Factors) Free() error {
	err := errors.Join(fa.lu.Free(), fa.ipiv.Free(), gpu.FreeAll(fa.rows, fa.cols, fa.inverses))
	if fa.pc != nil {
		err = errors.Join(err, fa.pc.free())
	}
	return err
}
