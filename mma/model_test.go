package mma

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/format"
)

// bigRound rounds x correctly to f (subnormals on, no overflow) in a mode
// math/big knows: the oracle of these tests.
func bigRound(t testing.TB, x *big.Float, f format.Format, mode big.RoundingMode) float64 {
	t.Helper()
	if x.Sign() == 0 {
		return 0
	}
	prec := f.Precision()
	if e := x.MantExp(nil) - 1; e < f.Emin() {
		prec -= f.Emin() - e // subnormal: fewer bits
	}
	if prec < 1 {
		// Below half the smallest subnormal's spacing: compare with it.
		tiny := new(big.Float).SetMantExp(big.NewFloat(1), f.Emin()-f.Precision()+1)
		ax := new(big.Float).Abs(x)
		up := mode == big.AwayFromZero || mode == big.ToPositiveInf && x.Sign() > 0 || mode == big.ToNegativeInf && x.Sign() < 0
		half := new(big.Float).Quo(tiny, big.NewFloat(2))
		if mode == big.ToNearestEven && ax.Cmp(half) > 0 {
			up = true
		}
		v := 0.0
		if up {
			v, _ = tiny.Float64()
		}
		return math.Copysign(v, float64(x.Sign()))
	}
	r := new(big.Float).SetPrec(uint(prec)).SetMode(mode).Set(x)
	v, acc := r.Float64()
	if acc != big.Exact || math.Abs(v) > f.MaxFinite() {
		t.Fatalf("oracle: %v does not fit %s", r, f.Name())
	}
	return v
}

func exactSum(c float64, a, b []float64) *big.Float {
	s := new(big.Float).SetPrec(4096).SetFloat64(c)
	for i := range a {
		p := new(big.Float).SetPrec(4096).SetFloat64(a[i])
		p.Mul(p, new(big.Float).SetFloat64(b[i]))
		s.Add(s, p)
	}
	return s
}

// randomIn draws values of f: random significands and exponents over the
// whole range (subnormals included), mixed signs, some zeros.
func randomIn(rng *rand.Rand, f format.Format, lo, hi int) float64 {
	if rng.IntN(16) == 0 {
		return 0
	}
	p := f.Precision()
	m := float64(rng.Int64N(1<<(p-1)) + 1<<(p-1))
	e := lo + rng.IntN(hi-lo+1)
	x := f.Round(math.Ldexp(m, e-p+1), format.TowardZero)
	if rng.IntN(2) == 0 {
		x = -x
	}
	return x
}

// randomCase builds a dot product with cancellation and wide exponent
// spreads, the inputs in `in` and c in fp32.
func randomCase(rng *rand.Rand, in format.Format, k int) (a, b []float64, c float64) {
	a, b = make([]float64, k), make([]float64, k)
	spread := []int{2, 8, 30}[rng.IntN(3)]
	lo, hi := max(in.Emin()-in.Precision()+1, -spread), min(in.Emax(), spread)
	for i := range a {
		a[i] = randomIn(rng, in, lo, hi)
		b[i] = randomIn(rng, in, lo, hi)
	}
	switch rng.IntN(4) {
	case 0:
		c = 0
	case 1: // cancel most of the products
		s, _ := exactSum(0, a, b).Float64()
		c = -format.Binary32.Round(s, format.NearestEven)
	default:
		c = randomIn(rng, format.Binary32, 2*lo, 2*hi)
	}
	return a, b, c
}

// The exact-accumulation model with one final rounding to nearest is the
// correctly rounded dot product of each block.
func TestExactMatchesBig(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, in := range []format.Format{format.Binary16, format.BFloat16, format.TF32, format.E4M3, format.Binary32} {
		for _, k := range []int{1, 3, 4, 9} {
			u, err := Lookup("exact:k=4", in.Name(), "fp32")
			if err != nil {
				t.Fatal(err)
			}
			for trial := 0; trial < 3000; trial++ {
				a, b, c := randomCase(rng, in, k)
				want := c
				for i := 0; i < k; i += 4 {
					j := min(i+4, k)
					want = bigRound(t, exactSum(want, a[i:j], b[i:j]), format.Binary32, big.ToNearestEven)
				}
				if got := u.Dot(a, b, c); got != want {
					t.Fatalf("%s k=%d: a=%v b=%v c=%x: got %x, want %x", u.Name(), k, hexes(a), hexes(b), c, got, want)
				}
			}
		}
	}
}

