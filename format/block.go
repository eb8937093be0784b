package format

import (
	"fmt"
	"math"
	"strings"
)

// Block-scaled formats: OCP Microscaling (MX) v1.0 and NVIDIA's NVFP4. A
// block of k consecutive values V_i shares one scale X; each is stored as
// an element P_i of a small format, and stands for X·P_i (NVFP4: X·P_i·g
// with a per-tensor float32 g). docs/formats.md gives the sources.
//
//	name        element  k   scale
//	mxfp8       e4m3     32  E8M0 (a power of two 2^(c-127), c = 0..254; 0xFF NaN)
//	mxfp8-e5m2  e5m2     32  E8M0
//	mxfp6       e3m2     32  E8M0   (mxfp6-e3m2)
//	mxfp6-e2m3  e2m3     32  E8M0
//	mxfp4       e2m1     32  E8M0
//	nvfp4       e2m1     16  e4m3 (positive), and a per-tensor float32 scale
//
// Quantizing a block (ScaleSpec): MX takes X = 2^(⌊log2 amax⌋ - emax_elem),
// amax = max|V_i| and emax_elem the exponent of the element's largest
// binade, the shared exponent clamped below at -127 and NaN above 127; the
// elements are V_i/X rounded and clamped to ±max (so values near amax may
// clip: amax/X reaches almost 2^(emax_elem+1)). NVFP4 takes g = amax of the
// tensor/(6·448) as a float32 and X = amax/(6g) rounded to nearest e4m3.
// ScaleNoClip rounds the scale up instead (MX: the smallest power of two
// with amax/X ≤ max; NVFP4: X rounded up in e4m3), so that no element
// clips. A NaN or ±Inf in a block makes its scale NaN and every value of
// the block NaN; an all-zero block gets the smallest scale and zeros.

// ScaleRule chooses a block's scale.
type ScaleRule uint8

const (
	ScaleSpec   ScaleRule = iota // the specification's choice (may clip values near amax)
	ScaleNoClip                  // rounded up so that no element clips
)

func (r ScaleRule) String() string {
	switch r {
	case ScaleSpec:
		return "spec"
	case ScaleNoClip:
		return "noclip"
	}
	return fmt.Sprintf("ScaleRule(%d)", r)
}

// ParseScaleRule reads "spec" or "noclip".
func ParseScaleRule(s string) (ScaleRule, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "spec", "floor":
		return ScaleSpec, nil
	case "noclip", "no-clip", "ceil":
		return ScaleNoClip, nil
	}
	return 0, fmt.Errorf("format: unknown scale rule %q: spec or noclip", s)
}

// BlockFormat is a block-scaled format.
type BlockFormat struct {
	name      string
	elem      Format // the element format, saturating
	blockSize int
	nv        bool // NVFP4: e4m3 block scales and a per-tensor scale; else E8M0
	emaxElem  int  // exponent of the element format's largest binade
	// fine has one more bit than the elements: its values are the
	// elements' values and midpoints, where rounding decides.
	fine Format
}

var (
	MXFP8     = newMX("mxfp8", E4M3)
	MXFP8E5M2 = newMX("mxfp8-e5m2", E5M2)
	MXFP6     = newMX("mxfp6", E3M2)
	MXFP6E2M3 = newMX("mxfp6-e2m3", E2M3)
	MXFP4     = newMX("mxfp4", E2M1)
	NVFP4     = BlockFormat{name: "nvfp4", elem: E2M1.WithSaturation(true), blockSize: 16, nv: true, emaxElem: E2M1.Emax(), fine: finer(E2M1)}
)

func newMX(name string, elem Format) BlockFormat {
	return BlockFormat{name: name, elem: elem.WithSaturation(true), blockSize: 32, emaxElem: elem.Emax(), fine: finer(elem)}
}

func finer(f Format) Format {
	return mustNew(Spec{Name: f.Name() + "-fine", P: f.Precision() + 1, Emin: f.Emin(), Emax: f.Emax() + 1, Subnormals: true, Specials: NoSpecials})
}

// BlockFormats lists the block-scaled formats.
func BlockFormats() []BlockFormat {
	return []BlockFormat{MXFP8, MXFP8E5M2, MXFP6, MXFP6E2M3, MXFP4, NVFP4}
}

