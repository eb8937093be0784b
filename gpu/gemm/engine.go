package gemm

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/mma"
	"github.com/mwmm/mwmm/multiword"
)

// Register makes this package's engine and units reachable by name:
// multiword.Open("gpu") or "gpu:N", and mma.Open("gpu:mma.sync"),
// "gpu:wgmma", "gpu:fma" (gpuN: device N). cmd/mwmm calls it once at
// start-up; a program that builds its Engine with NewEngine needs not.
func Register() {
	mma.RegisterHardware("gpu", "the GPU's own arithmetic: gpu:mma.sync, gpu:wgmma, gpu:fma (gpuN: device N)", openUnit)
	multiword.Register("gpu", func(arg string) (multiword.Engine, error) {
		i := 0
		if arg != "" {
			var err error
			if i, err = strconv.Atoi(arg); err != nil || i < 0 {
				return nil, fmt.Errorf("gpu: engine gpu takes a device index, as gpu:1, got %q", arg)
			}
		}
		return SharedEngine(i)
	})
}

var (
	enginesMu sync.Mutex
	engines   = map[int]*Engine{}
)

// SharedEngine returns the process's engine on device i, opening the
// device on first use: engines are costly (a context, compiled kernels, a
// cuBLASLt handle) and one per device is enough.
func SharedEngine(i int) (*Engine, error) {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	if e, ok := engines[i]; ok {
		return e, nil
	}
	d, err := gpu.OpenIndex(i)
	if err != nil {
		return nil, err
	}
	e, err := NewEngine(d)
	if err != nil {
		d.Close()
		return nil, err
	}
	engines[i] = e
	return e, nil
}

// Engine is the multiword engine "gpu": Algorithm 4.1 of
// multiword-matmul-tensor-cores.txt with the words made on the device by
// the split kernel and every product A_i·B_j a cuBLASLt matmul with
// low-precision inputs and fp32 accumulation (β = 1 accumulates into C,
// α = 2^(−t(i+j)) undoes a word shift).
//
// Plain plans with fp16, bf16 or TF32 words, fp32 accumulation
// and round-to-nearest splitting take that fast path. Every other plan
// (FABsum, narrow-range scaling, fp8 words, special values in A or B) runs
// through multiword.Drive with cuBLASLt as its block FMA: the same
// arithmetic on the GPU, with the splitting and summation on the CPU.
type Engine struct {
	d         *gpu.Device
	lt        *gpu.Lt
	mod       *gpu.Module
	workspace *gpu.Buffer
	mu        sync.Mutex // one product at a time: the buffers are the engine's

	scratchMu   sync.Mutex
	scratchBufs map[*gpu.Stream]*gpu.Buffer // the fused kernel's row and column data, per stream
	flagBufs    map[*gpu.Stream]*lineFlags  // and its flags of lines with specials

	kernel FusedKernel // Multiply's fused kernel (tests compare both)

	cfgMu sync.Mutex
	cfgs  map[fusedKey]*fusedConfig // the fused kernels' configurations, per plan and call shape

}

// workspaceBytes is cuBLASLt's scratch memory: the faster algorithms want
// some, and 32 MiB is what NVIDIA recommends for Hopper.
const workspaceBytes = 32 << 20

// NewEngine builds the engine on d: the split kernels are compiled (or read
// from the cache) and the cuBLASLt handle made now, so that failures show
// here.
func NewEngine(d *gpu.Device) (*Engine, error) {
	lt, err := d.Lt()
	if err != nil {
		return nil, err
	}
	mod, err := d.Module(kernel("split"), "--fmad=false")
	if err != nil {
		return nil, err
	}
	ws, err := d.Alloc(workspaceBytes)
	if err != nil {
		return nil, err
	}
	return &Engine{d: d, lt: lt, mod: mod, workspace: ws}, nil
}

// Device returns the engine's device.
func (e *Engine) Device() *gpu.Device { return e.d }

// Lt returns the engine's cuBLASLt handle, and Workspace its scratch
// memory for cuBLASLt's faster algorithms: the solver's products share them.
func (e *Engine) Lt() *gpu.Lt { return e.lt }

// Workspace: see Lt.
func (e *Engine) Workspace() *gpu.Buffer { return e.workspace }

func (e *Engine) Name() string { return "gpu" }

// wordType is how a word format travels to cuBLASLt.
type wordType struct {
	data    gpu.DataType
	kind    int32 // the split kernel's KIND_*
	compute gpu.ComputeType
}

