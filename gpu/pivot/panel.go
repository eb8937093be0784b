package pivot

import (
	"embed"
	"fmt"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
)

// The panel's CUDA C++ source, compiled at run time by the runtime.
//
//go:embed kernels/*.cu
var kernelFS embed.FS

// leafMax is the widest leaf (LEAF_MAX in panel.cu); a leaf's grid has at
// most leafBlocks blocks (LEAF_GMAX).
const (
	leafMax    = 32
	leafBlocks = 132
)

// leafWords is a half of the leaves' records in 64-bit words for values of
// es bytes (LEAF_WORDS): a word a 32-bit half of a value.
func leafWords(es int) int {
	h := es / 4
	return leafBlocks*(h*(1+leafMax)+1) + h*leafMax
}

// leafKind is a compiled leaf (panel_leaf_RxT): rows a thread, threads a
// block.
type leafKind struct{ rows, threads int }

// leafKinds hold, by the values' bytes, 256, 512 and 1024 rows a block in
// binary32, 256 and 512 in binary64 (a row of 32 doubles is 64
// registers). On an H100, 2 rows × 256 threads took 6–9% longer a column
// than 1 × 512, and 2 × 512 (which spills at 128 registers) within 3% of
// 4 × 256 (docs/perf/raw/solve-panel-leaf-kinds-h100.txt).
var leafKinds = map[int][]leafKind{
	4: {{1, 256}, {1, 512}, {4, 256}},
	8: {{1, 256}, {1, 512}},
}

// leafRows forces the rows a leaf's block takes (256, 512 or 1024; 0: the
// fewest whose grid fits the blocks the panel may have).
var leafRows = 0

// A Panel factors a blocked LU's panels (tall column blocks in binary32,
// or binary64) with partial pivoting, recursively: the left half, its
// interchanges and a triangular solve and gemm for the right half, then
// the right half. The recursion ends in leaves of at most
// 32 columns, each one kernel (panel_leaf_RxT) that holds the leaf's rows
// in the grid's registers; a column costs one exchange of candidate rows
// between the blocks, through L2, which is also the grid's only barrier.
type Panel struct {
	d       *gpu.Device
	la      *gpu.Linalg
	es      int // the values' bytes: 4 or 8
	kinds   []leafKind
	leaf    []*gpu.Function // as kinds
	swaps   *gpu.Function
	records *gpu.Buffer
	moves   *gpu.Buffer
	seq     uint32 // the records' sequence number when the next leaf starts
	sms     int
}

// NewPanel prepares panels of binary64 values (double) or binary32 on d.
func NewPanel(d *gpu.Device, double bool) (*Panel, error) {
	la, err := d.Linalg()
	if err != nil {
		return nil, err
	}
	mod, err := d.Module(gpu.MustSource(kernelFS, "panel"))
	if err != nil {
		return nil, err
	}
	pl := &Panel{d: d, la: la, es: size(double), sms: d.Multiprocessors()}
	pl.kinds = leafKinds[pl.es]
	prefix, swaps := "panel_leaf_", "leaf_swaps"
	if double {
		prefix, swaps = "panel_leaf_f64_", "leaf_swaps_f64"
	}
	for _, k := range pl.kinds {
		f, err := mod.Function(fmt.Sprintf("%s%dx%d", prefix, k.rows, k.threads))
		if err != nil {
			return nil, err
		}
		// A leaf's blocks spin on each other's records: a block that
		// could not be resident would hang the others.
		f.SetCooperative()
		pl.leaf = append(pl.leaf, f)
	}
	if pl.swaps, err = mod.Function(swaps); err != nil {
		return nil, err
	}
	if pl.records, err = d.Alloc(8 * 2 * leafWords(pl.es)); err != nil {
		return nil, err
	}
	if pl.moves, err = d.Alloc(4 * (1 + 4*leafMax)); err != nil {
		pl.Free()
		return nil, err
	}
	if err := d.Memset32(pl.records, 0); err != nil {
		pl.Free()
		return nil, err
	}
	return pl, nil
}

// Free frees its buffers.
func (pl *Panel) Free() {
	gpu.FreeAll(pl.records, pl.moves)
}

func size(double bool) int {
	if double {
		return 8
	}
	return 4
}

// maxBlockRows is the most rows a leaf's block holds: 1024 in binary32,
// 512 in binary64.
func maxBlockRows(es int) int {
	k := leafKinds[es][len(leafKinds[es])-1]
	return k.rows * k.threads
}

// MaxPanelRows is the tallest panel the leaves take on a GPU with sms
// multiprocessors (a full block on each), of binary64 values (double) or
// binary32.
func MaxPanelRows(sms int, double bool) int {
	return min(sms, leafBlocks) * maxBlockRows(size(double))
}

