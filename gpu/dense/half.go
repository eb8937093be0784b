package dense

import (
	"errors"
	"fmt"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/fp16"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
)

// halfLU is the fp16-storage LU's state: the scaled A in fp16 becoming
// the factors, the work space beside it (halfScratch), and the
// look-ahead's streams.
type halfLU struct {
	*halfScratch
	e     *Solver
	d     *gpu.Device
	la    *gpu.Linalg
	n, nb int
	w     *gpu.Buffer // R·A·C in fp16, then L̂ and Û
	// inverses, when set, keeps each diagonal block's L⁻¹ and U⁻¹ in fp32
	// (Factors.inverses).
	inverses *gpu.Buffer
	ph       *Phases // nil: not profiling
	fn       map[string]*gpu.Function

	// main is the updates' stream; side the panel's (its diagonal block,
	// U₁₁⁻¹, L₂₁), side2 its L₁₁⁻¹ and U₁₂ beside them, with the second
	// cuBLAS handle blas2 (a handle's work space serves one stream at a
	// time). Without look-ahead the three are main.
	main, side, side2 *gpu.Stream
	blas2             uintptr
	sideSMs           int
}

// halfKernels are the kernels fp16-store launches, package fp16's.
var halfKernels = map[string]func() gpu.Source{
	"row_amax": fp16.Kernels, "pow2_scales": fp16.Kernels, "col_amax": fp16.Kernels, "scale_to_f16": fp16.Kernels,
	"to_f32_f16": fp16.Kernels, "from_f32_f16": fp16.Kernels, "copy_f16": fp16.Kernels,
	"amax_f16": fp16.Kernels, "amax_tri_f32": fp16.Kernels,
	"transpose_f32": fp16.Kernels,
}

func (e *Solver) newHalfLU(la *gpu.Linalg, n, nb int, f LUForm) (*halfLU, error) {
	h := &halfLU{e: e, d: e.d, la: la, n: n, nb: nb, fn: map[string]*gpu.Function{}}
	for name, src := range halfKernels {
		mod, err := e.d.Module(src())
		if err != nil {
			return nil, err
		}
		if h.fn[name], err = mod.Function(name); err != nil {
			return nil, err
		}
	}
	var err error
	if h.halfScratch, err = e.takeScratch(la, n, nb); err != nil {
		return nil, err
	}
	if h.w, err = h.d.Alloc(2 * n * n); err != nil {
		h.free()
		return nil, err
	}
	if err := h.d.Memset32(h.growth, 0); err != nil {
		h.free()
		return nil, err
	}
	if h.main, h.side, h.side2, err = e.independentStreams(); err != nil {
		h.free()
		return nil, err
	}
	if h.sideSMs = f.LookaheadSMs; h.sideSMs == 0 {
		h.sideSMs = 32
	}
	if f.Profile || h.sideSMs < 0 || h.sideSMs >= e.d.Multiprocessors() {
		h.side, h.side2, h.sideSMs = h.main, h.main, 0
	}
	if h.blas2, err = e.d.SecondBlas(); err != nil {
		h.free()
	}
	return h, err
}

