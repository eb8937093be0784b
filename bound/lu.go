package bound

import (
	"fmt"
	"math"
	"strconv"
)

// This file holds the bounds of Blanchard, Higham, Lopez, Mary and Pranesh,
// "Mixed precision block fused multiply-add: error analysis and application
// to GPU tensor cores" (SIAM J. Sci. Comput. 42(3), 2020), for matrix
// multiplication and LU factorization with a block FMA, and the convergence
// conditions of iterative refinement of Carson and Higham (SIAM J. Sci.
// Comput. 40(2), 2018).
//
// Every bound follows one rounding-error argument, Higham's Lemma 8.4
// extended to steps that err by different amounts: an element computed as
// s ← s − Σ (terms), through a chain of steps each of which perturbs the
// running value and the terms it adds by at most ε_i relatively, satisfies
//
//	ŝ·(1+θ_0) = s_0 − Σ_k t_k·(1+θ_k),   |θ| ≤ Π_i (1−ε_i)^(−1) − 1,
//
// where the product runs over the chain (every step, whichever term is
// looked at: moving a term's later roundings onto ŝ leaves it the earlier
// ones, ratios of (1+ε)). A step of a block FMA with |e| ≤ ε(|c| + Σ|a_i b_i|)
// is such a step: its error can be spread over c and the products. So for
// LU, where ŝ is an entry of L̂ or Û and s_0 an entry of A,
// |PA − L̂Û| ≤ c·|L̂||Û| with c that product minus one.

// BlockFMA describes C = A·B computed through a block FMA (the paper's
// Algorithm 3.1): A and B are rounded to the FMA's input format, and each
// element is accumulated in steps of K products, each step's result (in the
// FMA's output format) the next step's addend. Plain arithmetic is K = 1
// with UOwn the rounding of each product.
type BlockFMA struct {
	N     int     `json:"n"`      // inner dimension
	K     int     `json:"k"`      // products per step, the paper's b
	UStep float64 `json:"u_step"` // one step errs by ≤ UStep·(|c| + Σ|a_ib_i|): output rounding included
	UOwn  float64 `json:"u_own"`  // rounding of each product before it is summed (0 when exact)
	UConv float64 `json:"u_conv"` // rounding of A and B into the input format (0 when they are in it)
}

// Bound returns c with |C − Ĉ| ≤ c·|A||B|:
//
//	c = (1+u_conv)²(1+u_own)(1+ε)^⌈n/K⌉ − 1 ≈ 2u_conv + u_own + ⌈n/K⌉·ε.
//
// For a tensor core whose step rounds once into its output format u_FMA
// after summing in u_high, ε ≈ u_FMA + K·u_high: the paper's
// 2u_low + (n/b)u_FMA + n·u_high (section 3), which is 2u16 + n·u32 for
// TC32 and (n/b)·u16 for TC16.
func (b BlockFMA) Bound() (Result, error) {
	if b.N < 1 || b.K < 1 {
		return Result{}, fmt.Errorf("bound: block FMA needs n ≥ 1 and k ≥ 1, have n=%d k=%d", b.N, b.K)
	}
	if err := checkUnits(map[string]float64{"u_step": b.UStep, "u_own": b.UOwn, "u_conv": b.UConv}); err != nil {
		return Result{}, err
	}
	steps := (b.N + b.K - 1) / b.K
	conv := compose(b.UConv, b.UConv)
	acc := compose(b.UOwn, math.Expm1(float64(steps)*math.Log1p(b.UStep)))
	terms := []Term{
		{"conversion", "(1+u_conv)² − 1", conv},
		{"accumulation", "(1+u_own)(1+ε)^⌈n/k⌉ − 1, ⌈n/k⌉ = " + strconv.Itoa(steps), acc},
	}
	return Result{Terms: terms, Total: compose(conv, acc), Dominant: firstOrder([]fo{{2, b.UConv}, {1, b.UOwn}, {float64(steps), b.UStep}})}, nil
}

