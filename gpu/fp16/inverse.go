package fp16

import (
	"errors"
	"fmt"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
)

// leaf is the order of the diagonal blocks an Inverter inverts by
// substitution, in one thread block's shared memory.
const leaf = 64

// An Inverter inverts one triangle of an n×n fp32 LU t into x (both
// column-major, leading dimension n): the unit lower triangle L or the
// upper U. The 64×64 diagonal blocks are inverted by substitution in
// shared memory, all at once, and the rest of the other triangle zeroed;
// then, level by level, pairs of inverted blocks are joined by two
// batched products: X₂₁ = −X₂₂·(T₂₁·X₁₁) below the diagonal,
// X₁₂ = −X₁₁·(T₁₂·X₂₂) above, the inner product in scratch of its own (the
// next level multiplies by whole blocks, zeros included). At n = 1024
// that is ten launches in place of strsm on the identity, whose 0.43 ms
// (H100) sat on the critical path of every step of the fp16 LU.
type Inverter struct {
	d      *gpu.Device
	t, x   *gpu.Buffer
	n      int
	upper  bool
	w      *gpu.Buffer // the inner products, n²/4 values
	ptrs   *gpu.Buffer // every level's pointer arrays
	levels []level
	leaf   *gpu.Function // tri_inv_leaf
	zero   *gpu.Function // tri_zero
}

// level is one level's pairs of blocks of order s, and the device
// addresses of its two products' A, B and C pointer arrays.
type level struct {
	s, pairs int
	arrays   [6]uintptr
}

// Inverts reports whether an Inverter takes triangles of order n: 64
// times a power of two.
func Inverts(n int) bool {
	return n >= leaf && n%leaf == 0 && (n/leaf)&(n/leaf-1) == 0
}

// NewInverter prepares the inversion of t's triangle into x (n×n each),
// uploading the products' pointer arrays once.
func NewInverter(d *gpu.Device, t, x *gpu.Buffer, n int, upper bool) (*Inverter, error) {
	if !Inverts(n) {
		return nil, fmt.Errorf("fp16: an Inverter takes orders of 64·2^k, not %d", n)
	}
	if t.Bytes() < 4*n*n || x.Bytes() < 4*n*n {
		return nil, fmt.Errorf("fp16: an Inverter of order %d needs %d bytes, has %d and %d", n, 4*n*n, t.Bytes(), x.Bytes())
	}
	v := &Inverter{d: d, t: t, x: x, n: n, upper: upper}
	var err error
	if v.leaf, v.zero, err = functions(d, "tri_inv_leaf", "tri_zero"); err != nil {
		return nil, err
	}
	if v.w, err = d.Alloc(4 * max(1, n*n/4)); err != nil {
		return nil, err
	}
	var host []uint64
	for s := leaf; s < n; s *= 2 {
		l := level{s: s, pairs: n / (2 * s)}
		for a, addrs := range v.pointers(s) {
			l.arrays[a] = uintptr(8 * len(host)) // an offset until the upload
			host = append(host, addrs...)
		}
		v.levels = append(v.levels, l)
	}
	if len(host) == 0 {
		return v, nil
	}
	if v.ptrs, err = d.Alloc(8 * len(host)); err != nil {
		v.Free()
		return nil, err
	}
	for i := range v.levels {
		for a := range v.levels[i].arrays {
			v.levels[i].arrays[a] += v.ptrs.Ptr()
		}
	}
	if err := d.Upload(v.ptrs, host); err != nil {
		v.Free()
		return nil, err
	}
	return v, nil
}

// pointers lists level s's six arrays: the inner product's A, B, C, then
// the outer's, a pair of blocks at a time; pair i's inner product is
// s×s at w + i·s² (leading dimension s).
func (v *Inverter) pointers(s int) [6][]uint64 {
	at := func(b *gpu.Buffer, i, j int) uint64 { return uint64(b.Ptr()) + uint64(4*(i+j*v.n)) }
	var out [6][]uint64
	for r := 0; r < v.n; r += 2 * s {
		w := uint64(v.w.Ptr()) + uint64(4*(r/(2*s))*s*s)
		p := [6]uint64{ // lower: W = T₂₁·X₁₁; X₂₁ = −X₂₂·W
			at(v.t, r+s, r), at(v.x, r, r), w,
			at(v.x, r+s, r+s), w, at(v.x, r+s, r),
		}
		if v.upper { // W = T₁₂·X₂₂; X₁₂ = −X₁₁·W
			p = [6]uint64{
				at(v.t, r, r+s), at(v.x, r+s, r+s), w,
				at(v.x, r, r), w, at(v.x, r, r+s),
			}
		}
		for a := range p {
			out[a] = append(out[a], p[a])
		}
	}
	return out
}