// independentStreams returns fp16-store's three streams, made once per
// engine, independent of the default stream: the update's, and the
// panel's two, urgent, so that their small kernels go ahead of the
// update's blocks.
func (e *Solver) independentStreams() (main, side, side2 *gpu.Stream, err error) {
	e.streamsMu.Lock()
	defer e.streamsMu.Unlock()
	if e.halfStreams[0] == nil {
		if e.halfStreams[0], err = e.d.NewIndependentStream(); err != nil {
			return nil, nil, nil, err
		}
	}
	for i := 1; i < 3; i++ {
		if e.halfStreams[i] == nil {
			if e.halfStreams[i], err = e.d.NewUrgentStream(); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	return e.halfStreams[0], e.halfStreams[1], e.halfStreams[2], nil
}

func (h *halfLU) steps() int { return (h.n + h.nb - 1) / h.nb }

// free frees the working matrix (unless the factors took it) and gives
// the work space back to the Solver.
func (h *halfLU) free() {
	h.d.Do(func() error {
		errs := []error{cuda.CusolverSetStream(h.la.Solver, 0), cuda.CublasSetStream(h.la.Blas, 0)}
		if h.blas2 != 0 {
			errs = append(errs, cuda.CublasSetStream(h.blas2, 0))
		}
		return errors.Join(errs...)
	})
	h.w.Free()
	if h.halfScratch != nil {
		h.e.putScratch(h.halfScratch)
	}
}

// at is the fp16 entry (i, j) of w.
func (h *halfLU) at(i, j int) *gpu.Buffer { return h.w.View(2 * (i + j*h.n)) }

// launch runs a kernel of half.cu on st with blocks of 256 threads.
func (h *halfLU) launch(name string, grid [3]uint32, st *gpu.Stream, args ...any) error {
	return h.fn[name].Launch(grid, [3]uint32{256, 1, 1}, 0, st, args...)
}

// scale writes R·A·C into w in fp16, with r and c (n fp64 each) powers
// of two: every row's largest entry brought to [1, 2), then every
// column's to [2^fp16.Exponent, 2^(fp16.Exponent+1)), in three passes over
// A (the rows' maxima, the columns', the scaled copy); the largest
// |entry| goes to growth's first word.
func (h *halfLU) scale(a, r, c *gpu.Buffer) error {
	n := h.n
	maxBits, err := h.d.Alloc(8 * n)
	if err != nil {
		return err
	}
	defer maxBits.Free()
	chunks := uint32((n + 255) / 256)
	spread := [3]uint32{min(chunks, 4096), 1, 1}
	steps := []func() error{
		func() error { return h.d.Memset32(maxBits, 0) },
		func() error {
			return h.launch("row_amax", [3]uint32{chunks, chunks, 1}, nil, a, int64(n), int64(n), int64(n), int32(256), maxBits)
		},
		func() error { return h.launch("pow2_scales", spread, nil, maxBits, r, int64(n), int32(0)) },
		func() error { return h.d.Memset32(maxBits, 0) },
		func() error {
			return h.launch("col_amax", [3]uint32{uint32(min(n, 65535)), 1, 1}, nil, a, int64(n), int64(n), int64(n), r, maxBits)
		},
		func() error { return h.launch("pow2_scales", spread, nil, maxBits, c, int64(n), int32(fp16.Exponent)) },
		func() error {
			grid := [3]uint32{min(chunks, 4), uint32(min(n, 4096)), 1}
			return h.launch("scale_to_f16", grid, nil, a, int64(n), int64(n), int64(n), r, c, h.w, int64(n), h.growth)
		},
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	return h.d.Sync() // maxBits is freed on return
}

// growthAt is step k's words in growth: max |L|, then max |U|.
func (h *halfLU) growthAt(k int) (l, u *gpu.Buffer) {
	b := h.growth.View(4 * (1 + 2*k))
	return b, b.View(4)
}

// matmul runs D = α·A·B + β·C in fp16 with fp32 accumulation
// (fp16.Products). The panel's streams get no workspace: the update's
// holds the engine's.
func (h *halfLU) matmul(kind string, spec gpu.MatmulSpec) error {
	if spec.Stream == h.main {
		spec.Workspace = h.e.workspace
	}
	return h.products.Run(kind, spec)
}

// The growth check (package fp16), under the names this package has
// always given it.
const (
	HalfMaxMultiplier = fp16.MaxMultiplier
	HalfMaxGrowth     = fp16.MaxGrowth
)

// ErrNeedsPivoting is wrapped by the error of a factorization without
// pivoting whose growth check failed: factor again with partial pivoting.
var ErrNeedsPivoting = fp16.ErrNeedsPivoting

// A GrowthError says where and by how much an LU without pivoting
// failed its growth check.
type GrowthError = fp16.GrowthError

// factorHalf factors R·A·C in fp16 without pivoting (the Half update),
// checking the growth unless the form says PivotNone, and keeps the fp16
// factors as fa.lu; fa keeps R and C for Solve.
func (fa *Factors) factorHalf(la *gpu.Linalg, f LUForm) error {
	s, d, n := fa.s, fa.s.e.d, fa.s.n
	switch f.Pivoting {
	case PivotPartial, PivotButterfly:
		return fmt.Errorf("gpu: the %s form factors without pivoting; with %s pivoting take double-fp16-fabsum or fp64", f.Name, Pivotings[f.Pivoting])
	}
	check := f.Pivoting == PivotAuto
	fa.Pivoting = PivotingDone{Kind: PivotNone}
	if check {
		fa.Pivoting.Reason = ReasonGrowthChecked
	}
	if err := d.Upload(fa.ipiv, identityPivots(n)); err != nil {
		return err
	}
	if err := fa.setNB(f, false); err != nil {
		return err
	}
	if fa.NB > fp16.TriMaxNB {
		return fmt.Errorf("gpu: %s takes blocks of at most %d (its solves keep a block in shared memory), not %d", f.Name, fp16.TriMaxNB, fa.NB)
	}
	h, err := s.e.newHalfLU(la, n, fa.NB, f)
	if err != nil {
		return err
	}
	defer h.free()
	if f.Profile {
		fa.Phases = new(Phases)
		h.ph = fa.Phases
	}
	if fa.rows, err = d.Alloc(8 * n); err == nil {
		fa.cols, err = d.Alloc(8 * n)
	}
	if err == nil {
		fa.inverses, err = d.Alloc(4 * 2 * h.steps() * fa.NB * fa.NB)
		h.inverses = fa.inverses
	}
	if err != nil {
		return err
	}
	if err := h.timed(phaseConvert, func() error { return h.scale(s.a, fa.rows, fa.cols) }); err != nil {
		return err
	}
	if err := h.run(check); err != nil {
		return err
	}
	fa.lu, h.w = h.w, nil
	return nil
}

// identityPivots are LAPACK's pivots of no interchange (1-based).
func identityPivots(n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i + 1)
	}
	return p
}
