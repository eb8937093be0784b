package fp16

import (
	"math"
	"testing"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
	"github.com/mwmm/mwmm/gpu/internal/gputest"
)

// device is the tests' GPU; it skips without one.
func device(tb testing.TB) *gpu.Device { return gputest.Device(tb) }

// dominantLU is the LU without pivoting (column-major, fp32) of an n×n
// diagonally dominant matrix, factored in fp64: well-conditioned
// triangles, as the LU's diagonal blocks have.
func dominantLU(n int) []float32 {
	a := make([]float64, n*n)
	for j := range n {
		for i := range n {
			a[i+j*n] = math.Sin(float64(i*n+j)*0.61) / 2
		}
	}
	for i := range n {
		s := 0.0
		for j := range n {
			s += math.Abs(a[i+j*n])
		}
		a[i+i*n] = s * math.Copysign(1, math.Cos(float64(i)))
	}
	for k := range n {
		for i := k + 1; i < n; i++ {
			a[i+k*n] /= a[k+k*n]
		}
		for j := k + 1; j < n; j++ {
			for i := k + 1; i < n; i++ {
				a[i+j*n] -= a[i+k*n] * a[k+j*n]
			}
		}
	}
	out := make([]float32, n*n)
	for i, v := range a {
		out[i] = float32(v)
	}
	return out
}

// The Inverter's inverse X of each triangle T of an LU satisfies
// |T·X − I| ≤ 2n·u₃₂·|T||X| elementwise, and its other triangle is zero,
// at every order it takes (one leaf, one level, four levels), even where
// x held garbage.
func TestInverter(t *testing.T) {
	d := device(t)
	la, err := d.Linalg()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{64, 128, 1024} {
		lu := dominantLU(n)
		tb := gputest.Upload(t, d, lu)
		for _, upper := range []bool{false, true} {
			garbage := make([]float32, n*n)
			for i := range garbage {
				garbage[i] = float32(i%7) - 3
			}
			xb := gputest.Upload(t, d, garbage)
			v, err := NewInverter(d, tb, xb, n, upper)
			if err != nil {
				t.Fatal(err)
			}
			if err := v.Invert(nil, la.Blas); err != nil {
				t.Fatal(err)
			}
			x := make([]float32, n*n)
			if err := d.Download(x, xb); err != nil {
				t.Fatal(err)
			}
			v.Free()
			checkInverse(t, n, lu, x, upper)
		}
	}
	if _, err := NewInverter(d, gputest.Alloc(t, d, 4*96*96), gputest.Alloc(t, d, 4*96*96), 96, false); err == nil {
		t.Error("an Inverter of order 96 was made")
	}
}

// checkInverse holds x to the inverse of lu's triangle (upper, or unit
// lower).
func checkInverse(t *testing.T, n int, lu, x []float32, upper bool) {
	t.Helper()
	tri := func(i, j int) float64 {
		switch {
		case upper && i <= j, !upper && i > j:
			return float64(lu[i+j*n])
		case !upper && i == j:
			return 1
		}
		return 0
	}
	worst := 0.0
	for j := range n {
		for i := range n {
			if (upper && i > j || !upper && i < j) && x[i+j*n] != 0 {
				t.Fatalf("n=%d upper=%v: x(%d,%d) = %g in the other triangle", n, upper, i, j, x[i+j*n])
			}
			var s, abs float64
			for k := range n {
				p := tri(i, k) * float64(x[k+j*n])
				s, abs = s+p, abs+math.Abs(p)
			}
			if i == j {
				s--
			}
			if r := math.Abs(s) / (2 * float64(n) * 0x1p-24 * abs); r > worst {
				worst = r
			}
		}
	}
	if worst > 1 {
		t.Errorf("n=%d upper=%v: |T·X − I| reaches %.3g of its bound", n, upper, worst)
	}
}

// BenchmarkInverter inverts both triangles of an order-1024 LU, the
// Inverter against cuBLAS strsm on the identity (what the fp16 LU did).
func BenchmarkInverter(b *testing.B) {
	const n = 1024
	d := device(b)
	la, err := d.Linalg()
	if err != nil {
		b.Fatal(err)
	}
	tb := gputest.Upload(b, d, dominantLU(n))
	xb := gputest.Alloc(b, d, 4*n*n)
	eye := gputest.Function(b, d, Kernels(), "eye_f32")
	b.Run("inverter", func(b *testing.B) {
		var vs []*Inverter
		for _, upper := range []bool{false, true} {
			v, err := NewInverter(d, tb, xb, n, upper)
			if err != nil {
				b.Fatal(err)
			}
			defer v.Free()
			vs = append(vs, v)
		}
		for b.Loop() {
			for _, v := range vs {
				if err := v.Invert(nil, la.Blas); err != nil {
					b.Fatal(err)
				}
			}
			if err := d.Sync(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("strsm", func(b *testing.B) {
		for b.Loop() {
			for _, upper := range []bool{false, true} {
				if err := eye.Launch(gpu.StrideGrid(n*n), [3]uint32{256, 1, 1}, 0, nil, xb, int64(n), int32(n)); err != nil {
					b.Fatal(err)
				}
				fill, diag := cuda.FillLower, cuda.DiagUnit
				if upper {
					fill, diag = cuda.FillUpper, cuda.DiagNonUnit
				}
				if err := d.Do(func() error {
					if err := cuda.CublasSetStream(la.Blas, 0); err != nil {
						return err
					}
					return cuda.Strsm(la.Blas, cuda.SideLeft, fill, cuda.OpN, diag, n, n, 1, tb.Ptr(), n, xb.Ptr(), n)
				}); err != nil {
					b.Fatal(err)
				}
			}
			if err := d.Sync(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
