package dist

import (
	"context"
	"errors"
	"fmt"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/fp16"
	"github.com/mwmm/mwmm/gpu/nccl"
)

// Scratch slots of FactorHalf, beside lu.go's.
const (
	slotInv     = 16 // U₁₁⁻¹ then L₁₁⁻¹ in fp16, w×w each
	slotInv32   = 17 // a triangle's inverse in fp32
	slotGrowth  = 18 // max |Â|, then each step's max |L| and max |U| (binary32 bits)
	slotScaleR  = 19 // the local rows' scalings (fp64)
	slotScaleC  = 20 // the local columns'
	slotMaxBits = 21 // the rows' or columns' maxima (fp64 bits)
	slotLtWork  = 22 // cuBLASLt's workspace for the updates
)

// ltWorkspace is the updates' cuBLASLt workspace, per rank.
const ltWorkspace = 32 << 20

// A HalfLU is FactorHalf's result: L̂ and Û, the factors of R·A·C, in
// fp16 over the team, the inverses of their diagonal blocks in fp32 (on
// the blocks' owners), and the powers of two of R and C.
type HalfLU struct {
	W          *Matrix
	Rows, Cols []float64 // R's and C's diagonals
	// Inverses holds, per rank (W.Parts' order), for each diagonal block
	// k it owns, U_kk⁻¹ and L_kk⁻¹ (nb×nb each, at 2k and 2k+1),
	// transposed (as fp16.TriSolver reads them).
	Inverses []*gpu.Buffer
}

// Free frees the factors.
func (h *HalfLU) Free() {
	h.W.Free()
	gpu.FreeAll(h.Inverses...)
}

// FactorHalf factors the system's A without pivoting with the matrix
// held in fp16 (HPL-MxP's LU; package fp16 has the scaling and the
// check): A scaled by powers of two into R·A·C and rounded once to fp16;
// for each block column the diagonal owner factors its block in fp32
// (cuSOLVER sgetrf) and inverts its triangles, which go along its grid
// row and column in fp16; L₂₁ = A₂₁·U₁₁⁻¹ and U₁₂ = L₁₁⁻¹·A₁₂ are products,
// broadcast along grid rows and columns in fp16; and every rank
// subtracts L₂₁·U₁₂ from its trailing blocks, an fp16 product with fp32
// accumulation (cuBLASLt), with the look-ahead of Factor.
//
// With check, the growth of the factors is judged after the first step
// and at the end (fp16.Verdict, over the whole team): a matrix that needs
// pivoting fails with a *fp16.GrowthError.
func FactorHalf(ctx context.Context, s *System, check bool) (*HalfLU, error) {
	a := s.A
	if a.RowBlock > fp16.TriMaxNB {
		return nil, fmt.Errorf("dist: fp16-store takes blocks of at most %d (its solves keep a block in shared memory), not %d", fp16.TriMaxNB, a.RowBlock)
	}
	w, err := allocMatrix(a.Team, a.Layout, false, true)
	if err != nil {
		return nil, err
	}
	lu := &HalfLU{W: w, Rows: make([]float64, a.Rows), Cols: make([]float64, a.Cols), Inverses: make([]*gpu.Buffer, len(w.Parts))}
	nb := a.RowBlock
	err = a.Team.Each(func(r *Rank) error {
		i := w.index(r)
		var err error
		if lu.Inverses[i], err = r.Engine.Device().Alloc(4 * 2 * w.steps() * nb * nb); err != nil {
			return err
		}
		h, err := newHalfRank(r, w)
		if err != nil {
			return err
		}
		h.keep = lu.Inverses[i]
		defer h.free()
		if err := h.scale(a); err != nil {
			return err
		}
		if err := h.factor(ctx, check); err != nil {
			return err
		}
		return h.scalings(lu)
	})
	if err != nil {
		lu.Free()
		return nil, err
	}
	return lu, nil
}

// steps is the number of block columns of an LU in square blocks.
func (m *Matrix) steps() int { return (m.Rows + m.RowBlock - 1) / m.RowBlock }

