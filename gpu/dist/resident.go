package dist

import (
	"errors"
	"fmt"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/fp16"
	"github.com/mwmm/mwmm/gpu/nccl"
	"github.com/mwmm/mwmm/solve"
)

// resident keeps refinement's vectors on the team's first GPU, beside the
// gathered factors (solve.Resident): a residual broadcasts x to every GPU,
// each multiplies its block of A, the sums come back along grid rows by
// all-reduce and the grid rows' parts to the first GPU, where r = b − A·x
// and both norms are formed; 16 bytes go to the host. A correction scales
// r by R into fp32, solves with the TriSolver and adds C times the
// solution to x, all there. The host-vector path moved x to every GPU
// and A·x and the solve's vector back each step. Add and Keep are
// fp16.Vectors'.
type resident struct {
	*fp16.Vectors
	s          *System
	f          *HalfFactors
	rows, cols *gpu.Buffer // R and C
}

// NewResident keeps refinement's vectors on the first GPU when a is a
// System of the factors' team and order; otherwise it returns nil, and
// refinement keeps them on the host.
func (f *HalfFactors) NewResident(a solve.Operator, b []float64) (solve.Resident, error) {
	s, ok := a.(*System)
	if !ok || s.A.Team != f.lu.W.Team || s.N() != f.lu.W.Rows {
		return nil, nil
	}
	n := s.N()
	if len(b) != n {
		return nil, fmt.Errorf("dist: refinement's vectors: b has %d entries for order %d", len(b), n)
	}
	d := f.r.Engine.Device()
	v, err := fp16.NewVectors(d, b)
	if err != nil {
		return nil, err
	}
	res := &resident{Vectors: v, s: s, f: f}
	var err1, err2 error
	res.rows, err1 = d.Alloc(8 * n)
	res.cols, err2 = d.Alloc(8 * n)
	if err := errors.Join(err1, err2); err != nil {
		return nil, errors.Join(err, res.Free())
	}
	if err := errors.Join(d.Upload(res.rows, f.lu.Rows), d.Upload(res.cols, f.lu.Cols)); err != nil {
		return nil, errors.Join(err, res.Free())
	}
	return res, nil
}

// solveInto sets x = C·Û⁻¹L̂⁻¹·R·src (x += that with add).
func (res *resident) solveInto(src *gpu.Buffer, add int32) error {
	n, x := int64(res.N), res.f.x
	return res.Queue(func(q *gpu.LaunchQueue) error {
		return errors.Join(res.Launch(q, nil, "scaled_to_f32", src, res.rows, x, n), res.f.tri.Solve(q, x),
			res.Launch(q, nil, "scaled_from_f32", x, res.cols, res.Slot(fp16.SlotX), n, add))
	})
}

func (res *resident) Start() error   { return res.solveInto(res.Slot(fp16.SlotB), 0) }
func (res *resident) Correct() error { return res.solveInto(res.Slot(fp16.SlotR), 1) }

func (res *resident) Residual() (normR, normX float64, err error) {
	return res.residual(res.residualRank)
}

// residual runs rank's share on every rank, each in one trip to its
// device's thread, and brings the norms from the first GPU.
func (res *resident) residual(rank func(r *Rank) error) (normR, normX float64, err error) {
	err = res.s.A.Team.Each(func(r *Rank) error {
		return r.Engine.Device().Do(func() error { return rank(r) })
	})
	if err != nil {
		return 0, 0, err
	}
	if err := res.f.r.compute.Sync(); err != nil {
		return 0, 0, err
	}
	return res.ReadNorms()
}

// The scratch slots of the double-word residual.
const (
	slotPairs      = 23 // a rank's pairs of A·x, its rows' high parts then low parts
	slotPairChunks = 24 // its chunks' pairs (fp16.PairProduct)
	slotPairsAll   = 25 // on the first GPU: every rank's pairs in global order
	slotPairsRecv  = 26 // on the first GPU: one rank's pairs, received
)

// spreadX sends x from the first GPU to every GPU and returns rank r's
// entries of it in the order of its local columns, on its compute stream.
func (res *resident) spreadX(r *Rank) (*gpu.Buffer, error) {
	n, root := res.N, res.f.r
	return columnsOfX(r, res.s.A, func(xb *gpu.Buffer) error {
		if r == root {
			if err := res.Launch(nil, r.compute, "copy_vec_f64", res.Slot(fp16.SlotX), xb, int64(n)); err != nil {
				return err
			}
		}
		return r.World.Broadcast(xb, n, nccl.Float64, root.Rank, r.compute)
	})
}

