package mma

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mwmm/mwmm/format"
)

// A Preset is a named family of units: one hardware generation (or a
// reference arithmetic) with the input and output formats it supports.
type Preset struct {
	Name    string
	Summary string
	// Pairs are the supported (input, output) formats, the default first.
	// An open preset (ieee, exact) accepts any pair; Pairs are examples.
	Pairs [][2]format.Format
	Open  bool
	// Doc cites the paper section behind each parameter and marks those the
	// papers leave open "not measured".
	Doc   string
	build func(in, out format.Format) Params
	// describe, when set, describes the pairs that are not a Model
	// (h100-mma.sync's emulated fp8); ok false for the others.
	describe func(in, out format.Format) (s string, ok bool)
}

// Describe writes the unit of one pair on one line: its parameters, or what
// it does where it is not a Model.
func (p Preset) Describe(in, out format.Format) (string, error) {
	if p.describe != nil {
		if s, ok := p.describe(in, out); ok {
			return s, nil
		}
	}
	q, err := p.Params(in, out)
	if err != nil {
		return "", err
	}
	return q.String(), nil
}

// Params returns the parameters of the preset for the given formats.
func (p Preset) Params(in, out format.Format) (Params, error) {
	if !p.Open {
		ok := false
		var names []string
		for _, pair := range p.Pairs {
			ok = ok || pair[0] == in && pair[1] == out
			names = append(names, pair[0].Name()+"→"+pair[1].Name())
		}
		if !ok {
			return Params{}, fmt.Errorf("mma: %s has no %s→%s unit; it has %s", p.Name, in.Name(), out.Name(), strings.Join(names, ", "))
		}
	}
	q := p.build(in, out)
	q.Name = p.Name + " " + in.Name() + "→" + out.Name()
	return q, nil
}

// nvidia returns the parameters shared by the NVIDIA tensor cores in their
// fp16/bf16/tf32 modes (numerical-behavior-tensor-cores.txt, Conclusions
// 1–5): exact products; one multi-operand adder for the products and c,
// the bits below the grid truncated ("Extra bits in the alignment of
// significands": no guard digit); normalisation only at the end
// ("Normalization in addition", "...in subtraction"); round-toward-zero into
// fp32 ("Rounding modes in tensor core computations"); subnormals kept
// ("Support for subnormal numbers"). The grid hangs from the largest
// exponent sum e_a+e_b (AnchorExponents): Khattak and Mikaitis measured it on
// V100 and A100, we on Hopper; the seed paper's tests cannot tell it from the
// largest product's leading bit. An fp16 output is the fp32 result
// rounded to nearest ("the conversion is performed in software").
func nvidia(in, out format.Format, k, extra, carry int) Params {
	return Params{
		Input: in, Output: out, BlockK: k,
		InputConversion: format.NearestEven,
		Accumulator:     format.Binary32, AccumulatorMode: format.TowardZero,
		ExtraBits: extra, Alignment: Truncate, CarryBits: carry,
		AnchorExponents: true,
		OutputMode:      format.NearestEven,
	}
}

// km25 is the citation of the measurements of V100 and A100 that fixed the
// anchor (docs/hardware/v100-t4-a100.md).
// fhmp is the paper whose measurements the V100, T4 and A100 presets model.
const fhmp = `Fasi, Higham, Mikaitis and Pranesh, "Numerical behavior of NVIDIA
tensor cores", PeerJ Comput. Sci. 7:e330, 2021,
https://doi.org/10.7717/peerj-cs.330 ("FHMP")`

const km25 = `Khattak and Mikaitis, "Accurate Models of NVIDIA Tensor Cores",
arXiv:2512.07004, 2025 ("KM25"), and "Generalized Methodology for
Determining Numerical Features of Hardware Floating-Point Matrix
Multipliers: Part I", IEEE HPEC 2025, arXiv:2510.15884 ("KM-HPEC")`