func wordTypeOf(f format.Format) (wordType, bool) {
	switch f {
	case format.Binary16:
		return wordType{gpu.F16, 0, gpu.Compute32F}, true
	case format.BFloat16:
		return wordType{gpu.BF16, 1, gpu.Compute32F}, true
	case format.TF32:
		return wordType{gpu.F32, 2, gpu.Compute32FFastTF32}, true
	case format.E4M3:
		return wordType{gpu.E4M3, -1, gpu.Compute32F}, true // kind -1: encoded on the host
	case format.E5M2:
		// cuBLASLt has no e5m2×e5m2 product (NOT_SUPPORTED on the H200),
		// but e5m2 values are fp16 values (same exponent range, fewer
		// bits): the split kernel rounds to e5m2 and stores fp16, and
		// the fp16 tensor cores multiply them exactly.
		return wordType{gpu.F16, 0, gpu.Compute32F}, true
	}
	return wordType{}, false
}

// Multiply computes C = A·B with the plan (see multiword.Engine).
func (e *Engine) Multiply(p multiword.Plan, m, n, k int, a, b, c []float64) error {
	if err := multiword.CheckArgs(&p, m, n, k, a, b, c); err != nil {
		return err
	}
	if e.checkFused(&p) == nil && Binary32Values(a) && Binary32Values(b) {
		return e.multiplyFused(&p, m, n, k, a, b, c)
	}
	if e.fast(&p) && allFinite(a) && allFinite(b) {
		return e.multiplyFast(&p, m, n, k, a, b, c)
	}
	if _, ok := wordTypeOf(p.Low); !ok {
		return fmt.Errorf("gpu: plan %q has %s words; the gpu engine takes fp16, bf16, tf32, e4m3 and e5m2 words", p.Name, p.Low.Name())
	}
	if p.Acc != format.Binary32 {
		return fmt.Errorf("gpu: plan %q accumulates in %s; cuBLASLt's tensor-core products accumulate in fp32", p.Name, p.Acc.Name())
	}
	return multiword.Drive(e.gemm, p, m, n, k, a, b, c)
}

// fast reports whether the plan is Algorithm 4.1 as the fast path does it.
func (e *Engine) fast(p *multiword.Plan) bool {
	wt, ok := wordTypeOf(p.Low)
	return ok && wt.kind >= 0 && p.Acc == format.Binary32 && p.Sum == bound.Plain && !p.Scale &&
		p.SplitMode == format.NearestEven && p.Words <= 4
}

func allFinite(x []float64) bool {
	for _, v := range x {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return false
		}
	}
	return true
}

// wordBuffers holds the words of one matrix on the device.
type wordBuffers []*gpu.Buffer

func (w wordBuffers) free() { gpu.FreeAll(w...) }

func (w wordBuffers) ptr(i int) uintptr {
	if i < len(w) {
		return w[i].Ptr()
	}
	return 0
}

// allocWords allocates p words of elems elements of f.
func (e *Engine) allocWords(f format.Format, p, elems int) (wordBuffers, error) {
	wt, _ := wordTypeOf(f)
	ws := make(wordBuffers, p)
	for i := range ws {
		var err error
		if ws[i], err = e.d.Alloc(elems * wt.data.Size()); err != nil {
			ws.free()
			return nil, err
		}
	}
	return ws, nil
}

// split launches the split kernel on x (float32 or float64 elements, as
// the kernel name says) into p words of f.
func (e *Engine) split(kernel string, x *gpu.Buffer, elems int, f format.Format, p, shift int, stream *gpu.Stream) (wordBuffers, error) {
	ws, err := e.allocWords(f, p, elems)
	if err != nil {
		return nil, err
	}
	if err := e.splitInto(kernel, x, elems, f, shift, ws, stream); err != nil {
		ws.free()
		return nil, err
	}
	return ws, nil
}

// splitInto splits x into the words ws (len(ws) of them) of f.
func (e *Engine) splitInto(kernel string, x *gpu.Buffer, elems int, f format.Format, shift int, ws wordBuffers, stream *gpu.Stream) error {
	wt, _ := wordTypeOf(f)
	fn, err := e.mod.Function(kernel)
	if err != nil {
		return err
	}
	params := splitParams{X: uint64(x.Ptr()), W0: uint64(ws.ptr(0)), W1: uint64(ws.ptr(1)), W2: uint64(ws.ptr(2)), W3: uint64(ws.ptr(3)),
		N: int64(elems), Words: int32(len(ws)), Kind: wt.kind, Prec: int32(f.Precision()), Emin: int32(f.Emin()),
		Maxv: f.MaxFinite(), Shift: math.Ldexp(1, shift)}
	return fn.Launch(gpu.StrideGrid(elems), [3]uint32{256, 1, 1}, 0, stream, gpu.ParamsOf(&params, append([]*gpu.Buffer{x}, ws...)...))
}

