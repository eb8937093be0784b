package dense

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Every index appears once a level: as a top, a partner, or unpaired.
func TestButterflyPairs(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 5, 7, 16, 17, 1000, 1023} {
		bf := newButterfly(n, 1)
		for l, p := range bf.pairs {
			seen := make([]int, n)
			for k := 0; k < len(p); k += 2 {
				seen[p[k]]++
				if p[k+1] >= 0 {
					seen[p[k+1]]++
				}
			}
			for i, c := range seen {
				if c != 1 {
					t.Fatalf("n=%d level %d: index %d appears %d times", n, l+1, i, c)
				}
			}
		}
	}
}

// M and N are orthogonal up to their diagonals in [e^-0.05, e^0.05]:
// ‖M·x‖₂/‖x‖₂ stays within e^∓0.1, so the transform keeps A's condition
// number within a factor e^0.4.
func TestButterflyConditioning(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{2, 9, 64, 301} {
		bf := newButterfly(n, uint64(n))
		for trial := 0; trial < 20; trial++ {
			x := make([]float64, n)
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			y, z := append([]float64(nil), x...), append([]float64(nil), x...)
			bf.mix(y)
			bf.unmixT(z)
			for _, v := range [][]float64{y, z} {
				if r := norm(v) / norm(x); r < math.Exp(-0.1)*(1-1e-14) || r > math.Exp(0.1)*(1+1e-14) {
					t.Fatalf("n=%d: ‖Mx‖/‖x‖ = %v", n, r)
				}
			}
		}
	}
}

// The transform the kernel mirrors and the vector operations Solve uses
// agree: x = Nᵀ·Ã⁻¹·M·b solves A·x = b, for odd and even orders.
func TestButterflySolvesA(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 8, 17, 33, 64} {
		rng := rand.New(rand.NewPCG(uint64(n), 9))
		a := make([]float64, n*n) // column-major
		b := make([]float64, n)
		for i := range a {
			a[i] = rng.Float64() - 0.5
		}
		for i := range b {
			b[i] = rng.Float64() - 0.5
		}
		bf := newButterfly(n, 7)
		at := append([]float64(nil), a...)
		bf.transform(at)
		z := append([]float64(nil), b...)
		bf.mix(z)
		if !gaussSolve(n, at, z) {
			t.Fatalf("n=%d: the transformed matrix is singular", n)
		}
		bf.unmixT(z)
		worst := 0.0
		for i := 0; i < n; i++ {
			r := b[i]
			for j := 0; j < n; j++ {
				r -= a[i+j*n] * z[j]
			}
			worst = max(worst, math.Abs(r))
		}
		if worst > 1e-12*float64(n) {
			t.Errorf("n=%d: residual %.3g", n, worst)
		}
	}
}

// The point of the transform: a matrix whose leading 8×8 block is zero
// (elimination without pivoting breaks down at once) has pivots of the
// size of its entries after it. A depth-2 butterfly mixes each index
// with three others only, so a permutation that maps those groups onto
// each other, such as the reversal, keeps a zero pivot: the GPU test
// checks that the factorization then says so.
func TestButterflyRemovesZeroPivots(t *testing.T) {
	const n = 64
	rng := rand.New(rand.NewPCG(5, 6))
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i >= 8 || j >= 8 {
				a[i+j*n] = rng.Float64() - 0.5
			}
		}
	}
	reversal := make([]float64, n*n)
	for i := 0; i < n; i++ {
		reversal[i+(n-1-i)*n] = 1
	}
	bf := newButterfly(n, butterflySeed)
	if p := smallestPivot(n, a); p != 0 {
		t.Fatalf("smallest pivot before the transform %v, want 0", p)
	}
	bf.transform(a)
	if p := smallestPivot(n, a); p < 1e-3 {
		t.Errorf("smallest pivot without pivoting after the transform %.3g: it did not randomise", p)
	}
	bf.transform(reversal)
	if p := smallestPivot(n, reversal); p != 0 {
		t.Errorf("reversal: smallest pivot after the transform %.3g, want 0", p)
	}
}

// smallestPivot is the smallest |pivot| of elimination without
// pivoting on a copy of the column-major a, 0 at the first zero.
func smallestPivot(n int, a []float64) float64 {
	lu := append([]float64(nil), a...)
	smallest := math.Inf(1)
	for k := 0; k < n; k++ {
		p := lu[k+k*n]
		smallest = min(smallest, math.Abs(p))
		if p == 0 {
			return 0
		}
		for i := k + 1; i < n; i++ {
			l := lu[i+k*n] / p
			for j := k + 1; j < n; j++ {
				lu[i+j*n] -= l * lu[k+j*n]
			}
		}
	}
	return smallest
}

func norm(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}

// gaussSolve overwrites b with the solution of the column-major a·x = b,
// by Gaussian elimination with partial pivoting (a is overwritten).
func gaussSolve(n int, a, b []float64) bool {
	for k := 0; k < n; k++ {
		p := k
		for i := k + 1; i < n; i++ {
			if math.Abs(a[i+k*n]) > math.Abs(a[p+k*n]) {
				p = i
			}
		}
		if a[p+k*n] == 0 {
			return false
		}
		for j := 0; j < n; j++ {
			a[k+j*n], a[p+j*n] = a[p+j*n], a[k+j*n]
		}
		b[k], b[p] = b[p], b[k]
		for i := k + 1; i < n; i++ {
			l := a[i+k*n] / a[k+k*n]
			for j := k; j < n; j++ {
				a[i+j*n] -= l * a[k+j*n]
			}
			b[i] -= l * b[k]
		}
	}
	for i := n - 1; i >= 0; i-- {
		s := b[i]
		for j := i + 1; j < n; j++ {
			s -= a[i+j*n] * b[j]
		}
		b[i] = s / a[i+i*n]
	}
	return true
}

// Why PivotAuto keeps the transform to the fp64 form: elimination
// without pivoting of a random matrix grows its entries by orders of
// magnitude even after it (go test ./gpu -run ButterflyGrowth -v logs
// the growth factors docs/perf/solve-h100.md cites).
func TestButterflyGrowth(t *testing.T) {
	for _, n := range []int{256, 1024} {
		rng := rand.New(rand.NewPCG(1, 2))
		a := make([]float64, n*n)
		for i := range a {
			a[i] = rng.Float64() - 0.5
		}
		newButterfly(n, butterflySeed).transform(a)
		maxA := 0.0
		for _, v := range a {
			maxA = max(maxA, math.Abs(v))
		}
		maxU, maxL := 0.0, 0.0
		for k := 0; k < n; k++ {
			p := a[k+k*n]
			for i := k + 1; i < n; i++ {
				a[i+k*n] /= p
				maxL = max(maxL, math.Abs(a[i+k*n]))
			}
			lk := a[k*n : k*n+n]
			for j := k + 1; j < n; j++ {
				u, col := a[k+j*n], a[j*n:j*n+n]
				for i := k + 1; i < n; i++ {
					col[i] -= lk[i] * u
				}
			}
		}
		for j := 0; j < n; j++ {
			for i := 0; i <= j; i++ {
				maxU = max(maxU, math.Abs(a[i+j*n]))
			}
		}
		growth := maxU / maxA
		t.Logf("n = %d: growth factor %.3g, largest multiplier %.3g", n, growth, maxL)
		if growth < 100 {
			t.Errorf("n = %d: growth %.3g: the transform made elimination without pivoting stable here, and PivotAuto could give it to the fp32 forms", n, growth)
		}
	}
}
