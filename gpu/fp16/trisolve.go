package fp16

import (
	"errors"
	"fmt"

	"github.com/mwmm/mwmm/gpu"
)

// TriMaxNB is the widest block a TriSolver takes (kernels/half.cu's
// TRI_MAX_NB: one block's solution in each thread block's shared memory).
const TriMaxNB = 2048

// A TriSolver applies the triangles of fp16 LU factors to a vector in
// fp32, a block column at a time: block k's solution t = T_kk⁻¹·x_k from
// the diagonal block's inverse (kept in fp32, transposed, so that each row
// of the inverse is contiguous), then x −= the block column's product
// with t. Each sweep is one cooperative launch, a thread block an SM,
// whose blocks meet at a grid-wide barrier after each half of a step; the
// sums are added in a fixed order (the same x every run). The factors'
// bytes are read once, at about a quarter of the memory's rate at
// n = 65536 (H200): two barriers and a chain of loads a step bound it,
// not the bytes. gpu/dense and gpu/dist share it; the factors may lie in
// parts over a grid, as gpu/dist's ranks hold them.
type TriSolver struct {
	f           TriFactors
	sweep       *gpu.Function // tri_sweep_f16
	zero        *gpu.Function // zero_u32
	ptrs        *gpu.Buffer   // the parts, the inverses (lower, upper), then the parts' leading dimensions
	t, count    *gpu.Buffer   // one block's solution; the barrier's count
	blocks      uint32
	invAt, ldAt int // where in ptrs (in words) the inverses and the leading dimensions start
}

// TriFactors describe fp16 LU factors of order N in blocks of NB over a
// P×Q grid, 2-D block-cyclic: Part(p, q) is grid (p, q)'s part,
// column-major with Rows(p) rows (the leading dimension); Inverse(k,
// upper) is block k's U_kk⁻¹ (upper) or L_kk⁻¹, in fp32, transposed (by
// transpose_f32, TransposeGrid), with leading dimension NB. One GPU: P =
// Q = 1, the n×n matrix the only part.
type TriFactors struct {
	N, NB, P, Q int
	Part        func(p, q int) *gpu.Buffer
	Rows        func(p int) int
	Inverse     func(k int, upper bool) *gpu.Buffer
}

// NewTriSolver prepares solves with f on d, uploading the parts' and
// inverses' addresses once.
func NewTriSolver(d *gpu.Device, f TriFactors) (*TriSolver, error) {
	if f.N < 1 || f.NB < 1 || f.NB > TriMaxNB || f.P < 1 || f.Q < 1 {
		return nil, fmt.Errorf("fp16: a TriSolver takes n ≥ 1 in blocks of 1 to %d on a grid, not n = %d, nb = %d, %d×%d", TriMaxNB, f.N, f.NB, f.P, f.Q)
	}
	s := &TriSolver{f: f, blocks: uint32(d.Multiprocessors())}
	var err error
	if s.sweep, s.zero, err = functions(d, "tri_sweep_f16", "zero_u32"); err != nil {
		return nil, err
	}
	s.sweep.SetCooperative() // its blocks wait for each other
	steps := (f.N + f.NB - 1) / f.NB
	host := make([]uint64, 0, f.P*f.Q+2*steps+f.P)
	for q := range f.Q {
		for p := range f.P {
			host = append(host, uint64(f.Part(p, q).Ptr()))
		}
	}
	s.invAt = len(host)
	for _, upper := range []bool{false, true} {
		for k := range steps {
			host = append(host, uint64(f.Inverse(k, upper).Ptr()))
		}
	}
	s.ldAt = len(host)
	for p := range f.P {
		host = append(host, uint64(f.Rows(p)))
	}
	if s.ptrs, err = d.Alloc(8 * len(host)); err == nil {
		err = d.Upload(s.ptrs, host)
	}
	if err == nil {
		s.t, err = d.Alloc(4 * f.NB)
	}
	if err == nil {
		s.count, err = d.Alloc(4)
	}
	if err != nil {
		s.Free()
		return nil, err
	}
	return s, nil
}

// Free frees the solver's buffers.
func (s *TriSolver) Free() { gpu.FreeAll(s.ptrs, s.t, s.count) }

// Solve queues x = Û⁻¹L̂⁻¹·x on the default stream, x an n-vector in
// fp32: the forward sweep, then the backward one.
func (s *TriSolver) Solve(q *gpu.LaunchQueue, x *gpu.Buffer) error {
	if x.Bytes() < 4*s.f.N {
		return fmt.Errorf("fp16: a TriSolver of order %d with a vector of %d bytes", s.f.N, x.Bytes())
	}
	steps := (s.f.N + s.f.NB - 1) / s.f.NB
	f := s.f
	for i, upper := range []int32{0, 1} {
		invs := s.ptrs.View(8 * (s.invAt + i*steps))
		err := errors.Join(q.Launch(s.zero, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, nil, s.count),
			q.Launch(s.sweep, [3]uint32{s.blocks, 1, 1}, [3]uint32{1024, 1, 1}, 0, nil, s.ptrs, s.ptrs.View(8*s.ldAt),
				int32(f.P), int32(f.Q), invs, int64(f.N), int32(f.NB), upper, x, s.t, s.count))
		if err != nil {
			return err
		}
	}
	return nil
}

// TransposeGrid is transpose_f32's grid for an m×n block, at 256
// threads a block: it keeps a diagonal block's inverse as a TriSolver
// reads it.
func TransposeGrid(m, n int) [3]uint32 {
	return [3]uint32{uint32(max(1, (m+31)/32)), uint32(max(1, (n+31)/32)), 1}
}
