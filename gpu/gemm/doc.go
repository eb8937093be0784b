// Package gemm holds mwmm's GEMM kernels on NVIDIA tensor cores: the
// multiword Engine (split kernels and cuBLASLt products), the fused FABsum
// kernels (fused.cu on mma.sync, wgmma.cu on Hopper) behind Engine.Fused,
// and the single-instruction units of mma.Open("gpu:…").
//
// The kernel contract. Each fused kernel family has one configuration
// value (mmaConfig, wgmmaConfig, config.go) that gives its NVRTC -D
// options, its dynamic shared memory and its launch shape; the .cu files
// take tile sizes and options only from those -D options (#error without
// them) and static_assert the shared memory against their own layout.
// Kernels with long argument lists take one struct by value (FusedParams,
// WgmmaParams, WgmmaSplitParams, PatchParams, AmaxParams, SplitParams),
// mirrored in params.go and passed with gpu.ParamsOf; TestParamsLayout
// pins each Go struct to the C text, field by field.
package gemm
