package dist

import (
	"context"
	"errors"
	"fmt"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/gemm"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
	"github.com/mwmm/mwmm/gpu/nccl"
	"github.com/mwmm/mwmm/gpu/pivot"
	"github.com/mwmm/mwmm/multiword"
)

// Scratch slots of the pivoted factorization.
const (
	slotPivots  = 7  // a panel's pivots, int32, even steps
	slotPivots1 = 27 // odd steps' (two steps in flight)
	slotMoves   = 28 // its interchanges as moves (package pivot; and 29)
)

// FactorPivoted makes fp32 LU factors of P·A with partial pivoting on a
// 1×Q team, where every GPU holds whole columns: the owner of block column
// k factors it with its pivots (pivot.Panel, the recursive panel, or cuSOLVER
// sgetrf where the panel is taller than it takes), every GPU receives the
// panel and the pivots, applies the interchanges to its own columns,
// solves for its part of U₁₂ (strsm) and updates its trailing columns
// with the plan's fused kernel. perm is P: row i of P·A is row perm[i]
// of A.
//
// As in Factor, each rank works on two streams: the panel of step k+1
// (factored and broadcast on the transfer stream) starts once step k has
// brought block column k+1 up to date, and runs beside the rest of step
// k's update, which leaves it LookaheadSMs multiprocessors. Each rank
// reads a panel's pivots once they arrive, while its GPU still updates
// with the step before, and composes them into moves (pivot.Moves) that
// one kernel applies to every column at once: applied one by one, the
// interchanges were a chain of dependent loads down each column.
func FactorPivoted(ctx context.Context, s *System, plan multiword.Plan) (w *Matrix, perm []int, err error) {
	a := s.A
	if a.Grid.P != 1 {
		return nil, nil, fmt.Errorf("dist: partial pivoting on several GPUs needs a 1×Q grid (whole columns on each GPU), not %v", a.Grid)
	}
	if err := gemm.FusedSupports(&plan); err != nil {
		return nil, nil, err
	}
	if w, err = NewMatrix(a.Team, a.Layout); err != nil {
		return nil, nil, err
	}
	pivots := make([]int32, a.Rows) // the first rank's: every panel's pivots
	err = a.Team.Each(func(r *Rank) error {
		host := &pivotHost{pivots: pivots}
		if r.Rank != 0 {
			host.pivots = make([]int32, a.Rows)
		}
		defer host.free()
		if err := host.setUp(r, a.Rows, a.RowBlock); err != nil {
			return err
		}
		return r.independently(a.Team.Timeout, func() error {
			next, err := r.startSingle(a, w)
			if err != nil {
				return err
			}
			for k := 0; k*a.RowBlock < a.Rows; k++ {
				if err := ctx.Err(); err != nil {
					return err
				}
				st := &pivotStep{luStep: luStep{plan: plan, w: w, r: r, k: k, next: next}, host: host}
				if err := errors.Join(st.panelWork(), st.update()); err != nil {
					return fmt.Errorf("block column %d: %w", k, err)
				}
			}
			return nil
		})
	})
	if err == nil {
		perm, err = permutation(pivots, a.RowBlock)
	}
	if err != nil {
		w.Free()
		return nil, nil, err
	}
	return w, perm, nil
}

// pivotHost is a rank's host side of the pivoted factorization: the
// pivots read so far, the moves of the step, and the panel's
// factorization.
type pivotHost struct {
	pivots, moves []int32
	panel         *pivot.Panel // nil: cuSOLVER sgetrf
	permuter      *pivot.Permuter
}

// pivotRecursive lets FactorPivoted use the recursive panel (pivot.Panel,
// the one-GPU solver's too) where it takes the rows (a variable so that a
// benchmark can compare sgetrf).
var pivotRecursive = true

