package gpu

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/mwmm/mwmm/gpu/internal/cuda"
)

// A Device is one GPU with its CUDA context. Its methods are safe for
// concurrent use: they all run on the device's own OS thread (see the
// package doc). Close it to free what it holds.
type Device struct {
	index        int
	dev          int32
	ctx          uintptr
	name         string
	major, minor int
	sms          int
	sharedOptin  int // the most shared memory a block may ask for (static and dynamic)
	total        uint64

	laMu sync.Mutex
	la   *Linalg // cuBLAS and cuSOLVER, made on first use

	w *worker

	// Owned by the worker's goroutine.
	closed bool
	nextID uint64
	res    map[uint64]func() error // live resources: how to destroy each
	lt     *Lt

	// Ids of resources whose Go values the collector found unreachable;
	// freed at the next call (a cleanup must not wait for the worker).
	pendingMu sync.Mutex
	pending   []uint64

	modMu   sync.Mutex
	modules map[string]*Module
}

var (
	availOnce sync.Once
	availErr  error
)

// Available returns nil when this machine has a GPU that mwmm can use, and
// otherwise the reason, wrapping ErrNoDriver, ErrDriverTooOld or
// ErrNoDevice. It loads the driver the first time and caches the answer. It
// does not look for NVRTC or cuBLASLt: see Device.Module and Device.Lt.
func Available() error {
	availOnce.Do(func() {
		if err := cuda.LoadDriver(); err != nil {
			availErr = err
			return
		}
		n, err := cuda.DeviceCount()
		if err == nil && n == 0 {
			err = fmt.Errorf("%w: the CUDA driver sees no GPU", ErrNoDevice)
		}
		availErr = err
	})
	return availErr
}

// Count returns the number of GPUs, or Available's error.
func Count() (int, error) {
	if err := Available(); err != nil {
		return 0, err
	}
	return cuda.DeviceCount()
}

// Open opens the first GPU (device 0 in CUDA's order, which
// CUDA_VISIBLE_DEVICES can change).
func Open() (*Device, error) { return OpenIndex(0) }

// OpenIndex opens GPU i. It makes the device's primary context (the one
// the CUDA runtime and cuBLASLt use) current on a new locked thread.
func OpenIndex(i int) (*Device, error) {
	n, err := Count()
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= n {
		return nil, fmt.Errorf("%w: no device %d (the machine has %d)", ErrNoDevice, i, n)
	}
	d := &Device{index: i, w: newWorker(), res: map[uint64]func() error{}, modules: map[string]*Module{}}
	err = d.w.do(func() error {
		var err error
		if d.dev, err = cuda.DeviceGet(i); err != nil {
			return err
		}
		if d.ctx, err = cuda.PrimaryCtxRetain(d.dev); err != nil {
			return err
		}
		if err = d.describe(); err != nil {
			cuda.PrimaryCtxRelease(d.dev)
		}
		return err
	})
	if err != nil {
		d.w.stop()
		return nil, fmt.Errorf("gpu: opening device %d: %w", i, err)
	}
	return d, nil
}

// describe makes the context current and reads what does not change.
func (d *Device) describe() error {
	if err := cuda.CtxSetCurrent(d.ctx); err != nil {
		return err
	}
	var err error
	if d.name, err = cuda.DeviceGetName(d.dev); err != nil {
		return err
	}
	attr := func(a int32) int {
		v, e := cuda.DeviceGetAttribute(d.dev, a)
		err = errors.Join(err, e)
		return v
	}
	d.major = attr(cuda.AttrComputeCapabilityMajor)
	d.minor = attr(cuda.AttrComputeCapabilityMinor)
	d.sms = attr(cuda.AttrMultiprocessorCount)
	d.sharedOptin = attr(cuda.AttrMaxSharedMemoryPerBlockOptin)
	if err != nil {
		return err
	}
	d.total, err = cuda.DeviceTotalMem(d.dev)
	return err
}

// Do runs f on the device's thread, after freeing what the collector
// gave back; it returns ErrClosed after Close. Inside f, the package's
// calls on d (Do among them) run in f's trip to the thread: wrap a
// sequence of launches in one Do to spare each its trip (15–20 µs).
func (d *Device) Do(f func() error) error {
	return d.w.do(func() error {
		if d.closed {
			return ErrClosed
		}
		d.freePending()
		return f()
	})
}

// track records a live resource and how to destroy it; on the worker.
func (d *Device) track(destroy func() error) uint64 {
	d.nextID++
	d.res[d.nextID] = destroy
	return d.nextID
}

// live reports whether resource id is still alive; on the worker.
func (d *Device) live(id uint64) bool {
	_, ok := d.res[id]
	return ok
}

// release destroys resource id if it is still alive; on the worker.
func (d *Device) release(id uint64) error {
	destroy, ok := d.res[id]
	if !ok {
		return nil
	}
	delete(d.res, id)
	return destroy()
}

// releaseLater queues resource id to be released on the next call; safe
// from any goroutine, and it never blocks.
func (d *Device) releaseLater(id uint64) {
	d.pendingMu.Lock()
	d.pending = append(d.pending, id)
	d.pendingMu.Unlock()
}

func (d *Device) freePending() {
	d.pendingMu.Lock()
	ids := d.pending
	d.pending = nil
	d.pendingMu.Unlock()
	for _, id := range ids {
		d.release(id) // a leaked buffer's error has nobody to go to
	}
}

// releaseOnce releases id from a user's Free or Close: nil when the device
// is already closed (everything was released then).
func (d *Device) releaseOnce(id uint64) error {
	err := d.Do(func() error { return d.release(id) })
	if errors.Is(err, ErrClosed) {
		return nil
	}
	return err
}

