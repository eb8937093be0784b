package dist

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/gemm"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
	"github.com/mwmm/mwmm/gpu/nccl"
	"github.com/mwmm/mwmm/multiword"
)

// Scratch slots of the factorization (Rank.scratch); 0–3 are Multiply's
// panels, 8–11 the System's vectors.
const (
	slotWork = 4  // getrf's workspace
	slotInfo = 5  // getrf's info
	slotDiag = 6  // the factored diagonal block, w×w
	slotL    = 12 // the block column of L below the diagonal (and 14: two steps in flight)
	slotU    = 13 // the block row of U right of it (and 15)
)

// LookaheadSMs is how many multiprocessors the bulk of each trailing
// update leaves to the next step's panel work (diagonal block, triangular
// solves, broadcasts), which runs beside it.
const LookaheadSMs = 32

// Factor makes fp32 LU factors of the system's A without pivoting, on
// the team: A rounded to fp32, then for each block column the diagonal
// owner factors its block (cuSOLVER sgetrf), grid row and column receive
// it, L₂₁ and U₁₂ are solved for (cuBLAS strsm) and broadcast along grid
// rows and columns, and every rank subtracts L₂₁·U₁₂ from its trailing
// blocks with the plan's fused kernel. The factors overwrite W, an fp32
// matrix of A's layout.
//
// Each rank works on two streams: the panel work of step k+1 (on the
// transfer stream) starts as soon as step k's update has reached block
// column and row k+1, and runs beside the rest of step k's update, which
// leaves it LookaheadSMs multiprocessors. Two sets of panel buffers keep
// two steps in flight.
func Factor(ctx context.Context, s *System, plan multiword.Plan) (*Matrix, error) {
	if err := gemm.FusedSupports(&plan); err != nil {
		return nil, err
	}
	a := s.A
	w, err := NewMatrix(a.Team, a.Layout)
	if err != nil {
		return nil, err
	}
	err = a.Team.Each(func(r *Rank) error {
		next, err := r.startSingle(a, w)
		if err != nil {
			return err
		}
		for k := 0; k*a.RowBlock < a.Rows; k++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			st := &luStep{plan: plan, w: w, r: r, k: k, next: next}
			if err := errors.Join(st.panelWork(), st.update(st.updateRegion)); err != nil {
				return fmt.Errorf("block column %d: %w", k, err)
			}
		}
		return r.wait(a.Team.Timeout)
	})
	if err != nil {
		w.Free()
		return nil, err
	}
	return w, nil
}

// startSingle queues r's part of W = A rounded to fp32 on the compute
// stream and returns the event that says block column (and row) k+1 is
// up to date, recorded after it.
func (r *Rank) startSingle(a, w *Matrix) (next *gpu.Event, err error) {
	if err := r.launch("f64_to_f32", a.localElems(r), a.part(r), w.part(r), int64(a.localElems(r))); err != nil {
		return nil, err
	}
	if next, _, err = r.events(6); err != nil {
		return nil, err
	}
	return next, next.Record(r.compute)
}

// luStep is block column k of the factorization on rank r.
type luStep struct {
	plan           multiword.Plan
	w              *Matrix
	r              *Rank
	k              int
	next           *gpu.Event // recorded when block column and row k+1 are updated
	panelL, panelU *gpu.Buffer
}

// stepMark, when set (by a benchmark), is called at the points of each
// step that show its critical path, with the stream that reaches them
// (step −1: what comes before the steps).
var stepMark func(r *Rank, k int, what string, st *gpu.Stream)

func (s *luStep) mark(what string, st *gpu.Stream) { mark(s.r, s.k, what, st) }

func mark(r *Rank, k int, what string, st *gpu.Stream) {
	if stepMark != nil {
		stepMark(r, k, what, st)
	}
}

// events returns the step's pair: its panels arrived (on the transfer
// stream), and its update done with them (on the compute stream).
func (s *luStep) events() (arrived, used *gpu.Event, err error) { return s.r.events(4 + s.k%2) }

