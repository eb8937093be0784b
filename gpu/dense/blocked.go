package dense

import (
	"errors"
	"fmt"
	"slices"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
	"github.com/mwmm/mwmm/gpu/pivot"
)

// blockedLU factors the column-major w in place (fp32, or fp64 for the
// Ozaki forms), right-looking: each panel of nb columns by cuSOLVER's
// getrf (or the recursive panel), its interchanges applied to the
// columns on both sides, U's block row by a triangular solve, and the
// trailing update A₂₂ −= L₂₁·U₁₂ on the tensor cores (a trailing: the
// fused kernel, cuBLASLt, or the Ozaki scheme's int8 digits). ipiv gets
// the global pivots. Without pivots, a panel is getrf's LU of its
// diagonal block, without pivoting, and L₂₁ = A₂₁·U₁₁⁻¹ (cuBLAS trmm
// with U₁₁'s inverse): a short sequential part, then a product-like
// one, where partial pivoting's pivot search runs down every row of the
// panel, column by column; ipiv is left as it is.
func (e *Solver) blockedLU(la *gpu.Linalg, mod *gpu.Module, f LUForm, nb, n int, w, ipiv *gpu.Buffer, pivots bool, ph *Phases) error {
	b := &blockedLU{e: e, d: e.d, la: la, mod: mod, prec: f.Update.Working(), n: n, nb: nb, w: w, ipiv: ipiv, pivots: pivots, ph: ph}
	defer b.free()
	if err := b.setUp(f); err != nil {
		return err
	}
	return b.schedule()
}

// A blockedLU is one factorization's state: the working matrix, its
// scratch and kernels, the two streams, and the step's interchanges.
type blockedLU struct {
	e      *Solver
	d      *gpu.Device
	la     *gpu.Linalg
	mod    *gpu.Module
	prec   Precision
	n, nb  int
	w      *gpu.Buffer
	ipiv   *gpu.Buffer
	pivots bool
	ph     *Phases // nil: not profiling

	// work is getrf's work space, one for every panel (the first is the
	// largest), with its info word at info.
	work *gpu.Buffer
	info uintptr

	permuter              *pivot.Permuter
	copyBlock, eye, shift *gpu.Function

	// The panel's pivots come to pivHost, and its composed interchanges
	// go back in pairs: np destination rows, then np sources (at most
	// 2·nb of them).
	pairs          *gpu.Buffer
	np             int
	pivHost, moves []int32

	// The triangular solves for U₁₂ (and, without pivoting, for L₂₁) are
	// products with the inverse of the diagonal block (cuBLAS trmm, out
	// of place from a copy): cuBLAS strsm ran at about 13 TFLOP/s on these
	// shapes. invL and tmpU serve main, invU and tmpL the panel's stream.
	invL, tmpU, invU, tmpL *gpu.Buffer

	// Look-ahead: the next panel is factored on side, on sideSMs
	// multiprocessors, once main records ready. side == main: none.
	main, side *gpu.Stream
	sideSMs    int
	ready      *gpu.Event

	tr trailing
	pl *pivot.Panel // our recursive panel; nil: cuSOLVER's getrf

	// deferL: L's interchanges wait for the end (gatherL); stepMoves
	// keeps each step's moves for it.
	deferL    bool
	stepMoves [][]int32
}

// A step is the blocked LU's step at column j: its panel's jb columns
// and the rest to their right, of which the next panel takes next.
type step struct{ j, jb, rest, next int }

func (b *blockedLU) stepAt(j int) step {
	jb := min(b.nb, b.n-j)
	rest := b.n - j - jb
	return step{j: j, jb: jb, rest: rest, next: min(b.nb, rest)}
}

