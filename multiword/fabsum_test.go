package multiword_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/multiword"
	"github.com/mwmm/mwmm/multiword/multiwordtest"
)

// FABsum-pair on the reference engine, data in (0,1], A 4×4096, B 4096×4,
// b = 16: within Plan.Bound, at least as accurate as v1 (fp32
// inter-block sums), and within one fp32 rounding of v2 (fp64 ones),
// which the compensated pair reproduces up to its final rounding.
func TestFABsumPairReference(t *testing.T) {
	const m, n, k = 4, 4, 4096
	rng := rand.New(rand.NewPCG(41, 42))
	a, b := distributions[0].matrix(rng, m*k), distributions[0].matrix(rng, k*n)
	run := func(spec string) ([]float64, float64, float64) {
		t.Helper()
		p, err := multiword.Lookup(spec)
		if err != nil {
			t.Fatal(err)
		}
		e, bnd, err := multiwordtest.Check(multiword.Reference{}, p, m, n, k, a, b)
		if err != nil {
			t.Fatal(err)
		}
		c := make([]float64, m*n)
		if err := (multiword.Reference{}).Multiply(p, m, n, k, a, b, c); err != nil {
			t.Fatal(err)
		}
		return c, e, bnd
	}
	for _, first := range []string{"", ",first=on"} {
		cp, ep, bp := run("double-fp16:sum=pair,b=16" + first)
		_, e1, b1 := run("double-fp16:sum=v1,b=16" + first)
		c2, e2, _ := run("double-fp16:sum=v2,b=16" + first)
		t.Logf("first=%q: errors pair %.3g (bound %.3g), v1 %.3g (bound %.3g), v2 %.3g", first, ep, bp, e1, b1, e2)
		if ep > e1 {
			t.Errorf("first=%q: pair's error %.3g above v1's %.3g", first, ep, e1)
		}
		if !(bp < b1) {
			t.Errorf("first=%q: pair's bound %.3g not below v1's %.3g", first, bp, b1)
		}
		for x := range cp {
			if d := math.Abs(cp[x] - c2[x]); d > 0x1p-23*math.Abs(c2[x]) {
				t.Errorf("first=%q: C[%d] = %g with the pair, %g with v2: more than one rounding apart", first, x, cp[x], c2[x])
			}
		}
	}
}

// Model engine (H100's tensor cores, whose adders truncate): pair plans stay
// within Plan.Bound with ModelError, and so does Algorithm 4.4 at a k that
// is no multiple of the block.
func TestFABsumPairModel(t *testing.T) {
	e, err := multiword.Open("model:h100")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(43, 44))
	const m, n = 3, 4
	for _, spec := range []string{"double-fp16-fabsum", "double-fp16:sum=pair,b=64", "triple-bf16-fabsum", "3xtf32-fabsum:b=16"} {
		p, err := multiword.Lookup(spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []int{100, 1000} {
			for _, d := range distributions[:3] {
				a, b := d.matrix(rng, m*k), d.matrix(rng, k*n)
				got, bnd, err := multiwordtest.Check(e, p, m, n, k, a, b)
				if err != nil {
					t.Error(err)
				}
				t.Logf("%s k=%d %s: error %.3g, bound %.3g", spec, k, d.name, got, bnd)
			}
		}
	}
}

