package gpu

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/mwmm/mwmm/gpu/internal/cuda"
)

// A Buffer is device memory. Pass it to kernels (as an argument, or its
// Ptr) and to Lt.Matmul; fill and read it with Device.Upload and
// Device.Download. Free it when done; it must not be used afterwards.
type Buffer struct {
	d        *Device
	ptr      uintptr
	n        int
	id       uint64
	cleanup  runtime.Cleanup
	freeOnce sync.Once
	freeErr  error
}

// Bytes returns the buffer's size in bytes.
func (b *Buffer) Bytes() int { return b.n }

// Ptr returns the buffer's device address (a CUdeviceptr), for kernel
// arguments and pointer arithmetic.
func (b *Buffer) Ptr() uintptr { return b.ptr }

// Device returns the device the buffer is on.
func (b *Buffer) Device() *Device { return b.d }

// Free frees the buffer's memory; calling it again does nothing.
func (b *Buffer) Free() error {
	if b == nil {
		return nil
	}
	b.freeOnce.Do(func() {
		b.cleanup.Stop()
		b.freeErr = b.d.releaseOnce(b.id)
	})
	return b.freeErr
}

// freeAll frees each buffer (Free takes nil ones too) and joins the errors.
func FreeAll(bufs ...*Buffer) error {
	var errs []error
	for _, b := range bufs {
		errs = append(errs, b.Free())
	}
	return errors.Join(errs...)
}

