// Package gpu is mwmm's CUDA runtime: devices, device memory, kernels
// compiled at run time and their cache, streams and events, cuBLASLt
// products and the cuBLAS and cuSOLVER handles, all without cgo.
//
// # One binary, CUDA found at run time
//
// mwmm is built with CGO_ENABLED=0, so the same binary runs on a laptop and
// on a GPU server. It links no CUDA library: on first use it opens the
// driver (libcuda.so.1), NVRTC (libnvrtc.so.13) and cuBLASLt
// (libcublasLt.so.13) with dlopen (through purego), from the dynamic
// loader's path or the usual CUDA folders (/usr/local/cuda/lib64,
// $CUDA_PATH/lib64, the LD_LIBRARY_PATH entries, ...); the environment
// variable MWMM_CUDA_LIBS names a folder to try first. It needs a driver
// for CUDA 13.0 or newer (driver 580+).
//
// # Without a GPU
//
// Nothing fails at start-up. Available reports why there is no usable GPU,
// and Open returns the same reason as an error that wraps ErrNoDriver,
// ErrDriverTooOld or ErrNoDevice:
//
//	d, err := gpu.Open()
//	if errors.Is(err, gpu.ErrNoDriver) {
//		// fall back to a CPU engine
//	}
//
// A machine may have the driver but not the toolkit's libraries: then
// Device.Module fails with ErrNoNVRTC and Device.Lt with ErrNoCublasLt,
// while memory and everything else work.
//
// # Threads
//
// A CUDA context is bound to an OS thread. Each Device owns one goroutine,
// locked to its thread, that makes every CUDA call for that device: the
// methods send it the work and wait. So all methods are safe for concurrent
// use, and calls on one device run one at a time, in order. A trip to the
// thread costs 15–20 µs, as long as a small kernel: inside Device.Do the
// package's calls on that device run in Do's own trip, so a sequence of
// launches, library calls, copies and event records wrapped in one Do
// (one step of a factorization, say) pays for one trip. Such a function
// must not wait for another goroutine's call on the same device.
//
// # Memory
//
// A Buffer is device memory, from Device.Alloc. Device.Upload and
// Device.Download copy Go slices ([]float32, []float64, []uint16 holding
// fp16 or bf16 bits, []uint8 holding fp8, []int32, ...) to and from
// it; the copies are synchronous. Free a buffer when done: the garbage
// collector frees a lost one too, eventually, but device memory is scarcer
// than the collector knows.
//
//	d, err := gpu.Open()
//	...
//	defer d.Close()
//	buf, err := d.Alloc(4 * len(x))
//	...
//	defer buf.Free()
//	err = d.Upload(buf, x)
//
// # Kernels
//
// Kernels are CUDA C++ files that each package embeds (the runtime's own
// are in kernels/), written without #include (NVRTC sees no CUDA headers:
// use inline PTX for conversions and MMA). A Source is one such file;
// Device.Module compiles it with NVRTC for the device's architecture
// (Device.Arch: sm_90a on Hopper, where the a-variant unlocks wgmma) and
// caches the CUBIN under os.UserCacheDir()/mwmm/kernels,
// so the compiler runs once per kernel source, options, architecture,
// driver and NVRTC version.
//
//	//go:embed kernels/*.cu
//	var kernelFS embed.FS
//	...
//	m, err := d.Module(gpu.MustSource(kernelFS, "poison"))
//	f, err := m.Function("fill_u32")
//	err = f.Launch([3]uint32{blocks, 1, 1}, [3]uint32{256, 1, 1}, 0, nil, buf, uint32(0xdeadbeef), uint64(n))
//
// Kernel arguments are Go values of the C parameter's exact size: int32,
// uint32, int64, uint64, float32, float64, uintptr, a *Buffer for a
// pointer, or a *Params (ParamsOf) for a struct passed by value: a kernel
// with many arguments takes one struct, mirrored in Go with
// structs.HostLayout and fixed-size fields.
//
// # cuBLASLt
//
// Lt.Matmul computes D = α·op(A)·op(B) + β·C with column-major matrices in
// the cuBLAS convention, for any mix of input, output and compute types
// cuBLASLt supports (SGEMM with pedantic fp32, TF32, fp16 and bf16 tensor
// cores, fp8, DGEMM): the baselines the multiword products are measured
// against.
//
// # Libraries and cuBLAS/cuSOLVER handles
//
// Device.Linalg returns the device's cuBLAS and cuSOLVER handles (made on
// first use, ErrNoCusolver when the libraries are missing). Work that
// calls those libraries, or the driver, directly runs on the device's
// thread through Device.Do; a LaunchQueue gathers many launches and such
// calls into one trip to that thread.
//
// # What is not here
//
// The runtime holds no numerical policy. The GEMM kernels and the
// multiword engine are package gpu/gemm, the dense solver gpu/dense, the
// papers' GPU figures experiment/gpufig (docs/design-notes.md draws the
// layout). Each of those packages embeds its own kernel files and hands
// them to Device.Module as Sources.
package gpu