var presets = []Preset{
	{
		Name:    "v100",
		Summary: "NVIDIA V100 (Volta) tensor cores, 4×4×4, fp16 inputs",
		Pairs:   [][2]format.Format{{format.Binary16, format.Binary32}, {format.Binary16, format.Binary16}},
		Doc: fhmp + `, section "NVIDIA Volta tensor
cores", and ` + km25 + `:
k=4 (FHMP Table 1; KM25 §4.1.1); exact products (FHMP "Accuracy of the dot
products"); the five terms aligned with no guard digit, 0 extra bits: a
{3.23} significand (FHMP "Extra bits in the alignment of significands");
the grid hung from the largest exponent sum e_a+e_b, products not
normalised, c's exponent included (KM25, V100 model; FHMP's tests cannot
tell this from the largest product's leading bit, docs/hardware/v100-t4-a100.md);
carry bits: FHMP measured at least 2 and inferred 3 for terms below 2; with
the exponent-sum anchor a product can reach 4, so 4 carry bits, the fewest
no block can overflow: not measured; normalised only at the end;
round-toward-zero into fp32, also in the final normalisation (FHMP
"Rounding modes...", "Extra bits for carry out"; KM25); fp16 output rounded
to nearest from the fp32 result (FHMP "Rounding modes...": the paper
infers a software conversion; the order of the two roundings is not settled
by KM25 either: not measured); subnormals kept (FHMP "Support for
subnormal numbers").`,
		build: func(in, out format.Format) Params { return nvidia(in, out, 4, 0, 4) },
	},
	{
		Name:    "t4",
		Summary: "NVIDIA T4 (Turing) tensor cores, 4×4×4, fp16 inputs",
		Pairs:   [][2]format.Format{{format.Binary16, format.Binary32}, {format.Binary16, format.Binary16}},
		Doc: `FHMP (see v100), section "NVIDIA Turing tensor cores":
as v100 but with one extra bit at the bottom of the accumulator, a {3.24}
significand; k=4 (Table 1). The grid hung from the largest exponent sum:
not measured on a Turing GPU (neither paper of ` + km25 + `
tests one), inferred: V100 and A100 both have it, and the seed paper found
the T4 differing from them only by the extra bit. 4 carry bits, the same
reasoning as for the V100 (not measured).`,
		build: func(in, out format.Format) Params { return nvidia(in, out, 4, 1, 4) },
	},
	{
		Name:    "a100",
		Summary: "NVIDIA A100 (Ampere) tensor cores: fp16, bf16, tf32 and fp64",
		Pairs: [][2]format.Format{
			{format.Binary16, format.Binary32}, {format.Binary16, format.Binary16},
			{format.BFloat16, format.Binary32}, {format.TF32, format.Binary32},
			{format.Binary64, format.Binary64},
		},
		Doc: `FHMP (see v100), section "NVIDIA Ampere tensor cores",
and ` + km25 + `:
fp16, bf16 and tf32 behave as the T4 ({3.24} alignment, 1 extra bit,
truncation, RZ, end normalisation, subnormals kept, also fp32 subnormal
outputs from bf16 inputs), with the grid hung from the largest exponent sum
(KM25, A100 model). Products per block: 8 for fp16 and bf16 (KM25; KM-HPEC
measured 8 on an A30, the same GA100 chip) and 4 for tf32 (KM25; the
instruction's k=8 is two blocks). Carry bits: KM-HPEC reports 3 on the A30
under its own definition; the presets take the fewest that no block can
overflow with the exponent-sum anchor (5 for 8 products, 4 for 4): not
measured. Not modelled: KM25's lower bound on the anchor for tiny bf16/tf32
products (below 2^-132; docs/hardware/v100-t4-a100.md). tf32 inputs given as
fp32 are truncated to tf32 (the unit reads their top 19 bits): not
measured. fp64 behaves as IEEE 754 arithmetic: round-to-nearest,
normalisation after each addition, not largest-first; modelled as the FMA
chain d = fma(a_i, b_i, d) from c in index order, k=2 from Table 1 (4×2×2):
order and fusion not measured.`,
		build: func(in, out format.Format) Params {
			if in == format.Binary64 {
				return ieee(in, format.Binary64, out, 2)
			}
			if in == format.TF32 {
				p := nvidia(in, out, 4, 1, 4)
				p.InputConversion = format.TowardZero
				return p
			}
			return nvidia(in, out, 8, 1, 5)
		},
	},
	hopperPreset("h100", "NVIDIA H100 (Hopper) tensor cores, measured: fp16, bf16, tf32, fp64, fp8"),
	hopperPreset("h200", "NVIDIA H200: the H100's chip (Hopper), same tensor cores; measured on an H200"),
	{
		Name:    "b200",
		Summary: "NVIDIA B200 (Blackwell), Khattak and Mikaitis's model; not measured here",
		Pairs: [][2]format.Format{
			{format.Binary16, format.Binary32}, {format.Binary16, format.Binary16},
			{format.BFloat16, format.Binary32}, {format.TF32, format.Binary32},
			{format.E4M3, format.Binary32}, {format.E5M2, format.Binary32},
		},
		Doc:   b200Doc,
		build: blackwell,
	},
	{
		Name:    "ieee",
		Summary: "IEEE block FMA (Blanchard et al., Alg. 3.1): exact products, RN accumulation",
		Pairs: [][2]format.Format{
			{format.Binary16, format.Binary32}, {format.Binary16, format.Binary16},
			{format.BFloat16, format.Binary32}, {format.Binary32, format.Binary32},
			{format.Binary64, format.Binary64},
		},
		Open: true,
		Doc: `Blanchard, Higham, Lopez, Mary and Pranesh, "Mixed precision block fused
multiply-add: error analysis and application to GPU tensor cores", SIAM J.
Sci. Comput. 42(3), 2020, https://doi.org/10.1137/19M1289546, and Fasi,
Higham, Lopez, Mary and Mikaitis, "Matrix multiplication in multiword
arithmetic: error analysis and application to GPU tensor cores", SIAM J.
Sci. Comput. 45(1), 2023, https://hal.science/hal-03543925, section 2: the
mixed-precision block FMA with exact products accumulated one by one in the
high precision with round-to-nearest (an FMA chain from c, in index order), the
result rounded to the output: TC32 (fp32 output) or TC16 (fp16 output,
accumulated in fp32). k=4 by default (override with k=). With fp64
inputs it is the fp64 FMA chain.`,
		build: func(in, out format.Format) Params {
			acc := format.Binary32
			if out.Precision() > acc.Precision() {
				acc = out
			}
			return ieee(in, acc, out, 4)
		},
	},
	{
		Name:    "exact",
		Summary: "exact accumulation of each block, one final rounding to nearest",
		Pairs:   [][2]format.Format{{format.Binary16, format.Binary32}, {format.BFloat16, format.Binary32}},
		Open:    true,
		Doc: `A reference: exact products and an exact sum of the block (products and c),
rounded once to nearest-even into the output format. k=4 by default.`,
		build: func(in, out format.Format) Params {
			return Params{
				Input: in, Output: out, BlockK: 4, InputConversion: format.NearestEven,
				Accumulator: out, AccumulatorMode: format.NearestEven,
				ExtraBits: Unlimited, CarryBits: Unlimited, OutputMode: format.NearestEven,
			}
		},
	},
}

