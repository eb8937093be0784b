package multiword

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/format"
)

// A Variant is a named multiword algorithm: Table 2.1 of Fasi et al., their
// FABsum with the products of a block in one accumulator (joint) as the
// fused GPU kernel runs it, and the fp8 algorithms of Mary and Mikaitis.
type Variant struct {
	Name string
	Doc  string
	Plan Plan
}

// Variants returns the named variants, in the order 'mwmm gemm --help'
// lists them.
func Variants() []Variant {
	v := []Variant{
		plain("fp32", format.Binary32, 1, "fp32 inputs, one product: the SGEMM baseline on an fp32 unit"),
		plain("fp16", format.Binary16, 1, "A, B rounded to fp16, one product (Table 2.1: 2×2^-11 + n×2^-24)"),
		plain("double-fp16", format.Binary16, 2, "two fp16 words, 3 products (n×2^-24)"),
		plain("bf16", format.BFloat16, 1, "bf16, one product (2×2^-8 + n×2^-24)"),
		plain("double-bf16", format.BFloat16, 2, "two bf16 words, 3 products (3×2^-16 + n×2^-24)"),
		plain("triple-bf16", format.BFloat16, 3, "three bf16 words, 6 products (n×2^-24)"),
		plain("tf32", format.TF32, 1, "TF32, one product"),
		plain("double-tf32", format.TF32, 2, "two TF32 words, 3 products: 3xTF32"),
		fused("double-fp16-fabsum", format.Binary16, 2, true, fusedGroupWide,
			"FABsum on double-fp16, rows/columns scaled by powers of two, the 3 products in blocks of %d sharing one accumulator (joint, smallest product first, each over the block in turn), %s (FABsum-v2; the fused GPU kernels' default)"),
		fused("triple-bf16-fabsum", format.BFloat16, 3, false, fusedGroupWide,
			"FABsum on triple-bf16: the 6 products in blocks of %d sharing one accumulator (joint, smallest product first, each over the block in turn), %s (FABsum-v2; the fused GPU kernels' default)"),
		fused("3xtf32-fabsum", format.TF32, 2, false, fusedGroup,
			"FABsum on 3xTF32: the 3 products in blocks of %d sharing one accumulator (joint, smallest product first, each over the block in turn), %s (FABsum-v2; the fused GPU kernels' default)"),
	}
	for _, f := range []format.Format{format.E4M3, format.E5M2} {
		name := strings.ToLower(f.Name())
		for p, prefix := range []string{"", "double-", "triple-", "quadruple-"} {
			pl := Plan{Low: f, Words: p + 1, Acc: format.Binary32, Out: format.Binary32,
				Scale: true, WordShift: f.Precision()}
			v = append(v, Variant{Name: prefix + name, Plan: pl,
				Doc: fmt.Sprintf("%s, %s, with row/column scaling and words scaled by 2^%d",
					counted(p+1, f.Name()+" word"), counted((p+1)*(p+2)/2, "product"), f.Precision())})
		}
	}
	for i := range v {
		v[i].Plan.Name = v[i].Name
	}
	return v
}

func plain(name string, low format.Format, p int, doc string) Variant {
	return Variant{Name: name, Doc: doc,
		Plan: Plan{Low: low, Words: p, Acc: format.Binary32, Out: format.Binary32}}
}

// The fused GPU kernels' FABsum defaults, in one place since measurements
// move them: the block size trades speed for accuracy. A joint block chains
// P·b products through one tensor-core accumulator, so b must be smaller
// than for A_1B_1 alone: on an H100 (docs/perf/fabsum-kernels.md) b = 64 left
// double-fp16 at 1.29× SGEMM's error at n = 2^11 on (0,1], b = 32 keeps
// double-fp16 (worst 0.63×) and triple-bf16 (0.75×) below SGEMM's error at
// every n from 2^10 to 2^20 on all four bench distributions, for 1.5 % of
// speed. v2: on Hopper's wgmma kernel it runs at v1's speed, while the
// TwoSum pair's temporaries beside an accumulator and a pair per output
// make ptxas spill (in the earlier per-product runs the pair matched v2 to
// the bit). Group 8 (Plan.Group): on Hopper the fp64 additions wait behind
// the tensor cores, and adding 8 blocks in fp32 first took double-fp16 from
// 2.35× to 3.46× SGEMM at n = 8192 (triple-bf16 from 1.57× to 2.26×), with
// a worst error of 0.75× (0.83×) SGEMM's. 3xTF32 took groups once its
// kernel kept more fp64 sums in registers (a third word stage fits): 1.55×
// to 2.20× at n = 8192; its worst error on (0,1] went from 0.98× to 1.07×
// SGEMM's at n = 2^11, where on normal data it was 1.07× without groups
// too (two tf32 words do not hold all 24 bits of an fp32 value).
//
// Joint order by products (JointProducts): each product over the block in
// turn, smallest first, instead of k-step by k-step. The small products
// then meet an accumulator that holds only small products, and the
// truncating adds of the largest one are 2 (4 for tf32) instead of 6 (12)
// per block. At the same speed the worst error on the four distributions
// fell from 0.75× to 0.65× SGEMM's for double-fp16, 0.83× to 0.54× for
// triple-bf16, and 1.07× to 0.77× for 3xTF32, which now meets the target.
// That room pays for group 16 on double-fp16 (worst 0.80×) and
// triple-bf16 (0.73×): half the fp64 flushes, 5 % fewer cycles for
// triple-bf16 at n = 8192. 3xTF32 keeps group 8 (0.93× with 16): its
// margin is the smallest. Group 32 took double-fp16 to 1.13×.
const (
	fusedSum       = bound.FABsumV2
	fusedBlock     = 32
	fusedGroup     = 8
	fusedGroupWide = 16
)

