package dense

import (
	"errors"
	"fmt"
	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/gemm"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
	"github.com/mwmm/mwmm/lu"
	"github.com/mwmm/mwmm/multiword"
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

// MatrixKinds are the generators of GenerateSystem.
var MatrixKinds = []string{"uniform", "centered", "normal", "diagdom"}

// NewSystem copies the row-major n×n matrix a to the device.
func (e *Solver) NewSystem(n int, a []float64) (*System, error) {
	if n <= 0 || len(a) != n*n {
		return nil, fmt.Errorf("gpu: a system of order %d needs %d entries, got %d", n, n*n, len(a))
	}
	cm := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			cm[i+j*n] = a[i*n+j]
		}
	}
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

// GenerateSystem draws an n×n matrix on the device: uniform in (0, 1],
// centered (uniform in (−0.5, 0.5]), normal, or diagdom (centered plus
// n/2 on the diagonal, with its sign: diagonally dominant by rows and
// columns). The same seed gives the same matrix on every GPU.
func (e *Solver) GenerateSystem(n int, kind string, seed uint64) (*System, error) {
	if n <= 0 {
		return nil, fmt.Errorf("gpu: a system of order %d", n)
	}
	mod, err := e.d.Module(kernel("lu"))
	if err != nil {
		return nil, err
	}
	buf, err := e.d.Alloc(8 * n * n)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*System, error) { buf.Free(); return nil, err }
	total := int64(n) * int64(n)
	fill := func(name string, args ...any) error {
		f, err := mod.Function(name)
		if err != nil {
			return err
		}
		return f.Launch([3]uint32{4096, 1, 1}, [3]uint32{256, 1, 1}, 0, nil, append([]any{buf, total, seed}, args...)...)
	}
	switch kind {
	case "uniform":
		err = fill("fill_uniform", 0.0, 1.0)
	case "centered", "diagdom":
		err = fill("fill_uniform", -0.5, 0.5)
		if err == nil && kind == "diagdom" {
			var f *gpu.Function
			if f, err = mod.Function("add_diag"); err == nil {
				err = f.Launch(gpu.StrideGrid(n), [3]uint32{256, 1, 1}, 0, nil, buf, int64(n), int32(n), float64(n)/2)
			}
		}
	case "normal":
		err = fill("fill_normal")
	default:
		err = fmt.Errorf("gpu: no matrix kind %q on the device; the kinds are %v", kind, MatrixKinds)
	}
	if err != nil {
		return fail(err)
	}
	return e.system(n, buf)
}

// randsvdChunk is the most columns (or rows) of C one dormqr call takes
// (a variable for the test of its edges).
var randsvdChunk = 8192