// schedule runs the steps. Each takes its panel's interchanges, then
// brings the next panel's columns through them, U₁₂'s solve and the
// update first; with the look-ahead, that panel is factored on the side
// stream while the rest of the columns go through the same on main.
func (b *blockedLU) schedule() error {
	aside := false // the step's panel was factored on the side stream
	for j := 0; j < b.n; j += b.nb {
		s := b.stepAt(j)
		if !aside {
			if err := b.panel(j, b.main); err != nil {
				return err
			}
		} else if !b.pivots {
			// With pivots, their download below waits for the side stream.
			if err := b.side.Sync(); err != nil {
				return err
			}
		}
		aside = false
		if err := b.interchanges(s); err != nil {
			return err
		}
		b.mark(j, "start", b.main)
		if !b.deferL {
			if err := b.permute(0, j, 0); err != nil {
				return err
			}
		}
		if s.rest == 0 {
			continue
		}
		if err := b.updateNext(s); err != nil {
			return err
		}
		if s.rest == s.next {
			continue
		}
		if err := b.updateRest(s); err != nil {
			return err
		}
		if b.lookahead() {
			// Panel j+jb beside the rest of step j's update.
			if err := b.ready.Sync(); err != nil {
				return err
			}
			if err := b.panel(j+s.jb, b.side); err != nil {
				return err
			}
			b.mark(j, "panel", b.side)
			aside = true
		}
	}
	return b.finish()
}

func (b *blockedLU) lookahead() bool { return b.side != b.main }

// run runs a phase, timed into the profile when there is one.
func (b *blockedLU) run(which phase, f func() error) error { return timed(b.d, b.ph, which, f) }

func (b *blockedLU) mark(j int, what string, st *gpu.Stream) {
	if stepMark != nil {
		stepMark(j, what, st)
	}
}

// at is the byte offset of entry (i, j) of w.
func (b *blockedLU) at(i, j int) int { return b.prec.Size() * (i + j*b.n) }

func (b *blockedLU) ptr(i, j int) uintptr { return b.w.Ptr() + uintptr(b.at(i, j)) }

// setUp makes the scratch, kernels, streams, trailing and panel, in that
// order.
func (b *blockedLU) setUp(f LUForm) error {
	d, n := b.d, b.n
	if most := pivot.MaxPanelRows(d.Multiprocessors(), b.prec == FP64); f.Panels == PanelsRecursive && n > most {
		return fmt.Errorf("gpu: the recursive panel takes at most %d rows on this GPU, not %d: use cuSOLVER's (--panel sgetrf)", most, n)
	}
	if err := b.setUpScratch(); err != nil {
		return err
	}
	if err := b.setUpStreams(f); err != nil {
		return err
	}
	tr, err := b.newTrailing(f)
	if err != nil {
		return err
	}
	b.tr = tr
	if b.pivots && f.recursivePanels(n, d.Multiprocessors()) {
		pl, err := pivot.NewPanel(b.d, b.prec == FP64)
		if err != nil {
			return err
		}
		b.pl = pl
	}
	// L's interchanges wait for the end when a column fits in shared
	// memory and the rows to gather (about n²/2nb) in 256 MB.
	b.deferL = b.pivots && (b.prec == FP64 || 4*n <= d.MaxSharedPerBlock()-1024) && (n/b.nb+1)*n/2 <= deferredRows
	b.stepMoves = make([][]int32, (n+b.nb-1)/b.nb)
	return nil
}

// setUpScratch allocates getrf's work space, the interchanges' pairs and
// the triangular solves' blocks, and finds their kernels.
func (b *blockedLU) setUpScratch() error {
	d, n, es, jbMax := b.d, b.n, b.prec.Size(), min(b.nb, b.n)
	var err error
	if b.work, err = b.e.getrfWork(b.la, b.prec, n, jbMax, b.w.Ptr(), n); err != nil {
		return err
	}
	b.info = b.work.Ptr() + uintptr(b.work.Bytes()-256)
	if b.permuter, err = pivot.NewPermuter(d, es, 2*jbMax); err != nil {
		return err
	}
	if b.pairs, err = d.Alloc(4 * 4 * jbMax); err != nil {
		return err
	}
	if b.copyBlock, err = b.mod.Function(b.prec.suffixed("copy")); err != nil {
		return err
	}
	if b.eye, err = b.mod.Function(b.prec.suffixed("eye")); err != nil {
		return err
	}
	if b.invL, err = d.Alloc(es * jbMax * jbMax); err != nil {
		return err
	}
	if b.tmpU, err = d.Alloc(es * jbMax * max(n-jbMax, 1)); err != nil {
		return err
	}
	if !b.pivots {
		if b.invU, err = d.Alloc(es * jbMax * jbMax); err != nil {
			return err
		}
		if b.tmpL, err = d.Alloc(es * jbMax * max(n-jbMax, 1)); err != nil {
			return err
		}
	}
	b.pivHost = make([]int32, jbMax)
	b.moves = make([]int32, 0, 4*jbMax)
	b.shift, err = b.mod.Function("shift_pivots")
	return err
}