// fused is joint FABsum with the fused kernel's defaults: every product of
// a block in one accumulator, each over the block in turn (JointProducts),
// so no word shift; doc has a %d for the block
// size and a %s for the inter-block sum.
func fused(name string, low format.Format, p int, scale bool, group int, doc string) Variant {
	sum := "each block added in fp64"
	if group > 1 {
		sum = fmt.Sprintf("each %d block sums added in fp32, then in fp64", group)
	}
	return Variant{Name: name, Doc: fmt.Sprintf(doc, fusedBlock, sum),
		Plan: Plan{Low: low, Words: p, Acc: format.Binary32, Out: format.Binary32,
			Sum: fusedSum, Block: fusedBlock, Group: group, FABsumJoint: true, JointOrder: JointProducts, Scale: scale}}
}

// aliases are other names of variants.
var aliases = map[string]string{
	"3xtf32": "double-tf32", "half": "fp16", "double-half": "double-fp16",
	"binary16": "fp16", "double-binary16": "double-fp16", "bfloat16": "bf16", "binary32": "fp32",
}

// Lookup returns the plan of a variant spec: a variant name, optionally
// followed by options that change its plan:
//
//	double-fp16
//	double-fp16:sum=v2,b=256
//	double-fp16:sum=pair,b=64
//	double-fp16:sum=pair,b=64,joint=on
//	triple-bf16:products=all,order=largest
//	double-e4m3:acc=fp16,out=fp64,theta=127
//
// The options are sum (plain|v1|v2|pair; pair is the TwoSum fp32 pair of
// bound.FABsumPair), b (FABsum block size, 0 for one block), group (v2:
// block sums added in groups of g in Acc first, Plan.Group), first (on:
// FABsum for A_1B_1 only, Algorithm 4.4), joint (on: the products of a block
// share one accumulator, Plan.FABsumJoint; needs shift=0; steps or
// products: on, in that Plan.JointOrder; the fabsum variants' products
// order gives way to steps for a b that does not divide 32), products
// (triangle|all), order (smallest|largest), words (p), low, acc and out
// (format names), split (rounding mode of the splitting), seed (of a
// stochastic split), scale (on|off), theta and shift (the word scaling
// exponent t, or "u" for the low format's precision).
func Lookup(spec string) (Plan, error) {
	name, opts, _ := strings.Cut(spec, ":")
	name = strings.ToLower(strings.TrimSpace(name))
	if a, ok := aliases[name]; ok {
		name = a
	}
	var plan Plan
	found := false
	for _, v := range Variants() {
		if v.Name == name {
			plan, found = v.Plan, true
		}
	}
	if !found {
		return Plan{}, fmt.Errorf("multiword: unknown variant %q; variants: %s", name, strings.Join(variantNames(), ", "))
	}
	if opts != "" {
		if err := plan.apply(opts); err != nil {
			return Plan{}, fmt.Errorf("multiword: variant %q: %w", spec, err)
		}
		plan.Name = strings.TrimSpace(spec)
	}
	return plan, plan.Check()
}

func variantNames() []string {
	var ns []string
	for _, v := range Variants() {
		ns = append(ns, v.Name)
	}
	return ns
}

