package dense

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
)

// Factors are the LU factors of a System on the device, P·A = L·U, held
// in fp64 (the exact values of lower-precision factors) with their
// pivots: Solve applies Û⁻¹L̂⁻¹P in fp64, as refinement wants.
type Factors struct {
	s        *System
	lu, ipiv *gpu.Buffer
	bf       *butterfly      // with PivotButterfly: Solve applies M before the factors and Nᵀ after
	pc       *preconditioner // Solve's device side, made on first use
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
type SingularError struct{ Column int }

func (e *SingularError) Error() string {
	return fmt.Sprintf("gpu: the matrix is singular to working precision: U(%d,%d) = 0", e.Column, e.Column)
}

// Factor factors A in the form. The time covers the whole factorization
// on the device.
func (s *System) Factor(f LUForm) (*Factors, error) {
	la, err := s.e.d.Linalg()
	if err != nil {
		return nil, err
	}
	n, d := s.n, s.e.d
	mod, err := d.Module(kernel("lu"))
	if err != nil {
		return nil, err
	}
	ipiv, err := d.Alloc(4 * n)
	if err != nil {
		return nil, err
	}
	lu, err := d.Alloc(8 * n * n)
	if err != nil {
		ipiv.Free()
		return nil, err
	}
	fa := &Factors{s: s, lu: lu, ipiv: ipiv, Form: f.Name}
	fail := func(err error) (*Factors, error) { fa.Free(); return nil, err }
	if err := d.Sync(); err != nil {
		return fail(err)
	}
	start := time.Now()
	// piv is where the pivots go: nowhere without pivoting (cuSOLVER's
	// getrf then does not pivot), and ipiv becomes the identity.
	piv := ipiv.Ptr()
	fa.Pivoting = PivotingDone{Kind: PivotPartial}
	switch f.Pivoting {
	case PivotNone:
		piv, fa.Pivoting.Kind = 0, PivotNone
	case PivotButterfly:
		fa.bf = newButterfly(n, butterflySeed)
		piv, fa.Pivoting.Kind = 0, PivotButterfly
	case PivotAuto:
		rows, cols, err := s.takeDominance(mod)
		if err != nil {
			return fail(err)
		}
		fa.Pivoting.Reason = ReasonNotDominant
		switch {
		case rows:
			piv, fa.Pivoting = 0, PivotingDone{Kind: PivotNone, Reason: ReasonRowDominant}
		case cols:
			piv, fa.Pivoting = 0, PivotingDone{Kind: PivotNone, Reason: ReasonColumnDominant}
		case f.Getrf64:
			fa.bf = newButterfly(n, butterflySeed)
			piv, fa.Pivoting.Kind = 0, PivotButterfly
		}
	}
	if piv == 0 {
		identity := make([]int32, n)
		for i := range identity {
			identity[i] = int32(i + 1)
		}
		if err := d.Upload(ipiv, identity); err != nil {
			return fail(err)
		}
	}
	if piv != 0 && f.Blocked() && f.recursivePanels(n, d.Multiprocessors()) {
		fa.Pivoting.RecursivePanels = true
	}
	// blockSize sets fa.NB: f.NB, or DefaultNB's.
	blockSize := func() error {
		if fa.NB = f.NB; fa.NB == 0 {
			fa.NB = DefaultNB(f, n, piv != 0)
		}
		if fa.NB > 4096 {
			return fmt.Errorf("gpu: block size %d: at most 4096 (the interchanges of a panel pass through shared memory)", fa.NB)
		}
		return nil
	}
	if f.Getrf64 || f.OzakiDigits > 0 {
		// fp64 factors, from A in place in lu.
		if fa.bf != nil {
			err = s.transform(mod, fa.bf, lu, nil)
		} else {
			err = d.Copy(lu, s.a)
		}
		if err != nil {
			return fail(err)
		}
		if f.Getrf64 {
			err = s.e.getrf(la, true, n, n, lu.Ptr(), n, piv)
		} else if err = blockSize(); err == nil {
			if f.Profile {
				fa.Phases = new(Phases)
			}
			err = s.e.blockedLU(la, mod, f, fa.NB, n, lu, ipiv, piv != 0, fa.Phases)
		}
		if err != nil {
			return fail(err)
		}
	} else {
		w, err := d.Alloc(4 * n * n)
		if err != nil {
			return fail(err)
		}
		defer w.Free()
		var ph *Phases
		if f.Profile {
			ph = new(Phases)
		}
		if err := timed(d, ph, func(p *Phases) *time.Duration { return &p.Convert }, func() error {
			if fa.bf != nil {
				return s.transform(mod, fa.bf, lu, w)
			}
			return launch(mod, "f64_to_f32", s.a, w, int64(n)*int64(n))
		}); err != nil {
			return fail(err)
		}
		if f.Getrf32 {
			err = timed(d, ph, func(p *Phases) *time.Duration { return &p.Panel }, func() error {
				return s.e.getrf(la, false, n, n, w.Ptr(), n, piv)
			})
		} else if err = blockSize(); err == nil {
			err = s.e.blockedLU(la, mod, f, fa.NB, n, w, ipiv, piv != 0, ph)
		}
		if err != nil {
			return fail(err)
		}
		if err := timed(d, ph, func(p *Phases) *time.Duration { return &p.Convert }, func() error {
			return launch(mod, "f32_to_f64", w, lu, int64(n)*int64(n))
		}); err != nil {
			return fail(err)
		}
		fa.Phases = ph
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
	switch {
	case f.OzakiDigits > 0:
		return 2048
	case f.Plan != nil && pivots && n >= 32768:
		return 1536
	}
	return 1024
}

// timed runs f and, when ph is not nil, waits for the GPU and adds the
// time to the phase that which picks.
func timed(d *gpu.Device, ph *Phases, which func(*Phases) *time.Duration, f func() error) error {
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
	*which(ph) += time.Since(start)
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
func (e *Solver) getrf(la *gpu.Linalg, double bool, m, n int, a uintptr, lda int, ipiv uintptr) error {
	work, err := e.getrfWork(la, double, m, n, a, lda)
	if err != nil {
		return err
	}
	defer work.Free()
	err = e.d.Do(func() error {
		return cuda.Getrf(la.Solver, double, m, n, a, lda, work.Ptr(), ipiv, work.Ptr()+uintptr(work.Bytes()-256))
	})
	if err != nil {
		return err
	}
	return e.d.Sync() // the work space is freed after getrf is done
}

// getrfWork allocates getrf's work space for an m×n matrix, and 256 bytes
// at its end for the info word.
func (e *Solver) getrfWork(la *gpu.Linalg, double bool, m, n int, a uintptr, lda int) (*gpu.Buffer, error) {
	var lwork int
	if err := e.d.Do(func() error {
		var err error
		lwork, err = cuda.GetrfBufferSize(la.Solver, double, m, n, a, lda)
		return err
	}); err != nil {
		return nil, err
	}
	size := 4
	if double {
		size = 8
	}
	return e.d.Alloc((size*max(lwork, 1)+255)&^255 + 256)
}

// inPrecision names the fp64 variant (name_f64) of an fp32 kernel for a
// working matrix of es-byte entries.
func inPrecision(name string, es int) string {
	if es == 8 {
		return name + "_f64"
	}
	return name
}

// trsm and trmm are cuBLAS's, with alpha 1, in fp64 (double) or fp32.
func trsm(h uintptr, double bool, side, uplo, trans, diag, m, n int, a uintptr, lda int, b uintptr, ldb int) error {
	if double {
		return cuda.Dtrsm(h, side, uplo, trans, diag, m, n, 1, a, lda, b, ldb)
	}
	return cuda.Strsm(h, side, uplo, trans, diag, m, n, 1, a, lda, b, ldb)
}

func trmm(h uintptr, double bool, side, uplo, trans, diag, m, n int, a uintptr, lda int, b uintptr, ldb int, c uintptr, ldc int) error {
	if double {
		return cuda.Dtrmm(h, side, uplo, trans, diag, m, n, 1, a, lda, b, ldb, c, ldc)
	}
	return cuda.Strmm(h, side, uplo, trans, diag, m, n, 1, a, lda, b, ldb, c, ldc)
}

// blockedLU factors the column-major w in place (fp32, or fp64 for the
// Ozaki forms), right-looking: each panel of nb columns by cuSOLVER's
// getrf (or the recursive panel), its interchanges applied to the
// columns on both sides, U's block row by a triangular solve, and the
// trailing update A₂₂ −= L₂₁·U₁₂ on the tensor cores (a trailing: f.Plan
// on the fused kernel, f.Words on cuBLASLt, or the Ozaki scheme's int8
// digits). ipiv gets the global pivots. Without pivots, a panel is
// getrf's LU of its diagonal block, without pivoting, and L₂₁ = A₂₁·U₁₁⁻¹
// (cuBLAS trmm with U₁₁'s inverse): a short sequential part, then a
// product-like one, where partial pivoting's pivot search runs down every
// row of the panel, column by column; ipiv is left as it is.
func (e *Solver) blockedLU(la *gpu.Linalg, mod *gpu.Module, f LUForm, nb, n int, w, ipiv *gpu.Buffer, pivots bool, ph *Phases) error {
	d := e.d
	// The Ozaki forms' working matrix is fp64, the others' fp32.
	double := f.OzakiDigits > 0
	es, suffix := 4, "_f32"
	if double {
		es, suffix = 8, "_f64"
	}
	if most := maxPanelRows(d.Multiprocessors(), double); f.Panels == PanelsRecursive && n > most {
		return fmt.Errorf("gpu: the recursive panel takes at most %d rows on this GPU, not %d: use cuSOLVER's (--panel sgetrf)", most, n)
	}
	// One work space for every panel: the first is the largest.
	work, err := e.getrfWork(la, double, n, min(nb, n), w.Ptr(), n)
	if err != nil {
		return err
	}
	defer work.Free()
	info := work.Ptr() + uintptr(work.Bytes()-256)
	permuteRows, err := mod.Function(inPrecision("permute_rows", es))
	if err != nil {
		return err
	}
	if 2*es*min(nb, n) > 48<<10 {
		if err := permuteRows.SetMaxDynamicShared(2 * es * min(nb, n)); err != nil {
			return err
		}
	}
	// The panel's pivots come here, and its composed interchanges go back
	// as (destination, source) row pairs: at most 2·nb of them.
	pairs, err := d.Alloc(4 * 4 * min(nb, n))
	if err != nil {
		return err
	}
	defer pairs.Free()
	// The triangular solves for U₁₂ (and, without pivoting, for L₂₁) are
	// products with the inverse of the diagonal block (cuBLAS strmm, out of
	// place from a copy): cuBLAS strsm ran at about 13 TFLOP/s on these
	// shapes. invL and tmpU serve this stream, invU and tmpL the panel's.
	copyBlock, err := mod.Function("copy" + suffix)
	if err != nil {
		return err
	}
	eye, err := mod.Function("eye" + suffix)
	if err != nil {
		return err
	}
	var invL, tmpU, invU, tmpL *gpu.Buffer
	defer func() { gpu.FreeAll(invL, tmpU, invU, tmpL) }()
	jbMax := min(nb, n)
	if invL, err = d.Alloc(es * jbMax * jbMax); err != nil {
		return err
	}
	if tmpU, err = d.Alloc(es * jbMax * max(n-jbMax, 1)); err != nil {
		return err
	}
	if !pivots {
		if invU, err = d.Alloc(es * jbMax * jbMax); err != nil {
			return err
		}
		if tmpL, err = d.Alloc(es * jbMax * max(n-jbMax, 1)); err != nil {
			return err
		}
	}
	pivHost := make([]int32, min(nb, n))
	moves := make([]int32, 0, 4*min(nb, n))
	shift, err := mod.Function("shift_pivots")
	if err != nil {
		return err
	}
	at := func(i, j int) int { return es * (i + j*n) }
	// Look-ahead: the columns of the next panel are updated first, and
	// that panel is factored on a second stream while the rest of the
	// update runs (the panels' time is latency, the update's is tensor
	// cores). Not when profiling, which times each phase alone.
	main, side, err := e.solverStreams()
	if err != nil {
		return err
	}
	sideSMs := f.LookaheadSMs
	if sideSMs == 0 {
		sideSMs = 32
	}
	if ph != nil || sideSMs < 0 || sideSMs >= d.Multiprocessors() {
		side, sideSMs = main, 0
	}
	ready, err := d.NewEvent()
	if err != nil {
		return err
	}
	defer ready.Close()
	defer d.Do(func() error {
		return errors.Join(cuda.CusolverSetStream(la.Solver, 0), cuda.CublasSetStream(la.Blas, 0))
	})
	var tr trailing = &fusedTrailing{e: e, f: f, w: w, n: n}
	switch {
	case double:
		if tr, err = e.newOzakiTrailing(f.OzakiDigits, w, n, jbMax); err != nil {
			return err
		}
	case f.Plan == nil:
		if tr, err = e.newLtTrailing(mod, f.Words, w, n, min(nb, n)); err != nil {
			return err
		}
	}
	defer tr.free()
	var pl *panelLU
	if pivots && f.recursivePanels(n, d.Multiprocessors()) {
		if pl, err = e.newPanelLU(la, mod, double); err != nil {
			return err
		}
		defer pl.free()
	}
	// invertDiag sets inv to the inverse of the jb×jb diagonal block at
	// (j, j): of its unit lower triangle L₁₁, or of its upper triangle U₁₁
	// when upper. It leaves cuBLAS on st.
	invertDiag := func(st *gpu.Stream, upper bool, j, jb int, inv *gpu.Buffer) error {
		if err := eye.Launch(gpu.StrideGrid(jb*jb), [3]uint32{256, 1, 1}, 0, st, inv, int64(jb), int32(jb)); err != nil {
			return err
		}
		fill, diag := cuda.FillLower, cuda.DiagUnit
		if upper {
			fill, diag = cuda.FillUpper, cuda.DiagNonUnit
		}
		return d.Do(func() error {
			if err := la.BlasOn(d, st); err != nil {
				return err
			}
			return trsm(la.Blas, double, cuda.SideLeft, fill, cuda.OpN, diag, jb, jb, w.Ptr()+uintptr(at(j, j)), n, inv.Ptr(), jb)
		})
	}
	// getrfOn runs cuSOLVER's sgetrf on the m×jb block at (j, j) on st;
	// piv 0: without pivoting.
	getrfOn := func(st *gpu.Stream, j, m, jb int, piv uintptr) error {
		return d.Do(func() error {
			if err := la.SolverOn(d, st); err != nil {
				return err
			}
			return cuda.Getrf(la.Solver, double, m, jb, w.Ptr()+uintptr(at(j, j)), n, work.Ptr(), piv, info)
		})
	}
	panel := func(j int, st *gpu.Stream) error {
		jb := min(nb, n-j)
		// A zero pivot shows in U's diagonal (Factors.check), so the info
		// word is not read: no wait per panel.
		err := timed(d, ph, func(p *Phases) *time.Duration { return &p.Panel }, func() error {
			if !pivots {
				// The diagonal block's LU, U₁₁⁻¹, and L₂₁ = A₂₁·U₁₁⁻¹.
				below := n - j - jb
				if below > 0 {
					if err := copyBlock.Launch(gpu.StrideGrid(below*jb), [3]uint32{256, 1, 1}, 0, st,
						w.View(at(j+jb, j)), int64(n), tmpL, int64(below), int32(below), int32(jb)); err != nil {
						return err
					}
				}
				if err := getrfOn(st, j, jb, jb, 0); err != nil || below == 0 {
					return err
				}
				if err := invertDiag(st, true, j, jb, invU); err != nil {
					return err
				}
				return d.Do(func() error {
					return trmm(la.Blas, double, cuda.SideRight, cuda.FillUpper, cuda.OpN, cuda.DiagNonUnit, below, jb,
						invU.Ptr(), jb, tmpL.Ptr(), below, w.Ptr()+uintptr(at(j+jb, j)), n)
				})
			}
			if pl != nil {
				blocks := d.Multiprocessors()
				if st != main {
					blocks = sideSMs
				}
				return pl.factor(st, w.Ptr()+uintptr(at(j, j)), n, n-j, jb, ipiv.Ptr()+uintptr(4*j), blocks)
			}
			return getrfOn(st, j, n-j, jb, ipiv.Ptr()+uintptr(4*j))
		})
		if err != nil {
			return fmt.Errorf("gpu: LU panel at column %d: %w", j, err)
		}
		return nil
	}
	// L's interchanges wait for the end (gatherL) when a column fits in
	// shared memory and the rows to gather (about n²/2nb) in 256 MB: each
	// step's moves are kept here.
	deferL := pivots && (double || 4*n <= d.MaxSharedPerBlock()-1024) && (n/nb+1)*n/2 <= deferredRows
	stepMoves := make([][]int32, (n+nb-1)/nb)
	factored := false // the panel at j, by the look-ahead
	np := 0           // the step's interchanges: pairs holds np destinations, then np sources
	// permute applies the step's interchanges to cols columns from c0. With
	// sms > 0 its grid is a few blocks for each of sms multiprocessors, so
	// that the panel factored beside it finds room.
	permute := func(c0, cols, sms int) error {
		if np == 0 || cols == 0 {
			return nil
		}
		blocks := min(cols, 65535)
		if sms > 0 {
			blocks = min(blocks, 4*sms)
		}
		return timed(d, ph, func(p *Phases) *time.Duration { return &p.Swap }, func() error {
			return permuteRows.Launch([3]uint32{uint32(blocks), 1, 1}, [3]uint32{256, 1, 1}, uint32(es*np), main,
				w.View(at(0, c0)), int64(n), int32(cols), pairs, pairs.View(4*np), int32(np))
		})
	}
	// invertL sets invL = L₁₁⁻¹ for the step's panel.
	invertL := func(j, jb int) error {
		return timed(d, ph, func(p *Phases) *time.Duration { return &p.Trsm }, func() error {
			return invertDiag(main, false, j, jb, invL)
		})
	}
	// u12 sets U₁₂ = L₁₁⁻¹A₁₂ for cols columns from c0 (invertL first), on
	// at most sms multiprocessors when sms > 0.
	u12 := func(j, jb, c0, cols, sms int) error {
		return timed(d, ph, func(p *Phases) *time.Duration { return &p.Trsm }, func() error {
			if err := copyBlock.Launch(gpu.StrideGrid(jb*cols), [3]uint32{256, 1, 1}, 0, main,
				w.View(at(j, c0)), int64(n), tmpU, int64(jb), int32(jb), int32(cols)); err != nil {
				return err
			}
			return d.Do(func() error {
				if err := la.BlasOn(d, main); err != nil {
					return err
				}
				if err := cuda.CublasSetSMCountTarget(la.Blas, sms); err != nil {
					return err
				}
				return errors.Join(trmm(la.Blas, double, cuda.SideLeft, cuda.FillLower, cuda.OpN, cuda.DiagUnit, jb, cols,
					invL.Ptr(), jb, tmpU.Ptr(), jb, w.Ptr()+uintptr(at(j, c0)), n),
					cuda.CublasSetSMCountTarget(la.Blas, 0))
			})
		})
	}
	upd := func(c0, cols, sms int) error {
		return timed(d, ph, func(p *Phases) *time.Duration { return &p.Update }, func() error {
			return tr.update(c0, cols, main, sms)
		})
	}
	mark := func(j int, what string, st *gpu.Stream) {
		if stepMark != nil {
			stepMark(j, what, st)
		}
	}
	for j := 0; j < n; j += nb {
		jb := min(nb, n-j)
		piv := ipiv.Ptr() + uintptr(4*j)
		if !factored {
			if err := panel(j, main); err != nil {
				return err
			}
		}
		if factored && !pivots {
			// The panel came from the side stream; with pivots, their
			// download below waits for it.
			if err := side.Sync(); err != nil {
				return err
			}
		}
		factored = false
		rest := n - j - jb
		next := min(nb, rest) // the next panel's columns
		// The panel's interchanges as one permutation of the rows they
		// touch (none: nothing to do, as for a diagonally dominant A). The
		// download waits for every stream.
		if pivots {
			if err := timed(d, ph, func(p *Phases) *time.Duration { return &p.Swap }, func() error {
				if err := d.Download(pivHost[:jb], ipiv.View(4*j)); err != nil {
					return err
				}
				moves = panelMoves(moves[:0], pivHost[:jb], j)
				if np = len(moves) / 2; np == 0 {
					return nil
				}
				if deferL {
					stepMoves[j/nb] = slices.Clone(moves)
				}
				return d.Upload(pairs, moves)
			}); err != nil {
				return err
			}
			if j > 0 { // the pivots become global row numbers
				if err := shift.Launch(gpu.StrideGrid(jb), [3]uint32{256, 1, 1}, 0, main, piv, int32(jb), int32(j)); err != nil {
					return err
				}
			}
		}
		// The next panel's columns go first, through the interchanges,
		// U₁₂'s solve and the update: with the look-ahead, that panel is
		// factored on the side stream while the rest of the columns go
		// through the same on this one.
		mark(j, "start", main)
		if !deferL {
			if err := permute(0, j, 0); err != nil {
				return err
			}
		}
		if err := permute(j+jb, next, 0); err != nil {
			return err
		}
		if rest == 0 {
			continue
		}
		if err := invertL(j, jb); err != nil {
			return err
		}
		if err := u12(j, jb, j+jb, next, 0); err != nil {
			return err
		}
		if err := timed(d, ph, func(p *Phases) *time.Duration { return &p.Update }, func() error {
			return tr.prepare(j, jb, main)
		}); err != nil {
			return fmt.Errorf("gpu: LU update at column %d: %w", j, err)
		}
		if err := upd(j+jb, next, 0); err != nil {
			return fmt.Errorf("gpu: LU update at column %d: %w", j, err)
		}
		if rest > next {
			if side != main {
				if err := ready.Record(main); err != nil {
					return err
				}
			}
			mark(j, "ready", main)
			// All of this is queued before the panel (cuSOLVER's getrf may
			// hold the host until it is done), on all but the panel's
			// multiprocessors.
			sms := 0
			if side != main {
				sms = d.Multiprocessors() - sideSMs
			}
			if err := permute(j+jb+next, rest-next, sms); err != nil {
				return err
			}
			if err := u12(j, jb, j+jb+next, rest-next, sms); err != nil {
				return err
			}
			if err := upd(j+jb+next, rest-next, sms); err != nil {
				return fmt.Errorf("gpu: LU update at column %d: %w", j, err)
			}
			mark(j, "updated", main)
			if side != main {
				if err := ready.Sync(); err != nil { // the next panel's columns are updated
					return err
				}
				if err := panel(j+jb, side); err != nil {
					return err
				}
				mark(j, "panel", side)
				factored = true
			}
		}
	}
	if deferL {
		if err := timed(d, ph, func(p *Phases) *time.Duration { return &p.Swap }, func() error {
			return e.gatherL(mod, w, es, n, nb, composeLater(stepMoves, nb, n), main)
		}); err != nil {
			return err
		}
	}
	return d.Sync()
}

// deferredRows bounds the row indices composeLater may produce (a
// variable so that a test can make the interchanges eager).
var deferredRows = 1 << 26

// stepMark, when set (by a benchmark), is called at the points of each
// look-ahead step that show its critical path: on the update's stream the
// step's start (with pivots every stream is idle there; without, the
// update's stream is done with the step before), the end of the next
// panel's columns ("ready") and of the rest ("updated"); on the panel's,
// the end of the next panel ("panel").
var stepMark func(j int, what string, st *gpu.Stream)

// composeLater composes what each column block of L owes: block k's rows
// from r0 = (k+1)·nb on were left by step k and moved since by the steps
// after it (steps[s]: step s's moves, panelMoves' destinations then
// sources, nil for none). Row r0+i of the final block k is row
// src[k][i] of the block as step k left it; src[k] is nil where no row
// moved.
func composeLater(steps [][]int32, nb, n int) [][]int32 {
	src := make([][]int32, len(steps))
	g := make([]int32, n) // row i of the final L comes from row g[i] after step k+1
	move := make([]int32, n)
	for i := range g {
		g[i], move[i] = int32(i), int32(i)
	}
	for k := len(steps) - 2; k >= 0; k-- {
		mv := steps[k+1]
		np := len(mv) / 2
		r0 := (k + 1) * nb
		if np > 0 {
			for t := 0; t < np; t++ {
				move[mv[t]] = mv[np+t]
			}
			for i := r0; i < n; i++ {
				g[i] = move[g[i]]
			}
			for t := 0; t < np; t++ {
				move[mv[t]] = mv[t]
			}
		}
		for i := r0; i < n; i++ {
			if g[i] != int32(i) {
				src[k] = slices.Clone(g[r0:])
				break
			}
		}
	}
	return src
}

// gatherL applies composeLater's rows to L's column blocks of the working
// matrix w (entries of es bytes): one block of gather_rows per column,
// the column's rows in shared memory (in global memory, in cache, for
// fp64), read and written whole (coalesced), instead of scattered rows at
// every step.
func (e *Solver) gatherL(mod *gpu.Module, w *gpu.Buffer, es, n, nb int, src [][]int32, st *gpu.Stream) error {
	var all []int32
	for _, s := range src {
		all = append(all, s...)
	}
	if len(all) == 0 {
		return nil
	}
	gather, err := mod.Function(inPrecision("gather_rows", es))
	if err != nil {
		return err
	}
	buf, err := e.d.Alloc(4 * len(all))
	if err != nil {
		return err
	}
	defer buf.Free()
	if err := e.d.Upload(buf, all); err != nil {
		return err
	}
	var held *gpu.Buffer
	if es == 8 {
		if held, err = e.d.Alloc(8 * nb * n); err != nil {
			return err
		}
		defer held.Free()
	} else if err := gather.SetMaxDynamicShared(4 * n); err != nil {
		return err
	}
	off := 0
	for k, s := range src {
		if s == nil {
			continue
		}
		r0 := (k + 1) * nb
		args := []any{w.View(es * k * nb * n), int64(n), int32(nb), int32(r0), int32(len(s)), buf.View(4 * off)}
		shared := uint32(4 * len(s))
		if held != nil {
			args, shared = append(args, held), 0
		}
		if err := gather.Launch([3]uint32{uint32(nb), 1, 1}, [3]uint32{1024, 1, 1}, shared, st, args...); err != nil {
			return err
		}
		off += len(s)
	}
	return e.d.Sync() // buf is freed on return
}

// solverStreams returns the blocked LU's two streams, made once per engine
// (the fused kernel keeps scratch memory per stream).
func (e *Solver) solverStreams() (main, side *gpu.Stream, err error) {
	e.streamsMu.Lock()
	defer e.streamsMu.Unlock()
	if e.luStreams[0] == nil {
		for i := range e.luStreams {
			if e.luStreams[i], err = e.d.NewStream(); err != nil {
				return nil, nil, err
			}
		}
	}
	return e.luStreams[0], e.luStreams[1], nil
}

// panelMoves composes a panel's interchanges (LAPACK's 1-based pivots,
// relative to row r0) into the rows they move: it appends the destination
// rows, then the source rows, of the entries that change place.
func panelMoves(moves, piv []int32, r0 int) []int32 {
	at := map[int32]int32{} // position → the row now there, where moved
	row := func(q int32) int32 {
		if r, ok := at[q]; ok {
			return r
		}
		return q
	}
	for k, p := range piv {
		a, b := int32(r0+k), int32(r0)+p-1
		if a != b {
			ra, rb := row(a), row(b)
			at[a], at[b] = rb, ra
		}
	}
	var dst, src []int32
	for q, r := range at {
		if q != r {
			dst, src = append(dst, q), append(src, r)
		}
	}
	return append(append(moves, dst...), src...)
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
	f, err := mod.Function("diag_check")
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
	switch {
	case c[0] < 0:
		return errors.New("gpu: the LU factors have a NaN or an Inf: the factorization overflowed")
	case c[0] > 0:
		return &SingularError{Column: int(c[0])}
	}
	return nil
}

// Free frees the factors.
func (fa *Factors) Free() error {
	err := errors.Join(fa.lu.Free(), fa.ipiv.Free())
	if fa.pc != nil {
		err = errors.Join(err, fa.pc.free())
	}
	return err
}
