package format

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestE8M0Decode(t *testing.T) {
	for _, c := range []struct {
		code uint64
		want float64
	}{{0, 0x1p-127}, {1, 0x1p-126}, {126, 0.5}, {127, 1}, {128, 2}, {254, 0x1p127}} {
		if got := MXFP8.DecodeScale(c.code); got != c.want {
			t.Errorf("E8M0 %#x = %v, want %v", c.code, got, c.want)
		}
	}
	if v := MXFP4.DecodeScale(0xFF); v == v {
		t.Errorf("E8M0 0xFF = %v, want NaN", v)
	}
	if v := NVFP4.DecodeScale(0x7F); v == v {
		t.Errorf("nvfp4 scale 0x7f = %v, want NaN", v)
	}
}

func TestParseBlockFormat(t *testing.T) {
	for name, want := range map[string]string{"mxfp8": "mxfp8", "MXFP8-E4M3": "mxfp8", "mxfp8-e5m2": "mxfp8-e5m2",
		"mxfp6": "mxfp6", "mxfp6-e3m2": "mxfp6", "mxfp6-e2m3": "mxfp6-e2m3", "mxfp4": "mxfp4", "nvfp4": "nvfp4"} {
		b, err := ParseBlockFormat(name)
		if err != nil || b.Name() != want {
			t.Errorf("ParseBlockFormat(%q) = %v, %v; want %s", name, b, err, want)
		}
	}
	if _, err := ParseBlockFormat("mxint8"); err == nil {
		t.Error("mxint8: no error")
	}
	for _, b := range BlockFormats() {
		want := map[string]struct {
			elem string
			k    int
		}{"mxfp8": {"e4m3", 32}, "mxfp8-e5m2": {"e5m2", 32}, "mxfp6": {"e3m2", 32}, "mxfp6-e2m3": {"e2m3", 32},
			"mxfp4": {"e2m1", 32}, "nvfp4": {"e2m1", 16}}[b.Name()]
		if b.Element().Name() != want.elem+"+sat" || b.BlockSize() != want.k {
			t.Errorf("%s: element %s, block %d; want %s+sat, %d", b.Name(), b.Element().Name(), b.BlockSize(), want.elem, want.k)
		}
	}
}

// quantizeOne quantizes one block and returns the decoded values, the
// elements and the scale.
func quantizeOne(b BlockFormat, src []float64, g float64, rule ScaleRule, m Mode) ([]float64, []float64, Block) {
	dst, elems := make([]float64, len(src)), make([]float64, len(src))
	blk := b.QuantizeBlock(dst, elems, src, g, rule, m, nil)
	return dst, elems, blk
}