var blockAliases = map[string]string{
	"mxfp8-e4m3": "mxfp8", "mxfp6-e3m2": "mxfp6", "mxfp4-e2m1": "mxfp4", "nvfp4-e2m1": "nvfp4",
}

// ParseBlockFormat finds a block-scaled format by name, case-insensitively.
func ParseBlockFormat(name string) (BlockFormat, error) {
	s := strings.ToLower(strings.TrimSpace(name))
	if a, ok := blockAliases[s]; ok {
		s = a
	}
	var names []string
	for _, b := range BlockFormats() {
		if b.name == s {
			return b, nil
		}
		names = append(names, b.name)
	}
	return BlockFormat{}, fmt.Errorf("format: unknown block format %q; valid: %s (and mxfp8-e4m3, mxfp6-e3m2)", name, strings.Join(names, ", "))
}

// Name is the format's name, as ParseBlockFormat accepts it.
func (b BlockFormat) Name() string { return b.name }

func (b BlockFormat) String() string { return b.name }

// Element is the element format (saturating: the elements clamp to ±max).
func (b BlockFormat) Element() Format { return b.elem }

// BlockSize is the number of values that share a scale.
func (b BlockFormat) BlockSize() int { return b.blockSize }

// ScaleName names the scale's format: "e8m0" or "e4m3".
func (b BlockFormat) ScaleName() string {
	if b.nv {
		return "e4m3"
	}
	return "e8m0"
}

// HasTensorScale reports whether the format has a per-tensor scale (NVFP4).
func (b BlockFormat) HasTensorScale() bool { return b.nv }

// TensorScale is the per-tensor scale for a tensor whose largest finite
// magnitude is amax: 1 for the MX formats; for NVFP4 amax/(6·448) as a
// float32, so that block scales fit e4m3 (1 when amax is 0 or not finite).
func (b BlockFormat) TensorScale(amax float64) float64 {
	if !b.nv || !(amax > 0) || math.IsInf(amax, 0) {
		return 1
	}
	g := float64(float32(amax / (b.elem.MaxFinite() * E4M3.MaxFinite())))
	if g == 0 { // amax below float32's range: no per-tensor help
		return math.SmallestNonzeroFloat32
	}
	return g
}

// E8M0 scale codes: the value 2^(c-127) for c = 0..254, NaN for 0xFF.
const e8m0NaN = 0xFF

// DecodeScale is the value of a scale code: E8M0 for MX, e4m3 for NVFP4.
func (b BlockFormat) DecodeScale(code uint64) float64 {
	if b.nv {
		v, err := E4M3.Decode(code)
		if err != nil {
			return math.NaN()
		}
		return v
	}
	if code >= e8m0NaN {
		return math.NaN()
	}
	return math.Ldexp(1, int(code)-127)
}

// Block is a quantized block's scale: its code (E8M0, or e4m3 for NVFP4)
// and its value (NaN for a block with NaN or Inf).
type Block struct {
	ScaleCode uint64
	Scale     float64
}

// QuantizeBlock quantizes one block src (at most BlockSize values) with the
// per-tensor scale g (see TensorScale; 1 for MX): it stores the elements
// P_i in elems (if not nil) and the values they stand for, X·P_i·g, in dst
// (if not nil), and returns the scale. Elements round in mode m (rnd is the
// Source of the stochastic modes).
func (b *BlockFormat) QuantizeBlock(dst, elems, src []float64, g float64, rule ScaleRule, m Mode, rnd Source) Block {
	if len(src) > b.blockSize || dst != nil && len(dst) != len(src) || elems != nil && len(elems) != len(src) {
		panic(fmt.Sprintf("format: QuantizeBlock of %d values into %d and %d (block size %d)", len(src), len(dst), len(elems), b.blockSize))
	}
	amax := 0.0
	special := false
	for _, x := range src {
		a := math.Abs(x)
		if a != a || math.IsInf(a, 0) {
			special = true
		}
		amax = max(amax, a)
	}
	var blk Block
	if b.nv {
		blk = b.nvScale(amax, g, rule)
	} else {
		blk = b.mxScale(amax, rule)
	}
	if special || blk.Scale != blk.Scale {
		blk = Block{ScaleCode: e8m0NaN, Scale: math.NaN()}
		if b.nv {
			blk.ScaleCode = E4M3.nanCode()
		}
		for i := range src {
			if dst != nil {
				dst[i] = math.NaN()
			}
			if elems != nil {
				elems[i] = 0
			}
		}
		return blk
	}
	step := blk.Scale * g // exact: ≤ 4 significant bits times a float32 (or a power of two)
	for i, x := range src {
		if amax == 0 { // the scale may be 0 (nvfp4): the zeros stay
			if elems != nil {
				elems[i] = x
			}
			if dst != nil {
				dst[i] = x
			}
			continue
		}
		e := b.roundElement(x, step, m, rnd)
		if elems != nil {
			elems[i] = e
		}
		if dst != nil {
			dst[i] = e * step // exact: 2 to 4 bits times step
		}
	}
	return blk
}

