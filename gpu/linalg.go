package gpu

import (
	"errors"
	"fmt"

	"github.com/mwmm/mwmm/gpu/internal/cuda"
)

// ErrNoCusolver is wrapped by the errors of work that needs cuBLAS or
// cuSOLVER on a machine without them (libcublas.so.13, libcusolver.so.12).
var ErrNoCusolver = cuda.ErrNoCusolver

// Linalg holds the cuBLAS and cuSOLVER handles of a device, made on first
// use and destroyed with the device. The handles are for calls through
// gpu/internal/cuda on the device's thread (Device.Do).
type Linalg struct {
	Blas, Solver uintptr

	blas2 uintptr // SecondBlas's, made on first use
}

// Linalg returns the device's cuBLAS and cuSOLVER handles, or an error
// wrapping ErrNoCusolver.
func (d *Device) Linalg() (*Linalg, error) {
	d.laMu.Lock()
	defer d.laMu.Unlock()
	if d.la != nil {
		return d.la, nil
	}
	la := &Linalg{}
	err := d.Do(func() error {
		if err := cuda.LoadCusolver(); err != nil {
			return err
		}
		var err error
		if la.Blas, err = cuda.CublasCreate(); err != nil {
			return err
		}
		if la.Solver, err = cuda.CusolverCreate(); err != nil {
			return errors.Join(err, cuda.CublasDestroy(la.Blas))
		}
		d.track(func() error {
			return errors.Join(cuda.CusolverDestroy(la.Solver), cuda.CublasDestroy(la.Blas))
		})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("gpu: solver: %w", err)
	}
	d.la = la
	return la, nil
}

// SecondBlas returns a second cuBLAS handle, made on first use and
// destroyed with the device: a handle's work space serves one stream at a
// time, so work on two streams at once takes one handle each.
func (d *Device) SecondBlas() (uintptr, error) {
	la, err := d.Linalg()
	if err != nil {
		return 0, err
	}
	d.laMu.Lock()
	defer d.laMu.Unlock()
	if la.blas2 != 0 {
		return la.blas2, nil
	}
	err = d.Do(func() error {
		h, err := cuda.CublasCreate()
		if err != nil {
			return err
		}
		la.blas2 = h
		d.track(func() error { return cuda.CublasDestroy(h) })
		return nil
	})
	return la.blas2, err
}

// BlasOn and SolverOn send the cuBLAS or cuSOLVER handle's later work to
// st (nil: the default stream); on the device's thread.
func (la *Linalg) BlasOn(d *Device, st *Stream) error {
	h, err := st.Handle(d)
	if err != nil {
		return err
	}
	return cuda.CublasSetStream(la.Blas, h)
}

func (la *Linalg) SolverOn(d *Device, st *Stream) error {
	h, err := st.Handle(d)
	if err != nil {
		return err
	}
	return cuda.CusolverSetStream(la.Solver, h)
}

// SolverVersions returns the versions of cuBLAS (e.g. 130100) and
// cuSOLVER (major, minor, patch) that the solver would use, or an error
// wrapping ErrNoCusolver.
func (d *Device) SolverVersions() (blas int, solver [3]int, err error) {
	err = d.Do(func() error {
		if err := cuda.LoadCusolver(); err != nil {
			return err
		}
		h, err := cuda.CublasCreate()
		if err != nil {
			return err
		}
		blas, err = cuda.CublasVersion(h)
		if err = errors.Join(err, cuda.CublasDestroy(h)); err != nil {
			return err
		}
		solver[0], solver[1], solver[2], err = cuda.CusolverVersion()
		return err
	})
	return blas, solver, err
}