// setUp prepares the interchanges of panels nb wide, and takes the
// recursive panel where it takes n rows: beside the update it keeps its
// pace on the multiprocessors it is given, where cuSOLVER's sgetrf (which
// takes them all) took twice its time.
func (h *pivotHost) setUp(r *Rank, n, nb int) error {
	d := r.Engine.Device()
	var err error
	if h.permuter, err = pivot.NewPermuter(d, 4, 2*nb); err != nil {
		return err
	}
	if !pivotRecursive || n > pivot.MaxPanelRows(d.Multiprocessors(), false) {
		return nil
	}
	h.panel, err = pivot.NewPanel(d, false)
	return err
}

func (h *pivotHost) free() {
	if h.panel != nil {
		h.panel.Free()
	}
}

// pivotPanelSMs is the multiprocessors the rest of each update leaves to
// the next panel (a variable so that a benchmark can vary it).
var pivotPanelSMs = LookaheadSMs

// pivotStep is block column k of the pivoted factorization on rank r:
// its panel (luStep.panelL, whole: U₁₁ over L) and pivots.
type pivotStep struct {
	luStep
	host   *pivotHost
	pivots *gpu.Buffer // the panel's, as they arrive
	moves  *gpu.Buffer // their moves: destinations, then sources
	np     int         // the number of moves
}

// geometry returns the step's width, the owner's grid column, the
// panel's first row and height, and where the panel and the trailing
// columns start in r's part.
func (s *pivotStep) geometry() (width, qk, row0, m, colK, colT int) {
	width, _, qk, _, colT = s.luStep.geometry()
	row0 = s.k * s.w.RowBlock
	return width, qk, row0, s.w.Rows - row0, s.k / s.w.Grid.Q * s.w.ColBlock, colT
}

// panelWork queues on the transfer stream, once block column k is up to
// date: the owner's factorization of it and the broadcasts of the panel
// and its pivots.
func (s *pivotStep) panelWork() error {
	r := s.r
	st := r.transfers
	width, qk, row0, m, colK, _ := s.geometry()
	arrived, err := s.awaitTurn()
	if err != nil {
		return err
	}
	if s.panelL, err = r.scratch(slotL+2*(s.k%2), 4*m*width); err != nil {
		return err
	}
	if s.pivots, err = r.scratch(s.pivotSlot(), 4*width); err != nil {
		return err
	}
	s.mark("turn", st)
	if r.Q == qk {
		if err := s.factorPanel(st, row0, colK, m, width); err != nil {
			return err
		}
		s.mark("factored", st)
		if err := r.Engine.Device().CopyRect(s.panelL, m, s.at(row0, colK), s.w.localRows(r), m, width, 4, st); err != nil {
			return err
		}
	}
	return errors.Join(r.panelRow.Broadcast(s.panelL, m*width, nccl.Float32, qk, st),
		r.panelRow.Broadcast(s.pivots, width, nccl.Int32, qk, st), arrived.Record(st))
}

// factorPanel factors the owner's m×width panel at local (row0, colK) on
// st, its pivots to s.pivots.
func (s *pivotStep) factorPanel(st *gpu.Stream, row0, colK, m, width int) error {
	r := s.r
	rows := s.w.localRows(r)
	if s.host.panel == nil {
		return r.getrf(st, s.at(row0, colK), rows, m, width, s.pivots)
	}
	sms := pivotPanelSMs
	if sms == 0 {
		sms = r.Engine.Device().Multiprocessors()
	}
	return s.host.panel.Factor(st, s.at(row0, colK).Ptr(), rows, m, width, s.pivots.Ptr(), sms)
}

func (s *pivotStep) pivotSlot() int {
	if s.k%2 == 1 {
		return slotPivots1
	}
	return slotPivots
}