// The three fused-kernel variants and the pair option parse, check and
// describe themselves.
func TestFABsumPairLookup(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		low   format.Format
		words int
		block int
		first bool
		joint bool
		scale bool
		shift int
		str   string
	}{
		{"double-fp16:sum=pair,b=64", format.Binary16, 2, 64, false, false, false, 0, "sum FABsum-pair b=64"},
		{"double-fp16:sum=TwoSum,b=64", format.Binary16, 2, 64, false, false, false, 0, "sum FABsum-pair b=64"},
		{"double-fp16:scale=on,shift=11,first=on,sum=pair,b=64", format.Binary16, 2, 64, true, false, true, 11, "sum FABsum-pair b=64 on A1B1 only, scaled, words ×2^11"},
		{"double-fp16-fabsum", format.Binary16, 2, 32, false, true, true, 0, "sum FABsum-v2 b=32 group=16 joint by products, scaled"},
		{"triple-bf16-fabsum", format.BFloat16, 3, 32, false, true, false, 0, "sum FABsum-v2 b=32 group=16 joint by products"},
		{"3xtf32-fabsum", format.TF32, 2, 32, false, true, false, 0, "sum FABsum-v2 b=32 group=8 joint by products"},
		{"3xTF32-fabsum:b=128", format.TF32, 2, 128, false, true, false, 0, "sum FABsum-v2 b=128 group=8 joint"},
		{"3xTF32-fabsum:b=128,joint=products", format.TF32, 2, 128, false, true, false, 0, "sum FABsum-v2 b=128 group=8 joint by products"},
		{"3xTF32-fabsum:b=16", format.TF32, 2, 16, false, true, false, 0, "sum FABsum-v2 b=16 group=8 joint by products"},
		{"double-fp16-fabsum:joint=steps", format.Binary16, 2, 32, false, true, true, 0, "sum FABsum-v2 b=32 group=16 joint, scaled"},
		{"double-fp16-fabsum:joint=off", format.Binary16, 2, 32, false, false, true, 0, "sum FABsum-v2 b=32, scaled"},
		{"double-fp16:sum=pair,b=32,joint=on", format.Binary16, 2, 32, false, true, false, 0, "sum FABsum-pair b=32 joint"},
	} {
		p, err := multiword.Lookup(tc.spec)
		if err != nil {
			t.Errorf("%s: %v", tc.spec, err)
			continue
		}
		if err := p.Check(); err != nil {
			t.Errorf("%s: Check: %v", tc.spec, err)
		}
		wantSum := bound.FABsumPair
		if strings.Contains(tc.str, "FABsum-v2") { // the -fabsum variants' default
			wantSum = bound.FABsumV2
		}
		if p.Sum != wantSum || p.Low.Name() != tc.low.Name() || p.Words != tc.words || p.Block != tc.block ||
			p.FABsumFirstOnly != tc.first || p.FABsumJoint != tc.joint || p.Scale != tc.scale || p.Theta != 0 || p.WordShift != tc.shift ||
			p.Acc.Name() != "fp32" || p.Out.Name() != "fp32" {
			t.Errorf("%s: plan %+v", tc.spec, p)
		}
		if s := p.String(); !strings.HasSuffix(s, tc.str) {
			t.Errorf("%s: String() = %q, want it to end in %q", tc.spec, s, tc.str)
		}
	}
	// The variants come with docs, and the pair is listed as a sum option.
	docs := map[string]string{}
	for _, v := range multiword.Variants() {
		docs[v.Name] = v.Doc
	}
	if d := docs["double-fp16-fabsum"]; !strings.Contains(d, "blocks of 32") || !strings.Contains(d, "fp64") {
		t.Errorf("double-fp16-fabsum doc %q", d)
	}
	if _, err := multiword.Lookup("double-fp16:sum=triple"); err == nil || !strings.Contains(err.Error(), "pair") {
		t.Errorf("bad summation: %v, want an error listing pair", err)
	}
	bad := multiword.Plan{Low: format.Binary16, Words: 1, Acc: format.Binary32, Out: format.Binary32, Sum: bound.FABsumPair + 1}
	if err := bad.Check(); err == nil {
		t.Errorf("summation %d accepted", bad.Sum)
	}
}

// ScaleTarget is θ = min(f_max, √(F_max/k)), or Theta when set.
func TestScaleTarget(t *testing.T) {
	p, err := multiword.Lookup("double-fp16-fabsum")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.ScaleTarget(4096), math.Min(65504, math.Sqrt(format.Binary32.MaxFinite()/4096)); got != want {
		t.Errorf("ScaleTarget(4096) = %g, want %g", got, want)
	}
	p.Theta = 1000
	if got := p.ScaleTarget(4096); got != 1000 {
		t.Errorf("with Theta 1000: %g", got)
	}
}
