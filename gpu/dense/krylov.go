package dense

import (
	"errors"
	"fmt"
	"math"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/fp16"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
	"github.com/mwmm/mwmm/solve"
)

// A preconditioner applies M⁻¹ = Nᵀ·Û⁻¹L̂⁻¹·M·P (M, N the butterflies of
// PivotButterfly, else the identity; for Half's factors of R·A·C, M = R
// and Nᵀ = C) to a vector on the device: the interchanges as one gather,
// the butterflies' levels or the scalings, and cuBLAS dtrsv on the fp64
// factors (fp16.TriSolver on Half's fp16 ones, in fp32). Factors.Solve
// and GMRES's device basis both use it.
type preconditioner struct {
	fa      *Factors
	perm    *gpu.Buffer // (P·x)[i] = x[perm[i]]
	pairs   [butterflyDepth]*gpu.Buffer
	r, s    [butterflyDepth]*gpu.Buffer // M's and N's diagonals per level
	permute *gpu.Function
	level   *gpu.Function
	scale   *gpu.Function // Half's R and C
	// Half's fp16 factors: the vector in fp32, and the solver.
	single         *gpu.Buffer
	toF32, fromF32 *gpu.Function
	tri            *fp16.TriSolver
}

// precond makes the factors' preconditioner on first use.
func (fa *Factors) precond() (*preconditioner, error) {
	if fa.pc != nil {
		return fa.pc, nil
	}
	d, n := fa.s.e.d, fa.s.n
	mod, err := d.Module(kernel("lu"))
	if err != nil {
		return nil, err
	}
	pc := &preconditioner{fa: fa}
	if pc.permute, err = mod.Function("permute_f64"); err != nil {
		return nil, err
	}
	if pc.level, err = mod.Function("butterfly_vec"); err != nil {
		return nil, err
	}
	if fa.half {
		if err := pc.halfSolves(mod); err != nil {
			return nil, errors.Join(err, pc.free())
		}
	}
	if fa.rows != nil {
		half, err := d.Module(fp16.Kernels())
		if err != nil {
			return nil, err
		}
		if pc.scale, err = half.Function("scale_vec"); err != nil {
			return nil, err
		}
	}
	ipiv := make([]int32, n)
	if err := d.Download(ipiv, fa.ipiv); err != nil {
		return nil, err
	}
	if pc.perm, err = bufferOf(d, gatherOf(ipiv)); err != nil {
		return nil, err
	}
	if bf := fa.bf; bf != nil {
		for l := range butterflyDepth {
			var err1, err2, err3 error
			pc.pairs[l], err1 = bufferOf(d, bf.pairs[l])
			pc.r[l], err2 = bufferOf(d, bf.r[l])
			pc.s[l], err3 = bufferOf(d, bf.s[l])
			if err := errors.Join(err1, err2, err3); err != nil {
				return nil, errors.Join(err, pc.free())
			}
		}
	}
	fa.pc = pc
	return pc, nil
}

// gatherOf composes LAPACK's sequential interchanges (1-based ipiv: swap
// rows i and ipiv[i]−1, i = 0, 1, …) into one gather.
func gatherOf(ipiv []int32) []int32 {
	perm := make([]int32, len(ipiv))
	for i := range perm {
		perm[i] = int32(i)
	}
	for i, p := range ipiv {
		k := int(p) - 1
		perm[i], perm[k] = perm[k], perm[i]
	}
	return perm
}

// bufferOf copies a host slice into a new buffer of its size.
func bufferOf(d *gpu.Device, x any) (*gpu.Buffer, error) {
	n, err := gpu.HostBytes(x)
	if err != nil {
		return nil, err
	}
	b, err := d.Alloc(max(n, 1))
	if err != nil {
		return nil, err
	}
	if err := d.Upload(b, x); err != nil {
		return nil, errors.Join(err, b.Free())
	}
	return b, nil
}

// halfSolves prepares the solves with Half's fp16 factors.
func (pc *preconditioner) halfSolves(mod *gpu.Module) error {
	d, n := pc.fa.s.e.d, pc.fa.s.n
	var err error
	if pc.single, err = d.Alloc(4 * n); err != nil {
		return err
	}
	fa, steps := pc.fa, (n+pc.fa.NB-1)/pc.fa.NB
	pc.tri, err = fp16.NewTriSolver(d, fp16.TriFactors{N: n, NB: fa.NB, P: 1, Q: 1,
		Part: func(int, int) *gpu.Buffer { return fa.lu }, Rows: func(int) int { return n },
		Inverse: func(k int, upper bool) *gpu.Buffer { // L's in slots 0 … steps−1, U's after them
			if upper {
				k += steps
			}
			return fa.inverses.View(4 * k * fa.NB * fa.NB)
		}})
	if err != nil {
		return err
	}
	pc.toF32, _ = mod.Function("f64_to_f32")
	if pc.fromF32, err = mod.Function("f32_to_f64"); err != nil || pc.toF32 == nil {
		return errors.Join(err, errors.New("gpu: lu.cu's conversions"))
	}
	return nil
}

