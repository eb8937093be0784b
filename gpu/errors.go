package gpu

import (
	"errors"
	"fmt"

	"github.com/mwmm/mwmm/gpu/internal/cuda"
)

// Why there is no GPU, or part of CUDA is missing. Errors from this package
// wrap these: test them with errors.Is.
var (
	// ErrNoDriver: libcuda.so.1 is not on the machine (no NVIDIA driver).
	ErrNoDriver = cuda.ErrNoDriver
	// ErrDriverTooOld: the driver predates CUDA 13.0.
	ErrDriverTooOld = cuda.ErrDriverTooOld
	// ErrNoDevice: a driver but no GPU it can use (or no device of that index).
	ErrNoDevice = cuda.ErrNoDevice
	// ErrNoNVRTC: libnvrtc.so.13 is missing, so kernels cannot be compiled.
	ErrNoNVRTC = cuda.ErrNoNVRTC
	// ErrNoCublasLt: libcublasLt.so.13 is missing.
	ErrNoCublasLt = cuda.ErrNoCublasLt
	// ErrClosed: the Device was closed.
	ErrClosed = errors.New("gpu: device is closed")
	// ErrNoAlgorithm: cuBLASLt cannot do a Matmul of that shape, layout
	// and types.
	ErrNoAlgorithm = errors.New("cuBLASLt has no algorithm")
)

// Error is a failed CUDA, NVRTC or cuBLASLt call, e.g.
// "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory". Get it with
// errors.As to read the code.
type Error = cuda.Error

// A CompileError is a kernel that NVRTC did not compile; Log is NVRTC's
// message, with the file name and line of each error.
type CompileError struct {
	Name string // the kernel file, e.g. "poison.cu"
	Log  string
	Err  error // NVRTC's status
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("gpu: compiling %s: %v\n%s", e.Name, e.Err, e.Log)
}

func (e *CompileError) Unwrap() error { return e.Err }