// update queues on the compute stream, once the panel has arrived: the
// interchanges, U₁₂ and the trailing update of block column k+1 (then the
// next panel may start), then of the rest of the columns, beside it.
func (s *pivotStep) update() error {
	r := s.r
	_, qk, _, _, colK, colT := s.geometry()
	arrived, used, err := s.events()
	if err != nil {
		return err
	}
	if err := errors.Join(r.compute.Wait(arrived), s.readPivots(arrived)); err != nil {
		return err
	}
	s.mark("start", r.compute)
	next := s.regions()[0].j1 // the end of block column k+1's columns here
	all := r.Engine.Device().Multiprocessors()
	rest := max(all-pivotPanelSMs, all/2) // the multiprocessors the rest of the step runs on
	if err := s.columns(colT, next, all); err != nil {
		return err
	}
	if err := s.next.Record(r.compute); err != nil {
		return err
	}
	s.mark("next", r.compute)
	if err := s.columns(next, s.w.localCols(r), rest); err != nil {
		return err
	}
	left := colT // L's columns left of the panel, which take its interchanges last
	if r.Q == qk {
		left = colK // the panel's own, which getrf swapped, are not among them
	}
	if err := s.swaps(0, left, rest); err != nil {
		return err
	}
	s.mark("used", r.compute)
	return used.Record(r.compute)
}

// readPivots reads the step's pivots once they have arrived, composes
// them into moves and sends those to the GPU, where the compute stream
// waits for them.
func (s *pivotStep) readPivots(arrived *gpu.Event) error {
	r, h := s.r, s.host
	d := r.Engine.Device()
	width, _, row0, _, _, _ := s.geometry()
	piv := h.pivots[row0 : row0+width]
	if err := errors.Join(arrived.Sync(), d.Download(piv, s.pivots)); err != nil {
		return err
	}
	h.moves = pivot.Moves(h.moves[:0], piv, row0)
	if s.np = len(h.moves) / 2; s.np == 0 {
		return nil
	}
	var err error
	if s.moves, err = r.scratch(slotMoves+s.k%2, 4*4*width); err != nil {
		return err
	}
	// The upload, on the default stream, may still be under way when it
	// returns: the compute stream, independent of it, waits for it.
	uploaded, _, err := r.events(7)
	if err != nil {
		return err
	}
	return errors.Join(d.Upload(s.moves, h.moves), uploaded.Record(nil), r.compute.Wait(uploaded))
}

// columns brings local columns [c0, c1) right of the panel through the
// step: the interchanges, U₁₂'s solve, and the update of the rows below,
// on at most sms multiprocessors.
func (s *pivotStep) columns(c0, c1, sms int) error {
	if c1 <= c0 {
		return nil
	}
	r, w := s.r, s.w
	width, _, row0, m, _, _ := s.geometry()
	rows := w.localRows(r)
	if err := s.swaps(c0, c1, sms); err != nil {
		return err
	}
	u12 := s.at(row0, c0)
	if sms == r.Engine.Device().Multiprocessors() {
		sms = 0 // every one
	}
	err := r.trsmOn(r.compute, sms, cuda.SideLeft, cuda.FillLower, cuda.DiagUnit, width, c1-c0, s.panelL, m, u12, rows)
	if err != nil || m == width {
		return err
	}
	return r.Engine.Fused(s.plan, gemm.FusedArgs{M: m - width, N: c1 - c0, K: width,
		A: s.panelL.View(4 * width), LayoutA: gemm.ColMajor, LdA: m, B: u12, LayoutB: gemm.ColMajor, LdB: rows,
		C: s.at(row0+width, c0), LayoutC: gemm.ColMajor, LdC: rows, Stream: r.compute, Update: true, SMs: sms})
}

// swaps applies the step's interchanges to local columns [c0, c1), on a
// few blocks for each of sms multiprocessors.
func (s *pivotStep) swaps(c0, c1, sms int) error {
	if c1 <= c0 || s.np == 0 {
		return nil
	}
	return s.host.permuter.Permute(s.r.compute, s.at(0, c0), s.w.localRows(s.r), c1-c0, s.moves, s.np, 4*sms)
}

// permutation composes P from every panel's pivots (1-based, relative to
// the panel's first row, panels of nb rows).
func permutation(pivots []int32, nb int) ([]int, error) {
	n := len(pivots)
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	for i, v := range pivots {
		j := i/nb*nb + int(v) - 1 // LAPACK's: 1-based from the panel's first row, never above row i
		if j < i || j >= n {
			return nil, fmt.Errorf("dist: pivot %d of row %d is outside the panel", v, i)
		}
		perm[i], perm[j] = perm[j], perm[i]
	}
	return perm, nil
}