func (pc *preconditioner) free() error {
	if pc.tri != nil {
		pc.tri.Free()
	}
	bufs := append([]*gpu.Buffer{pc.perm, pc.single}, pc.pairs[:]...)
	bufs = append(append(bufs, pc.r[:]...), pc.s[:]...)
	return gpu.FreeAll(bufs...)
}

// enqueue queues dst = M⁻¹·src (src and dst distinct n-vectors).
func (pc *preconditioner) enqueue(q *gpu.LaunchQueue, la *gpu.Linalg, src, dst *gpu.Buffer) error {
	fa := pc.fa
	n := fa.s.n
	grid := func(count int) [3]uint32 { return [3]uint32{uint32(min(4096, (count+255)/256)), 1, 1} }
	block := [3]uint32{256, 1, 1}
	if err := q.Launch(pc.permute, grid(n), block, 0, nil, src, dst, pc.perm, int64(n)); err != nil {
		return err
	}
	levels := func(transposed int32, diag [butterflyDepth]*gpu.Buffer, order ...int) error {
		for _, l := range order {
			count := len(fa.bf.pairs[l]) / 2
			if err := q.Launch(pc.level, grid(count), block, 0, nil, dst, pc.pairs[l], int32(count), diag[l], transposed); err != nil {
				return err
			}
		}
		return nil
	}
	if fa.bf != nil {
		if err := levels(0, pc.r, 0, 1); err != nil { // M·x: level 1, then level 2
			return err
		}
	}
	scale := func(s *gpu.Buffer) error { return q.Launch(pc.scale, grid(n), block, 0, nil, dst, s, int64(n)) }
	if fa.rows != nil {
		if err := scale(fa.rows); err != nil {
			return err
		}
	}
	if err := pc.triangles(q, la, dst); err != nil {
		return err
	}
	if fa.bf != nil {
		return levels(1, pc.s, 1, 0) // Nᵀ·z: level 2, then level 1
	}
	if fa.cols != nil {
		return scale(fa.cols)
	}
	return nil
}

// triangles queues dst = Û⁻¹L̂⁻¹·dst: cuBLAS dtrsv, or for Half's fp16
// factors the TriSolver on dst rounded to fp32.
func (pc *preconditioner) triangles(q *gpu.LaunchQueue, la *gpu.Linalg, dst *gpu.Buffer) error {
	fa, n := pc.fa, pc.fa.s.n
	grid, block := [3]uint32{uint32(min(4096, (n+255)/256)), 1, 1}, [3]uint32{256, 1, 1}
	if fa.half {
		if err := q.Launch(pc.toF32, grid, block, 0, nil, dst, pc.single, int64(n)); err != nil {
			return err
		}
		if err := pc.tri.Solve(q, pc.single); err != nil {
			return err
		}
		return q.Launch(pc.fromF32, grid, block, 0, nil, pc.single, dst, int64(n))
	}
	q.Do(func() error {
		if err := cuda.CublasSetStream(la.Blas, 0); err != nil {
			return err
		}
		if err := cuda.Dtrsv(la.Blas, cuda.FillLower, cuda.OpN, cuda.DiagUnit, n, fa.lu.Ptr(), n, dst.Ptr()); err != nil {
			return err
		}
		return cuda.Dtrsv(la.Blas, cuda.FillUpper, cuda.OpN, cuda.DiagNonUnit, n, fa.lu.Ptr(), n, dst.Ptr())
	})
	return nil
}

// Solve overwrites x with M⁻¹·x = Û⁻¹L̂⁻¹P·x (with the butterflies, Nᵀ
// after and M before), in fp64 on the device.
func (fa *Factors) Solve(x []float64) error {
	e, n := fa.s.e, fa.s.n
	if len(x) != n {
		return fmt.Errorf("gpu: Solve: %d entries for a system of order %d", len(x), n)
	}
	la, err := e.d.Linalg()
	if err != nil {
		return err
	}
	pc, err := fa.precond()
	if err != nil {
		return err
	}
	// x, then M⁻¹·x after it.
	return e.onVector(x, x, 2*n, n, func(q *gpu.LaunchQueue, v *gpu.Buffer) error {
		return pc.enqueue(q, la, v, v.View(8*n))
	})
}

// deviceBasis is GMRES's Krylov basis on the device (solve.KrylovBasis):
// the vectors are the columns of v, the product with A is cuBLAS dgemv,
// M⁻¹ the preconditioner, and the orthogonalisation classical
// Gram–Schmidt applied twice (two dgemv a pass, where modified
// Gram–Schmidt would take 2k dot products and axpys one after the other).
// Each iteration brings 2k+2 coefficients and the norm to the host.
type deviceBasis struct {
	fa   *Factors
	la   *gpu.Linalg
	pc   *preconditioner
	v    *gpu.Buffer // n × (size+1), column-major
	coef *gpu.Buffer // the two passes' coefficients, 2(size+1)
	tmp  *gpu.Buffer // A·v_k
}