// LUUpdate describes how one Schur-complement update C ← C − L21·U12 of
// inner dimension nb errs, for LU: it takes ChainSteps steps on each
// element, each erring by ≤ Chain relatively on the running value and the
// terms it adds; each term also errs by Own before it enters (a multiword
// product's own bound, a rounded scalar product) and by Conversion in each
// factor (L21 and U12 rounded into a block FMA's input format).
type LUUpdate struct {
	Chain      float64 `json:"chain"`
	ChainSteps int     `json:"chain_steps"`
	Own        float64 `json:"own"`
	Conversion float64 `json:"conversion"`
}

// LU describes a right-looking blocked LU with partial pivoting of an n×n
// matrix (the paper's Algorithm 4.1 with block size NB): the updates err as
// Update says, and the panel and the triangular solve for U12 run in the
// storage format (unit roundoff UStorage, one rounding per operation).
type LU struct {
	N        int      `json:"n"`
	NB       int      `json:"nb"`
	UStorage float64  `json:"u_storage"`
	Update   LUUpdate `json:"update"`
}

// Bound returns c with |P·fl(A) − L̂Û| ≤ c·|L̂||Û| (fl(A): A rounded to the
// storage format, which adds u_storage·|A|). An entry meets at most
// ⌊(n−1)/nb⌋ updates, then fewer than nb scalar steps in its own panel or
// triangular solve (one rounding each, one more for its own product) and,
// in L, a division:
//
//	c = (1−ε)^(−S) (1−u_own)^(−1) (1−u_conv)^(−2) (1−u_s)^(−(nb+1)) − 1,
//	S = ⌊(n−1)/nb⌋·ChainSteps,
//
// to first order S·ε + u_own + 2u_conv + (nb+1)·u_s. For TC16 (factors in
// fp16, a V100's ε ≈ u16 per step of 4) that is ≈ (n/4 + nb)·u16; for TC32
// ≈ 2u16 + n·u32 + nb·u32 with the fp16 rounding of the factors now the
// leading constant: the paper's finding that TC32 is much more accurate.
func (l LU) Bound() (Result, error) {
	if l.N < 1 || l.NB < 1 {
		return Result{}, fmt.Errorf("bound: LU needs n ≥ 1 and nb ≥ 1, have n=%d nb=%d", l.N, l.NB)
	}
	up := l.Update
	if up.ChainSteps < 0 {
		return Result{}, fmt.Errorf("bound: LU update with %d steps", up.ChainSteps)
	}
	if err := checkUnits(map[string]float64{"u_storage": l.UStorage, "chain": up.Chain, "own": up.Own, "conversion": up.Conversion}); err != nil {
		return Result{}, err
	}
	nb := min(l.NB, l.N)
	s := float64((l.N-1)/nb) * float64(up.ChainSteps)
	updates := inflate(up.Chain, s)
	own := compose(inflate(up.Own, 1), inflate(up.Conversion, 2))
	panel := inflate(l.UStorage, float64(nb+1))
	terms := []Term{
		{"updates", fmt.Sprintf("(1−ε)^(−S) − 1, S = ⌊(n−1)/nb⌋·%d = %s", up.ChainSteps, numString(s)), updates},
		{"products", "(1−u_own)^(−1)(1−u_conv)^(−2) − 1", own},
		{"panel", "(1−u_s)^(−(nb+1)) − 1", panel},
	}
	dom := firstOrder([]fo{{s, up.Chain}, {1, up.Own}, {2, up.Conversion}, {float64(nb + 1), l.UStorage}})
	return Result{Terms: terms, Total: compose(updates, own, panel), Dominant: dom}, nil
}

// inflate returns (1−u)^(−n) − 1, +Inf when u ≥ 1.
func inflate(u, n float64) float64 {
	if u >= 1 {
		return math.Inf(1)
	}
	if u == 0 || n == 0 {
		return 0
	}
	return math.Expm1(-n * math.Log1p(-u))
}

