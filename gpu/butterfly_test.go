package gpu

import (
	"math"
	"math/rand/v2"
	"slices"
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

// The preconditioner's M after the gather: P·M·x = (P·M·Pᵀ)·(P·x), the
// levels of P·M·Pᵀ being gatheredLevel's.
func TestGatheredLevels(t *testing.T) {
	for _, n := range []int{1, 2, 7, 37, 64} {
		rng := rand.New(rand.NewPCG(uint64(n), 3))
		perm := make([]int32, n)
		for i, p := range rng.Perm(n) {
			perm[i] = int32(p)
		}
		bf := newButterfly(n, 9)
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.Float64() - 0.5
		}
		mixed := slices.Clone(x)
		bf.mix(mixed)
		gathered := &butterfly{n: n}
		for l := range butterflyDepth {
			gathered.pairs[l], gathered.r[l] = gatheredLevel(perm, bf.pairs[l], bf.r[l])
		}
		px := make([]float64, n)
		for k, i := range perm {
			px[k] = x[i]
		}
		gathered.mix(px)
		for k, i := range perm {
			if px[k] != mixed[i] {
				t.Fatalf("n=%d: (P·M·x)[%d] = %v after the gather, %v before", n, k, px[k], mixed[i])
			}
		}
	}
}

// Why PivotAuto keeps the transform to the fp64 form: elimination
// without pivoting of a random matrix grows its entries by orders of
// magnitude even after it (go test ./gpu -run ButterflyGrowth -v logs
// the growth factors docs/perf/solve-h100.md cites).
func TestButterflyGrowth(t *testing.T) {
	for _, n := range []int{256, 1024} {
		a := randomColumnMajor(n)
		newButterfly(n, butterflySeed).transform(a)
		growth, maxL := eliminateLocally(a, n, 1)
		t.Logf("n = %d: growth factor %.3g, largest multiplier %.3g", n, growth, maxL)
		if growth < 100 {
			t.Errorf("n = %d: growth %.3g: the transform made elimination without pivoting stable here, and PivotAuto could give it to the fp32 forms", n, growth)
		}
	}
}

// Local pivoting's growth on a random matrix is far above partial
// pivoting's, and the butterfly transform before it brings it down: why
// PivotButterflyLocal exists (go test ./gpu -run LocalPivotingGrowth -v).
func TestLocalPivotingGrowth(t *testing.T) {
	const n, nb = 2048, 128
	a := randomColumnMajor(n)
	partial, _ := eliminateLocally(slices.Clone(a), n, n)
	local, _ := eliminateLocally(slices.Clone(a), n, nb)
	newButterfly(n, butterflySeed).transform(a)
	transformed, maxL := eliminateLocally(a, n, nb)
	t.Logf("n = %d, nb = %d: growth factor %.3g partial, %.3g local, %.3g local after the transform (largest multiplier %.3g)", n, nb, partial, local, transformed, maxL)
	if !(partial < 200 && local > 10*partial && transformed < local/4) {
		t.Errorf("growth %.3g partial, %.3g local, %.3g local after the transform: want local > 10× partial and the transform to cut it 4-fold", partial, local, transformed)
	}
}

// randomColumnMajor is an n×n matrix with entries uniform in [−½, ½).
func randomColumnMajor(n int) []float64 {
	rng := rand.New(rand.NewPCG(1, 2))
	a := make([]float64, n*n)
	for i := range a {
		a[i] = rng.Float64() - 0.5
	}
	return a
}

// eliminateLocally runs Gaussian elimination in fp64 on the column-major
// a, each pivot the largest candidate among the rows of its window of
// the diagonal (window 1: no pivoting, n: partial pivoting, nb: local
// pivoting), and returns the growth factor max|u_ij| / max|a_ij| and the
// largest multiplier.
func eliminateLocally(a []float64, n, window int) (growth, maxL float64) {
	maxA := 0.0
	for _, v := range a {
		maxA = max(maxA, math.Abs(v))
	}
	maxU := 0.0
	for k := 0; k < n; k++ {
		p := k
		for i := k + 1; i < min((k/window+1)*window, n); i++ {
			if math.Abs(a[i+k*n]) > math.Abs(a[p+k*n]) {
				p = i
			}
		}
		for j := 0; j < n && p != k; j++ {
			a[k+j*n], a[p+j*n] = a[p+j*n], a[k+j*n]
		}
		pivot := a[k+k*n]
		maxU = max(maxU, math.Abs(pivot))
		lk := a[k*n : k*n+n]
		for i := k + 1; i < n; i++ {
			lk[i] /= pivot
			maxL = max(maxL, math.Abs(lk[i]))
		}
		for j := k + 1; j < n; j++ {
			u, col := a[k+j*n], a[j*n:j*n+n]
			maxU = max(maxU, math.Abs(u))
			for i := k + 1; i < n; i++ {
				col[i] -= lk[i] * u
			}
		}
	}
	return maxU / maxA, maxL
}