// mxScale is the E8M0 scale of a block whose largest magnitude is amax.
func (b *BlockFormat) mxScale(amax float64, rule ScaleRule) Block {
	if amax == 0 {
		return Block{ScaleCode: 0, Scale: math.Ldexp(1, -127)}
	}
	if math.IsInf(amax, 0) || amax != amax {
		return Block{ScaleCode: e8m0NaN, Scale: math.NaN()}
	}
	_, e := math.Frexp(amax) // amax ∈ [2^(e-1), 2^e)
	shared := e - 1 - b.emaxElem
	if rule == ScaleNoClip && math.Ldexp(amax, -shared) > b.elem.MaxFinite() {
		shared++ // one binade more always suffices: amax/2^shared < 2^(emax+1)
	}
	switch {
	case shared > 127:
		return Block{ScaleCode: e8m0NaN, Scale: math.NaN()}
	case shared < -127:
		shared = -127
	}
	return Block{ScaleCode: uint64(shared + 127), Scale: math.Ldexp(1, shared)}
}

// nvScale is the e4m3 scale of a block whose largest magnitude is amax,
// under the per-tensor scale g.
func (b *BlockFormat) nvScale(amax, g float64, rule ScaleRule) Block {
	if amax == 0 {
		return Block{}
	}
	if math.IsInf(amax, 0) || amax != amax {
		return Block{ScaleCode: E4M3.nanCode(), Scale: math.NaN()}
	}
	u := amax / (b.elem.MaxFinite() * g) // the scale that maps amax to 6
	sat := E4M3.WithSaturation(true)
	var s float64
	if rule == ScaleNoClip {
		s = sat.Round(u, Up)
	} else {
		s = sat.Round(u, NearestEven)
	}
	if s == 0 {
		// Below e4m3's smallest subnormal: that one, the finest scale there
		// is (a zero scale would lose the block).
		s = E4M3.MinSubnormal()
	}
	c, err := E4M3.Encode(s)
	if err != nil {
		panic(err)
	}
	return Block{ScaleCode: c, Scale: s}
}

// roundElement rounds x/step to the element format in mode m, as if the
// quotient were exact. The float64 quotient q is within half an ulp of it,
// and the only float64 there is q itself; so only where q is a point at
// which rounding decides (a value or a midpoint of the element format: a
// value of fine) can the exact quotient round otherwise, and there the
// sign of the exact residual x - q·step says to which side it lies.
func (b *BlockFormat) roundElement(x, step float64, m Mode, rnd Source) float64 {
	q := x / step
	if q == 0 && x != 0 {
		q = math.Copysign(math.SmallestNonzeroFloat64, x) // underflow: keep the sign and nonzero-ness
	}
	if m.IsStochastic() {
		return b.elem.RoundRand(q, m, rnd)
	}
	if !b.nv && q != 0 && math.Abs(q) >= 0x1p-1022 {
		return b.elem.Round(q, m) // MX: step is a power of two, q exact
	}
	if math.Abs(q) > b.fine.MaxFinite() || b.fine.Round(q, TowardZero) != q {
		return b.elem.Round(q, m) // no decision point: the exact quotient rounds alike
	}
	switch r := math.FMA(-q, step, x); { // step > 0
	case r > 0:
		return b.elem.Round(math.Nextafter(q, math.Inf(1)), m)
	case r < 0:
		return b.elem.Round(math.Nextafter(q, math.Inf(-1)), m)
	}
	return b.elem.Round(q, m)
}

