package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mwmm/mwmm/gpu/internal/gputest"
	"github.com/mwmm/mwmm/multiword"
	"github.com/mwmm/mwmm/multiword/multiwordtest"
)

// wgmmaEngine is the shared engine running fused products on the wgmma
// kernel, or a skip where it does not run.
func wgmmaEngine(t *testing.T) *Engine {
	t.Helper()
	e := engineGPU(t)
	if maj, min := e.d.ComputeCapability(); maj != 9 || min != 0 {
		t.Skipf("the wgmma kernel needs sm_90; this is %s", e.d.Arch())
	}
	useKernel(t, e, KernelWGMMA)
	return e
}

// sameBits reports the elements of got that differ from want in any bit.
func sameBits(t *testing.T, what string, want, got []float64) {
	t.Helper()
	diff, first := 0, -1
	for i := range want {
		if math.Float64bits(want[i]) != math.Float64bits(got[i]) {
			if first < 0 {
				first = i
			}
			diff++
		}
	}
	if diff > 0 {
		t.Errorf("%s: %d of %d elements differ, first C[%d] = %x, want %x", what, diff, len(want), first,
			math.Float32bits(float32(got[first])), math.Float32bits(float32(want[first])))
	}
}

// multiplyOn runs Multiply on one fused kernel.
func multiplyOn(t *testing.T, e *Engine, k FusedKernel, p multiword.Plan, m, n, kk int, a, b []float64) []float64 {
	t.Helper()
	old := e.kernel
	e.kernel = k
	defer func() { e.kernel = old }()
	c := make([]float64, m*n)
	if err := e.Multiply(p, m, n, kk, a, b, c); err != nil {
		t.Fatalf("%s on %s: %v", p.Name, k, err)
	}
	return c
}

// One word: every block a chain of k-steps from zero, promoted in order —
// the model of Hopper's tensor cores, bit for bit, as for the mma.sync
// kernel (a k16 wgmma step rounds as an m16n8k16 mma does). Shapes with
// partial tiles and k-tails, and one with more tiles than multiprocessors
// so that blocks of the persistent grid take several.
func TestWGMMAMatchesModel(t *testing.T) {
	e := wgmmaEngine(t)
	model, err := multiword.Open("model:h100")
	if err != nil {
		t.Fatal(err)
	}
	specs := []string{
		"fp16:sum=v1,b=32", "fp16:sum=v2,b=64,scale=on", "fp16:sum=pair,b=96",
		"bf16:sum=v2,b=32", "bf16:sum=pair,b=64", "tf32:sum=v1,b=32", "tf32:sum=pair,b=64",
		"fp16:sum=v2,b=32,group=3", "tf32:sum=v2,b=64,group=2", "fp16:sum=pair,b=32,group=4",
	}
	for _, kernel := range []FusedKernel{KernelWGMMA, KernelWGMMASmem} {
		matchModel(t, e, kernel, model, specs, [][3]int{{9, 13, 200}, {130, 140, 77}, {1, 1, 5}}, 31)
	}
	// Plain one-word products: one chain over all of k.
	matchModelPlain(t, e, model, 33, 164, 300, 32)
}

// Joint multiword plans: the products of a block in one accumulator, in
// either order (each product over the block in turn: joint=products, the
// variants' default; or interleaved k-step by k-step: joint=steps). The
// mma.sync kernel computes the same order (JOINT, JPROD), and so does the
// CPU model (multiword's FABsumJoint, JointOrder): three
// independent implementations, the same bits; on the wgmma kernel both
// with words split ahead (wgmma_split) and in shared memory.
func TestWGMMAJointMatchesModelAndMMA(t *testing.T) {
	e := wgmmaEngine(t)
	model, err := multiword.Open("model:h100")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(33, 34))
	specs := []string{"double-fp16-fabsum", "triple-bf16-fabsum", "3xtf32-fabsum",
		"double-fp16:scale=on,joint=on,sum=v1,b=32", "triple-bf16:joint=on,sum=v2,b=64,products=all",
		"double-fp16-fabsum:group=8", "triple-bf16-fabsum:group=4", "3xtf32-fabsum:group=3",
		"double-fp16-fabsum:joint=steps", "triple-bf16-fabsum:joint=steps,group=3", "3xtf32-fabsum:joint=steps",
		"triple-bf16:joint=products,sum=v2,b=32,products=all", "double-fp16:scale=on,joint=products,sum=pair,b=32",
		"double-fp16-fabsum:sum=pair,group=16", "triple-bf16-fabsum:sum=pair,group=3", "3xtf32-fabsum:sum=pair,group=8"}
	for _, shape := range [][3]int{{70, 150, 333}, {1, 3, 5}} {
		m, n, k := shape[0], shape[1], shape[2]
		for dist := 0; dist < 3; dist++ {
			a, b := fp32Data(rng, m*k, dist), fp32Data(rng, k*n, dist)
			for _, spec := range specs {
				p := lookup(t, spec)
				got := multiplyOn(t, e, KernelWGMMA, p, m, n, k, a, b)
				sameBits(t, spec+" against the mma.sync kernel", multiplyOn(t, e, KernelMMA, p, m, n, k, a, b), got)
				if sf, _, _ := wgmmaStages(&p, false); sf > 0 {
					sameBits(t, spec+" split in shared memory", got, multiplyOn(t, e, KernelWGMMASmem, p, m, n, k, a, b))
				} else if err := e.Fused(p, FusedArgs{M: 1, N: 1, K: 1, A: gputest.Alloc(t, e.d, 16), B: gputest.Alloc(t, e.d, 16), C: gputest.Alloc(t, e.d, 16),
					Kernel: KernelWGMMASmem}); err == nil {
					t.Errorf("%s: split in shared memory without room for its stages", spec)
				}
				want := make([]float64, m*n)
				if err := model.Multiply(p, m, n, k, a, b, want); err != nil {
					t.Fatal(err)
				}
				sameBits(t, spec+" against model:h100", want, got)
			}
		}
	}
}