// geometry returns the step's width, the grid row and column of the
// diagonal block, and where the trailing blocks start in r's part.
func (s *luStep) geometry() (width, pk, qk, rowT, colT int) {
	l, nb := s.w.Layout, s.w.RowBlock
	width = min(nb, l.Rows-s.k*nb)
	pk, qk = s.k%l.Grid.P, s.k%l.Grid.Q
	end := min((s.k+1)*nb, l.Rows)
	return width, pk, qk, localCount(end, nb, s.r.P, l.Grid.P), localCount(end, nb, s.r.Q, l.Grid.Q)
}

// at returns r's part of W from local element (i, j) on.
func (s *luStep) at(i, j int) *gpu.Buffer {
	return s.w.part(s.r).View(s.w.elem() * (i + j*s.w.localRows(s.r)))
}

// panelWork queues on the transfer stream, once block column and row k
// are up to date: the diagonal block's factors, their broadcasts, L₂₁ and
// U₁₂, and their broadcasts.
func (s *luStep) panelWork() error {
	r, w := s.r, s.w
	st := r.transfers
	width, pk, qk, rowT, colT := s.geometry()
	rows, cols := w.localRows(r), w.localCols(r)
	rowK, colK := s.k/w.Grid.P*w.RowBlock, s.k/w.Grid.Q*w.ColBlock // the diagonal block's place, where r holds it
	mT, nT := rows-rowT, cols-colT
	arrived, err := s.awaitTurn()
	if err != nil {
		return err
	}
	diag, err := r.scratch(slotDiag, 4*width*width)
	if err != nil {
		return err
	}
	if r.P == pk && r.Q == qk {
		if err := s.factorDiag(rowK, colK, width, diag); err != nil {
			return err
		}
	}
	if r.P == pk {
		if err := r.panelRow.Broadcast(diag, width*width, nccl.Float32, qk, st); err != nil {
			return err
		}
	}
	if r.Q == qk {
		if err := r.panelCol.Broadcast(diag, width*width, nccl.Float32, pk, st); err != nil {
			return err
		}
	}
	s.panelL, err = s.panel(slotL+2*(s.k%2), r.Q == qk, mT, width, s.at(rowT, colK), rows, func() error {
		return s.trsm(cuda.SideRight, cuda.FillUpper, cuda.DiagNonUnit, mT, width, diag, s.at(rowT, colK))
	})
	if err != nil {
		return err
	}
	s.panelU, err = s.panel(slotU+2*(s.k%2), r.P == pk, width, nT, s.at(rowK, colT), rows, func() error {
		return s.trsm(cuda.SideLeft, cuda.FillLower, cuda.DiagUnit, width, nT, diag, s.at(rowK, colT))
	})
	if err != nil {
		return err
	}
	return errors.Join(r.panelRow.Broadcast(s.panelL, mT*width, nccl.Float32, qk, st),
		r.panelCol.Broadcast(s.panelU, width*nT, nccl.Float32, pk, st), arrived.Record(st))
}

// awaitTurn makes the transfer stream wait until block column and row k
// are up to date and the panels' buffers are free (step k−2's), and
// returns the event that says the step's panels have arrived.
func (s *luStep) awaitTurn() (arrived *gpu.Event, err error) {
	arrived, used, err := s.events()
	if err != nil {
		return nil, err
	}
	if err := s.r.transfers.Wait(s.next); err != nil {
		return nil, err
	}
	if s.k >= 2 {
		if err := s.r.transfers.Wait(used); err != nil {
			return nil, err
		}
	}
	return arrived, nil
}

// update queues on the compute stream, once the panels have arrived, the
// trailing update (by region, fp32's or fp16's): first block column k+1
// and block row k+1 (then the next step's panel work may start), then the
// rest, beside that work.
func (s *luStep) update(region func(i0, i1, j0, j1, width, sms int) error) error {
	r := s.r
	width, _, _, _, _ := s.geometry()
	arrived, used, err := s.events()
	if err != nil {
		return err
	}
	if err := r.compute.Wait(arrived); err != nil {
		return err
	}
	s.mark("start", r.compute)
	all := r.Engine.Device().Multiprocessors()
	for _, g := range s.regions() {
		sms := all
		if !g.first {
			if err := s.next.Record(r.compute); err != nil {
				return err
			}
			s.mark("next", r.compute)
			sms = max(all-LookaheadSMs, all/2)
		}
		if err := region(g.i0, g.i1, g.j0, g.j1, width, sms); err != nil {
			return err
		}
	}
	s.mark("used", r.compute)
	return used.Record(r.compute)
}

