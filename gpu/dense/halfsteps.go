package dense

import (
	"errors"
	"fmt"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/fp16"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
)

// run factors w without pivoting, right-looking, with one step of
// look-ahead: the next panel's block column and row are updated first and
// that panel done on the side stream (leaving it sideSMs multiprocessors)
// while the rest of the update runs on main. With check, the growth is read
// after the first panel, before the rest is queued (a matrix that needs
// pivoting mostly shows it there, before the work is spent), and at the
// end; a *GrowthError says where it failed.
//
// Each step's calls go to the device's thread in one trip (Device.Do):
// a trip costs 15–20 µs, and a step makes dozens of calls.
func (h *halfLU) run(check bool) error {
	if err := h.d.Do(func() error { return h.panel(0, h.main) }); err != nil {
		return err
	}
	if check {
		if err := h.verdict(1); err != nil {
			return err
		}
	}
	for j := 0; j < h.n; j += h.nb {
		if err := h.d.Do(func() error { return h.step(j) }); err != nil {
			return fmt.Errorf("gpu: fp16 LU step at column %d: %w", j, err)
		}
	}
	if err := h.d.Sync(); err != nil || !check {
		return err
	}
	return h.verdict(h.steps())
}

// verdict reads the growth of the first steps (waiting for the device:
// the streams are independent of Download's) and judges it.
func (h *halfLU) verdict(steps int) error {
	words := make([]float32, 1+2*steps)
	if err := h.d.Sync(); err != nil {
		return err
	}
	if err := h.d.Download(words, h.growth); err != nil {
		return err
	}
	if bad := fp16.Verdict(words[0], words[1:], h.nb); bad != nil {
		return bad
	}
	return nil
}

// step takes the step at column j, its panel done (the diagonal block,
// L₂₁ and U₁₂): the update of the next panel's block column and block
// row first, then the next panel (aside, with the look-ahead) beside the
// update of the rest. The panel's stream does all of a panel's work, so
// that the update's stream runs products only.
func (h *halfLU) step(j int) error {
	s := stepOf(j, h.nb, h.n)
	if s.rest == 0 {
		return nil
	}
	if err := h.await(h.paneled); err != nil {
		return err
	}
	r, c0 := j+s.jb, j+s.jb
	if err := h.timed(phaseUpdate, func() error {
		return errors.Join(h.update(s, r, h.n, c0, s.next, 0), h.update(s, r, r+s.next, c0+s.next, s.rest-s.next, 0))
	}); err != nil {
		return err
	}
	rest := func(sms int) error {
		return h.timed(phaseUpdate, func() error { return h.update(s, r+s.next, h.n, c0+s.next, s.rest-s.next, sms) })
	}
	if h.side == h.main || s.rest == s.next {
		if err := rest(0); err != nil {
			return err
		}
		return h.panel(c0, h.main)
	}
	if err := h.ready.Record(h.main); err != nil {
		return err
	}
	if err := rest(h.d.Multiprocessors() - h.sideSMs); err != nil {
		return err
	}
	if err := h.side.Wait(h.ready); err != nil {
		return err
	}
	if err := h.panel(c0, h.side); err != nil {
		return err
	}
	return h.paneled.Record(h.side)
}

// await makes main wait for ev, recorded on the side stream (with the
// look-ahead; without, the order of main suffices).
func (h *halfLU) await(ev *gpu.Event) error {
	if h.side == h.main {
		return nil
	}
	return h.main.Wait(ev)
}

// stepOf is the step at column j of an order-n LU in blocks of nb.
func stepOf(j, nb, n int) step {
	jb := min(nb, n-j)
	rest := n - j - jb
	return step{j: j, jb: jb, rest: rest, next: min(nb, rest)}
}

// panel does the panel at column j on st: its diagonal block factored in
// fp32 (cuSOLVER's sgetrf without pivoting), the block's multipliers and
// U into the growth check, then U₁₁⁻¹ and L₂₁ = A₂₁·U₁₁⁻¹ on st and,
// beside them on side2 (with the look-ahead), L₁₁⁻¹ and U₁₂ = L₁₁⁻¹·A₁₂,
// all as products; st waits for side2's part.
func (h *halfLU) panel(j int, st *gpu.Stream) error {
	s := stepOf(j, h.nb, h.n)
	k, jb := j/h.nb, s.jb
	lMax, _ := h.growthAt(k)
	st2, blas2 := h.side2, h.blas2
	if st == h.main {
		st2, blas2 = st, h.la.Blas
	}
	if err := h.timed(phasePanel, func() error {
		grid := fp16.BlockGrid(jb, jb)
		return errors.Join(
			h.launch("to_f32_f16", grid, st, h.at(j, j), int64(h.n), h.diag, int64(jb), int32(jb), int32(jb)),
			h.getrf(st, jb),
			h.launch("amax_tri_f32", fp16.AmaxGrid(jb, jb), st, h.diag, int64(jb), int32(jb), lMax),
			h.launch("from_f32_f16", grid, st, h.diag, int64(jb), h.at(j, j), int64(h.n), int32(jb), int32(jb)),
			h.handOver(st, h.diagDone, st2))
	}); err != nil {
		return err
	}
	return h.timed(phaseTrsm, func() error {
		return errors.Join( // the last block's L₁₁⁻¹ is for the solves only
			h.inverse(st2, blas2, false, k, jb, h.invL), h.u12(st2, s, k),
			h.inverse(st, h.la.Blas, true, k, jb, h.invU), h.l21(st, j, jb, s.rest, lMax),
			h.handOver(st2, h.u12Done, st))
	})
}

