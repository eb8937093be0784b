package mma

import (
	"fmt"
	"math"
	"strings"

	"github.com/mwmm/mwmm/format"
)

// Unlimited, as ExtraBits, keeps every bit in alignment (exact accumulation);
// as CarryBits, lets no carry out of the accumulator be lost.
const Unlimited = -1

// AlignRounding says what happens to the bits of an addend that fall below
// the accumulator's grid when it is shifted to the largest exponent.
type AlignRounding uint8

const (
	// Truncate drops them: the magnitude is rounded toward zero, as a shifter
	// without guard logic does (NVIDIA V100–A100).
	Truncate AlignRounding = iota
	// AlignNearestEven rounds each shifted addend to the nearest grid point,
	// ties to even.
	AlignNearestEven
)

func (r AlignRounding) String() string {
	if r == AlignNearestEven {
		return "rne"
	}
	return "truncate"
}

// Order is the order in which a unit that normalises after every addition
// adds its terms. (Without intermediate normalisation all terms are aligned
// to the largest one and the order does not matter.)
type Order uint8

const (
	// LargestFirst sorts the terms by magnitude, largest first, as the
	// tensor cores of V100–A100 do (numerical-behavior-tensor-cores.txt,
	// "Accuracy of the dot products").
	LargestFirst Order = iota
	// InOrder adds the addend c first, then the products in index order:
	// acc = c; acc = acc + a_1·b_1; ... (an FMA chain).
	InOrder
)

func (o Order) String() string {
	if o == InOrder {
		return "in-order"
	}
	return "largest-first"
}

// Params are the knobs of the generic block FMA model (Model). Each block of
// BlockK products is computed as follows.
//
//  1. The inputs a_i, b_i are converted to Input with InputConversion (for
//     values already in Input nothing changes; for fp32 values given to a
//     TF32 unit this is the hardware's conversion); subnormal inputs are read
//     as zero if Input has no subnormals. The addend c is read as a value of
//     Output (likewise flushed if Output has no subnormals).
//  2. The products a_i·b_i are exact, or rounded to Product with ProductMode.
//  3. The terms (the products, and c unless AddendAfter) are summed in a
//     fixed-point accumulator aligned to the largest term: its grid keeps
//     Accumulator.Precision()-1+ExtraBits fraction bits below the leading bit
//     of the largest term (23 for the {3.23} adder of V100, 24 for T4's
//     {3.24}), or, with AnchorExponents, below the largest exponent
//     e_a+e_b of a product (or c's); bits below the grid are dropped or rounded (Alignment), and
//     with Sticky a bit one position below the grid records whether any was
//     nonzero. The sum has CarryBits bits above the largest term's leading
//     bit; a carry beyond them is lost (the magnitude wraps).
//     With NormalizeEach the terms are instead added two at a time in Order,
//     each partial sum normalised and rounded into Accumulator.
//  4. The sum is normalised and rounded into Accumulator with
//     AccumulatorMode (round-toward-zero on NVIDIA tensor cores). With
//     AddendAfter, c is now added to it by the same two-term addition.
//  5. The result is rounded to Output with OutputMode, a no-op when Output is
//     the accumulator's format.
//
// NaN and Inf follow IEEE 754: a NaN input, Inf·0 or Inf−Inf give NaN, other
// infinite terms give Inf of their sign, before any alignment.
type Params struct {
	Name   string
	Input  format.Format // format of A and B
	Output format.Format // format of C and D
	BlockK int           // products fused per step, ≥ 1

	InputConversion format.Mode // how values outside Input are converted

	// Product, when non-nil, is the format each product is rounded to with
	// ProductMode; nil means exact products.
	Product     *format.Format
	ProductMode format.Mode

	AddendAfter bool // c added to the rounded sum of products, not aligned with them

	Accumulator     format.Format // the internal sum's precision and range
	AccumulatorMode format.Mode   // normalisation rounding into Accumulator
	ExtraBits       int           // grid bits below the accumulator's LSB, or Unlimited
	Alignment       AlignRounding // fate of the bits below the grid
	// AnchorExponents anchors the grid at the largest exponent of the
	// terms as the hardware reads them (e_a+e_b for a product, subnormal
	// inputs at the format's emin; c's exponent) instead of the leading bit
	// of the largest term: a product of significands in [2,4) then has one
	// grid bit more. Measured on V100 and A100 by Khattak and Mikaitis, on Hopper
	// by us (docs/hardware/v100-t4-a100.md, hopper.md).
	AnchorExponents bool
	// FixedRange: the adder keeps a magnitude and a sign, not IEEE
	// arithmetic: a sum whose exponent overflows the accumulator becomes
	// ±Inf whatever AccumulatorMode says (round-toward-zero alone would
	// stop at the largest finite value), and every zero sum is +0 (-0 plus
	// -0 products, or a tiny negative sum that rounds to zero, give +0).
	// Measured on Hopper.
	FixedRange    bool
	Sticky        bool  // keep a sticky bit below the grid (with Truncate)
	CarryBits     int   // bits above the largest term, or Unlimited
	NormalizeEach bool  // normalise and round after every addition
	Order         Order // order of the additions with NormalizeEach

	OutputMode format.Mode // rounding from Accumulator to Output

	// Doc says where the parameters come from (paper sections, "not
	// measured" where a paper leaves them open); shown by 'mwmm mma list'.
	Doc string
}