// An fp32 FMA chain (ieee, k=1, fp32 inputs) agrees with an oracle that
// rounds a·b + acc once per step; with products rounded to fp32 it is
// the float64-emulated fp32 loop acc = fl32(acc + fl32(a·b)).
func TestFMAChainMatchesFP32Loop(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	fma, err := Lookup("ieee:k=1", "fp32", "fp32")
	if err != nil {
		t.Fatal(err)
	}
	mulAdd, err := Lookup("ieee:k=1,products=fp32", "fp32", "fp32")
	if err != nil {
		t.Fatal(err)
	}
	for trial := 0; trial < 20000; trial++ {
		a, b, c := randomCase(rng, format.Binary32, 1+rng.IntN(20))
		want := c
		loop := float32(c)
		for i := range a {
			want = bigRound(t, exactSum(want, a[i:i+1], b[i:i+1]), format.Binary32, big.ToNearestEven)
			p := float32(float64(a[i]) * float64(b[i])) // exact in float64, then one rounding
			loop = float32(float64(loop) + float64(p))  // 53 ≥ 2·24+2 bits: no double-rounding error
		}
		if got := fma.Dot(a, b, c); got != want {
			t.Fatalf("FMA chain a=%v b=%v c=%x: got %x, want %x", hexes(a), hexes(b), c, got, want)
		}
		if got := mulAdd.Dot(a, b, c); got != float64(loop) {
			t.Fatalf("mul-add chain a=%v b=%v c=%x: got %x, want %x", hexes(a), hexes(b), c, got, loop)
		}
	}
}

// The IEEE block FMA is an FMA chain from c, in index order, within each
// block: acc = c; acc = fl(acc + a_i·b_i).
func TestIEEEBlockIsChainFromC(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	u, err := Lookup("ieee", "fp16", "fp32")
	if err != nil {
		t.Fatal(err)
	}
	// c = 1 then two half-ulp ties stays 1; summing the products first gives 1+2^-23.
	if got := u.Dot([]float64{0x1p-12, 0x1p-12}, []float64{0x1p-12, 0x1p-12}, 1); got != 1 {
		t.Errorf("1 + 2^-24 + 2^-24 from c first: got %x, want 1", got)
	}
	for trial := 0; trial < 20000; trial++ {
		a, b, c := randomCase(rng, format.Binary16, 1+rng.IntN(9))
		want := c
		for i := range a {
			want = bigRound(t, exactSum(want, a[i:i+1], b[i:i+1]), format.Binary32, big.ToNearestEven)
		}
		if got := u.Dot(a, b, c); got != want {
			t.Fatalf("a=%v b=%v c=%x: got %x, want %x", hexes(a), hexes(b), c, got, want)
		}
	}
}

