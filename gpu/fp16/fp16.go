// Package fp16 holds what an LU factorization kept in fp16 needs, on one
// GPU (package gpu/dense) or several (gpu/dist): the kernels that scale an
// fp64 A by powers of two into fp16's range and convert blocks between
// fp16 and fp32, the growth check that says when elimination without
// pivoting has become unsafe, the triangular solves with the factors
// (TriSolver, Inverter), and the vector kernels of refinement that keeps
// its vectors on the device (residuals, their norms, the scalings around
// the solves).
//
// # The scaling
//
// Every row of A is scaled by a power of two that brings its largest
// entry to [1, 2), then every column so that its largest lies in
// [2^Exponent, 2^(Exponent+1)): R·A·C, exact in fp64, rounded once to
// fp16. Powers of two keep the scaling exact, and the factors of R·A·C are
// R·L·R⁻¹ and U·C up to that rounding, so a solve scales b by R and the
// answer by C.
//
// # The growth check
//
// While the factorization runs, each panel's largest multiplier |l_ij|
// and largest |u_ij| are raised into device words (the kernels amax_f16
// and amax_tri_f32); Verdict judges them against MaxMultiplier and
// MaxGrowth. A matrix that fails is reported as a *GrowthError, which
// wraps ErrNeedsPivoting: the caller factors it again with pivoting.
package fp16

import (
	"embed"
	"errors"
	"fmt"
	"math"

	"github.com/mwmm/mwmm/gpu"
)

//go:embed kernels/*.cu
var kernelFS embed.FS

// Kernels is the CUDA source of the kernels (kernels/half.cu), compiled
// at run time by gpu.Device.Module.
func Kernels() gpu.Source { return gpu.MustSource(kernelFS, "half") }

// BlockGrid is the grid of the kernels that map an m×n block (the
// conversions and copies, at 256 threads a block): blocks take rows of a
// column, up to 64 of them, and columns up to 65535.
func BlockGrid(m, n int) [3]uint32 {
	return [3]uint32{uint32(max(1, min((m+255)/256, 64))), uint32(max(1, min(n, 65535))), 1}
}

// AmaxGrid is the amax kernels' grid: at most 2048 blocks, each raising
// the maximum once (thousands of blocks raising one word serialize).
func AmaxGrid(m, n int) [3]uint32 {
	return [3]uint32{uint32(max(1, min((m+255)/256, 8))), uint32(max(1, min(n, 256))), 1}
}

// Exponent places each column of the scaled A in [2^8, 2^9): above
// fp16's subnormals (2^-14) by 22 binades, below its largest value
// (65504) by 7, the room the growth check leaves U.
const Exponent = 8

// The growth check's limits: elimination without pivoting is taken as
// safe while every multiplier |l_ij| stays at most MaxMultiplier and every
// |u_ij| at most MaxGrowth times A's largest entry (both after the
// scaling). Partial pivoting keeps |l_ij| ≤ 1; a random matrix eliminated
// without pivoting shows multipliers of 10^3 and more in its first panel
// (measured: 2·10^3 to 6·10^4 at n = 8192–32768), a diagonally dominant
// one none above 1. The limits are a heuristic, not a bound: the factors'
// error grows with max|L|·max|U|/max|A| (at most 2^12 here), and
// refinement, not the check, says whether fp16 factors of a matrix that
// passes are good enough. They also keep U below fp16's overflow
// (2^9·2^6 < 65504).
const (
	MaxMultiplier = 64
	MaxGrowth     = 64
)

// ErrNeedsPivoting is wrapped by the error of a factorization without
// pivoting whose growth check failed: factor again with partial pivoting.
var ErrNeedsPivoting = errors.New("the matrix needs pivoting")

// A GrowthError says where and by how much an LU without pivoting
// failed its growth check.
type GrowthError struct {
	Column     int     // the first column of the first panel that failed
	Multiplier float64 // the largest |l_ij| up to that panel
	Growth     float64 // the largest |u_ij| over the largest |a_ij|
}

func (e *GrowthError) Error() string {
	return fmt.Sprintf("%v: without pivoting, the panel at column %d has multipliers up to %.3g and |U| up to %.3g·max|A| (the check allows %d and %d)",
		ErrNeedsPivoting, e.Column+1, e.Multiplier, e.Growth, MaxMultiplier, MaxGrowth)
}

func (e *GrowthError) Unwrap() error { return ErrNeedsPivoting }

// Verdict judges the steps' maxima (max |L|, max |U| per step of nb
// columns, after maxA, A's largest |entry|): the first step past a limit,
// or with a NaN or an Inf, as a GrowthError; nil when none is.
func Verdict(maxA float32, steps []float32, nb int) *GrowthError {
	if maxA == 0 {
		return nil // A = 0: the factors' check says it is singular
	}
	bad := func(x float32) bool { return x != x || math.IsInf(float64(x), 0) }
	var l, u float64
	for k := 0; 2*k+1 < len(steps); k++ {
		l, u = max(l, float64(steps[2*k])), max(u, float64(steps[2*k+1]))
		g := u / float64(maxA)
		if bad(steps[2*k]) || bad(steps[2*k+1]) || l > MaxMultiplier || !(g <= MaxGrowth) {
			return &GrowthError{Column: k * nb, Multiplier: l, Growth: g}
		}
	}
	return nil
}

// Products runs an LU's fp16 products (D = α·A·B + β·C, fp16 words,
// fp32 accumulation) on cuBLASLt, each kind of product on the algorithm
// its first one chose: the updates shrink step by step, and a heuristic
// per shape costs more than a small product.
type Products struct {
	lt    *gpu.Lt
	algos map[string]*gpu.Algorithm
}

// NewProducts returns the products of lt's device.
func NewProducts(lt *gpu.Lt) *Products { return &Products{lt: lt, algos: map[string]*gpu.Algorithm{}} }

// Run runs spec in fp16 (its types and compute type set here) as kind.
func (p *Products) Run(kind string, spec gpu.MatmulSpec) error {
	spec.TypeA, spec.TypeB, spec.TypeC, spec.TypeD = gpu.F16, gpu.F16, gpu.F16, gpu.F16
	spec.Compute = gpu.Compute32F
	if spec.Workspace != nil {
		kind += "+workspace" // an algorithm may need it
	}
	spec.Algorithm = p.algos[kind]
	used, err := p.lt.MatmulAlgo(spec)
	if err != nil && spec.Algorithm != nil {
		spec.Algorithm = nil
		used, err = p.lt.MatmulAlgo(spec)
	}
	if err == nil && p.algos[kind] == nil {
		p.algos[kind] = &used
	}
	return err
}