// hopperPairs are the formats of the Hopper presets: the tensor-core
// instructions mma.sync and wgmma (identical for fp16, bf16 and tf32), fp64
// (mma.sync), and fp8 as wgmma computes it (mma.sync with fp8 is emulated
// on Hopper and behaves differently; see docs/hardware/hopper.md).
var hopperPairs = [][2]format.Format{
	{format.Binary16, format.Binary32}, {format.Binary16, format.Binary16},
	{format.BFloat16, format.Binary32}, {format.TF32, format.Binary32},
	{format.Binary64, format.Binary64},
	{format.E4M3, format.Binary32}, {format.E5M2, format.Binary32},
	{format.E4M3, format.Binary16}, {format.E5M2, format.Binary16},
}

func hopperPreset(name, summary string) Preset {
	return Preset{
		Name: name, Summary: summary, Pairs: hopperPairs,
		Doc: `Measured on an NVIDIA H200 (driver 580.159.04, CUDA 13.0) on 2026-11-21 by
'mwmm probe --unit gpu:mma.sync|gpu:wgmma' and cross-checked bit for bit on
10^6 random dot products a format (docs/hardware/hopper.md); the H100 is the
same chip. fp16, bf16 → fp32: k=16 (the whole m16n8k16 / m64nNk16 step),
exact products, the terms aligned to the largest exponent SUM e_a+e_b (not
the largest product's leading bit: a product of significands in [2,4) gets
one more bit) with 2 extra bits, truncated, 6 carry bits (16 products near
4 and c sum to 65.4 on an H100 on 2026-11-25, which 5 would wrap), normalised once,
round-toward-zero into fp32; the adder is sign-magnitude: overflow gives
Inf even under round-toward-zero, an underflow to zero gives +0. tf32: the
same with k=8 and 5 carry bits; fp32 inputs are truncated to tf32. fp16 → fp16: the same
grid (10+15 bits) rounded once, to nearest-even, straight into fp16 (no
fp32 step). fp8 (wgmma, QGMMA): k=32; into fp32 the sum keeps only
14 bits (accp=14), 0 extra bits, round-toward-zero; into fp16 3 extra
bits, round-to-nearest-even, 6 carry bits. fp64 (DMMA m8n8k4): an IEEE
fp64 FMA chain in index order.`,
		build: hopper,
	}
}

