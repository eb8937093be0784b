// Package gpu runs mwmm's work on an NVIDIA GPU: device memory, kernels
// compiled at run time, streams and events, and cuBLASLt matrix products.
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
// use, and calls on one device run one at a time, in order.
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
// Kernels are CUDA C++ files in kernels/, embedded in the binary, written
// without #include (NVRTC sees no CUDA headers: use inline PTX for
// conversions and MMA). Device.Module compiles one with NVRTC for the
// device's architecture (Device.Arch: sm_90a on Hopper, where the a-variant
// unlocks wgmma) and caches the CUBIN under os.UserCacheDir()/mwmm/kernels,
// so the compiler runs once per kernel source, options, architecture,
// driver and NVRTC version.
//
//	m, err := d.Module("poison")
//	f, err := m.Function("fill_u32")
//	err = f.Launch([3]uint32{blocks, 1, 1}, [3]uint32{256, 1, 1}, 0, nil, buf, uint32(0xdeadbeef), uint64(n))
//
// Kernel arguments are Go values of the C parameter's exact size: int32,
// uint32, int64, uint64, float32, float64, uintptr, or a *Buffer for a
// pointer.
//
// # The instructions as units
//
// NewUnit (or mma.Open("gpu:mma.sync"), "gpu:wgmma", "gpu:fma") makes one
// matrix instruction an mma.Unit: Dots evaluates a batch of dot products on
// the hardware, eight per instruction tile, for probing and cross-checking
// the models (docs/hardware/hopper.md).
//
// # cuBLASLt
//
// Lt.Matmul computes D = α·op(A)·op(B) + β·C with column-major matrices in
// the cuBLAS convention, for any mix of input, output and compute types
// cuBLASLt supports (SGEMM with pedantic fp32, TF32, fp16 and bf16 tensor
// cores, fp8, DGEMM): the baselines the multiword products are measured
// against.
//
// # The fused FABsum kernels
//
// Engine.Fused multiplies fp32 matrices in any layout with a FABsum plan.
// Two small passes (kernels/scan.cu) find the row and column scalings and
// the rows with NaN, Inf or out-of-range entries, which are recomputed in
// fp64 afterwards. Plans without scaling skip them on Hopper, where the
// split flags those entries as it reads them. Each call marks its flags
// with a mark of its own, so no pass clears them. FusedArgs.Passes times
// the passes apart from the products. Two kernels do the products:
//
//   - kernels/wgmma.cu (Hopper): wgmma_split first splits A and B (one
//     launch) into words, tile by tile, in the layout the GEMM's shared memory wants
//     (in the engine's scratch memory: 2 bytes per element and word); the
//     GEMM's producer thread copies word tiles with the bulk copy engine
//     through an mbarrier pipeline; two consumer warpgroups multiply with
//     wgmma, every product of a block in one accumulator (multiword's
//     FABsumJoint, by k-steps or by products), promoted every b elements (through an fp32 group sum
//     with Plan.Group), taking turns so that one promotes while the tensor
//     cores run the other's products; a persistent grid. KernelWGMMASmem
//     splits fp32 tiles in shared memory instead (a producer warpgroup; no
//     word buffers, slower).
//   - kernels/fused.cu (mma.sync, any GPU from sm_80): each block splits
//     its tiles in registers; A_1B_1 and the cross products may have
//     separate accumulators (Algorithm 4.4).
//
// FusedArgs.Kernel chooses; KernelAuto takes wgmma where it runs the plan
// (WGMMASupports: sm_90, one word or joint, b a multiple of 32). The
// engine routes FABsum plans on fp32 data there:
//
//	p, _ := multiword.Lookup("double-fp16-fabsum")
//	err := e.Fused(p, gpu.FusedArgs{M: m, N: n, K: k, A: a, B: b, C: c,
//		LayoutB: gpu.ColMajor, LdB: ldb})
//
// FusedArgs.Update makes the call C ← C − A·B (an LU's trailing update,
// in the wgmma kernel's epilogue). The configuration a call derives from
// its plan (kernel, compiled function, shared memory) is cached per plan,
// kernel choice, layouts and update mode.
//
// # Solving Ax = b
//
// A System holds A on the device in binary64 (NewSystem copies one,
// GenerateSystem and GenerateRandsvd draw one there). System.Factor makes
// LU factors in an LUForm: cuSOLVER's getrf in fp64 or fp32, or a blocked
// LU whose pivoted panels are cuSOLVER's sgetrf or our recursive panel
// (LUForm.Panels; PanelsAuto takes ours from n = 16384, where it is
// faster) and whose trailing updates run on the tensor cores:
// TC32 forms on cuBLASLt from copies of L₂₁ and U₁₂ rounded to fp16,
// bf16 or TF32 by our kernel, multiword forms on the fused FABsum kernel,
// and the Ozaki forms (ozaki-int8x5 ...), held in fp64, on the int8 tensor
// cores: L₂₁'s rows and U₁₂'s columns cut into 7-bit digits whose
// products cuBLASLt sums exactly in int32, for factors beyond fp32.
// The next panel is factored on a second stream beside the update, and
// L's row interchanges are applied once, at the end. With LUForm.Pivoting
// at PivotAuto (the zero value) a strictly diagonally dominant A is
// factored without pivoting: each panel is then its diagonal block's LU
// and a product, off the critical path. Factors.Pivoting says what was
// done. Factors and
// System are what package solve's refinement needs (solve.Factorization,
// solve.Operator), so GMRES-IR runs with A and the factors on the device,
// and Factors keeps GMRES's basis there too (solve.KrylovFactorization):
//
//	sys, _ := e.GenerateSystem(8192, "centered", 1)
//	f, _ := gpu.ParseLUForm("double-fp16-fabsum")
//	fa, _ := sys.Factor(f)
//	x, rep, err := solve.RefineOperator(ctx, sys, b, fa, solve.Options{})
//
// System.Baseline runs cuSOLVER's getrf+getrs and its gesv refinement
// solvers on the same A, for comparison. cuBLAS and cuSOLVER are loaded at
// run time like cuBLASLt (ErrNoCusolver when missing).
package gpu
