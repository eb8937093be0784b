package gemm

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/multiword"
)

// A Method is one way to compute C = A·B from fp32 A and B on the GPU: a
// cuBLASLt baseline or a multiword variant.
type Method struct {
	Name    string
	Variant string // the multiword variant; empty for a baseline
	Doc     string
	Kernel  FusedKernel // for FABsum variants: which fused kernel
}

// ParseMethod makes the method of a variant spec, which may end in @mma or
// @wgmma to choose the fused kernel (default: the engine's choice, wgmma
// on sm_90 where it can).
func ParseMethod(spec string) (Method, error) {
	m := Method{Name: spec, Variant: spec}
	if v, k, ok := strings.Cut(spec, "@"); ok {
		switch k {
		case "mma":
			m.Kernel = KernelMMA
		case "wgmma":
			m.Kernel = KernelWGMMA
		case "wgmma-smem":
			m.Kernel = KernelWGMMASmem
		case "auto":
		default:
			return m, fmt.Errorf("gpu: %q: unknown kernel %q after @ (mma, wgmma, wgmma-smem or auto)", spec, k)
		}
		m.Variant = v
	}
	return m, nil
}

// Baselines are the cuBLASLt products a multiword variant is measured
// against, on the same GPU in the same run.
var Baselines = []Method{
	{Name: "sgemm", Doc: "fp32 inputs, CUBLAS_COMPUTE_32F_PEDANTIC: plain fp32 arithmetic, no tensor cores"},
	{Name: "sgemm-tf32", Doc: "fp32 inputs, CUBLAS_COMPUTE_32F_FAST_TF32: tensor cores on TF32-rounded inputs"},
	{Name: "hgemm", Doc: "fp16 inputs (converted beforehand, not timed), fp32 accumulation and output"},
	{Name: "bgemm", Doc: "bf16 inputs (converted beforehand, not timed), fp32 accumulation and output"},
	{Name: "dgemm", Doc: "fp64 inputs and arithmetic"},
}

// BenchVariants are the multiword variants mwmm bench times, 23 with the
// 5 baselines making 28 methods (keep it under 30: every method is a row of
// each table and a point of every size and distribution). Four groups:
//
//   - the variants of Algorithm 4.1 through cuBLASLt (split kernel, then one
//     product per pair of words): the one-word formats, the Table 2.1
//     multiword variants, and the same with every product (products=all);
//   - the fused defaults, one per low format: double-fp16-fabsum,
//     triple-bf16-fabsum, 3xtf32-fabsum (joint FABsum: every product of a
//     block in one accumulator), on the engine's kernel — wgmma on Hopper;
//   - the same on the mma.sync kernel (@mma), the baseline of the wgmma
//     kernel's speed-up;
//   - Algorithm 4.4 on the mma.sync kernel for double-fp16 (row/column
//     scaling, words ×2^11, FABsum on A₁B₁ only) with each summation (v1:
//     block sums added in fp32, v2: in fp64, pair: into an fp32 TwoSum
//     pair) at b = 64 and 128: the accuracy–speed trade-off of the paper's
//     Figure 4.4 (the fig4.4 experiment sweeps v1 and v2 over b = 64..512).
//
// Plans with FABsum run on a fused kernel, the others through cuBLASLt
// (see run). A spec that multiword.Lookup does not know fails at run time,
// for that method alone when the caller runs the methods one by one (mwmm
// bench does).
var BenchVariants = slices.Concat(CublasVariants, fusedVariants, mmaVariants,
	fabsumGrid("double-fp16:scale=on,shift=11,first=on", []string{"v1", "v2", "pair"}, []int{64, 128}))

// CublasVariants are the bench variants of Algorithm 4.1 (cuBLASLt
// products): those of the paper's Figures 4.1 and 4.2.
var CublasVariants = []string{
	"fp16", "bf16", "tf32", "double-fp16", "double-bf16", "triple-bf16", "double-tf32",
	"double-fp16:products=all", "double-bf16:products=all", "triple-bf16:products=all", "double-tf32:products=all",
}