// hopper returns the parameters measured on Hopper's tensor cores.
func hopper(in, out format.Format) Params {
	if in == format.Binary64 {
		return ieee(in, format.Binary64, out, 4)
	}
	fp8 := in == format.E4M3 || in == format.E5M2
	k := 16
	switch {
	case fp8:
		k = 32
	case in == format.TF32:
		k = 8
	}
	// 16 products below 4 and c can reach 66·2^e: 6 carry bits (measured:
	// 5 would wrap; docs/hardware/hopper.md).
	carry := 5
	if k == 16 {
		carry = 6
	}
	p := nvidia(in, out, k, 2, carry)
	p.FixedRange = true
	if in == format.TF32 {
		p.InputConversion = format.TowardZero
	}
	switch {
	case fp8 && out == format.Binary16:
		p.Accumulator, p.AccumulatorMode, p.ExtraBits, p.CarryBits = format.Binary16, format.NearestEven, 3, 6
	case fp8:
		// Subnormals of the 14-bit sum are not observable (c that small
		// falls below the grid); the probe's fit flushes them.
		p.Accumulator, _ = WithPrecision(format.Binary32.WithSubnormals(false), 14)
		p.ExtraBits, p.CarryBits = 0, Unlimited // measured: at least 5
	case out == format.Binary16:
		p.Accumulator, p.AccumulatorMode, p.ExtraBits = format.Binary16, format.NearestEven, 15
	}
	return p
}

// km25Model is where the b200 preset's parameters come from: the authors'
// published model, which we read; the paper's text we could not.
const km25Model = `KM25's public model of the B200,
models/B200TC.m of https://github.com/north-numerical-computing/MATLAB-tensor-core
at commit b12b5a7 (2026-08-19), which the authors refined until it matched
a B200 on about 10^5 random inputs a format (KM25's abstract; the README
cites the paper as ACM TACO, https://doi.org/10.1145/3830409). We could not
read KM25's text; nothing here was measured on a B200 by us ("not measured")`

const b200Doc = km25Model + `.
fp16, bf16 → fp32, tf32 → fp32 and fp16 → fp16: B200TC.m sets every
parameter as H100TC.m does (the two files differ only in their fp8
branch), so the preset shares the h100 preset's parameters: k=16 (tf32
8), exact products, the grid hung from the exponent sum e_a+e_b
(denorm_prd = 1) with 2 extra bits (neab = 2), truncated, normalised
once, round-toward-zero into fp32, fp16 outputs rounded once to
nearest-even from the same grid, tf32 inputs truncated, subnormals kept
(all from B200TC.m); the carry bits (6 for 16 products, 5 for 8) and the
sign-magnitude range are the h100 preset's, measured on Hopper only (the
model has no carry limit): not measured on a B200. fp8 (e4m3, e5m2) →
fp32: k=32 (the model's fma = 32, two 16-product vectors interleaved),
the same 2 extra bits over a full binary32 accumulator, truncated,
round-toward-zero: unlike Hopper's wgmma, whose fp8 sum keeps 14 bits
(H100TC.m's neab = -10, the h100 preset's accp=14); carry bits unlimited
(not measured). Not modelled: the model's floor under the alignment
exponent (min_exp_limit = -133; -21 for fp16 outputs), which matters only
for blocks whose terms all lie near the bottom of the range; fp8 → fp16
(B200TC.m computes it as fp32). Which instruction the model describes
(mma.sync, or Blackwell's tcgen05.mma) is not stated in what we read; the
repository's validation kernels issue wmma and mma.sync.m16n8k32, so no
separate b200-mma.sync preset: whether the two differ is not measured.`

// blackwell is the b200 preset: Hopper's parameters (shared, as KM25's
// models share them) but for fp8, which sums in full binary32.
func blackwell(in, out format.Format) Params {
	if in != format.E4M3 && in != format.E5M2 {
		return hopper(in, out)
	}
	p := nvidia(in, out, 32, 2, Unlimited)
	p.FixedRange = true
	return p
}