// Quantize quantizes src in rows of rowLen values (0: one row), blocks of
// BlockSize starting afresh in each row (the last block of a row may be
// shorter), as QuantizeBlock does with the per-tensor scale g; it writes
// the values X·P_i·g to dst and, if elems is not nil, the elements P_i to
// elems (either may be src), and returns the blocks' scales, appended to
// scales. The elements round as a slice (RoundSlice, in parallel; the
// stochastic modes draw from rnd as RoundSlice does, so they differ from
// QuantizeBlock's draws).
func (b *BlockFormat) Quantize(dst, elems, src []float64, rowLen int, g float64, rule ScaleRule, m Mode, rnd Source, scales []Block) []Block {
	if len(dst) != len(src) || elems != nil && len(elems) != len(src) {
		panic(fmt.Sprintf("format: Quantize into %d values and %d elements from %d", len(dst), len(elems), len(src)))
	}
	if rowLen <= 0 {
		rowLen = max(len(src), 1)
	}
	// The quotients x/step, block by block, then rounded all at once.
	q := make([]float64, len(src))
	steps := make([]float64, 0, len(src)/b.blockSize+1)
	first := len(scales)
	for row := 0; row < len(src); row += rowLen {
		end := min(row+rowLen, len(src))
		for lo := row; lo < end; lo += b.blockSize {
			hi := min(lo+b.blockSize, end)
			blk, step := b.blockScale(src[lo:hi], g, rule)
			scales = append(scales, blk)
			steps = append(steps, step)
			for i := lo; i < hi; i++ {
				q[i] = src[i] / step // ±0/0 and x/NaN: NaN, as the block's values must be
				if step == 0 {
					q[i] = src[i]
				}
			}
		}
	}
	e := make([]float64, len(src))
	b.elem.RoundSlice(e, q, m, rnd)
	var onFine []float64
	if b.nv && !m.IsStochastic() {
		onFine = make([]float64, len(src))
		b.fine.RoundSlice(onFine, q, TowardZero, nil)
	}
	k := 0 // block index
	for row := 0; row < len(src); row += rowLen {
		end := min(row+rowLen, len(src))
		for lo := row; lo < end; lo += b.blockSize {
			hi := min(lo+b.blockSize, end)
			step := steps[k]
			blk := scales[first+k]
			k++
			for i := lo; i < hi; i++ {
				x, ei := src[i], e[i]
				switch {
				case blk.Scale != blk.Scale: // a NaN or Inf in the block
					ei = 0
				case step == 0: // all zero: the zeros stay
				case q[i] == 0 && x != 0, // underflow in x/step
					onFine != nil && onFine[i] == q[i] && math.Abs(q[i]) <= b.fine.MaxFinite() && !m.IsStochastic(): // a decision point
					ei = b.roundElement(x, step, m, rnd)
				}
				v := ei * step
				if blk.Scale != blk.Scale {
					v = math.NaN()
				} else if step == 0 {
					v = x
				}
				if elems != nil {
					elems[i] = ei
				}
				dst[i] = v
			}
		}
	}
	return scales
}

// blockScale is the scale of the block src and the step X·g its elements
// are multiples of (0 for an all-zero block, NaN for one with NaN or Inf).
func (b *BlockFormat) blockScale(src []float64, g float64, rule ScaleRule) (Block, float64) {
	amax := 0.0
	for _, x := range src {
		amax = max(amax, math.Abs(x)) // NaN propagates
	}
	var blk Block
	switch {
	case amax != amax || math.IsInf(amax, 0):
		blk = Block{ScaleCode: e8m0NaN, Scale: math.NaN()}
		if b.nv {
			blk.ScaleCode = E4M3.nanCode()
		}
		return blk, math.NaN()
	case b.nv:
		blk = b.nvScale(amax, g, rule)
	default:
		blk = b.mxScale(amax, rule)
	}
	if blk.Scale != blk.Scale {
		return blk, math.NaN()
	}
	if amax == 0 {
		return blk, 0
	}
	return blk, blk.Scale * g
}

// AbsMax is the largest finite magnitude in xs (0 if none): what
// TensorScale takes.
func AbsMax(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		if a := math.Abs(x); a > m && !math.IsInf(a, 0) {
			m = a
		}
	}
	return m
}
