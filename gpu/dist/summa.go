package dist

import (
	"errors"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/gemm"
	"github.com/mwmm/mwmm/gpu/nccl"
	"github.com/mwmm/mwmm/multiword"
)

// Multiply computes C = A·B with the plan on the fused FABsum kernels
// (gemm.FusedSupports says which plans), by SUMMA: step t broadcasts
// block column t of A along the grid rows and block row t of B along the
// grid columns, and every rank adds their product to its blocks of C: the
// first step writes C = A₀·B₀, the later ones negate their panel of B
// (exactly) and use the kernel's update mode, C ← C − Aₜ·(−Bₜ). Two panel
// buffers let step t+1's transfers run beside step t's product.
func Multiply(plan multiword.Plan, a, b, c *Matrix) error {
	if err := errShape(a, b, c); err != nil {
		return err
	}
	if err := gemm.FusedSupports(&plan); err != nil {
		return err
	}
	t := a.Team
	return t.Each(func(r *Rank) error {
		s, err := newSumma(plan, a, b, c, r)
		if err != nil {
			return err
		}
		if err := s.run(); err != nil {
			return err
		}
		return r.wait(t.Timeout)
	})
}

// summa is one rank's part of a product: its operands' parts and the
// double-buffered panels with the events that pass them between the
// transfer and compute streams.
type summa struct {
	plan          multiword.Plan
	a, b, c       *Matrix
	r             *Rank
	panelA        [2]*gpu.Buffer // block column of A: LocalRows(A) × ColBlock(A)
	panelB        [2]*gpu.Buffer // block row of B: RowBlock(B) × LocalCols(B)
	arrived, used [2]*gpu.Event
}

func newSumma(plan multiword.Plan, a, b, c *Matrix, r *Rank) (*summa, error) {
	s := &summa{plan: plan, a: a, b: b, c: c, r: r}
	nb := a.ColBlock
	for i := range 2 {
		var err error
		if s.arrived[i], s.used[i], err = r.events(i); err != nil {
			return nil, err
		}
		if s.panelA[i], err = r.scratch(2*i, 4*max(1, a.localRows(r)*nb)); err != nil {
			return nil, err
		}
		if s.panelB[i], err = r.scratch(2*i+1, 4*max(1, nb*b.localCols(r))); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// run queues every step and the final sign flip; it does not wait.
func (s *summa) run() error {
	r := s.r
	nb, k := s.a.ColBlock, s.a.Cols
	for step := 0; step*nb < k; step++ {
		slot := step % 2
		if step >= 2 {
			if err := r.transfers.Wait(s.used[slot]); err != nil {
				return err
			}
		}
		w := min(nb, k-step*nb)
		pa, pb, err := s.transfer(step, slot, w)
		if err != nil {
			return err
		}
		if err := s.multiply(slot, w, pa, pb, step > 0); err != nil {
			return err
		}
	}
	return nil
}

// transfer queues step's broadcasts of A's block column and B's block row
// on the transfer stream; it returns where the rank will find them.
func (s *summa) transfer(step, slot, w int) (pa, pb *gpu.Buffer, err error) {
	r, a, b := s.r, s.a, s.b
	d := r.Engine.Device()
	nb := a.ColBlock
	rowsA, colsB := a.localRows(r), b.localCols(r)
	ownerQ, ownerP := step%a.Grid.Q, step%b.Grid.P
	pa, pb = s.panelA[slot], s.panelB[slot]
	if r.Q == ownerQ { // A's block column is a slab of the local part
		pa = a.Parts[a.index(r)].View(4 * rowsA * (step / a.Grid.Q * nb))
	}
	if r.P == ownerP { // B's block row is strided: pack it
		rowsB := b.localRows(r)
		src := b.Parts[b.index(r)].View(4 * (step / b.Grid.P * nb))
		if err := d.CopyRect(pb, w, src, rowsB, w, colsB, 4, r.transfers); err != nil {
			return nil, nil, err
		}
	}
	err = errors.Join(
		r.Row.Broadcast(pa, rowsA*w, nccl.Float32, ownerQ, r.transfers),
		r.Col.Broadcast(pb, w*colsB, nccl.Float32, ownerP, r.transfers))
	if err == nil && step > 0 {
		err = r.negate(pb, w*colsB, r.transfers)
	}
	if err == nil {
		err = s.arrived[slot].Record(r.transfers)
	}
	return pa, pb, err
}

// multiply queues C = panelA·panelB, or with update C ← C − panelA·panelB,
// on the compute stream once the panels have arrived.
func (s *summa) multiply(slot, w int, pa, pb *gpu.Buffer, update bool) error {
	r, c := s.r, s.c
	if err := r.compute.Wait(s.arrived[slot]); err != nil {
		return err
	}
	m, n := c.localRows(r), c.localCols(r)
	if m > 0 && n > 0 {
		err := r.Engine.Fused(s.plan, gemm.FusedArgs{M: m, N: n, K: w,
			A: pa, LayoutA: gemm.ColMajor, LdA: s.a.localRows(r),
			B: pb, LayoutB: gemm.ColMajor, LdB: w,
			C: c.Parts[c.index(r)], LayoutC: gemm.ColMajor, LdC: m,
			Stream: r.compute, Update: update, SMs: r.Engine.Device().Multiprocessors() - s.a.Team.TransferSMs})
		if err != nil {
			return err
		}
	}
	return s.used[slot].Record(r.compute)
}

// negate flips the sign of n floats of buf, queued on st.
func (r *Rank) negate(buf *gpu.Buffer, n int, st *gpu.Stream) error {
	f, err := r.function("negate_f32")
	if err != nil || n == 0 {
		return err
	}
	return f.Launch([3]uint32{uint32(min(1024, (n+255)/256)), 1, 1}, [3]uint32{256, 1, 1}, 0, st, buf, int64(n))
}
