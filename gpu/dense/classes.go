package dense

import (
	"slices"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/matgen"
)

// drawFasiHigham fills buf with the n×n fasi-higham matrix of the
// normalized spec: α, β and the scalings are worked out here on the host
// (matgen.NewFasiHigham: a bisection, and math.Pow, which CUDA's pow need
// not match), the entries by lu.cu's fasi_higham.
func drawFasiHigham(d *gpu.Device, mod *gpu.Module, buf *gpu.Buffer, n int, spec matgen.Spec, seed uint64) error {
	p := matgen.NewFasiHigham(spec, n, seed)
	f, err := mod.Function("fasi_higham")
	if err != nil {
		return err
	}
	grid, block := [3]uint32{4096, 1, 1}, [3]uint32{256, 1, 1}
	if p.D1 == nil {
		return f.Launch(grid, block, 0, nil, buf, int64(n), p.Alpha, p.Beta, uintptr(0), uintptr(0))
	}
	scalings, err := d.Alloc(16 * n)
	if err != nil {
		return err
	}
	defer scalings.Free()
	if err := d.Upload(scalings, append(slices.Clone(p.D1), p.D2...)); err != nil {
		return err
	}
	if err := f.Launch(grid, block, 0, nil, buf, int64(n), p.Alpha, p.Beta, scalings, scalings.View(8*n)); err != nil {
		return err
	}
	return d.Sync() // before the deferred free of the scalings
}
