package gemm

import (
	"fmt"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
	"github.com/mwmm/mwmm/multiword"
)

// FusedKernel chooses the kernel behind Engine.Fused.
type FusedKernel int

const (
	// KernelAuto takes the wgmma kernel where it runs the plan and the
	// operands (sm_90, see WGMMASupports) and the mma.sync kernel elsewhere.
	KernelAuto FusedKernel = iota
	// KernelMMA is fused.cu: mma.sync, any GPU from sm_80.
	KernelMMA
	// KernelWGMMA is wgmma.cu (Hopper) on words split ahead of it
	// (wgmma_split, into the engine's scratch memory: 2 bytes per element
	// and word of A and B, 4 for tf32): an error where it cannot run.
	KernelWGMMA
	// KernelWGMMASmem is wgmma.cu splitting the fp32 tiles in shared
	// memory (its producer warpgroup), with no word buffers; A and B must
	// be 16-byte aligned with leading dimensions divisible by 4.
	KernelWGMMASmem
)

func (k FusedKernel) String() string {
	switch k {
	case KernelMMA:
		return "mma"
	case KernelWGMMA:
		return "wgmma"
	case KernelWGMMASmem:
		return "wgmma-smem"
	}
	return "auto"
}

// wgmmaGroupRegs is how many of a consumer thread's 64 outputs keep their
// grouped FABsum-v2 fp64 sums (or pairs) in registers, the rest in shared
// memory (wgmma.cu's GROUP_WREG; docs/perf/fabsum-kernels.md has 32 to 48): 40
// for fp16 words; 48 for the larger stages of three bf16 or two
// tf32 words, so that one more stage fits; 32 for pairs, whose TwoSum
// needs temporaries.
func wgmmaGroupRegs(p *multiword.Plan) int {
	switch {
	case p.Sum == bound.FABsumPair:
		return 32 // TwoSum's temporaries: with 40, ptxas spilled
	case p.Low == format.Binary16:
		return 40
	}
	return 48
}

// wgmmaStages chooses the pipeline depths, and returns the dynamic shared
// memory they take. Splitting in shared memory: as many fp32 stages for
// the copy engine as fit (up to 4: the loads' latency is what limits the
// kernel) with at least 2 word stages beside them (up to 4); sf is 0 where
// not even 2 and 2 fit. On presplit words: up to 8 word stages, sf = 0.
func wgmmaStages(p *multiword.Plan, presplit bool) (sf, sw, bytes int) {
	words := 2 * wgmmaWordTile(p)
	wide := 0
	if (p.Sum == bound.FABsumV2 || p.Sum == bound.FABsumPair) && p.Group > 1 {
		wide = 256 * (64 - wgmmaGroupRegs(p)) * 8 // wgmma.cu's WIDE_SMEM: the fp64 sums not in registers
	}
	if presplit {
		sw = min(8, (wgMaxShared-1024-wide)/(words+16))
		return 0, sw, 1024 + wide + sw*(words+16)
	}
	const f32 = 2 * 128 * wgBK * 4
	for sf = 4; sf >= 2; sf-- {
		fixed := 1024 + sf*f32 + wide // alignment slack, fp32 stages, fp64 sums
		sw = min(4, (wgMaxShared-fixed-8*(sf+8))/words)
		if sw >= 2 {
			return sf, sw, fixed + sw*words + 8*(sf+2*sw)
		}
	}
	return 0, 0, 0
}

// wgmmaWordTile is the bytes of one 128-line × 32-k tile in all the plan's
// words.
func wgmmaWordTile(p *multiword.Plan) int {
	word, _, _ := fusedWord(p.Low)
	esz := 2
	if word == 2 {
		esz = 4
	}
	return max(p.Words, 1) * 128 * wgBK * esz
}

// wgmmaTiles is the number of 128-line × 32-k tiles of lines × k.
func wgmmaTiles(lines, k int) int { return ((lines + wgBM - 1) / wgBM) * ((k + wgBK - 1) / wgBK) }

