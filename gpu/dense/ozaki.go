package dense

import (
	"fmt"
	"math"

	"github.com/mwmm/mwmm/gpu"
)

// The Ozaki forms' digits: each a signed 7-bit int8 word, so S digits
// carry 7·S bits of each row of L₂₁ and column of U₁₂ (an fp32
// significand has 24, an fp64 one 53).
const (
	OzakiMinDigits = 2
	OzakiMaxDigits = 7
)

// ozakiUpdate computes C −= A·B in fp64 on the int8 tensor cores, by the
// Ozaki scheme (kernels/ozaki.cu): A's rows and B's columns are scaled by
// powers of two and cut into digits, and the products of digits whose
// levels t + u are below the number of digits run as one int32 cuBLASLt
// product per level, exact, added into C in fp64. The error of each
// entry of A·B is below K·(S+3)·2^(−7S)·2^(e_i+f_j), where 2^e_i bounds
// row i of A and 2^f_j column j of B (ozakiBound).
type ozakiUpdate struct {
	e                                             *Solver
	rowExp, colExp, splitRows, splitCols, combine *gpu.Function
	digits, maxM, maxN, maxK                      int
	m, k                                          int                 // A's shape, from cutA
	a8, b8                                        *gpu.Buffer         // the digits of A (k-major, S·kp × m) and of B (S·kp × n)
	ea, fb                                        *gpu.Buffer         // int32 exponents of A's rows and B's columns
	lv                                            *gpu.Buffer         // the levels' int32 products, S of them, chunk columns each
	chunk                                         int                 // the columns of C a round of products covers
	algos                                         [2][]*gpu.Algorithm // all multiprocessors, fewer
}

// ozakiLevelBytes bounds the memory of the level products: C's columns go
// through them in chunks.
var ozakiLevelBytes = 1 << 31

// roundUp rounds x up to a multiple of m.
func roundUp(x, m int) int { return (x + m - 1) / m * m }

// newOzakiUpdate makes an update for products up to maxM×maxK times
// maxK×maxN with digits digits.
func (e *Solver) newOzakiUpdate(digits, maxM, maxN, maxK int) (*ozakiUpdate, error) {
	if digits < OzakiMinDigits || digits > OzakiMaxDigits {
		return nil, fmt.Errorf("gpu: %d Ozaki digits: %d to %d", digits, OzakiMinDigits, OzakiMaxDigits)
	}
	if _, err := e.d.Lt(); err != nil {
		return nil, err
	}
	mod, err := e.d.Module(kernel("ozaki"))
	if err != nil {
		return nil, err
	}
	u := &ozakiUpdate{e: e, digits: digits, maxM: maxM, maxN: maxN, maxK: maxK}
	for i := range u.algos {
		u.algos[i] = make([]*gpu.Algorithm, digits)
	}
	for _, f := range []struct {
		fn   **gpu.Function
		name string
	}{{&u.rowExp, "ozaki_row_exp"}, {&u.colExp, "ozaki_col_exp"}, {&u.splitRows, "ozaki_split_rows"},
		{&u.splitCols, "ozaki_split_cols"}, {&u.combine, "ozaki_combine"}} {
		if *f.fn, err = mod.Function(f.name); err != nil {
			return nil, err
		}
	}
	kp, ldl := roundUp(maxK, 16), roundUp(maxM, 4)
	u.chunk = min(maxN, max(16, ozakiLevelBytes/(4*digits*ldl)/16*16))
	d := e.d
	for _, b := range []struct {
		buf   **gpu.Buffer
		bytes int
	}{{&u.a8, digits * kp * maxM}, {&u.b8, digits * kp * maxN}, {&u.ea, 4 * maxM}, {&u.fb, 4 * maxN},
		{&u.lv, 4 * digits * ldl * u.chunk}} {
		if *b.buf, err = d.Alloc(max(b.bytes, 16)); err != nil {
			u.free()
			return nil, err
		}
	}
	return u, nil
}

func (u *ozakiUpdate) free() { gpu.FreeAll(u.a8, u.b8, u.ea, u.fb, u.lv) }

// sub queues C −= A·B on st: A m×k (ld lda), B k×n (ld ldb) and C m×n
// (ld ldc), fp64 and column-major, on at most sms multiprocessors when
// sms > 0.
func (u *ozakiUpdate) sub(st *gpu.Stream, m, n, k int, a *gpu.Buffer, lda int, b *gpu.Buffer, ldb int, c *gpu.Buffer, ldc int, sms int) error {
	if err := u.cutA(st, m, k, a, lda); err != nil {
		return err
	}
	return u.subAB(st, n, b, ldb, c, ldc, sms)
}