// Model is the generic block FMA / tensor-core model: a Unit whose behaviour
// is set by Params. It is safe for concurrent use.
type Model struct {
	p        Params
	fracBits int  // grid bits below the largest term's leading bit; -1 when exact
	fma64    bool // fp64 FMA chain (inputs too wide for exact float64 products)
	sameOut  bool // Output equals Accumulator: step 5 is a no-op
	flushIn  bool
	flushOut bool
	forceBig bool // tests: always use the big.Int adder

	// Normal values of Input pass readInput untouched: their float64 bits
	// have no fraction bits below the format's and lie in [inLow, inLow+inSpan].
	inDrop, inLow, inSpan uint64
	inSubScale            float64 // 1/Input.MinSubnormal(): subnormals become integers
	outMinNormal          float64
	inEmin, outEmin       int

	// An FMA chain (InOrder with intermediate normalisation) starts from
	// c: products go after it.
	cFirst bool
	// The grid hangs from the terms' exponents (AnchorExponents), not
	// from the largest leading bit.
	anchored bool
	// An FMA chain of blocks of one product (the experiments' fp32 on
	// CUDA cores): chainStep, not block, does each step.
	chain1 bool

	// Each rounding step's format and mode, worked out once (Round per
	// value spent a third of a dot product on them).
	inR, prodR, accR, outR, addR format.Rounder
}

// NewModel checks the parameters and builds the model.
func NewModel(p Params) (*Model, error) {
	m := &Model{p: p, flushIn: !p.Input.Subnormals(), flushOut: !p.Output.Subnormals()}
	if m.p.Name == "" {
		m.p.Name = "model " + p.Input.Name() + "→" + p.Output.Name()
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("mma: %s: %w", m.p.Name, err)
	}
	m.fracBits = -1
	if p.ExtraBits != Unlimited {
		m.fracBits = p.Accumulator.Precision() - 1 + p.ExtraBits
	}
	m.sameOut = p.Output == p.Accumulator
	m.inDrop = 1<<uint(53-p.Input.Precision()) - 1
	m.inLow = math.Float64bits(p.Input.MinNormal())
	m.outMinNormal = p.Output.MinNormal()
	m.inEmin, m.outEmin = p.Input.Emin(), p.Output.Emin()
	m.cFirst = p.NormalizeEach && p.Order == InOrder && !p.AddendAfter
	m.anchored = p.AnchorExponents && !p.NormalizeEach
	m.chain1 = m.cFirst && p.BlockK == 1 && !m.fma64
	m.inSpan = math.Float64bits(p.Input.MaxFinite()) - m.inLow
	if p.Input.Subnormals() {
		m.inSubScale = 1 / p.Input.MinSubnormal()
	}
	// The rounders refer to m.p's formats, which never change.
	m.inR = m.p.Input.Rounder(p.InputConversion)
	if p.Product != nil {
		m.prodR = p.Product.Rounder(p.ProductMode)
	}
	m.accR = m.p.Accumulator.Rounder(p.AccumulatorMode)
	m.outR = m.p.Output.Rounder(p.OutputMode)
	m.addR = m.p.Output.Rounder(format.NearestEven)
	return m, nil
}

