package multiword

import (
	"fmt"
	"math"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/mma"
)

// UnitError describes how far a block FMA may err, for Plan.Bound: one step
// of K products a_ib_i and an addend c returns s + e with
// |e| ≤ K·U·(|c| + Σ|a_ib_i|), s the exact sum. A unit with one
// round-to-nearest rounding per step has K·U = u_high; truncating adders
// err more (ModelError).
type UnitError struct {
	U float64
	K int
}

// ErrorModel is implemented by engines that can say how far their block
// FMA errs (the CPU engines do), so that Plan.Bound applies to them.
type ErrorModel interface {
	UnitError(p *Plan) (UnitError, error)
}

// ReferenceError is the UnitError of the Reference engine for a plan: one
// rounding to Acc after a float64 sum, counted as one step per product.
func ReferenceError(p *Plan) UnitError {
	return UnitError{U: bound.U(p.Acc, accMode) + 0x1p-50, K: 1}
}

// ModelError derives a UnitError from a model's parameters. Terms are cut
// to a grid p−1+ExtraBits bits below the largest term's leading bit, so
// each of the K+1 terms loses less than 2^-(p−1+ExtraBits) of the largest
// magnitude (half that when the alignment rounds); the sum is then rounded
// (2^(1−p) for round-toward-zero). Rounded products and a narrower output
// add their own unit roundoffs.
func ModelError(m mma.Params) UnitError {
	k := m.BlockK
	round := bound.U(m.Accumulator, m.AccumulatorMode)
	var eps float64
	switch {
	case m.NormalizeEach:
		eps = float64(k) * round
	default:
		if m.ExtraBits != mma.Unlimited {
			grid := float64(k+1) * math.Ldexp(1, -(m.Accumulator.Precision()-1+m.ExtraBits))
			if m.Alignment != mma.Truncate {
				grid /= 2
			}
			eps += grid
		}
		eps += round
		if m.AddendAfter {
			eps += round
		}
	}
	if m.Product != nil {
		eps += bound.U(*m.Product, m.ProductMode)
	}
	if m.Output.Precision() < m.Accumulator.Precision() {
		eps += bound.U(m.Output, m.OutputMode)
	}
	// A margin for the second-order terms the sum above leaves out.
	return UnitError{U: eps / float64(k) * (1 + 0x1p-20), K: k}
}

