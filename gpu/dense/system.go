package dense

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/fp16"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
	"github.com/mwmm/mwmm/matgen"
	"github.com/mwmm/mwmm/solve"
)

// A System is an n×n matrix A on the device, in fp64 and column-major
// (element (i, j) at i + j·n, as cuSOLVER keeps it), with what refinement
// needs of it: y = A·x and ‖A‖∞. Free it when done.
type System struct {
	e       *Solver
	n       int
	a       *gpu.Buffer
	rowSums *gpu.Buffer // Σ_j |a_ij| for each row, for ‖A‖∞ and the dominance check
	norm    float64
	// dominant is DiagonallyDominant's answer (by rows, by columns), kept
	// for the next Factor, whose PivotAuto takes it instead of passing
	// over A again (A does not change).
	dominant   *[2]bool
	dominantMu sync.Mutex
}

// MatrixKinds are the kinds GenerateSystem and GenerateSpec draw:
// matgen's counter kinds.
var MatrixKinds = matgen.CounterKinds()

// NewSystem copies the row-major n×n matrix a to the device.
func (e *Solver) NewSystem(n int, a []float64) (*System, error) {
	if n <= 0 || len(a) != n*n {
		return nil, fmt.Errorf("gpu: a system of order %d needs %d entries, got %d", n, n*n, len(a))
	}
	cm := make([]float64, n*n)
	columnMajor(cm, a, n)
	buf, err := e.d.Alloc(8 * n * n)
	if err != nil {
		return nil, err
	}
	if err := e.d.Upload(buf, cm); err != nil {
		buf.Free()
		return nil, err
	}
	return e.system(n, buf)
}

// columnMajor copies the row-major n×n a into cm column-major, in 64×64
// tiles spread over the CPUs: element by element, the strided writes made
// this copy most of a 2 GiB solve from a file (7 s of 7.5 at n = 16384).
func columnMajor(cm, a []float64, n int) {
	const tile = 64
	tiles := (n + tile - 1) / tile
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), tiles) {
		wg.Go(func() {
			for t := int(next.Add(1) - 1); t < tiles*tiles; t = int(next.Add(1) - 1) {
				i0, j0 := t/tiles*tile, t%tiles*tile
				for i := i0; i < min(i0+tile, n); i++ {
					for j := j0; j < min(j0+tile, n); j++ {
						cm[i+j*n] = a[i*n+j]
					}
				}
			}
		})
	}
	wg.Wait()
}

// GenerateSystem draws the n×n matrix of a counter kind with its default
// options: GenerateSpec(n, matgen.Spec{Kind: kind}, seed).
func (e *Solver) GenerateSystem(n int, kind string, seed uint64) (*System, error) {
	return e.GenerateSpec(n, matgen.Spec{Kind: kind}, seed)
}

// GenerateSpec draws the n×n matrix of a counter kind (MatrixKinds:
// uniform, centered, normal, diagdom, hpl-mxp, fasi-higham) with its
// options on the device: bit for bit spec.Generate(n, seed), which the
// CPU engines draw, on every GPU and grid. A bad spec is refused before
// the device is touched.
func (e *Solver) GenerateSpec(n int, spec matgen.Spec, seed uint64) (*System, error) {
	if n <= 0 {
		return nil, fmt.Errorf("gpu: a system of order %d", n)
	}
	if !slices.Contains(MatrixKinds, spec.Kind) {
		return nil, fmt.Errorf("gpu: no matrix kind %q on the device; the kinds are %v", spec.Kind, MatrixKinds)
	}
	spec = spec.Normalized()
	if err := spec.Check(); err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	mod, err := e.d.Module(kernel("lu"))
	if err != nil {
		return nil, err
	}
	buf, err := e.d.Alloc(8 * n * n)
	if err != nil {
		return nil, err
	}
	if err := generate(e.d, mod, buf, n, spec, seed); err != nil {
		buf.Free()
		return nil, err
	}
	return e.system(n, buf)
}

