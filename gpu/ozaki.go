package gpu

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/mwmm/mwmm/gpu/internal/cuda"
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
	e                                            *Engine
	rowExp, colExp, splitRows, splitCols, combin *Function
	digits, maxM, maxN, maxK                     int
	a8, b8                                       *Buffer // the digits of A (k-major, S·kp × m) and of B (S·kp × n)
	ea, fb                                       *Buffer // int32 exponents of A's rows and B's columns
	lv                                           *Buffer // the levels' int32 products, S of them, chunk columns each
	chunk                                        int     // the columns of C a round of products covers
	algos                                        []*cuda.HeuristicResult
}

// ozakiLevelBytes bounds the memory of the level products: C's columns go
// through them in chunks.
var ozakiLevelBytes = 1 << 31

// roundUp rounds x up to a multiple of m.
func roundUp(x, m int) int { return (x + m - 1) / m * m }

// newOzakiUpdate makes an update for products up to maxM×maxK times
// maxK×maxN with digits digits.
func (e *Engine) newOzakiUpdate(digits, maxM, maxN, maxK int) (*ozakiUpdate, error) {
	if digits < OzakiMinDigits || digits > OzakiMaxDigits {
		return nil, fmt.Errorf("gpu: %d Ozaki digits: %d to %d", digits, OzakiMinDigits, OzakiMaxDigits)
	}
	if _, err := e.d.Lt(); err != nil {
		return nil, err
	}
	mod, err := e.d.Module("ozaki")
	if err != nil {
		return nil, err
	}
	u := &ozakiUpdate{e: e, digits: digits, maxM: maxM, maxN: maxN, maxK: maxK, algos: make([]*cuda.HeuristicResult, digits)}
	for _, f := range []struct {
		fn   **Function
		name string
	}{{&u.rowExp, "ozaki_row_exp"}, {&u.colExp, "ozaki_col_exp"}, {&u.splitRows, "ozaki_split_rows"},
		{&u.splitCols, "ozaki_split_cols"}, {&u.combin, "ozaki_combine"}} {
		if *f.fn, err = mod.Function(f.name); err != nil {
			return nil, err
		}
	}
	kp, ldl := roundUp(maxK, 16), roundUp(maxM, 4)
	u.chunk = min(maxN, max(16, ozakiLevelBytes/(4*digits*ldl)/16*16))
	d := e.d
	for _, b := range []struct {
		buf   **Buffer
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

func (u *ozakiUpdate) free() { freeAll(u.a8, u.b8, u.ea, u.fb, u.lv) }

// sub queues C −= A·B on st: A m×k (ld lda), B k×n (ld ldb) and C m×n
// (ld ldc), fp64 and column-major, on at most sms multiprocessors when
// sms > 0.
func (u *ozakiUpdate) sub(st *Stream, m, n, k int, a *Buffer, lda int, b *Buffer, ldb int, c *Buffer, ldc int, sms int) error {
	if m > u.maxM || k > u.maxK || n > u.maxN {
		return fmt.Errorf("gpu: Ozaki update %d×%d·%d×%d is larger than its %d×%d·%d×%d scratch", m, k, k, n, u.maxM, u.maxK, u.maxK, u.maxN)
	}
	if m == 0 || n == 0 || k == 0 {
		return nil
	}
	s := u.digits
	kp := roundUp(k, 16) // int8 products want the depth and leading dimensions in 16 bytes
	ld := s * kp
	block := [3]uint32{256, 1, 1}
	if err := u.rowExp.Launch(grid(m), block, 0, st, a, int64(lda), int32(m), int32(k), u.ea); err != nil {
		return err
	}
	if err := u.colExp.Launch(grid(32*n), block, 0, st, b, int64(ldb), int32(k), int32(n), u.fb); err != nil {
		return err
	}
	tiles := [3]uint32{uint32((m + 31) / 32), uint32(kp / 32), 1}
	if kp%32 != 0 {
		tiles[1]++
	}
	if err := u.splitRows.Launch(tiles, [3]uint32{32, 8, 1}, 0, st,
		a, int64(lda), int32(m), int32(k), u.ea, u.a8, int64(ld), int32(s), int32(kp)); err != nil {
		return err
	}
	if err := u.splitCols.Launch(grid(kp*n), block, 0, st,
		b, int64(ldb), int32(k), int32(n), u.fb, u.b8, int64(ld), int32(s), int32(kp)); err != nil {
		return err
	}
	ldl := roundUp(m, 4)
	for c0 := 0; c0 < n; c0 += u.chunk {
		cols := min(u.chunk, n-c0)
		stride := ldl * cols
		for d := range s {
			spec := MatmulSpec{M: m, N: cols, K: (d + 1) * kp, TransA: true,
				A: u.a8, LdA: ld, TypeA: I8,
				B: u.b8.view((s-1-d)*kp + c0*ld), LdB: ld, TypeB: I8,
				D: u.lv.view(4 * d * stride), LdD: ldl, TypeD: I32,
				Compute: Compute32I, Alpha: 1, Workspace: u.e.workspace, Stream: st, SMs: sms,
				reuse: u.algos[d]}
			used, err := u.e.lt.matmul(spec)
			if err != nil && spec.reuse != nil {
				spec.reuse = nil // it does not suit this shape: ask the heuristic
				used, err = u.e.lt.matmul(spec)
			}
			if err != nil {
				return err
			}
			if u.algos[d] == nil {
				u.algos[d] = &used
			}
		}
		if err := u.combin.Launch(grid(m*cols), block, 0, st, c.view(8*c0*ldc), int64(ldc), int32(m), int32(cols),
			u.lv, int64(ldl), int64(stride), int32(s), u.ea, u.fb.view(4*c0)); err != nil {
			return err
		}
	}
	return nil
}

// ozakiBound is the bound on |(A·B)_ij − the Ozaki product's| over
// 2^(e_i+f_j), before C's rounding: k products, each of digits the
// truncation of both factors (2·2^(−7S)) and the levels left out (below
// (S+1)·2^(−7S)).
func ozakiBound(digits, k int) float64 {
	return float64(k) * float64(digits+3) * math.Ldexp(1, -7*digits)
}

// ozakiLU factors the column-major fp64 a in place, right-looking: each
// panel of nb columns by cuSOLVER's dgetrf (with partial pivoting, or
// none), its interchanges applied to the columns on both sides, U₁₂ by
// cuBLAS dtrsm, and A₂₂ −= L₂₁·U₁₂ by the Ozaki scheme with digits int8
// digits (ozakiUpdate). The factors stay in fp64, so their accuracy is
// the updates': about 7·digits bits of each row of L₂₁ and column of U₁₂,
// against fp32's 24. ipiv gets the global pivots; without pivots it is
// left as it is.
func (e *Engine) ozakiLU(la *linalg, mod *Module, digits, nb, n int, a, ipiv *Buffer, pivots bool, ph *Phases) error {
	d := e.d
	jbMax := min(nb, n)
	work, err := e.getrfWork(la, true, n, jbMax, a.ptr, n)
	if err != nil {
		return err
	}
	defer work.Free()
	info := work.ptr + uintptr(work.n-256)
	omod, err := d.Module("ozaki")
	if err != nil {
		return err
	}
	permute, err := omod.Function("permute_rows_f64")
	if err != nil {
		return err
	}
	if 16*jbMax > 48<<10 {
		if err := permute.SetMaxDynamicShared(16 * jbMax); err != nil {
			return err
		}
	}
	shift, err := mod.Function("shift_pivots")
	if err != nil {
		return err
	}
	pairs, err := d.Alloc(4 * 4 * jbMax)
	if err != nil {
		return err
	}
	defer pairs.Free()
	upd, err := e.newOzakiUpdate(digits, max(n-jbMax, 1), max(n-jbMax, 1), jbMax)
	if err != nil {
		return err
	}
	defer upd.free()
	st, _, err := e.solverStreams()
	if err != nil {
		return err
	}
	if err := d.call(func() error {
		return errors.Join(la.solverOn(d, st), la.blasOn(d, st))
	}); err != nil {
		return err
	}
	defer d.call(func() error {
		return errors.Join(cuda.CusolverSetStream(la.solver, 0), cuda.CublasSetStream(la.blas, 0))
	})
	at := func(i, j int) int { return 8 * (i + j*n) }
	pivHost := make([]int32, jbMax)
	moves := make([]int32, 0, 4*jbMax)
	for j := 0; j < n; j += nb {
		jb := min(nb, n-j)
		rest := n - j - jb
		var piv uintptr
		if pivots {
			piv = ipiv.ptr + uintptr(4*j)
		}
		// A zero pivot shows in U's diagonal (Factors.check).
		if err := timed(d, ph, func(p *Phases) *time.Duration { return &p.Panel }, func() error {
			return d.call(func() error {
				return cuda.Getrf(la.solver, true, n-j, jb, a.ptr+uintptr(at(j, j)), n, work.ptr, piv, info)
			})
		}); err != nil {
			return fmt.Errorf("gpu: LU panel at column %d: %w", j, err)
		}
		if pivots {
			if err := timed(d, ph, func(p *Phases) *time.Duration { return &p.Swap }, func() error {
				if err := d.Download(pivHost[:jb], ipiv.view(4*j)); err != nil {
					return err
				}
				moves = panelMoves(moves[:0], pivHost[:jb], j)
				np := len(moves) / 2
				if j > 0 { // the pivots become global row numbers
					if err := shift.Launch(grid(jb), [3]uint32{256, 1, 1}, 0, st, piv, int32(jb), int32(j)); err != nil {
						return err
					}
				}
				if np == 0 {
					return nil
				}
				if err := d.Upload(pairs, moves); err != nil {
					return err
				}
				for _, c := range [][2]int{{0, j}, {j + jb, rest}} {
					if c[1] == 0 {
						continue
					}
					if err := permute.Launch([3]uint32{uint32(min(c[1], 65535)), 1, 1}, [3]uint32{256, 1, 1}, uint32(8*np), st,
						a.view(at(0, c[0])), int64(n), int32(c[1]), pairs, pairs.view(4*np), int32(np)); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				return err
			}
		}
		if rest == 0 {
			continue
		}
		if err := timed(d, ph, func(p *Phases) *time.Duration { return &p.Trsm }, func() error {
			return d.call(func() error {
				return cuda.Dtrsm(la.blas, cuda.SideLeft, cuda.FillLower, cuda.OpN, cuda.DiagUnit, jb, rest, 1,
					a.ptr+uintptr(at(j, j)), n, a.ptr+uintptr(at(j, j+jb)), n)
			})
		}); err != nil {
			return err
		}
		if err := timed(d, ph, func(p *Phases) *time.Duration { return &p.Update }, func() error {
			return upd.sub(st, rest, rest, jb, a.view(at(j+jb, j)), n, a.view(at(j, j+jb)), n, a.view(at(j+jb, j+jb)), n, 0)
		}); err != nil {
			return fmt.Errorf("gpu: LU update at column %d: %w", j, err)
		}
	}
	return d.Sync()
}