func (m *Model) check() error {
	p := &m.p
	for _, mode := range []format.Mode{p.InputConversion, p.ProductMode, p.AccumulatorMode, p.OutputMode} {
		if mode.IsStochastic() {
			return fmt.Errorf("stochastic rounding (%v) is not modelled inside a unit", mode)
		}
	}
	switch {
	case p.BlockK < 1 || p.BlockK > 1<<16:
		return fmt.Errorf("block size k=%d outside 1..65536", p.BlockK)
	case p.ExtraBits < Unlimited || p.ExtraBits > 64:
		return fmt.Errorf("extra alignment bits %d outside 0..64 (or unlimited)", p.ExtraBits)
	case p.CarryBits < Unlimited || p.CarryBits > 64:
		return fmt.Errorf("carry bits %d outside 0..64 (or unlimited)", p.CarryBits)
	case p.Sticky && p.Alignment != Truncate:
		return fmt.Errorf("a sticky bit goes with truncating alignment, not %v", p.Alignment)
	}
	in := p.Input
	if in.Precision() > 26 {
		// Exact products of such inputs do not fit a float64; the one
		// configuration we support is the IEEE fp64 FMA chain.
		ok := p.Product == nil && in.Precision() <= 53 && p.Accumulator == format.Binary64 &&
			p.Output == format.Binary64 && p.AccumulatorMode == format.NearestEven &&
			p.NormalizeEach && p.Order == InOrder && p.ExtraBits == Unlimited && !p.AddendAfter
		if !ok {
			return fmt.Errorf("inputs of %d bits have products wider than a float64: only the fp64 FMA chain (exact products, unlimited alignment, normalise each, in order, nearest-even into fp64) is supported", in.Precision())
		}
		m.fma64 = true
		return nil
	}
	// Products and sums must stay exact float64 values.
	if 2*(in.Emin()-in.Precision()+1) < -1074 || in.Emax() > 510 {
		return fmt.Errorf("products of %s values leave the float64 range", in.Name())
	}
	if p.Accumulator.Precision() > 51 {
		return fmt.Errorf("accumulator precision %d above 51 bits", p.Accumulator.Precision())
	}
	if p.Accumulator.Emin() < -1022 || p.Output.Emin() < -1022 {
		return fmt.Errorf("accumulator or output range below fp64's")
	}
	return nil
}

// Params returns the model's parameters.
func (m *Model) Params() Params { return m.p }

func (m *Model) Name() string          { return m.p.Name }
func (m *Model) Input() format.Format  { return m.p.Input }
func (m *Model) Output() format.Format { return m.p.Output }
func (m *Model) BlockK() int           { return m.p.BlockK }

// Dots implements Unit.
func (m *Model) Dots(k int, a, b, c, d []float64) error {
	if err := CheckDots(k, a, b, c, d); err != nil {
		return err
	}
	for i := range c {
		d[i] = m.Dot(a[i*k:(i+1)*k], b[i*k:(i+1)*k], c[i])
	}
	return nil
}

// Dot returns a·b + c as the unit computes it: blocks of BlockK products
// in order, each block's result (a value of Output) the next block's addend.
// It panics if len(a) != len(b).
func (m *Model) Dot(a, b []float64, c float64) float64 {
	if len(a) != len(b) {
		panic(fmt.Sprintf("mma: Dot of vectors of lengths %d and %d", len(a), len(b)))
	}
	var stack [65]float64
	terms := stack[:]
	if m.p.BlockK+1 > len(stack) {
		terms = make([]float64, m.p.BlockK+1)
	}
	d := m.readAddend(c)
	if m.chain1 {
		for i := range a {
			d = m.chainStep(a[i], b[i], d)
		}
		return d
	}
	for i := 0; i < len(a); i += m.p.BlockK {
		j := min(i+m.p.BlockK, len(a))
		d = m.block(a[i:j], b[i:j], d, terms)
	}
	return d
}