// apply sets the options in "key=value,key=value".
func (p *Plan) apply(opts string) error {
	order := "smallest"
	all, grouped, ordered := false, false, false
	seen := map[string]string{} // canonical key → as written
	for _, kv := range strings.Split(opts, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return fmt.Errorf("%q is not key=value", kv)
		}
		key, val = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(val)
		canon := key
		if c, ok := optionAliases[key]; ok {
			canon = c
		}
		if prev, ok := seen[canon]; ok { // the last one would win silently
			return fmt.Errorf("%s=%s: %s is already given", key, val, prev)
		}
		seen[canon] = key
		var err error
		switch key {
		case "sum", "fabsum":
			p.Sum, err = bound.ParseSummation(val)
		case "b", "block":
			p.Block, err = strconv.Atoi(val)
		case "group", "g":
			p.Group, err = strconv.Atoi(val)
			grouped = true
		case "first":
			p.FABsumFirstOnly, err = onOff(val)
		case "joint":
			switch val {
			case "steps":
				p.FABsumJoint, p.JointOrder, ordered = true, JointSteps, true
			case "products":
				p.FABsumJoint, p.JointOrder, ordered = true, JointProducts, true
			default:
				if p.FABsumJoint, err = onOff(val); err != nil {
					err = fmt.Errorf("joint is on, off, steps or products")
				}
			}
		case "products":
			switch val {
			case "all":
				all = true
			case "triangle":
				all = false
			default:
				err = fmt.Errorf("products is all or triangle")
			}
		case "order":
			if val != "smallest" && val != "largest" {
				err = fmt.Errorf("order is smallest or largest")
			}
			order = val
		case "words", "p":
			p.Words, err = strconv.Atoi(val)
		case "low", "acc", "out":
			var f format.Format
			if f, err = format.Parse(val); err == nil {
				*map[string]*format.Format{"low": &p.Low, "acc": &p.Acc, "out": &p.Out}[key] = f
			}
		case "split":
			p.SplitMode, err = format.ParseMode(val)
		case "seed":
			p.Seed, err = strconv.ParseUint(val, 10, 64)
		case "scale":
			p.Scale, err = onOff(val)
		case "theta":
			p.Theta, err = strconv.ParseFloat(val, 64)
			if err == nil && !(p.Theta > 0) {
				err = fmt.Errorf("theta must be positive")
			}
		case "shift":
			if val == "u" {
				p.WordShift = -1 // resolved below, once low is known
			} else {
				p.WordShift, err = strconv.Atoi(val)
			}
		default:
			err = fmt.Errorf("unknown option %q (options: sum, b, group, first, joint, products, order, words, low, acc, out, split, seed, scale, theta, shift)", key)
		}
		if err != nil {
			var ne *strconv.NumError
			if errors.As(err, &ne) { // not strconv's wording
				err = fmt.Errorf("%q is not a number", ne.Num)
			}
			return fmt.Errorf("%s=%s: %w", key, val, err)
		}
	}
	if p.WordShift == -1 {
		p.WordShift = p.Low.Precision()
	}
	// A block or group without FABsum would be ignored: refuse it, as the
	// CLI refuses -b without --fabsum.
	for _, k := range []string{"b", "group"} {
		if w, ok := seen[k]; ok && p.Sum == bound.Plain {
			return fmt.Errorf("%s needs sum=v1, v2 or pair (the plan's sum is plain)", w)
		}
	}
	// A variant's default group goes with its v2 joint sum: options that
	// leave that (sum=v1, joint=off, ...) drop it unless they set a group.
	if !grouped && (p.Sum != bound.FABsumV2 && p.Sum != bound.FABsumPair || p.Words > 1 && !p.FABsumJoint) {
		p.Group = 0
	}
	// A variant's joint order by products goes with blocks inside one
	// 32-element stage of the GPU kernels (the only ones they can run in
	// that order); other block sizes take joint=steps unless set.
	if !ordered && p.JointOrder == JointProducts && (p.Block <= 0 || 32%p.Block != 0) {
		p.JointOrder = JointSteps
	}
	p.Pairs = nil
	if all {
		p.Pairs = AllPairs(p.Words)
	}
	if order == "largest" {
		p.Pairs = LargestFirst(p.pairs())
	}
	return nil
}

// optionAliases are the second spellings of options.
var optionAliases = map[string]string{"fabsum": "sum", "block": "b", "g": "group", "p": "words"}

func onOff(s string) (bool, error) {
	switch s {
	case "on", "true", "1":
		return true, nil
	case "off", "false", "0":
		return false, nil
	}
	return false, fmt.Errorf("%q is not on or off", s)
}

// String describes the plan in one line.
func (p Plan) String() string {
	var ps []string
	for _, pr := range p.pairs() {
		ps = append(ps, pr.String())
	}
	sum := p.Sum.String()
	if p.Sum != bound.Plain {
		b := "k"
		if p.Block > 0 {
			b = strconv.Itoa(p.Block)
		}
		sum = fmt.Sprintf("FABsum-%s b=%s", p.Sum, b)
		if p.Group > 1 {
			sum += fmt.Sprintf(" group=%d", p.Group)
		}
		if p.FABsumFirstOnly {
			sum += " on A1B1 only"
		}
		if p.FABsumJoint {
			sum += " joint"
			if p.JointOrder == JointProducts {
				sum += " by products"
			}
		}
	}
	words := "words"
	if p.Words == 1 {
		words = "word"
	}
	s := fmt.Sprintf("%s: %d×%s %s, %s→%s, out %s, products %s, sum %s", p.Name, p.Words, p.Low.Name(), words,
		p.Low.Name(), p.Acc.Name(), p.Out.Name(), strings.Join(ps, " "), sum)
	if p.Scale {
		s += ", scaled"
		if p.Theta > 0 {
			s += " θ=" + strconv.FormatFloat(p.Theta, 'g', -1, 64)
		}
	}
	if p.WordShift > 0 {
		s += fmt.Sprintf(", words ×2^%d", p.WordShift)
	}
	return s
}

// counted is "1 product" or "3 products": counts agree with their nouns.
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
