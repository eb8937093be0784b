// Package nccl joins GPUs into NCCL communicators, one rank per GPU, and
// moves device buffers between them: broadcasts, all-reduces and
// point-to-point transfers queued on gpu Streams.
//
// NCCL (libnccl.so.2) is opened at run time through purego, like every
// CUDA library mwmm uses, so work on one GPU never needs it; Available
// says whether it is there.
//
// # One process, several GPUs
//
// JoinAll makes one communicator of the GPUs a process opened: each
// device's thread joins with the same id, concurrently.
//
//	devs := []*gpu.Device{d0, d1}
//	comms, err := nccl.JoinAll(devs, time.Minute)
//
// # One process per GPU, on one host or many
//
// Join takes this process's rank and the world's size from the variables
// that mpirun or a batch system sets (ReadEnv: Open MPI, PMI/MPICH,
// Slurm, or MWMM_RANK and MWMM_WORLD_SIZE), and the id from rank 0 over
// TCP at MWMM_ROOT (host:port; MASTER_ADDR and MASTER_PORT also serve).
//
// # Failures
//
// NCCL's transfers run in the background; a peer that died would leave
// the others waiting for ever. Comm.Wait waits for a stream with a
// deadline, checking the communicator's asynchronous error as it polls,
// and aborts the communicator when either trips.
package nccl

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
)

// ErrNoNCCL is wrapped by the errors of a machine without NCCL.
var ErrNoNCCL = cuda.ErrNoNCCL

// Available loads NCCL and returns why it cannot be used, or nil.
func Available() error { return cuda.LoadNCCL() }

// Version returns NCCL's version, e.g. "2.28.3".
func Version() (string, error) {
	if err := Available(); err != nil {
		return "", err
	}
	v, err := cuda.NCCLVersion()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d.%d.%d", v/10000, v/100%100, v%100), nil
}

// An ID names a communicator: one rank makes it (NewID), every rank
// joins with it.
type ID [128]byte

// NewID makes a fresh communicator id.
func NewID() (ID, error) {
	if err := Available(); err != nil {
		return ID{}, err
	}
	id, err := cuda.NCCLGetUniqueID()
	return ID(id.Internal), err
}

// A Comm is one rank's end of a communicator, on one device.
type Comm struct {
	d          *gpu.Device
	h          uintptr
	rank, size int
	once       sync.Once
	closeErr   error
}

// Device returns the rank's GPU.
func (c *Comm) Device() *gpu.Device { return c.d }

// Rank returns the rank in the communicator, from 0.
func (c *Comm) Rank() int { return c.rank }

// Size returns the communicator's number of ranks.
func (c *Comm) Size() int { return c.size }

