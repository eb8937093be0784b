package fp16

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
	"github.com/mwmm/mwmm/gpu/internal/gputest"
)

// dominantHalf is an n×n diagonally dominant matrix in fp16 words
// (column-major, leading dimension ld, the rows between filled with
// ones) and its values.
func dominantHalf(t testing.TB, n, ld int) ([]uint16, []float64) {
	words, vals := make([]uint16, ld*n), make([]float64, n*n)
	for i := range words {
		words[i] = 0x3c00
	}
	for i := range n {
		s := 0.0
		for j := range n {
			vals[i+j*n] = math.Sin(float64(i*n+j)*0.61) / 2
			s += math.Abs(vals[i+j*n])
		}
		vals[i+i*n] = s * math.Copysign(1, math.Cos(float64(i)))
	}
	for j := range n {
		for i := range n {
			v := format.Binary16.Round(vals[i+j*n], format.NearestEven)
			w, err := format.Binary16.Encode(v)
			if err != nil {
				t.Fatal(err)
			}
			vals[i+j*n], words[i+j*ld] = v, uint16(w)
		}
	}
	return words, vals
}

// blockLURun is what one BlockLU factorization left on the device.
type blockLURun struct {
	a              []uint16 // the block, ld
	lu             []float32
	invU, invL     []uint16
	keptU, keptL   []float32 // untransposed (n×n)
	growth         [2]uint32
	ldA, ldK, n, G int
}

func runBlockLU(t *testing.T, d *gpu.Device, words []uint16, n, lda, blocks int) blockLURun {
	t.Helper()
	b, err := NewBlockLU(d, n, blocks)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	ldk := n + 64
	garbage := func(words int) *gpu.Buffer {
		g := make([]float32, words)
		for i := range g {
			g[i] = float32(i%5) - 2
		}
		return gputest.Upload(t, d, g)
	}
	ab := gputest.Upload(t, d, words)
	out := BlockOut{InvU: garbage(n * n / 2), InvL: garbage(n * n / 2), KeptU: garbage(ldk * n), KeptL: garbage(ldk * n),
		LdKept: ldk, Growth: gputest.Upload(t, d, []uint32{0, 0})}
	if err := b.Factor(nil, ab, lda, out); err != nil {
		t.Fatal(err)
	}
	r := blockLURun{a: make([]uint16, len(words)), lu: make([]float32, n*n), invU: make([]uint16, n*n), invL: make([]uint16, n*n),
		ldA: lda, ldK: ldk, n: n, G: blocks}
	kU, kL, g := make([]float32, ldk*n), make([]float32, ldk*n), make([]uint32, 2)
	for _, c := range []struct {
		dst any
		src *gpu.Buffer
	}{{r.a, ab}, {r.lu, b.lu}, {r.invU, out.InvU}, {r.invL, out.InvL}, {kU, out.KeptU}, {kL, out.KeptL}, {g, out.Growth}} {
		if err := d.Download(c.dst, c.src); err != nil {
			t.Fatal(err)
		}
	}
	r.growth = [2]uint32{g[0], g[1]}
	r.keptU, r.keptL = make([]float32, n*n), make([]float32, n*n)
	for j := range n {
		for i := range n {
			r.keptU[i+j*n], r.keptL[i+j*n] = kU[j+i*ldk], kL[j+i*ldk]
		}
	}
	return r
}

// A BlockLU's factors L̂Û of a dominant fp16 block A satisfy
// |A − L̂Û| ≤ 2n·u₃₂·|L̂||Û| elementwise, its inverses the Inverter's
// bound, and what it writes out is those fp32 values: in fp16 (the
// factors in place, the inverses) rounded to nearest, transposed in fp32
// (the kept inverses), the maxima exactly; the rows past n in the block's
// leading dimension are left alone. Any number of thread blocks gives the
// same bits: each tile's arithmetic does not depend on which block does it.
func TestBlockLU(t *testing.T) {
	d := device(t)
	for _, c := range []struct{ n, blocks int }{{64, 1}, {192, 2}, {1024, 32}} {
		lda := c.n + 8
		words, vals := dominantHalf(t, c.n, lda)
		r := runBlockLU(t, d, words, c.n, lda, c.blocks)
		name := fmt.Sprintf("n=%d, %d blocks", c.n, c.blocks)
		checkFactors(t, name, c.n, vals, r.lu)
		checkInverse(t, c.n, r.lu, r.keptL, false)
		checkInverse(t, c.n, r.lu, r.keptU, true)
		checkOutputs(t, name, r, words)
		for _, blocks := range []int{1, 5, 132} {
			if blocks == c.blocks || c.n < 1024 && blocks > 1 {
				continue
			}
			o := runBlockLU(t, d, words, c.n, lda, blocks)
			if !slices.Equal(o.lu, r.lu) || !slices.Equal(o.keptU, r.keptU) || !slices.Equal(o.keptL, r.keptL) || o.growth != r.growth {
				t.Errorf("%s: %d blocks give other bits", name, blocks)
			}
		}
	}
	if _, err := NewBlockLU(d, 96, 0); err == nil {
		t.Error("a BlockLU of order 96 was made")
	}
}

