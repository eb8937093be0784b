package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/internal/gputest"
	"github.com/mwmm/mwmm/multiword"
	"github.com/mwmm/mwmm/multiword/multiwordtest"
)

// fp32Data draws n fp32 values: (0,1] (dist 0), (−0.5,0.5] (1) or
// log-uniform magnitudes in [1e-3, 1e3] with random signs (2).
func fp32Data(rng *rand.Rand, n, dist int) []float64 {
	v := make([]float64, n)
	for i := range v {
		switch dist {
		case 0:
			v[i] = float64(float32(1 - rng.Float64()))
		case 1:
			v[i] = float64(float32(0.5 - rng.Float64()))
		default:
			x := math.Pow(10, -3+6*rng.Float64())
			if rng.IntN(2) == 0 {
				x = -x
			}
			v[i] = float64(float32(x))
		}
	}
	return v
}

// useKernel makes e run fused products on kernel k until the test ends.
func useKernel(t *testing.T, e *Engine, k FusedKernel) {
	t.Helper()
	old := e.kernel
	e.kernel = k
	t.Cleanup(func() { e.kernel = old })
}

func lookup(t *testing.T, spec string) multiword.Plan {
	t.Helper()
	p, err := multiword.Lookup(spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The fused kernel against the model of Hopper's tensor cores, bit for bit,
// where the model's summation order is the kernel's: one word (so no cross
// products), each FABsum block a chain of mma steps from zero, the blocks
// added in order. Odd shapes: k not a multiple of the block, the 32-wide
// k-tile or even the mma step; m, n not multiples of the 128×64 tile.
func TestFusedMatchesModel(t *testing.T) {
	e := engineGPU(t)
	useKernel(t, e, KernelMMA)
	if !hopper(e.d) {
		t.Skipf("the h100 model describes sm_90; this is %s", e.d.Arch())
	}
	model, err := multiword.Open("model:h100")
	if err != nil {
		t.Fatal(err)
	}
	specs := []string{
		"fp16:sum=v1,b=32", "fp16:sum=v2,b=16", "fp16:sum=pair,b=48", "fp16:sum=v2,b=64,scale=on",
		"bf16:sum=v2,b=32", "bf16:sum=pair,b=16", "tf32:sum=v1,b=8", "tf32:sum=pair,b=24",
		// Joint multiword blocks, each product over the block in turn,
		// on blocks shorter than a stage too.
		"double-fp16:scale=on,joint=products,sum=v2,b=16,group=3", "double-tf32:joint=products,sum=pair,b=8",
		"double-tf32:joint=products,sum=v2,b=16", "triple-bf16:joint=products,sum=v1,b=32,products=all",
		"bf16:sum=pair,b=16,group=3", "double-fp16:scale=on,joint=products,sum=pair,b=32,group=5",
	}
	matchModel(t, e, KernelMMA, model, specs, [][3]int{{9, 13, 200}, {130, 70, 77}, {1, 1, 5}}, 11)
}

// matchModel checks Multiply on kernel k against the model, bit for bit,
// for every spec, shape and distribution.
func matchModel(t *testing.T, e *Engine, k FusedKernel, model multiword.Engine, specs []string, shapes [][3]int, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed+1))
	for _, shape := range shapes {
		m, n, kk := shape[0], shape[1], shape[2]
		for dist := 0; dist < 3; dist++ {
			a, b := fp32Data(rng, m*kk, dist), fp32Data(rng, kk*n, dist)
			for _, spec := range specs {
				p := lookup(t, spec)
				want := make([]float64, m*n)
				if err := model.Multiply(p, m, n, kk, a, b, want); err != nil {
					t.Fatal(err)
				}
				got := multiplyOn(t, e, k, p, m, n, kk, a, b)
				sameBits(t, fmt.Sprintf("%s %d×%d×%d dist %d on %s, against the model", spec, m, n, kk, dist, k), want, got)
			}
		}
	}
}