// products accumulates the plan's products of words into c (m×n fp32,
// row-major): row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ, so B's words
// come first and nothing is transposed.
func (e *Engine) products(p *multiword.Plan, m, n, k int, aw, bw wordBuffers, c *gpu.Buffer, accumulate bool, stream *gpu.Stream) error {
	wt, _ := wordTypeOf(p.Low)
	pairs := p.Pairs
	if pairs == nil {
		pairs = multiword.Triangle(p.Words)
	}
	for x, pr := range pairs {
		beta := 1.0
		if x == 0 && !accumulate {
			beta = 0
		}
		err := e.lt.Matmul(gpu.MatmulSpec{
			M: n, N: m, K: k, A: bw[pr.J], B: aw[pr.I], C: c, D: c,
			LdA: n, LdB: k, LdC: n, LdD: n,
			TypeA: wt.data, TypeB: wt.data, TypeC: gpu.F32, TypeD: gpu.F32, Compute: wt.compute,
			Alpha: math.Ldexp(1, -p.WordShift*(pr.I+pr.J)), Beta: beta,
			Workspace: e.workspace, Stream: stream,
		})
		if err != nil {
			return fmt.Errorf("gpu: product %s of plan %q: %w", pr, p.Name, err)
		}
	}
	return nil
}

func (e *Engine) multiplyFast(p *multiword.Plan, m, n, k int, a, b, c []float64) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	aw, err := e.wordsOf(a, p.Low, p.Words, p.WordShift)
	if err != nil {
		return err
	}
	defer aw.free()
	bw, err := e.wordsOf(b, p.Low, p.Words, p.WordShift)
	if err != nil {
		return err
	}
	defer bw.free()
	dc, err := e.d.Alloc(4 * m * n)
	if err != nil {
		return err
	}
	defer dc.Free()
	// NaN poison: an element the products fail to write shows.
	if err := e.d.Memset32(dc, 0x7fc00000); err != nil {
		return err
	}
	if err := e.products(p, m, n, k, aw, bw, dc, false, nil); err != nil {
		return err
	}
	out := make([]float32, m*n)
	if err := e.d.Download(out, dc); err != nil {
		return err
	}
	for i, v := range out {
		c[i] = p.Out.Round(float64(v), format.NearestEven)
	}
	return nil
}

// wordsOf uploads x and splits it on the device into p words of f (word
// shift t); the float64 copy is freed once the split has run.
func (e *Engine) wordsOf(x []float64, f format.Format, p, shift int) (wordBuffers, error) {
	buf, err := e.d.Alloc(8 * len(x))
	if err != nil {
		return nil, err
	}
	defer buf.Free()
	if err := e.d.Upload(buf, x); err != nil {
		return nil, err
	}
	ws, err := e.split("split_f64", buf, len(x), f, p, shift, nil)
	if err != nil {
		return nil, err
	}
	if err := e.d.Sync(); err != nil { // the split reads buf
		ws.free()
		return nil, err
	}
	return ws, nil
}

