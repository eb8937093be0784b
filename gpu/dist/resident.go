package dist

import (
	"errors"
	"fmt"
	"math"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/fp16"
	"github.com/mwmm/mwmm/gpu/nccl"
	"github.com/mwmm/mwmm/solve"
)

// resident keeps refinement's vectors on the team's first GPU, beside the
// gathered factors (solve.Resident): a residual broadcasts x to every GPU,
// each multiplies its block of A, the sums come back along grid rows by
// all-reduce and the grid rows' parts to the first GPU, where r = b − A·x
// and both norms are formed; 16 bytes go to the host. A
// correction scales r by R into fp32, solves with the TriSolver and adds
// C times the solution to x, all there. The host-vector path moved x to
// every GPU and A·x and the solve's vector back each step.
type resident struct {
	s          *System
	f          *HalfFactors
	n          int
	v          *gpu.Buffer // on the first GPU: b, x, r, d (a correction), the best x
	norms      *gpu.Buffer // ‖r‖∞ and ‖x‖∞ as binary64 bits
	rows, cols *gpu.Buffer // R and C
	fn         map[string]*gpu.Function
}

// The vectors' slots in resident.v.
const (
	slotB = iota
	slotX
	slotR
	slotD
	slotBest
	slots
)

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
	mod, err := d.Module(fp16.Kernels())
	if err != nil {
		return nil, err
	}
	res := &resident{s: s, f: f, n: n, fn: map[string]*gpu.Function{}}
	for _, name := range []string{"residual_sub", "amax2_f64", "add_f64", "copy_vec_f64", "scaled_to_f32", "scaled_from_f32"} {
		if res.fn[name], err = mod.Function(name); err != nil {
			return nil, err
		}
	}
	var err1, err2, err3, err4 error
	res.v, err1 = d.Alloc(8 * n * slots)
	res.norms, err2 = d.Alloc(16)
	res.rows, err3 = d.Alloc(8 * n)
	res.cols, err4 = d.Alloc(8 * n)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return nil, errors.Join(err, res.Free())
	}
	if err := errors.Join(d.Upload(res.slot(slotB), b), d.Upload(res.rows, f.lu.Rows), d.Upload(res.cols, f.lu.Cols)); err != nil {
		return nil, errors.Join(err, res.Free())
	}
	return res, nil
}

func (res *resident) slot(i int) *gpu.Buffer { return res.v.View(8 * res.n * i) }

// launch queues a vector kernel over n entries on q.
func (res *resident) launch(q *gpu.LaunchQueue, name string, args ...any) error {
	return q.Launch(res.fn[name], gpu.StrideGrid(res.n), [3]uint32{256, 1, 1}, 0, nil, args...)
}

// onRoot runs f's launches on the first GPU's default stream, in one trip.
func (res *resident) onRoot(f func(q *gpu.LaunchQueue) error) error {
	d := res.f.r.Engine.Device()
	return d.Do(func() error {
		q := d.NewLaunchQueue()
		if err := f(q); err != nil {
			return err
		}
		return q.Flush()
	})
}

// solveInto sets x = C·Û⁻¹L̂⁻¹·R·src (x += that with add).
func (res *resident) solveInto(src *gpu.Buffer, add int32) error {
	n, x := int64(res.n), res.f.x
	return res.onRoot(func(q *gpu.LaunchQueue) error {
		return errors.Join(res.launch(q, "scaled_to_f32", src, res.rows, x, n), res.f.tri.Solve(q, x),
			res.launch(q, "scaled_from_f32", x, res.cols, res.slot(slotX), n, add))
	})
}

func (res *resident) Start() error   { return res.solveInto(res.slot(slotB), 0) }
func (res *resident) Correct() error { return res.solveInto(res.slot(slotR), 1) }