// halfRank is FactorHalf's state on one rank.
type halfRank struct {
	r        *Rank
	w        *Matrix
	products *fp16.Products
	growth   *gpu.Buffer
	inv      *gpu.Buffer
	inv32    *gpu.Buffer
	work     *gpu.Buffer
	diag     *gpu.Buffer
	keep     *gpu.Buffer              // HalfLU.Inverses' buffer of this rank
	fn       map[string]*gpu.Function // fp16's kernels, by name
	// invert inverts a full diagonal block's U and L (nil: strsm, for
	// orders the Inverter does not take and the last, narrower block).
	invert [2]*fp16.Inverter
}

func newHalfRank(r *Rank, w *Matrix) (*halfRank, error) {
	h := &halfRank{r: r, w: w, fn: map[string]*gpu.Function{}}
	lt, err := r.Engine.Device().Lt()
	if err != nil {
		return nil, err
	}
	h.products = fp16.NewProducts(lt)
	nb, steps := w.RowBlock, w.steps()
	for _, s := range []struct {
		buf        **gpu.Buffer
		slot, size int
	}{
		{&h.growth, slotGrowth, 4 * (1 + 2*steps)}, {&h.inv, slotInv, 2 * 2 * nb * nb},
		{&h.inv32, slotInv32, 4 * nb * nb}, {&h.work, slotLtWork, ltWorkspace}, {&h.diag, slotDiag, 4 * nb * nb},
	} {
		if *s.buf, err = r.scratch(s.slot, s.size); err != nil {
			return nil, err
		}
	}
	d := r.Engine.Device()
	if fp16.Inverts(nb) && w.Rows >= nb {
		for i, upper := range []bool{true, false} {
			if h.invert[i], err = fp16.NewInverter(d, h.diag, h.inv32, nb, upper); err != nil {
				h.free()
				return nil, err
			}
		}
	}
	return h, d.Memset32(h.growth, 0)
}

// free frees the Inverters (the rest is the rank's scratch).
func (h *halfRank) free() {
	for _, v := range h.invert {
		if v != nil {
			v.Free()
		}
	}
}

// launch queues package fp16's kernel name on st, looked up once.
func (h *halfRank) launch(name string, grid [3]uint32, st *gpu.Stream, args ...any) error {
	f := h.fn[name]
	if f == nil {
		mod, err := h.r.Engine.Device().Module(fp16.Kernels())
		if err != nil {
			return err
		}
		if f, err = mod.Function(name); err != nil {
			return err
		}
		h.fn[name] = f
	}
	return f.Launch(grid, [3]uint32{256, 1, 1}, 0, st, args...)
}

// scale writes R·A·C in fp16 to the rank's part of w (package fp16): the
// rows' maxima over the grid row, the columns' (of R·A) over the grid
// column, then the scaled copy; growth's first word becomes the largest
// |entry| here.
func (h *halfRank) scale(a *Matrix) error {
	r, d, st := h.r, h.r.Engine.Device(), h.r.compute
	rows, cols := a.localRows(r), a.localCols(r)
	rs, err := r.scratch(slotScaleR, 8*max(1, rows))
	if err != nil {
		return err
	}
	cs, err := r.scratch(slotScaleC, 8*max(1, cols))
	if err != nil {
		return err
	}
	bits, err := r.scratch(slotMaxBits, 8*max(1, rows, cols))
	if err != nil {
		return err
	}
	ld := int64(max(1, rows))
	chunks := func(n int) uint32 { return uint32(max(1, (n+255)/256)) }
	spread := func(n int) [3]uint32 { return [3]uint32{min(chunks(n), 4096), 1, 1} }
	steps := []func() error{
		func() error { return d.Memset32(bits, 0) },
		func() error {
			return h.launch("row_amax", [3]uint32{chunks(rows), chunks(cols), 1}, st, a.part(r), ld, int64(rows), int64(cols), int32(256), bits)
		},
		func() error { return r.Row.AllReduce(bits, bits, rows, nccl.Float64, nccl.Max, st) },
		func() error { return h.launch("pow2_scales", spread(rows), st, bits, rs, int64(rows), int32(0)) },
		func() error { return r.compute.Sync() }, // bits is zeroed again on the default stream
		func() error { return d.Memset32(bits, 0) },
		func() error {
			return h.launch("col_amax", [3]uint32{uint32(max(1, min(cols, 65535))), 1, 1}, st, a.part(r), ld, int64(rows), int64(cols), rs, bits)
		},
		func() error { return r.Col.AllReduce(bits, bits, cols, nccl.Float64, nccl.Max, st) },
		func() error {
			return h.launch("pow2_scales", spread(cols), st, bits, cs, int64(cols), int32(fp16.Exponent))
		},
		func() error {
			grid := [3]uint32{min(chunks(rows), 4), uint32(max(1, min(cols, 4096))), 1}
			return h.launch("scale_to_f16", grid, st, a.part(r), ld, int64(rows), int64(cols), rs, cs, h.w.part(r), ld, h.growth)
		},
	}
	mark(r, -1, "scale", st)
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	mark(r, -1, "scaled", st)
	return nil
}