// fusedVariants are the fused kernels' defaults, by name; mmaVariants the
// same on the mma.sync kernel.
var (
	fusedVariants = []string{"double-fp16-fabsum", "triple-bf16-fabsum", "3xtf32-fabsum"}
	mmaVariants   = []string{"double-fp16-fabsum@mma", "triple-bf16-fabsum@mma", "3xtf32-fabsum@mma"}
)

// fabsumGrid returns base+",sum=S,b=B" for every summation S and block B,
// summation outermost.
func fabsumGrid(base string, sums []string, blocks []int) []string {
	var specs []string
	for _, s := range sums {
		for _, b := range blocks {
			specs = append(specs, fmt.Sprintf("%s,sum=%s,b=%d", base, s, b))
		}
	}
	return specs
}

// Methods returns the baselines and the bench variants. It parses nothing:
// a variant's spec is looked up when it runs.
func Methods() []Method {
	ms := slices.Clone(Baselines)
	for _, v := range BenchVariants {
		m, err := ParseMethod(v)
		if err != nil {
			panic(err) // BenchVariants is ours: a test checks every entry
		}
		ms = append(ms, m)
	}
	return ms
}

// operands are fp32 A (m×k) and B (k×n) on the device, row-major, with the
// conversions the baselines need made once.
type operands struct {
	m, n, k  int
	a, b     *gpu.Buffer // float32
	a64, b64 *gpu.Buffer // float64, for dgemm and the reference
	a16, b16 wordBuffers
	abf, bbf wordBuffers
	c32, c64 *gpu.Buffer
	words    map[string][2]wordBuffers
}

func (o *operands) free() {
	gpu.FreeAll(o.a, o.b, o.a64, o.b64, o.c32, o.c64)
	for _, w := range [][]*gpu.Buffer{o.a16, o.b16, o.abf, o.bbf} {
		wordBuffers(w).free()
	}
	for _, w := range o.words {
		w[0].free()
		w[1].free()
	}
}

// newOperands draws A and B from distribution dist of DistNames on the
// device (kernel fill_random in kernels/split.cu): uniform in (0,1] (0),
// uniform in (−0.5,0.5] (1), standard normal (2), or magnitudes
// log-uniform in [1e-3,1e3] with random signs (3). The values depend only
// on the seed, the distribution and the index.
func (e *Engine) newOperands(m, n, k, dist int, seed uint64, with64 bool) (*operands, error) {
	if dist < 0 || dist >= len(DistNames) {
		return nil, fmt.Errorf("gpu: distribution %d: want 0..%d (%s)", dist, len(DistNames)-1, strings.Join(DistNames, ", "))
	}
	o := &operands{m: m, n: n, k: k, words: map[string][2]wordBuffers{}}
	ok := false
	defer func() {
		if !ok {
			o.free()
		}
	}()
	fill, err := e.mod.Function("fill_random")
	if err != nil {
		return nil, err
	}
	for i, dst := range []**gpu.Buffer{&o.a, &o.b} {
		elems := []int{m * k, k * n}[i]
		if *dst, err = e.d.Alloc(4 * elems); err != nil {
			return nil, err
		}
		if err := fill.Launch(gpu.StrideGrid(elems), [3]uint32{256, 1, 1}, 0, nil, *dst, int64(elems), seed+uint64(i)*0x5851f42d4c957f2d, int32(dist)); err != nil {
			return nil, err
		}
	}
	if o.a16, err = e.split("split_f32", o.a, m*k, format.Binary16, 1, 0, nil); err != nil {
		return nil, err
	}
	if o.b16, err = e.split("split_f32", o.b, k*n, format.Binary16, 1, 0, nil); err != nil {
		return nil, err
	}
	if o.abf, err = e.split("split_f32", o.a, m*k, format.BFloat16, 1, 0, nil); err != nil {
		return nil, err
	}
	if o.bbf, err = e.split("split_f32", o.b, k*n, format.BFloat16, 1, 0, nil); err != nil {
		return nil, err
	}
	if o.c32, err = e.d.Alloc(4 * m * n); err != nil {
		return nil, err
	}
	if with64 {
		conv, err := e.mod.Function("f32_to_f64")
		if err != nil {
			return nil, err
		}
		for i, pair := range [][2]**gpu.Buffer{{&o.a, &o.a64}, {&o.b, &o.b64}} {
			elems := []int{m * k, k * n}[i]
			if *pair[1], err = e.d.Alloc(8 * elems); err != nil {
				return nil, err
			}
			if err := conv.Launch(gpu.StrideGrid(elems), [3]uint32{256, 1, 1}, 0, nil, *pair[0], *pair[1], int64(elems)); err != nil {
				return nil, err
			}
		}
		if o.c64, err = e.d.Alloc(8 * m * n); err != nil {
			return nil, err
		}
	}
	ok = true
	return o, e.d.Sync()
}