// truncationOracle is the tensor-core adder written independently with
// math/big: every term divided by the grid unit 2^g and cut to an integer
// (toward zero, or to nearest even), summed, the magnitude wrapped at the
// carry bits, and the result rounded into fp32. The grid hangs from the
// largest term's exponent, or with AnchorExponents from the largest
// e_a+e_b (inputs below the normal range at emin) and c's exponent.
func truncationOracle(t testing.TB, p Params, a, b []float64, c float64) float64 {
	terms := []float64{c}
	for i := range a {
		terms = append(terms, a[i]*b[i])
	}
	top, allZero := math.MinInt, true
	for _, x := range terms {
		if x != 0 {
			allZero = false
			top = max(top, math.Ilogb(x))
		}
	}
	if allZero {
		return 0
	}
	if p.AnchorExponents {
		ilogb := func(x float64, emin int) int { return max(math.Ilogb(x), emin) }
		top = math.MinInt
		for i := range a {
			if a[i] != 0 && b[i] != 0 {
				top = max(top, ilogb(a[i], p.Input.Emin())+ilogb(b[i], p.Input.Emin()))
			}
		}
		if c != 0 {
			top = max(top, ilogb(c, p.Output.Emin()))
		}
	}
	g := top - (p.Accumulator.Precision() - 1 + p.ExtraBits)
	sum := new(big.Int)
	for _, x := range terms {
		q := new(big.Float).SetPrec(4096).SetMantExp(new(big.Float).SetFloat64(x), -g)
		n, _ := q.Int(nil) // toward zero
		if p.Alignment == AlignNearestEven {
			frac := new(big.Float).Sub(q, new(big.Float).SetInt(n))
			frac.Abs(frac)
			half := big.NewFloat(0.5)
			if c := frac.Cmp(half); c > 0 || c == 0 && n.Bit(0) == 1 {
				n.Add(n, big.NewInt(int64(q.Sign())))
			}
		}
		sum.Add(sum, n)
	}
	neg := sum.Sign() < 0
	sum.Abs(sum)
	if p.CarryBits != Unlimited {
		w := uint(top - g + 1 + p.CarryBits)
		sum.Mod(sum, new(big.Int).Lsh(big.NewInt(1), w))
	}
	if neg {
		sum.Neg(sum)
	}
	v := new(big.Float).SetPrec(4096).SetMantExp(new(big.Float).SetInt(sum), g)
	mode := map[format.Mode]big.RoundingMode{format.TowardZero: big.ToZero, format.NearestEven: big.ToNearestEven}[p.AccumulatorMode]
	return bigRound(t, v, p.Accumulator, mode)
}

func TestTruncatingAdderMatchesBig(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	specs := []string{"v100", "t4", "a100", "a100:extra=0,carry=1", "t4:align=rne", "v100:extra=5,accmode=rne", "v100:carry=0", "t4:extra=40",
		"v100:anchor=lead", "t4:anchor=lead,carry=3", "a100:anchor=lead,carry=1", "h100"}
	for _, spec := range specs {
		u, err := Lookup(spec, "", "fp32")
		if err != nil {
			t.Fatal(err)
		}
		for _, forceBig := range []bool{false, true} {
			u.forceBig = forceBig
			for trial := 0; trial < 5000; trial++ {
				a, b, c := randomCase(rng, format.Binary16, u.BlockK())
				want := truncationOracle(t, u.Params(), a, b, c)
				got := u.Dot(a, b, c)
				if got != want && !(got == 0 && want == 0) {
					t.Fatalf("%s (big=%v): a=%v b=%v c=%x: got %x, want %x", u.Name(), forceBig, hexes(a), hexes(b), c, got, want)
				}
			}
		}
	}
}

// sum2's shortcut for two terms under exact alignment (TwoSum, round to
// odd, one rounding) agrees with the big.Int adder (forceBig turns the
// shortcut off) in every rounding mode, fixed range, c added after, fp32
// inputs whose products need up to 48 bits, and wide exponent spreads.
func TestPairShortcutMatchesBig(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, c := range []struct{ spec, in, out string }{
		{"ieee", "fp16", "fp32"}, {"ieee:k=1", "fp32", "fp32"}, {"ieee", "bf16", "fp16"},
		{"ieee:accmode=rz", "fp16", "fp32"}, {"ieee:k=1,accmode=up", "fp32", "fp32"}, {"ieee:accmode=down", "bf16", "fp32"},
		{"ieee:range=fixed,accmode=rz", "fp16", "fp32"}, {"ieee:accp=12", "fp16", "fp32"},
		{"exact:addend=after", "fp16", "fp32"}, {"v100:extra=unlimited,carry=unlimited,norm=each,order=inorder", "fp16", "fp32"},
	} {
		fast, err := Lookup(c.spec, c.in, c.out)
		if err != nil {
			t.Fatal(err)
		}
		slow, _ := Lookup(c.spec, c.in, c.out)
		slow.forceBig = true
		for trial := 0; trial < 5000; trial++ {
			a, b, cc := randomCase(rng, fast.Input(), 1+rng.IntN(6))
			if x, y := fast.Dot(a, b, cc), slow.Dot(a, b, cc); math.Float64bits(x) != math.Float64bits(y) {
				t.Fatalf("%s %s→%s: a=%v b=%v c=%x: shortcut %x, big adder %x", c.spec, c.in, c.out, hexes(a), hexes(b), cc, x, y)
			}
		}
	}
}

