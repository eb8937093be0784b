package cuda

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// DriverFile is the driver library's soname: the driver installs it, the
// CUDA toolkit does not (libcuda.so in the toolkit is a stub).
const DriverFile = "libcuda.so.1"

// CUdevice_attribute values (cuda.h, enum CUdevice_attribute_enum).
const (
	AttrMultiprocessorCount          = 16 // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
	AttrComputeCapabilityMajor       = 75 // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
	AttrComputeCapabilityMinor       = 76 // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
	AttrMaxSharedMemoryPerBlockOptin = 97 // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
)

// CUfunction_attribute values (cuda.h, enum CUfunction_attribute_enum).
const FuncAttrMaxDynamicSharedSizeBytes = 8 // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES

// Flags (cuda.h, CUstream_flags and CUevent_flags).
const (
	StreamNonBlocking = 0x1 // CU_STREAM_NON_BLOCKING: no implicit sync with stream 0
	EventDefault      = 0x0 // CU_EVENT_DEFAULT: records timing
)

// CUresult values that callers test for (cuda.h, enum cudaError_enum).
const (
	ErrorOutOfMemory = 2   // CUDA_ERROR_OUT_OF_MEMORY
	ErrorNoDevice    = 100 // CUDA_ERROR_NO_DEVICE
)

type result = int32

// drv holds the driver functions. The versioned names are the ones cuda.h
// maps the plain names to (#define cuMemAlloc cuMemAlloc_v2, ...): the
// unversioned symbols are the old 32-bit ABIs.
var drv struct {
	cuInit                      func(flags uint32) result
	cuDriverGetVersion          func(v *int32) result
	cuGetErrorName              func(r result, s **byte) result
	cuGetErrorString            func(r result, s **byte) result
	cuDeviceGetCount            func(n *int32) result
	cuDeviceGet                 func(dev *int32, ordinal int32) result
	cuDeviceGetName             func(name *byte, n int32, dev int32) result
	cuDeviceGetAttribute        func(v *int32, attr int32, dev int32) result
	cuDeviceTotalMem            func(bytes *uintptr, dev int32) result
	cuDevicePrimaryCtxRetain    func(ctx *uintptr, dev int32) result
	cuDevicePrimaryCtxRelease   func(dev int32) result
	cuCtxSetCurrent             func(ctx uintptr) result
	cuCtxSynchronize            func() result
	cuMemGetInfo                func(free, total *uintptr) result
	cuMemAlloc                  func(p *uintptr, n uintptr) result
	cuMemFree                   func(p uintptr) result
	cuMemcpyHtoD                func(dst uintptr, src unsafe.Pointer, n uintptr) result
	cuMemcpyDtoH                func(dst unsafe.Pointer, src uintptr, n uintptr) result
	cuMemcpyDtoD                func(dst, src uintptr, n uintptr) result
	cuMemsetD8                  func(p uintptr, v uint8, n uintptr) result
	cuMemsetD32                 func(p uintptr, v uint32, n uintptr) result
	cuModuleLoadData            func(m *uintptr, image unsafe.Pointer) result
	cuModuleUnload              func(m uintptr) result
	cuModuleGetFunction         func(f *uintptr, m uintptr, name *byte) result
	cuFuncSetAttribute          func(f uintptr, attr int32, v int32) result
	cuLaunchKernel              func(f uintptr, gx, gy, gz, bx, by, bz, shared uint32, stream uintptr, params, extra unsafe.Pointer) result
	cuLaunchCooperativeKernel   func(f uintptr, gx, gy, gz, bx, by, bz, shared uint32, stream uintptr, params unsafe.Pointer) result
	cuStreamCreate              func(s *uintptr, flags uint32) result
	cuStreamCreateWithPriority  func(s *uintptr, flags uint32, priority int32) result
	cuCtxGetStreamPriorityRange func(least, greatest *int32) result
	cuStreamSynchronize         func(s uintptr) result
	cuStreamDestroy             func(s uintptr) result
	cuEventCreate               func(e *uintptr, flags uint32) result
	cuEventRecord               func(e, s uintptr) result
	cuEventSynchronize          func(e uintptr) result
	cuEventElapsedTime          func(ms *float32, start, end uintptr) result
	cuEventDestroy              func(e uintptr) result
	cuStreamWaitEvent           func(s, e uintptr, flags uint32) result
	cuStreamQuery               func(s uintptr) result
	cuMemcpyDtoDAsync           func(dst, src uintptr, n uintptr, s uintptr) result
	cuMemcpy2DAsync             func(p *Memcpy2D, s uintptr) result
	cuDeviceCanAccessPeer       func(can *int32, dev, peer int32) result
	cuCtxEnablePeerAccess       func(peer uintptr, flags uint32) result
	cuDeviceGetP2PAttribute     func(v *int32, attr int32, src, dst int32) result
	// CUDA 12.0 and newer; nil before.
	cuTensorMapEncodeTiled func(tm unsafe.Pointer, dtype, rank uint32, addr uintptr, dims, strides, box, elemStrides unsafe.Pointer,
		interleave, swizzle, l2, oobFill uint32) result
}