// wgmmaPlan reports why wgmma.cu cannot compute the plan, or nil: it keeps
// one accumulator per output, so a multiword plan must be FABsumJoint.
func wgmmaPlan(p *multiword.Plan) error {
	if err := FusedSupports(p); err != nil {
		return err
	}
	switch {
	case p.Words > 1 && !p.FABsumJoint:
		return fmt.Errorf("gpu: the wgmma kernel keeps one accumulator per output; plan %q needs joint=on (FABsumJoint)", p.Name)
	case p.Words > 1 && p.Sum == bound.Plain:
		return fmt.Errorf("gpu: the wgmma kernel runs multiword plans with FABsum, plan %q is plain", p.Name)
	case p.Sum != bound.Plain && p.Block%wgBK != 0:
		return fmt.Errorf("gpu: the wgmma kernel's FABsum block b must be a multiple of %d, plan %q has %d", wgBK, p.Name, p.Block)
	}
	if _, sw, _ := wgmmaStages(p, true); sw < 2 {
		return fmt.Errorf("gpu: plan %q's %d %s words leave no room for 2 shared-memory stages", p.Name, p.Words, p.Low.Name())
	}
	return nil
}

// wgmmaOperands reports why the copy engine cannot read A or B: it needs
// 16-byte aligned addresses and leading dimensions.
func wgmmaOperands(a *FusedArgs, lda, ldb int) error {
	switch {
	case a.A.Ptr()%16 != 0 || lda%4 != 0:
		return fmt.Errorf("gpu: the wgmma kernel needs A 16-byte aligned with a leading dimension divisible by 4 (got %d)", lda)
	case a.B.Ptr()%16 != 0 || ldb%4 != 0:
		return fmt.Errorf("gpu: the wgmma kernel needs B 16-byte aligned with a leading dimension divisible by 4 (got %d)", ldb)
	}
	return nil
}

// WGMMASupports reports why the wgmma kernel cannot run plan p on this
// engine's GPU, or nil. Any operands will do; KernelWGMMASmem also needs
// them 16-byte aligned with leading dimensions divisible by 4.
func (e *Engine) WGMMASupports(p multiword.Plan) error {
	if maj, min := e.d.ComputeCapability(); maj != 9 || min != 0 {
		return fmt.Errorf("gpu: the wgmma kernel runs on sm_90 (Hopper), not %s", e.d.Arch())
	}
	if err := p.Check(); err != nil {
		return err
	}
	return wgmmaPlan(&p)
}

// wgmmaModule compiles wgmma.cu for a configuration and returns its
// kernel, allowed the shared memory, and (presplit) wgmma_split.
func (e *Engine) wgmmaModule(c wgmmaConfig) (gemm, split *gpu.Function, err error) {
	mod, err := e.d.Module(kernel("wgmma"), moduleOptions(c.defines())...)
	if err != nil {
		return nil, nil, err
	}
	if gemm, err = mod.Function("wgmma_gemm"); err != nil {
		return nil, nil, err
	}
	if err := gemm.SetMaxDynamicShared(c.shared); err != nil {
		return nil, nil, err
	}
	if c.presplit {
		if split, err = mod.Function("wgmma_split"); err != nil {
			return nil, nil, err
		}
	}
	return gemm, split, nil
}