// A zero pivot shows in the growth words as Inf or NaN.
func TestBlockLUZeroPivot(t *testing.T) {
	d := device(t)
	n := 128
	words, _ := dominantHalf(t, n, n)
	words[70+70*n] = 0
	for j := range n { // row 70 zero left of the diagonal: U(70, 70) = 0 exactly
		if j < 70 {
			words[70+j*n] = 0
		}
	}
	r := runBlockLU(t, d, words, n, n, 3)
	if max(r.growth[0], r.growth[1]) < math.Float32bits(float32(math.Inf(1))) {
		t.Errorf("a zero pivot left growth words %#x, %#x", r.growth[0], r.growth[1])
	}
}

// checkFactors holds lu's factors to a's LU backward error bound.
func checkFactors(t *testing.T, name string, n int, a []float64, lu []float32) {
	t.Helper()
	worst := 0.0
	for j := range n {
		for i := range n {
			var s, abs float64
			for k := range min(i, j) + 1 {
				l := 1.0
				if k < i {
					l = float64(lu[i+k*n])
				}
				p := l * float64(lu[k+j*n])
				s, abs = s+p, abs+math.Abs(p)
			}
			if r := math.Abs(a[i+j*n]-s) / (2 * float64(n) * 0x1p-24 * abs); r > worst {
				worst = r
			}
		}
	}
	if worst > 1 {
		t.Errorf("%s: |A − L̂Û| reaches %.3g of its bound", name, worst)
	}
}

// checkOutputs holds r's fp16 and kept outputs and maxima to its fp32
// factors and inverses.
func checkOutputs(t *testing.T, name string, r blockLURun, words []uint16) {
	t.Helper()
	n := r.n
	half := func(v float32) uint16 {
		w, err := format.Binary16.Encode(format.Binary16.Round(float64(v), format.NearestEven))
		if err != nil {
			t.Fatal(err)
		}
		return uint16(w)
	}
	var lMax, uMax uint32
	for j := range n {
		for i := range r.ldA {
			at := i + j*r.ldA
			if i >= n {
				if r.a[at] != words[at] {
					t.Fatalf("%s: row %d, past the block, changed", name, i)
				}
				continue
			}
			v := r.lu[i+j*n]
			if r.a[at] != half(v) {
				t.Fatalf("%s: factor (%d,%d) is %#x in fp16, not %g", name, i, j, r.a[at], v)
			}
			if r.invU[i+j*n] != half(r.keptU[i+j*n]) || r.invL[i+j*n] != half(r.keptL[i+j*n]) {
				t.Fatalf("%s: the fp16 inverses at (%d,%d) are not the kept ones", name, i, j)
			}
			bits := math.Float32bits(float32(math.Abs(float64(v))))
			if i > j {
				lMax = max(lMax, bits)
			} else {
				uMax = max(uMax, bits)
			}
		}
	}
	if r.growth != [2]uint32{lMax, uMax} {
		t.Errorf("%s: maxima %#x, want %#x, %#x", name, r.growth, lMax, uMax)
	}
}