func checkUnits(us map[string]float64) error {
	for name, u := range us {
		if !(u >= 0 && u < 1) {
			return fmt.Errorf("bound: %s = %v, want a unit roundoff in [0, 1)", name, u)
		}
	}
	return nil
}

// fo is one first-order term count × u.
type fo struct{ count, u float64 }

// firstOrder writes the nonzero terms, largest first as given order:
// "64 × 2^-11 + 2 × 2^-24".
func firstOrder(ts []fo) string {
	s := ""
	for _, t := range ts {
		if t.count == 0 || t.u == 0 {
			continue
		}
		if s != "" {
			s += " + "
		}
		s += numString(t.count) + " × " + powString(t.u)
	}
	if s == "" {
		return "0"
	}
	return s
}

// Refinement gives the convergence conditions of iterative refinement
// (Carson and Higham 2018, Table 3.2 and section 3, constants omitted) for
// LU factors of effective unit roundoff UF, working precision U, residuals
// in UR and GMRES's preconditioned products Û⁻¹L̂⁻¹A·v in UP:
//
//   - LU-IR (classical refinement, the correction solved with the factors)
//     converges while κ∞(A)·u_f < 1;
//   - GMRES-IR (GMRES on the system preconditioned by the factors, in
//     precision u) converges while GMRES's backward error on the
//     preconditioned system, about u + u_p·κ∞(A), times that system's
//     condition number, of order (1 + κ∞(A)·u_f)², stays below 1.
//     Carson and Higham take u_p = u² (the products in extended
//     precision), where this is κ∞(A)·u_f·u^(1/2) < 1: fp16 factors to
//     κ ≈ 2·10^11 with u = fp64. With u_p = u, as in a solver that works
//     in fp64 throughout, it becomes about κ∞(A)³·u_f²·u < 1 (Amestoy,
//     Buttari, Higham, L'Excellent, Mary and Vieublé, "Five-precision
//     GMRES-based iterative refinement", SIAM J. Matrix Anal. Appl.
//     45(1), 2024): fp16 factors to κ ≈ 3·10^7.
//
// Where they converge, the normwise backward error reaches order u and the
// forward error order u + κ∞(A)·u_r.
//
// Blanchard et al. (section 5) take for u_f the LU's backward error
// constant: with a block FMA it is the LU bound, not the storage format's
// unit roundoff, which is why TC32 factors serve GMRES-IR better than TC16
// ones.
type Refinement struct {
	UF float64 `json:"u_f"`
	U  float64 `json:"u"`
	UR float64 `json:"u_r"`
	// UP is the unit roundoff of the preconditioned products; 0 means u²,
	// Carson and Higham's assumption.
	UP float64 `json:"u_p,omitempty"`
}

// MaxKappaIR is the largest κ∞(A) for which LU-IR converges: 1/u_f.
func (r Refinement) MaxKappaIR() float64 { return 1 / r.UF }

// MaxKappaGMRES is the largest κ∞(A) for which GMRES-IR converges: the κ
// where (u + u_p·κ)·(κ·u_f)² = 1, which is 1/(u_f·u^(1/2)) for u_p = u²
// to first order, and about (u_f²·u)^(-1/3) for u_p = u.
func (r Refinement) MaxKappaGMRES() float64 {
	if r.UP == 0 {
		return 1 / (r.UF * math.Sqrt(r.U))
	}
	f := func(k float64) float64 { return (r.U + r.UP*k) * (k * r.UF) * (k * r.UF) }
	// f grows with κ: bisect on a log scale between a κ where f < 1 and
	// one where f > 1.
	lo, hi := 1.0, 1/(r.UF*math.Sqrt(r.U))
	if f(lo) >= 1 {
		return lo
	}
	for i := 0; i < 200 && hi/lo > 1+1e-12; i++ {
		mid := math.Sqrt(lo * hi)
		if f(mid) < 1 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// ForwardError is the limiting forward error u + κ·u_r of either method.
func (r Refinement) ForwardError(kappa float64) float64 { return r.U + kappa*r.UR }