// matmul is row-major C = α·A·B + β·C (as column-major Cᵀ = Bᵀ·Aᵀ).
func (e *Engine) matmul(m, n, k int, a, b, c *gpu.Buffer, in, out gpu.DataType, compute gpu.ComputeType, stream *gpu.Stream) error {
	return e.lt.Matmul(gpu.MatmulSpec{M: n, N: m, K: k, A: b, B: a, C: c, D: c, LdA: n, LdB: k, LdC: n, LdD: n,
		TypeA: in, TypeB: in, TypeC: out, TypeD: out, Compute: compute, Alpha: 1, Beta: 0,
		Workspace: e.workspace, Stream: stream})
}

// run computes C with the method into o.c32 (o.c64 for dgemm). split
// records an event after the split, for timing without it.
func (e *Engine) run(meth Method, o *operands, stream *gpu.Stream, split *gpu.Event) error {
	mark := func() error {
		if split != nil {
			return split.Record(stream)
		}
		return nil
	}
	if meth.Variant == "" {
		if err := mark(); err != nil {
			return err
		}
		switch meth.Name {
		case "sgemm":
			return e.matmul(o.m, o.n, o.k, o.a, o.b, o.c32, gpu.F32, gpu.F32, gpu.Compute32FPedantic, stream)
		case "sgemm-tf32":
			return e.matmul(o.m, o.n, o.k, o.a, o.b, o.c32, gpu.F32, gpu.F32, gpu.Compute32FFastTF32, stream)
		case "hgemm":
			return e.matmul(o.m, o.n, o.k, o.a16[0], o.b16[0], o.c32, gpu.F16, gpu.F32, gpu.Compute32F, stream)
		case "bgemm":
			return e.matmul(o.m, o.n, o.k, o.abf[0], o.bbf[0], o.c32, gpu.BF16, gpu.F32, gpu.Compute32F, stream)
		case "dgemm":
			if o.a64 == nil {
				return fmt.Errorf("gpu: dgemm needs the fp64 operands")
			}
			return e.matmul(o.m, o.n, o.k, o.a64, o.b64, o.c64, gpu.F64, gpu.F64, gpu.Compute64F, stream)
		}
		return fmt.Errorf("gpu: unknown baseline %q", meth.Name)
	}
	p, err := multiword.Lookup(meth.Variant)
	if err != nil {
		return err
	}
	if e.checkFused(&p) == nil {
		return e.fusedOperands(&p, o, meth.Kernel, stream, split)
	}
	if !e.fast(&p) {
		return fmt.Errorf("gpu: variant %q is not a plain fp16/bf16/tf32 plan", meth.Variant)
	}
	ws, ok := o.words[p.Low.Name()+fmt.Sprint(p.Words)]
	if !ok {
		if ws[0], err = e.allocWords(p.Low, p.Words, o.m*o.k); err != nil {
			return err
		}
		if ws[1], err = e.allocWords(p.Low, p.Words, o.k*o.n); err != nil {
			ws[0].free()
			return err
		}
		o.words[p.Low.Name()+fmt.Sprint(p.Words)] = ws
	}
	if err := e.splitInto("split_f32", o.a, o.m*o.k, p.Low, p.WordShift, ws[0], stream); err != nil {
		return err
	}
	if err := e.splitInto("split_f32", o.b, o.k*o.n, p.Low, p.WordShift, ws[1], stream); err != nil {
		return err
	}
	if err := mark(); err != nil {
		return err
	}
	return e.products(&p, o.m, o.n, o.k, ws[0], ws[1], o.c32, false, stream)
}

