package dist

import (
	"errors"
	"fmt"
	"math"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/fp16"
	"github.com/mwmm/mwmm/gpu/nccl"
)

// HalfFactors are FactorHalf's factors brought to the team's first GPU as
// the ranks hold them, in fp16 parts, with the diagonal blocks' inverses
// in fp32: refinement's preconditioner (solve.Factorization), its
// triangular solves a block column at a time through the parts
// (fp16.TriSolver, one launch a triangle). Nothing is unpacked, so the
// gather moves half the bytes of fp32 factors and GPU 0 needs no n×n
// matrix of them.
type HalfFactors struct {
	lu    *HalfLU
	r     *Rank
	parts []*gpu.Buffer // by rank: W's parts, rank 0's its own
	inv   []*gpu.Buffer // by rank: HalfLU.Inverses, rank 0's its own
	x     *gpu.Buffer   // the vector in fp32
	tri   *fp16.TriSolver
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
	f.x, err = d.Alloc(4 * max(1, w.Rows))
	if err != nil {
		f.Free()
		return nil, err
	}
	if err = f.alloc(); err == nil {
		err = f.gather()
	}
	if err == nil {
		f.tri, err = f.triSolver()
	}
	if err != nil {
		f.Free()
		return nil, err
	}
	return f, nil
}

// triSolver describes the gathered parts and inverses to a TriSolver: the
// inverses of block k are on its diagonal block's owner, U_kk⁻¹ at 2k and
// L_kk⁻¹ at 2k+1.
func (f *HalfFactors) triSolver() (*fp16.TriSolver, error) {
	w := f.lu.W
	g, nb := w.Grid, w.RowBlock
	return fp16.NewTriSolver(f.r.Engine.Device(), fp16.TriFactors{N: w.Rows, NB: nb, P: g.P, Q: g.Q,
		Part: func(p, q int) *gpu.Buffer { return f.parts[g.Rank(p, q)] },
		Rows: w.LocalRows,
		Inverse: func(k int, upper bool) *gpu.Buffer {
			slot := 2*k + 1
			if upper {
				slot = 2 * k
			}
			return f.inv[g.Rank(k%g.P, k%g.Q)].View(4 * slot * nb * nb)
		}})
}

// alloc makes room on rank 0 for every other rank's part and inverses.
func (f *HalfFactors) alloc() error {
	w, d := f.lu.W, f.r.Engine.Device()
	for src := 1; src < w.Grid.Size(); src++ {
		p, q := w.Grid.Coords(src)
		var err error
		if f.parts[src], err = d.Alloc(2 * max(1, w.LocalRows(p)*w.LocalCols(q))); err != nil {
			return err
		}
		if f.inv[src], err = d.Alloc(f.inv[0].Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// gather copies every other rank's part and inverses to rank 0: by peer
// copies where the GPUs reach each other's memory (the copy engines over
// NVLink: about four times NCCL's rate here), else through NCCL.
func (f *HalfFactors) gather() error {
	w, t := f.lu.W, f.lu.W.Team
	devs := make([]*gpu.Device, len(t.Ranks))
	for i, r := range t.Ranks {
		devs[i] = r.Engine.Device()
	}
	if gpu.EnablePeerAccess(devs...) == nil {
		return t.Each(func(r *Rank) error {
			if r == f.r {
				return nil
			}
			i := w.index(r)
			return errors.Join(r.Engine.Device().Sync(), gpu.CopyPeer(f.parts[i], w.part(r)), gpu.CopyPeer(f.inv[i], f.lu.Inverses[i]))
		})
	}
	return t.Each(func(r *Rank) error {
		if r != f.r {
			i := w.index(r)
			return errors.Join(r.World.Send(w.part(r), 2*w.localElems(r), nccl.Bytes, 0, r.compute),
				r.World.Send(f.lu.Inverses[i], f.lu.Inverses[i].Bytes(), nccl.Bytes, 0, r.compute), r.wait(t.Timeout))
		}
		for src := 1; src < w.Grid.Size(); src++ {
			p, q := w.Grid.Coords(src)
			if err := errors.Join(r.World.Recv(f.parts[src], 2*w.LocalRows(p)*w.LocalCols(q), nccl.Bytes, src, r.compute),
				r.World.Recv(f.inv[src], f.inv[src].Bytes(), nccl.Bytes, src, r.compute)); err != nil {
				return err
			}
		}
		return r.wait(t.Timeout)
	})
}

// Free frees the factors, lu's included.
func (f *HalfFactors) Free() {
	for i := 1; i < len(f.parts); i++ {
		gpu.FreeAll(f.parts[i], f.inv[i])
	}
	if f.tri != nil {
		f.tri.Free()
	}
	f.x.Free()
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
	q := d.NewLaunchQueue()
	if err := f.tri.Solve(q, f.x); err != nil {
		return err
	}
	if err := d.Do(func() error { return errors.Join(d.Upload(f.x, v), q.Flush(), d.Download(v, f.x)) }); err != nil {
		return err
	}
	for i := range x {
		x[i] = float64(v[i]) * scale * f.lu.Cols[i]
	}
	return nil
}