// A region is local rows [i0, i1) and columns [j0, j1) of one update;
// first marks those that hold block column or row k+1, updated before
// the next step's panel work may start.
type region struct {
	i0, i1, j0, j1 int
	first          bool
}

// regions cuts the step's trailing blocks on r into block column k+1's
// part, block row k+1's (right of it) and the rest: disjoint, covering.
func (s *luStep) regions() [3]region {
	r, w := s.r, s.w
	_, _, _, rowT, colT := s.geometry()
	rows, cols := w.localRows(r), w.localCols(r)
	nb := w.RowBlock
	rowN, colN := 0, 0 // block row and column k+1's extent here
	if k1 := s.k + 1; k1*nb < w.Rows {
		if r.P == k1%w.Grid.P {
			rowN = min(nb, w.Rows-k1*nb)
		}
		if r.Q == k1%w.Grid.Q {
			colN = min(nb, w.Rows-k1*nb)
		}
	}
	return [3]region{
		{rowT, rows, colT, colT + colN, true},
		{rowT, rowT + rowN, colT + colN, cols, true},
		{rowT + rowN, rows, colT + colN, cols, false},
	}
}

// updateRegion subtracts L₂₁·U₁₂'s part for local rows [i0, i1) and
// columns [j0, j1) of the trailing matrix (which starts at the panels'
// first row and column).
func (s *luStep) updateRegion(i0, i1, j0, j1, width, sms int) error {
	if i1 <= i0 || j1 <= j0 {
		return nil
	}
	_, _, _, rowT, colT := s.geometry()
	mT := s.w.localRows(s.r) - rowT
	return s.r.Engine.Fused(s.plan, gemm.FusedArgs{M: i1 - i0, N: j1 - j0, K: width,
		A: s.panelL.View(4 * (i0 - rowT)), LayoutA: gemm.ColMajor, LdA: mT,
		B: s.panelU.View(4 * (j0 - colT) * width), LayoutB: gemm.ColMajor, LdB: width,
		C: s.at(i0, j0), LayoutC: gemm.ColMajor, LdC: s.w.localRows(s.r), Stream: s.r.compute, Update: true, SMs: sms})
}

// panel returns scratch slot's rows×cols buffer; on the panel's owners
// it first solves for the panel in place (solveFor) and copies it there
// from src (leading dimension ld).
func (s *luStep) panel(slot int, owner bool, rows, cols int, src *gpu.Buffer, ld int, solveFor func() error) (*gpu.Buffer, error) {
	buf, err := s.r.scratch(slot, 4*max(1, rows*cols))
	if err != nil || !owner || rows == 0 || cols == 0 {
		return buf, err
	}
	if err := solveFor(); err != nil {
		return nil, err
	}
	return buf, s.r.Engine.Device().CopyRect(buf, rows, src, ld, rows, cols, 4, s.r.transfers)
}

// factorDiag factors the width×width diagonal block at local (i, j)
// without pivoting and copies it to diag.
func (s *luStep) factorDiag(i, j, width int, diag *gpu.Buffer) error {
	r := s.r
	ld := s.w.localRows(r)
	if err := r.getrf(r.transfers, s.at(i, j), ld, width, width, nil); err != nil {
		return err
	}
	return r.Engine.Device().CopyRect(diag, width, s.at(i, j), ld, width, width, 4, r.transfers)
}

// trsm solves in place of b (m×n, leading dimension W's) with the
// diagonal block's triangle: B·U₁₁⁻¹ (side right) or L₁₁⁻¹·B.
func (s *luStep) trsm(side, fill, unit, m, n int, diag, b *gpu.Buffer) error {
	lda := m // the triangle is m×m on the left, n×n on the right
	if side == cuda.SideRight {
		lda = n
	}
	return s.r.trsm(s.r.transfers, side, fill, unit, m, n, diag, lda, b, s.w.localRows(s.r))
}