// factor runs the steps, with Factor's look-ahead, judging the growth
// after the first and at the end when check is set.
func (h *halfRank) factor(ctx context.Context, check bool) error {
	r, w := h.r, h.w
	next, _, err := r.events(6) // block column and row k+1 are up to date
	if err != nil {
		return err
	}
	if err := next.Record(r.compute); err != nil {
		return err
	}
	steps := w.steps()
	for k := 0; k < steps; k++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		st := halfStep{luStep: &luStep{w: w, r: r, k: k, next: next}, h: h}
		if err := errors.Join(st.panelWork(), st.update(st.updateRegion)); err != nil {
			return fmt.Errorf("block column %d: %w", k, err)
		}
		if check && k == 0 && steps > 1 {
			if err := h.verdict(1); err != nil {
				return err
			}
		}
	}
	if check {
		return h.verdict(steps)
	}
	return r.wait(w.Team.Timeout)
}

// verdict judges the first steps' growth over the whole team: each
// rank's maxima raised to the team's, read back, and fp16.Verdict.
func (h *halfRank) verdict(steps int) error {
	r := h.r
	words := make([]float32, 1+2*steps)
	if err := r.World.AllReduce(h.growth, h.growth, len(words), nccl.Float32, nccl.Max, r.compute); err != nil {
		return err
	}
	if err := r.wait(h.w.Team.Timeout); err != nil {
		return err
	}
	if err := r.Engine.Device().Download(words, h.growth.View(0)); err != nil {
		return err
	}
	if bad := fp16.Verdict(words[0], words[1:], h.w.RowBlock); bad != nil {
		return bad
	}
	return nil
}

// scalings copies R's and C's powers of two into lu: grid column 0
// holds every row's, grid row 0 every column's.
func (h *halfRank) scalings(lu *HalfLU) error {
	r, w := h.r, h.w
	d := r.Engine.Device()
	for _, s := range []struct {
		mine  bool
		slot  int
		count int
		place func(local int) int
		out   []float64
	}{
		{r.Q == 0, slotScaleR, w.localRows(r), func(l int) int { return w.GlobalRow(r.P, l) }, lu.Rows},
		{r.P == 0, slotScaleC, w.localCols(r), func(l int) int { return w.GlobalCol(r.Q, l) }, lu.Cols},
	} {
		if !s.mine || s.count == 0 {
			continue
		}
		buf, err := r.scratch(s.slot, 8*s.count)
		if err != nil {
			return err
		}
		host := make([]float64, s.count)
		if err := d.Download(host, buf); err != nil {
			return err
		}
		for l, v := range host {
			s.out[s.place(l)] = v
		}
	}
	return nil
}

