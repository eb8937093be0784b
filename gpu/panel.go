package gpu

import (
	"fmt"

	"github.com/mwmm/mwmm/gpu/internal/cuda"
)

// leafMax is the widest leaf (LEAF_MAX in lu.cu); a leaf block's record
// for the others is leafRecord words (LEAF_RECORD).
const (
	leafMax    = 32
	leafRecord = 4 + 2*leafMax
)

// leafRows is the rows a leaf's block takes before the grid grows.
var leafRows = 256

// leafShared is panel_leaf's dynamic shared memory for rows×w on grid
// blocks: its rows, the pivot row and the row it displaces, and every
// block's candidate.
func leafShared(rows, grid, w int) int {
	return 4 * (((rows+grid-1)/grid+2)*w + grid*(w+2))
}

// panelLU factors a blocked LU's panels (tall column blocks in binary32)
// with partial pivoting, recursively: the left half, its interchanges and
// a triangular solve and sgemm for the right half, then the right half.
// The recursion ends in leaves of at most 32 columns, each one kernel
// (panel_leaf) that spreads the leaf's rows over the grid's shared
// memory; a column costs one exchange of candidate rows between the
// blocks, through L2, which is also the grid's only barrier.
type panelLU struct {
	e              *Engine
	la             *linalg
	leaf, swaps    *Function
	records, moves *Buffer
	seq            uint32 // the records' sequence number when the next leaf starts
	shared         int    // dynamic shared memory a block may have
	sms            int
}

func (e *Engine) newPanelLU(la *linalg, mod *Module) (*panelLU, error) {
	d := e.d
	pl := &panelLU{e: e, la: la, sms: d.Multiprocessors()}
	var err error
	if pl.leaf, err = mod.Function("panel_leaf"); err != nil {
		return nil, err
	}
	if pl.swaps, err = mod.Function("leaf_swaps"); err != nil {
		return nil, err
	}
	pl.shared = d.sharedOptin - 2048 // less the kernel's static shared memory
	if err := pl.leaf.SetMaxDynamicShared(pl.shared); err != nil {
		return nil, err
	}
	if pl.records, err = d.Alloc(4 * 2 * pl.sms * leafRecord); err != nil {
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
	freeAll(pl.records, pl.moves)
}

// leafShape picks a leaf's grid and width for rows×w: about 256 rows a
// block, at most blocks blocks (more only when the rows do not fit in
// shared memory otherwise), and narrower than w when even the whole GPU's
// shared memory cannot hold rows×w.
func (pl *panelLU) leafShape(rows, w, blocks int) (grid, width int) {
	fits := func(g, w int) bool { return leafShared(rows, g, w) <= pl.shared }
	grid = min(max((rows+leafRows-1)/leafRows, 1), blocks, rows)
	for !fits(grid, w) && grid < min(pl.sms, rows) {
		grid = min(grid*2, pl.sms, rows)
	}
	for w > 1 && !fits(grid, w) {
		w /= 2
	}
	return grid, w
}

// factor queues the LU of the m×nb panel at a (ld lda) on st: pivots
// (1-based, relative to the panel's first row) to ipiv. blocks caps the
// leaves' grids (the multiprocessors left to the panel).
func (pl *panelLU) factor(st *Stream, a uintptr, lda, m, nb int, ipiv uintptr, blocks int) error {
	d := pl.e.d
	q := &launchQueue{d: d}
	q.do(func() error { return pl.la.blasOn(d, st) })
	if err := pl.rec(q, st, a, lda, m, nb, 0, nb, ipiv, max(blocks, 1)); err != nil {
		return err
	}
	return q.flush()
}

// rec queues the factorization of columns [c0, c0+w) of the panel, rows
// from c0 (those above are U's, done).
func (pl *panelLU) rec(q *launchQueue, st *Stream, a uintptr, lda, m, nb, c0, w int, ipiv uintptr, blocks int) error {
	at := func(i, j int) uintptr { return a + uintptr(4*(i+j*lda)) }
	rows := m - c0
	grid, width := pl.leafShape(rows, min(w, leafMax), blocks)
	if w <= width {
		if err := q.launch(pl.leaf, [3]uint32{uint32(grid), 1, 1}, [3]uint32{512, 1, 1}, uint32(leafShared(rows, grid, w)), st,
			at(c0, c0), int64(lda), int32(rows), int32(w), int32(c0), ipiv+uintptr(4*c0), pl.moves, pl.records, pl.seq); err != nil {
			return err
		}
		pl.seq += uint32(w)
		if other := nb - w; other > 0 {
			return q.launch(pl.swaps, [3]uint32{uint32(other), 1, 1}, [3]uint32{64, 1, 1}, 0, st,
				at(c0, 0), int64(lda), int32(other), int32(c0), int32(w), pl.moves)
		}
		return nil
	}
	w1 := min(max((w/2+width-1)/width*width, width), w-1)
	if err := pl.rec(q, st, a, lda, m, nb, c0, w1, ipiv, blocks); err != nil {
		return err
	}
	w2 := w - w1
	q.do(func() error {
		return cuda.Strsm(pl.la.blas, cuda.SideLeft, cuda.FillLower, cuda.OpN, cuda.DiagUnit, w1, w2, 1,
			at(c0, c0), lda, at(c0, c0+w1), lda)
	})
	if below := rows - w1; below > 0 {
		q.do(func() error {
			return cuda.Sgemm(pl.la.blas, cuda.OpN, cuda.OpN, below, w2, w1, -1,
				at(c0+w1, c0), lda, at(c0, c0+w1), lda, 1, at(c0+w1, c0+w1), lda)
		})
	}
	if err := pl.rec(q, st, a, lda, m, nb, c0+w1, w2, ipiv, blocks); err != nil {
		return fmt.Errorf("gpu: LU panel, columns %d–%d: %w", c0+w1, c0+w, err)
	}
	return nil
}
