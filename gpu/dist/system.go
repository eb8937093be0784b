package dist

import (
	"errors"
	"fmt"
	"math"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/fp16"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
	"github.com/mwmm/mwmm/gpu/nccl"
)

// SystemKinds are the matrices GenerateSystem draws: matgen's uniform and
// centered, diagdom (centered, a_ii = ±(1 + Σ_{j≠i}|a_ij|): strictly
// dominant) and hpl-mxp (HPL-MxP's reference generator: centered,
// a_ii = Σ_{j≠i}|a_ij|, weakly dominant): matgen's hpl-mxp with its
// default scale 1 only.
var SystemKinds = []string{"uniform", "centered", "diagdom", "hpl-mxp"}

// A System is the n×n fp64 matrix A of Ax = b over a team, in square
// blocks: the operator that refinement multiplies by (solve.Operator).
// It needs a team whose ranks are all in this process.
type System struct {
	A    *Matrix
	norm float64
}

// GenerateSystem draws an n×n matrix of kind in blocks of nb. The
// off-diagonal entries are matgen's, whatever the grid; a dominant kind's
// diagonal comes from row sums added across the grid, equal to the one-GPU
// matrix's up to the order of those additions. hpl-mxp's is matgen's bit
// for bit on grids of one column (each row's sum from 0 in the order of
// j, as matgen sums it); diagdom's sums start from 0 and add 1 last, where
// matgen's start from 1, so it may differ in the last bit.
func GenerateSystem(t *Team, n, nb int, kind string, seed uint64) (*System, error) {
	if !t.Whole() {
		return nil, errors.New("dist: a System needs every rank of its team in this process")
	}
	lo, diag := -0.5, 0
	switch kind {
	case "uniform":
		lo = 0
	case "centered":
	case "diagdom":
		diag = 1
	case "hpl-mxp":
		diag = 2
	default:
		return nil, fmt.Errorf("dist: no distributed system of kind %q (have %v)", kind, SystemKinds)
	}
	a, err := NewMatrix64(t, Layout{n, n, nb, nb, t.Grid})
	if err != nil {
		return nil, err
	}
	s := &System{A: a}
	err = t.Each(func(r *Rank) error {
		if err := r.fill(a.part(r), a.Layout, r.P, r.Q, lo, seed, true); err != nil {
			return err
		}
		if diag == 0 {
			return nil
		}
		sums, err := s.rowSums(r, true)
		if err != nil {
			return err
		}
		return r.launch("set_diag", a.localRows(r), a.shape(r, sums, int32(2-diag))...)
	})
	if err == nil {
		s.norm, err = s.normInf()
	}
	if err != nil {
		a.Free()
		return nil, err
	}
	return s, nil
}

// NewSystem spreads the row-major n×n matrix a over t in fp64 blocks of
// nb.
func NewSystem(t *Team, nb int, a []float64) (*System, error) {
	n := int(math.Sqrt(float64(len(a))))
	if n*n != len(a) || n == 0 || !finite(a) {
		return nil, fmt.Errorf("dist: a system needs a square, finite, non-empty matrix; got %d values", len(a))
	}
	if !t.Whole() {
		return nil, errors.New("dist: a System needs every rank of its team in this process")
	}
	m, err := NewMatrix64(t, Layout{n, n, nb, nb, t.Grid})
	if err != nil {
		return nil, err
	}
	s := &System{A: m}
	err = t.Each(func(r *Rank) error {
		local := make([]float64, m.localElems(r))
		pack(m.Layout, local, a, r.Rank)
		return r.Engine.Device().Upload(m.part(r), local)
	})
	if err == nil {
		s.norm, err = s.normInf()
	}
	if err != nil {
		m.Free()
		return nil, err
	}
	return s, nil
}

func (m *Matrix) part(r *Rank) *gpu.Buffer { return m.Parts[m.index(r)] }

// shape lists a kernel's leading arguments for r's part of m (the part,
// its size, blocks and place in the grid), then more.
func (m *Matrix) shape(r *Rank, more ...any) []any {
	return append([]any{m.part(r), int32(m.localRows(r)), int32(m.localCols(r)), int32(m.RowBlock), int32(m.ColBlock),
		int32(r.P), int32(m.Grid.P), int32(r.Q), int32(m.Grid.Q)}, more...)
}