// growthAt is step k's words in growth: max |L|, then max |U|.
func (h *halfRank) growthAt(k int) (l, u *gpu.Buffer) {
	b := h.growth.View(4 * (1 + 2*k))
	return b, b.View(4)
}

// matmul runs D = α·A·B + β·C in fp16 with fp32 accumulation
// (fp16.Products). The panels' stream gets no workspace: the updates'
// holds it.
func (h *halfRank) matmul(kind string, spec gpu.MatmulSpec) error {
	if spec.Stream == h.r.compute {
		spec.Workspace = h.work
	}
	return h.products.Run(kind, spec)
}

// halfStep is block column k of FactorHalf on a rank.
type halfStep struct {
	*luStep
	h *halfRank
}

// panelWork queues on the transfer stream, once block column and row k
// are up to date: the diagonal block's factors and inverses, their
// broadcasts, L₂₁ and U₁₂, and theirs (in fp16: bytes to NCCL).
func (s halfStep) panelWork() error {
	r, w, h := s.r, s.w, s.h
	st := r.transfers
	width, pk, qk, rowT, colT := s.geometry()
	rows, cols := w.localRows(r), w.localCols(r)
	rowK, colK := s.k/w.Grid.P*w.RowBlock, s.k/w.Grid.Q*w.ColBlock
	mT, nT := rows-rowT, cols-colT
	arrived, err := s.awaitTurn()
	if err != nil {
		return err
	}
	s.mark("turn", st)
	if r.P == pk && r.Q == qk {
		if err := h.factorDiag(s.k, s.at(rowK, colK), rows, width); err != nil {
			return err
		}
		s.mark("factored", st)
	}
	if err := s.shareInverses(width, pk, qk); err != nil {
		return err
	}
	s.mark("inverses", st)
	if s.panelL, err = r.scratch(slotL+2*(s.k%2), 2*max(1, mT*width)); err != nil {
		return err
	}
	if s.panelU, err = r.scratch(slotU+2*(s.k%2), 2*max(1, width*nT)); err != nil {
		return err
	}
	lMax, uMax := h.growthAt(s.k)
	if r.Q == qk && mT > 0 { // L₂₁ = A₂₁·U₁₁⁻¹
		if err := h.panel("l21", gpu.MatmulSpec{M: mT, N: width, K: width, A: s.at(rowT, colK), LdA: rows,
			B: h.inv, LdB: width, D: s.panelL, LdD: mT}, s.at(rowT, colK), rows, lMax); err != nil {
			return err
		}
	}
	if r.P == pk && nT > 0 { // U₁₂ = L₁₁⁻¹·A₁₂
		if err := h.panel("u12", gpu.MatmulSpec{M: width, N: nT, K: width, A: h.inv.View(2 * width * width), LdA: width,
			B: s.at(rowK, colT), LdB: rows, D: s.panelU, LdD: width}, s.at(rowK, colT), rows, uMax); err != nil {
			return err
		}
	}
	s.mark("panels", st)
	err = errors.Join(r.panelRow.Broadcast(s.panelL, 2*mT*width, nccl.Bytes, qk, st),
		r.panelCol.Broadcast(s.panelU, 2*width*nT, nccl.Bytes, pk, st), arrived.Record(st))
	s.mark("arrived", st)
	return err
}

// shareInverses broadcasts the diagonal block's inverses (U₁₁⁻¹, L₁₁⁻¹ in
// fp16) along its grid row, which needs L₁₁⁻¹, and its grid column,
// which needs U₁₁⁻¹.
func (s halfStep) shareInverses(width, pk, qk int) error {
	r, st, bytes := s.r, s.r.transfers, 2*2*width*width
	if r.P == pk {
		if err := r.panelRow.Broadcast(s.h.inv, bytes, nccl.Bytes, qk, st); err != nil {
			return err
		}
	}
	if r.Q == qk {
		return r.panelCol.Broadcast(s.h.inv, bytes, nccl.Bytes, pk, st)
	}
	return nil
}