// residualRank is rank r's share of a residual, on its compute stream.
func (res *resident) residualRank(r *Rank) error {
	a, n, root := res.s.A, res.N, res.f.r
	rows := a.localRows(r)
	xl, err := res.spreadX(r)
	if err != nil {
		return err
	}
	yl, err := rowProduct(r, a, xl)
	if err != nil || r.Q != 0 {
		return err
	}
	if r != root { // grid row r.P's part of A·x, to the first GPU
		return r.World.Send(yl, 8*rows, nccl.Bytes, root.Rank, r.compute)
	}
	y, err := res.gatherRows(r, yl)
	if err != nil {
		return err
	}
	rv := res.Slot(fp16.SlotR)
	return errors.Join(res.Launch(nil, r.compute, "residual_sub", res.Slot(fp16.SlotB), y, rv, res.Norms(), int64(n)),
		res.Launch(nil, r.compute, "amax2_f64", rv, res.Slot(fp16.SlotX), int64(n), res.Norms()))
}

// ResidualDoubleWord is Residual with r in double-word arithmetic
// (solve.DoubleWordResident): each GPU forms its block's product as
// double-word pairs, and the first GPU receives every GPU's pairs (an
// all-reduce would round their sums to fp64) and adds them to b.
func (res *resident) ResidualDoubleWord() (normR, normX float64, err error) {
	return res.residual(res.residualRankDW)
}

// residualRankDW is rank r's share of a double-word residual.
func (res *resident) residualRankDW(r *Rank) error {
	a, n, root := res.s.A, res.N, res.f.r
	rows := a.localRows(r)
	xl, err := res.spreadX(r)
	if err != nil {
		return err
	}
	pairs, err := pairProduct(r, a, xl)
	if err != nil {
		return err
	}
	if r != root {
		return r.World.Send(pairs, 16*rows, nccl.Bytes, root.Rank, r.compute)
	}
	Q := a.Grid.Q
	all, err := r.scratch(slotPairsAll, 16*n*Q)
	if err != nil {
		return err
	}
	for p := range a.Grid.P {
		rows := a.LocalRows(p)
		for q := range Q {
			from := pairs
			if rank := a.Grid.Rank(p, q); rank != root.Rank {
				if from, err = r.scratch(slotPairsRecv, 16*max(1, rows)); err != nil {
					return err
				}
				if err := r.World.Recv(from, 16*rows, nccl.Bytes, rank, r.compute); err != nil {
					return err
				}
			}
			hi, lo := all.View(8*n*q), all.View(8*n*(Q+q))
			if err := errors.Join(r.launch("scatter_rows", rows, from, hi, int32(rows), int32(a.RowBlock), int32(p), int32(a.Grid.P)),
				r.launch("scatter_rows", rows, from.View(8*rows), lo, int32(rows), int32(a.RowBlock), int32(p), int32(a.Grid.P))); err != nil {
				return err
			}
		}
	}
	rv := res.Slot(fp16.SlotR)
	return errors.Join(res.Launch(nil, r.compute, "residual_dw", res.Slot(fp16.SlotB), all, int64(n), int64(Q), rv, res.Norms()),
		res.Launch(nil, r.compute, "amax2_f64", rv, res.Slot(fp16.SlotX), int64(n), res.Norms()))
}

// gatherRows returns A·x in global order on the first GPU: its own grid
// row's part yl, on a grid of one row; else every grid row's part
// received in turn and scattered to its rows in slot D.
func (res *resident) gatherRows(root *Rank, yl *gpu.Buffer) (*gpu.Buffer, error) {
	a := res.s.A
	if a.Grid.P == 1 {
		return yl, nil
	}
	y := res.Slot(fp16.SlotD)
	for p := range a.Grid.P {
		rows, part := a.LocalRows(p), yl
		if p != root.P {
			var err error
			if part, err = root.scratch(12, 8*max(1, rows)); err != nil {
				return nil, err
			}
			if err := root.World.Recv(part, 8*rows, nccl.Bytes, a.Grid.Rank(p, 0), root.compute); err != nil {
				return nil, err
			}
		}
		if err := root.launch("scatter_rows", rows, part, y, int32(rows), int32(a.RowBlock), int32(p), int32(a.Grid.P)); err != nil {
			return nil, err
		}
	}
	return y, nil
}

// Read copies x, r or the best iterate into dst, after the residual's
// work on the first GPU's compute stream.
func (res *resident) Read(v solve.ResidentVector, dst []float64) error {
	return errors.Join(res.f.r.compute.Sync(), res.Vectors.Read(v, dst))
}

func (res *resident) Free() error {
	return errors.Join(res.Vectors.Free(), gpu.FreeAll(res.rows, res.cols))
}