// The int64 and big.Int adders agree wherever both apply, sticky bit and
// exact alignment included.
func TestFixedAndBigAddersAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, spec := range []string{"v100:sticky=on", "t4:sticky=on,accmode=rne", "exact", "ieee", "v100:norm=each", "t4:addend=after", "v100:products=bf16,productmode=rz"} {
		fixed, err := Lookup(spec, "fp16", "fp32")
		if err != nil {
			t.Fatal(err)
		}
		wide, _ := Lookup(spec, "fp16", "fp32")
		wide.forceBig = true
		for trial := 0; trial < 5000; trial++ {
			a, b, c := randomCase(rng, format.Binary16, 1+rng.IntN(12))
			if x, y := fixed.Dot(a, b, c), wide.Dot(a, b, c); math.Float64bits(x) != math.Float64bits(y) {
				t.Fatalf("%s: a=%v b=%v c=%x: int64 adder %x, big adder %x", spec, hexes(a), hexes(b), c, x, y)
			}
		}
	}
}

// A sticky bit makes truncation plus a final rounding to nearest agree with
// exact accumulation whenever the lost bits cannot carry: one term below.
func TestStickyRounding(t *testing.T) {
	u, _ := Lookup("v100:sticky=on,accmode=rne", "", "")
	// 1 + 2^-24 + 2^-40: exactly halfway plus a bit: the sticky says "above
	// half" and the result rounds up; without it the tie goes to even (1).
	a, b := []float64{1, 0x1p-12, 0x1p-20}, []float64{1, 0x1p-12, 0x1p-20}
	if got := u.Dot(a, b, 0); got != 1+0x1p-23 {
		t.Errorf("with sticky: got %x, want 1+2^-23", got)
	}
	v, _ := Lookup("v100:extra=1,accmode=rne", "", "")
	if got := v.Dot(a, b, 0); got != 1 {
		t.Errorf("without sticky: got %x, want 1", got)
	}
}

