package dist

import (
	"embed"
	"errors"
	"fmt"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/nccl"
)

//go:embed kernels/*.cu
var kernelFS embed.FS

func kernel(name string) gpu.Source { return gpu.MustSource(kernelFS, name) }

// A Matrix is an fp32 (or fp64) matrix spread over a team: Parts[i]
// holds the blocks of t.Ranks[i], column-major, LocalRows × LocalCols.
type Matrix struct {
	Layout
	Team    *Team
	Parts   []*gpu.Buffer
	Float64 bool // elements in fp64 (NewMatrix64); Scatter and Gather take fp32 ones only
	half    bool // elements in fp16 (FactorHalf's working matrix)
}

// NewMatrix allocates the team's parts of an fp32 matrix of layout l (its
// grid must be the team's), set to zero.
func NewMatrix(t *Team, l Layout) (*Matrix, error) { return newMatrix(t, l, false) }

// NewMatrix64 is NewMatrix in fp64.
func NewMatrix64(t *Team, l Layout) (*Matrix, error) { return newMatrix(t, l, true) }

func (m *Matrix) elem() int {
	switch {
	case m.Float64:
		return 8
	case m.half:
		return 2
	}
	return 4
}

func newMatrix(t *Team, l Layout, double bool) (*Matrix, error) {
	return allocMatrix(t, l, double, false)
}

// allocMatrix allocates the parts in fp64, fp16 or else fp32, set to zero.
func allocMatrix(t *Team, l Layout, double, half bool) (*Matrix, error) {
	if err := l.Check(); err != nil {
		return nil, err
	}
	if l.Grid != t.Grid {
		return nil, fmt.Errorf("dist: a matrix on a %v grid for a team on %v", l.Grid, t.Grid)
	}
	m := &Matrix{Layout: l, Team: t, Parts: make([]*gpu.Buffer, len(t.Ranks)), Float64: double, half: half}
	err := t.Each(func(r *Rank) error {
		d := r.Engine.Device()
		b, err := d.Alloc((m.elem()*max(1, m.localElems(r)) + 3) / 4 * 4) // whole words, for Memset32
		if err != nil {
			return err
		}
		m.Parts[m.index(r)] = b
		return d.Memset32(b, 0)
	})
	if err != nil {
		m.Free()
		return nil, err
	}
	return m, nil
}

func (m *Matrix) index(r *Rank) int {
	for i, o := range m.Team.Ranks {
		if o == r {
			return i
		}
	}
	panic("dist: a rank of another team")
}

func (m *Matrix) localRows(r *Rank) int  { return m.LocalRows(r.P) }
func (m *Matrix) localCols(r *Rank) int  { return m.LocalCols(r.Q) }
func (m *Matrix) localElems(r *Rank) int { return m.localRows(r) * m.localCols(r) }

// Free frees the parts.
func (m *Matrix) Free() {
	if m != nil {
		gpu.FreeAll(m.Parts...)
	}
}

// Scatter sets the matrix to the row-major Rows×Cols a (rounded to fp32):
// each rank of this process uploads its blocks. In a job of one process
// per GPU every process passes the whole a.
func (m *Matrix) Scatter(a []float64) error {
	if len(a) != m.Rows*m.Cols || m.elem() != 4 {
		return fmt.Errorf("dist: Scatter of %d values into a %d×%d matrix (fp64: %v; Scatter fills fp32 ones)", len(a), m.Rows, m.Cols, m.Float64)
	}
	return m.Team.Each(func(r *Rank) error {
		local := make([]float32, m.localElems(r))
		m.Pack(local, a, r.Rank)
		return r.Engine.Device().Upload(m.Parts[m.index(r)], local)
	})
}