// Layouts of A, B and C and leading dimensions change no bit, on presplit
// words (any leading dimension) and split in shared memory (the copy
// engine needs them divisible by 4), and repeated runs give the same bits.
func TestWGMMALayoutsAndDeterminism(t *testing.T) {
	e := wgmmaEngine(t)
	rng := rand.New(rand.NewPCG(35, 36))
	const m, n, k = 132, 268, 300
	a, b := fp32Data(rng, m*k, 1), fp32Data(rng, k*n, 1)
	for _, spec := range []string{"double-fp16-fabsum", "triple-bf16-fabsum", "3xtf32-fabsum"} {
		p := lookup(t, spec)
		ref := fusedHost(t, e, p, m, n, k, a, b, RowMajor, RowMajor, RowMajor, 0)
		for _, kernel := range []FusedKernel{KernelWGMMA, KernelWGMMASmem} {
			e.kernel = kernel
			pads := []int{0, 4, 12}
			if kernel == KernelWGMMA {
				pads = []int{0, 1, 3, 4}
			}
			for _, la := range []Layout{RowMajor, ColMajor} {
				for _, lb := range []Layout{RowMajor, ColMajor} {
					for i, pad := range pads {
						lc := Layout(i % 2)
						got := fusedHost(t, e, p, m, n, k, a, b, la, lb, lc, pad)
						sameBits(t, fmt.Sprintf("%s on %s, A %s B %s C %s, pad %d", spec, kernel, la, lb, lc, pad), ref, got)
					}
				}
			}
		}
		e.kernel = KernelWGMMA
	}
}

// Within Hopper's a-priori bound, larger k included.
func TestWGMMAWithinBound(t *testing.T) {
	e := wgmmaEngine(t)
	rng := rand.New(rand.NewPCG(37, 38))
	specs := []string{"double-fp16-fabsum", "triple-bf16-fabsum", "3xtf32-fabsum",
		"double-fp16:scale=on,joint=on,sum=v1,b=128", "double-fp16:scale=on,joint=on,sum=v2,b=256", "fp16:sum=v2,b=1024",
		"double-fp16-fabsum:group=8", "3xtf32-fabsum:group=8"}
	for _, shape := range [][3]int{{64, 40, 3000}, {20, 24, 1 << 16}} {
		m, n, k := shape[0], shape[1], shape[2]
		for dist := 0; dist < 3; dist++ {
			a, b := fp32Data(rng, m*k, dist), fp32Data(rng, k*n, dist)
			for _, spec := range specs {
				got, bnd, err := multiwordtest.Check(e, lookup(t, spec), m, n, k, a, b)
				if err != nil {
					t.Error(err)
				}
				t.Logf("%-44s %d×%d×%-6d dist %d: error %.3g, bound %.3g", spec, m, n, k, dist, got, bnd)
			}
		}
	}
}

func TestWGMMARangeAndSpecials(t *testing.T) {
	rangeAndSpecials(t, wgmmaEngine(t))
}