var (
	driverOnce    sync.Once
	driverErr     error
	driverVersion int
)

// LoadDriver loads libcuda.so.1, checks its version and calls cuInit. It
// does the work once and returns the same result on every call.
func LoadDriver() error {
	driverOnce.Do(func() { driverErr = loadDriver() })
	return driverErr
}

func loadDriver() error {
	h, _, err := open(DriverFile, purego.RTLD_NOW|purego.RTLD_GLOBAL, ErrNoDriver,
		"is this a machine with an NVIDIA GPU and driver?")
	if err != nil {
		return err
	}
	d := &drv
	err = bind(DriverFile, h, []binding{
		fn(&d.cuInit, "cuInit"),
		fn(&d.cuDriverGetVersion, "cuDriverGetVersion"),
		fn(&d.cuGetErrorName, "cuGetErrorName"),
		fn(&d.cuGetErrorString, "cuGetErrorString"),
		fn(&d.cuDeviceGetCount, "cuDeviceGetCount"),
		fn(&d.cuDeviceGet, "cuDeviceGet"),
		fn(&d.cuDeviceGetName, "cuDeviceGetName"),
		fn(&d.cuDeviceGetAttribute, "cuDeviceGetAttribute"),
		fn(&d.cuDeviceTotalMem, "cuDeviceTotalMem_v2"),
		fn(&d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
		fn(&d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
		fn(&d.cuCtxSetCurrent, "cuCtxSetCurrent"),
		fn(&d.cuCtxSynchronize, "cuCtxSynchronize"),
		fn(&d.cuMemGetInfo, "cuMemGetInfo_v2"),
		fn(&d.cuMemAlloc, "cuMemAlloc_v2"),
		fn(&d.cuMemFree, "cuMemFree_v2"),
		fn(&d.cuMemcpyHtoD, "cuMemcpyHtoD_v2"),
		fn(&d.cuMemcpyDtoH, "cuMemcpyDtoH_v2"),
		fn(&d.cuMemcpyDtoD, "cuMemcpyDtoD_v2"),
		fn(&d.cuMemsetD8, "cuMemsetD8_v2"),
		fn(&d.cuMemsetD32, "cuMemsetD32_v2"),
		fn(&d.cuModuleLoadData, "cuModuleLoadData"),
		fn(&d.cuModuleUnload, "cuModuleUnload"),
		fn(&d.cuModuleGetFunction, "cuModuleGetFunction"),
		fn(&d.cuFuncSetAttribute, "cuFuncSetAttribute"),
		fn(&d.cuLaunchKernel, "cuLaunchKernel"),
		optional(&d.cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel"),
		fn(&d.cuStreamCreate, "cuStreamCreate"),
		optional(&d.cuStreamCreateWithPriority, "cuStreamCreateWithPriority"),
		optional(&d.cuCtxGetStreamPriorityRange, "cuCtxGetStreamPriorityRange"),
		fn(&d.cuStreamSynchronize, "cuStreamSynchronize"),
		fn(&d.cuStreamDestroy, "cuStreamDestroy_v2"),
		fn(&d.cuEventCreate, "cuEventCreate"),
		fn(&d.cuEventRecord, "cuEventRecord"),
		fn(&d.cuEventSynchronize, "cuEventSynchronize"),
		// CUDA 12.8 added _v2 and CUDA 13's cuda.h maps the plain name
		// to it; older drivers (and some Jetson ones) have only the plain
		// name, with the same signature.
		fn(&d.cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
		fn(&d.cuEventDestroy, "cuEventDestroy_v2"),
		fn(&d.cuStreamWaitEvent, "cuStreamWaitEvent"),
		fn(&d.cuStreamQuery, "cuStreamQuery"),
		fn(&d.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
		fn(&d.cuMemcpy2DAsync, "cuMemcpy2DAsync_v2"),
		fn(&d.cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer"),
		optional(&d.cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess"),
		optional(&d.cuDeviceGetP2PAttribute, "cuDeviceGetP2PAttribute"),
		optional(&d.cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled"),
	})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoDriver, err)
	}
	var v int32
	if r := d.cuDriverGetVersion(&v); r != 0 {
		return driverError("cuDriverGetVersion", r)
	}
	driverVersion = int(v)
	if v < MinDriverVersion {
		return fmt.Errorf("%w: the driver supports CUDA %s, mwmm needs CUDA %s or newer (driver 580 or newer)",
			ErrDriverTooOld, VersionString(int(v)), VersionString(MinDriverVersion))
	}
	if r := d.cuInit(0); r != 0 {
		err := driverError("cuInit", r)
		if r == ErrorNoDevice {
			return fmt.Errorf("%w: %v", ErrNoDevice, err)
		}
		return err
	}
	return nil
}

// VersionString writes a CUDA version number (1000*major + 10*minor, as
// cuDriverGetVersion reports it) as "major.minor".
func VersionString(v int) string {
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}

// driverError makes the *Error for a CUresult, with the driver's name and
// description of the code.
func driverError(call string, r result) error {
	e := &Error{Call: call, Code: int(r), Name: "CUDA_ERROR_UNKNOWN_CODE"}
	var s *byte
	if drv.cuGetErrorName != nil && drv.cuGetErrorName(r, &s) == 0 {
		e.Name = goString(s)
	}
	s = nil
	if drv.cuGetErrorString != nil && drv.cuGetErrorString(r, &s) == 0 {
		e.Message = goString(s)
	}
	return e
}

func check(call string, r result) error {
	if r != 0 {
		return driverError(call, r)
	}
	return nil
}

// DriverVersion returns the CUDA version the driver supports (13000 for
// 13.0); LoadDriver must have succeeded.
func DriverVersion() int { return driverVersion }

// DeviceCount returns the number of CUDA devices.
func DeviceCount() (int, error) {
	var n int32
	err := check("cuDeviceGetCount", drv.cuDeviceGetCount(&n))
	return int(n), err
}

// DeviceGet returns the handle of device ordinal i.
func DeviceGet(i int) (int32, error) {
	var d int32
	err := check("cuDeviceGet", drv.cuDeviceGet(&d, int32(i)))
	return d, err
}

// DeviceGetName returns the device's name, e.g. "NVIDIA H100 80GB HBM3".
func DeviceGetName(dev int32) (string, error) {
	var b [256]byte
	if err := check("cuDeviceGetName", drv.cuDeviceGetName(&b[0], int32(len(b)), dev)); err != nil {
		return "", err
	}
	return goString(&b[0]), nil
}

// DeviceGetAttribute returns one of the Attr... values of the device.
func DeviceGetAttribute(dev int32, attr int32) (int, error) {
	var v int32
	err := check("cuDeviceGetAttribute", drv.cuDeviceGetAttribute(&v, attr, dev))
	return int(v), err
}

// DeviceTotalMem returns the device's memory in bytes.
func DeviceTotalMem(dev int32) (uint64, error) {
	var n uintptr
	err := check("cuDeviceTotalMem_v2", drv.cuDeviceTotalMem(&n, dev))
	return uint64(n), err
}

// PrimaryCtxRetain returns the device's primary context, the one the CUDA
// runtime (and so cuBLASLt) uses too, creating it on first use.
func PrimaryCtxRetain(dev int32) (uintptr, error) {
	var c uintptr
	err := check("cuDevicePrimaryCtxRetain", drv.cuDevicePrimaryCtxRetain(&c, dev))
	return c, err
}

// PrimaryCtxRelease releases one retain of the primary context.
func PrimaryCtxRelease(dev int32) error {
	return check("cuDevicePrimaryCtxRelease_v2", drv.cuDevicePrimaryCtxRelease(dev))
}

// CtxSetCurrent binds ctx to the calling OS thread (0 unbinds).
func CtxSetCurrent(ctx uintptr) error {
	return check("cuCtxSetCurrent", drv.cuCtxSetCurrent(ctx))
}

// CtxSynchronize waits for all work of the current context.
func CtxSynchronize() error { return check("cuCtxSynchronize", drv.cuCtxSynchronize()) }

// MemGetInfo returns the free and total memory of the current context's device.
func MemGetInfo() (free, total uint64, err error) {
	var f, t uintptr
	err = check("cuMemGetInfo_v2", drv.cuMemGetInfo(&f, &t))
	return uint64(f), uint64(t), err
}

// MemAlloc allocates n bytes of device memory (aligned to at least 256 bytes).
func MemAlloc(n uintptr) (uintptr, error) {
	var p uintptr
	err := check("cuMemAlloc_v2", drv.cuMemAlloc(&p, n))
	return p, err
}

// MemFree frees memory from MemAlloc.
func MemFree(p uintptr) error { return check("cuMemFree_v2", drv.cuMemFree(p)) }

// MemcpyHtoD copies n bytes from host src to device dst; src must stay put
// (pinned) during the call, which returns when src may be reused.
func MemcpyHtoD(dst uintptr, src unsafe.Pointer, n uintptr) error {
	return check("cuMemcpyHtoD_v2", drv.cuMemcpyHtoD(dst, src, n))
}

// MemcpyDtoH copies n bytes from device src to host dst (pinned), waiting
// for the copy to finish.
func MemcpyDtoH(dst unsafe.Pointer, src uintptr, n uintptr) error {
	return check("cuMemcpyDtoH_v2", drv.cuMemcpyDtoH(dst, src, n))
}

// MemcpyDtoD copies n bytes between device buffers.
func MemcpyDtoD(dst, src uintptr, n uintptr) error {
	return check("cuMemcpyDtoD_v2", drv.cuMemcpyDtoD(dst, src, n))
}

// MemsetD8 sets n bytes at p to v.
func MemsetD8(p uintptr, v uint8, n uintptr) error {
	return check("cuMemsetD8_v2", drv.cuMemsetD8(p, v, n))
}

// MemsetD32 sets n 32-bit words at p to v.
func MemsetD32(p uintptr, v uint32, n uintptr) error {
	return check("cuMemsetD32_v2", drv.cuMemsetD32(p, v, n))
}

// ModuleLoadData loads a CUBIN (or PTX) image into the current context.
func ModuleLoadData(image []byte) (uintptr, error) {
	if len(image) == 0 {
		return 0, errors.New("cuModuleLoadData: empty image")
	}
	// The driver takes what is not an ELF file for PTX text and reads it
	// up to a NUL: make sure there is one.
	if image[len(image)-1] != 0 {
		image = append(image[:len(image):len(image)], 0)
	}
	var m uintptr
	err := check("cuModuleLoadData", drv.cuModuleLoadData(&m, unsafe.Pointer(&image[0])))
	return m, err
}

// ModuleUnload unloads a module.
func ModuleUnload(m uintptr) error { return check("cuModuleUnload", drv.cuModuleUnload(m)) }

// ModuleGetFunction returns the kernel name (its extern "C" name) of module m.
func ModuleGetFunction(m uintptr, name string) (uintptr, error) {
	var f uintptr
	b := cString(name)
	err := check("cuModuleGetFunction", drv.cuModuleGetFunction(&f, m, &b[0]))
	return f, err
}

// FuncSetAttribute sets a CUfunction_attribute of a kernel.
func FuncSetAttribute(f uintptr, attr int32, v int) error {
	return check("cuFuncSetAttribute", drv.cuFuncSetAttribute(f, attr, int32(v)))
}

// LaunchKernel launches f. params is a void** array with one pointer per
// kernel parameter; it and what it points to must be pinned for the call
// (the driver copies the values before returning).
func LaunchKernel(f uintptr, grid, block [3]uint32, shared uint32, stream uintptr, params unsafe.Pointer) error {
	return check("cuLaunchKernel", drv.cuLaunchKernel(f, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, stream, params, nil))
}

// LaunchCooperativeKernel is LaunchKernel for a grid whose blocks wait
// for each other: the driver runs it only with every block resident at
// once, or fails.
func LaunchCooperativeKernel(f uintptr, grid, block [3]uint32, shared uint32, stream uintptr, params unsafe.Pointer) error {
	if drv.cuLaunchCooperativeKernel == nil {
		return errors.New("cuLaunchCooperativeKernel: not in this driver")
	}
	return check("cuLaunchCooperativeKernel", drv.cuLaunchCooperativeKernel(f, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, stream, params))
}

// TensorMap is a CUtensorMap: the copy engine's description of a tiled
// view of a matrix, passed to kernels by value (128 bytes, 64-aligned).
type TensorMap struct {
	_ [0]uint64
	b [128]byte
}

// Bytes returns the map's storage, for a kernel parameter.
func (t *TensorMap) Bytes() unsafe.Pointer { return unsafe.Pointer(&t.b[0]) }

// Tensor-map settings (cuda.h, CUtensorMapDataType and CUtensorMapSwizzle).
const (
	TensorFloat32   = 7 // CU_TENSOR_MAP_DATA_TYPE_FLOAT32
	SwizzleNone     = 0 // CU_TENSOR_MAP_SWIZZLE_NONE
	Swizzle128B     = 3 // CU_TENSOR_MAP_SWIZZLE_128B
	l2Promotion128B = 2 // CU_TENSOR_MAP_L2_PROMOTION_L2_128B
	oobFillZero     = 0 // CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: zeros outside
	interleaveNone  = 0 // CU_TENSOR_MAP_INTERLEAVE_NONE
)

// EncodeTiled2D describes a 2-D matrix at addr of rows×cols elements, rows
// strideBytes apart (columns contiguous), read in boxes of boxRows×boxCols
// with zeros outside the matrix.
func EncodeTiled2D(t *TensorMap, dtype uint32, addr uintptr, rows, cols, strideBytes uint64, boxRows, boxCols uint32, swizzle uint32) error {
	if drv.cuTensorMapEncodeTiled == nil {
		return errors.New("cuTensorMapEncodeTiled: the driver has no tensor maps (CUDA 12.0 or newer needed)")
	}
	dims := [2]uint64{cols, rows}
	strides := [1]uint64{strideBytes}
	box := [2]uint32{boxCols, boxRows}
	one := [2]uint32{1, 1}
	return check("cuTensorMapEncodeTiled", drv.cuTensorMapEncodeTiled(t.Bytes(), dtype, 2, addr,
		unsafe.Pointer(&dims[0]), unsafe.Pointer(&strides[0]), unsafe.Pointer(&box[0]), unsafe.Pointer(&one[0]),
		interleaveNone, swizzle, l2Promotion128B, oobFillZero))
}

// StreamCreate creates a stream with the given flags (StreamNonBlocking).
func StreamCreate(flags uint32) (uintptr, error) {
	var s uintptr
	err := check("cuStreamCreate", drv.cuStreamCreate(&s, flags))
	return s, err
}

// StreamCreateUrgent creates a stream of the context's greatest priority
// (its blocks are scheduled before those of ordinary streams as
// multiprocessors free up), or an ordinary one where the driver has no
// priorities.
func StreamCreateUrgent(flags uint32) (uintptr, error) {
	if drv.cuStreamCreateWithPriority == nil || drv.cuCtxGetStreamPriorityRange == nil {
		return StreamCreate(flags)
	}
	var least, greatest int32
	if err := check("cuCtxGetStreamPriorityRange", drv.cuCtxGetStreamPriorityRange(&least, &greatest)); err != nil {
		return 0, err
	}
	var s uintptr
	err := check("cuStreamCreateWithPriority", drv.cuStreamCreateWithPriority(&s, flags, greatest))
	return s, err
}

// StreamSynchronize waits for the work queued on s.
func StreamSynchronize(s uintptr) error {
	return check("cuStreamSynchronize", drv.cuStreamSynchronize(s))
}

// StreamDestroy destroys s once its work is done.
func StreamDestroy(s uintptr) error { return check("cuStreamDestroy_v2", drv.cuStreamDestroy(s)) }

// EventCreate creates an event (EventDefault records time).
func EventCreate(flags uint32) (uintptr, error) {
	var e uintptr
	err := check("cuEventCreate", drv.cuEventCreate(&e, flags))
	return e, err
}

// EventRecord records e in stream s.
func EventRecord(e, s uintptr) error { return check("cuEventRecord", drv.cuEventRecord(e, s)) }

// EventSynchronize waits until e has happened.
func EventSynchronize(e uintptr) error {
	return check("cuEventSynchronize", drv.cuEventSynchronize(e))
}

// EventElapsedTime returns the milliseconds between two recorded events
// (resolution about half a microsecond).
func EventElapsedTime(start, end uintptr) (float32, error) {
	var ms float32
	err := check("cuEventElapsedTime", drv.cuEventElapsedTime(&ms, start, end))
	return ms, err
}

// EventDestroy destroys e.
func EventDestroy(e uintptr) error { return check("cuEventDestroy_v2", drv.cuEventDestroy(e)) }

// StreamWaitEvent makes later work on s wait for e.
func StreamWaitEvent(s, e uintptr) error {
	return check("cuStreamWaitEvent", drv.cuStreamWaitEvent(s, e, 0))
}

// errorNotReady is CUDA_ERROR_NOT_READY: work still queued.
const errorNotReady = 600

// StreamDone reports whether the work queued on s has finished.
func StreamDone(s uintptr) (bool, error) {
	r := drv.cuStreamQuery(s)
	if r == errorNotReady {
		return false, nil
	}
	return r == 0, check("cuStreamQuery", r)
}

// MemcpyDtoDAsync queues a copy of n bytes between device buffers on s.
func MemcpyDtoDAsync(dst, src, n, s uintptr) error {
	return check("cuMemcpyDtoDAsync_v2", drv.cuMemcpyDtoDAsync(dst, src, n, s))
}

// Memcpy2D is CUDA_MEMCPY2D for device-to-device copies of a pitched
// block: Height rows of WidthBytes, rows Pitch bytes apart.
type Memcpy2D struct {
	SrcXInBytes, SrcY uintptr
	SrcMemoryType     uint32
	_                 uint32
	SrcHost           uintptr
	SrcDevice         uintptr
	SrcArray          uintptr
	SrcPitch          uintptr
	DstXInBytes, DstY uintptr
	DstMemoryType     uint32
	_                 uint32
	DstHost           uintptr
	DstDevice         uintptr
	DstArray          uintptr
	DstPitch          uintptr
	WidthInBytes      uintptr
	Height            uintptr
}

const memoryTypeDevice = 2 // CU_MEMORYTYPE_DEVICE

// Memcpy2DDtoDAsync copies height rows of width bytes from src (rows
// spitch bytes apart) to dst (dpitch apart), queued on s.
func Memcpy2DDtoDAsync(dst, dpitch, src, spitch, width, height, s uintptr) error {
	p := Memcpy2D{SrcMemoryType: memoryTypeDevice, SrcDevice: src, SrcPitch: spitch,
		DstMemoryType: memoryTypeDevice, DstDevice: dst, DstPitch: dpitch, WidthInBytes: width, Height: height}
	return check("cuMemcpy2DAsync_v2", drv.cuMemcpy2DAsync(&p, s))
}

// CanAccessPeer reports whether device dev can read and write peer's memory.
func CanAccessPeer(dev, peer int) (bool, error) {
	var c int32
	err := check("cuDeviceCanAccessPeer", drv.cuDeviceCanAccessPeer(&c, int32(dev), int32(peer)))
	return c != 0, err
}

// p2pNativeAtomics is CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED: on
// NVIDIA systems a sign of an NVLink between the two GPUs.
const p2pNativeAtomics = 3

// PeerNativeAtomics reports whether atomics from src to dst run natively.
func PeerNativeAtomics(src, dst int) (bool, error) {
	if drv.cuDeviceGetP2PAttribute == nil {
		return false, nil
	}
	var v int32
	err := check("cuDeviceGetP2PAttribute", drv.cuDeviceGetP2PAttribute(&v, p2pNativeAtomics, int32(src), int32(dst)))
	return v != 0, err
}

// errorPeerAccessAlreadyEnabled is CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED.
const errorPeerAccessAlreadyEnabled = 704

// CtxEnablePeerAccess lets the current context reach peer's memory; done
// before is not an error.
func CtxEnablePeerAccess(peer uintptr) error {
	if drv.cuCtxEnablePeerAccess == nil {
		return errors.New("cuCtxEnablePeerAccess: not in this driver")
	}
	if r := drv.cuCtxEnablePeerAccess(peer, 0); r != errorPeerAccessAlreadyEnabled {
		return check("cuCtxEnablePeerAccess", r)
	}
	return nil
}