// readInput is x as the unit reads it.
func (m *Model) readInput(x float64) float64 {
	if m.normalIn(x) {
		return x
	}
	return m.readInputSlow(x)
}

// normalIn says whether x is a normal value of Input, which reads as itself
// (the common case: small enough to inline in block's loop).
func (m *Model) normalIn(x float64) bool {
	b := math.Float64bits(x) &^ (1 << 63)
	return b&m.inDrop == 0 && b-m.inLow <= m.inSpan
}

func (m *Model) readInputSlow(x float64) float64 {
	if b := math.Float64bits(x) &^ (1 << 63); b == 0 {
		return x
	} else if b < m.inLow { // below Input's MinNormal
		if m.flushIn {
			return math.Copysign(0, x)
		}
		// A subnormal of Input is a whole multiple of its smallest one
		// (the low words of a split often are): it reads as itself.
		if y := math.Abs(x) * m.inSubScale; y == float64(int64(y)) {
			return x
		}
	}
	return m.inR.Round(x)
}

func (m *Model) readAddend(c float64) float64 {
	c = m.addR.Round(c)
	if m.flushOut && math.Abs(c) < m.outMinNormal {
		return math.Copysign(0, c)
	}
	return c
}

// block computes one hardware step: a·b + c with len(a) ≤ BlockK.
func (m *Model) block(a, b []float64, c float64, terms []float64) float64 {
	if m.fma64 {
		acc := c
		for i := range a {
			acc = math.FMA(m.readInput(a[i]), m.readInput(b[i]), acc)
		}
		return acc
	}
	n := len(a)
	cFirst := m.cFirst
	prods := terms[:n]
	if cFirst {
		prods = terms[1 : n+1]
	}
	finite := !isSpecial(c)
	// The anchor (see anchorExp) is built from the inputs as read, here
	// rather than by reading them again.
	anchored := m.anchored
	anchor := noAnchor
	emin := m.inEmin
	for i := range a {
		x, y := a[i], b[i]
		if !m.normalIn(x) {
			x = m.readInputSlow(x)
		}
		if !m.normalIn(y) {
			y = m.readInputSlow(y)
		}
		p := x * y // exact: inputs have ≤ 26 bits
		if anchored && x != 0 && y != 0 {
			anchor = max(anchor, anchorExp(x, emin)+anchorExp(y, emin))
		}
		if m.p.Product != nil {
			p = m.prodR.Round(p)
		}
		prods[i] = p
		finite = finite && !isSpecial(p)
	}
	if !finite {
		// IEEE rules, computed in float64 where the finite terms cannot
		// overflow: the result is NaN or ±Inf.
		s := c
		for _, t := range prods {
			s += t
		}
		return m.addR.Round(s)
	}
	if anchored && c != 0 && !m.p.AddendAfter {
		anchor = max(anchor, anchorExp(c, m.outEmin))
	}
	var s float64
	switch {
	case m.p.AddendAfter:
		s = m.sumAt(prods, anchor)
		s = m.sum2(s, c)
	case cFirst:
		terms[0] = c
		s = m.sum(terms[:n+1])
	default:
		terms[n] = c
		s = m.sumAt(terms[:n+1], anchor)
	}
	if m.sameOut {
		return s
	}
	return m.outR.Round(s)
}

// chainStep is block for one product with c first (cFirst): what block
// does for n = 1, without its slices and loops.
func (m *Model) chainStep(x, y, c float64) float64 {
	x, y = m.readInput(x), m.readInput(y)
	p := x * y // exact: inputs have ≤ 26 bits
	if m.p.Product != nil {
		p = m.prodR.Round(p)
	}
	if isSpecial(c) || isSpecial(p) {
		return m.addR.Round(c + p) // NaN or ±Inf, by IEEE rules
	}
	s := m.sum2(c, p)
	if m.sameOut {
		return s
	}
	return m.outR.Round(s)
}

func isSpecial(x float64) bool { return x-x != 0 }

// noAnchor: the grid hangs from the largest term's leading bit.
const noAnchor = math.MinInt

