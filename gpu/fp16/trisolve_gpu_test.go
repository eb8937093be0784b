package fp16

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
	"github.com/mwmm/mwmm/gpu/internal/gputest"
)

// halfLU rounds an n×n LU (column-major) to fp16: its words and their
// values.
func halfLU(t *testing.T, lu []float32) ([]uint16, []float64) {
	words, vals := make([]uint16, len(lu)), make([]float64, len(lu))
	f := format.Binary16
	for i, v := range lu {
		vals[i] = f.Round(float64(v), format.NearestEven)
		w, err := f.Encode(vals[i])
		if err != nil {
			t.Fatal(err)
		}
		words[i] = uint16(w)
	}
	return words, vals
}

// blockInverses are the fp32 inverses (column-major, nb×nb each) of the
// diagonal blocks' unit lower triangles, then of their upper ones, of the
// n×n LU a, inverted in fp64 by substitution.
func blockInverses(a []float64, n, nb int) []float32 {
	steps := (n + nb - 1) / nb
	out := make([]float32, 2*steps*nb*nb)
	for k := range steps {
		j0, w := k*nb, min(nb, n-k*nb)
		for upper := range 2 {
			inv := out[(upper*steps+k)*nb*nb:]
			for c := range w { // column c of the inverse: T·y = e_c
				y := make([]float64, w)
				y[c] = 1
				if upper == 0 {
					for i := range w {
						for l := range i {
							y[i] -= a[j0+i+(j0+l)*n] * y[l]
						}
					}
				} else {
					for i := w - 1; i >= 0; i-- {
						for l := i + 1; l < w; l++ {
							y[i] -= a[j0+i+(j0+l)*n] * y[l]
						}
						y[i] /= a[j0+i+(j0+i)*n]
					}
				}
				for i := range w {
					inv[i+c*nb] = float32(y[i])
				}
			}
		}
	}
	return out
}

// hostSolve is U⁻¹L⁻¹·b in fp64 for the n×n LU a.
func hostSolve(a []float64, n int, b []float64) []float64 {
	x := append([]float64(nil), b...)
	for j := range n {
		for i := j + 1; i < n; i++ {
			x[i] -= a[i+j*n] * x[j]
		}
	}
	for j := n - 1; j >= 0; j-- {
		x[j] /= a[j+j*n]
		for i := range j {
			x[i] -= a[i+j*n] * x[j]
		}
	}
	return x
}

// The TriSolver's two sweeps agree with an fp64 solve with the same fp16
// factors to within fp32's error on well-conditioned triangles, with
// the matrix whole (aligned or not for the kernel's wide loads, n a
// multiple of nb or not, one block or several) and in parts over grids of
// 2 and 3 rows, 2 columns, 2×2, the inverses transposed on the device by
// transpose_f32.
func TestTriSolver(t *testing.T) {
	d := device(t)
	for _, c := range []struct{ n, nb, P, Q int }{{1024, 256, 1, 1}, {777, 128, 1, 1}, {1000, 64, 2, 1}, {900, 128, 3, 1},
		{1000, 128, 1, 2}, {1200, 256, 2, 2}, {600, 2048, 1, 1}, {5, 64, 1, 1}} {
		t.Run(fmt.Sprintf("n=%d,nb=%d,%dx%d", c.n, c.nb, c.P, c.Q), func(t *testing.T) {
			words, vals := halfLU(t, dominantLU(c.n))
			b := make([]float64, c.n)
			for i := range b {
				b[i] = math.Cos(float64(i) * 0.37)
			}
			want := hostSolve(vals, c.n, b)
			got := triSolve(t, d, words, blockInverses(vals, c.n, c.nb), c.n, c.nb, c.P, c.Q, b)
			errMax, xMax := 0.0, 0.0
			for i := range want {
				errMax, xMax = max(errMax, math.Abs(got[i]-want[i])), max(xMax, math.Abs(want[i]))
			}
			if tol := 4 * float64(c.n) * 0x1p-24; errMax > tol*xMax || math.IsNaN(errMax) {
				t.Errorf("max error %.3g against %.3g·max|x| = %.3g", errMax, tol, tol*xMax)
			}
		})
	}
}

