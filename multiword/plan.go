package multiword

import (
	"fmt"
	"math"
	"slices"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/format"
)

// A Pair names one product A_I·B_J of words (0-based: word 0 is the leading
// word A_1 of the paper).
type Pair struct{ I, J int }

func (p Pair) String() string { return fmt.Sprintf("A%dB%d", p.I+1, p.J+1) }

// Plan is one multiword algorithm: how A and B are split into words, which
// products of words are formed and in what order, and how they are summed.
//
// The zero values of the optional fields give Algorithm 2.1 of Fasi et al.:
// the p(p+1)/2 products with i+j ≤ p+1 (1-based), smallest first, each
// accumulated into C by the block FMA.
type Plan struct {
	Name  string        // the variant's name, for reports
	Low   format.Format // the words' format (the block FMA's input)
	Words int           // p ≥ 1

	// Acc is the block FMA's output format: the precision u_high in which it
	// accumulates (fp32 on tensor cores). Out is the format of the
	// returned C; C is rounded to it once, after unscaling.
	Acc, Out format.Format

	// SplitMode rounds the words (eq. 2.2); the zero value is NearestEven.
	// A stochastic mode draws its bits from a PCG generator seeded with Seed,
	// so a plan splits the same matrix the same way every time.
	SplitMode format.Mode
	Seed      uint64

	// Pairs are the products in the order they are accumulated; nil means
	// Triangle(Words). AllPairs(Words) gives all p² (eq. 2.5).
	Pairs []Pair

	// Sum says how products reach C. Plain: each product is accumulated by
	// the block FMA with C as its addend (Algorithm 4.1). FABsumV1: the inner
	// dimension is cut into blocks of Block; each block's product is computed
	// by the block FMA from zero and added to C in Acc with round-to-nearest
	// (Algorithm 4.2). FABsumV2: the block results are added in fp64 and
	// C is rounded at the end (Algorithm 4.3). FABsumPair: the block results
	// are added into a pair (hi, lo) of Acc values with TwoSum, every
	// operation rounded to nearest in Acc, and C is fl_Acc(hi + lo) — what a
	// GPU kernel can do at fp32 speed. Block 0 means one block of the
	// whole inner dimension.
	Sum   bound.Summation
	Block int

	// Group (FABsumV2 and FABsumPair; 0 or 1: none) first adds each run of
	// Group consecutive block results in Acc, rounding to nearest, and adds
	// only those group sums with Sum, in fp64 or into the TwoSum pair
	// (the last group may be shorter). A GPU kernel then does one fp64
	// addition (or TwoSum) per Group blocks instead of one per block: on
	// Hopper fp64 additions compete with the tensor cores
	// (docs/perf/fabsum-kernels.md). It needs one product per block result: one
	// word or FABsumJoint.
	Group int

	// FABsumFirstOnly applies Sum to the leading product A_1B_1 only and
	// accumulates the others plainly, as Algorithm 4.4 does.
	FABsumFirstOnly bool

	// FABsumJoint makes the products of one block share one block-FMA
	// accumulator: within each block of Block elements the products are
	// interleaved k-step by k-step — for each step of the block FMA's
	// natural k (16 elements for fp16 and bf16 words, 8 for tf32;
	// see jointStep) every product of the plan in plan order, each with the
	// running accumulator as addend — and the block's single result is
	// promoted once with Sum. It needs WordShift 0 (the products must share
	// one scale) and is what a GPU kernel with one accumulator per output
	// does (gpu's wgmma kernel). JointOrder can run each product over the
	// whole block instead.
	FABsumJoint bool

	// JointOrder is the order of a joint block's calls (FABsumJoint only).
	JointOrder JointOrder

	// Scale turns on the narrow-range scaling of Mary and Mikaitis: rows of
	// A and columns of B are multiplied by powers of two λ_i, μ_j so that
	// their largest magnitude lies in (Theta/2, Theta], and C is divided by
	// λ_iμ_j at the end. Theta 0 means min(f_max, sqrt(F_max/k)) for the
	// words' format and Acc (halved for directed split modes with WordShift,
	// whose scaled residuals can reach twice the value).
	Scale bool
	Theta float64

	// WordShift t stores word i (0-based) multiplied by 2^(t·i), so that low
	// words stay out of the subnormal range: A^(i) = fl((ΛA − Σ_{k<i}
	// 2^(−tk)A^(k)) · 2^(ti)). The products are scaled back by 2^(−t(i+j)),
	// exactly. t = p of the low format makes this the slides' division by
	// u^i; 0 is eq. (2.2) unscaled.
	WordShift int
}