func TestSpecialValues(t *testing.T) {
	inf, nan, negZero := math.Inf(1), math.NaN(), math.Copysign(0, -1)
	cases := []struct {
		unit, out string
		a, b      []float64
		c, want   float64
	}{
		{"v100", "", []float64{nan, 1}, []float64{1, 1}, 0, nan},
		{"v100", "", []float64{inf, 1}, []float64{0, 1}, 0, nan},    // Inf·0
		{"v100", "", []float64{inf, inf}, []float64{1, -1}, 0, nan}, // Inf − Inf
		{"v100", "", []float64{inf, 1}, []float64{1, 1}, -inf, nan}, // Inf + (−Inf) in c
		{"v100", "", []float64{-inf, 65504}, []float64{2, 65504}, 3, -inf},
		{"v100", "", []float64{1}, []float64{1}, inf, inf},
		{"v100", "", []float64{65504}, []float64{65504}, math.MaxFloat32, math.MaxFloat32}, // RZ overflow: max finite
		{"v100", "fp16", []float64{256}, []float64{256}, 0, inf},                           // 65536 rounds to nearest: Inf
		{"a100", "", []float64{0x1p-24}, []float64{0x1p-24}, 0, 0x1p-48},
		{"v100", "", []float64{negZero}, []float64{1}, negZero, negZero}, // −0 + −0
		{"v100", "", []float64{1, -1}, []float64{1, 1}, 0, 0},            // exact cancellation: +0
		{"v100:accmode=rd", "", []float64{1, -1}, []float64{1, 1}, 0, math.Copysign(0, -1)},
		{"a100", "", []float64{inf}, []float64{0x1p-24}, 0, inf},
	}
	for _, tc := range cases {
		u, err := Lookup(tc.unit, "", tc.out)
		if err != nil {
			t.Fatal(err)
		}
		got := u.Dot(tc.a, tc.b, tc.c)
		same := got == tc.want && math.Signbit(got) == math.Signbit(tc.want) || math.IsNaN(got) && math.IsNaN(tc.want)
		if !same {
			t.Errorf("%s: a=%v b=%v c=%v: got %v, want %v", u.Name(), tc.a, tc.b, tc.c, got, tc.want)
		}
	}
	// Without subnormals, a subnormal input times a large one is zero.
	u, _ := Lookup("v100:subnormals=off", "", "")
	if got := u.Dot([]float64{0x1p-24}, []float64{65504}, 0); got != 0 {
		t.Errorf("flushed subnormal input gave %v", got)
	}
	// Subnormal outputs flushed, inputs kept: 2^-14·2^-1 is an fp16
	// subnormal, 2^-24·2^10 a normal result from a subnormal input.
	w, _ := Lookup("v100:subnormals-out=off", "", "fp16")
	if got := w.Dot([]float64{0x1p-14}, []float64{0.5}, 0); got != 0 {
		t.Errorf("flushed subnormal output gave %v", got)
	}
	if got := w.Dot([]float64{0x1p-24}, []float64{1024}, 0); got != 0x1p-14 {
		t.Errorf("subnormal input with outputs flushed gave %v", got)
	}
}

// Inputs outside the input format are converted: rounded to nearest for
// fp16, truncated (the hardware reads the top bits) for A100's tf32.
func TestInputConversion(t *testing.T) {
	x := 1 + 0x1p-11 + 0x1p-20 // above the midpoint between two fp16/tf32 values
	v100, _ := Lookup("v100", "", "")
	if got := v100.Dot([]float64{x}, []float64{1}, 0); got != 1+0x1p-10 {
		t.Errorf("fp16 conversion: got %x", got)
	}
	tf32, _ := Lookup("a100", "tf32", "")
	if got := tf32.Dot([]float64{x}, []float64{1}, 0); got != 1 {
		t.Errorf("tf32 conversion: got %x, want truncation to 1", got)
	}
}

// Blocks chain: a dot product of 16 on a 4-wide unit is four steps, each
// rounded result the next addend.
func TestBlocksChain(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, spec := range []string{"v100", "a100", "ieee"} {
		for _, out := range []string{"fp32", "fp16"} {
			u, err := Lookup(spec, "fp16", out)
			if err != nil {
				t.Fatal(err)
			}
			k := u.BlockK()
			for trial := 0; trial < 1000; trial++ {
				a, b, c := randomCase(rng, format.Binary16, 4*k+1)
				out := u.Output()
				c = out.Round(c, format.NearestEven)
				want := c
				for i := 0; i < len(a); i += k {
					j := min(i+k, len(a))
					want = u.Dot(a[i:j], b[i:j], want)
				}
				if got := u.Dot(a, b, c); math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("%s: chained %x, block by block %x", u.Name(), got, want)
				}
			}
		}
	}
}

// TC16 rounds each block's fp32 sum to fp16 (Blanchard et al.): the
// TC16 unit is the TC32 unit followed by a rounding, block by block.
func TestIEEETC16IsTC32Rounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	tc32, _ := Lookup("ieee", "fp16", "fp32")
	tc16, _ := Lookup("ieee", "fp16", "fp16")
	for trial := 0; trial < 5000; trial++ {
		a, b, _ := randomCase(rng, format.Binary16, 4)
		c := randomIn(rng, format.Binary16, -8, 8)
		want := format.Binary16.Round(tc32.Dot(a, b, c), format.NearestEven)
		if got := tc16.Dot(a, b, c); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("TC16 %x, rounded TC32 %x", got, want)
		}
	}
}