// setUpStreams takes the engine's two streams and the look-ahead's share
// of the multiprocessors. Not when profiling, which times each phase
// alone.
func (b *blockedLU) setUpStreams(f LUForm) error {
	d := b.d
	var err error
	if b.main, b.side, err = b.e.solverStreams(); err != nil {
		return err
	}
	if b.sideSMs = f.LookaheadSMs; b.sideSMs == 0 {
		b.sideSMs = 32
	}
	if b.ph != nil || b.sideSMs < 0 || b.sideSMs >= d.Multiprocessors() {
		b.side, b.sideSMs = b.main, 0
	}
	b.ready, err = d.NewEvent()
	return err
}

// newTrailing makes the update's trailing: the Ozaki scheme's, cuBLASLt's
// for TC32, or the fused kernel's.
func (b *blockedLU) newTrailing(f LUForm) (trailing, error) {
	jbMax := min(b.nb, b.n)
	switch u := f.Update.(type) {
	case Ozaki:
		t, err := b.e.newOzakiTrailing(u.Digits, b.w, b.n, jbMax)
		if err != nil {
			return nil, err
		}
		return t, nil
	case TC32:
		t, err := b.e.newLtTrailing(b.mod, u.Words, b.w, b.n, jbMax)
		if err != nil {
			return nil, err
		}
		return t, nil
	case Fused:
		return &fusedTrailing{e: b.e, plan: u.Plan, w: b.w, n: b.n}, nil
	}
	return nil, fmt.Errorf("gpu: no blocked LU updates with %v", f.Update)
}

// free frees what setUp made, the last first, and leaves cuBLAS and
// cuSOLVER on the default stream.
func (b *blockedLU) free() {
	if b.pl != nil {
		b.pl.Free()
	}
	if b.tr != nil {
		b.tr.free()
	}
	if b.ready != nil {
		b.d.Do(func() error {
			return errors.Join(cuda.CusolverSetStream(b.la.Solver, 0), cuda.CublasSetStream(b.la.Blas, 0))
		})
		b.ready.Close()
	}
	gpu.FreeAll(b.invL, b.tmpU, b.invU, b.tmpL)
	b.pairs.Free()
	b.work.Free()
}

// panel factors the panel at column j on st. A zero pivot shows in U's
// diagonal (Factors.check), so the info word is not read: no wait per
// panel.
func (b *blockedLU) panel(j int, st *gpu.Stream) error {
	jb := min(b.nb, b.n-j)
	piv := b.ipiv.Ptr() + uintptr(4*j)
	err := b.run(phasePanel, func() error {
		switch {
		case !b.pivots:
			return b.panelNoPivots(j, jb, st)
		case b.pl != nil:
			blocks := b.d.Multiprocessors()
			if st != b.main {
				blocks = b.sideSMs
			}
			return b.pl.Factor(st, b.ptr(j, j), b.n, b.n-j, jb, piv, blocks)
		}
		return b.getrfOn(st, j, b.n-j, jb, piv)
	})
	if err != nil {
		return fmt.Errorf("gpu: LU panel at column %d: %w", j, err)
	}
	return nil
}

// panelNoPivots is the diagonal block's LU, U₁₁⁻¹, and L₂₁ = A₂₁·U₁₁⁻¹.
func (b *blockedLU) panelNoPivots(j, jb int, st *gpu.Stream) error {
	below := b.n - j - jb
	if below > 0 {
		if err := b.copyBlock.Launch(gpu.StrideGrid(below*jb), [3]uint32{256, 1, 1}, 0, st,
			b.w.View(b.at(j+jb, j)), int64(b.n), b.tmpL, int64(below), int32(below), int32(jb)); err != nil {
			return err
		}
	}
	if err := b.getrfOn(st, j, jb, jb, 0); err != nil || below == 0 {
		return err
	}
	if err := b.invertDiag(st, true, j, jb, b.invU); err != nil {
		return err
	}
	return b.d.Do(func() error {
		return trmm(b.la.Blas, b.prec, cuda.SideRight, cuda.FillUpper, cuda.OpN, cuda.DiagNonUnit, below, jb,
			b.invU.Ptr(), jb, b.tmpL.Ptr(), below, b.ptr(j+jb, j), b.n)
	})
}