// A plain one-word product on the fused kernel is one chain of mma steps:
// the model's plain product, bit for bit.
func TestFusedPlainMatchesModel(t *testing.T) {
	e := engineGPU(t)
	useKernel(t, e, KernelMMA)
	if !hopper(e.d) {
		t.Skipf("the h100 model describes sm_90; this is %s", e.d.Arch())
	}
	model, _ := multiword.Open("model:h100")
	matchModelPlain(t, e, model, 33, 65, 300, 13)
}

// matchModelPlain checks plain one-word products (one chain over all of k)
// on the engine's fused kernel against the model, bit for bit.
func matchModelPlain(t *testing.T, e *Engine, model multiword.Engine, m, n, k int, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed+1))
	a, b := fp32Data(rng, m*k, 0), fp32Data(rng, k*n, 0)
	for _, spec := range []string{"fp16", "bf16", "tf32"} {
		p := lookup(t, spec)
		want := make([]float64, m*n)
		if err := model.Multiply(p, m, n, k, a, b, want); err != nil {
			t.Fatal(err)
		}
		sameBits(t, spec+" plain on "+e.kernel.String()+" against the model", want, fusedHost(t, e, p, m, n, k, a, b, RowMajor, RowMajor, RowMajor, 0))
	}
}

// fusedHost runs Engine.Fused on host data with the given layouts and
// leading-dimension padding, and checks that the padding is untouched and
// every element of C written (C starts as NaN poison).
func fusedHost(t *testing.T, e *Engine, p multiword.Plan, m, n, k int, a, b []float64, la, lb, lc Layout, pad int) []float64 {
	t.Helper()
	store := func(x []float64, rows, cols int, l Layout) ([]float32, int) {
		outer, inner := rows, cols
		if l == ColMajor {
			outer, inner = cols, rows
		}
		ld := inner + pad
		s := make([]float32, (outer-1)*ld+inner)
		for i := range s {
			s[i] = float32(math.Inf(-1)) // padding: must not be read
		}
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				v := float32(0)
				if x != nil {
					v = float32(x[i*cols+j])
				}
				if l == RowMajor {
					s[i*ld+j] = v
				} else {
					s[j*ld+i] = v
				}
			}
		}
		return s, ld
	}
	ha, lda := store(a, m, k, la)
	hb, ldb := store(b, k, n, lb)
	hc, ldc := store(nil, m, n, lc)
	const poison = 0x7fc00bad
	for i := range hc {
		hc[i] = math.Float32frombits(poison)
	}
	da, db, dc := gputest.Upload(t, e.d, ha), gputest.Upload(t, e.d, hb), gputest.Upload(t, e.d, hc)
	err := e.Fused(p, FusedArgs{M: m, N: n, K: k, A: da, LayoutA: la, LdA: lda, B: db, LayoutB: lb, LdB: ldb,
		C: dc, LayoutC: lc, LdC: ldc, Kernel: e.kernel})
	if err != nil {
		t.Fatalf("Fused %s: %v", p.Name, err)
	}
	if err := e.d.Download(hc, dc); err != nil {
		t.Fatal(err)
	}
	c := make([]float64, m*n)
	inside := make([]bool, len(hc))
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			x := i*ldc + j
			if lc == ColMajor {
				x = j*ldc + i
			}
			inside[x] = true
			if math.Float32bits(hc[x]) == poison {
				t.Fatalf("%s: C[%d,%d] not written", p.Name, i, j)
			}
			c[i*n+j] = float64(hc[x])
		}
	}
	for x, in := range inside {
		if !in && math.Float32bits(hc[x]) != poison {
			t.Fatalf("%s: C's padding at %d overwritten with %g", p.Name, x, hc[x])
		}
	}
	return c
}