// Close frees every buffer, stream, event, module and cuBLASLt handle of
// the device still alive, releases the context and stops the device's
// thread. Using the device afterwards returns ErrClosed; Close again
// returns nil.
func (d *Device) Close() error {
	err := d.w.do(func() error {
		if d.closed {
			return nil
		}
		d.closed = true
		d.freePending()
		// Newest first: a cuBLASLt handle goes before the memory it may use.
		ids := make([]uint64, 0, len(d.res))
		for id := range d.res {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		var errs []error
		for _, id := range slices.Backward(ids) {
			errs = append(errs, d.release(id))
		}
		errs = append(errs, cuda.PrimaryCtxRelease(d.dev), cuda.CtxSetCurrent(0))
		return errors.Join(errs...)
	})
	d.w.stop()
	if errors.Is(err, ErrClosed) {
		return nil
	}
	return err
}

// Index returns the device's CUDA ordinal.
func (d *Device) Index() int { return d.index }

// Name returns the GPU's name, e.g. "NVIDIA H100 80GB HBM3".
func (d *Device) Name() string { return d.name }

// ComputeCapability returns the GPU's compute capability, e.g. 9, 0 for
// Hopper.
func (d *Device) ComputeCapability() (major, minor int) { return d.major, d.minor }

// MaxSharedPerBlock returns the most shared memory, in bytes, a block may
// ask for (static and dynamic together).
func (d *Device) MaxSharedPerBlock() int { return d.sharedOptin }

// Arch returns the architecture kernels are compiled for; see Arch.
func (d *Device) Arch() string { return Arch(d.major, d.minor) }

// Multiprocessors returns the number of streaming multiprocessors.
func (d *Device) Multiprocessors() int { return d.sms }

// TotalMemory returns the GPU's memory in bytes.
func (d *Device) TotalMemory() uint64 { return d.total }

// FreeMemory returns the bytes of GPU memory free now.
func (d *Device) FreeMemory() (uint64, error) {
	var free uint64
	err := d.Do(func() error {
		var err error
		free, _, err = cuda.MemGetInfo()
		return err
	})
	return free, err
}

// DriverVersion returns the CUDA version the driver supports, as 1000*major
// + 10*minor (13000 for CUDA 13.0).
func (d *Device) DriverVersion() int { return cuda.DriverVersion() }

// NVRTCVersion returns NVRTC's version, or an error wrapping ErrNoNVRTC.
func (d *Device) NVRTCVersion() (major, minor int, err error) {
	if err := cuda.LoadNVRTC(); err != nil {
		return 0, 0, err
	}
	major, minor = cuda.NVRTCVersion()
	return major, minor, nil
}

// CublasLtVersion returns cuBLASLt's version as 10000*major + 100*minor +
// patch, or an error wrapping ErrNoCublasLt.
func (d *Device) CublasLtVersion() (int, error) {
	if err := cuda.LoadCublasLt(); err != nil {
		return 0, err
	}
	return cuda.CublasLtVersion(), nil
}

// Sync waits until all work queued on the device has finished, and returns
// the error of any that failed (a kernel's fault surfaces here).
func (d *Device) Sync() error {
	return d.Do(cuda.CtxSynchronize)
}

func (d *Device) String() string {
	return fmt.Sprintf("GPU %d (%s, compute capability %d.%d)", d.index, d.name, d.major, d.minor)
}

// Arch returns the architecture NVRTC compiles for on a GPU of compute
// capability major.minor: "sm_90a" for 9.0, whose a-variant unlocks the
// architecture-specific instructions (wgmma, setmaxnreg), and likewise
// sm_100a, sm_103a, sm_110a, sm_120a, sm_121a (tcgen05 on 10.x and 11.0,
// block-scaled mma on 12.x); "sm_XY" for the others, e.g. "sm_80", "sm_89".
// A CUBIN for an a-variant runs only on that exact compute capability,
// which is fine here: we compile for the GPU at hand.
func Arch(major, minor int) string {
	switch 10*major + minor {
	case 90, 100, 103, 110, 120, 121:
		return fmt.Sprintf("sm_%d%da", major, minor)
	}
	return fmt.Sprintf("sm_%d%d", major, minor)
}

// A PeerLink says how one GPU reaches another's memory.
type PeerLink struct {
	Access        bool // direct loads and stores, over NVLink or PCIe
	NativeAtomics bool // atomics run natively: on NVIDIA systems, an NVLink
}

// Peer returns how GPUs i and j are linked (both ways alike on NVIDIA
// systems; this reads i's side).
func Peer(i, j int) (PeerLink, error) {
	if err := cuda.LoadDriver(); err != nil {
		return PeerLink{}, err
	}
	var l PeerLink
	var err error
	if l.Access, err = cuda.CanAccessPeer(i, j); err != nil || !l.Access {
		return l, err
	}
	l.NativeAtomics, err = cuda.PeerNativeAtomics(i, j)
	return l, err
}

// EnablePeerAccess lets each device of devs reach the others' memory
// directly (what cuSOLVERMg expects of the GPUs it is given).
func EnablePeerAccess(devs ...*Device) error {
	for _, d := range devs {
		for _, p := range devs {
			if p == d {
				continue
			}
			if err := d.Do(func() error { return cuda.CtxEnablePeerAccess(p.ctx) }); err != nil {
				return fmt.Errorf("gpu: peer access from %v to %v: %w", d, p, err)
			}
		}
	}
	return nil
}