// ieee is the IEEE block FMA: an FMA chain in the accumulator's precision.
func ieee(in, acc, out format.Format, k int) Params {
	return Params{
		Input: in, Output: out, BlockK: k, InputConversion: format.NearestEven,
		Accumulator: acc, AccumulatorMode: format.NearestEven,
		ExtraBits: Unlimited, CarryBits: Unlimited,
		NormalizeEach: true, Order: InOrder,
		OutputMode: format.NearestEven,
	}
}

// Presets lists the presets.
func Presets() []Preset { return append([]Preset(nil), presets...) }

// FindPreset returns the preset of that name (case-insensitive): a model,
// which Lookup builds.
func FindPreset(name string) (Preset, error) {
	for _, p := range presets {
		if strings.EqualFold(p.Name, name) {
			return p, nil
		}
	}
	return Preset{}, unknownUnit(name)
}

// FindUnit returns the preset of that name among Presets and the
// instruction-level units of SyncPresets (which Open builds).
func FindUnit(name string) (Preset, error) {
	for _, p := range Units() {
		if strings.EqualFold(p.Name, name) {
			return p, nil
		}
	}
	return Preset{}, unknownUnit(name)
}

func unknownUnit(name string) error {
	var names []string
	for _, p := range Units() {
		names = append(names, p.Name)
	}
	return fmt.Errorf("mma: unknown unit %q; the presets are %s (add :key=value,... to change a model preset's parameter)", name, strings.Join(names, ", "))
}

// Units lists Presets and then the presets of SyncPresets: every unit Open
// builds from a name alone.
func Units() []Preset {
	us := Presets()
	for _, name := range SyncPresets {
		chip, _, _ := strings.Cut(name, "-")
		us = append(us, syncPreset(name, chip))
	}
	return us
}

// Lookup builds a model from a unit spec and the input and output formats
// (empty for the preset's default pair). A spec is a preset name, optionally
// followed by parameter overrides:
//
//	v100
//	t4:extra=2,carry=unlimited
//	ieee:k=16,acc=fp64
//
// The keys are k, extra (bits, or unlimited), carry (bits, or unlimited),
// align (truncate|rne), sticky (on|off), anchor (exp|lead: AnchorExponents),
// range (ieee|fixed: FixedRange), norm (end|each), order (largest|inorder),
// addend (with|after), products (exact or a format name), productp
// (products rounded to that many bits), productmode, acc (format), accp (the
// accumulator's precision, its range kept), accmode, outmode, convert (the
// input conversion mode) and subnormals, subnormals-in, subnormals-out
// (on|off: kept or flushed to zero, for inputs and outputs or one of them).
// With overrides the preset's format pairs are not enforced.
func Lookup(spec, input, output string) (*Model, error) {
	name, overrides, _ := strings.Cut(spec, ":")
	pre, err := FindPreset(strings.TrimSpace(name))
	if err != nil {
		return nil, err
	}
	in, out := pre.Pairs[0][0], pre.Pairs[0][1]
	if input != "" {
		if in, err = format.Parse(input); err != nil {
			return nil, err
		}
		if output == "" {
			out = defaultOutput(pre, in)
		}
	}
	if output != "" {
		if out, err = format.Parse(output); err != nil {
			return nil, err
		}
	}
	if overrides != "" {
		pre.Open = true
	}
	p, err := pre.Params(in, out)
	if err != nil {
		return nil, err
	}
	if overrides != "" {
		if err := p.apply(overrides); err != nil {
			return nil, fmt.Errorf("mma: unit %q: %w", spec, err)
		}
		p.Name = pre.Name + ":" + overrides + " " + in.Name() + "→" + out.Name()
	}
	return NewModel(p)
}

// defaultOutput is the first output the preset pairs with in, else fp32.
func defaultOutput(p Preset, in format.Format) format.Format {
	for _, pair := range p.Pairs {
		if pair[0] == in {
			return pair[1]
		}
	}
	if in.Precision() > 24 {
		return format.Binary64
	}
	return format.Binary32
}