// getrfOn runs cuSOLVER's getrf on the m×jb block at (j, j) on st; piv
// 0: without pivoting.
func (b *blockedLU) getrfOn(st *gpu.Stream, j, m, jb int, piv uintptr) error {
	return b.d.Do(func() error {
		if err := b.la.SolverOn(b.d, st); err != nil {
			return err
		}
		return cuda.Getrf(b.la.Solver, b.prec.double(), m, jb, b.ptr(j, j), b.n, b.work.Ptr(), piv, b.info)
	})
}

// invertDiag sets inv to the inverse of the jb×jb diagonal block at
// (j, j): of its unit lower triangle L₁₁, or of its upper triangle U₁₁
// when upper. It leaves cuBLAS on st.
func (b *blockedLU) invertDiag(st *gpu.Stream, upper bool, j, jb int, inv *gpu.Buffer) error {
	if err := b.eye.Launch(gpu.StrideGrid(jb*jb), [3]uint32{256, 1, 1}, 0, st, inv, int64(jb), int32(jb)); err != nil {
		return err
	}
	fill, diag := cuda.FillLower, cuda.DiagUnit
	if upper {
		fill, diag = cuda.FillUpper, cuda.DiagNonUnit
	}
	return b.d.Do(func() error {
		if err := b.la.BlasOn(b.d, st); err != nil {
			return err
		}
		return trsm(b.la.Blas, b.prec, cuda.SideLeft, fill, cuda.OpN, diag, jb, jb, b.ptr(j, j), b.n, inv.Ptr(), jb)
	})
}

// interchanges takes the panel's pivots as one permutation of the rows
// they touch, into pairs (none: nothing to do, as for a diagonally
// dominant A), and makes them global row numbers. The download waits for
// every stream.
func (b *blockedLU) interchanges(s step) error {
	if !b.pivots {
		return nil
	}
	if err := b.run(phaseSwap, func() error {
		if err := b.d.Download(b.pivHost[:s.jb], b.ipiv.View(4*s.j)); err != nil {
			return err
		}
		b.moves = pivot.Moves(b.moves[:0], b.pivHost[:s.jb], s.j)
		if b.np = len(b.moves) / 2; b.np == 0 {
			return nil
		}
		if b.deferL {
			b.stepMoves[s.j/b.nb] = slices.Clone(b.moves)
		}
		return b.d.Upload(b.pairs, b.moves)
	}); err != nil {
		return err
	}
	if s.j == 0 {
		return nil
	}
	return b.shift.Launch(gpu.StrideGrid(s.jb), [3]uint32{256, 1, 1}, 0, b.main, b.ipiv.Ptr()+uintptr(4*s.j), int32(s.jb), int32(s.j))
}

// permute applies the step's interchanges to cols columns from c0. With
// sms > 0 its grid is a few blocks for each of sms multiprocessors, so
// that the panel factored beside it finds room.
func (b *blockedLU) permute(c0, cols, sms int) error {
	if b.np == 0 || cols == 0 {
		return nil
	}
	blocks := cols
	if sms > 0 {
		blocks = min(blocks, 4*sms)
	}
	return b.run(phaseSwap, func() error {
		return b.permuter.Permute(b.main, b.w.View(b.at(0, c0)), b.n, cols, b.pairs, b.np, blocks)
	})
}

// updateNext brings the next panel's columns through the step: its
// interchanges, U₁₂'s solve (after L₁₁⁻¹) and, once L₂₁ is prepared, the
// update.
func (b *blockedLU) updateNext(s step) error {
	c0 := s.j + s.jb
	if err := b.permute(c0, s.next, 0); err != nil {
		return err
	}
	if err := b.run(phaseTrsm, func() error { return b.invertDiag(b.main, false, s.j, s.jb, b.invL) }); err != nil {
		return err
	}
	if err := b.u12(s, c0, s.next, 0); err != nil {
		return err
	}
	if err := b.run(phaseUpdate, func() error { return b.tr.prepare(s.j, s.jb, b.main) }); err != nil {
		return fmt.Errorf("gpu: LU update at column %d: %w", s.j, err)
	}
	return b.update(s, c0, s.next, 0)
}