// TestBlockHandDerived checks blocks worked out by hand from the
// definitions (docs/formats.md).
func TestBlockHandDerived(t *testing.T) {
	negZero := math.Copysign(0, -1)
	nan := math.NaN()
	for _, c := range []struct {
		name   string
		b      BlockFormat
		g      float64
		rule   ScaleRule
		src    []float64
		code   uint64
		elems  []float64
		values []float64
	}{
		// All zero: amax 0, the smallest E8M0 scale 2^-127 (code 0); signs kept.
		{"all zero", MXFP8, 1, ScaleSpec, []float64{0, negZero, 0}, 0, []float64{0, negZero, 0}, []float64{0, negZero, 0}},
		{"all zero nvfp4", NVFP4, 1, ScaleSpec, []float64{0, negZero}, 0, []float64{0, negZero}, []float64{0, negZero}},
		// Subnormal only: amax 2^-130, ⌊log2⌋ - emax = -130 - 8 = -138,
		// clamped to -127: X = 2^-127, elements 2^-3, -2^-4, 3·2^-5 (e4m3 normals, exact).
		{"subnormal e4m3", MXFP8, 1, ScaleSpec, []float64{0x1p-130, -0x1p-131, 3 * 0x1p-132},
			0, []float64{0x1p-3, -0x1p-4, 3 * 0x1p-5}, []float64{0x1p-130, -0x1p-131, 3 * 0x1p-132}},
		// The same in e2m1 (smallest subnormal 0.5): all round to ±0.
		{"subnormal e2m1", MXFP4, 1, ScaleSpec, []float64{0x1p-130, -0x1p-131, 3 * 0x1p-132},
			0, []float64{0, negZero, 0}, []float64{0, negZero, 0}},
		// NaN or Inf anywhere: scale NaN (E8M0 0xFF, e4m3 0x7f), every value NaN.
		{"NaN", MXFP8, 1, ScaleSpec, []float64{1, nan, 2}, 0xFF, []float64{0, 0, 0}, []float64{nan, nan, nan}},
		{"Inf", MXFP6, 1, ScaleSpec, []float64{1, math.Inf(-1)}, 0xFF, []float64{0, 0}, []float64{nan, nan}},
		{"Inf nvfp4", NVFP4, 1, ScaleSpec, []float64{math.Inf(1), 0}, 0x7F, []float64{0, 0}, []float64{nan, nan}},
		// Spanning the range in e4m3: amax 1000, ⌊log2⌋ = 9, X = 2^(9-8) = 2
		// (code 128): 1000/2 = 500 clips to 448; 250 → 256 (spacing 16 in
		// [128, 256)); 1/2 exact; 2^-11 below half of 2^-9 → 0.
		{"span spec", MXFP8, 1, ScaleSpec, []float64{1000, 1, 0x1p-10, 500},
			128, []float64{448, 0.5, 0, 256}, []float64{896, 1, 0, 512}},
		// noclip: 500 > 448 needs X = 4 (code 129): 250 → 256, 125 → 128 (spacing 8), 1/4 exact.
		{"span noclip", MXFP8, 1, ScaleNoClip, []float64{1000, 1, 0x1p-10, 500},
			129, []float64{256, 0.25, 0, 128}, []float64{1024, 1, 0, 512}},
		// e2m1, amax 5: ⌊log2 5⌋ - 2 = 0, X = 1: 5 is a tie between 4 and 6 → 4 (even); 0.75 → 1 (tie, even); 0.25 → 0.
		{"mxfp4 ties", MXFP4, 1, ScaleSpec, []float64{5, 0.75, -0.25}, 127, []float64{4, 1, negZero}, []float64{4, 1, negZero}},
		// nvfp4 with g = 1: amax 6 → scale 6/6 = 1 (e4m3 code 0x38); 0.25 ties to 0.
		{"nvfp4 exact", NVFP4, 1, ScaleSpec, []float64{6, 3, 1.5, 0.25}, 0x38, []float64{6, 3, 1.5, 0}, []float64{6, 3, 1.5, 0}},
		// amax 7 → 7/6 = 1.1666…, nearest e4m3 1.125 (code 0x39): 7/1.125 =
		// 6.2 clips to 6 → 6.75; 1/1.125 = 0.888… → 1 → 1.125.
		{"nvfp4 spec clips", NVFP4, 1, ScaleSpec, []float64{7, 1}, 0x39, []float64{6, 1}, []float64{6.75, 1.125}},
		// noclip: 7/6 rounded up in e4m3 is 1.25 (code 0x3a): 7/1.25 = 5.6 → 6 → 7.5; 1/1.25 = 0.8 → 1 → 1.25.
		{"nvfp4 noclip", NVFP4, 1, ScaleNoClip, []float64{7, 1}, 0x3A, []float64{6, 1}, []float64{7.5, 1.25}},
		// g = 2^-8: amax 6·2^-8 maps to scale 1 again.
		{"nvfp4 tensor scale", NVFP4, 0x1p-8, ScaleSpec, []float64{6 * 0x1p-8, -0x1p-8}, 0x38, []float64{6, -1}, []float64{6 * 0x1p-8, -0x1p-8}},
		// An exact tie in the quotient: 5·1.125 / 1.125 = 5, a tie between 4
		// and 6 in e2m1 → 4; one ulp above it rounds up to 6.
		{"nvfp4 tie", NVFP4, 1, ScaleSpec, []float64{7, 5 * 1.125}, 0x39, []float64{6, 4}, []float64{6.75, 4.5}},
		{"nvfp4 above tie", NVFP4, 1, ScaleSpec, []float64{7, math.Nextafter(5*1.125, 10)}, 0x39, []float64{6, 6}, []float64{6.75, 6.75}},
	} {
		values, elems, blk := quantizeOne(c.b, c.src, c.g, c.rule, NearestEven)
		if blk.ScaleCode != c.code {
			t.Errorf("%s: scale code %#x (%v), want %#x", c.name, blk.ScaleCode, blk.Scale, c.code)
		}
		if d := c.b.DecodeScale(blk.ScaleCode); !identical(d, blk.Scale) {
			t.Errorf("%s: scale %v, its code decodes to %v", c.name, blk.Scale, d)
		}
		for i := range c.src {
			if !identical(elems[i], c.elems[i]) || !identical(values[i], c.values[i]) {
				t.Errorf("%s: %v → element %v, value %v; want %v, %v", c.name, c.src[i], elems[i], values[i], c.elems[i], c.values[i])
			}
		}
	}
	if g := NVFP4.TensorScale(2688); g != 1 {
		t.Errorf("TensorScale(6·448) = %v, want 1", g)
	}
	if g := NVFP4.TensorScale(1); g != float64(float32(1.0/2688)) {
		t.Errorf("TensorScale(1) = %v, want float32(1/2688)", g)
	}
	if g := MXFP8.TensorScale(1e6); g != 1 {
		t.Errorf("MX TensorScale = %v, want 1", g)
	}
}