// Operands the copy engine cannot read are errors on KernelWGMMASmem; the
// presplit kernel (KernelWGMMA, and the automatic choice) reads them.
func TestWGMMAOperands(t *testing.T) {
	e := wgmmaEngine(t)
	rng := rand.New(rand.NewPCG(39, 40))
	const m, n, k = 20, 30, 40
	a, b := fp32Data(rng, m*k, 0), fp32Data(rng, k*n, 0)
	p := lookup(t, "double-fp16-fabsum")
	buf := gputest.Alloc(t, e.d, 4*4096)
	if err := e.Fused(p, FusedArgs{M: m, N: n, K: k, A: buf, LdA: k + 1, B: buf, C: buf, Kernel: KernelWGMMASmem}); err == nil {
		t.Error("lda = k+1 (not divisible by 4) accepted by the wgmma kernel's copy engine")
	}
	if err := e.Fused(lookup(t, "double-fp16:scale=on,shift=11,first=on,sum=pair,b=64"),
		FusedArgs{M: m, N: n, K: k, A: buf, B: buf, C: buf, Kernel: KernelWGMMA}); err == nil {
		t.Error("a first=on plan accepted by the wgmma kernel")
	}
	want := multiplyOn(t, e, KernelMMA, p, m, n, k, a, b)
	for _, kernel := range []FusedKernel{KernelAuto, KernelWGMMA} {
		useKernel(t, e, kernel)
		sameBits(t, kernel.String()+", lda = k+1", want, fusedHost(t, e, p, m, n, k, a, b, RowMajor, RowMajor, RowMajor, 1))
	}
}

// Many calls back to back — shapes from 1×1×1 to more tiles than
// multiprocessors, plans, kernels and layouts mixed — each reproduced bit
// for bit by a rerun in the opposite order: no state leaks between calls
// (barrier phases, scratch buffers, cached modules).
func TestWGMMAStress(t *testing.T) {
	e := wgmmaEngine(t)
	rng := rand.New(rand.NewPCG(41, 42))
	specs := []string{"double-fp16-fabsum", "3xtf32-fabsum", "fp16:sum=v1,b=32", "triple-bf16-fabsum", "bf16:sum=pair,b=64",
		"double-fp16-fabsum:group=8", "triple-bf16-fabsum:group=3"}
	type run struct {
		spec    string
		kernel  FusedKernel
		m, n, k int
		a, b, c []float64
	}
	var runs []run
	for i := 0; i < 40; i++ {
		r := run{spec: specs[i%len(specs)], kernel: []FusedKernel{KernelWGMMA, KernelAuto, KernelMMA, KernelWGMMASmem}[i%4],
			m: 1 + rng.IntN(400), n: 1 + rng.IntN(400), k: 1 + rng.IntN(1500)}
		switch i {
		case 7:
			r.m, r.n, r.k = 1700, 1600, 40 // 14×13 tiles: several per block
		case 19:
			r.m, r.n, r.k = 1, 1, 1
		}
		r.a, r.b = fp32Data(rng, r.m*r.k, i%3), fp32Data(rng, r.k*r.n, i%3)
		r.c = multiplyOn(t, e, r.kernel, lookup(t, r.spec), r.m, r.n, r.k, r.a, r.b)
		runs = append(runs, r)
	}
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		c := multiplyOn(t, e, r.kernel, lookup(t, r.spec), r.m, r.n, r.k, r.a, r.b)
		sameBits(t, r.spec+" on "+r.kernel.String()+" rerun", r.c, c)
	}
}

// promoteBits is wgmma.cu's promote4 conversion without cvt (BITSN): the
// bits of x shifted right by 3, sign kept, as a double.
func promoteBits(x float32) float64 {
	u := math.Float32bits(x)
	hi := uint32(int32(u)>>3) & 0x8fffffff
	return math.Float64frombits(uint64(hi)<<32 | uint64(u<<29))
}

// TestPromoteBits checks the identity the kernel relies on: for every
// finite float32 x, promoteBits(x) = x·2^-896 exactly, and one fma by
// 2^896 adds x to a double with the rounding of v + float64(x). Every
// exponent, both signs, zero, subnormals and the largest finite value.
func TestPromoteBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	check := func(x float32) {
		t.Helper()
		y := promoteBits(x)
		if want := math.Ldexp(float64(x), -896); y != want || math.Signbit(y) != math.Signbit(want) {
			t.Fatalf("promoteBits(%g) = %g, want %g", x, y, want)
		}
		for i := 0; i < 4; i++ {
			v := rng.NormFloat64() * math.Ldexp(1, rng.IntN(80)-40)
			if i == 0 {
				v = -float64(x) // exact cancellation: +0, as add gives
			}
			got, want := math.FMA(y, math.Ldexp(1, 896), v), v+float64(x)
			if got != want || math.Signbit(got) != math.Signbit(want) {
				t.Fatalf("fma(promoteBits(%g), 2^896, %g) = %g, want %g", x, v, got, want)
			}
		}
	}
	for _, x := range []float32{0, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
		math.MaxFloat32, -math.MaxFloat32, 1, -1} {
		check(x)
	}
	for e := 0; e < 255; e++ {
		for i := 0; i < 64; i++ {
			u := uint32(e)<<23 | rng.Uint32N(1<<23) | rng.Uint32N(2)<<31
			check(math.Float32frombits(u))
		}
	}
}