// MaxRows is the tallest panel it takes.
func (pl *Panel) MaxRows() int { return MaxPanelRows(pl.sms, pl.es == 8) }

// leafShape picks a leaf's kind (an index into pl.kinds) and grid for rows
// rows: the fewest rows a block whose grid fits in blocks, else the most
// on a larger grid (at most a block a multiprocessor).
func (pl *Panel) leafShape(rows, blocks int) (kind, grid int, err error) {
	per := maxBlockRows(pl.es)
	for _, p := range []int{256, 512} {
		if p < per && (leafRows == p || leafRows == 0 && (rows+p-1)/p <= blocks) {
			per = p
			break
		}
	}
	if grid = (rows + per - 1) / per; grid > min(pl.sms, leafBlocks) {
		return 0, 0, fmt.Errorf("gpu: the recursive panel takes at most %d rows on this GPU, not %d", pl.MaxRows(), rows)
	}
	for kind = range pl.kinds {
		if pl.kinds[kind].rows*pl.kinds[kind].threads == per {
			break
		}
	}
	return kind, grid, nil
}

// Factor queues on st the LU with partial pivoting of the m×nb panel at
// device address a (leading dimension lda), in place: its pivots (1-based,
// relative to the panel's first row, as getrf's) to ipiv. blocks caps the
// leaves' grids (the multiprocessors left to the panel) where their rows
// fit. It leaves cuBLAS on st.
func (pl *Panel) Factor(st *gpu.Stream, a uintptr, lda, m, nb int, ipiv uintptr, blocks int) error {
	d := pl.d
	q := d.NewLaunchQueue()
	q.Do(func() error { return pl.la.BlasOn(d, st) })
	if err := pl.rec(q, st, a, lda, m, nb, 0, nb, ipiv, max(blocks, 1)); err != nil {
		return err
	}
	return q.Flush()
}

// rec queues the factorization of columns [c0, c0+w) of the panel, rows
// from c0 (those above are U's, done).
func (pl *Panel) rec(q *gpu.LaunchQueue, st *gpu.Stream, a uintptr, lda, m, nb, c0, w int, ipiv uintptr, blocks int) error {
	at := func(i, j int) uintptr { return a + uintptr(pl.es*(i+j*lda)) }
	rows := m - c0
	if w <= leafMax {
		k, grid, err := pl.leafShape(rows, blocks)
		if err != nil {
			return err
		}
		if err := q.Launch(pl.leaf[k], [3]uint32{uint32(grid), 1, 1}, [3]uint32{uint32(pl.kinds[k].threads), 1, 1}, 0, st,
			at(c0, c0), int64(lda), int32(rows), int32(w), int32(c0), ipiv+uintptr(4*c0), pl.moves, pl.records, pl.seq); err != nil {
			return err
		}
		pl.seq += uint32(w)
		if other := nb - w; other > 0 {
			return q.Launch(pl.swaps, [3]uint32{uint32(other), 1, 1}, [3]uint32{64, 1, 1}, 0, st,
				at(c0, 0), int64(lda), int32(other), int32(c0), int32(w), pl.moves)
		}
		return nil
	}
	w1 := min(max((w/2+leafMax-1)/leafMax*leafMax, leafMax), w-1)
	if err := pl.rec(q, st, a, lda, m, nb, c0, w1, ipiv, blocks); err != nil {
		return err
	}
	w2 := w - w1
	q.Do(func() error {
		if pl.es == 8 {
			return cuda.Dtrsm(pl.la.Blas, cuda.SideLeft, cuda.FillLower, cuda.OpN, cuda.DiagUnit, w1, w2, 1,
				at(c0, c0), lda, at(c0, c0+w1), lda)
		}
		return cuda.Strsm(pl.la.Blas, cuda.SideLeft, cuda.FillLower, cuda.OpN, cuda.DiagUnit, w1, w2, 1,
			at(c0, c0), lda, at(c0, c0+w1), lda)
	})
	if below := rows - w1; below > 0 {
		q.Do(func() error {
			if pl.es == 8 {
				return cuda.Dgemm(pl.la.Blas, cuda.OpN, cuda.OpN, below, w2, w1, -1,
					at(c0+w1, c0), lda, at(c0, c0+w1), lda, 1, at(c0+w1, c0+w1), lda)
			}
			return cuda.Sgemm(pl.la.Blas, cuda.OpN, cuda.OpN, below, w2, w1, -1,
				at(c0+w1, c0), lda, at(c0, c0+w1), lda, 1, at(c0+w1, c0+w1), lda)
		})
	}
	if err := pl.rec(q, st, a, lda, m, nb, c0+w1, w2, ipiv, blocks); err != nil {
		return fmt.Errorf("gpu: LU panel, columns %d–%d: %w", c0+w1, c0+w, err)
	}
	return nil
}