// Free frees the scratch and the pointer arrays.
func (v *Inverter) Free() { gpu.FreeAll(v.w, v.ptrs) }

// Invert queues the inversion on st, its products on the cuBLAS handle
// blas (set to st here).
func (v *Inverter) Invert(st *gpu.Stream, blas uintptr) error {
	upper, n := int32(0), int64(v.n)
	if v.upper {
		upper = 1
	}
	if err := v.leaf.Launch([3]uint32{uint32(v.n / leaf), 1, 1}, [3]uint32{leaf, 1, 1}, 0, st, v.t, n, v.x, n, upper); err != nil {
		return err
	}
	if err := v.zero.Launch(gpu.StrideGrid(v.n*v.n), [3]uint32{256, 1, 1}, 0, st, v.x, n, int32(v.n), upper); err != nil {
		return err
	}
	return v.d.Do(func() error { return v.join(st, blas) })
}

// functions returns two of the kernels on d.
func functions(d *gpu.Device, a, b string) (*gpu.Function, *gpu.Function, error) {
	mod, err := d.Module(Kernels())
	if err != nil {
		return nil, nil, err
	}
	fa, err := mod.Function(a)
	if err != nil {
		return nil, nil, err
	}
	fb, err := mod.Function(b)
	return fa, fb, err
}

// Invert sets the n×n x to the inverse of t's upper triangle (upper) or
// unit lower one, on st: by v where v inverts that triangle of t into x at
// order n, else by StrsmInverse (an LU's last, narrower block, or orders
// an Inverter does not take). v may be nil.
func Invert(d *gpu.Device, v *Inverter, st *gpu.Stream, blas uintptr, t, x *gpu.Buffer, n int, upper bool) error {
	if v != nil && v.n == n && v.t == t && v.x == x && v.upper == upper {
		return v.Invert(st, blas)
	}
	return StrsmInverse(d, st, blas, t, x, n, upper)
}

// StrsmInverse sets the n×n x to the inverse of t's upper triangle
// (upper) or unit lower one, both of leading dimension n, by cuBLAS strsm
// (handle blas, set to st here) on the identity, in fp32: for the orders
// an Inverter does not take.
func StrsmInverse(d *gpu.Device, st *gpu.Stream, blas uintptr, t, x *gpu.Buffer, n int, upper bool) error {
	eye, _, err := functions(d, "eye_f32", "eye_f32")
	if err != nil {
		return err
	}
	if err := eye.Launch(gpu.StrideGrid(n*n), [3]uint32{256, 1, 1}, 0, st, x, int64(n), int32(n)); err != nil {
		return err
	}
	fill, diag := cuda.FillLower, cuda.DiagUnit
	if upper {
		fill, diag = cuda.FillUpper, cuda.DiagNonUnit
	}
	return d.Do(func() error {
		sh, err := st.Handle(d)
		if err != nil {
			return err
		}
		if err := cuda.CublasSetStream(blas, sh); err != nil {
			return err
		}
		return cuda.Strsm(blas, cuda.SideLeft, fill, cuda.OpN, diag, n, n, 1, t.Ptr(), n, x.Ptr(), n)
	})
}

// join runs the levels' batched products on st; on the device's thread.
func (v *Inverter) join(st *gpu.Stream, blas uintptr) error {
	sh, err := st.Handle(v.d)
	if err != nil {
		return err
	}
	if err := cuda.CublasSetStream(blas, sh); err != nil {
		return err
	}
	var errs []error
	for _, l := range v.levels {
		a := l.arrays
		errs = append(errs,
			cuda.SgemmBatched(blas, cuda.OpN, cuda.OpN, l.s, l.s, l.s, 1, a[0], v.n, a[1], v.n, 0, a[2], l.s, l.pairs),
			cuda.SgemmBatched(blas, cuda.OpN, cuda.OpN, l.s, l.s, l.s, -1, a[3], v.n, a[4], l.s, 0, a[5], v.n, l.pairs))
	}
	return errors.Join(errs...)
}