// Gather copies the matrix into the row-major a. A team of one process
// per GPU sends every part to rank 0, which alone fills a (the others
// leave it untouched).
func (m *Matrix) Gather(a []float64) error {
	if len(a) != m.Rows*m.Cols || m.elem() != 4 {
		return fmt.Errorf("dist: Gather of a %d×%d matrix into %d values (fp64: %v; Gather reads fp32 ones)", m.Rows, m.Cols, len(a), m.Float64)
	}
	if m.Team.Whole() {
		return m.Team.Each(func(r *Rank) error {
			local := make([]float32, m.localElems(r))
			if err := r.Engine.Device().Download(local, m.Parts[m.index(r)]); err != nil {
				return err
			}
			m.Unpack(a, local, r.Rank)
			return nil
		})
	}
	return m.Team.Each(func(r *Rank) error { return m.gatherAtRoot(r, a) })
}

// gatherAtRoot sends rank r's part to rank 0, or, on rank 0, receives
// every part in turn and unpacks it.
func (m *Matrix) gatherAtRoot(r *Rank, a []float64) error {
	part := m.Parts[m.index(r)]
	if r.Rank != 0 {
		if err := r.World.Send(part, m.localElems(r), nccl.Float32, 0, r.transfers); err != nil {
			return err
		}
		return r.World.Wait(r.transfers, m.Team.Timeout)
	}
	d := r.Engine.Device()
	biggest := m.LocalRows(0) * m.LocalCols(0) // block-cyclic: rank 0 holds the most
	stage, err := d.Alloc(4 * max(1, biggest))
	if err != nil {
		return err
	}
	defer stage.Free()
	for src := 0; src < m.Grid.Size(); src++ {
		p, q := m.Grid.Coords(src)
		local := make([]float32, m.LocalRows(p)*m.LocalCols(q))
		from := part
		if src != 0 {
			from = stage
			if err := r.World.Recv(stage, len(local), nccl.Float32, src, r.transfers); err != nil {
				return err
			}
			if err := r.World.Wait(r.transfers, m.Team.Timeout); err != nil {
				return err
			}
		}
		if err := d.Download(local, from); err != nil {
			return err
		}
		m.Unpack(a, local, src)
	}
	return nil
}

// Kinds are the matgen kinds Generate draws (the counter kinds whose
// entries need no other entry).
var Kinds = []string{"uniform", "centered"}

// Generate draws matgen's matrix kind with seed in place: element (i, j)
// is entry i + j·Rows of the kind's stream, rounded to fp32, whatever the
// grid.
func (m *Matrix) Generate(kind string, seed uint64) error {
	lo := 0.0
	switch kind {
	case "uniform":
	case "centered":
		lo = -0.5
	default:
		return fmt.Errorf("dist: no distributed generator for kind %q (have %v)", kind, Kinds)
	}
	return m.Team.Each(func(r *Rank) error {
		return r.fill(m.Parts[m.index(r)], m.Layout, r.P, r.Q, lo, seed, m.Float64)
	})
}

// function returns one of dist.cu's kernels on r's device.
func (r *Rank) function(name string) (*gpu.Function, error) {
	mod, err := r.Engine.Device().Module(kernel("dist"))
	if err != nil {
		return nil, err
	}
	return mod.Function(name)
}

// errShape reports operands whose layouts do not make a product.
func errShape(a, b, c *Matrix) error {
	switch {
	case a.Team != b.Team || a.Team != c.Team:
		return errors.New("dist: Multiply of matrices of different teams")
	case a.Cols != b.Rows || a.Rows != c.Rows || b.Cols != c.Cols:
		return fmt.Errorf("dist: Multiply of %d×%d by %d×%d into %d×%d", a.Rows, a.Cols, b.Rows, b.Cols, c.Rows, c.Cols)
	case a.Grid != b.Grid || a.Grid != c.Grid:
		return fmt.Errorf("dist: Multiply of matrices on grids %v, %v and %v", a.Grid, b.Grid, c.Grid)
	case a.RowBlock != c.RowBlock || b.ColBlock != c.ColBlock || a.ColBlock != b.RowBlock:
		return fmt.Errorf("dist: Multiply of blocks %d×%d by %d×%d into %d×%d: A's rows and C's, B's columns and C's, A's columns and B's rows must be cut alike",
			a.RowBlock, a.ColBlock, b.RowBlock, b.ColBlock, c.RowBlock, c.ColBlock)
	}
	return nil
}