// Layouts, leading dimensions (including ones that rule out vector loads)
// and repeated runs change nothing: same bits every time.
func TestFusedLayoutsAndDeterminism(t *testing.T) {
	e := engineGPU(t)
	useKernel(t, e, KernelMMA)
	rng := rand.New(rand.NewPCG(15, 16))
	const m, n, k = 131, 67, 301
	a, b := fp32Data(rng, m*k, 1), fp32Data(rng, k*n, 1)
	for _, spec := range []string{"double-fp16-fabsum", "triple-bf16-fabsum", "3xtf32-fabsum", "double-fp16:scale=on,shift=11,sum=v2,b=64,first=off"} {
		p := lookup(t, spec)
		ref := fusedHost(t, e, p, m, n, k, a, b, RowMajor, RowMajor, RowMajor, 0)
		for _, la := range []Layout{RowMajor, ColMajor} {
			for _, lb := range []Layout{RowMajor, ColMajor} {
				for _, pad := range []int{0, 3, 4} {
					lc := Layout(pad % 2)
					got := fusedHost(t, e, p, m, n, k, a, b, la, lb, lc, pad)
					for i := range ref {
						if math.Float64bits(ref[i]) != math.Float64bits(got[i]) {
							t.Fatalf("%s A %s B %s C %s pad %d: C[%d] = %g, row-major dense run %g", spec, la, lb, lc, pad, i, got[i], ref[i])
						}
					}
				}
			}
		}
	}
}

// Multiword plans on the fused kernel stay within the a-priori bound with
// Hopper's error model, including the hard case (0,1] at larger k, and
// FABsum beats the plain tensor-core sum there.
func TestFusedWithinBound(t *testing.T) {
	e := engineGPU(t)
	useKernel(t, e, KernelMMA)
	rng := rand.New(rand.NewPCG(17, 18))
	specs := []string{"double-fp16-fabsum", "triple-bf16-fabsum", "3xtf32-fabsum",
		"double-fp16:scale=on,shift=11,sum=v1,b=128,first=on", "double-fp16:scale=on,shift=11,sum=v2,b=256,first=off",
		"triple-bf16:sum=v2,b=64,products=all", "double-tf32:sum=pair,b=512,first=off", "fp16:sum=v2,b=1024"}
	for _, shape := range [][3]int{{64, 40, 3000}, {20, 24, 1 << 16}} {
		m, n, k := shape[0], shape[1], shape[2]
		for dist := 0; dist < 3; dist++ {
			a, b := fp32Data(rng, m*k, dist), fp32Data(rng, k*n, dist)
			for _, spec := range specs {
				p := lookup(t, spec)
				got, bnd, err := multiwordtest.Check(e, p, m, n, k, a, b)
				if err != nil {
					t.Error(err)
				}
				t.Logf("%-52s %d×%d×%-6d dist %d: error %.3g, bound %.3g", spec, m, n, k, dist, got, bnd)
			}
		}
	}
	// (0,1], k = 2^16: the cuBLASLt route's round-toward-zero drift against
	// the default FABsum plan.
	const m, n, k = 16, 16, 1 << 16
	a, b := fp32Data(rng, m*k, 0), fp32Data(rng, k*n, 0)
	errOf := func(spec string) float64 {
		c := make([]float64, m*n)
		if err := e.Multiply(lookup(t, spec), m, n, k, a, b, c); err != nil {
			t.Fatal(err)
		}
		return multiwordtest.Componentwise(m, n, k, a, b, c)
	}
	plain, fab := errOf("double-fp16"), errOf("double-fp16-fabsum")
	t.Logf("(0,1], k=2^16: double-fp16 via cuBLASLt %.3g, double-fp16-fabsum %.3g", plain, fab)
	if !(fab*10 < plain) {
		t.Errorf("FABsum error %.3g is not 10× below the plain route's %.3g", fab, plain)
	}
}

// Inputs far outside fp16's range are scaled, not overflowed, and
// NaN/Inf in one row or column leave the rest of C as without them.
func TestFusedRangeAndSpecials(t *testing.T) {
	e := engineGPU(t)
	useKernel(t, e, KernelMMA)
	rangeAndSpecials(t, e)
}