// updateRest brings the rest of the columns through the same, after
// recording ready for the look-ahead's panel. All of it is queued before
// that panel (cuSOLVER's getrf may hold the host until it is done), on
// all but the panel's multiprocessors.
func (b *blockedLU) updateRest(s step) error {
	sms := 0
	if b.lookahead() {
		if err := b.ready.Record(b.main); err != nil {
			return err
		}
		sms = b.d.Multiprocessors() - b.sideSMs
	}
	b.mark(s.j, "ready", b.main)
	c0, cols := s.j+s.jb+s.next, s.rest-s.next
	if err := b.permute(c0, cols, sms); err != nil {
		return err
	}
	if err := b.u12(s, c0, cols, sms); err != nil {
		return err
	}
	if err := b.update(s, c0, cols, sms); err != nil {
		return err
	}
	b.mark(s.j, "updated", b.main)
	return nil
}

// u12 sets U₁₂ = L₁₁⁻¹A₁₂ for cols columns from c0 (invL first), on at
// most sms multiprocessors when sms > 0.
func (b *blockedLU) u12(s step, c0, cols, sms int) error {
	return b.run(phaseTrsm, func() error {
		if err := b.copyBlock.Launch(gpu.StrideGrid(s.jb*cols), [3]uint32{256, 1, 1}, 0, b.main,
			b.w.View(b.at(s.j, c0)), int64(b.n), b.tmpU, int64(s.jb), int32(s.jb), int32(cols)); err != nil {
			return err
		}
		return b.d.Do(func() error {
			if err := b.la.BlasOn(b.d, b.main); err != nil {
				return err
			}
			if err := cuda.CublasSetSMCountTarget(b.la.Blas, sms); err != nil {
				return err
			}
			return errors.Join(trmm(b.la.Blas, b.prec, cuda.SideLeft, cuda.FillLower, cuda.OpN, cuda.DiagUnit, s.jb, cols,
				b.invL.Ptr(), s.jb, b.tmpU.Ptr(), s.jb, b.ptr(s.j, c0), b.n),
				cuda.CublasSetSMCountTarget(b.la.Blas, 0))
		})
	})
}

// update runs the step's trailing update on cols columns from c0.
func (b *blockedLU) update(s step, c0, cols, sms int) error {
	if err := b.run(phaseUpdate, func() error { return b.tr.update(c0, cols, b.main, sms) }); err != nil {
		return fmt.Errorf("gpu: LU update at column %d: %w", s.j, err)
	}
	return nil
}

// finish applies L's deferred interchanges and waits for the device.
func (b *blockedLU) finish() error {
	if b.deferL {
		if err := b.run(phaseSwap, func() error {
			return b.gatherL(composeLater(b.stepMoves, b.nb, b.n))
		}); err != nil {
			return err
		}
	}
	return b.d.Sync()
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

// gatherL applies composeLater's rows to L's column blocks of w: one
// block of gather_rows per column, the column's rows in shared memory (in
// global memory, in cache, for fp64), read and written whole (coalesced),
// instead of scattered rows at every step.
func (b *blockedLU) gatherL(src [][]int32) error {
	var all []int32
	for _, s := range src {
		all = append(all, s...)
	}
	if len(all) == 0 {
		return nil
	}
	d, n, nb, es := b.d, b.n, b.nb, b.prec.Size()
	gather, err := b.mod.Function(b.prec.variant("gather_rows"))
	if err != nil {
		return err
	}
	buf, err := d.Alloc(4 * len(all))
	if err != nil {
		return err
	}
	defer buf.Free()
	if err := d.Upload(buf, all); err != nil {
		return err
	}
	var held *gpu.Buffer
	if b.prec == FP64 {
		if held, err = d.Alloc(8 * nb * n); err != nil {
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
		args := []any{b.w.View(es * k * nb * n), int64(n), int32(nb), int32(r0), int32(len(s)), buf.View(4 * off)}
		shared := uint32(4 * len(s))
		if held != nil {
			args, shared = append(args, held), 0
		}
		if err := gather.Launch([3]uint32{uint32(nb), 1, 1}, [3]uint32{1024, 1, 1}, shared, b.main, args...); err != nil {
			return err
		}
		off += len(s)
	}
	return d.Sync() // buf is freed on return
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