// launch queues dist.cu's kernel name over work elements on r's compute
// stream.
func (r *Rank) launch(name string, work int, args ...any) error {
	f, err := r.function(name)
	if err != nil {
		return err
	}
	return f.Launch(gpu.StrideGrid(work), [3]uint32{256, 1, 1}, 0, r.compute, args...)
}

// rowSums returns, in r's scratch slot 8, the sums of |a_ij| of r's local
// rows over the whole row (the diagonal left out when offdiag): local sums
// added across the grid row.
func (s *System) rowSums(r *Rank, offdiag bool) (*gpu.Buffer, error) {
	a := s.A
	rows := a.localRows(r)
	sums, err := r.scratch(8, 8*max(1, rows))
	if err != nil {
		return nil, err
	}
	od := int32(0)
	if offdiag {
		od = 1
	}
	if err := r.launch("row_abs_sums", rows, a.shape(r, od, sums)...); err != nil {
		return nil, err
	}
	return sums, r.Row.AllReduce(sums, sums, rows, nccl.Float64, nccl.Sum, r.compute)
}

// normInf returns ‖A‖∞: the largest row sum, read on grid column 0.
func (s *System) normInf() (float64, error) {
	norms := make([]float64, len(s.A.Team.Ranks))
	err := s.A.Team.Each(func(r *Rank) error {
		sums, err := s.rowSums(r, false)
		if err != nil || r.Q != 0 {
			return err
		}
		host := make([]float64, s.A.localRows(r))
		if err := r.compute.Sync(); err != nil {
			return err
		}
		if err := r.Engine.Device().Download(host, sums); err != nil {
			return err
		}
		for _, v := range host {
			norms[s.A.index(r)] = max(norms[s.A.index(r)], v)
		}
		return nil
	})
	m := 0.0
	for _, v := range norms {
		m = max(m, v)
	}
	return m, err
}

// N returns the order of A.
func (s *System) N() int { return s.A.Rows }

// NormInf returns ‖A‖∞.
func (s *System) NormInf() float64 { return s.norm }

// Free frees A.
func (s *System) Free() { s.A.Free() }

// MulVec sets y = A·x in fp64: each rank multiplies its blocks by its
// entries of x (cuBLAS dgemv), the grid rows add their partial products,
// and grid column 0 brings the rows home.
func (s *System) MulVec(x, y []float64) error {
	a := s.A
	n := a.Rows
	if len(x) != n || len(y) != n {
		return fmt.Errorf("dist: MulVec of an order-%d matrix with vectors of %d and %d", n, len(x), len(y))
	}
	return a.Team.Each(func(r *Rank) error {
		d := r.Engine.Device()
		return d.Do(func() error { return s.mulVecRank(r, x, y) }) // one trip to the thread
	})
}

// mulVecRank is rank r's share of MulVec.
func (s *System) mulVecRank(r *Rank, x, y []float64) error {
	a := s.A
	rows := a.localRows(r)
	d := r.Engine.Device()
	xl, err := s.localX(r, x)
	if err != nil {
		return err
	}
	yl, err := rowProduct(r, a, xl)
	if err != nil {
		return err
	}
	if err := r.compute.Sync(); err != nil || r.Q != 0 {
		return err
	}
	host := make([]float64, rows)
	if err := d.Download(host, yl); err != nil {
		return err
	}
	for li, v := range host {
		y[a.GlobalRow(r.P, li)] = v
	}
	return nil
}

// ResidualDoubleWord sets r = b − A·x in double-word arithmetic, rounded
// to fp64 once (solve.DoubleWordOperator): each GPU forms its block's
// product as double-word pairs (fp16.PairProduct), and they are added to
// b here, grid column by grid column, as the first GPU adds them in
// refinement.
func (s *System) ResidualDoubleWord(x, b, r []float64) error {
	a := s.A
	n, Q := a.Rows, a.Grid.Q
	if len(x) != n || len(b) != n || len(r) != n {
		return fmt.Errorf("dist: a residual of order %d with x, b, r of %d, %d, %d entries", n, len(x), len(b), len(r))
	}
	hi, lo := make([]float64, Q*n), make([]float64, Q*n)
	err := a.Team.Each(func(rk *Rank) error {
		return rk.Engine.Device().Do(func() error { return s.pairsRank(rk, x, hi[rk.Q*n:(rk.Q+1)*n], lo[rk.Q*n:(rk.Q+1)*n]) })
	})
	if err != nil {
		return err
	}
	for i := range r {
		sum, c := b[i], 0.0
		for q := range Q {
			p := -hi[q*n+i]
			t := sum + p
			z := t - sum
			c += ((sum - (t - z)) + (p - z)) - lo[q*n+i]
			sum = t
		}
		r[i] = sum + c
	}
	return nil
}