// getrf factors the m×n column-major block at a (leading dimension ld)
// with cuSOLVER's sgetrf on st: with partial pivoting into pivots (int32),
// or without when pivots is nil.
func (r *Rank) getrf(st *gpu.Stream, a *gpu.Buffer, ld, m, n int, pivots *gpu.Buffer) error {
	d := r.Engine.Device()
	la, err := d.Linalg()
	if err != nil {
		return err
	}
	var lwork int
	err = d.Do(func() error {
		if err := la.SolverOn(d, st); err != nil {
			return err
		}
		lwork, err = cuda.GetrfBufferSize(la.Solver, false, m, n, a.Ptr(), ld)
		return err
	})
	if err != nil {
		return err
	}
	work, err := r.scratch(slotWork, 4*max(1, lwork))
	if err != nil {
		return err
	}
	info, err := r.scratch(slotInfo, 4)
	if err != nil {
		return err
	}
	var piv uintptr
	if pivots != nil {
		piv = pivots.Ptr()
	}
	return d.Do(func() error {
		return cuda.Getrf(la.Solver, false, m, n, a.Ptr(), ld, work.Ptr(), piv, info.Ptr())
	})
}

// trsm solves triangular systems on st with cuBLAS strsm: b (m×n,
// leading dimension ldb) ← b·T⁻¹ (side right) or T⁻¹·b, T in a.
func (r *Rank) trsm(st *gpu.Stream, side, fill, unit, m, n int, a *gpu.Buffer, lda int, b *gpu.Buffer, ldb int) error {
	return r.trsmOn(st, 0, side, fill, unit, m, n, a, lda, b, ldb)
}

// trsmOn is trsm on at most sms multiprocessors (0: all), so that a panel
// beside it finds room.
func (r *Rank) trsmOn(st *gpu.Stream, sms, side, fill, unit, m, n int, a *gpu.Buffer, lda int, b *gpu.Buffer, ldb int) error {
	d := r.Engine.Device()
	la, err := d.Linalg()
	if err != nil {
		return err
	}
	return d.Do(func() error {
		if err := la.BlasOn(d, st); err != nil {
			return err
		}
		if err := cuda.CublasSetSMCountTarget(la.Blas, sms); err != nil {
			return err
		}
		return errors.Join(cuda.Strsm(la.Blas, side, fill, cuda.OpN, unit, m, n, 1, a.Ptr(), lda, b.Ptr(), ldb),
			cuda.CublasSetSMCountTarget(la.Blas, 0))
	})
}

// Factors are LU factors of P·A gathered on the team's first GPU: the
// preconditioner of refinement (solve.Factorization). They are fp32
// values, held in fp64 where the GPU has room, so that the solves run in
// fp64: GMRES-IR applies the preconditioner in the residual's precision,
// and solves rounded to fp32 (κ·u₃₂ of noise each) took 4 steps and 11
// GMRES iterations where fp64 solves took 2 and 4 (random A, n = 32768).
type Factors struct {
	n    int
	r    *Rank
	lu   *gpu.Buffer // n×n column-major, unit L below the diagonal, U on and above
	wide bool        // lu and x hold fp64 values; else fp32
	x    *gpu.Buffer // a vector of lu's precision
	perm []int       // the rows' order, P (nil: none): row i of P·A is row perm[i] of A
}

// Gather copies W's factors (fp32, or fp16: FactorHalf's, which
// GatherHalf brings without unpacking) into one n×n matrix on rank 0, in
// fp64 where it fits (Factors), else in fp32.
func Gather(w *Matrix) (*Factors, error) {
	t := w.Team
	if !t.Whole() {
		return nil, errors.New("dist: Gather needs every rank of its team in this process")
	}
	root := t.Ranks[0]
	f := &Factors{n: w.Rows, r: root}
	if err := f.alloc(); err != nil {
		return nil, err
	}
	err := t.Each(func(r *Rank) error {
		if r != root {
			if err := r.World.Send(w.part(r), w.elem()*w.localElems(r), nccl.Bytes, 0, r.compute); err != nil {
				return err
			}
			return r.wait(t.Timeout)
		}
		return f.receive(w)
	})
	if err != nil {
		f.Free()
		return nil, err
	}
	return f, nil
}

// gatherWide lets Gather hold the factors in fp64 (a variable so that a
// test can take the fp32 path).
var gatherWide = true