// generate fills buf with the matrix of spec: matgen's formulas, in
// lu.cu's generator kernels.
func generate(d *gpu.Device, mod *gpu.Module, buf *gpu.Buffer, n int, spec matgen.Spec, seed uint64) error {
	total := int64(n) * int64(n)
	launch := func(name string, grid [3]uint32, args ...any) error {
		f, err := mod.Function(name)
		if err != nil {
			return err
		}
		return f.Launch(grid, [3]uint32{256, 1, 1}, 0, nil, args...)
	}
	fill := [3]uint32{4096, 1, 1}
	switch spec.Kind {
	case "uniform":
		return launch("fill_uniform", fill, buf, total, seed, 0.0, 1.0)
	case "normal":
		return launch("fill_normal", fill, buf, total, seed)
	case "fasi-higham":
		return drawFasiHigham(d, mod, buf, n, spec, seed)
	}
	if err := launch("fill_uniform", fill, buf, total, seed, -0.5, 0.5); err != nil {
		return err
	}
	switch spec.Kind {
	case "diagdom":
		return launch("dominate_rows", gpu.StrideGrid(n), buf, int64(n), int32(n))
	case "hpl-mxp":
		return launch("hpl_mxp_rows", gpu.StrideGrid(n), buf, int64(n), int32(n), spec.Scale)
	}
	return nil
}

// randsvdChunk is the most columns (or rows) of C one dormqr call takes
// (a variable for the test of its edges).
var randsvdChunk = 8192

// GenerateRandsvd draws A = Q₁·Σ·Q₂ᵀ on the device with the singular
// values sigma (matgen.Sigmas gives randsvd's: geometric or one-small,
// σ₁ = 1, σ_n = 1/κ). Q₁ and Q₂ are the orthogonal factors of
// the QR factorizations (cuSOLVER dgeqrf) of two Gaussian matrices (the
// normal kind's of seeds 2·seed and 2·seed+1), applied by dormqr: κ₂(A) =
// σ₁/σ_n up to rounding. The CPU's randsvd (package experiment) has the
// same σ but other U and V.
func (e *Solver) GenerateRandsvd(sigma []float64, seed uint64) (*System, error) {
	n := len(sigma)
	if n == 0 {
		return nil, errors.New("gpu: randsvd with no singular values")
	}
	for i, v := range sigma {
		if !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("gpu: randsvd: σ_%d = %g; singular values must be finite and positive", i+1, v)
		}
	}
	r, err := e.newRandsvd(n)
	if err != nil {
		return nil, err
	}
	defer r.free()
	fail := func(err error) (*System, error) { r.c.Free(); return nil, fmt.Errorf("gpu: randsvd: %w", err) }
	if err := r.diagonal(sigma); err != nil {
		return fail(err)
	}
	for q, side := range []int{cuda.SideLeft, cuda.SideRight} {
		if err := r.multiplyQ(side, seed*2+uint64(q)); err != nil {
			return fail(err)
		}
	}
	return e.system(n, r.c)
}

// randsvd builds Q₁·Σ·Q₂ᵀ in c: g holds a Gaussian matrix and then its QR
// factorization, small holds σ, then tau and cuSOLVER's info word.
type randsvd struct {
	d        *gpu.Device
	la       *gpu.Linalg
	mod      *gpu.Module
	n, chunk int
	c, g     *gpu.Buffer
	small    *gpu.Buffer
}

func (e *Solver) newRandsvd(n int) (*randsvd, error) {
	la, err := e.d.Linalg()
	if err != nil {
		return nil, err
	}
	mod, err := e.d.Module(kernel("lu"))
	if err != nil {
		return nil, err
	}
	r := &randsvd{d: e.d, la: la, mod: mod, n: n, chunk: min(n, randsvdChunk)}
	if r.c, err = e.d.Alloc(8 * n * n); err != nil {
		return nil, err
	}
	if r.g, err = e.d.Alloc(8 * n * n); err == nil {
		r.small, err = e.d.Alloc(16*n + 256)
	}
	if err != nil {
		r.free()
		r.c.Free()
		return nil, err
	}
	return r, nil
}

