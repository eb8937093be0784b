// Package matgen defines the random test matrices that every engine
// draws, so that a kind's name and seed give one A on the CPU engines
// and on the GPU.
//
// The counter kinds (uniform, centered, normal, diagdom, hpl-mxp,
// fasi-higham) are drawn entrywise from a counter-based hash of (seed,
// index), the index of element (i, j) of an n×n matrix being i + j·n
// (column-major, as the GPU keeps A), or from a formula. The formulas
// here are the Go mirror of the GPU's generator kernels
// (gpu/dense/kernels/lu.cu: mix, unit, fill_uniform, fill_normal,
// dominate_rows, hpl_mxp_rows, fasi_higham), written with the same IEEE
// operations in the same order, so the two engines agree bit for bit:
//
//	mix(z)      splitmix64's finaliser
//	unit(s, k)  ((mix(s·φ + mix(k + c)) >> 11) + 1)·2⁻⁵³, uniform in (0, 1]
//	uniform     unit(s, k)
//	centered    unit(s, k) − 0.5
//	normal      √(−2·ln u₁)·cos(2π·u₂), u₁ = unit(s, 2k), u₂ = unit(s, 2k+1)
//	diagdom     centered, then a_ii = ±(1 + Σ_{j≠i} |a_ij|), summed j = 0, 1, …
//	hpl-mxp     centered, then a_ii = S·Σ_{j≠i} |a_ij|, summed from 0, j = 0, 1, …
//	fasi-higham with p = fl(α·β), 0-based i, j: −α + j·p (i > j),
//	            1 + i·p (i = j), −β + i·p (i < j), each one FMA; scaled
//	            fl(fl(d1_i·a_ij)·d2_j)
//
// hpl-mxp[:scale=S] is HPL-MxP's reference generator (the hpl-ai code's
// matgen.c: entries uniform in (−0.5, 0.5), each diagonal entry the sum
// of its row's other magnitudes) with S = 1, its default: weakly
// diagonally dominant, κ∞ about 5 (n = 50 to 500). S < 1 is the "mild
// scaling of the diagonal" the HPL-MxP rules ask of submissions (no
// longer dominant; κ∞ about 10 for S = 0.5);
// S > 1 is strictly dominant. With S = 1 it is gpu/dist's hpl-mxp bit for
// bit on grids of one column (dist adds the row sums across the grid's
// columns, in another order, elsewhere).
//
// fasi-higham[:kappa=K][,scale=D] is the matrix of Fasi and Higham,
// "Matrices with tunable infinity-norm condition number and no need for
// pivoting in LU factorization", SIAM J. Matrix Anal. Appl. 42(1), 2021
// (preprint: MIMS EPrint 2020.17): A = L·U with L unit lower
// triangular, −α below the diagonal, and U unit upper triangular, −β
// above, so elimination without pivoting recovers L and U. Here α = β,
// found by bisection (FasiHighamAlpha) so that κ∞(A) = K (default
// DefaultKappa); FasiHighamCond computes κ∞ in O(n) from L⁻¹ and U⁻¹,
// whose entries are all nonnegative. With D > 0, A becomes D₁·A·D₂ with
// random diagonal D₁, D₂ (entries 10^(D·(u−½)), NewFasiHigham), which
// keeps the no-pivoting property but not κ∞. α and the scalings are
// computed on the host and passed to the device: no power function has to
// agree between Go and CUDA.
//
// Box–Muller's ln and cos are Log and Cos2Pi here, polynomials evaluated
// with fused multiply-adds, not a math library's: libraries round
// differently (CUDA's log and cospi are not Go's math.Log and math.Cos).
//
// randsvd is a kind of every engine too, with the same singular values
// (Sigmas), but not the same A: the CPU (package experiment) builds U and
// V from Householder reflectors drawn with math/rand, the GPU from the QR
// factorizations of Gaussian matrices drawn on the device.
package matgen

import (
	"hash/fnv"
	"math"
	"runtime"
	"sync"
)

// A Kind is one family of test matrices.
type Kind struct {
	Name    string // as typed
	Doc     string // one line
	Params  string // the options it takes, "" for none
	Counter bool   // drawn by Generate's formulas: the same A on every engine
}

// The randsvd parameters' values.
const (
	// DefaultKappa is randsvd's κ₂ and fasi-higham's κ∞ when none is
	// given. κ·u is then about 500 for a half-precision factorization, out
	// of reach of plain LU-based refinement (which needs κ·u < 1), and
	// 0.06 for a single-precision one.
	DefaultKappa = 1e6
	// Geometric spreads σ_i = κ^(−(i−1)/(n−1)) evenly on a log scale.
	Geometric = "geometric"
	// OneSmall has σ = 1, …, 1, 1/κ: one tiny singular value, so that the
	// error of a solve lies mostly along one direction.
	OneSmall = "one-small"
)