// Join makes d rank of size ranks in the communicator id. It returns when
// every rank has joined: the ranks must call it concurrently.
func Join(d *gpu.Device, size, rank int, id ID) (*Comm, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	if size < 1 || rank < 0 || rank >= size {
		return nil, fmt.Errorf("nccl: rank %d of %d ranks", rank, size)
	}
	c := &Comm{d: d, rank: rank, size: size}
	err := d.Do(func() error {
		h, err := cuda.NCCLCommInitRank(size, rank, cuda.NCCLUniqueID{Internal: id})
		c.h = h
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("nccl: rank %d of %d on %v: %w", rank, size, d, err)
	}
	return c, nil
}

// JoinAll makes one communicator of devs, rank i on devs[i]. If the ranks
// have not all joined after timeout it returns an error; the devices of
// ranks still waiting are then unusable.
func JoinAll(devs []*gpu.Device, timeout time.Duration) ([]*Comm, error) {
	if len(devs) == 0 {
		return nil, errors.New("nccl: JoinAll of no devices")
	}
	id, err := NewID()
	if err != nil {
		return nil, err
	}
	return gather(len(devs), timeout, func(i int) (*Comm, error) { return Join(devs[i], len(devs), i, id) })
}

// gather runs join(i) for i < n concurrently and collects the comms,
// closing the ones made when another failed or the time ran out.
func gather(n int, timeout time.Duration, join func(i int) (*Comm, error)) ([]*Comm, error) {
	type res struct {
		i   int
		c   *Comm
		err error
	}
	ch := make(chan res, n)
	for i := 0; i < n; i++ {
		go func(i int) { c, err := join(i); ch <- res{i, c, err} }(i)
	}
	comms := make([]*Comm, n)
	var errs []error
	deadline := time.After(timeout)
	for got := 0; got < n; got++ {
		select {
		case r := <-ch:
			comms[r.i] = r.c
			errs = append(errs, r.err)
		case <-deadline:
			Abort(comms...)
			return nil, fmt.Errorf("nccl: %d of %d ranks had not joined after %v", n-got, n, timeout)
		}
	}
	if err := errors.Join(errs...); err != nil {
		Abort(comms...)
		return nil, err
	}
	return comms, nil
}

// Split makes c's rank a rank of a sub-communicator: the ranks of c that
// give the same color form one, ordered by key. With maxCTAs > 0 its
// transfers run on at most that many thread blocks (the SMs they take
// from kernels beside them; NCCL_MAX_CTAS, where set, overrides it),
// else as many as c's. Every rank of c must call it, concurrently.
func (c *Comm) Split(color, key, maxCTAs int) (*Comm, error) {
	sub := &Comm{d: c.d}
	err := c.d.Do(func() error {
		h, err := cuda.NCCLCommSplit(c.h, color, key, maxCTAs)
		if err != nil {
			return err
		}
		sub.h = h
		sub.size, sub.rank, err = cuda.NCCLCommShape(h)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("nccl: splitting rank %d of %d: %w", c.rank, c.size, err)
	}
	return sub, nil
}

// SplitAll splits the communicators of one process, each rank's color and
// key given by its rank in comms (maxCTAs as in Split).
func SplitAll(comms []*Comm, color, key func(rank int) int, maxCTAs int, timeout time.Duration) ([]*Comm, error) {
	return gather(len(comms), timeout, func(i int) (*Comm, error) {
		r := comms[i].rank
		return comms[i].Split(color(r), key(r), maxCTAs)
	})
}

// Close frees the communicator once its work is done; again does nothing.
func (c *Comm) Close() error {
	if c == nil {
		return nil
	}
	c.once.Do(func() { c.closeErr = c.d.Do(func() error { return cuda.NCCLCommDestroy(c.h) }) })
	return c.closeErr
}

// Abort frees communicators at once, cancelling what they were doing (the
// way out of a transfer whose peer is gone).
func Abort(comms ...*Comm) {
	for _, c := range comms {
		if c != nil {
			c.once.Do(func() { c.closeErr = c.d.Do(func() error { return cuda.NCCLCommAbort(c.h) }) })
		}
	}
}

// ErrTimeout is wrapped by Wait's error when the deadline passed.
var ErrTimeout = errors.New("nccl: timed out")

// Wait waits for the work queued on s, polling it and c's asynchronous
// error; on an error or after timeout it aborts c and returns why.
func (c *Comm) Wait(s *gpu.Stream, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	pause := 20 * time.Microsecond
	for {
		done, err := s.Done()
		if err == nil {
			err = c.d.Do(func() error { return cuda.NCCLCommAsyncError(c.h) })
		}
		switch {
		case err != nil:
			Abort(c)
			return fmt.Errorf("nccl: rank %d of %d: %w", c.rank, c.size, err)
		case done:
			return nil
		case time.Now().After(deadline):
			Abort(c)
			return fmt.Errorf("%w: rank %d of %d waited %v for its transfers", ErrTimeout, c.rank, c.size, timeout)
		}
		time.Sleep(pause)
		pause = min(2*pause, 5*time.Millisecond)
	}
}