// BenchmarkBlockLU factors an order-1024 fp16 block and inverts its
// triangles, kept as the fp16 LU keeps them: the BlockLU on a number of
// thread blocks, against what it replaces (to fp32, cuSOLVER's sgetrf,
// the maxima, back to fp16, then for each triangle an Inverter, its
// transposed copy and its fp16 copy), all on one stream.
func BenchmarkBlockLU(b *testing.B) {
	const n = 1024
	d := device(b)
	words, _ := dominantHalf(b, n, n)
	src := gputest.Upload(b, d, words)
	a := gputest.Alloc(b, d, 2*n*n)
	out := BlockOut{InvU: gputest.Alloc(b, d, 2*n*n), InvL: gputest.Alloc(b, d, 2*n*n), KeptU: gputest.Alloc(b, d, 4*n*n),
		KeptL: gputest.Alloc(b, d, 4*n*n), LdKept: n, Growth: gputest.Alloc(b, d, 8)}
	fresh := func() {
		if err := d.CopyRect(a, n, src, n, n, n, 2, nil); err != nil {
			b.Fatal(err)
		}
	}
	for _, blocks := range []int{16, 32, 64, 132} {
		b.Run(fmt.Sprintf("block-lu/blocks=%d", blocks), func(b *testing.B) {
			f, err := NewBlockLU(d, n, blocks)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Free()
			T := n / 64
			f.marks = gputest.Alloc(b, d, 8*(3*T+13))
			for b.Loop() {
				fresh()
				if err := errors.Join(f.Factor(nil, a, n, out), d.Sync()); err != nil {
					b.Fatal(err)
				}
			}
			marks := make([]uint64, 3*T+13)
			if err := d.Download(marks, f.marks); err != nil {
				b.Fatal(err)
			}
			us := func(i int) float64 { return float64(marks[i]-marks[0]) / 1e3 }
			line := fmt.Sprintf("blocks=%d: P1(0) %.1f µs, phase 0 %.1f; block 0's path and its wait a step:", blocks, us(2*T+2), us(1))
			for k := range T - 1 {
				line += fmt.Sprintf(" %.1f+%.1f", us(2+2*k)-us(1+2*k), us(3+2*k)-us(2+2*k))
			}
			b.Logf("%s; the last step %.1f; total %.1f µs", line, us(2*T)-us(2*T-1), us(2*T))
			var in []string
			for i := 3*T + 3; i <= 3*T+9; i++ {
				in = append(in, fmt.Sprintf("%.2f", us(i)-us(i-1)))
			}
			b.Logf("P1(0) pieces (load, init, 4 quarters, store): %v; loop at %.0f MHz", in,
				float64(marks[3*T+12]-marks[3*T+11])/(us(3*T+8)-us(3*T+3)))
		})
	}
	b.Run("sgetrf+inverters", func(b *testing.B) {
		run := oldDiagonal(b, d, n, out)
		for b.Loop() {
			fresh()
			if err := errors.Join(run(a), d.Sync()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// oldDiagonal is the chain a BlockLU replaces, on the default stream.
func oldDiagonal(b *testing.B, d *gpu.Device, n int, out BlockOut) func(a *gpu.Buffer) error {
	la, err := d.Linalg()
	if err != nil {
		b.Fatal(err)
	}
	diag, inv32 := gputest.Alloc(b, d, 4*n*n), gputest.Alloc(b, d, 4*n*n)
	var lwork int
	if err := d.Do(func() error {
		if err := la.SolverOn(d, nil); err != nil {
			return err
		}
		lwork, err = cuda.GetrfBufferSize(la.Solver, false, n, n, diag.Ptr(), n)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	work, info := gputest.Alloc(b, d, 4*max(1, lwork)), gputest.Alloc(b, d, 4)
	var inverters [2]*Inverter
	for i, upper := range []bool{true, false} {
		if inverters[i], err = NewInverter(d, diag, inv32, n, upper); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(inverters[i].Free)
	}
	fn := map[string]*gpu.Function{}
	for _, name := range []string{"to_f32_f16", "from_f32_f16", "amax_tri_f32", "transpose_f32"} {
		fn[name] = gputest.Function(b, d, Kernels(), name)
	}
	grid := BlockGrid(n, n)
	return func(a *gpu.Buffer) error {
		errs := []error{fn["to_f32_f16"].Launch(grid, [3]uint32{256, 1, 1}, 0, nil, a, int64(n), diag, int64(n), int32(n), int32(n)),
			d.Do(func() error {
				return cuda.Getrf(la.Solver, false, n, n, diag.Ptr(), n, work.Ptr(), 0, info.Ptr())
			}),
			fn["amax_tri_f32"].Launch(AmaxGrid(n, n), [3]uint32{256, 1, 1}, 0, nil, diag, int64(n), int32(n), out.Growth),
			fn["from_f32_f16"].Launch(grid, [3]uint32{256, 1, 1}, 0, nil, diag, int64(n), a, int64(n), int32(n), int32(n))}
		for i, kept := range []*gpu.Buffer{out.KeptU, out.KeptL} {
			inv := []*gpu.Buffer{out.InvU, out.InvL}[i]
			errs = append(errs, inverters[i].Invert(nil, la.Blas),
				fn["transpose_f32"].Launch(TransposeGrid(n, n), [3]uint32{256, 1, 1}, 0, nil, inv32, int64(n), kept, int64(n), int32(n), int32(n)),
				fn["from_f32_f16"].Launch(grid, [3]uint32{256, 1, 1}, 0, nil, inv32, int64(n), inv, int64(n), int32(n), int32(n)))
		}
		return errors.Join(errs...)
	}
}
