package pivot

import (
	"fmt"

	"github.com/mwmm/mwmm/gpu"
)

// A Permuter applies a panel's interchanges to the columns beside it: the
// pairs Moves composes, row src[t] to row dst[t], in one kernel
// (kernels/permute.cu) that gives each column a thread block and reads
// every moved entry before it writes one. gpu/dense's blocked LU and
// gpu/dist's pivoted one share it.
type Permuter struct {
	f        *gpu.Function
	es, most int
}

// NewPermuter prepares moves of at most most rows of es-byte values (4:
// binary32, 8: binary64) on d.
func NewPermuter(d *gpu.Device, es, most int) (*Permuter, error) {
	name := map[int]string{4: "permute_rows", 8: "permute_rows_f64"}[es]
	if name == "" || most < 1 {
		return nil, fmt.Errorf("pivot: a Permuter of %d-byte values and %d rows", es, most)
	}
	mod, err := d.Module(gpu.MustSource(kernelFS, "permute"))
	if err != nil {
		return nil, err
	}
	f, err := mod.Function(name)
	if err != nil {
		return nil, err
	}
	if es*most > 48<<10 { // above the default limit of dynamic shared memory
		if err := f.SetMaxDynamicShared(es * most); err != nil {
			return nil, err
		}
	}
	return &Permuter{f: f, es: es, most: most}, nil
}

// Permute queues on st the moves of npairs rows in each of ncols columns
// of a (leading dimension ld, in values), on at most blocks thread
// blocks (0: a block a column): moves holds the pairs' destinations, then
// their sources, as int32 row indices (Moves's order).
func (p *Permuter) Permute(st *gpu.Stream, a *gpu.Buffer, ld, ncols int, moves *gpu.Buffer, npairs, blocks int) error {
	if npairs == 0 || ncols == 0 {
		return nil
	}
	if npairs > p.most {
		return fmt.Errorf("pivot: a Permuter of at most %d rows asked to move %d", p.most, npairs)
	}
	if blocks <= 0 {
		blocks = ncols
	}
	blocks = min(ncols, blocks, 65535)
	return p.f.Launch([3]uint32{uint32(blocks), 1, 1}, [3]uint32{256, 1, 1}, uint32(p.es*npairs), st,
		a, int64(ld), int32(ncols), moves, moves.View(4*npairs), int32(npairs))
}