// apply sets the parameters named in "key=value,key=value".
func (p *Params) apply(overrides string) error {
	seen := map[string]bool{}
	for _, kv := range strings.Split(overrides, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return fmt.Errorf("%q is not key=value", kv)
		}
		key, val = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(val)
		if seen[key] { // the last one would win silently
			return fmt.Errorf("%s is given twice", key)
		}
		seen[key] = true
		if err := p.set(key, val); err != nil {
			var ne *strconv.NumError
			if errors.As(err, &ne) { // not strconv's wording
				err = fmt.Errorf("%q is not a number", ne.Num)
			}
			return fmt.Errorf("%s=%s: %w", key, val, err)
		}
	}
	return nil
}

func (p *Params) set(key, val string) error {
	var err error
	switch key {
	case "k":
		p.BlockK, err = strconv.Atoi(val)
	case "extra":
		p.ExtraBits, err = bitsOrUnlimited(val)
	case "carry":
		p.CarryBits, err = bitsOrUnlimited(val)
	case "align":
		switch strings.ToLower(val) {
		case "truncate", "trunc", "rz":
			p.Alignment = Truncate
		case "rne", "nearest":
			p.Alignment = AlignNearestEven
		default:
			err = fmt.Errorf("want truncate or rne")
		}
	case "sticky":
		p.Sticky, err = onOff(val)
	case "range":
		switch strings.ToLower(val) {
		case "fixed":
			p.FixedRange = true
		case "ieee":
			p.FixedRange = false
		default:
			err = fmt.Errorf("want fixed or ieee")
		}
	case "anchor":
		switch strings.ToLower(val) {
		case "lead":
			p.AnchorExponents = false
		case "exp":
			p.AnchorExponents = true
		default:
			err = fmt.Errorf("want lead or exp")
		}
	case "norm":
		switch strings.ToLower(val) {
		case "end":
			p.NormalizeEach = false
		case "each":
			p.NormalizeEach = true
		default:
			err = fmt.Errorf("want end or each")
		}
	case "order":
		switch strings.ToLower(val) {
		case "largest", "largest-first":
			p.Order = LargestFirst
		case "inorder", "in-order":
			p.Order = InOrder
		default:
			err = fmt.Errorf("want largest or inorder")
		}
	case "addend":
		switch strings.ToLower(val) {
		case "with":
			p.AddendAfter = false
		case "after":
			p.AddendAfter = true
		default:
			err = fmt.Errorf("want with or after")
		}
	case "products":
		if strings.EqualFold(val, "exact") {
			p.Product = nil
			break
		}
		var f format.Format
		if f, err = format.Parse(val); err == nil {
			p.Product = &f
		}
	case "productp":
		var n int
		var f format.Format
		if n, err = strconv.Atoi(val); err == nil {
			if f, err = ProductFormat(n); err == nil {
				p.Product = &f
			}
		}
	case "productmode":
		p.ProductMode, err = format.ParseMode(val)
	case "acc":
		p.Accumulator, err = format.Parse(val)
	case "accp":
		var n int
		if n, err = strconv.Atoi(val); err == nil {
			p.Accumulator, err = WithPrecision(p.Accumulator, n)
		}
	case "accmode":
		p.AccumulatorMode, err = format.ParseMode(val)
	case "outmode":
		p.OutputMode, err = format.ParseMode(val)
	case "convert":
		p.InputConversion, err = format.ParseMode(val)
	case "subnormals", "subnormals-in", "subnormals-out":
		var on bool
		if on, err = onOff(val); err != nil {
			break
		}
		if key != "subnormals-out" {
			p.Input = p.Input.WithSubnormals(on)
		}
		if key != "subnormals-in" {
			sameAcc := p.Accumulator == p.Output
			p.Output = p.Output.WithSubnormals(on)
			if sameAcc {
				p.Accumulator = p.Output
			}
		}
	default:
		return fmt.Errorf("unknown key %q (want k, extra, carry, align, sticky, anchor, range, norm, order, addend, products, productp, productmode, acc, accp, accmode, outmode, convert, subnormals, subnormals-in or subnormals-out)", key)
	}
	return err
}

func bitsOrUnlimited(s string) (int, error) {
	if strings.EqualFold(s, "unlimited") || strings.EqualFold(s, "exact") {
		return Unlimited, nil
	}
	return strconv.Atoi(s)
}

func onOff(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "on", "true", "yes", "1":
		return true, nil
	case "off", "false", "no", "0":
		return false, nil
	}
	return false, fmt.Errorf("want on or off")
}
