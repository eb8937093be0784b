package dist

import (
	"context"
	"fmt"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/gemm"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
	"github.com/mwmm/mwmm/gpu/nccl"
	"github.com/mwmm/mwmm/multiword"
)

const slotPivots = 7 // a panel's pivots, int32

// FactorPivoted makes fp32 LU factors of P·A with partial pivoting on a
// 1×Q team, where every GPU holds whole columns: the owner of block column
// k factors it with its pivots (cuSOLVER sgetrf), every GPU receives the
// panel and the pivots, applies the interchanges to its own columns,
// solves for its part of U₁₂ (strsm) and updates its trailing columns
// with the plan's fused kernel. One stream, no look-ahead. perm is P:
// row i of P·A is row perm[i] of A.
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
	n := a.Rows
	perm = make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	err = a.Team.Each(func(r *Rank) error {
		if err := r.launch("f64_to_f32", a.localElems(r), a.part(r), w.part(r), int64(a.localElems(r))); err != nil {
			return err
		}
		for k := 0; k*a.RowBlock < n; k++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			st := &pivotStep{luStep: luStep{plan: plan, w: w, r: r, k: k}}
			if err := st.run(perm); err != nil {
				return fmt.Errorf("block column %d: %w", k, err)
			}
		}
		return r.wait(a.Team.Timeout)
	})
	if err != nil {
		w.Free()
		return nil, nil, err
	}
	return w, perm, nil
}

// pivotStep is block column k of the pivoted factorization on rank r.
type pivotStep struct{ luStep }

// run queues the step; rank 0 reads the pivots back and applies them to
// perm.
func (s *pivotStep) run(perm []int) error {
	r, w := s.r, s.w
	width, _, qk, _, colT := s.geometry()
	rows, cols := w.localRows(r), w.localCols(r) // rows = n: whole columns
	row0, colK := s.k*w.RowBlock, s.k/w.Grid.Q*w.ColBlock
	m := rows - row0 // the panel's height
	panel, err := r.scratch(slotL, 4*m*width)
	if err != nil {
		return err
	}
	pivots, err := r.scratch(slotPivots, 4*width)
	if err != nil {
		return err
	}
	if r.Q == qk {
		if err := r.getrf(r.compute, s.at(row0, colK), rows, m, width, pivots); err != nil {
			return err
		}
		if err := r.Engine.Device().CopyRect(panel, m, s.at(row0, colK), rows, m, width, 4, r.compute); err != nil {
			return err
		}
	}
	if err := r.Row.Broadcast(panel, m*width, nccl.Float32, qk, r.compute); err != nil {
		return err
	}
	if err := r.Row.Broadcast(pivots, width, nccl.Int32, qk, r.compute); err != nil {
		return err
	}
	skip0, skip1 := -1, -1
	if r.Q == qk {
		skip0, skip1 = colK, colK+width
	}
	if err := r.launch("apply_swaps", cols, w.part(r), int64(rows), int32(cols), int32(skip0), int32(skip1), pivots, int32(width), int32(row0)); err != nil {
		return err
	}
	if err := s.trailing(panel, row0, colT, m, width); err != nil {
		return err
	}
	if r.Rank == 0 {
		return s.permute(perm, pivots, row0, width)
	}
	return nil
}

// trailing solves for r's columns of U₁₂ (rows row0…row0+width) and
// subtracts L₂₁·U₁₂ from the rows below.
func (s *pivotStep) trailing(panel *gpu.Buffer, row0, colT, m, width int) error {
	r, w := s.r, s.w
	rows, cols := w.localRows(r), w.localCols(r)
	nT := cols - colT
	if nT == 0 {
		return nil
	}
	u12 := s.at(row0, colT)
	err := r.trsm(r.compute, cuda.SideLeft, cuda.FillLower, cuda.DiagUnit, width, nT, panel, m, u12, rows)
	if err != nil || m == width {
		return err
	}
	return r.Engine.Fused(s.plan, gemm.FusedArgs{M: m - width, N: nT, K: width,
		A: panel.View(4 * width), LayoutA: gemm.ColMajor, LdA: m, B: u12, LayoutB: gemm.ColMajor, LdB: rows,
		C: s.at(row0+width, colT), LayoutC: gemm.ColMajor, LdC: rows, Stream: r.compute, Update: true})
}

// permute reads the step's pivots and applies them to perm.
func (s *pivotStep) permute(perm []int, pivots *gpu.Buffer, row0, width int) error {
	p := make([]int32, width)
	if err := s.r.compute.Sync(); err != nil {
		return err
	}
	if err := s.r.Engine.Device().Download(p, pivots); err != nil {
		return err
	}
	for i, v := range p {
		j := row0 + int(v) - 1
		if j < row0 || j >= len(perm) {
			return fmt.Errorf("dist: pivot %d of row %d is outside the panel", v, row0+i)
		}
		perm[row0+i], perm[j] = perm[j], perm[row0+i]
	}
	return nil
}
