package gemm

import (
	"embed"

	"github.com/mwmm/mwmm/gpu"
)

// The GEMM kernels' CUDA C++ sources, compiled at run time by the runtime.
//
//go:embed kernels/*.cu
var kernelFS embed.FS

// kernel returns the embedded file kernels/name.cu.
func kernel(name string) gpu.Source { return gpu.MustSource(kernelFS, name) }