func rangeAndSpecials(t *testing.T, e *Engine) {
	rng := rand.New(rand.NewPCG(19, 20))
	const m, n, k = 70, 68, 92 // leading dimensions the copy engine takes
	p := lookup(t, "double-fp16-fabsum")
	for _, scale := range []float64{0x1p100, 0x1p-100} {
		a, b := fp32Data(rng, m*k, 1), fp32Data(rng, k*n, 1)
		for i := range a {
			a[i] = float64(float32(a[i] * scale))
		}
		if _, _, err := multiwordtest.Check(e, p, m, n, k, a, b); err != nil {
			t.Errorf("A scaled by %g: %v", scale, err)
		}
	}
	// NaN and Inf, with scaling and without (where the presplit wgmma
	// kernel's split finds them, with no scan); without scaling, also an
	// entry beyond fp16's range, whose row is computed in fp64.
	for _, spec := range []string{"double-fp16-fabsum", "triple-bf16-fabsum", "3xtf32-fabsum", "double-fp16-fabsum:scale=off"} {
		p := lookup(t, spec)
		a, b := fp32Data(rng, m*k, 0), fp32Data(rng, k*n, 0)
		clean := fusedHost(t, e, p, m, n, k, a, b, RowMajor, RowMajor, RowMajor, 0)
		a[5*k+7], b[3*n+60] = math.Inf(1), math.NaN()
		const big = 40 // row with an entry the words cannot hold
		beyond := !p.Scale && p.Low.MaxFinite() < 1e6
		if beyond {
			a[big*k+3] = 1e6
		}
		got := fusedHost(t, e, p, m, n, k, a, b, RowMajor, RowMajor, RowMajor, 0)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				g := got[i*n+j]
				switch {
				case j == 60:
					if !math.IsNaN(g) {
						t.Errorf("%s: C[%d,60] = %g, want NaN", spec, i, g)
					}
				case i == 5:
					if !math.IsInf(g, 1) {
						t.Errorf("%s: C[5,%d] = %g, want +Inf", spec, j, g)
					}
				case i == big && beyond:
					var s float64
					for l := 0; l < k; l++ {
						s += a[i*k+l] * b[l*n+j]
					}
					// The kernel's fp64 sum may fuse its multiply-adds.
					if want := float64(float32(s)); math.Abs(g-want) > 0x1p-23*math.Abs(want) {
						t.Errorf("%s: C[%d,%d] = %g, want the fp64 dot product %g", spec, i, j, g, want)
					}
				case g != clean[i*n+j]:
					t.Errorf("%s: C[%d,%d] = %g, want %g as without the specials", spec, i, j, g, clean[i*n+j])
				}
			}
		}
		// The flags of that call stay in the stream's flag buffer with its
		// mark: the next call, with clean inputs, must not see them; nor
		// the call after the marks wrap around (which clears the buffer).
		a[5*k+7], b[3*n+60], a[big*k+3] = 0.5, 0.5, 0.5
		clean = fusedHost(t, e, p, m, n, k, a, b, RowMajor, RowMajor, RowMajor, 0)
		a[5*k+7], b[3*n+60] = math.Inf(1), math.NaN()
		fusedHost(t, e, p, m, n, k, a, b, RowMajor, RowMajor, RowMajor, 0)
		a[5*k+7], b[3*n+60] = 0.5, 0.5
		sameBits(t, spec+", clean after specials", clean, fusedHost(t, e, p, m, n, k, a, b, RowMajor, RowMajor, RowMajor, 0))
		setMarks := func(mark uint32) {
			e.scratchMu.Lock()
			for _, f := range e.flagBufs {
				f.mark = mark
			}
			e.scratchMu.Unlock()
		}
		setMarks(0)
		a[5*k+7], b[3*n+60] = math.Inf(1), math.NaN()
		fusedHost(t, e, p, m, n, k, a, b, RowMajor, RowMajor, RowMajor, 0) // flags set to 1
		setMarks(math.MaxUint32)                                           // the next mark wraps around to 1
		a[5*k+7], b[3*n+60] = 0.5, 0.5
		sameBits(t, spec+", clean after the marks wrapped", clean, fusedHost(t, e, p, m, n, k, a, b, RowMajor, RowMajor, RowMajor, 0))
	}
}