// free frees the scratch (c is the System's, or freed on failure).
func (r *randsvd) free() {
	for _, b := range []*gpu.Buffer{r.g, r.small} {
		if b != nil {
			b.Free()
		}
	}
}

func (r *randsvd) tau() uintptr  { return r.small.Ptr() + uintptr(8*r.n) }
func (r *randsvd) info() uintptr { return r.small.Ptr() + uintptr(16*r.n) }

// diagonal sets c = Σ.
func (r *randsvd) diagonal(sigma []float64) error {
	if err := r.d.Memset32(r.c, 0); err != nil {
		return err
	}
	if err := r.d.Upload(r.small, sigma); err != nil {
		return err
	}
	setDiag, err := r.mod.Function("set_diag")
	if err != nil {
		return err
	}
	return setDiag.Launch(gpu.StrideGrid(r.n), [3]uint32{256, 1, 1}, 0, nil, r.c, int64(r.n), int32(r.n), r.small)
}

// multiplyQ sets c to Q·c (SideLeft) or c·Qᵀ (SideRight), Q from the QR
// of a Gaussian matrix drawn with seed. Q = H₁H₂⋯H_n is applied in
// blocks of reflectors, the last block first, each to a block of c's
// columns (rows for Qᵀ on the right) at a time: cuSOLVER's dormqr refuses
// n = 32768 in one call (CUSOLVER_STATUS_INVALID_VALUE from its workspace
// query).
func (r *randsvd) multiplyQ(side int, seed uint64) error {
	normal, err := r.mod.Function("fill_normal")
	if err != nil {
		return err
	}
	n := r.n
	if err := normal.Launch([3]uint32{4096, 1, 1}, [3]uint32{256, 1, 1}, 0, nil, r.g, int64(n)*int64(n), seed); err != nil {
		return err
	}
	trans := cuda.OpN
	if side == cuda.SideRight {
		trans = cuda.OpT
	}
	var lq, lm int
	if err := r.d.Do(func() error {
		var err error
		if lq, err = cuda.DgeqrfBufferSize(r.la.Solver, n, n, r.g.Ptr(), n); err != nil {
			return err
		}
		return r.apply(side, 0, 0, func(m, cols, k int, a, t, cp uintptr) error {
			lm, err = cuda.DormqrBufferSize(r.la.Solver, side, trans, m, cols, k, a, n, t, cp, n)
			return err
		})
	}); err != nil {
		return err
	}
	lwork := max(lq, lm, 1)
	work, err := r.d.Alloc(8 * lwork)
	if err != nil {
		return err
	}
	defer work.Free()
	err = r.d.Do(func() error {
		if err := cuda.Dgeqrf(r.la.Solver, n, n, r.g.Ptr(), n, r.tau(), work.Ptr(), lwork, r.info()); err != nil {
			return err
		}
		for k0 := (n - 1) / r.chunk * r.chunk; k0 >= 0; k0 -= r.chunk {
			for off := 0; off < n; off += r.chunk {
				if err := r.apply(side, k0, off, func(m, cols, k int, a, t, cp uintptr) error {
					return cuda.Dormqr(r.la.Solver, side, trans, m, cols, k, a, n, t, cp, n, work.Ptr(), lwork, r.info())
				}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return r.d.Sync()
}

// apply runs one block of reflectors k0… on the block of c from column
// (row, on the right) off: reflectors k0… touch rows (columns) k0… only.
func (r *randsvd) apply(side, k0, off int, run func(m, cols, k int, a, tau, c uintptr) error) error {
	n := r.n
	k, w := min(r.chunk, n-k0), min(r.chunk, n-off)
	a, t := r.g.Ptr()+uintptr(8*(k0+k0*n)), r.tau()+uintptr(8*k0)
	if side == cuda.SideLeft {
		return run(n-k0, w, k, a, t, r.c.Ptr()+uintptr(8*(k0+off*n)))
	}
	return run(w, n-k0, k, a, t, r.c.Ptr()+uintptr(8*(off+k0*n)))
}

// system computes ‖A‖∞ and checks that A is finite.
func (e *Solver) system(n int, a *gpu.Buffer) (*System, error) {
	mod, err := e.d.Module(kernel("lu"))
	if err != nil {
		a.Free()
		return nil, err
	}
	sums, err := e.d.Alloc(8 * n)
	if err != nil {
		a.Free()
		return nil, err
	}
	fail := func(err error) (*System, error) {
		sums.Free()
		a.Free()
		return nil, err
	}
	f, err := mod.Function("row_abs_sums")
	if err == nil {
		err = f.Launch(gpu.StrideGrid(n), [3]uint32{256, 1, 1}, 0, nil, a, int64(n), int32(n), sums)
	}
	s := make([]float64, n)
	if err == nil {
		err = e.d.Download(s, sums)
	}
	if err != nil {
		return fail(err)
	}
	norm := 0.0
	for _, v := range s {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fail(errors.New("gpu: A has a NaN or an Inf entry (or its rows' sums overflow)"))
		}
		norm = max(norm, v)
	}
	return &System{e: e, n: n, a: a, rowSums: sums, norm: norm}, nil
}

// dominance says whether A is strictly diagonally dominant by rows or by
// columns (with a relative margin of 2^-20): one pass over A on the
// device.
func (s *System) dominance(mod *gpu.Module) (rows, cols bool, err error) {
	d := s.e.d
	count, err := d.Alloc(8)
	if err != nil {
		return false, false, err
	}
	defer count.Free()
	if err := d.Memset32(count, 0); err != nil {
		return false, false, err
	}
	f, err := mod.Function("dominance")
	if err != nil {
		return false, false, err
	}
	if err := f.Launch([3]uint32{uint32(min(s.n, 4096)), 1, 1}, [3]uint32{256, 1, 1}, 0, nil, s.a, int64(s.n), int32(s.n), s.rowSums, count); err != nil {
		return false, false, err
	}
	var c [2]int32
	if err := d.Download(c[:], count); err != nil {
		return false, false, err
	}
	return c[0] == 0, c[1] == 0, nil
}

// takeDominance is dominance, or the answer DiagonallyDominant kept,
// which it takes: each solve (DiagonallyDominant, then Factor) passes
// over A once, and a benchmark's every solve pays its pass.
func (s *System) takeDominance(mod *gpu.Module) (rows, cols bool, err error) {
	s.dominantMu.Lock()
	kept := s.dominant
	s.dominant = nil
	s.dominantMu.Unlock()
	if kept != nil {
		return kept[0], kept[1], nil
	}
	return s.dominance(mod)
}

// butterflySeed draws every factorization's butterflies: a solve is
// repeatable, and the transform does not depend on A.
const butterflySeed = 0x9e3779b97f4a7c15

// transform writes M·A·Nᵀ to out64 (fp64), or, when out32 is not nil,
// level 1 to out64 and the result rounded to fp32 to out32.
func (s *System) transform(mod *gpu.Module, bf *butterfly, out64, out32 *gpu.Buffer) error {
	d, n := s.e.d, s.n
	src := s.a
	for l := 0; l < butterflyDepth; l++ {
		count := len(bf.pairs[l]) / 2
		pairs, err := d.Alloc(8 * count)
		if err != nil {
			return err
		}
		defer pairs.Free()
		diag, err := d.Alloc(16 * n)
		if err != nil {
			return err
		}
		defer diag.Free()
		if err := d.Upload(pairs, bf.pairs[l]); err != nil {
			return err
		}
		if err := d.Upload(diag, append(slices.Clone(bf.r[l]), bf.s[l]...)); err != nil {
			return err
		}
		name, dst := "butterfly_f64", out64
		if l == butterflyDepth-1 && out32 != nil {
			name, dst = "butterfly_f32", out32
		}
		f, err := mod.Function(name)
		if err != nil {
			return err
		}
		grid := [3]uint32{uint32((count + 255) / 256), uint32(min(count, 65535)), 1}
		if err := f.Launch(grid, [3]uint32{256, 1, 1}, 0, nil, src, dst, int64(n), pairs, int32(count), diag, diag.View(8*n)); err != nil {
			return err
		}
		src = out64
	}
	return d.Sync() // before the deferred frees of pairs and diagonals
}

// DiagonallyDominant says whether A is strictly diagonally dominant by
// rows or by columns, as PivotAuto decides: one pass over A, which the
// next Factor's PivotAuto does not repeat.
func (s *System) DiagonallyDominant() (bool, error) {
	mod, err := s.e.d.Module(kernel("lu"))
	if err != nil {
		return false, err
	}
	rows, cols, err := s.dominance(mod)
	if err != nil {
		return false, err
	}
	s.dominantMu.Lock()
	s.dominant = &[2]bool{rows, cols}
	s.dominantMu.Unlock()
	return rows || cols, nil
}

// N returns the order of the system.
func (s *System) N() int { return s.n }

// NormInf returns ‖A‖∞.
func (s *System) NormInf() float64 { return s.norm }

// Free frees the matrix.
func (s *System) Free() error { return errors.Join(s.a.Free(), s.rowSums.Free()) }

// Sync waits for the work queued on the system's device: refinement's
// vectors on the device (Factors.NewResident) queue their corrections
// without waiting, so that a timer around one needs it.
func (s *System) Sync() error { return s.e.d.Sync() }

// MulVec computes y = A·x in fp64 (cublasDgemv).
func (s *System) MulVec(x, y []float64) error {
	return s.e.gemv(s.a, s.n, x, y)
}

// ResidualDoubleWord sets r = b − A·x in double-word arithmetic on the
// device, rounded to fp64 once (solve.DoubleWordOperator): refinement
// below fp64 residuals' floor, and backward errors measured without
// their rounding errors.
func (s *System) ResidualDoubleWord(x, b, r []float64) error {
	if len(x) != s.n || len(b) != s.n || len(r) != s.n {
		return fmt.Errorf("gpu: a residual of order %d with x, b, r of %d, %d, %d entries", s.n, len(x), len(b), len(r))
	}
	v, err := fp16.NewVectors(s.e.d, b)
	if err != nil {
		return err
	}
	err = v.Queue(func(q *gpu.LaunchQueue) error {
		q.Do(func() error { return s.e.d.Upload(v.Slot(fp16.SlotX), x) })
		return v.QueueDoubleWordResidual(q, s.a, s.n)
	})
	if err == nil {
		err = v.Read(solve.ResidualVector, r)
	}
	return errors.Join(err, v.Free())
}

func (e *Solver) gemv(a *gpu.Buffer, n int, x, y []float64) error {
	la, err := e.d.Linalg()
	if err != nil {
		return err
	}
	// x, then y = A·x after it.
	return e.onVector(x, y, 2*n, n, func(q *gpu.LaunchQueue, v *gpu.Buffer) error {
		q.Do(func() error {
			return cuda.Dgemv(la.Blas, cuda.OpN, n, n, 1, a.Ptr(), n, v.Ptr(), 0, v.Ptr()+uintptr(8*n))
		})
		return nil
	})
}

// onVector copies x to a device vector of size float64s, queues f's work
// on it, and copies len(y) float64s from element from on back into y, all
// in one trip to the device's thread: every host-vector operation of
// refinement.
func (e *Solver) onVector(x, y []float64, size, from int, f func(q *gpu.LaunchQueue, v *gpu.Buffer) error) error {
	return e.d.Do(func() error { return e.vectorTrip(x, y, size, from, f) })
}

func (e *Solver) vectorTrip(x, y []float64, size, from int, f func(q *gpu.LaunchQueue, v *gpu.Buffer) error) error {
	v, err := e.d.Alloc(8 * size)
	if err != nil {
		return err
	}
	defer v.Free()
	if err := e.d.Upload(v, x); err != nil {
		return err
	}
	q := e.d.NewLaunchQueue()
	if err := f(q, v); err != nil {
		return err
	}
	if err := q.Flush(); err != nil {
		return err
	}
	return e.d.Download(y, v.View(8*from))
}