// handOver makes to wait for from's work so far, through ev (nothing
// when they are one stream).
func (h *halfLU) handOver(from *gpu.Stream, ev *gpu.Event, to *gpu.Stream) error {
	if from == to {
		return nil
	}
	if err := ev.Record(from); err != nil {
		return err
	}
	return to.Wait(ev)
}

// l21 sets L₂₁ = A₂₁·U₁₁⁻¹ for the below rows under the diagonal block
// at column j, as a product from a copy, on st, and raises the step's
// max |L|.
func (h *halfLU) l21(st *gpu.Stream, j, jb, below int, lMax *gpu.Buffer) error {
	if below == 0 {
		return nil
	}
	if err := h.launch("copy_f16", fp16.BlockGrid(below, jb), st, h.at(j+jb, j), int64(h.n), h.tmpL, int64(below), int32(below), int32(jb)); err != nil {
		return err
	}
	l21 := h.at(j+jb, j)
	if err := h.matmul("l21", gpu.MatmulSpec{M: below, N: jb, K: jb, A: h.tmpL, LdA: below, B: h.invU, LdB: jb,
		D: l21, LdD: h.n, Alpha: 1, Stream: st}); err != nil {
		return err
	}
	return h.launch("amax_f16", fp16.AmaxGrid(below, jb), st, l21, int64(h.n), int32(below), int32(jb), lMax)
}

// getrf factors the jb×jb block in diag without pivoting, on st, by
// cuSOLVER's sgetrf. A zero pivot shows in U's diagonal (the factors'
// check), so info is not read.
func (h *halfLU) getrf(st *gpu.Stream, jb int) error {
	return h.d.Do(func() error {
		if err := h.la.SolverOn(h.d, st); err != nil {
			return err
		}
		return cuda.Getrf(h.la.Solver, false, jb, jb, h.diag.Ptr(), jb, h.work.Ptr(), 0, h.info)
	})
}

// inverse writes in fp16 to out the inverse of diag's upper triangle U₁₁
// (upper) or unit lower one L₁₁, in fp32 in inv32 or inv32L first, on st
// with cuBLAS handle blas: by the Inverter for full blocks, else strsm on
// the identity; step k's slot of inverses keeps it in fp32, transposed
// (as fp16.TriSolver reads it).
func (h *halfLU) inverse(st *gpu.Stream, blas uintptr, upper bool, k, jb int, out *gpu.Buffer) error {
	v, scratch := h.invertL, h.inv32L
	if upper {
		v, scratch = h.invertU, h.inv32
	}
	if err := fp16.Invert(h.d, v, st, blas, h.diag, scratch, jb, upper); err != nil {
		return err
	}
	if h.inverses != nil {
		slot := k
		if upper {
			slot += h.steps()
		}
		if err := h.launch("transpose_f32", fp16.TransposeGrid(jb, jb), st, scratch, int64(jb), h.inverses.View(4*slot*h.nb*h.nb), int64(h.nb), int32(jb), int32(jb)); err != nil {
			return err
		}
	}
	return h.launch("from_f32_f16", fp16.BlockGrid(jb, jb), st, scratch, int64(jb), out, int64(jb), int32(jb), int32(jb))
}

// u12 sets U₁₂ = L₁₁⁻¹·A₁₂ for the step's columns right of the
// diagonal block (if any), as a product from a copy, on st, and raises the step's
// max |U|.
func (h *halfLU) u12(st *gpu.Stream, s step, k int) error {
	c0, cols := s.j+s.jb, s.rest
	if cols == 0 {
		return nil
	}
	a12 := h.at(s.j, c0)
	if err := h.launch("copy_f16", fp16.BlockGrid(s.jb, cols), st, a12, int64(h.n), h.tmpU, int64(s.jb), int32(s.jb), int32(cols)); err != nil {
		return err
	}
	if err := h.matmul("u12", gpu.MatmulSpec{M: s.jb, N: cols, K: s.jb, A: h.invL, LdA: s.jb, B: h.tmpU, LdB: s.jb,
		D: a12, LdD: h.n, Alpha: 1, Stream: st}); err != nil {
		return err
	}
	_, uMax := h.growthAt(k)
	return h.launch("amax_f16", fp16.AmaxGrid(s.jb, cols), st, a12, int64(h.n), int32(s.jb), int32(cols), uMax)
}

// update runs A₂₂ −= L₂₁·U₁₂ on rows [i0, i1) and cols columns from c0,
// in place in fp16, on main (on sms multiprocessors when positive).
func (h *halfLU) update(s step, i0, i1, c0, cols, sms int) error {
	if i1 <= i0 || cols <= 0 {
		return nil
	}
	kind := fmt.Sprint("update", sms, i1 == h.n)
	return h.matmul(kind, gpu.MatmulSpec{M: i1 - i0, N: cols, K: s.jb, A: h.at(i0, s.j), LdA: h.n, B: h.at(s.j, c0), LdB: h.n,
		D: h.at(i0, c0), LdD: h.n, Alpha: -1, Beta: 1, Stream: h.main, SMs: sms})
}

// timed runs a phase, timed into the profile when there is one.
func (h *halfLU) timed(which phase, f func() error) error { return timed(h.d, h.ph, which, f) }