// Timing is the median time of a method on n×n matrices.
type Timing struct {
	Method string
	N      int
	// Total is the whole product; Products leaves out the split (for the
	// fused kernels, every pass before the product kernel; the same as
	// Total for baselines). Both are medians over the timed runs.
	Total, Products time.Duration
	// MeanProducts is the mean of the timed runs without the split: the
	// multiword paper's t_avg = t_s/R of eq. (4.1), whose t_s "includes
	// only the computation of the matrix–matrix product".
	MeanProducts time.Duration
	Reps         int
}

// TFLOPs is the effective rate 2n³/t of a duration.
func TFLOPs(n int, t time.Duration) float64 {
	return 2 * math.Pow(float64(n), 3) / t.Seconds() / 1e12
}

// benchWarmup is the device time a method runs before it is timed (at
// least two runs, at most benchMaxWarmups more): an idle H100 clocks down,
// and ten n = 2048 products (2 ms) timed from idle ran up to 30 % slower.
const (
	benchWarmup     = 50 * time.Millisecond
	benchMaxWarmups = 1000
)

// Time measures each method on square n×n fp32 matrices uniform in (0,1]:
// reps timed runs (device events) after warm-ups (benchWarmup), medians.
// The timed runs of a method are queued back to back and waited for once,
// as a library's calls on a stream are: the events time the device's
// work, not the host's trips between calls (about 20 µs each, a tenth of
// an n = 2048 product, when every run waited for the one before). after
// is called after each method (for progress).
func (e *Engine) Time(n, reps int, methods []Method, after func()) ([]Timing, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	with64 := slices.ContainsFunc(methods, func(m Method) bool { return m.Name == "dgemm" })
	o, err := e.newOperands(n, n, n, 0, 1, with64)
	if err != nil {
		return nil, err
	}
	defer o.free()
	stream, err := e.d.NewStream()
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	// evs[r]: timed run r's start, end of its split, end.
	evs := make([][3]*gpu.Event, reps)
	for r := range evs {
		for i := range evs[r] {
			if evs[r][i], err = e.d.NewEvent(); err != nil {
				return nil, err
			}
			defer evs[r][i].Close()
		}
	}
	once := func(meth Method, ev [3]*gpu.Event) error {
		if err := ev[0].Record(stream); err != nil {
			return err
		}
		if err := e.run(meth, o, stream, ev[1]); err != nil {
			return fmt.Errorf("%s at n=%d: %w", meth.Name, n, err)
		}
		return ev[2].Record(stream)
	}
	var out []Timing
	for _, meth := range methods {
		// Two runs waited for (compiling, first touches; the second's
		// time sizes the warm-up), then warm-up runs worth benchWarmup
		// of device time, so that the clocks have risen from idle
		// before the timed runs.
		var est time.Duration
		for i := 0; i < 2; i++ {
			if err := once(meth, evs[0]); err != nil {
				return nil, err
			}
			if err := evs[0][2].Sync(); err != nil {
				return nil, err
			}
			if est, err = gpu.Elapsed(evs[0][0], evs[0][2]); err != nil {
				return nil, err
			}
		}
		for i := 0; i < min(benchMaxWarmups, int(benchWarmup/max(est, time.Microsecond))); i++ {
			if err := e.run(meth, o, stream, nil); err != nil {
				return nil, fmt.Errorf("%s at n=%d: %w", meth.Name, n, err)
			}
		}
		for _, ev := range evs {
			if err := once(meth, ev); err != nil {
				return nil, err
			}
		}
		if err := evs[len(evs)-1][2].Sync(); err != nil {
			return nil, err
		}
		var totals, prods []time.Duration
		for _, ev := range evs {
			t, err := gpu.Elapsed(ev[0], ev[2])
			if err != nil {
				return nil, err
			}
			tp, err := gpu.Elapsed(ev[1], ev[2])
			if err != nil {
				return nil, err
			}
			totals, prods = append(totals, t), append(prods, tp)
		}
		out = append(out, Timing{Method: meth.Name, N: n, Total: median(totals), Products: median(prods),
			MeanProducts: mean(prods), Reps: reps})
		if after != nil {
			after()
		}
	}
	return out, nil
}