func (res *resident) Residual() (normR, normX float64, err error) {
	err = res.s.A.Team.Each(func(r *Rank) error {
		return r.Engine.Device().Do(func() error { return res.residualRank(r) })
	})
	if err != nil {
		return 0, 0, err
	}
	root := res.f.r
	var bits [2]uint64
	if err := errors.Join(root.compute.Sync(), root.Engine.Device().Download(bits[:], res.norms)); err != nil {
		return 0, 0, err
	}
	return math.Float64frombits(bits[0]), math.Float64frombits(bits[1]), nil
}

// residualRank is rank r's share of a residual, on its compute stream.
func (res *resident) residualRank(r *Rank) error {
	a, n, root := res.s.A, res.n, res.f.r
	rows, cols := a.localRows(r), a.localCols(r)
	xb, err1 := r.scratch(9, 8*n)
	xl, err2 := r.scratch(10, 8*max(1, cols))
	yl, err3 := r.scratch(11, 8*max(1, rows))
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	grid, block := gpu.StrideGrid(n), [3]uint32{256, 1, 1}
	if r == root {
		if err := res.fn["copy_vec_f64"].Launch(grid, block, 0, r.compute, res.slot(slotX), xb, int64(n)); err != nil {
			return err
		}
	}
	if err := r.World.Broadcast(xb, n, nccl.Float64, root.Rank, r.compute); err != nil {
		return err
	}
	if err := r.launch("gather_cols", cols, xb, xl, int32(cols), int32(a.ColBlock), int32(r.Q), int32(a.Grid.Q)); err != nil {
		return err
	}
	if err := r.gemv(a.part(r), rows, cols, xl, yl); err != nil {
		return err
	}
	if err := r.Row.AllReduce(yl, yl, rows, nccl.Float64, nccl.Sum, r.compute); err != nil || r.Q != 0 {
		return err
	}
	if r != root { // grid row r.P's part of A·x, to the first GPU
		return r.World.Send(yl, 8*rows, nccl.Bytes, root.Rank, r.compute)
	}
	y, err := res.gatherRows(r, yl)
	if err != nil {
		return err
	}
	rv := res.slot(slotR)
	return errors.Join(res.fn["residual_sub"].Launch(grid, block, 0, r.compute, res.slot(slotB), y, rv, res.norms, int64(n)),
		res.fn["amax2_f64"].Launch(grid, block, 0, r.compute, rv, res.slot(slotX), int64(n), res.norms))
}

// gatherRows returns A·x in global order on the first GPU: its own grid
// row's part yl, on a grid of one row; else every grid row's part
// received in turn and scattered to its rows in slot D.
func (res *resident) gatherRows(root *Rank, yl *gpu.Buffer) (*gpu.Buffer, error) {
	a := res.s.A
	if a.Grid.P == 1 {
		return yl, nil
	}
	y := res.slot(slotD)
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

func (res *resident) Add(d []float64) error {
	if len(d) != res.n {
		return fmt.Errorf("dist: refinement's vectors: a correction of %d entries for order %d", len(d), res.n)
	}
	dev := res.f.r.Engine.Device()
	return res.onRoot(func(q *gpu.LaunchQueue) error {
		q.Do(func() error { return dev.Upload(res.slot(slotD), d) })
		return res.launch(q, "add_f64", res.slot(slotX), res.slot(slotD), int64(res.n))
	})
}

func (res *resident) Keep() error {
	return res.onRoot(func(q *gpu.LaunchQueue) error {
		return res.launch(q, "copy_vec_f64", res.slot(slotX), res.slot(slotBest), int64(res.n))
	})
}

func (res *resident) Read(v solve.ResidentVector, dst []float64) error {
	slot, ok := map[solve.ResidentVector]int{solve.IterateVector: slotX, solve.ResidualVector: slotR, solve.BestVector: slotBest}[v]
	if !ok || len(dst) > res.n {
		return fmt.Errorf("dist: refinement's vectors: reading vector %d into %d entries", v, len(dst))
	}
	root := res.f.r
	return errors.Join(root.compute.Sync(), root.Engine.Device().Download(dst, res.slot(slot)))
}

func (res *resident) Free() error { return gpu.FreeAll(res.v, res.norms, res.rows, res.cols) }