// Alloc allocates bytes of device memory, aligned to at least 256 bytes.
// The contents are undefined: see Memset32.
func (d *Device) Alloc(bytes int) (*Buffer, error) {
	if bytes <= 0 {
		return nil, fmt.Errorf("gpu: Alloc(%d): the size must be positive", bytes)
	}
	b := &Buffer{d: d, n: bytes}
	err := d.Do(func() error {
		p, err := cuda.MemAlloc(uintptr(bytes))
		if err != nil {
			var ce *Error
			if errors.As(err, &ce) && ce.Code == cuda.ErrorOutOfMemory {
				if free, _, e := cuda.MemGetInfo(); e == nil {
					return fmt.Errorf("%s free of %s: %w", size(free), size(d.total), err)
				}
			}
			return err
		}
		b.ptr = p
		b.id = d.track(func() error { return cuda.MemFree(p) })
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("gpu: allocating %s on %v: %w", size(uint64(bytes)), d, err)
	}
	// The safety net for a lost buffer: it must not refer to b, or b would
	// never be unreachable.
	b.cleanup = runtime.AddCleanup(b, func(r resource) { r.d.releaseLater(r.id) }, resource{d, b.id})
	return b, nil
}

type resource struct {
	d  *Device
	id uint64
}

// View is the part of b from byte off on, freed with b (its own Free does
// nothing): sub-matrices for the kernels and libraries that take a Buffer.
func (b *Buffer) View(off int) *Buffer {
	v := &Buffer{d: b.d, ptr: b.ptr + uintptr(off), n: b.n - off, id: b.id}
	v.freeOnce.Do(func() {})
	return v
}

// HostBytes returns the size in bytes of a slice that Upload and Download
// take, or why it is not one.
func HostBytes(x any) (int, error) {
	_, n, err := hostBytes(x)
	return n, err
}

// hostBytes returns the address and byte length of a slice of one of the
// element types Upload and Download take.
func hostBytes(x any) (unsafe.Pointer, int, error) {
	switch s := x.(type) {
	case []float32:
		return sliceBytes(s)
	case []float64:
		return sliceBytes(s)
	case []uint8:
		return sliceBytes(s)
	case []int8:
		return sliceBytes(s)
	case []uint16:
		return sliceBytes(s)
	case []int16:
		return sliceBytes(s)
	case []uint32:
		return sliceBytes(s)
	case []int32:
		return sliceBytes(s)
	case []uint64:
		return sliceBytes(s)
	case []int64:
		return sliceBytes(s)
	}
	return nil, 0, fmt.Errorf("gpu: cannot copy a %T: use a slice of float32, float64, uint8, int8, uint16, int16, uint32, int32, uint64 or int64", x)
}

func sliceBytes[T any](s []T) (unsafe.Pointer, int, error) {
	if len(s) == 0 {
		return nil, 0, nil
	}
	return unsafe.Pointer(&s[0]), len(s) * int(unsafe.Sizeof(s[0])), nil
}

// checkBuffer reports a nil buffer or one of another device.
func (d *Device) checkBuffer(what string, b *Buffer) error {
	if b == nil {
		return fmt.Errorf("gpu: %s: nil buffer", what)
	}
	if b.d != d {
		return fmt.Errorf("gpu: %s: the buffer is on %v, not %v", what, b.d, d)
	}
	return nil
}

// liveBuffer reports a freed buffer; on the worker.
func (d *Device) liveBuffer(what string, b *Buffer) error {
	if !d.live(b.id) {
		return fmt.Errorf("gpu: %s: the buffer was freed", what)
	}
	return nil
}

// Upload copies the slice src (see hostBytes for the element types) to the
// start of buf and returns when src may be reused.
func (d *Device) Upload(buf *Buffer, src any) error {
	p, n, err := hostBytes(src)
	if err != nil {
		return err
	}
	if err := d.checkBuffer("Upload", buf); err != nil {
		return err
	}
	if n > buf.n {
		return fmt.Errorf("gpu: Upload: %d bytes do not fit a buffer of %d", n, buf.n)
	}
	if n == 0 {
		return nil
	}
	return d.Do(func() error {
		if err := d.liveBuffer("Upload", buf); err != nil {
			return err
		}
		var pin runtime.Pinner
		defer pin.Unpin()
		pin.Pin(p)
		return cuda.MemcpyHtoD(buf.ptr, p, uintptr(n))
	})
}

// Download copies the start of buf into the slice dst (as many bytes as dst
// holds), after the work queued before it has finished.
func (d *Device) Download(dst any, buf *Buffer) error {
	p, n, err := hostBytes(dst)
	if err != nil {
		return err
	}
	if err := d.checkBuffer("Download", buf); err != nil {
		return err
	}
	if n > buf.n {
		return fmt.Errorf("gpu: Download: a buffer of %d bytes cannot fill %d", buf.n, n)
	}
	if n == 0 {
		return nil
	}
	return d.Do(func() error {
		if err := d.liveBuffer("Download", buf); err != nil {
			return err
		}
		var pin runtime.Pinner
		defer pin.Unpin()
		pin.Pin(p)
		return cuda.MemcpyDtoH(p, buf.ptr, uintptr(n))
	})
}

// Copy copies all of src to the start of dst, on the device.
func (d *Device) Copy(dst, src *Buffer) error {
	if err := errors.Join(d.checkBuffer("Copy", dst), d.checkBuffer("Copy", src)); err != nil {
		return err
	}
	if src.n > dst.n {
		return fmt.Errorf("gpu: Copy: %d bytes do not fit a buffer of %d", src.n, dst.n)
	}
	return d.Do(func() error {
		if err := errors.Join(d.liveBuffer("Copy", dst), d.liveBuffer("Copy", src)); err != nil {
			return err
		}
		return cuda.MemcpyDtoD(dst.ptr, src.ptr, uintptr(src.n))
	})
}

// CopyPeer copies all of src, a buffer of another device, to the start of
// dst, device to device (over NVLink where the GPUs have it and peer
// access is on: EnablePeerAccess), and returns when it is done. Work
// queued on src's device must be finished first (Device.Sync).
func CopyPeer(dst, src *Buffer) error {
	if dst == nil || src == nil {
		return errors.New("gpu: CopyPeer: nil buffer")
	}
	if src.n > dst.n {
		return fmt.Errorf("gpu: CopyPeer: %d bytes do not fit a buffer of %d", src.n, dst.n)
	}
	if err := src.d.Do(func() error { return src.d.liveBuffer("CopyPeer", src) }); err != nil {
		return err
	}
	return dst.d.Do(func() error {
		if err := dst.d.liveBuffer("CopyPeer", dst); err != nil {
			return err
		}
		return cuda.MemcpyDtoD(dst.ptr, src.ptr, uintptr(src.n))
	})
}

// Memset32 sets every 32-bit word of buf to v (math.Float32bits(x) for a
// float32 x); the buffer's size must be a multiple of 4.
func (d *Device) Memset32(buf *Buffer, v uint32) error {
	if err := d.checkBuffer("Memset32", buf); err != nil {
		return err
	}
	if buf.n%4 != 0 {
		return fmt.Errorf("gpu: Memset32: a buffer of %d bytes is not made of 32-bit words", buf.n)
	}
	return d.Do(func() error {
		if err := d.liveBuffer("Memset32", buf); err != nil {
			return err
		}
		return cuda.MemsetD32(buf.ptr, v, uintptr(buf.n/4))
	})
}

// Memset8 sets every byte of buf to v.
func (d *Device) Memset8(buf *Buffer, v uint8) error {
	if err := d.checkBuffer("Memset8", buf); err != nil {
		return err
	}
	return d.Do(func() error {
		if err := d.liveBuffer("Memset8", buf); err != nil {
			return err
		}
		return cuda.MemsetD8(buf.ptr, v, uintptr(buf.n))
	})
}

// size writes a byte count for people.
func size(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// CopyRect queues on s (nil: the default stream) a copy of a rows×cols
// block of elem-byte elements between column-major device matrices:
// from src (leading dimension lds elements) to dst (ldd). A column of
// the block is contiguous, so this is one pitched copy.
func (d *Device) CopyRect(dst *Buffer, ldd int, src *Buffer, lds, rows, cols, elem int, s *Stream) error {
	if err := errors.Join(d.checkBuffer("CopyRect", dst), d.checkBuffer("CopyRect", src)); err != nil {
		return err
	}
	if rows < 0 || cols < 0 || elem <= 0 || ldd < rows || lds < rows {
		return fmt.Errorf("gpu: CopyRect: a %d×%d block does not fit leading dimensions %d and %d", rows, cols, lds, ldd)
	}
	if rows == 0 || cols == 0 {
		return nil
	}
	last := func(ld int) int { return ((cols-1)*ld + rows) * elem }
	if last(lds) > src.n || last(ldd) > dst.n {
		return fmt.Errorf("gpu: CopyRect: a %d×%d block runs past the buffers (%d and %d bytes)", rows, cols, src.n, dst.n)
	}
	return d.Do(func() error {
		if err := errors.Join(d.liveBuffer("CopyRect", dst), d.liveBuffer("CopyRect", src)); err != nil {
			return err
		}
		sh, err := s.Handle(d)
		if err != nil {
			return err
		}
		e := uintptr(elem)
		return cuda.Memcpy2DDtoDAsync(dst.ptr, uintptr(ldd)*e, src.ptr, uintptr(lds)*e, uintptr(rows)*e, uintptr(cols), sh)
	})
}