func mean(ts []time.Duration) time.Duration {
	var s time.Duration
	for _, t := range ts {
		s += t
	}
	return s / time.Duration(len(ts))
}

func median(ts []time.Duration) time.Duration {
	s := slices.Clone(ts)
	slices.Sort(s)
	return s[len(s)/2]
}

// Accuracy is the error of a method against the fp64 product on the GPU.
type Accuracy struct {
	Method                  string
	Dist                    string
	N                       int
	Componentwise, Normwise float64
}

// DistNames are the data of Accuracy, by index: the paper's two uniform
// distributions (their names as the paper writes them, and as CSVs of
// earlier runs have them), the standard normal, and magnitudes
// log-uniform in [1e-3, 1e3] with random signs (six decades: a range the
// paper's data lack, where scaling and the exponent range matter).
var DistNames = []string{"(0,1]", "(-0.5,0.5]", "normal", "log-uniform ±[1e-3,1e3]"}

// Accuracy multiplies A (m×n) and B (n×m), drawn from DistNames[dist]
// (see newOperands), with each method and measures the componentwise
// error max|C−Ĉ|/(|A||B|) and the normwise ‖C−Ĉ‖_F/‖C‖_F, with C and
// |A||B| computed by DGEMM from the same fp32 data.
func (e *Engine) Accuracy(m, n, dist int, seed uint64, methods []Method) ([]Accuracy, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	o, err := e.newOperands(m, m, n, dist, seed, true)
	if err != nil {
		return nil, err
	}
	defer o.free()
	ref, abs := make([]float64, m*m), make([]float64, m*m)
	if err := e.matmul(m, m, n, o.a64, o.b64, o.c64, gpu.F64, gpu.F64, gpu.Compute64F, nil); err != nil {
		return nil, err
	}
	if err := e.d.Download(ref, o.c64); err != nil {
		return nil, err
	}
	absFn, err := e.mod.Function("abs_f64")
	if err != nil {
		return nil, err
	}
	for i, x := range []*gpu.Buffer{o.a64, o.b64} {
		elems := []int{m * n, n * m}[i]
		if err := absFn.Launch(gpu.StrideGrid(elems), [3]uint32{256, 1, 1}, 0, nil, x, x, int64(elems)); err != nil {
			return nil, err
		}
	}
	if err := e.matmul(m, m, n, o.a64, o.b64, o.c64, gpu.F64, gpu.F64, gpu.Compute64F, nil); err != nil {
		return nil, err
	}
	if err := e.d.Download(abs, o.c64); err != nil {
		return nil, err
	}
	var out []Accuracy
	got := make([]float32, m*m)
	for _, meth := range methods {
		if meth.Name == "dgemm" {
			continue // the reference itself
		}
		if err := e.d.Memset32(o.c32, 0x7fc00000); err != nil {
			return nil, err
		}
		if err := e.run(meth, o, nil, nil); err != nil {
			return nil, fmt.Errorf("%s at n=%d: %w", meth.Name, n, err)
		}
		if err := e.d.Download(got, o.c32); err != nil {
			return nil, err
		}
		cw, nw := errorsAgainst(ref, abs, got)
		out = append(out, Accuracy{Method: meth.Name, Dist: DistNames[dist], N: n, Componentwise: cw, Normwise: nw})
	}
	return out, nil
}

// errorsAgainst is multiword.Errors with C and |A||B| given.
func errorsAgainst(ref, abs []float64, got []float32) (componentwise, normwise float64) {
	var num, den float64
	for i, c := range ref {
		d := math.Abs(c - float64(got[i]))
		if math.IsNaN(d) {
			return math.Inf(1), math.Inf(1)
		}
		num += d * d
		den += c * c
		if d != 0 {
			componentwise = max(componentwise, d/abs[i])
		}
	}
	return componentwise, math.Sqrt(num / den)
}