// Kinds lists the kinds, counter kinds first.
func Kinds() []Kind {
	return []Kind{
		{"uniform", "entries uniform in (0,1], as the uniform distribution", "", true},
		{"centered", "entries uniform in (-0.5,0.5], as the centered distribution", "", true},
		{"normal", "entries standard normal", "", true},
		{"diagdom", "centered off the diagonal, a_ii = ±(1 + Σ_j≠i |a_ij|): strictly row diagonally dominant, safe without pivoting", "", true},
		{"hpl-mxp", "HPL-MxP's generator: centered, a_ii = S·Σ_j≠i |a_ij|: hpl-mxp[:scale=S], S = 1 (default) weakly dominant, S < 1 a milder diagonal",
			"scale=S", true},
		{"fasi-higham", "L·U, unit triangular L and U with −α below and above the diagonal (Fasi & Higham 2021): no pivoting needed; fasi-higham[:kappa=K][,scale=D], κ∞ = K (default 1e6), D > 0: D₁·A·D₂ with entries 10^(D(u−½))",
			"kappa=K,scale=D", true},
		{"randsvd", "U·diag(σ)·Vᵀ with random orthogonal U, V, σ_1 = 1: randsvd[:kappa=K][,mode=geometric|one-small], κ_2 = K (default 1e6, geometric)",
			"kappa=K,mode=" + Geometric + "|" + OneSmall, false},
	}
}

// CounterKinds are the names of the kinds Generate draws.
func CounterKinds() []string {
	var names []string
	for _, k := range Kinds() {
		if k.Counter {
			names = append(names, k.Name)
		}
	}
	return names
}

// Seed derives the seed of a stream from a seed and a key (FNV-1a of the
// key, mixed with the seed), so that one seed gives unrelated matrices
// under different keys; package experiment draws its matrices so.
func Seed(seed uint64, key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return Mix(seed ^ Mix(h.Sum64()))
}

// Generate returns the n×n row-major matrix of a counter kind, with its
// default options, drawn with seed: Spec{Kind: kind}.Generate(n, seed).
func Generate(kind string, n int, seed uint64) ([]float64, error) {
	return Spec{Kind: kind}.Generate(n, seed)
}

// Generate returns the n×n row-major matrix of the spec drawn with seed:
// on the GPU, dense.Solver.GenerateSpec(n, s, seed) draws the same matrix
// (column-major there). n ≤ 0 gives an empty slice.
func (s Spec) Generate(n int, seed uint64) ([]float64, error) {
	s = s.Normalized()
	if err := s.Check(); err != nil {
		return nil, err
	}
	if n <= 0 {
		return []float64{}, nil
	}
	var entry func(i, j int) float64
	counter := func(f func(k uint64) float64) func(i, j int) float64 {
		return func(i, j int) float64 { return f(uint64(i) + uint64(j)*uint64(n)) }
	}
	switch s.Kind {
	case "uniform":
		entry = counter(func(k uint64) float64 { return Unit(seed, k) })
	case "centered", "diagdom", "hpl-mxp":
		entry = counter(func(k uint64) float64 { return Unit(seed, k) - 0.5 })
	case "normal":
		entry = counter(func(k uint64) float64 { return Normal(seed, k) })
	case "fasi-higham":
		entry = NewFasiHigham(s, n, seed).Entry
	}
	a := make([]float64, n*n)
	rows(n, func(i int) {
		row := a[i*n : (i+1)*n]
		for j := range row {
			row[j] = entry(i, j)
		}
		switch s.Kind {
		case "diagdom":
			dominate(row, i)
		case "hpl-mxp":
			hplDiagonal(row, i, s.Scale)
		}
	})
	return a, nil
}

// dominate sets row[i] = ±(1 + Σ_{j≠i} |row[j]|), keeping its sign, the
// sum taken in the order of j as the device's dominate_rows does.
func dominate(row []float64, i int) {
	sum := 1.0
	for j, v := range row {
		if j != i {
			sum += math.Abs(v)
		}
	}
	row[i] = math.Copysign(sum, row[i])
}

// rows runs f on every row, split over GOMAXPROCS goroutines: the
// entries do not depend on the split.
func rows(n int, f func(i int)) {
	g := min(runtime.GOMAXPROCS(0), n)
	if n*n < 1<<16 || g <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	for t := range g {
		wg.Go(func() {
			for i := t * n / g; i < (t+1)*n/g; i++ {
				f(i)
			}
		})
	}
	wg.Wait()
}

// Sigmas returns randsvd's singular values for order n, σ_1 = 1 ≥ … ≥
// σ_n = 1/κ, geometric or one-small as mode says; both engines draw
// randsvd from them. A 1×1 matrix has κ = 1 whatever kappa is.
func Sigmas(n int, kappa float64, mode string) []float64 {
	sigma := make([]float64, n)
	for i := range sigma {
		sigma[i] = 1
		if mode == Geometric && i > 0 {
			sigma[i] = math.Pow(kappa, -float64(i)/float64(n-1))
		}
	}
	if n > 1 {
		sigma[n-1] = 1 / kappa
	}
	return sigma
}