// Triangle returns the products with i+j ≤ p+1 (1-based) that Theorem 2.1
// keeps, smallest first: by decreasing i+j, and within one order A_iB_j
// before A_jB_i for i > j, as Algorithm 4.1 does (A_2B_1, A_1B_2, A_1B_1).
func Triangle(p int) []Pair {
	var ps []Pair
	for s := p - 1; s >= 0; s-- {
		for i := s; i >= 0; i-- {
			ps = append(ps, Pair{i, s - i})
		}
	}
	return ps
}

// AllPairs returns all p² products, smallest first.
func AllPairs(p int) []Pair {
	var ps []Pair
	for s := 2 * (p - 1); s >= 0; s-- {
		for i := min(s, p-1); i >= 0 && s-i < p; i-- {
			ps = append(ps, Pair{i, s - i})
		}
	}
	return ps
}

// LargestFirst returns pairs in the reverse order.
func LargestFirst(pairs []Pair) []Pair {
	r := slices.Clone(pairs)
	slices.Reverse(r)
	return r
}

// pairs returns the products to form.
func (p *Plan) pairs() []Pair {
	if p.Pairs == nil {
		return Triangle(p.Words)
	}
	return p.Pairs
}

// Products returns the number of products of words the plan forms.
func (p *Plan) Products() int { return len(p.pairs()) }

// Check reports what is wrong with the plan, if anything.
func (p *Plan) Check() error {
	if p.Low.Precision() == 0 || p.Acc.Precision() == 0 || p.Out.Precision() == 0 {
		return fmt.Errorf("multiword: plan %q needs Low, Acc and Out formats", p.Name)
	}
	if p.Words < 1 {
		return fmt.Errorf("multiword: plan %q has %d words; need at least 1", p.Name, p.Words)
	}
	seen := map[Pair]bool{}
	for _, pr := range p.pairs() {
		if pr.I < 0 || pr.J < 0 || pr.I >= p.Words || pr.J >= p.Words {
			return fmt.Errorf("multiword: plan %q: product %v out of range for %d words", p.Name, pr, p.Words)
		}
		if seen[pr] {
			return fmt.Errorf("multiword: plan %q: product %v twice", p.Name, pr)
		}
		seen[pr] = true
	}
	if len(seen) == 0 {
		return fmt.Errorf("multiword: plan %q forms no products", p.Name)
	}
	if p.Block < 0 {
		return fmt.Errorf("multiword: plan %q: block size %d < 0", p.Name, p.Block)
	}
	if p.Sum > bound.FABsumPair {
		return fmt.Errorf("multiword: plan %q: unknown summation %d", p.Name, p.Sum)
	}
	if p.Group > 1 || p.Group < 0 {
		switch {
		case p.Group < 0:
			return fmt.Errorf("multiword: plan %q: group %d < 0", p.Name, p.Group)
		case p.Sum != bound.FABsumV2 && p.Sum != bound.FABsumPair:
			return fmt.Errorf("multiword: plan %q: groups of block sums (group=%d) are a FABsum-v2 or pair option (sum=v2 or pair), not %s", p.Name, p.Group, p.Sum)
		case p.Words > 1 && !p.FABsumJoint:
			return fmt.Errorf("multiword: plan %q: groups of block sums (group=%d) need one result per block: one word or joint=on", p.Name, p.Group)
		}
	}
	if p.Theta < 0 || math.IsNaN(p.Theta) || math.IsInf(p.Theta, 0) {
		return fmt.Errorf("multiword: plan %q: theta %g is not a positive number", p.Name, p.Theta)
	}
	if p.WordShift < 0 || p.WordShift > 200 {
		return fmt.Errorf("multiword: plan %q: word shift %d outside [0, 200]", p.Name, p.WordShift)
	}
	if p.JointOrder > JointProducts {
		return fmt.Errorf("multiword: plan %q: unknown joint order %d", p.Name, p.JointOrder)
	}
	if p.FABsumJoint {
		switch {
		case p.Sum == bound.Plain:
			return fmt.Errorf("multiword: plan %q: joint FABsum (joint=on) needs a FABsum summation (sum=v1, v2 or pair), not plain", p.Name)
		case p.FABsumFirstOnly:
			return fmt.Errorf("multiword: plan %q: joint FABsum (joint=on) sums every product in one accumulator; it cannot be limited to A1B1 (first=on; add joint=off)", p.Name)
		case p.WordShift != 0:
			return fmt.Errorf("multiword: plan %q: joint FABsum (joint=on) needs word shift 0, since the products share one accumulator and so one scale; got shift %d (add joint=off)", p.Name, p.WordShift)
		}
	}
	return nil
}