// pairsRank sets rank r's rows of hi and lo (in global order) to the
// double-word pairs of its block's product with x.
func (s *System) pairsRank(r *Rank, x, hi, lo []float64) error {
	a := s.A
	rows := a.localRows(r)
	xl, err := s.localX(r, x)
	if err != nil {
		return err
	}
	pairs, err := pairProduct(r, a, xl)
	if err != nil {
		return err
	}
	if err := r.compute.Sync(); err != nil || rows == 0 {
		return err
	}
	host := make([]float64, 2*rows)
	if err := r.Engine.Device().Download(host, pairs); err != nil {
		return err
	}
	for li := range rows {
		g := a.GlobalRow(r.P, li)
		hi[g], lo[g] = host[li], host[rows+li]
	}
	return nil
}

// pairProduct returns, in r's scratch slot slotPairs, its block's
// product with its entries xl of x as double-word pairs (fp16.PairProduct):
// the rows' high parts, then their low parts.
func pairProduct(r *Rank, a *Matrix, xl *gpu.Buffer) (*gpu.Buffer, error) {
	rows, cols := a.localRows(r), a.localCols(r)
	d := r.Engine.Device()
	chunks, _ := fp16.PairChunks(rows, cols, d.Multiprocessors())
	pairs, err1 := r.scratch(slotPairs, 16*max(1, rows))
	part, err2 := r.scratch(slotPairChunks, 16*max(1, rows)*chunks)
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	return pairs, fp16.PairProduct(d, r.compute, a.part(r), rows, rows, cols, xl, part, pairs)
}

// rowProduct returns, in r's scratch slot 11, its grid row's part of
// A·x: its block times its entries xl of x, summed along the grid row.
func rowProduct(r *Rank, a *Matrix, xl *gpu.Buffer) (*gpu.Buffer, error) {
	rows := a.localRows(r)
	yl, err := r.scratch(11, 8*max(1, rows))
	if err != nil {
		return nil, err
	}
	if err := r.gemv(a.part(r), rows, a.localCols(r), xl, yl); err != nil {
		return nil, err
	}
	return yl, r.Row.AllReduce(yl, yl, rows, nccl.Float64, nccl.Sum, r.compute)
}

// localX uploads x to rank r and returns its entries in the order of r's
// local columns (scratch slot 10; the whole x in slot 9).
func (s *System) localX(r *Rank, x []float64) (*gpu.Buffer, error) {
	return columnsOfX(r, s.A, func(xb *gpu.Buffer) error { return r.Engine.Device().Upload(xb, x) })
}

// columnsOfX has fill write the whole x into r's scratch slot 9 and
// returns r's entries of it in the order of its local columns of a
// (slot 10), on r's compute stream.
func columnsOfX(r *Rank, a *Matrix, fill func(xb *gpu.Buffer) error) (*gpu.Buffer, error) {
	cols := a.localCols(r)
	xb, err1 := r.scratch(9, 8*a.Rows)
	xl, err2 := r.scratch(10, 8*max(1, cols))
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	if err := fill(xb); err != nil {
		return nil, err
	}
	return xl, r.launch("gather_cols", cols, xb, xl, int32(cols), int32(a.ColBlock), int32(r.Q), int32(a.Grid.Q))
}

// gemv sets y = A·x for r's rows×cols part A (column-major), or y = 0.
func (r *Rank) gemv(a *gpu.Buffer, rows, cols int, x, y *gpu.Buffer) error {
	d := r.Engine.Device()
	la, err := d.Linalg()
	if err != nil {
		return err
	}
	if rows == 0 {
		return nil
	}
	if cols == 0 {
		return d.Memset8(y, 0)
	}
	return d.Do(func() error {
		if err := la.BlasOn(d, r.compute); err != nil {
			return err
		}
		return cuda.Dgemv(la.Blas, cuda.OpN, rows, cols, 1, a.Ptr(), rows, x.Ptr(), 0, y.Ptr())
	})
}

// finite reports whether every entry of v is finite.
func finite(v []float64) bool {
	for _, x := range v {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return false
		}
	}
	return true
}
