// Package gemm holds mwmm's GEMM kernels on NVIDIA tensor cores: the
// multiword Engine (split kernels and cuBLASLt products), the fused FABsum
// kernels (fused.cu on mma.sync, wgmma.cu on Hopper) behind Engine.Fused,
// and the single-instruction units of mma.Open("gpu:…").
//
// # The kernel contract
//
// Each fused kernel family has one configuration value (mmaConfig,
// wgmmaConfig, config.go) that gives its NVRTC -D options, its dynamic shared memory and its launch shape; the .cu files
// take tile sizes and options only from those -D options (#error without
// them) and static_assert the shared memory against their own layout.
// Kernels with long argument lists take one struct by value (FusedParams,
// WgmmaParams, WgmmaSplitParams, PatchParams, AmaxParams, SplitParams),
// mirrored in params.go and passed with gpu.ParamsOf; TestParamsLayout
// pins each Go struct to the C text, field by field.
//
// # The instructions as units
//
// NewUnit (or mma.Open("gpu:mma.sync"), "gpu:wgmma", "gpu:fma") makes one
// matrix instruction an mma.Unit: Dots evaluates a batch of dot products on
// the hardware, eight per instruction tile, for probing and cross-checking
// the models (docs/hardware/hopper.md).
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
//	err := e.Fused(p, gemm.FusedArgs{M: m, N: n, K: k, A: a, B: b, C: c,
//		LayoutB: gemm.ColMajor, LdB: ldb})
//
// FusedArgs.Update makes the call C ← C − A·B (an LU's trailing update,
// in the wgmma kernel's epilogue). The configuration a call derives from
// its plan (kernel, compiled function, shared memory) is cached per plan,
// kernel choice, layouts and update mode.
package gemm