// alloc makes lu and x in fp64, or in fp32 when the GPU lacks the room.
func (f *Factors) alloc() error {
	d, n := f.r.Engine.Device(), f.n
	sizes := []int{8, 4}
	if !gatherWide {
		sizes = sizes[1:]
	}
	for _, es := range sizes {
		lu, err := d.Alloc(es * max(1, n*n))
		if err != nil {
			if es == 4 {
				return fmt.Errorf("dist: the factors of order %d (%.1f GB) on one GPU: %w", n, 4*float64(n)*float64(n)/1e9, err)
			}
			continue
		}
		x, err := d.Alloc(es * max(1, n))
		if err != nil {
			return errors.Join(err, lu.Free())
		}
		f.lu, f.x, f.wide = lu, x, es == 8
		return nil
	}
	return nil
}

// receive unpacks each rank's part into place, on rank 0.
func (f *Factors) receive(w *Matrix) error {
	r := f.r
	for src := 0; src < w.Grid.Size(); src++ {
		p, q := w.Grid.Coords(src)
		rows, cols := w.LocalRows(p), w.LocalCols(q)
		part := w.part(r)
		if src != 0 {
			var err error
			if part, err = r.scratch(slotL, w.elem()*max(1, rows*cols)); err != nil {
				return err
			}
			if err := r.World.Recv(part, w.elem()*rows*cols, nccl.Bytes, src, r.compute); err != nil {
				return err
			}
		}
		unpack := "unpack_f32"
		if w.half {
			unpack = "unpack_f16"
		}
		if f.wide {
			unpack += "_f64"
		}
		err := r.launch(unpack, rows*cols, part, int32(rows), int32(cols), int32(w.RowBlock), int32(w.ColBlock),
			int32(p), int32(w.Grid.P), int32(q), int32(w.Grid.Q), f.lu, int64(f.n))
		if err != nil {
			return err
		}
	}
	return r.wait(w.Team.Timeout)
}

// Free frees the factors.
func (f *Factors) Free() { gpu.FreeAll(f.lu, f.x) }

// Solve sets x = Û⁻¹L̂⁻¹P·x: two triangular solves on rank 0, cuBLAS
// dtrsv on the fp64 factors, or strsv on the fp32 ones with x scaled
// into fp32's range.
func (f *Factors) Solve(x []float64) error {
	if len(x) != f.n {
		return fmt.Errorf("dist: Solve of order %d with %d values", f.n, len(x))
	}
	v := make([]float64, f.n)
	for i := range x {
		j := i
		if f.perm != nil {
			j = f.perm[i]
		}
		v[i] = x[j]
	}
	if f.wide {
		err := triangularSolves(f, v, cuda.Dtrsv)
		copy(x, v)
		return err
	}
	scale := 0.0
	for _, e := range v {
		scale = max(scale, math.Abs(e))
	}
	if scale == 0 || math.IsInf(scale, 0) || math.IsNaN(scale) {
		return nil
	}
	v32 := make([]float32, f.n)
	for i, e := range v {
		v32[i] = float32(e / scale)
	}
	if err := triangularSolves(f, v32, cuda.Strsv); err != nil {
		return err
	}
	for i := range x {
		x[i] = float64(v32[i]) * scale
	}
	return nil
}

// trsv is cuda.Strsv's and cuda.Dtrsv's signature.
type trsv func(h uintptr, uplo, trans, diag, n int, a uintptr, lda int, x uintptr) error

// triangularSolves sets v = Û⁻¹L̂⁻¹·v on rank 0 with solve (v of lu's
// precision).
func triangularSolves[T float32 | float64](f *Factors, v []T, solve trsv) error {
	d := f.r.Engine.Device()
	la, err := d.Linalg()
	if err != nil {
		return err
	}
	if err := d.Upload(f.x, v); err != nil {
		return err
	}
	err = d.Do(func() error {
		if err := la.BlasOn(d, nil); err != nil {
			return err
		}
		return errors.Join(solve(la.Blas, cuda.FillLower, cuda.OpN, cuda.DiagUnit, f.n, f.lu.Ptr(), f.n, f.x.Ptr()),
			solve(la.Blas, cuda.FillUpper, cuda.OpN, cuda.DiagNonUnit, f.n, f.lu.Ptr(), f.n, f.x.Ptr()))
	})
	if err != nil {
		return err
	}
	return d.Download(v, f.x)
}