// gemm is the block FMA of multiword.Drive: C = A·B + C through one
// cuBLASLt product of words (already of p.Low: the split kernel with one
// word only stores them in the word type).
func (e *Engine) gemm(p *multiword.Plan, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64) error {
	if wt, _ := wordTypeOf(p.Low); wt.kind < 0 {
		return e.gemm8(p, wt.data, m, n, k, a, lda, b, ldb, c)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	pack := func(x []float64, rows, cols, ld int) []float64 {
		out := make([]float64, rows*cols)
		for i := 0; i < rows; i++ {
			copy(out[i*cols:(i+1)*cols], x[i*ld:i*ld+cols])
		}
		return out
	}
	aw, err := e.wordsOf(pack(a, m, k, lda), p.Low, 1, 0)
	if err != nil {
		return err
	}
	defer aw.free()
	bw, err := e.wordsOf(pack(b, k, n, ldb), p.Low, 1, 0)
	if err != nil {
		return err
	}
	defer bw.free()
	c32 := make([]float32, m*n)
	for i, v := range c {
		c32[i] = float32(v) // exact: values of fp32
	}
	dc, err := e.d.Alloc(4 * m * n)
	if err != nil {
		return err
	}
	defer dc.Free()
	if err := e.d.Upload(dc, c32); err != nil {
		return err
	}
	one := multiword.Plan{Name: p.Name, Low: p.Low, Words: 1}
	if err := e.products(&one, m, n, k, aw, bw, dc, true, nil); err != nil {
		return err
	}
	if err := e.d.Download(c32, dc); err != nil {
		return err
	}
	for i, v := range c32 {
		c[i] = float64(v)
	}
	return nil
}

// gemm8 is gemm for fp8 words. cuBLASLt multiplies fp8 only in the TN
// layout (both operands k-contiguous) with leading dimensions that are
// multiples of 16, so the words are encoded on the host, B transposed, and
// every dimension padded with zeros to a multiple of 16 (exact).
func (e *Engine) gemm8(p *multiword.Plan, dt gpu.DataType, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	mp, np, kp := roundUp(m, 16), roundUp(n, 16), roundUp(k, 16)
	f := p.Low
	a8, bt8 := make([]uint8, mp*kp), make([]uint8, np*kp)
	for i := 0; i < m; i++ {
		for l := 0; l < k; l++ {
			code, err := f.Encode(a[i*lda+l])
			if err != nil {
				return fmt.Errorf("gpu: a word of A: %w", err)
			}
			a8[i*kp+l] = uint8(code)
		}
	}
	for l := 0; l < k; l++ {
		for j := 0; j < n; j++ {
			code, err := f.Encode(b[l*ldb+j])
			if err != nil {
				return fmt.Errorf("gpu: a word of B: %w", err)
			}
			bt8[j*kp+l] = uint8(code)
		}
	}
	c32 := make([]float32, mp*np)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			c32[i*np+j] = float32(c[i*n+j])
		}
	}
	var bufs []*gpu.Buffer
	defer func() {
		for _, b := range bufs {
			b.Free()
		}
	}()
	load := func(x any, bytes int) (*gpu.Buffer, error) {
		buf, err := e.d.Alloc(bytes)
		if err == nil {
			bufs = append(bufs, buf)
			err = e.d.Upload(buf, x)
		}
		return buf, err
	}
	da, err := load(a8, len(a8))
	if err != nil {
		return err
	}
	db, err := load(bt8, len(bt8))
	if err != nil {
		return err
	}
	dc, err := load(c32, 4*len(c32))
	if err != nil {
		return err
	}
	err = e.lt.Matmul(gpu.MatmulSpec{M: np, N: mp, K: kp, TransA: true, A: db, B: da, C: dc, D: dc,
		LdA: kp, LdB: kp, LdC: np, LdD: np, TypeA: dt, TypeB: dt, TypeC: gpu.F32, TypeD: gpu.F32,
		Compute: gpu.Compute32F, Alpha: 1, Beta: 1, Workspace: e.workspace})
	if err != nil {
		return fmt.Errorf("gpu: %s product of plan %q: %w", f.Name(), p.Name, err)
	}
	if err := e.d.Download(c32, dc); err != nil {
		return err
	}
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			c[i*n+j] = float64(c32[i*np+j])
		}
	}
	return nil
}

// UnitError is the error model of the GPU's tensor cores for Plan.Bound:
// the measured Hopper model (h100) on sm_90, the A100 model elsewhere. The
// fused kernel chains single mma.sync steps, which the model describes;
// for cuBLASLt's products the error is doubled, since cuBLASLt may also
// split k and add the parts in fp32.
func (e *Engine) UnitError(p *multiword.Plan) (multiword.UnitError, error) {
	low := p.Low.Name()
	if p.Low == format.E4M3 || p.Low == format.E5M2 {
		low = "fp16" // fp8 products are exact in fp16's adder as well
	}
	preset := "a100"
	if hopper(e.d) {
		preset = "h100"
	}
	u, err := mma.Lookup(preset, low, "fp32")
	if err != nil {
		return multiword.UnitError{}, fmt.Errorf("gpu: no error model for %s words: %w", p.Low.Name(), err)
	}
	ue := multiword.ModelError(u.Params())
	if e.checkFused(p) != nil {
		ue.U *= 2
	}
	return ue, nil
}

// String names the engine and its device.
func (e *Engine) String() string {
	return "gpu (" + strings.TrimSpace(e.d.Name()) + ")"
}

// hopper reports an sm_90 device, where the wgmma kernels run.
func hopper(d *gpu.Device) bool {
	major, _ := d.ComputeCapability()
	return major == 9
}

// roundUp rounds x up to a multiple of m.
func roundUp(x, m int) int { return (x + m - 1) / m * m }