// Bad arguments are errors, not crashes.
func TestFusedBadArgs(t *testing.T) {
	e := engineGPU(t)
	useKernel(t, e, KernelMMA)
	buf := gputest.Alloc(t, e.d, 4*64)
	p := lookup(t, "double-fp16-fabsum")
	for _, tc := range []struct {
		args FusedArgs
		p    string
	}{
		{FusedArgs{M: 0, N: 4, K: 4, A: buf, B: buf, C: buf}, ""},
		{FusedArgs{M: 4, N: 4, K: 4, A: buf, LdA: 3, B: buf, C: buf}, ""},
		{FusedArgs{M: 16, N: 8, K: 8, A: buf, B: buf, C: buf}, ""},
		{FusedArgs{M: 4, N: 4, K: 4, A: buf, B: nil, C: buf}, ""},
		{FusedArgs{M: 4, N: 4, K: 4, A: buf, B: buf, C: buf}, "double-fp16:sum=v2,b=24"},
		{FusedArgs{M: 4, N: 4, K: 4, A: buf, B: buf, C: buf}, "double-e4m3:sum=v2,b=32"},
		{FusedArgs{M: 4, N: 4, K: 4, A: buf, B: buf, C: buf}, "triple-bf16:sum=v2,b=32,shift=8"},
	} {
		q := p
		if tc.p != "" {
			q = lookup(t, tc.p)
		}
		if err := e.Fused(q, tc.args); err == nil {
			t.Errorf("Fused(%s, %+v) succeeded", q.Name, tc.args)
		} else {
			t.Log(err)
		}
	}
}

// Many calls of different shapes and plans back to back on one engine: each
// result equals a fresh run's, so nothing leaks from call to call.
func TestFusedBackToBack(t *testing.T) {
	e := engineGPU(t)
	useKernel(t, e, KernelMMA)
	rng := rand.New(rand.NewPCG(21, 22))
	specs := []string{"double-fp16-fabsum", "3xtf32-fabsum", "fp16:sum=v1,b=16"}
	type run struct {
		spec    string
		m, n, k int
		a, b, c []float64
	}
	var runs []run
	for i := 0; i < 24; i++ {
		r := run{spec: specs[i%len(specs)], m: 1 + rng.IntN(300), n: 1 + rng.IntN(200), k: 1 + rng.IntN(700)}
		r.a, r.b = fp32Data(rng, r.m*r.k, i%3), fp32Data(rng, r.k*r.n, i%3)
		r.c = make([]float64, r.m*r.n)
		if err := e.Multiply(lookup(t, r.spec), r.m, r.n, r.k, r.a, r.b, r.c); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		c := make([]float64, r.m*r.n)
		if err := e.Multiply(lookup(t, r.spec), r.m, r.n, r.k, r.a, r.b, c); err != nil {
			t.Fatal(err)
		}
		for x := range c {
			if math.Float64bits(c[x]) != math.Float64bits(r.c[x]) {
				t.Fatalf("run %d (%s %d×%d×%d): C[%d] = %g now, %g before", i, r.spec, r.m, r.n, r.k, x, c[x], r.c[x])
			}
		}
	}
}

// BenchmarkFused times the fused kernel's defaults against SGEMM at n =
// 8192 (MWMM_BENCH_N overrides) and reports each as a multiple of SGEMM's
// speed: go test -bench Fused -run '^$' ./gpu/ on a GPU machine.
func BenchmarkFused(b *testing.B) {
	if err := gpu.Available(); err != nil {
		b.Skipf("no GPU: %v", err)
	}
	e, err := SharedEngine(0)
	if err != nil {
		b.Fatal(err)
	}
	n := 8192
	if s := os.Getenv("MWMM_BENCH_N"); s != "" {
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	variants := []string{"double-fp16-fabsum", "triple-bf16-fabsum", "3xtf32-fabsum", "double-fp16"}
	if s := os.Getenv("MWMM_BENCH_VARIANTS"); s != "" {
		variants = strings.Split(s, ";")
	}
	methods := []Method{{Name: "sgemm"}}
	for _, v := range variants {
		methods = append(methods, Method{Name: v, Variant: v})
	}
	for i := 0; i < b.N; i++ {
		ts, err := e.Time(n, 5, methods, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range ts {
			b.ReportMetric(ts[0].Total.Seconds()/t.Total.Seconds(), "x_sgemm_"+t.Method)
			b.Logf("%-22s n=%d %8.3f ms %7.1f TFLOP/s %.2f× sgemm", t.Method, n, t.Total.Seconds()*1e3, TFLOPs(n, t.Total), ts[0].Total.Seconds()/t.Total.Seconds())
		}
	}
}