// JointOrder orders the block-FMA calls of a joint block (FABsumJoint):
// the same calls, the same chain length and bound, in another order.
type JointOrder uint8

const (
	// JointSteps interleaves the products k-step by k-step: for each step
	// of the block, every product in plan order.
	JointSteps JointOrder = iota
	// JointProducts runs each product, in plan order (smallest first),
	// over all the block's k-steps before the next. The small products
	// then meet an accumulator that holds only small products, and the
	// largest one's steps come last: with truncating adders (H100) the
	// block loses about a third of what JointSteps loses for 3 products
	// (docs/multiword.md).
	JointProducts
)

func (o JointOrder) String() string {
	if o == JointProducts {
		return "products"
	}
	return "steps"
}

// jointStep is the k of one instruction of the block FMA for the plan's
// words (mma m16n8k16 for fp16 and bf16, m16n8k8 for tf32): the
// granularity at which a joint plan interleaves its products.
func (p *Plan) jointStep() int {
	if p.Low == format.TF32 {
		return 8
	}
	return 16
}

// fabsum reports whether the pair is summed by blocks.
func (p *Plan) fabsum(pr Pair) bool {
	return p.Sum != bound.Plain && (!p.FABsumFirstOnly || pr == Pair{0, 0})
}

// block returns the FABsum block size for inner dimension k.
func (p *Plan) block(k int) int {
	if p.Block == 0 || p.Block > k {
		return k
	}
	return p.Block
}

// ScaleTarget returns θ, the largest magnitude that Scale gives the rows of A
// and columns of B for inner dimension k: Theta, or by default
// min(f_max, sqrt(F_max/k)) of Low and Acc, halved for a directed split mode
// with a word shift. Exported so that engines scaling on their own (the
// fused GPU kernel) pick the same powers of two.
func (p *Plan) ScaleTarget(k int) float64 {
	if p.Theta > 0 {
		return p.Theta
	}
	t := bound.Theta(p.Low.MaxFinite(), p.Acc.MaxFinite(), float64(k))
	if p.WordShift > 0 && !nearest(p.SplitMode) {
		t /= 2
	}
	return t
}

// nearest reports whether m rounds to nearest, so that a residual is at most
// half an ulp.
func nearest(m format.Mode) bool {
	return m == format.NearestEven || m == format.NearestAway || m == format.NearestTowardZero
}
