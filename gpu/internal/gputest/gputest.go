// Package gputest holds the helpers of the GPU packages' tests: skipping
// without a GPU, and device memory and kernels that fail the test rather
// than return errors.
package gputest

import (
	"sync"
	"testing"

	"github.com/mwmm/mwmm/gpu"
)

// Require skips the test when there is no usable GPU.
func Require(tb testing.TB) {
	tb.Helper()
	if err := gpu.Available(); err != nil {
		tb.Skipf("no GPU: %v", err)
	}
}

// device is the first GPU, opened once for a test binary.
var device struct {
	once sync.Once
	d    *gpu.Device
	err  error
}

// Device returns the first GPU, opened once; it skips the test when there
// is no usable GPU.
func Device(tb testing.TB) *gpu.Device {
	tb.Helper()
	Require(tb)
	device.once.Do(func() { device.d, device.err = gpu.Open() })
	if device.err != nil {
		tb.Fatal(device.err)
	}
	return device.d
}

// Alloc allocates bytes on d, freed at the end of the test.
func Alloc(tb testing.TB, d *gpu.Device, bytes int) *gpu.Buffer {
	tb.Helper()
	b, err := d.Alloc(bytes)
	if err != nil {
		tb.Fatalf("Alloc(%d): %v", bytes, err)
	}
	tb.Cleanup(func() { b.Free() })
	return b
}

// Upload copies the slice src into a new buffer on d.
func Upload(tb testing.TB, d *gpu.Device, src any) *gpu.Buffer {
	tb.Helper()
	n, err := gpu.HostBytes(src)
	if err != nil {
		tb.Fatal(err)
	}
	b := Alloc(tb, d, max(n, 1))
	if err := d.Upload(b, src); err != nil {
		tb.Fatalf("Upload: %v", err)
	}
	return b
}

// Function compiles src on d and returns its kernel name.
func Function(tb testing.TB, d *gpu.Device, src gpu.Source, name string) *gpu.Function {
	tb.Helper()
	m, err := d.Module(src)
	if err != nil {
		tb.Fatalf("Module(%q): %v", src.Name, err)
	}
	f, err := m.Function(name)
	if err != nil {
		tb.Fatalf("Function(%q): %v", name, err)
	}
	return f
}

// RequireGPUs skips the test on a machine with fewer than n GPUs.
func RequireGPUs(tb testing.TB, n int) {
	tb.Helper()
	Require(tb)
	if c, err := gpu.Count(); err != nil || c < n {
		tb.Skipf("the test needs %d GPUs; the machine has %d (%v)", n, c, err)
	}
}