// The anchor is the largest exponent of the block's terms as the hardware
// reads them: e_a+e_b for each nonzero product (a subnormal input at the
// input's emin), and c's exponent (at least the output's emin) unless c
// comes after. anchorExp is the exponent of one finite nonzero value
// clamped at emin, read from its bits: every format's emin is at least
// fp64's -1022, so a float64 subnormal (biased exponent 0, read as -1023)
// clamps as it should.
func anchorExp(x float64, emin int) int {
	return max(int(math.Float64bits(x)>>52&0x7ff)-1023, emin)
}

// sum adds finite terms as the accumulator does and returns the sum rounded
// into Accumulator.
func (m *Model) sum(ts []float64) float64 { return m.sumAt(ts, noAnchor) }

// sumAt is sum with the grid anchored at exponent anchor (noAnchor: at the
// largest term's leading bit).
func (m *Model) sumAt(ts []float64, anchor int) float64 {
	if !m.p.NormalizeEach {
		return m.alignedSum(ts, anchor)
	}
	if m.p.Order == LargestFirst {
		sortByMagnitude(ts)
	}
	if len(ts) == 1 {
		return m.alignedSum(ts, noAnchor)
	}
	acc := ts[0]
	for _, t := range ts[1:] {
		acc = m.sum2(acc, t)
	}
	return acc
}

func (m *Model) sum2(x, y float64) float64 {
	// With exact alignment and no lost carries, two nonzero terms give
	// x+y rounded once into the accumulator: TwoSum and a step to the
	// odd neighbour build the round-to-odd float64 that normalize would
	// (as in exactPairSum), in a few flops instead of the grid's integer
	// sum. The FMA chains (ieee units, the experiments' fp32) spend most
	// of their time here. A zero sum or an overflow takes the general path.
	if m.p.ExtraBits == Unlimited && m.p.CarryBits == Unlimited && x != 0 && y != 0 && !m.forceBig {
		if s := x + y; s != 0 && !math.IsInf(s, 0) {
			bb := s - x
			if err := (x - (s - bb)) + (y - bb); err != 0 && math.Float64bits(s)&1 == 0 {
				s = math.Nextafter(s, math.Copysign(math.Inf(1), err))
			}
			return m.roundAcc(s)
		}
	}
	pair := [2]float64{x, y}
	return m.alignedSum(pair[:], noAnchor)
}

// sortByMagnitude is an insertion sort (stable, no allocation) of a few terms,
// largest magnitude first.
func sortByMagnitude(ts []float64) {
	for i := 1; i < len(ts); i++ {
		t := ts[i]
		j := i
		for ; j > 0 && math.Abs(ts[j-1]) < math.Abs(t); j-- {
			ts[j] = ts[j-1]
		}
		ts[j] = t
	}
}

// String describes the parameters on one line.
func (p Params) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s×%s→%s, k=%d", p.Input.Name(), p.Input.Name(), p.Output.Name(), p.BlockK)
	if p.Product == nil {
		b.WriteString(", exact products")
	} else {
		fmt.Fprintf(&b, ", products %s %v", p.Product.Name(), p.ProductMode)
	}
	if p.NormalizeEach {
		fmt.Fprintf(&b, ", normalise each addition (%v)", p.Order)
	} else {
		b.WriteString(", normalise at the end")
	}
	switch p.ExtraBits {
	case Unlimited:
		b.WriteString(", exact alignment")
	default:
		fmt.Fprintf(&b, ", align %d+%d bits %v", p.Accumulator.Precision()-1, p.ExtraBits, p.Alignment)
		if p.Sticky {
			b.WriteString("+sticky")
		}
		if p.AnchorExponents {
			b.WriteString(" below the largest exponent sum")
		}
	}
	if p.FixedRange {
		b.WriteString(", overflow to Inf, zeros +0")
	}
	if p.CarryBits == Unlimited {
		b.WriteString(", carries unlimited")
	} else {
		fmt.Fprintf(&b, ", %d carry bits", p.CarryBits)
	}
	if p.AddendAfter {
		b.WriteString(", c added after")
	}
	fmt.Fprintf(&b, ", %s %v", p.Accumulator.Name(), p.AccumulatorMode)
	if p.Output != p.Accumulator {
		fmt.Fprintf(&b, ", then %s %v", p.Output.Name(), p.OutputMode)
	}
	return b.String()
}
