package dist

import (
	"errors"
	"fmt"
	"math"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
	"github.com/mwmm/mwmm/gpu/nccl"
)

// HalfFactors are FactorHalf's factors brought to the team's first GPU as
// the ranks hold them, in fp16 parts, with the diagonal blocks' inverses
// in fp32: refinement's preconditioner (solve.Factorization), its
// triangular solves a block column at a time. Nothing is unpacked, so the
// gather moves half the bytes of fp32 factors and GPU 0 needs no n×n
// matrix of them.
type HalfFactors struct {
	lu    *HalfLU
	r     *Rank
	parts []*gpu.Buffer // by rank: W's parts, rank 0's its own
	inv   []*gpu.Buffer // by rank: HalfLU.Inverses, rank 0's its own
	x, t  *gpu.Buffer   // the vector in fp32; one block's solution
	gemv  *gpu.Function // dist.cu's gemv_sub_f16
}

// GatherHalf brings lu's parts and inverses to rank 0, which keeps lu's
// own (HalfFactors.Free frees lu too).
func GatherHalf(lu *HalfLU) (*HalfFactors, error) {
	w := lu.W
	t := w.Team
	if !t.Whole() {
		return nil, errors.New("dist: GatherHalf needs every rank of its team in this process")
	}
	root := t.Ranks[0]
	f := &HalfFactors{lu: lu, r: root, parts: make([]*gpu.Buffer, len(w.Parts)), inv: make([]*gpu.Buffer, len(w.Parts))}
	f.parts[0], f.inv[0] = w.part(root), lu.Inverses[w.index(root)]
	d := root.Engine.Device()
	var err error
	if f.x, err = d.Alloc(4 * max(1, w.Rows)); err == nil {
		f.t, err = d.Alloc(4 * w.RowBlock)
	}
	if err == nil {
		f.gemv, err = root.function("gemv_sub_f16")
	}
	if err != nil {
		f.Free()
		return nil, err
	}
	err = t.Each(func(r *Rank) error {
		if r != root {
			i := w.index(r)
			return errors.Join(r.World.Send(w.part(r), 2*w.localElems(r), nccl.Bytes, 0, r.compute),
				r.World.Send(lu.Inverses[i], lu.Inverses[i].Bytes(), nccl.Bytes, 0, r.compute), r.wait(t.Timeout))
		}
		return f.receive()
	})
	if err != nil {
		f.Free()
		return nil, err
	}
	return f, nil
}

// receive takes every other rank's part and inverses, on rank 0.
func (f *HalfFactors) receive() error {
	w, r := f.lu.W, f.r
	d := r.Engine.Device()
	for src := 1; src < w.Grid.Size(); src++ {
		p, q := w.Grid.Coords(src)
		var err error
		if f.parts[src], err = d.Alloc(2 * max(1, w.LocalRows(p)*w.LocalCols(q))); err != nil {
			return err
		}
		if f.inv[src], err = d.Alloc(f.inv[0].Bytes()); err != nil {
			return err
		}
		if err := errors.Join(r.World.Recv(f.parts[src], 2*w.LocalRows(p)*w.LocalCols(q), nccl.Bytes, src, r.compute),
			r.World.Recv(f.inv[src], f.inv[src].Bytes(), nccl.Bytes, src, r.compute)); err != nil {
			return err
		}
	}
	return r.wait(w.Team.Timeout)
}

// Free frees the factors, lu's included.
func (f *HalfFactors) Free() {
	for i := 1; i < len(f.parts); i++ {
		gpu.FreeAll(f.parts[i], f.inv[i])
	}
	gpu.FreeAll(f.x, f.t)
	f.lu.Free()
}