// tensorMap describes an fp32 matrix for the copy engine in boxes of
// 128 lines × 32 k: k-contiguous storage is read in 128-byte swizzled
// lines, the other in k-rows of 128 elements. The map is encoded on the
// device's thread (the driver wants the context current), in q's turn:
// before the launch that reads it.
func tensorMap(q *gpu.LaunchQueue, buf *gpu.Buffer, l Layout, kContig bool, lines, k, ld int) *cuda.TensorMap {
	tm := new(cuda.TensorMap)
	q.Do(func() error {
		var err error
		if kContig {
			err = cuda.EncodeTiled2D(tm, cuda.TensorFloat32, buf.Ptr(), uint64(lines), uint64(k), uint64(4*ld), 128, wgBK, cuda.Swizzle128B)
		} else {
			err = cuda.EncodeTiled2D(tm, cuda.TensorFloat32, buf.Ptr(), uint64(k), uint64(lines), uint64(4*ld), wgBK, 128, cuda.SwizzleNone)
		}
		if err != nil {
			return fmt.Errorf("gpu: describing %s for the copy engine: %w", l, err)
		}
		return nil
	})
	return tm
}

// launchWGMMA queues wgmma.cu on the scanned operands (ea, eb: the scale
// exponents or 0). words, if not 0, is device memory for wgmma_split's
// output for A then B (wgmmaTiles × the words' tile each): the kernel then runs on
// presplit words. flags, if not 0, are line_amax's flags for A's rows and
// B's columns, which the split then sets to mark for entries beyond limit
// itself (no scan ran).
func (e *Engine) launchWGMMA(q *gpu.LaunchQueue, cfg *fusedConfig, p *multiword.Plan, a *FusedArgs, lda, ldb, ldc int, ea, eb, words uintptr,
	flags [2]uintptr, limit, mark uint32) error {
	c := cfg.wgmma
	presplit := words != 0
	tmA, tmB := new(cuda.TensorMap), new(cuda.TensorMap) // unused on presplit words
	wordsA, wordsB := words, words
	if presplit {
		wordsB += uintptr(wgmmaTiles(a.M, a.K) * cfg.wordTile)
		sp := wgmmaSplitParams{
			XA: uint64(a.A.Ptr()), LdA: int64(lda), KContigA: b2i32(a.LayoutA == RowMajor), LinesA: int32(a.M),
			EA: uint64(ea), OutA: uint64(wordsA), TA: int64(wgmmaTiles(a.M, a.K)), FlagsA: uint64(flags[0]),
			XB: uint64(a.B.Ptr()), LdB: int64(ldb), KContigB: b2i32(a.LayoutB == ColMajor), LinesB: int32(a.N),
			EB: uint64(eb), OutB: uint64(wordsB), TB: int64(wgmmaTiles(a.N, a.K)), FlagsB: uint64(flags[1]),
			K: int32(a.K), Limit: limit, Mark: mark,
		}
		if err := q.Launch(cfg.split, c.splitGrid(sp.TA+sp.TB), c.splitBlock(), 0, a.Stream, gpu.ParamsOf(&sp, a.A, a.B)); err != nil {
			return err
		}
	} else {
		tmA = tensorMap(q, a.A, a.LayoutA, a.LayoutA == RowMajor, a.M, a.K, lda)
		tmB = tensorMap(q, a.B, a.LayoutB, a.LayoutB == ColMajor, a.N, a.K, ldb)
	}
	bitems := int32(1 << 30)
	if p.Sum != bound.Plain && p.Block > 0 {
		bitems = int32(p.Block / wgBK)
	}
	sms := e.d.Multiprocessors()
	if a.SMs > 0 {
		sms = min(sms, a.SMs)
	}
	grid, err := c.grid(a.M, a.N, sms)
	if err != nil {
		return err
	}
	markPasses(q, a)
	params := wgmmaParams{
		C: uint64(a.C.Ptr()), Ldc: int64(ldc), CRowmajor: b2i32(a.LayoutC == RowMajor), M: int32(a.M), N: int32(a.N), K: int32(a.K),
		Ea: uint64(ea), Eb: uint64(eb), Bitems: bitems, WordsA: uint64(wordsA), WordsB: uint64(wordsB),
	}
	return q.Launch(cfg.gemm, grid, c.block(), uint32(c.shared), a.Stream, tmA, tmB, gpu.ParamsOf(&params, a.C))
}