// TestBlockElementsExhaustive: with the scale pinned to 1 (a block holding
// 2^emax_elem, or 6 for nvfp4 with g = 1), every element rounds exactly as
// the element format's own Round, in every deterministic mode, for every
// bf16 value x (all exponents and leading bits) and its float32
// neighbours (ties and near-ties).
func TestBlockElementsExhaustive(t *testing.T) {
	t.Parallel()
	xs := subnormalInputs()
	for _, b := range BlockFormats() {
		pin := math.Ldexp(1, b.emaxElem)
		if b.nv {
			pin = 6
		}
		for _, m := range Modes() {
			if m.IsStochastic() {
				continue
			}
			for _, x := range xs {
				if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > pin {
					continue // they would change the scale
				}
				_, elems, blk := quantizeOne(b, []float64{pin, x}, 1, ScaleSpec, m)
				if blk.Scale != 1 {
					t.Fatalf("%s: scale %v with amax %v, want 1", b.Name(), blk.Scale, pin)
				}
				if want := b.elem.Round(x, m); !identical(elems[1], want) {
					t.Fatalf("%s %v: element of %v = %v, %s gives %v", b.Name(), m, x, elems[1], b.elem.Name(), want)
				}
			}
		}
	}
}

// TestNVFP4ElementsOracle: with a scale that is not a power of two, the
// quotient x/step is inexact; the element must still be the rounding of the
// exact quotient. The oracle compares x with each e2m1 value times step and
// with the midpoints, all exact in float64, for values near every decision
// point.
func TestNVFP4ElementsOracle(t *testing.T) {
	grid := []float64{0, 0.5, 1, 1.5, 2, 3, 4, 6}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, s := range []float64{1.125, 1.375, 0.875 * 0x1p-6, 448, 0x1p-9 * 3} {
		g := float64(float32(0.7)) // a float32 tensor scale: step = s·g is exact
		step := s * g
		var xs []float64
		for i := range grid {
			for _, v := range []float64{grid[i], (grid[i] + grid[min(i+1, 7)]) / 2} {
				p := v * step
				for d := -3; d <= 3; d++ {
					xs = append(xs, math.Float64frombits(math.Float64bits(p)+uint64(d)))
				}
			}
		}
		for range 2000 {
			xs = append(xs, rng.Float64()*6*step)
		}
		for _, x := range xs {
			if !(x >= 0 && x <= 6*step) {
				continue
			}
			// Oracle, round to nearest even: the largest grid value k with
			// grid[k]·step ≤ x, then compare x with the midpoint.
			k := 0
			for k+1 < len(grid) && grid[k+1]*step <= x {
				k++
			}
			want := grid[k]
			if k+1 < len(grid) {
				mid := (grid[k] + grid[k+1]) / 2 * step
				if x > mid || x == mid && k%2 == 1 {
					want = grid[k+1]
				}
			}
			if got := NVFP4.roundElement(x, step, NearestEven, nil); got != want {
				t.Fatalf("scale %v: element of %v (quotient %v) = %v, oracle %v", s, x, x/step, got, want)
			}
			if got := NVFP4.roundElement(-x, step, NearestEven, nil); got != -want {
				t.Fatalf("scale %v: element of %v = %v, oracle %v", s, -x, got, -want)
			}
		}
	}
}