// GenerateRandsvd draws A = Q₁·Σ·Q₂ᵀ on the device with the singular
// values sigma (experiment.MatrixSpec.Sigmas gives randsvd's: geometric or
// one-small, σ₁ = 1, σ_n = 1/κ). Q₁ and Q₂ are the orthogonal factors of
// the QR factorizations (cuSOLVER dgeqrf) of two Gaussian matrices,
// applied by dormqr: κ₂(A) = σ₁/σ_n up to rounding.
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
	la, err := e.d.Linalg()
	if err != nil {
		return nil, err
	}
	mod, err := e.d.Module(kernel("lu"))
	if err != nil {
		return nil, err
	}
	d := e.d
	c, err := d.Alloc(8 * n * n)
	if err != nil {
		return nil, err
	}
	g, err := d.Alloc(8 * n * n)
	if err != nil {
		c.Free()
		return nil, err
	}
	defer g.Free()
	small, err := d.Alloc(16*n + 256) // σ, then tau and the info word
	if err != nil {
		c.Free()
		return nil, err
	}
	defer small.Free()
	fail := func(err error) (*System, error) { c.Free(); return nil, fmt.Errorf("gpu: randsvd: %w", err) }
	tau, info := small.Ptr()+uintptr(8*n), small.Ptr()+uintptr(16*n)
	if err := d.Memset32(c, 0); err != nil {
		return fail(err)
	}
	if err := d.Upload(small, sigma); err != nil {
		return fail(err)
	}
	setDiag, err := mod.Function("set_diag")
	if err != nil {
		return fail(err)
	}
	if err := setDiag.Launch(gpu.StrideGrid(n), [3]uint32{256, 1, 1}, 0, nil, c, int64(n), int32(n), small); err != nil {
		return fail(err)
	}
	normal, err := mod.Function("fill_normal")
	if err != nil {
		return fail(err)
	}
	for q, side := range []int{cuda.SideLeft, cuda.SideRight} {
		if err := normal.Launch([3]uint32{4096, 1, 1}, [3]uint32{256, 1, 1}, 0, nil, g, int64(n)*int64(n), seed*2+uint64(q)); err != nil {
			return fail(err)
		}
		trans := cuda.OpN
		if side == cuda.SideRight {
			trans = cuda.OpT
		}
		// Q = H₁H₂⋯H_n is applied in blocks of reflectors, the last block
		// first (Q·C and C·Qᵀ alike), each to a block of C's columns (rows
		// for Qᵀ on the right) at a time: cuSOLVER's dormqr refuses
		// n = 32768 in one call (CUSOLVER_STATUS_INVALID_VALUE from its
		// workspace query). Reflectors k0… touch rows (columns) k0… only.
		chunk := min(n, randsvdChunk)
		apply := func(k0, off int, run func(m, cols, k int, a, tau, c uintptr) error) error {
			k, w := min(chunk, n-k0), min(chunk, n-off)
			a, t := g.Ptr()+uintptr(8*(k0+k0*n)), tau+uintptr(8*k0)
			if side == cuda.SideLeft {
				return run(n-k0, w, k, a, t, c.Ptr()+uintptr(8*(k0+off*n)))
			}
			return run(w, n-k0, k, a, t, c.Ptr()+uintptr(8*(off+k0*n)))
		}
		var lq, lm int
		if err := d.Do(func() error {
			var err error
			if lq, err = cuda.DgeqrfBufferSize(la.Solver, n, n, g.Ptr(), n); err != nil {
				return err
			}
			return apply(0, 0, func(m, cols, k int, a, t, cp uintptr) error {
				lm, err = cuda.DormqrBufferSize(la.Solver, side, trans, m, cols, k, a, n, t, cp, n)
				return err
			})
		}); err != nil {
			return fail(err)
		}
		lwork := max(lq, lm, 1)
		work, err := d.Alloc(8 * lwork)
		if err != nil {
			return fail(err)
		}
		err = d.Do(func() error {
			if err := cuda.Dgeqrf(la.Solver, n, n, g.Ptr(), n, tau, work.Ptr(), lwork, info); err != nil {
				return err
			}
			for k0 := (n - 1) / chunk * chunk; k0 >= 0; k0 -= chunk {
				for off := 0; off < n; off += chunk {
					if err := apply(k0, off, func(m, cols, k int, a, t, cp uintptr) error {
						return cuda.Dormqr(la.Solver, side, trans, m, cols, k, a, n, t, cp, n, work.Ptr(), lwork, info)
					}); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err == nil {
			err = d.Sync()
		}
		work.Free()
		if err != nil {
			return fail(err)
		}
	}
	return e.system(n, c)
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

// MulVec computes y = A·x in fp64 (cublasDgemv).
func (s *System) MulVec(x, y []float64) error {
	return s.e.gemv(s.a, s.n, x, y)
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
// on it and runs it in one trip to the device's thread, and copies len(y)
// float64s from element from on back into y: every host-vector operation
// of refinement.
func (e *Solver) onVector(x, y []float64, size, from int, f func(q *gpu.LaunchQueue, v *gpu.Buffer) error) error {
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

// An LUForm says how the GPU factors: cuSOLVER's getrf in fp64 or fp32,
// or the blocked LU whose trailing updates run on the tensor cores through
// the fused kernel with Plan: one word (the TC32 form: fp16, bf16 or TF32
// inputs, fp32 accumulation and storage) or a multiword FABsum plan.
type LUForm struct {
	Name    string
	Getrf64 bool            // cusolverDnDgetrf
	Getrf32 bool            // cusolverDnSgetrf
	Plan    *multiword.Plan // the blocked LU's updates on the fused kernel
	// Words, for the TC32 forms, is the word the blocked LU's updates
	// round L₂₁ and U₁₂ to before cuBLASLt multiplies them with fp32
	// accumulation: F16, BF16, or F32 holding TF32 values.
	Words gpu.DataType
	// OzakiDigits, for the Ozaki forms (ozaki-int8xS), is S: the LU is
	// held in fp64 and its updates run on the int8 tensor cores, each
	// row of L₂₁ and column of U₁₂ cut into S 7-bit digits (ozakiTrailing).
	OzakiDigits int
	NB          int // the block size of the blocked LU; 0: DefaultNB's
	// Profile times the blocked LU's phases (Factors.Phases), waiting for
	// the GPU after each: about 10 µs a phase. It turns the look-ahead off.
	Profile bool
	// LookaheadSMs are the multiprocessors the trailing update leaves to
	// the next panel, factored meanwhile on a second stream: 0 means 32,
	// negative turns the look-ahead off.
	LookaheadSMs int
	// Panels is how the blocked LU factors its panels when it pivots:
	// PanelsAuto (the zero value) takes our recursive panel where it was
	// faster than cuSOLVER's getrf on an H100, from n = 16384 on for the
	// fp32 working forms.
	Panels Panels
	// Pivoting is how the factorization picks its pivots (PivotAuto:
	// none when A is strictly diagonally dominant, else partial).
	Pivoting Pivoting
}

// Panels says how a blocked LU with partial pivoting factors its panels.
type Panels int

const (
	PanelsAuto      Panels = iota // PanelsRecursive from n = RecursivePanelsFrom on for the fp32 working forms, else PanelsGetrf
	PanelsGetrf                   // cuSOLVER's getrf down the panel (sgetrf; dgetrf for the Ozaki forms)
	PanelsRecursive               // our recursive panel (at most maxPanelRows rows)
)

// PanelKinds names the Panels values, as ParsePanels reads them.
var PanelKinds = []string{"auto", "sgetrf", "recursive"}

// ParsePanels reads auto, sgetrf or recursive.
func ParsePanels(name string) (Panels, error) {
	if i := slices.Index(PanelKinds, name); i >= 0 {
		return Panels(i), nil
	}
	return 0, fmt.Errorf("gpu: no panel kind %q: %v", name, PanelKinds)
}

// RecursivePanelsFrom is the smallest order at which PanelsAuto takes the
// recursive panel: on an H100 both panels gave the same factorization
// times at n = 8192, and the recursive one 5–7% shorter (medians of four
// runs) at 16384 and 32768 (docs/perf/solve-h100.md).
const RecursivePanelsFrom = 16384

// recursivePanels says whether the blocked LU of order n in the form
// factors its pivoted panels with panelLU, on a GPU of sms
// multiprocessors.
func (f LUForm) recursivePanels(n, sms int) bool {
	switch f.Panels {
	case PanelsRecursive:
		return true
	case PanelsAuto:
		return f.OzakiDigits == 0 && n >= RecursivePanelsFrom && n <= maxPanelRows(sms, false)
	}
	return false
}

// Pivoting says how an LU picks its pivots.
type Pivoting int

const (
	// PivotAuto leaves pivoting out when A is strictly diagonally
	// dominant by rows or by columns (checked on the device, one pass
	// over A), where Gaussian elimination without pivoting is stable
	// (growth factor at most 2) and partial pivoting's panels, the LU's
	// critical path, are not needed: each panel is then the LU of its
	// diagonal block and a triangular solve for the rest. Otherwise the
	// fp64 form takes PivotButterfly, whose growth (3·10^4 at n = 1024
	// on a random matrix) fp64 factors absorb: refinement from
	// them converges in a step, and where it does not (or the
	// factorization fails), factor again with PivotPartial, as mwmm
	// solve does. The other forms pivot partially: the growth would cost
	// their fp32 factors their accuracy.
	PivotAuto Pivoting = iota
	PivotPartial
	// PivotNone never interchanges rows. On a matrix that needs pivoting
	// the factors may be inaccurate; refinement then says it stalled, or
	// the factorization finds a zero or non-finite pivot and says so.
	PivotNone
	// PivotButterfly factors Ã = M·A·Nᵀ without pivoting, M and N random
	// butterflies of depth 2 (two passes over A, in place of the
	// conversion to fp32): at the speed of no pivoting and without zero
	// pivots, but with the growth of elimination without pivoting on a
	// random matrix (3·10^4 at n = 1024), which fp64 factors absorb
	// and fp32 ones do not. Solve applies the butterflies, so the factors
	// still precondition A; refinement against A says when a matrix
	// defeats the transform.
	PivotButterfly
)

// ErrButterflyFailed is wrapped by Factor's error when the factors of
// PivotButterfly's transformed matrix have a zero or non-finite pivot.
var ErrButterflyFailed = errors.New("without pivoting, after a random butterfly transform")

// ButterflyPivoting is Factors.Pivoting after PivotButterfly's transform.
const ButterflyPivoting = "none, after a random butterfly transform"

// Pivotings names the Pivoting values, as ParsePivoting reads them.
var Pivotings = []string{"auto", "partial", "none", "butterfly"}

// ParsePivoting reads auto, partial, none or butterfly.
func ParsePivoting(name string) (Pivoting, error) {
	if i := slices.Index(Pivotings, name); i >= 0 {
		return Pivoting(i), nil
	}
	return 0, fmt.Errorf("gpu: no pivoting %q: %v", name, Pivotings)
}

// LUForms lists the names ParseLUForm takes besides multiword variants
// and Ozaki forms with other digit counts.
var LUForms = []string{"fp64", "fp32", "tc32-fp16", "tc32-bf16", "tc32-tf32", "ozaki-int8x5"}

// ozakiPrefix begins the Ozaki forms' names: ozaki-int8x5 has 5 digits.
const ozakiPrefix = "ozaki-int8x"

// ParseLUForm reads a GPU factorization: fp64, fp32, tc32-fp16 (fp16
// tensor cores, fp32 accumulation and storage), tc32-bf16, tc32-tf32,
// a multiword variant with FABsum (double-fp16-fabsum ...), whose updates
// run on the fused kernel, or ozaki-int8xS (fp64 storage, updates from S
// int8 digits, S = 2 … 7).
func ParseLUForm(name string) (LUForm, error) {
	if digits, ok := strings.CutPrefix(name, ozakiPrefix); ok {
		s, err := strconv.Atoi(digits)
		if err != nil || s < OzakiMinDigits || s > OzakiMaxDigits {
			return LUForm{}, fmt.Errorf("gpu: factorization %q: the Ozaki forms are %s%d to %s%d (the digits per row of L₂₁ and column of U₁₂)",
				name, ozakiPrefix, OzakiMinDigits, ozakiPrefix, OzakiMaxDigits)
		}
		return LUForm{Name: name, OzakiDigits: s}, nil
	}
	switch name {
	case "fp64":
		return LUForm{Name: name, Getrf64: true}, nil
	case "fp32":
		return LUForm{Name: name, Getrf32: true}, nil
	}
	for _, w := range tc32Words {
		// The words are rounded by our kernel, not by cuBLASLt's FAST_16F
		// or FAST_16BF compute types: on an H100 those ran TF32.
		if name == w.form {
			return LUForm{Name: name, Words: w.typ}, nil
		}
	}
	p, err := multiword.Lookup(name)
	if err != nil {
		return LUForm{}, fmt.Errorf("gpu: no GPU factorization %q: the forms are %v and the multiword variants with FABsum (%v)", name, LUForms, err)
	}
	if err := gemm.FusedSupports(&p); err != nil {
		return LUForm{}, fmt.Errorf("gpu: factorization %q: %w", name, err)
	}
	return LUForm{Name: name, Plan: &p}, nil
}

// Blocked says whether the form is our blocked LU (not cuSOLVER's getrf).
func (f LUForm) Blocked() bool { return !f.Getrf64 && !f.Getrf32 }

// Factors are the LU factors of a System on the device, P·A = L·U, held
// in fp64 (the exact values of lower-precision factors) with their
// pivots: Solve applies Û⁻¹L̂⁻¹P in fp64, as refinement wants.
type Factors struct {
	s        *System
	lu, ipiv *gpu.Buffer
	bf       *butterfly      // with PivotButterfly: Solve applies M before the factors and Nᵀ after
	pc       *preconditioner // Solve's device side, made on first use
	Form     string
	NB       int
	// Pivoting is how the pivots were picked: "partial" ("partial,
	// recursive panels" with our panel), or "none" and why (PivotAuto
	// found A diagonally dominant, PivotNone, or after PivotButterfly's
	// transform).
	Pivoting string
	Duration time.Duration // the factorization, from A in fp64 on the device to the factors
	// Phases splits the blocked LU's time (with LUForm.Profile): the
	// panels, the interchanges, the triangular solves for U₁₂, the
	// trailing updates, and the conversions between fp64 and fp32.
	Phases *Phases
}

// Phases is where a blocked LU's time goes.
type Phases struct {
	Panel, Swap, Trsm, Update, Convert time.Duration
}

// SingularError says that U has an exact zero pivot.
type SingularError struct{ Column int }

func (e *SingularError) Error() string {
	return fmt.Sprintf("gpu: the matrix is singular to working precision: U(%d,%d) = 0", e.Column, e.Column)
}

// Factor factors A in the form. The time covers the whole factorization
// on the device.
func (s *System) Factor(f LUForm) (*Factors, error) {
	la, err := s.e.d.Linalg()
	if err != nil {
		return nil, err
	}
	n, d := s.n, s.e.d
	mod, err := d.Module(kernel("lu"))
	if err != nil {
		return nil, err
	}
	ipiv, err := d.Alloc(4 * n)
	if err != nil {
		return nil, err
	}
	lu, err := d.Alloc(8 * n * n)
	if err != nil {
		ipiv.Free()
		return nil, err
	}
	fa := &Factors{s: s, lu: lu, ipiv: ipiv, Form: f.Name}
	fail := func(err error) (*Factors, error) { fa.Free(); return nil, err }
	if err := d.Sync(); err != nil {
		return fail(err)
	}
	start := time.Now()
	// piv is where the pivots go: nowhere without pivoting (cuSOLVER's
	// getrf then does not pivot), and ipiv becomes the identity.
	piv := ipiv.Ptr()
	fa.Pivoting = "partial"
	switch f.Pivoting {
	case PivotNone:
		piv, fa.Pivoting = 0, "none, as asked"
	case PivotButterfly:
		fa.bf = newButterfly(n, butterflySeed)
		piv, fa.Pivoting = 0, ButterflyPivoting
	case PivotAuto:
		rows, cols, err := s.takeDominance(mod)
		if err != nil {
			return fail(err)
		}
		switch {
		case rows:
			piv, fa.Pivoting = 0, "none: A is strictly diagonally dominant by rows"
		case cols:
			piv, fa.Pivoting = 0, "none: A is strictly diagonally dominant by columns"
		case f.Getrf64:
			fa.bf = newButterfly(n, butterflySeed)
			piv, fa.Pivoting = 0, ButterflyPivoting
		}
	}
	if piv == 0 {
		identity := make([]int32, n)
		for i := range identity {
			identity[i] = int32(i + 1)
		}
		if err := d.Upload(ipiv, identity); err != nil {
			return fail(err)
		}
	}
	if piv != 0 && f.Blocked() && f.recursivePanels(n, d.Multiprocessors()) {
		fa.Pivoting += ", recursive panels"
	}
	// blockSize sets fa.NB: f.NB, or DefaultNB's.
	blockSize := func() error {
		if fa.NB = f.NB; fa.NB == 0 {
			fa.NB = DefaultNB(f, n, piv != 0)
		}
		if fa.NB > 4096 {
			return fmt.Errorf("gpu: block size %d: at most 4096 (the interchanges of a panel pass through shared memory)", fa.NB)
		}
		return nil
	}
	if f.Getrf64 || f.OzakiDigits > 0 {
		// fp64 factors, from A in place in lu.
		if fa.bf != nil {
			err = s.transform(mod, fa.bf, lu, nil)
		} else {
			err = d.Copy(lu, s.a)
		}
		if err != nil {
			return fail(err)
		}
		if f.Getrf64 {
			err = s.e.getrf(la, true, n, n, lu.Ptr(), n, piv)
		} else if err = blockSize(); err == nil {
			if f.Profile {
				fa.Phases = new(Phases)
			}
			err = s.e.blockedLU(la, mod, f, fa.NB, n, lu, ipiv, piv != 0, fa.Phases)
		}
		if err != nil {
			return fail(err)
		}
	} else {
		w, err := d.Alloc(4 * n * n)
		if err != nil {
			return fail(err)
		}
		defer w.Free()
		var ph *Phases
		if f.Profile {
			ph = new(Phases)
		}
		if err := timed(d, ph, func(p *Phases) *time.Duration { return &p.Convert }, func() error {
			if fa.bf != nil {
				return s.transform(mod, fa.bf, lu, w)
			}
			return launch(mod, "f64_to_f32", s.a, w, int64(n)*int64(n))
		}); err != nil {
			return fail(err)
		}
		if f.Getrf32 {
			err = timed(d, ph, func(p *Phases) *time.Duration { return &p.Panel }, func() error {
				return s.e.getrf(la, false, n, n, w.Ptr(), n, piv)
			})
		} else if err = blockSize(); err == nil {
			err = s.e.blockedLU(la, mod, f, fa.NB, n, w, ipiv, piv != 0, ph)
		}
		if err != nil {
			return fail(err)
		}
		if err := timed(d, ph, func(p *Phases) *time.Duration { return &p.Convert }, func() error {
			return launch(mod, "f32_to_f64", w, lu, int64(n)*int64(n))
		}); err != nil {
			return fail(err)
		}
		fa.Phases = ph
	}
	if err := d.Sync(); err != nil {
		return fail(err)
	}
	fa.Duration = time.Since(start)
	if err := fa.check(mod); err != nil {
		if fa.bf != nil {
			err = fmt.Errorf("%w (%w; with partial pivoting it may factor)", err, ErrButterflyFailed)
		} else if piv == 0 {
			err = fmt.Errorf("%w (without pivoting; with partial pivoting it may factor)", err)
		}
		return fail(err)
	}
	return fa, nil
}

// DefaultNB is the blocked LU's block size for the form at order n, with
// or without pivoting: 1024; 1536 for the fused kernel's forms with
// pivoting from n = 32768, where the wider panels' updates run faster and
// the factorization took 0.384–0.388 s against 0.410–0.448 s on an H100
// (double-fp16-fabsum, uniform in (−0.5, 0.5)); 2048 for the Ozaki forms,
// whose updates pass through memory once per level whatever their depth:
// with the default look-ahead, factorizations of 0.044 s and 0.138 s
// against 0.049 s and 0.153 s with 1024 at n = 8192 and 16384
// (docs/perf/solve-h100.md).
func DefaultNB(f LUForm, n int, pivots bool) int {
	switch {
	case f.OzakiDigits > 0:
		return 2048
	case f.Plan != nil && pivots && n >= 32768:
		return 1536
	}
	return 1024
}

// timed runs f and, when ph is not nil, waits for the GPU and adds the
// time to the phase that which picks.
func timed(d *gpu.Device, ph *Phases, which func(*Phases) *time.Duration, f func() error) error {
	start := time.Now()
	if err := f(); err != nil {
		return err
	}
	if ph == nil {
		return nil
	}
	if err := d.Sync(); err != nil {
		return err
	}
	*which(ph) += time.Since(start)
	return nil
}

// launch runs a grid-stride kernel of lu.cu on (x, y, count).
func launch(mod *gpu.Module, name string, x, y *gpu.Buffer, count int64) error {
	f, err := mod.Function(name)
	if err != nil {
		return err
	}
	return f.Launch([3]uint32{4096, 1, 1}, [3]uint32{256, 1, 1}, 0, nil, x, y, count)
}

// getrf factors the m×n matrix at a (ld lda) with cuSOLVER; the pivots
// go to ipiv. A zero pivot is reported by check, not here.
func (e *Solver) getrf(la *gpu.Linalg, double bool, m, n int, a uintptr, lda int, ipiv uintptr) error {
	work, err := e.getrfWork(la, double, m, n, a, lda)
	if err != nil {
		return err
	}
	defer work.Free()
	err = e.d.Do(func() error {
		return cuda.Getrf(la.Solver, double, m, n, a, lda, work.Ptr(), ipiv, work.Ptr()+uintptr(work.Bytes()-256))
	})
	if err != nil {
		return err
	}
	return e.d.Sync() // the work space is freed after getrf is done
}

// getrfWork allocates getrf's work space for an m×n matrix, and 256 bytes
// at its end for the info word.
func (e *Solver) getrfWork(la *gpu.Linalg, double bool, m, n int, a uintptr, lda int) (*gpu.Buffer, error) {
	var lwork int
	if err := e.d.Do(func() error {
		var err error
		lwork, err = cuda.GetrfBufferSize(la.Solver, double, m, n, a, lda)
		return err
	}); err != nil {
		return nil, err
	}
	size := 4
	if double {
		size = 8
	}
	return e.d.Alloc((size*max(lwork, 1)+255)&^255 + 256)
}

// inPrecision names the fp64 variant (name_f64) of an fp32 kernel for a
// working matrix of es-byte entries.
func inPrecision(name string, es int) string {
	if es == 8 {
		return name + "_f64"
	}
	return name
}

// trsm and trmm are cuBLAS's, with alpha 1, in fp64 (double) or fp32.
func trsm(h uintptr, double bool, side, uplo, trans, diag, m, n int, a uintptr, lda int, b uintptr, ldb int) error {
	if double {
		return cuda.Dtrsm(h, side, uplo, trans, diag, m, n, 1, a, lda, b, ldb)
	}
	return cuda.Strsm(h, side, uplo, trans, diag, m, n, 1, a, lda, b, ldb)
}

func trmm(h uintptr, double bool, side, uplo, trans, diag, m, n int, a uintptr, lda int, b uintptr, ldb int, c uintptr, ldc int) error {
	if double {
		return cuda.Dtrmm(h, side, uplo, trans, diag, m, n, 1, a, lda, b, ldb, c, ldc)
	}
	return cuda.Strmm(h, side, uplo, trans, diag, m, n, 1, a, lda, b, ldb, c, ldc)
}

// blockedLU factors the column-major w in place (fp32, or fp64 for the
// Ozaki forms), right-looking: each panel of nb columns by cuSOLVER's
// getrf (or the recursive panel), its interchanges applied to the
// columns on both sides, U's block row by a triangular solve, and the
// trailing update A₂₂ −= L₂₁·U₁₂ on the tensor cores (a trailing: f.Plan
// on the fused kernel, f.Words on cuBLASLt, or the Ozaki scheme's int8
// digits). ipiv gets the global pivots. Without pivots, a panel is
// getrf's LU of its diagonal block, without pivoting, and L₂₁ = A₂₁·U₁₁⁻¹
// (cuBLAS trmm with U₁₁'s inverse): a short sequential part, then a
// product-like one, where partial pivoting's pivot search runs down every
// row of the panel, column by column; ipiv is left as it is.
func (e *Solver) blockedLU(la *gpu.Linalg, mod *gpu.Module, f LUForm, nb, n int, w, ipiv *gpu.Buffer, pivots bool, ph *Phases) error {
	d := e.d
	// The Ozaki forms' working matrix is fp64, the others' fp32.
	double := f.OzakiDigits > 0
	es, suffix := 4, "_f32"
	if double {
		es, suffix = 8, "_f64"
	}
	if most := maxPanelRows(d.Multiprocessors(), double); f.Panels == PanelsRecursive && n > most {
		return fmt.Errorf("gpu: the recursive panel takes at most %d rows on this GPU, not %d: use cuSOLVER's (--panel sgetrf)", most, n)
	}
	// One work space for every panel: the first is the largest.
	work, err := e.getrfWork(la, double, n, min(nb, n), w.Ptr(), n)
	if err != nil {
		return err
	}
	defer work.Free()
	info := work.Ptr() + uintptr(work.Bytes()-256)
	permuteRows, err := mod.Function(inPrecision("permute_rows", es))
	if err != nil {
		return err
	}
	if 2*es*min(nb, n) > 48<<10 {
		if err := permuteRows.SetMaxDynamicShared(2 * es * min(nb, n)); err != nil {
			return err
		}
	}
	// The panel's pivots come here, and its composed interchanges go back
	// as (destination, source) row pairs: at most 2·nb of them.
	pairs, err := d.Alloc(4 * 4 * min(nb, n))
	if err != nil {
		return err
	}
	defer pairs.Free()
	// The triangular solves for U₁₂ (and, without pivoting, for L₂₁) are
	// products with the inverse of the diagonal block (cuBLAS strmm, out of
	// place from a copy): cuBLAS strsm ran at about 13 TFLOP/s on these
	// shapes. invL and tmpU serve this stream, invU and tmpL the panel's.
	copyBlock, err := mod.Function("copy" + suffix)
	if err != nil {
		return err
	}
	eye, err := mod.Function("eye" + suffix)
	if err != nil {
		return err
	}
	var invL, tmpU, invU, tmpL *gpu.Buffer
	defer func() { gpu.FreeAll(invL, tmpU, invU, tmpL) }()
	jbMax := min(nb, n)
	if invL, err = d.Alloc(es * jbMax * jbMax); err != nil {
		return err
	}
	if tmpU, err = d.Alloc(es * jbMax * max(n-jbMax, 1)); err != nil {
		return err
	}
	if !pivots {
		if invU, err = d.Alloc(es * jbMax * jbMax); err != nil {
			return err
		}
		if tmpL, err = d.Alloc(es * jbMax * max(n-jbMax, 1)); err != nil {
			return err
		}
	}
	pivHost := make([]int32, min(nb, n))
	moves := make([]int32, 0, 4*min(nb, n))
	shift, err := mod.Function("shift_pivots")
	if err != nil {
		return err
	}
	at := func(i, j int) int { return es * (i + j*n) }
	// Look-ahead: the columns of the next panel are updated first, and
	// that panel is factored on a second stream while the rest of the
	// update runs (the panels' time is latency, the update's is tensor
	// cores). Not when profiling, which times each phase alone.
	main, side, err := e.solverStreams()
	if err != nil {
		return err
	}
	sideSMs := f.LookaheadSMs
	if sideSMs == 0 {
		sideSMs = 32
	}
	if ph != nil || sideSMs < 0 || sideSMs >= d.Multiprocessors() {
		side, sideSMs = main, 0
	}
	ready, err := d.NewEvent()
	if err != nil {
		return err
	}
	defer ready.Close()
	defer d.Do(func() error {
		return errors.Join(cuda.CusolverSetStream(la.Solver, 0), cuda.CublasSetStream(la.Blas, 0))
	})
	var tr trailing = &fusedTrailing{e: e, f: f, w: w, n: n}
	switch {
	case double:
		if tr, err = e.newOzakiTrailing(f.OzakiDigits, w, n, jbMax); err != nil {
			return err
		}
	case f.Plan == nil:
		if tr, err = e.newLtTrailing(mod, f.Words, w, n, min(nb, n)); err != nil {
			return err
		}
	}
	defer tr.free()
	var pl *panelLU
	if pivots && f.recursivePanels(n, d.Multiprocessors()) {
		if pl, err = e.newPanelLU(la, mod, double); err != nil {
			return err
		}
		defer pl.free()
	}
	// invertDiag sets inv to the inverse of the jb×jb diagonal block at
	// (j, j): of its unit lower triangle L₁₁, or of its upper triangle U₁₁
	// when upper. It leaves cuBLAS on st.
	invertDiag := func(st *gpu.Stream, upper bool, j, jb int, inv *gpu.Buffer) error {
		if err := eye.Launch(gpu.StrideGrid(jb*jb), [3]uint32{256, 1, 1}, 0, st, inv, int64(jb), int32(jb)); err != nil {
			return err
		}
		fill, diag := cuda.FillLower, cuda.DiagUnit
		if upper {
			fill, diag = cuda.FillUpper, cuda.DiagNonUnit
		}
		return d.Do(func() error {
			if err := la.BlasOn(d, st); err != nil {
				return err
			}
			return trsm(la.Blas, double, cuda.SideLeft, fill, cuda.OpN, diag, jb, jb, w.Ptr()+uintptr(at(j, j)), n, inv.Ptr(), jb)
		})
	}
	// getrfOn runs cuSOLVER's sgetrf on the m×jb block at (j, j) on st;
	// piv 0: without pivoting.
	getrfOn := func(st *gpu.Stream, j, m, jb int, piv uintptr) error {
		return d.Do(func() error {
			if err := la.SolverOn(d, st); err != nil {
				return err
			}
			return cuda.Getrf(la.Solver, double, m, jb, w.Ptr()+uintptr(at(j, j)), n, work.Ptr(), piv, info)
		})
	}
	panel := func(j int, st *gpu.Stream) error {
		jb := min(nb, n-j)
		// A zero pivot shows in U's diagonal (Factors.check), so the info
		// word is not read: no wait per panel.
		err := timed(d, ph, func(p *Phases) *time.Duration { return &p.Panel }, func() error {
			if !pivots {
				// The diagonal block's LU, U₁₁⁻¹, and L₂₁ = A₂₁·U₁₁⁻¹.
				below := n - j - jb
				if below > 0 {
					if err := copyBlock.Launch(gpu.StrideGrid(below*jb), [3]uint32{256, 1, 1}, 0, st,
						w.View(at(j+jb, j)), int64(n), tmpL, int64(below), int32(below), int32(jb)); err != nil {
						return err
					}
				}
				if err := getrfOn(st, j, jb, jb, 0); err != nil || below == 0 {
					return err
				}
				if err := invertDiag(st, true, j, jb, invU); err != nil {
					return err
				}
				return d.Do(func() error {
					return trmm(la.Blas, double, cuda.SideRight, cuda.FillUpper, cuda.OpN, cuda.DiagNonUnit, below, jb,
						invU.Ptr(), jb, tmpL.Ptr(), below, w.Ptr()+uintptr(at(j+jb, j)), n)
				})
			}
			if pl != nil {
				blocks := d.Multiprocessors()
				if st != main {
					blocks = sideSMs
				}
				return pl.factor(st, w.Ptr()+uintptr(at(j, j)), n, n-j, jb, ipiv.Ptr()+uintptr(4*j), blocks)
			}
			return getrfOn(st, j, n-j, jb, ipiv.Ptr()+uintptr(4*j))
		})
		if err != nil {
			return fmt.Errorf("gpu: LU panel at column %d: %w", j, err)
		}
		return nil
	}
	// L's interchanges wait for the end (gatherL) when a column fits in
	// shared memory and the rows to gather (about n²/2nb) in 256 MB: each
	// step's moves are kept here.
	deferL := pivots && (double || 4*n <= d.MaxSharedPerBlock()-1024) && (n/nb+1)*n/2 <= deferredRows
	stepMoves := make([][]int32, (n+nb-1)/nb)
	factored := false // the panel at j, by the look-ahead
	np := 0           // the step's interchanges: pairs holds np destinations, then np sources
	// permute applies the step's interchanges to cols columns from c0. With
	// sms > 0 its grid is a few blocks for each of sms multiprocessors, so
	// that the panel factored beside it finds room.
	permute := func(c0, cols, sms int) error {
		if np == 0 || cols == 0 {
			return nil
		}
		blocks := min(cols, 65535)
		if sms > 0 {
			blocks = min(blocks, 4*sms)
		}
		return timed(d, ph, func(p *Phases) *time.Duration { return &p.Swap }, func() error {
			return permuteRows.Launch([3]uint32{uint32(blocks), 1, 1}, [3]uint32{256, 1, 1}, uint32(es*np), main,
				w.View(at(0, c0)), int64(n), int32(cols), pairs, pairs.View(4*np), int32(np))
		})
	}
	// invertL sets invL = L₁₁⁻¹ for the step's panel.
	invertL := func(j, jb int) error {
		return timed(d, ph, func(p *Phases) *time.Duration { return &p.Trsm }, func() error {
			return invertDiag(main, false, j, jb, invL)
		})
	}
	// u12 sets U₁₂ = L₁₁⁻¹A₁₂ for cols columns from c0 (invertL first), on
	// at most sms multiprocessors when sms > 0.
	u12 := func(j, jb, c0, cols, sms int) error {
		return timed(d, ph, func(p *Phases) *time.Duration { return &p.Trsm }, func() error {
			if err := copyBlock.Launch(gpu.StrideGrid(jb*cols), [3]uint32{256, 1, 1}, 0, main,
				w.View(at(j, c0)), int64(n), tmpU, int64(jb), int32(jb), int32(cols)); err != nil {
				return err
			}
			return d.Do(func() error {
				if err := la.BlasOn(d, main); err != nil {
					return err
				}
				if err := cuda.CublasSetSMCountTarget(la.Blas, sms); err != nil {
					return err
				}
				return errors.Join(trmm(la.Blas, double, cuda.SideLeft, cuda.FillLower, cuda.OpN, cuda.DiagUnit, jb, cols,
					invL.Ptr(), jb, tmpU.Ptr(), jb, w.Ptr()+uintptr(at(j, c0)), n),
					cuda.CublasSetSMCountTarget(la.Blas, 0))
			})
		})
	}
	upd := func(c0, cols, sms int) error {
		return timed(d, ph, func(p *Phases) *time.Duration { return &p.Update }, func() error {
			return tr.update(c0, cols, main, sms)
		})
	}
	mark := func(j int, what string, st *gpu.Stream) {
		if stepMark != nil {
			stepMark(j, what, st)
		}
	}
	for j := 0; j < n; j += nb {
		jb := min(nb, n-j)
		piv := ipiv.Ptr() + uintptr(4*j)
		if !factored {
			if err := panel(j, main); err != nil {
				return err
			}
		}
		if factored && !pivots {
			// The panel came from the side stream; with pivots, their
			// download below waits for it.
			if err := side.Sync(); err != nil {
				return err
			}
		}
		factored = false
		rest := n - j - jb
		next := min(nb, rest) // the next panel's columns
		// The panel's interchanges as one permutation of the rows they
		// touch (none: nothing to do, as for a diagonally dominant A). The
		// download waits for every stream.
		if pivots {
			if err := timed(d, ph, func(p *Phases) *time.Duration { return &p.Swap }, func() error {
				if err := d.Download(pivHost[:jb], ipiv.View(4*j)); err != nil {
					return err
				}
				moves = panelMoves(moves[:0], pivHost[:jb], j)
				if np = len(moves) / 2; np == 0 {
					return nil
				}
				if deferL {
					stepMoves[j/nb] = slices.Clone(moves)
				}
				return d.Upload(pairs, moves)
			}); err != nil {
				return err
			}
			if j > 0 { // the pivots become global row numbers
				if err := shift.Launch(gpu.StrideGrid(jb), [3]uint32{256, 1, 1}, 0, main, piv, int32(jb), int32(j)); err != nil {
					return err
				}
			}
		}
		// The next panel's columns go first, through the interchanges,
		// U₁₂'s solve and the update: with the look-ahead, that panel is
		// factored on the side stream while the rest of the columns go
		// through the same on this one.
		mark(j, "start", main)
		if !deferL {
			if err := permute(0, j, 0); err != nil {
				return err
			}
		}
		if err := permute(j+jb, next, 0); err != nil {
			return err
		}
		if rest == 0 {
			continue
		}
		if err := invertL(j, jb); err != nil {
			return err
		}
		if err := u12(j, jb, j+jb, next, 0); err != nil {
			return err
		}
		if err := timed(d, ph, func(p *Phases) *time.Duration { return &p.Update }, func() error {
			return tr.prepare(j, jb, main)
		}); err != nil {
			return fmt.Errorf("gpu: LU update at column %d: %w", j, err)
		}
		if err := upd(j+jb, next, 0); err != nil {
			return fmt.Errorf("gpu: LU update at column %d: %w", j, err)
		}
		if rest > next {
			if side != main {
				if err := ready.Record(main); err != nil {
					return err
				}
			}
			mark(j, "ready", main)
			// All of this is queued before the panel (cuSOLVER's getrf may
			// hold the host until it is done), on all but the panel's
			// multiprocessors.
			sms := 0
			if side != main {
				sms = d.Multiprocessors() - sideSMs
			}
			if err := permute(j+jb+next, rest-next, sms); err != nil {
				return err
			}
			if err := u12(j, jb, j+jb+next, rest-next, sms); err != nil {
				return err
			}
			if err := upd(j+jb+next, rest-next, sms); err != nil {
				return fmt.Errorf("gpu: LU update at column %d: %w", j, err)
			}
			mark(j, "updated", main)
			if side != main {
				if err := ready.Sync(); err != nil { // the next panel's columns are updated
					return err
				}
				if err := panel(j+jb, side); err != nil {
					return err
				}
				mark(j, "panel", side)
				factored = true
			}
		}
	}
	if deferL {
		if err := timed(d, ph, func(p *Phases) *time.Duration { return &p.Swap }, func() error {
			return e.gatherL(mod, w, es, n, nb, composeLater(stepMoves, nb, n), main)
		}); err != nil {
			return err
		}
	}
	return d.Sync()
}

// deferredRows bounds the row indices composeLater may produce (a
// variable so that a test can make the interchanges eager).
var deferredRows = 1 << 26

// stepMark, when set (by a benchmark), is called at the points of each
// look-ahead step that show its critical path: on the update's stream the
// step's start (with pivots every stream is idle there; without, the
// update's stream is done with the step before), the end of the next
// panel's columns ("ready") and of the rest ("updated"); on the panel's,
// the end of the next panel ("panel").
var stepMark func(j int, what string, st *gpu.Stream)

// composeLater composes what each column block of L owes: block k's rows
// from r0 = (k+1)·nb on were left by step k and moved since by the steps
// after it (steps[s]: step s's moves, panelMoves' destinations then
// sources, nil for none). Row r0+i of the final block k is row
// src[k][i] of the block as step k left it; src[k] is nil where no row
// moved.
func composeLater(steps [][]int32, nb, n int) [][]int32 {
	src := make([][]int32, len(steps))
	g := make([]int32, n) // row i of the final L comes from row g[i] after step k+1
	move := make([]int32, n)
	for i := range g {
		g[i], move[i] = int32(i), int32(i)
	}
	for k := len(steps) - 2; k >= 0; k-- {
		mv := steps[k+1]
		np := len(mv) / 2
		r0 := (k + 1) * nb
		if np > 0 {
			for t := 0; t < np; t++ {
				move[mv[t]] = mv[np+t]
			}
			for i := r0; i < n; i++ {
				g[i] = move[g[i]]
			}
			for t := 0; t < np; t++ {
				move[mv[t]] = mv[t]
			}
		}
		for i := r0; i < n; i++ {
			if g[i] != int32(i) {
				src[k] = slices.Clone(g[r0:])
				break
			}
		}
	}
	return src
}

// gatherL applies composeLater's rows to L's column blocks of the working
// matrix w (entries of es bytes): one block of gather_rows per column,
// the column's rows in shared memory (in global memory, in cache, for
// fp64), read and written whole (coalesced), instead of scattered rows at
// every step.
func (e *Solver) gatherL(mod *gpu.Module, w *gpu.Buffer, es, n, nb int, src [][]int32, st *gpu.Stream) error {
	var all []int32
	for _, s := range src {
		all = append(all, s...)
	}
	if len(all) == 0 {
		return nil
	}
	gather, err := mod.Function(inPrecision("gather_rows", es))
	if err != nil {
		return err
	}
	buf, err := e.d.Alloc(4 * len(all))
	if err != nil {
		return err
	}
	defer buf.Free()
	if err := e.d.Upload(buf, all); err != nil {
		return err
	}
	var held *gpu.Buffer
	if es == 8 {
		if held, err = e.d.Alloc(8 * nb * n); err != nil {
			return err
		}
		defer held.Free()
	} else if err := gather.SetMaxDynamicShared(4 * n); err != nil {
		return err
	}
	off := 0
	for k, s := range src {
		if s == nil {
			continue
		}
		r0 := (k + 1) * nb
		args := []any{w.View(es * k * nb * n), int64(n), int32(nb), int32(r0), int32(len(s)), buf.View(4 * off)}
		shared := uint32(4 * len(s))
		if held != nil {
			args, shared = append(args, held), 0
		}
		if err := gather.Launch([3]uint32{uint32(nb), 1, 1}, [3]uint32{1024, 1, 1}, shared, st, args...); err != nil {
			return err
		}
		off += len(s)
	}
	return e.d.Sync() // buf is freed on return
}

// solverStreams returns the blocked LU's two streams, made once per engine
// (the fused kernel keeps scratch memory per stream).
func (e *Solver) solverStreams() (main, side *gpu.Stream, err error) {
	e.streamsMu.Lock()
	defer e.streamsMu.Unlock()
	if e.luStreams[0] == nil {
		for i := range e.luStreams {
			if e.luStreams[i], err = e.d.NewStream(); err != nil {
				return nil, nil, err
			}
		}
	}
	return e.luStreams[0], e.luStreams[1], nil
}

// panelMoves composes a panel's interchanges (LAPACK's 1-based pivots,
// relative to row r0) into the rows they move: it appends the destination
// rows, then the source rows, of the entries that change place.
func panelMoves(moves, piv []int32, r0 int) []int32 {
	at := map[int32]int32{} // position → the row now there, where moved
	row := func(q int32) int32 {
		if r, ok := at[q]; ok {
			return r
		}
		return q
	}
	for k, p := range piv {
		a, b := int32(r0+k), int32(r0)+p-1
		if a != b {
			ra, rb := row(a), row(b)
			at[a], at[b] = rb, ra
		}
	}
	var dst, src []int32
	for q, r := range at {
		if q != r {
			dst, src = append(dst, q), append(src, r)
		}
	}
	return append(append(moves, dst...), src...)
}

// check reports a zero pivot or a non-finite factor.
func (fa *Factors) check(mod *gpu.Module) error {
	d, n := fa.s.e.d, fa.s.n
	count, err := d.Alloc(4)
	if err != nil {
		return err
	}
	defer count.Free()
	if err := d.Memset32(count, 0); err != nil {
		return err
	}
	f, err := mod.Function("diag_check")
	if err != nil {
		return err
	}
	if err := f.Launch([3]uint32{4096, 1, 1}, [3]uint32{256, 1, 1}, 0, nil, fa.lu, int64(n), int32(n), count); err != nil {
		return err
	}
	var c [1]int32
	if err := d.Download(c[:], count); err != nil {
		return err
	}
	switch {
	case c[0] < 0:
		return errors.New("gpu: the LU factors have a NaN or an Inf: the factorization overflowed")
	case c[0] > 0:
		return &SingularError{Column: int(c[0])}
	}
	return nil
}

// Free frees the factors.
func (fa *Factors) Free() error {
	err := errors.Join(fa.lu.Free(), fa.ipiv.Free())
	if fa.pc != nil {
		err = errors.Join(err, fa.pc.free())
	}
	return err
}

// BaselineResult is one cuSOLVER solve of A·x = b.
type BaselineResult struct {
	Method     string        // "getrf+getrs" or a gesv solver, e.g. "DHgesv"
	X          []float64     // the solution
	Iterations int           // of the gesv solvers; negative: it fell back to fp64
	Duration   time.Duration // on the device, from A in fp64 to x
}

// SolveBaselines lists the methods of Baseline.
var SolveBaselines = []string{"getrf+getrs", "DDgesv", "DSgesv", "DXgesv", "DHgesv", "DBgesv"}

// Baseline solves A·x = b with cuSOLVER: getrf and getrs in fp64, or one
// of its iterative-refinement solvers cusolverDn{DD,DS,DX,DH,DB}gesv
// (A copied first: they overwrite it).
func (s *System) Baseline(method string, b []float64) (BaselineResult, error) {
	res := BaselineResult{Method: method}
	e, n, d := s.e, s.n, s.e.d
	la, err := e.d.Linalg()
	if err != nil {
		return res, err
	}
	if len(b) != n {
		return res, fmt.Errorf("gpu: %d right-hand side entries for a system of order %d", len(b), n)
	}
	a, err := d.Alloc(8 * n * n)
	if err != nil {
		return res, err
	}
	defer a.Free()
	vec, err := d.Alloc(16*n + 4*n + 256)
	if err != nil {
		return res, err
	}
	defer vec.Free()
	bp, xp, ipiv := vec.Ptr(), vec.Ptr()+uintptr(8*n), vec.Ptr()+uintptr(16*n)
	info := ipiv + uintptr(4*n)
	if err := d.Upload(vec, b); err != nil {
		return res, err
	}
	gesv := -1
	for i, name := range cuda.GesvNames {
		if method == name+"gesv" {
			gesv = i
		}
	}
	if gesv < 0 && method != "getrf+getrs" {
		return res, fmt.Errorf("gpu: no cuSOLVER method %q; the methods are %v", method, SolveBaselines)
	}
	if err := d.Copy(a, s.a); err != nil {
		return res, err
	}
	var work *gpu.Buffer
	if gesv >= 0 {
		var bytes int
		if err := d.Do(func() error {
			var err error
			bytes, err = cuda.GesvBufferSize(gesv, la.Solver, n, a.Ptr(), ipiv, bp, xp)
			return err
		}); err != nil {
			return res, err
		}
		if work, err = d.Alloc(max(bytes, 256)); err != nil {
			return res, err
		}
		defer work.Free()
	}
	if err := d.Sync(); err != nil {
		return res, err
	}
	start := time.Now()
	if gesv >= 0 {
		err = d.Do(func() error {
			var err error
			res.Iterations, err = cuda.Gesv(gesv, la.Solver, n, a.Ptr(), ipiv, bp, xp, work.Ptr(), work.Bytes(), info)
			return err
		})
	} else {
		err = e.getrf(la, true, n, n, a.Ptr(), n, ipiv)
		if err == nil {
			err = d.Do(func() error { return cuda.Dgetrs(la.Solver, cuda.OpN, n, 1, a.Ptr(), n, ipiv, bp, n, info) })
		}
		xp = bp
	}
	if err == nil {
		err = d.Sync()
	}
	res.Duration = time.Since(start)
	if err != nil {
		return res, fmt.Errorf("gpu: cuSOLVER %s: %w", method, err)
	}
	var inf [1]int32
	if err := d.Download(inf[:], vec.View(int(info-vec.Ptr()))); err != nil {
		return res, err
	}
	if inf[0] != 0 {
		return res, fmt.Errorf("gpu: cuSOLVER %s: info = %d (a zero pivot, or the refinement failed)", method, inf[0])
	}
	res.X = make([]float64, n)
	return res, d.Download(res.X, vec.View(int(xp-vec.Ptr())))
}

// Host copies the factors here as lu.Factors (row-major, 0-based pivots),
// for checks such as lu.Factors.Errors. Their Storage is fp64 for the
// fp64 form and fp32 for the others (A is rounded to fp32 first).
func (fa *Factors) Host() (*lu.Factors, error) {
	n, d := fa.s.n, fa.s.e.d
	if fa.bf != nil {
		return nil, errors.New("gpu: Host: these are the factors of the butterfly-transformed matrix M·A·Nᵀ, not of A")
	}
	cm := make([]float64, n*n)
	if err := d.Download(cm, fa.lu); err != nil {
		return nil, err
	}
	piv := make([]int32, n)
	if err := d.Download(piv, fa.ipiv); err != nil {
		return nil, err
	}
	h := &lu.Factors{N: n, Form: fa.Form, Storage: format.Binary32, NB: fa.NB, LU: make([]float64, n*n), Piv: make([]int, n), Singular: -1, Duration: fa.Duration}
	if fa.Form == "fp64" {
		h.Storage = format.Binary64
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			h.LU[i*n+j] = cm[i+j*n]
		}
		h.Piv[i] = int(piv[i]) - 1
	}
	return h, nil
}
