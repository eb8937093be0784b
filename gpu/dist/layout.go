// Package dist spreads matrices over several GPUs, multiplies them and
// solves with them there: a Team of ranks (one per GPU, in one process or
// one process each) on a P×Q Grid, matrices laid out 2-D block-cyclically
// (as HPL and ScaLAPACK do), Multiply, the SUMMA product on the fused
// FABsum kernels of package gpu/gemm with the panels broadcast by NCCL,
// and Solve, LU on the tensor cores refined in fp64.
//
// # The layout
//
// A Layout cuts an m×n matrix into RowBlock×ColBlock blocks; block (I, J)
// lives on the rank at grid row I mod P and grid column J mod Q. Each rank keeps
// its blocks as one column-major matrix of LocalRows(p)×LocalCols(q)
// elements, so that a block column of the global matrix is a contiguous
// slab of the local one.
//
// # The product
//
// Multiply computes C = A·B in steps of one block column of A and one
// block row of B (A's ColBlock, B's RowBlock: the panel width): the owners
// broadcast them along grid rows and columns (the next step's transfers
// run beside this step's product, on a stream of their own), and each rank
// adds the product of what it received to its blocks of C with the fused
// kernel. With one step (a panel as wide as k) every element is computed as
// on one GPU, bit for bit.
//
// # The solve
//
// A System is the fp64 A of Ax = b over a team (drawn there, or spread from
// the host), the operator refinement multiplies by. Solve factors it on
// the tensor cores along a road it chooses (FirstRoad): first held in fp16
// without pivoting, its growth checked (FactorHalf, HPL-MxP's LU); where
// the check fails, with partial pivoting on 1×Q grids, where every GPU
// holds whole columns (FactorPivoted, fp32), or held in fp32 without
// pivoting elsewhere (Factor); all with one step of look-ahead but the
// pivoted one. It gathers the factors to the first GPU and refines in
// fp64 (package solve's GMRES-IR):
//
//	sys, _ := dist.GenerateSystem(team, 65536, 1024, "hpl-mxp", 1)
//	x, rep, err := dist.Solve(ctx, sys, b, dist.SolveOptions{})
//
// BenchCusolverMg runs cuSOLVERMg's getrf+getrs on the same GPUs, the
// baseline.
package dist

import (
	"fmt"
	"strconv"
	"strings"
)

// A Grid is P×Q ranks; rank r sits at row r mod P, column r / P.
type Grid struct{ P, Q int }

// Size returns the number of ranks.
func (g Grid) Size() int { return g.P * g.Q }

// Coords returns rank's grid row and column.
func (g Grid) Coords(rank int) (p, q int) { return rank % g.P, rank / g.P }

// Rank returns the rank at row p, column q.
func (g Grid) Rank(p, q int) int { return p + q*g.P }

func (g Grid) String() string { return fmt.Sprintf("%dx%d", g.P, g.Q) }

// SquareGrid returns the P×Q grid of ranks ranks with P ≤ Q and P as
// large as divides ranks: 1×2, 2×2, 2×4 ...
func SquareGrid(ranks int) Grid {
	p := 1
	for d := 1; d*d <= ranks; d++ {
		if ranks%d == 0 {
			p = d
		}
	}
	return Grid{p, ranks / p}
}

// ParseGPUs reads a count of GPUs ("4": the SquareGrid) or a grid ("2x2").
func ParseGPUs(s string) (Grid, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 {
			return Grid{}, fmt.Errorf("dist: %d GPUs: want at least 1", n)
		}
		return SquareGrid(n), nil
	}
	return ParseGrid(s)
}

// ParseGrid reads "PxQ", e.g. "2x4".
func ParseGrid(s string) (Grid, error) {
	ps, qs, ok := strings.Cut(strings.ToLower(s), "x")
	p, err1 := strconv.Atoi(ps)
	q, err2 := strconv.Atoi(qs)
	if !ok || err1 != nil || err2 != nil || p < 1 || q < 1 {
		return Grid{}, fmt.Errorf("dist: grid %q: want PxQ with P, Q ≥ 1, e.g. 2x4", s)
	}
	return Grid{p, q}, nil
}