// TestQuantizeRows: blocks restart at each row; a short last block.
func TestQuantizeRows(t *testing.T) {
	src := make([]float64, 70)
	for i := range src {
		src[i] = float64(i + 1)
	}
	dst := make([]float64, len(src))
	scales := MXFP4.Quantize(dst, nil, src, 35, 1, ScaleSpec, NearestEven, nil, nil)
	// Rows [1..35] and [36..70]: blocks of 32 and 3 in each.
	if len(scales) != 4 {
		t.Fatalf("%d blocks, want 4", len(scales))
	}
	// Block 2 is {33, 34, 35}: amax 35, ⌊log2⌋ = 5, X = 2^3 (code 130); 33/8 = 4.125 → 4 → 32.
	if scales[1].ScaleCode != 130 || dst[32] != 32 {
		t.Errorf("block {33,34,35}: scale code %d, 33 → %v; want 130, 32", scales[1].ScaleCode, dst[32])
	}
	// In place gives the same.
	in := append([]float64(nil), src...)
	MXFP4.Quantize(in, nil, in, 35, 1, ScaleSpec, NearestEven, nil, nil)
	for i := range in {
		if in[i] != dst[i] {
			t.Fatalf("in place: element %d = %v, want %v", i, in[i], dst[i])
		}
	}
}

// TestQuantizeMatchesQuantizeBlock: the slice quantizer (elements rounded
// all at once, decision points and underflows fixed afterwards) gives what
// QuantizeBlock gives block by block, in every deterministic mode and both
// scale rules, on values spread over many binades with zeros, ties, NaN and
// Inf mixed in.
func TestQuantizeMatchesQuantizeBlock(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	src := make([]float64, 5000)
	for i := range src {
		switch rng.IntN(20) {
		case 0:
			src[i] = 0
		case 1:
			src[i] = math.Inf(1 - 2*rng.IntN(2))
		case 2:
			src[i] = math.NaN()
		case 3, 4: // a tie or neighbour in a block scaled by 1.125 (nvfp4) or a power of two
			src[i] = float64(rng.IntN(13)) * 0.25 * []float64{1, 1.125, 0x1p-130}[rng.IntN(3)]
		default:
			src[i] = math.Ldexp(rng.Float64()-0.5, rng.IntN(300)-150)
		}
	}
	for _, b := range BlockFormats() {
		for _, rule := range []ScaleRule{ScaleSpec, ScaleNoClip} {
			for _, m := range Modes() {
				if m.IsStochastic() {
					continue
				}
				g := b.TensorScale(AbsMax(src))
				dst, elems := make([]float64, len(src)), make([]float64, len(src))
				scales := b.Quantize(dst, elems, src, 70, g, rule, m, nil, nil)
				k := 0
				for row := 0; row < len(src); row += 70 {
					for lo := row; lo < min(row+70, len(src)); lo += b.BlockSize() {
						hi := min(lo+b.BlockSize(), row+70, len(src))
						wd, we, blk := quantizeOne(b, src[lo:hi], g, rule, m)
						if got := scales[k]; got.ScaleCode != blk.ScaleCode || !identical(got.Scale, blk.Scale) {
							t.Fatalf("%s %v %v: block %d scale %+v, QuantizeBlock %+v", b.Name(), rule, m, k, got, blk)
						}
						k++
						for i := lo; i < hi; i++ {
							if !identical(dst[i], wd[i-lo]) || !identical(elems[i], we[i-lo]) {
								t.Fatalf("%s %v %v: %v → %v (element %v), QuantizeBlock %v (%v)", b.Name(), rule, m, src[i], dst[i], elems[i], wd[i-lo], we[i-lo])
							}
						}
					}
				}
				if k != len(scales) {
					t.Fatalf("%s: %d scales, want %d", b.Name(), len(scales), k)
				}
			}
		}
	}
}
