package dense

import (
	"fmt"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
)

// leafMax is the widest leaf (LEAF_MAX in lu.cu); a leaf's grid has at
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

// leafKinds hold 256, 512 and 1024 rows a block in binary32, 256 and 512
// in binary64 (a row of 32 doubles is 64 registers). On an H100, 2 rows ×
// 256 threads took 6–9% longer a column than 1 × 512, and 2 × 512 (which
// spills at 128 registers) within 3% of 4 × 256
// (docs/perf/raw/solve-panel-leaf-kinds-h100.txt).
var leafKinds = map[Precision][]leafKind{
	FP32: {{1, 256}, {1, 512}, {4, 256}},
	FP64: {{1, 256}, {1, 512}},
}

// leafRows forces the rows a leaf's block takes (256, 512 or 1024; 0: the
// fewest whose grid fits the blocks the panel may have).
var leafRows = 0

// panelLU factors a blocked LU's panels (tall column blocks in binary32,
// or binary64 for the Ozaki forms) with partial pivoting, recursively: the
// left half, its interchanges and a triangular solve and gemm for the
// right half, then the right half. The recursion ends in leaves of at most
// 32 columns, each one kernel (panel_leaf_RxT) that holds the leaf's rows
// in the grid's registers; a column costs one exchange of candidate rows
// between the blocks, through L2, which is also the grid's only barrier.
type panelLU struct {
	d       *gpu.Device
	la      *gpu.Linalg
	prec    Precision
	kinds   []leafKind
	leaf    []*gpu.Function // as kinds
	swaps   *gpu.Function
	records *gpu.Buffer
	moves   *gpu.Buffer
	seq     uint32 // the records' sequence number when the next leaf starts
	sms     int
}

func newPanelLU(d *gpu.Device, la *gpu.Linalg, mod *gpu.Module, prec Precision) (*panelLU, error) {
	pl := &panelLU{d: d, la: la, prec: prec, kinds: leafKinds[prec], sms: d.Multiprocessors()}
	prefix, swaps := "panel_leaf_", "leaf_swaps"
	if prec == FP64 {
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
	var err error
	if pl.swaps, err = mod.Function(swaps); err != nil {
		return nil, err
	}
	if pl.records, err = d.Alloc(8 * 2 * leafWords(prec.Size())); err != nil {
		return nil, err
	}
	if pl.moves, err = d.Alloc(4 * (1 + 4*leafMax)); err != nil {
		pl.free()
		return nil, err
	}
	if err := d.Memset32(pl.records, 0); err != nil {
		pl.free()
		return nil, err
	}
	return pl, nil
}

func (pl *panelLU) free() {
	gpu.FreeAll(pl.records, pl.moves)
}

// maxBlockRows is the most rows a leaf's block holds: 1024 in binary32,
// 512 in binary64.
func maxBlockRows(prec Precision) int {
	k := leafKinds[prec][len(leafKinds[prec])-1]
	return k.rows * k.threads
}

// maxPanelRows is the tallest panel the leaves take on a GPU with sms
// multiprocessors: a full block on each.
func maxPanelRows(sms int, prec Precision) int {
	return min(sms, leafBlocks) * maxBlockRows(prec)
}

// leafShape picks a leaf's kind (an index into pl.kinds) and grid for rows
// rows: the fewest rows a block whose grid fits in blocks, else the most
// on a larger grid (at most a block a multiprocessor).
func (pl *panelLU) leafShape(rows, blocks int) (kind, grid int, err error) {
	per := maxBlockRows(pl.prec)
	for _, p := range []int{256, 512} {
		if p < per && (leafRows == p || leafRows == 0 && (rows+p-1)/p <= blocks) {
			per = p
			break
		}
	}
	if grid = (rows + per - 1) / per; grid > min(pl.sms, leafBlocks) {
		return 0, 0, fmt.Errorf("gpu: the recursive panel takes at most %d rows on this GPU, not %d", maxPanelRows(pl.sms, pl.prec), rows)
	}
	for kind = range pl.kinds {
		if pl.kinds[kind].rows*pl.kinds[kind].threads == per {
			break
		}
	}
	return kind, grid, nil
}

// factor queues the LU of the m×nb panel at a (ld lda) on st: pivots
// (1-based, relative to the panel's first row) to ipiv. blocks caps the
// leaves' grids (the multiprocessors left to the panel).
func (pl *panelLU) factor(st *gpu.Stream, a uintptr, lda, m, nb int, ipiv uintptr, blocks int) error {
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
func (pl *panelLU) rec(q *gpu.LaunchQueue, st *gpu.Stream, a uintptr, lda, m, nb, c0, w int, ipiv uintptr, blocks int) error {
	at := func(i, j int) uintptr { return a + uintptr(pl.prec.Size()*(i+j*lda)) }
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
		return trsm(pl.la.Blas, pl.prec, cuda.SideLeft, cuda.FillLower, cuda.OpN, cuda.DiagUnit, w1, w2,
			at(c0, c0), lda, at(c0, c0+w1), lda)
	})
	if below := rows - w1; below > 0 {
		q.Do(func() error {
			if pl.prec == FP64 {
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

// Panel is the blocked LU's recursive panel for callers outside the
// package (gpu/dist's pivoted LU): tall fp32 panels factored with partial
// pivoting by leaves that hold the rows in registers, on a capped number
// of multiprocessors, so that it keeps its pace beside an update (cuSOLVER
// sgetrf took twice its time there).
type Panel struct{ pl *panelLU }

// NewPanel prepares fp32 panels on d.
func NewPanel(d *gpu.Device) (*Panel, error) {
	la, err := d.Linalg()
	if err != nil {
		return nil, err
	}
	mod, err := d.Module(kernel("lu"))
	if err != nil {
		return nil, err
	}
	pl, err := newPanelLU(d, la, mod, FP32)
	if err != nil {
		return nil, err
	}
	return &Panel{pl}, nil
}

// MaxRows is the tallest panel it takes.
func (p *Panel) MaxRows() int { return maxPanelRows(p.pl.sms, FP32) }

// Factor queues on st the LU with partial pivoting of the m×nb fp32 panel
// at a (leading dimension lda), in place: its pivots (1-based, from the
// panel's first row, as getrf's) to ipiv; its leaves on at most blocks
// multiprocessors where their rows fit. It leaves cuBLAS on st.
func (p *Panel) Factor(st *gpu.Stream, a *gpu.Buffer, lda, m, nb int, ipiv *gpu.Buffer, blocks int) error {
	if m > p.MaxRows() || m < nb || a.Bytes() < 4*((nb-1)*lda+m) || ipiv.Bytes() < 4*nb {
		return fmt.Errorf("gpu: a recursive panel of %d×%d (at most %d rows) in %d bytes with %d for the pivots", m, nb, p.MaxRows(), a.Bytes(), ipiv.Bytes())
	}
	return p.pl.factor(st, a.Ptr(), lda, m, nb, ipiv.Ptr(), blocks)
}

// Free frees its buffers.
func (p *Panel) Free() { p.pl.free() }