// Solve sets x = C·Û⁻¹L̂⁻¹·R·x: x scaled by R and into fp32's range, the
// two triangular solves on rank 0 (in one trip to its thread), scaled
// back and by C.
func (f *HalfFactors) Solve(x []float64) error {
	n := f.lu.W.Rows
	if len(x) != n {
		return fmt.Errorf("dist: Solve of order %d with %d values", n, len(x))
	}
	scale := 0.0
	for i, v := range x {
		scale = max(scale, math.Abs(v*f.lu.Rows[i]))
	}
	if scale == 0 || math.IsInf(scale, 0) || math.IsNaN(scale) {
		return nil
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(x[i] * f.lu.Rows[i] / scale)
	}
	d := f.r.Engine.Device()
	la, err := d.Linalg()
	if err != nil {
		return err
	}
	q := d.NewLaunchQueue()
	q.Do(func() error { return la.BlasOn(d, nil) })
	if err := errors.Join(f.sweep(q, la.Blas, false), f.sweep(q, la.Blas, true)); err != nil {
		return err
	}
	if err := errors.Join(d.Upload(f.x, v), q.Flush(), d.Download(v, f.x)); err != nil {
		return err
	}
	for i := range x {
		x[i] = float64(v[i]) * scale * f.lu.Cols[i]
	}
	return nil
}

// sweep queues the solve with L̂ (forward) or Û (upper, backward) in place
// of x, a block column at a time: the block's solution by its diagonal
// block's inverse (cuBLAS sgemv, into t), then its column's product with
// it subtracted from the rows below (above) in every grid row's part, the
// first of which also puts t in its place in x.
func (f *HalfFactors) sweep(q *gpu.LaunchQueue, blas uintptr, upper bool) error {
	w := f.lu.W
	nb, steps := w.RowBlock, w.steps()
	for s := 0; s < steps; s++ {
		k := s
		if upper {
			k = steps - 1 - s
		}
		width := min(nb, w.Rows-k*nb)
		f.diagonal(q, blas, k, width, upper)
		for p := 0; p < w.Grid.P; p++ {
			if err := f.column(q, k, width, p, upper); err != nil {
				return err
			}
		}
	}
	return nil
}

// diagonal queues t = T_kk⁻¹·x_k, T_kk the diagonal block's triangle.
func (f *HalfFactors) diagonal(q *gpu.LaunchQueue, blas uintptr, k, width int, upper bool) {
	w := f.lu.W
	nb := w.RowBlock
	owner := w.Grid.Rank(k%w.Grid.P, k%w.Grid.Q)
	slot := 2*k + 1
	if upper {
		slot = 2 * k
	}
	inv, xk, t := f.inv[owner].Ptr()+uintptr(4*slot*nb*nb), f.x.Ptr()+uintptr(4*k*nb), f.t.Ptr()
	q.Do(func() error { return cuda.Sgemv(blas, cuda.OpN, width, width, 1, inv, nb, xk, 0, t) })
}

// column queues the subtraction of block column k's part in grid row p
// (the rows below block k, or above it when upper) times t from x; grid
// row 0's also copies t to block k of x.
func (f *HalfFactors) column(q *gpu.LaunchQueue, k, width, p int, upper bool) error {
	w := f.lu.W
	nb, qk := w.RowBlock, k%w.Grid.Q
	rows := w.LocalRows(p)
	i0 := localCount((k+1)*nb, nb, p, w.Grid.P) // below: the local rows past block k
	m := rows - i0
	if upper {
		i0, m = 0, localCount(k*nb, nb, p, w.Grid.P)
	}
	copyT := int32(0)
	if p == 0 {
		copyT = 1
	}
	if m <= 0 && copyT == 0 {
		return nil
	}
	part := f.parts[w.Grid.Rank(p, qk)].View(2 * (k / w.Grid.Q * nb) * rows) // block column k's local columns
	grid := [3]uint32{uint32(min((max(m, 1)+31)/32, 8192)), 1, 1}
	return q.Launch(f.gemv, grid, [3]uint32{256, 1, 1}, 0, nil, part, int64(rows), int64(i0), int64(max(m, 0)), int32(width),
		f.t, f.x, int32(nb), int32(p), int32(w.Grid.P), f.x.View(4*k*nb), copyT)
}