// Bound returns the a-priori componentwise bound c of |C − Ĉ| ≤ c·|A||B|
// for the plan with inner dimension k on a unit that errs as ue says, in
// the absence of underflow and overflow. It follows the proof of Theorem
// 2.1 of Fasi et al. step by step through the plan's schedule instead of
// the worst schedule: with |A_i| ≤ u^i(1+u)|A| (0-based i, u = u_low),
//
//	|E| ≤ (2u^p + u^(2p) + Σ_dropped u^(i+j)(1+u)² + Σ_kept φ_ij u^(i+j)(1+u)²) |A||B|,
//
// where φ_ij = Π(1+u_r) − 1 over every rounding r that the product A_iB_j
// passes through: its own steps in the unit, every later accumulation of C
// (through the unit for plain products, in Acc or fp64 for FABsum
// blocks) and the final rounding to Out. To first order this is Theorem
// 2.1's (p+1)u^p + n·u_high for plain summation and (b + n/b)·u_high or
// b·u_high + (n/b)·u_64 with FABsum.
//
// FABsum-pair's compensated sum of nb block sums errs by at most
// u_acc|s| + γ_nb(u_acc)²·Σ|x_i| (Ogita, Rump and Oishi's Sum2): each of its
// nb additions counts as one rounding of γ_nb(u_acc)²/nb ≈ nb·u_acc², since
// (1 + γ²/nb)^nb − 1 ≥ γ², and the collapse of the pair to one Acc value
// (before a plain product or at the end) as one rounding u_acc. To first
// order: b·u_high + u_acc + (n/b)²·u_acc².
//
// A joint plan (FABsumJoint) runs each block as one chain through the unit:
// for each k-step of jointStep elements one call per product, with the
// running block sum as addend, so a term of the block meets the steps of
// every product, at most P·b of them for P products (more when the unit's
// K does not divide the k-step: each call counts as whole steps). Each
// term is bounded as if it met the whole chain of the first block, and
// then the nb promotions and the final rounding(s); no product meets
// another's promotions, since there is one block sum. To first order:
// P·b·u_high + (n/b)·u_acc with v1: the FABsum bound with b → P·b.
func (p Plan) Bound(k int, ue UnitError) (bound.Result, error) {
	if err := p.Check(); err != nil {
		return bound.Result{}, err
	}
	if k < 1 || ue.K < 1 || !(ue.U >= 0) {
		return bound.Result{}, fmt.Errorf("multiword: bound needs k ≥ 1 and a unit error, got k=%d %+v", k, ue)
	}
	uLow := bound.U(p.Low, p.SplitMode)
	uAcc := bound.U(p.Acc, accMode)
	uOut := bound.U(p.Out, accMode)
	const u64 = 0x1p-53
	steps := func(n int) float64 { return float64(ue.K * ((n + ue.K - 1) / ue.K)) }
	bsz := p.block(k)
	nb := float64((k + bsz - 1) / bsz)
	unitLog := math.Log1p(ue.U)

	pairs := p.pairs()
	// later[t] is the log of the factor that what C holds after pair t
	// collects from the pairs after it and the final rounding.
	later := make([]float64, len(pairs)+1)
	later[len(pairs)] = math.Log1p(uOut)
	if p.Sum == bound.FABsumPair && p.fabsum(pairs[len(pairs)-1]) {
		later[len(pairs)] += math.Log1p(uAcc) // fl_Acc(hi + lo)
	}
	for t := len(pairs) - 1; t >= 0; t-- {
		pr := pairs[t]
		var l float64
		switch {
		case p.FABsumJoint:
			// One block sum holds every product: none meets another's promotions.
		case p.fabsum(pr):
			l = nb * math.Log1p(p.addU(uAcc, u64, nb))
		default:
			if t > 0 && p.fabsum(pairs[t-1]) && (p.Sum == bound.FABsumV2 || p.Sum == bound.FABsumPair) {
				l = math.Log1p(uAcc) // C rounded back to Acc to be the addend
			}
			l += steps(k) * unitLog
		}
		later[t] = later[t+1] + l
	}
	w := func(pr Pair) float64 { return math.Pow(uLow, float64(pr.I+pr.J)) * (1 + uLow) * (1 + uLow) }
	var acc, dropped float64
	kept := map[Pair]bool{}
	for t, pr := range pairs {
		kept[pr] = true
		var own float64
		if p.FABsumJoint {
			own = jointSteps(bsz, p.jointStep(), len(pairs), steps)*unitLog + p.interBlock(uAcc, u64, nb)
		} else if p.fabsum(pr) {
			// The first block is the one that meets the most later additions.
			own = steps(bsz)*unitLog + p.interBlock(uAcc, u64, nb)
		} else {
			own = steps(k) * unitLog
		}
		acc += math.Expm1(own+later[t+1]) * w(pr)
	}
	for i := 0; i < p.Words; i++ {
		for j := 0; j < p.Words; j++ {
			if !kept[Pair{i, j}] {
				dropped += w(Pair{i, j})
			}
		}
	}
	split := 2*math.Pow(uLow, float64(p.Words)) + math.Pow(uLow, float64(2*p.Words))
	r := bound.Result{Terms: []bound.Term{
		{Name: "splitting", Formula: "2u_low^p + u_low^2p", Value: split},
		{Name: "dropped products", Formula: "Σ_{i+j>p+1} u_low^(i+j-2)(1+u_low)²", Value: dropped},
		{Name: "accumulation", Formula: "Σ_kept φ_ij u_low^(i+j-2)(1+u_low)², φ from the plan's schedule", Value: acc},
	}}
	r.Total = split + dropped + acc
	return r, nil
}

// interBlock is the log of the factor that FABsum's additions after a
// block apply to its result, nb blocks per pair of words: nb additions
// with addU, or with Group g (v2) up to g−1 in Acc and one per group in
// fp64.
func (p *Plan) interBlock(uAcc, u64, nb float64) float64 {
	if p.Group > 1 {
		g := float64(p.Group)
		ng := math.Ceil(nb / g) // the group sums, added with Sum
		return min(g-1, nb-1)*math.Log1p(uAcc) + ng*math.Log1p(p.addU(uAcc, u64, ng))
	}
	return nb * math.Log1p(p.addU(uAcc, u64, nb))
}

// addU is the unit roundoff of FABsum's inter-block additions, nb of them
// per pair of words.
func (p *Plan) addU(uAcc, u64, nb float64) float64 {
	switch p.Sum {
	case bound.FABsumV2:
		return u64
	case bound.FABsumPair:
		g := bound.Gamma(nb, uAcc)
		return g * g / nb
	}
	return uAcc
}

// jointSteps counts the unit's rounding steps (in units of U) along one
// joint block of kb elements: for each k-step one call per product, each a
// whole number of the unit's steps.
func jointSteps(kb, step, products int, steps func(int) float64) float64 {
	var n float64
	for ks := 0; ks < kb; ks += step {
		n += steps(min(step, kb-ks))
	}
	return n * float64(products)
}