// triSolve runs both sweeps on d with the LU's rows dealt in blocks of
// nb to rows parts (block-cyclic), each part column-major.
func triSolve(t *testing.T, d *gpu.Device, words []uint16, inv []float32, n, nb, P, Q int, b []float64) []float64 {
	local := func(p, procs, g int) int { // of the first g rows (columns), those of grid row (column) p
		c := 0
		for i := range g {
			if i/nb%procs == p {
				c++
			}
		}
		return c
	}
	parts := make([]*gpu.Buffer, P*Q)
	for p := range P {
		for q := range Q {
			host := make([]uint16, 0, local(p, P, n)*local(q, Q, n))
			for j := range n {
				for i := range n {
					if i/nb%P == p && j/nb%Q == q {
						host = append(host, words[i+j*n])
					}
				}
			}
			parts[p+q*P] = gputest.Upload(t, d, host)
		}
	}
	raw, kept := gputest.Upload(t, d, inv), gputest.Upload(t, d, make([]float32, len(inv)))
	transpose := gputest.Function(t, d, Kernels(), "transpose_f32")
	for s := 0; s < len(inv)/(nb*nb); s++ {
		if err := transpose.Launch(TransposeGrid(nb, nb), [3]uint32{256, 1, 1}, 0, nil, raw.View(4*s*nb*nb), int64(nb), kept.View(4*s*nb*nb), int64(nb), int32(nb), int32(nb)); err != nil {
			t.Fatal(err)
		}
	}
	x32 := make([]float32, n)
	for i, v := range b {
		x32[i] = float32(v)
	}
	x := gputest.Upload(t, d, x32)
	steps := (n + nb - 1) / nb
	ts, err := NewTriSolver(d, TriFactors{N: n, NB: nb, P: P, Q: Q,
		Part: func(p, q int) *gpu.Buffer { return parts[p+q*P] },
		Rows: func(p int) int { return local(p, P, n) },
		Inverse: func(k int, upper bool) *gpu.Buffer {
			if upper {
				k += steps
			}
			return kept.View(4 * k * nb * nb)
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Free()
	q := d.NewLaunchQueue()
	if err := errors.Join(ts.Solve(q, x), q.Flush()); err != nil {
		t.Fatal(err)
	}
	if err := d.Download(x32, x); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, n)
	for i, v := range x32 {
		out[i] = float64(v)
	}
	return out
}

// BenchmarkTriSolver times both sweeps of an order-n solve in blocks of
// 1024 (the data is zeros: only the time counts) by the TriSolver with
// fp16 factors, and by cuBLAS sgemv with fp32 factors and untransposed
// inverses (gpu/dense's solve before the TriSolver). GB/s: the factors'
// bytes over the time.
func BenchmarkTriSolver(b *testing.B) {
	d := device(b)
	la, err := d.Linalg()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{16384, 32768, 65536} {
		nb, steps := 1024, n/1024
		w, err1 := d.Alloc(4 * n * n) // fp32 factors; the first half fp16's
		inv, err2 := d.Alloc(4 * 2 * steps * nb * nb)
		x, err3 := d.Alloc(4 * 2 * n)
		if err := errors.Join(err1, err2, err3); err != nil {
			b.Fatal(err)
		}
		if err := errors.Join(d.Memset32(w, 0), d.Memset32(inv, 0), d.Memset32(x, 0)); err != nil {
			b.Fatal(err)
		}
		at := func(slot int) *gpu.Buffer { return inv.View(4 * slot * nb * nb) }
		ts, err := NewTriSolver(d, TriFactors{N: n, NB: nb, P: 1, Q: 1,
			Part: func(p, q int) *gpu.Buffer { return w }, Rows: func(int) int { return n },
			Inverse: func(k int, upper bool) *gpu.Buffer {
				if upper {
					k += steps
				}
				return at(k)
			}})
		if err != nil {
			b.Fatal(err)
		}
		run := func(b *testing.B, bytes int, queue func(q *gpu.LaunchQueue) error) {
			for b.Loop() {
				q := d.NewLaunchQueue()
				if err := errors.Join(queue(q), q.Flush(), d.Sync()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(bytes)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		}
		b.Run(fmt.Sprint("trisolver/n=", n), func(b *testing.B) {
			run(b, n*n, func(q *gpu.LaunchQueue) error { return ts.Solve(q, x) })
		})
		b.Run(fmt.Sprint("sgemv-f32/n=", n), func(b *testing.B) {
			run(b, 2*n*n, func(q *gpu.LaunchQueue) error {
				q.Do(func() error { return sgemvSolve(la.Blas, w, at, x, n, nb) })
				return nil
			})
		})
		ts.Free()
		gpu.FreeAll(w, inv, x)
	}
}

// sgemvSolve is the blocked solve by cuBLAS sgemv: each block's inverse,
// then its column's product, x in place, y the block's solution.
func sgemvSolve(h uintptr, lu *gpu.Buffer, inv func(int) *gpu.Buffer, xy *gpu.Buffer, n, nb int) error {
	steps := n / nb
	if err := cuda.CublasSetStream(h, 0); err != nil {
		return err
	}
	f32 := func(b *gpu.Buffer, i int) uintptr { return b.Ptr() + uintptr(4*i) }
	x, y := f32(xy, 0), f32(xy, n)
	for k := range steps {
		j := k * nb
		if err := cuda.Sgemv(h, cuda.OpN, nb, nb, 1, inv(k).Ptr(), nb, x+uintptr(4*j), 0, y+uintptr(4*j)); err != nil {
			return err
		}
		if rest := n - j - nb; rest > 0 {
			if err := cuda.Sgemv(h, cuda.OpN, rest, nb, -1, f32(lu, j+nb+j*n), n, y+uintptr(4*j), 1, x+uintptr(4*(j+nb))); err != nil {
				return err
			}
		}
	}
	for k := steps - 1; k >= 0; k-- {
		j := k * nb
		if err := cuda.Sgemv(h, cuda.OpN, nb, nb, 1, inv(steps+k).Ptr(), nb, y+uintptr(4*j), 0, x+uintptr(4*j)); err != nil {
			return err
		}
		if j > 0 {
			if err := cuda.Sgemv(h, cuda.OpN, j, nb, -1, f32(lu, j*n), n, x+uintptr(4*j), 1, y); err != nil {
				return err
			}
		}
	}
	return nil
}