// cutA queues the digits of A (m×k, ld lda), for the products of subAB
// that follow on st.
func (u *ozakiUpdate) cutA(st *gpu.Stream, m, k int, a *gpu.Buffer, lda int) error {
	if m > u.maxM || k > u.maxK {
		return fmt.Errorf("gpu: Ozaki update with A %d×%d, larger than its %d×%d scratch", m, k, u.maxM, u.maxK)
	}
	u.m, u.k = m, k
	if m == 0 || k == 0 {
		return nil
	}
	kp := roundUp(k, 16) // int8 products want the depth and leading dimensions in 16 bytes
	if err := u.rowExp.Launch(gpu.StrideGrid(m), [3]uint32{256, 1, 1}, 0, st, a, int64(lda), int32(m), int32(k), u.ea); err != nil {
		return err
	}
	tiles := [3]uint32{uint32((m + 31) / 32), uint32((kp + 31) / 32), 1}
	return u.splitRows.Launch(tiles, [3]uint32{32, 8, 1}, 0, st,
		a, int64(lda), int32(m), int32(k), u.ea, u.a8, int64(u.digits*kp), int32(u.digits), int32(kp))
}

// subAB queues C −= A·B on st for the A of the last cutA: B k×n (ld ldb)
// and C m×n (ld ldc).
func (u *ozakiUpdate) subAB(st *gpu.Stream, n int, b *gpu.Buffer, ldb int, c *gpu.Buffer, ldc int, sms int) error {
	m, k, s := u.m, u.k, u.digits
	if n > u.maxN {
		return fmt.Errorf("gpu: Ozaki update with B %d×%d, wider than its %d columns of scratch", k, n, u.maxN)
	}
	if m == 0 || n == 0 || k == 0 {
		return nil
	}
	kp := roundUp(k, 16)
	ld := s * kp
	block := [3]uint32{256, 1, 1}
	if err := u.colExp.Launch(gpu.StrideGrid(32*n), block, 0, st, b, int64(ldb), int32(k), int32(n), u.fb); err != nil {
		return err
	}
	if err := u.splitCols.Launch(gpu.StrideGrid(kp*n), block, 0, st,
		b, int64(ldb), int32(k), int32(n), u.fb, u.b8, int64(ld), int32(s), int32(kp)); err != nil {
		return err
	}
	// The algorithms of the first products, with all the multiprocessors
	// and with fewer, serve the later shapes: a heuristic and a kernel
	// load per shape cost time in an LU's many updates.
	algos := u.algos[min(sms, 1)]
	ldl := roundUp(m, 4)
	for c0 := 0; c0 < n; c0 += u.chunk {
		cols := min(u.chunk, n-c0)
		stride := ldl * cols
		for d := range s {
			spec := gpu.MatmulSpec{M: m, N: cols, K: (d + 1) * kp, TransA: true,
				A: u.a8, LdA: ld, TypeA: gpu.I8,
				B: u.b8.View((s-1-d)*kp + c0*ld), LdB: ld, TypeB: gpu.I8,
				D: u.lv.View(4 * d * stride), LdD: ldl, TypeD: gpu.I32,
				Compute: gpu.Compute32I, Alpha: 1, Workspace: u.e.workspace, Stream: st, SMs: sms,
				Algorithm: algos[d]}
			used, err := u.e.lt.MatmulAlgo(spec)
			if err != nil && spec.Algorithm != nil {
				spec.Algorithm = nil // it does not suit this shape: ask the heuristic
				used, err = u.e.lt.MatmulAlgo(spec)
			}
			if err != nil {
				return err
			}
			if algos[d] == nil {
				algos[d] = &used
			}
		}
		if err := u.combine.Launch(gpu.StrideGrid(m*cols), block, 0, st, c.View(8*c0*ldc), int64(ldc), int32(m), int32(cols),
			u.lv, int64(ldl), int64(stride), int32(s), u.ea, u.fb.View(4*c0)); err != nil {
			return err
		}
	}
	return nil
}

// ozakiTrailing runs the Ozaki forms' updates in the blocked LU: prepare
// cuts the step's L₂₁ into digits once, and each update cuts its columns
// of U₁₂.
type ozakiTrailing struct {
	u     *ozakiUpdate
	w     *gpu.Buffer
	n     int
	j, jb int
}

func (e *Solver) newOzakiTrailing(digits int, w *gpu.Buffer, n, nb int) (*ozakiTrailing, error) {
	rest := max(n-nb, 1)
	u, err := e.newOzakiUpdate(digits, rest, rest, nb)
	if err != nil {
		return nil, err
	}
	return &ozakiTrailing{u: u, w: w, n: n}, nil
}

func (t *ozakiTrailing) at(i, j int) *gpu.Buffer { return t.w.View(8 * (i + j*t.n)) }

func (t *ozakiTrailing) prepare(j, jb int, st *gpu.Stream) error {
	t.j, t.jb = j, jb
	r := j + jb
	return t.u.cutA(st, t.n-r, jb, t.at(r, j), t.n)
}

func (t *ozakiTrailing) update(c0, cols int, st *gpu.Stream, sms int) error {
	return t.u.subAB(st, cols, t.at(t.j, c0), t.n, t.at(t.j+t.jb, c0), t.n, sms)
}

func (t *ozakiTrailing) free() { t.u.free() }

// ozakiBound bounds |(A·B)_ij − the Ozaki product's| over 2^(e_i+f_j),
// before C's rounding: k products, each off by at most 2·2^(−7S) for the
// truncation of both factors to S digits and by less than (S+1)·2^(−7S)
// for the levels left out.
func ozakiBound(digits, k int) float64 {
	return float64(k) * float64(digits+3) * math.Ldexp(1, -7*digits)
}
