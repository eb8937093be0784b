package dense

import (
	"errors"
	"fmt"
	"math"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/fp16"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
	"github.com/mwmm/mwmm/solve"
)

// resident keeps refinement's vectors on the device (solve.Resident): a
// classical step is one trip to the device's thread, r = b − A·x by
// dgemv, both norms in one pass, and x += M⁻¹·r, and brings 16 bytes back;
// the host-vector path moved 2n float64s each way and allocated two
// buffers a step.
type resident struct {
	fa                     *Factors
	la                     *gpu.Linalg
	pc                     *preconditioner
	n                      int
	v                      *gpu.Buffer // b, x, r, d (a correction), the best x: n float64s each
	norms                  *gpu.Buffer // ‖r‖∞ and ‖x‖∞ as binary64 bits
	start, amax, add, copy *gpu.Function
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

// NewResident keeps refinement's vectors on the device when a is the
// system these factors came from (solve.ResidentFactorization); for any
// other operator it returns nil, and refinement keeps them on the host.
func (fa *Factors) NewResident(a solve.Operator, b []float64) (solve.Resident, error) {
	if s, ok := a.(*System); !ok || s != fa.s {
		return nil, nil
	}
	d, n := fa.s.e.d, fa.s.n
	if len(b) != n {
		return nil, fmt.Errorf("gpu: refinement's vectors: b has %d entries for order %d", len(b), n)
	}
	la, err := d.Linalg()
	if err != nil {
		return nil, err
	}
	pc, err := fa.precond()
	if err != nil {
		return nil, err
	}
	mod, err := d.Module(fp16.Kernels())
	if err != nil {
		return nil, err
	}
	r := &resident{fa: fa, la: la, pc: pc, n: n}
	for name, f := range map[string]**gpu.Function{"residual_start": &r.start, "amax2_f64": &r.amax, "add_f64": &r.add, "copy_vec_f64": &r.copy} {
		if *f, err = mod.Function(name); err != nil {
			return nil, err
		}
	}
	if r.v, err = d.Alloc(8 * n * slots); err != nil {
		return nil, fmt.Errorf("gpu: refinement's vectors: %w", err)
	}
	if r.norms, err = d.Alloc(16); err != nil {
		return nil, errors.Join(err, r.Free())
	}
	if err := d.Upload(r.slot(slotB), b); err != nil {
		return nil, errors.Join(err, r.Free())
	}
	return r, nil
}

func (r *resident) slot(i int) *gpu.Buffer { return r.v.View(8 * r.n * i) }

// queue runs f's launches and calls in one trip to the device's thread.
func (r *resident) queue(f func(q *gpu.LaunchQueue) error) error {
	d := r.fa.s.e.d
	return d.Do(func() error {
		q := d.NewLaunchQueue()
		if err := f(q); err != nil {
			return err
		}
		return q.Flush()
	})
}

func (r *resident) vectorGrid() (grid, block [3]uint32) {
	return [3]uint32{uint32(min(4096, (r.n+255)/256)), 1, 1}, [3]uint32{256, 1, 1}
}

func (r *resident) Start() error {
	return r.queue(func(q *gpu.LaunchQueue) error { return r.pc.enqueue(q, r.la, r.slot(slotB), r.slot(slotX)) })
}

func (r *resident) Residual() (normR, normX float64, err error) {
	var bits [2]uint64
	n := r.n
	grid, block := r.vectorGrid()
	err = r.queue(func(q *gpu.LaunchQueue) error {
		rv, x := r.slot(slotR), r.slot(slotX)
		if err := q.Launch(r.start, grid, block, 0, nil, r.slot(slotB), rv, r.norms, int64(n)); err != nil {
			return err
		}
		q.Do(func() error {
			if err := cuda.CublasSetStream(r.la.Blas, 0); err != nil {
				return err
			}
			return cuda.Dgemv(r.la.Blas, cuda.OpN, n, n, -1, r.fa.s.a.Ptr(), n, x.Ptr(), 1, rv.Ptr())
		})
		if err := q.Launch(r.amax, grid, block, 0, nil, rv, x, int64(n), r.norms); err != nil {
			return err
		}
		q.Do(func() error { return r.fa.s.e.d.Download(bits[:], r.norms) })
		return nil
	})
	return math.Float64frombits(bits[0]), math.Float64frombits(bits[1]), err
}

func (r *resident) Correct() error {
	grid, block := r.vectorGrid()
	return r.queue(func(q *gpu.LaunchQueue) error {
		if err := r.pc.enqueue(q, r.la, r.slot(slotR), r.slot(slotD)); err != nil {
			return err
		}
		return q.Launch(r.add, grid, block, 0, nil, r.slot(slotX), r.slot(slotD), int64(r.n))
	})
}

func (r *resident) Add(d []float64) error {
	if len(d) != r.n {
		return fmt.Errorf("gpu: refinement's vectors: a correction of %d entries for order %d", len(d), r.n)
	}
	grid, block := r.vectorGrid()
	return r.queue(func(q *gpu.LaunchQueue) error {
		q.Do(func() error { return r.fa.s.e.d.Upload(r.slot(slotD), d) })
		return q.Launch(r.add, grid, block, 0, nil, r.slot(slotX), r.slot(slotD), int64(r.n))
	})
}

func (r *resident) Keep() error {
	grid, block := r.vectorGrid()
	return r.queue(func(q *gpu.LaunchQueue) error {
		return q.Launch(r.copy, grid, block, 0, nil, r.slot(slotX), r.slot(slotBest), int64(r.n))
	})
}

func (r *resident) Read(v solve.ResidentVector, dst []float64) error {
	slot, ok := map[solve.ResidentVector]int{solve.IterateVector: slotX, solve.ResidualVector: slotR, solve.BestVector: slotBest}[v]
	if !ok || len(dst) > r.n {
		return fmt.Errorf("gpu: refinement's vectors: reading vector %d into %d entries", v, len(dst))
	}
	return r.fa.s.e.d.Download(dst, r.slot(slot))
}

func (r *resident) Free() error { return gpu.FreeAll(r.v, r.norms) }