// panel computes a panel of the factors as the product spec (into the
// panel's buffer D), raises the step's maximum to its largest |entry|,
// and copies it back into W at dst.
func (h *halfRank) panel(kind string, spec gpu.MatmulSpec, dst *gpu.Buffer, ld int, growth *gpu.Buffer) error {
	st := h.r.transfers
	spec.Alpha, spec.Stream = 1, st
	if err := h.matmul(kind, spec); err != nil {
		return err
	}
	if err := h.launch("amax_f16", fp16.AmaxGrid(spec.M, spec.N), st, spec.D, int64(spec.LdD), int32(spec.M), int32(spec.N), growth); err != nil {
		return err
	}
	return h.r.Engine.Device().CopyRect(dst, ld, spec.D, spec.LdD, spec.M, spec.N, 2, st)
}

// factorDiag factors the width×width diagonal block at a (leading
// dimension ld) in fp32 without pivoting, raises step k's maxima, writes
// the factors back in fp16 and their inverses to h.keep.
func (h *halfRank) factorDiag(k int, a *gpu.Buffer, ld, width int) error {
	r, st := h.r, h.r.transfers
	diag := h.diag // nb×nb, holding the width×width block
	grid := fp16.BlockGrid(width, width)
	if err := h.launch("to_f32_f16", grid, st, a, int64(ld), diag, int64(width), int32(width), int32(width)); err != nil {
		return err
	}
	if err := r.getrf(st, diag, width, width, width, nil); err != nil {
		return err
	}
	lMax, _ := h.growthAt(k)
	if err := h.launch("amax_tri_f32", fp16.AmaxGrid(width, width), st, diag, int64(width), int32(width), lMax); err != nil {
		return err
	}
	if err := h.launch("from_f32_f16", grid, st, diag, int64(width), a, int64(ld), int32(width), int32(width)); err != nil {
		return err
	}
	for i, upper := range []bool{true, false} {
		if err := h.inverse(i, width, upper, h.inv.View(2*i*width*width)); err != nil {
			return err
		}
		nb := h.w.RowBlock // kept transposed, as fp16.TriSolver reads it
		if err := h.launch("transpose_f32", fp16.TransposeGrid(width, width), st, h.inv32, int64(width), h.keep.View(4*(2*k+i)*nb*nb), int64(nb), int32(width), int32(width)); err != nil {
			return err
		}
	}
	return nil
}

// inverse writes to out in fp16 the inverse of diag's upper triangle
// (upper, Inverter i) or unit lower one, in fp32 first: by the Inverter
// for full blocks, else cuBLAS strsm on the identity.
func (h *halfRank) inverse(i, width int, upper bool, out *gpu.Buffer) error {
	r, st := h.r, h.r.transfers
	d := r.Engine.Device()
	la, err := d.Linalg()
	if err != nil {
		return err
	}
	if err := fp16.Invert(d, h.invert[i], st, la.Blas, h.diag, h.inv32, width, upper); err != nil {
		return err
	}
	return h.launch("from_f32_f16", fp16.BlockGrid(width, width), st, h.inv32, int64(width), out, int64(width), int32(width), int32(width))
}

// updateRegion subtracts L₂₁·U₁₂'s part for local rows [i0, i1) and
// columns [j0, j1) of the trailing matrix, in fp16 on the compute stream.
func (s halfStep) updateRegion(i0, i1, j0, j1, width, sms int) error {
	if i1 <= i0 || j1 <= j0 {
		return nil
	}
	_, _, _, rowT, colT := s.geometry()
	rows := s.w.localRows(s.r)
	return s.h.matmul(fmt.Sprint("update", sms), gpu.MatmulSpec{M: i1 - i0, N: j1 - j0, K: width,
		A: s.panelL.View(2 * (i0 - rowT)), LdA: rows - rowT, B: s.panelU.View(2 * (j0 - colT) * width), LdB: width,
		D: s.at(i0, j0), LdD: rows, Alpha: -1, Beta: 1, Stream: s.r.compute, SMs: sms})
}