func TestLookupErrors(t *testing.T) {
	for _, tc := range []struct{ spec, in, out, want string }{
		{"z900", "", "", "unknown unit"},
		{"v100", "bf16", "", "no bf16→fp32 unit"},
		{"v100", "fp17", "", "fp17"},
		{"v100:k=0", "", "", "block size"},
		{"v100:foo=1", "", "", "unknown key"},
		{"v100:extra", "", "", "not key=value"},
		{"v100:align=rne,sticky=on", "", "", "sticky"},
		{"ieee:norm=end", "fp64", "fp64", "fp64 FMA chain"},
		{"v100:acc=fp64", "", "", "accumulator precision"},
	} {
		_, err := Lookup(tc.spec, tc.in, tc.out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Lookup(%q, %q, %q): error %v, want one mentioning %q", tc.spec, tc.in, tc.out, err, tc.want)
		}
	}
}

func TestPresetsBuild(t *testing.T) {
	for _, p := range Presets() {
		for _, pair := range p.Pairs {
			q, err := p.Params(pair[0], pair[1])
			if err != nil {
				t.Fatal(err)
			}
			if _, err := NewModel(q); err != nil {
				t.Errorf("%s %s→%s: %v", p.Name, pair[0].Name(), pair[1].Name(), err)
			}
		}
		if p.Doc == "" || p.Summary == "" {
			t.Errorf("%s: no documentation", p.Name)
		}
	}
}

// scale is math.Ldexp for the integers and exponents normalize gives it.
func TestScaleIsLdexp(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for e := -1074; e <= 1100; e++ {
		for _, m := range []float64{0, 1, 3, 1<<53 - 1, float64(rng.Uint64() >> 11), float64(rng.Uint64() >> (11 + rng.IntN(53)))} {
			if got, want := scale(m, e), math.Ldexp(m, e); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("scale(%v, %d) = %v, Ldexp %v", m, e, got, want)
			}
		}
	}
}

// The FMA chain's one-product steps (chainStep) give block's bits: the
// same model with the shortcut off agrees on random cases, specials and
// overflow included, in several modes, formats and product roundings.
func TestChainStepMatchesBlock(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	specials := []float64{math.Inf(1), math.Inf(-1), math.NaN(), 65504, -65504, 3e38, 0, math.Copysign(0, -1)}
	for _, c := range [][3]string{{"ieee:k=1", "fp16", "fp32"}, {"ieee:k=1", "fp32", "fp32"}, {"ieee:k=1,accmode=rz", "bf16", "fp16"},
		{"ieee:k=1,accmode=down", "fp16", "fp32"}, {"ieee:k=1,products=bf16,productmode=rz", "fp16", "fp32"}, {"ieee:k=1,range=fixed", "e4m3", "fp32"}} {
		fast, err := Lookup(c[0], c[1], c[2])
		if err != nil {
			t.Fatal(err)
		}
		if !fast.chain1 {
			t.Fatalf("%s: not an FMA chain of one-product blocks", c[0])
		}
		slow, _ := Lookup(c[0], c[1], c[2])
		slow.chain1 = false
		for trial := 0; trial < 3000; trial++ {
			a, b, cc := randomCase(rng, fast.Input(), 1+rng.IntN(20))
			if rng.IntN(10) == 0 {
				a[rng.IntN(len(a))] = specials[rng.IntN(len(specials))]
			}
			if rng.IntN(10) == 0 {
				cc = specials[rng.IntN(len(specials))]
			}
			if x, y := fast.Dot(a, b, cc), slow.Dot(a, b, cc); math.Float64bits(x) != math.Float64bits(y) && !(x != x && y != y) {
				t.Fatalf("%s %s→%s: a=%v b=%v c=%v: chain %x, blocks %x", c[0], c[1], c[2], a, b, cc, x, y)
			}
		}
	}
}