// NewKrylovBasis makes GMRES's basis on the device when a is the system
// these factors came from (solve.KrylovFactorization); for any other
// operator it returns nil, and GMRES keeps its basis on the host.
func (fa *Factors) NewKrylovBasis(a solve.Operator, v0 []float64, size int) (solve.KrylovBasis, error) {
	if s, ok := a.(*System); !ok || s != fa.s {
		return nil, nil
	}
	e, n := fa.s.e, fa.s.n
	if len(v0) != n || size < 1 {
		return nil, fmt.Errorf("gpu: Krylov basis: %d entries for order %d, size %d", len(v0), n, size)
	}
	la, err := e.d.Linalg()
	if err != nil {
		return nil, err
	}
	pc, err := fa.precond()
	if err != nil {
		return nil, err
	}
	b := &deviceBasis{fa: fa, la: la, pc: pc}
	if b.v, err = e.d.Alloc(8 * n * (size + 1)); err != nil {
		return nil, fmt.Errorf("gpu: GMRES's basis of %d vectors: %w", size+1, err)
	}
	if b.coef, err = e.d.Alloc(16 * (size + 1)); err != nil {
		return nil, errors.Join(err, b.Free())
	}
	if b.tmp, err = e.d.Alloc(8 * n); err != nil {
		return nil, errors.Join(err, b.Free())
	}
	if err := e.d.Upload(b.v, v0); err != nil {
		return nil, errors.Join(err, b.Free())
	}
	return b, nil
}

func (b *deviceBasis) Expand(k int, h []float64) error {
	d, n, blas := b.fa.s.e.d, b.fa.s.n, b.la.Blas
	if len(h) != k+2 || 8*n*(k+2) > b.v.Bytes() {
		return fmt.Errorf("gpu: Krylov basis: expanding v_%d with %d coefficients (the basis holds %d vectors)", k, len(h), b.v.Bytes()/(8*n))
	}
	vk, w := b.v.View(8*n*k), b.v.View(8*n*(k+1))
	q := d.NewLaunchQueue()
	q.Do(func() error {
		if err := cuda.CublasSetStream(blas, 0); err != nil {
			return err
		}
		return cuda.Dgemv(blas, cuda.OpN, n, n, 1, b.fa.s.a.Ptr(), n, vk.Ptr(), 0, b.tmp.Ptr())
	})
	if err := b.pc.enqueue(q, b.la, b.tmp, w); err != nil {
		return err
	}
	for pass := range 2 {
		c := b.coef.View(8 * (k + 1) * pass)
		b.orthogonalize(q, w, c, k+1)
	}
	q.Do(func() error {
		norm, err := cuda.Dnrm2(blas, n, w.Ptr())
		if err != nil {
			return err
		}
		h[k+1] = norm
		if norm == 0 || math.IsNaN(norm) || math.IsInf(norm, 0) {
			return nil
		}
		return cuda.Dscal(blas, n, 1/norm, w.Ptr())
	})
	if err := q.Flush(); err != nil {
		return err
	}
	c := make([]float64, 2*(k+1))
	if err := d.Download(c, b.coef); err != nil {
		return err
	}
	for i := 0; i <= k; i++ {
		h[i] = c[i] + c[k+1+i]
	}
	return nil
}

// orthogonalize queues one pass of classical Gram–Schmidt against the
// first k vectors: c = Vᵀw, w −= V·c.
func (b *deviceBasis) orthogonalize(q *gpu.LaunchQueue, w, c *gpu.Buffer, k int) {
	n, blas := b.fa.s.n, b.la.Blas
	q.Do(func() error {
		if err := cuda.Dgemv(blas, cuda.OpT, n, k, 1, b.v.Ptr(), n, w.Ptr(), 0, c.Ptr()); err != nil {
			return err
		}
		return cuda.Dgemv(blas, cuda.OpN, n, k, -1, b.v.Ptr(), n, c.Ptr(), 1, w.Ptr())
	})
}

func (b *deviceBasis) Combine(y, x []float64) error {
	d, n, blas := b.fa.s.e.d, b.fa.s.n, b.la.Blas
	if len(x) != n || 8*len(y) > b.coef.Bytes() {
		return fmt.Errorf("gpu: Krylov basis: combining %d vectors into %d entries", len(y), len(x))
	}
	if len(y) == 0 {
		clear(x)
		return nil
	}
	if err := d.Upload(b.coef, y); err != nil {
		return err
	}
	if err := d.Do(func() error {
		if err := cuda.CublasSetStream(blas, 0); err != nil {
			return err
		}
		return cuda.Dgemv(blas, cuda.OpN, n, len(y), 1, b.v.Ptr(), n, b.coef.Ptr(), 0, b.tmp.Ptr())
	}); err != nil {
		return err
	}
	return d.Download(x, b.tmp)
}

func (b *deviceBasis) Free() error { return gpu.FreeAll(b.v, b.coef, b.tmp) }
