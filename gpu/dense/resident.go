package dense

import (
	"fmt"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/fp16"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
	"github.com/mwmm/mwmm/solve"
)

// resident keeps refinement's vectors on the device (solve.Resident): a
// classical step is one trip to the device's thread, r = b − A·x by
// dgemv, both norms in one pass, and x += M⁻¹·r, and brings 16 bytes back;
// the host-vector path moved 2n float64s each way and allocated two
// buffers a step. Add, Keep, Read and Free are fp16.Vectors'.
type resident struct {
	*fp16.Vectors
	fa *Factors
	la *gpu.Linalg
	pc *preconditioner
}

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
	v, err := fa.s.e.takeVectors(b)
	if err != nil {
		return nil, err
	}
	return &resident{Vectors: v, fa: fa, la: la, pc: pc}, nil
}

// Free gives the vectors back to the Solver for the next refinement.
func (r *resident) Free() error { return r.fa.s.e.putVectors(r.Vectors) }

func (r *resident) Start() error {
	return r.Queue(func(q *gpu.LaunchQueue) error {
		return r.pc.enqueue(q, r.la, r.Slot(fp16.SlotB), r.Slot(fp16.SlotX))
	})
}

func (r *resident) Residual() (normR, normX float64, err error) {
	n := r.N
	return r.residual(func(q *gpu.LaunchQueue) error {
		rv, x := r.Slot(fp16.SlotR), r.Slot(fp16.SlotX)
		if err := r.Launch(q, nil, "residual_start", r.Slot(fp16.SlotB), rv, r.Norms(), int64(n)); err != nil {
			return err
		}
		q.Do(func() error {
			if err := cuda.CublasSetStream(r.la.Blas, 0); err != nil {
				return err
			}
			return cuda.Dgemv(r.la.Blas, cuda.OpN, n, n, -1, r.fa.s.a.Ptr(), n, x.Ptr(), 1, rv.Ptr())
		})
		return nil
	})
}

// ResidualDoubleWord is Residual with r in double-word arithmetic
// (solve.DoubleWordResident): the same pass over A.
func (r *resident) ResidualDoubleWord() (normR, normX float64, err error) {
	return r.residual(func(q *gpu.LaunchQueue) error { return r.QueueDoubleWordResidual(q, r.fa.s.a, r.N) })
}

// residual queues form (r = b − A·x, the norms' words zeroed), both
// norms, and brings them back, in one trip.
func (r *resident) residual(form func(q *gpu.LaunchQueue) error) (normR, normX float64, err error) {
	err = r.Queue(func(q *gpu.LaunchQueue) error {
		if err := form(q); err != nil {
			return err
		}
		if err := r.Launch(q, nil, "amax2_f64", r.Slot(fp16.SlotR), r.Slot(fp16.SlotX), int64(r.N), r.Norms()); err != nil {
			return err
		}
		q.Do(func() error {
			var err error
			normR, normX, err = r.ReadNorms()
			return err
		})
		return nil
	})
	return normR, normX, err
}

func (r *resident) Correct() error {
	return r.Queue(func(q *gpu.LaunchQueue) error {
		if err := r.pc.enqueue(q, r.la, r.Slot(fp16.SlotR), r.Slot(fp16.SlotD)); err != nil {
			return err
		}
		return r.Launch(q, nil, "add_f64", r.Slot(fp16.SlotX), r.Slot(fp16.SlotD), int64(r.N))
	})
}