// A Layout is an m×n matrix in RowBlock×ColBlock blocks over a Grid.
type Layout struct {
	Rows, Cols         int
	RowBlock, ColBlock int
	Grid               Grid
}

// Check reports a layout that cannot be.
func (l Layout) Check() error {
	if l.Rows < 0 || l.Cols < 0 || l.RowBlock < 1 || l.ColBlock < 1 || l.Grid.P < 1 || l.Grid.Q < 1 {
		return fmt.Errorf("dist: layout %d×%d in blocks of %d×%d over %v", l.Rows, l.Cols, l.RowBlock, l.ColBlock, l.Grid)
	}
	return nil
}

// localCount is ScaLAPACK's numroc: how many of n indices, dealt in blocks
// of nb to procs owners in turn, owner gets.
func localCount(n, nb, owner, procs int) int {
	blocks := n / nb
	c := blocks / procs * nb
	switch extra := blocks % procs; {
	case owner < extra:
		c += nb
	case owner == extra:
		c += n % nb
	}
	return c
}

// LocalRows returns how many rows grid row p holds.
func (l Layout) LocalRows(p int) int { return localCount(l.Rows, l.RowBlock, p, l.Grid.P) }

// LocalCols returns how many columns grid column q holds.
func (l Layout) LocalCols(q int) int { return localCount(l.Cols, l.ColBlock, q, l.Grid.Q) }

// owner maps global index i to its owner and local index.
func owner(i, nb, procs int) (who, local int) {
	b := i / nb
	return b % procs, b/procs*nb + i%nb
}

// global maps local index li of owner who back to the global index.
func global(li, nb, who, procs int) int {
	return (li/nb*procs+who)*nb + li%nb
}

// RowOwner returns the grid row holding global row i and its local row.
func (l Layout) RowOwner(i int) (p, li int) { return owner(i, l.RowBlock, l.Grid.P) }

// ColOwner returns the grid column holding global column j and its local
// column.
func (l Layout) ColOwner(j int) (q, lj int) { return owner(j, l.ColBlock, l.Grid.Q) }

// GlobalRow returns the global row of grid row p's local row li.
func (l Layout) GlobalRow(p, li int) int { return global(li, l.RowBlock, p, l.Grid.P) }

// GlobalCol returns the global column of grid column q's local column lj.
func (l Layout) GlobalCol(q, lj int) int { return global(lj, l.ColBlock, q, l.Grid.Q) }

// Pack copies rank's blocks of the row-major m×n matrix a into local,
// column-major LocalRows×LocalCols, rounded to float32.
func (l Layout) Pack(local []float32, a []float64, rank int) { pack(l, local, a, rank) }

// pack is Pack into float32 or float64 elements.
func pack[T float32 | float64](l Layout, local []T, a []float64, rank int) {
	p, q := l.Grid.Coords(rank)
	rows, cols := l.LocalRows(p), l.LocalCols(q)
	for lj := 0; lj < cols; lj++ {
		j := l.GlobalCol(q, lj)
		col := local[lj*rows : (lj+1)*rows]
		for li := range col {
			col[li] = T(a[l.GlobalRow(p, li)*l.Cols+j])
		}
	}
}

// Unpack copies rank's local blocks (column-major) into their places in
// the row-major m×n matrix a.
func (l Layout) Unpack(a []float64, local []float32, rank int) {
	p, q := l.Grid.Coords(rank)
	rows, cols := l.LocalRows(p), l.LocalCols(q)
	for lj := 0; lj < cols; lj++ {
		j := l.GlobalCol(q, lj)
		for li, v := range local[lj*rows : (lj+1)*rows] {
			a[l.GlobalRow(p, li)*l.Cols+j] = float64(v)
		}
	}
}
