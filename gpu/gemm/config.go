package gemm

import (
	"errors"
	"strconv"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/multiword"
)

// A define is one NVRTC -D option. The kernel files give their macros no
// defaults (each #errors when one is missing), so a value exists once, here.
type define struct {
	name  string
	value int
}

// defineBool is a define of 1 or 0.
func defineBool(name string, b bool) define { return define{name, int(b2i32(b))} }

// moduleOptions returns a GEMM module's NVRTC options: every product
// rounded on its own (--fmad=false, the papers' arithmetic), then the
// defines in order.
func moduleOptions(defs []define) []string {
	opts := make([]string, 0, 1+len(defs))
	opts = append(opts, "--fmad=false")
	for _, d := range defs {
		opts = append(opts, "-D"+d.name+"="+strconv.Itoa(d.value))
	}
	return opts
}

// kernelPlan is what both fused kernel families compile in from a plan and
// the layouts of A and B.
type kernelPlan struct {
	word     int  // WORD: 0 binary16, 1 bfloat16, 2 tf32
	words    int  // NWORDS
	allPairs bool // ALLPAIRS: all p² products, not the triangle
	ak       bool // AK: A row-major (k contiguous)
	bkm      bool // BKM: B column-major (k contiguous)
	sum      int  // SUM: 0 plain, 1 v1, 2 v2, 3 pair
	group    int  // GROUP: blocks per group sum, at least 1
	jprod    bool // JPROD: the products in turn over each block
}

func newKernelPlan(p *multiword.Plan, la, lb Layout) (kernelPlan, error) {
	word, _, ok := fusedWord(p.Low)
	if !ok {
		return kernelPlan{}, errors.New("gpu: the fused kernels take fp16, bf16 or tf32 words, not " + p.Low.Name())
	}
	all, err := fusedPairs(p)
	if err != nil {
		return kernelPlan{}, err
	}
	sum := map[bound.Summation]int{bound.Plain: 0, bound.FABsumV1: 1, bound.FABsumV2: 2, bound.FABsumPair: 3}[p.Sum]
	return kernelPlan{word: word, words: p.Words, allPairs: all, ak: la == RowMajor, bkm: lb == ColMajor,
		sum: sum, group: max(p.Group, 1), jprod: jointProducts(p)}, nil
}

func (k kernelPlan) defines() []define {
	return []define{{"WORD", k.word}, {"NWORDS", k.words}, defineBool("ALLPAIRS", k.allPairs),
		defineBool("AK", k.ak), defineBool("BKM", k.bkm), {"SUM", k.sum}, {"GROUP", k.group}, defineBool("JPROD", k.jprod)}
}

// The mma.sync kernel's tile (fused.cu): blocks of 256 threads (8 warps of
// 32×32 outputs) computing 128×64 outputs, 32 k per shared-memory stage.
// fused.cu's thread mapping is written for these values and #errors for
// others.
const (
	fusedBM      = 128
	fusedBN      = 64
	fusedBK      = 32
	fusedThreads = 256
)

// mmaConfig is fused.cu's configuration: its defines, dynamic shared
// memory and launch shape.
type mmaConfig struct {
	kernelPlan
	joint bool // JOINT: every product into the A_1B_1 accumulator
}

func newMMAConfig(p *multiword.Plan, la, lb Layout) (mmaConfig, error) {
	k, err := newKernelPlan(p, la, lb)
	return mmaConfig{kernelPlan: k, joint: p.FABsumJoint}, err
}

func (c mmaConfig) defines() []define {
	return append(c.kernelPlan.defines(), defineBool("JOINT", c.joint),
		define{"BM", fusedBM}, define{"BN", fusedBN}, define{"BKT", fusedBK}, define{"THREADS", fusedThreads},
		define{"SHARED_BYTES", c.shared()})
}

// shared is the kernel's dynamic shared memory: two stages of the words
// of an A and a B tile, padded so that fragment loads hit 32 distinct
// banks (fused.cu's STAGE_BYTES, which static_asserts the sum).
func (c mmaConfig) shared() int {
	esz, padK := 2, 8
	if c.word == 2 {
		esz, padK = 4, 4
	}
	const padMN = 8
	aElems, bElems := fusedBK*(fusedBM+padMN), fusedBK*(fusedBN+padMN)
	if c.ak {
		aElems = fusedBM * (fusedBK + padK)
	}
	if c.bkm {
		bElems = fusedBN * (fusedBK + padK)
	}
	return 2 * c.words * (aElems + bElems) * esz
}

// grid is a block per 128×64 tile of the m×n output (x along n).
func (mmaConfig) grid(m, n int) [3]uint32 {
	return [3]uint32{uint32((n + fusedBN - 1) / fusedBN), uint32((m + fusedBM - 1) / fusedBM), 1}
}

func (mmaConfig) block() [3]uint32 { return [3]uint32{fusedThreads, 1, 1} }

// The wgmma kernel's tile (wgmma.cu): 128×128 outputs, 32 k per pipeline
// item, three warpgroups (a producer, two consumers); wgmma_split splits
// a 128-line × 32-k tile per 128-thread block.
const (
	wgBM, wgBN, wgBK = 128, 128, 32
	wgThreads        = 384
	wgSplitThreads   = 128
	wgMaxShared      = 227 * 1024 // sm_90's opt-in limit per block
)

// wgmmaConfig is wgmma.cu's configuration: its defines, dynamic shared
// memory and launch shapes.
type wgmmaConfig struct {
	kernelPlan
	sf, sw    int  // SF, SW: fp32 and word pipeline stages (SF 0 when presplit)
	presplit  bool // PRESPLIT: words from wgmma_split
	groupRegs int  // GROUP_WREG: grouped fp64 sums held in registers
	update    bool // UPDATE: C −= A·B in the epilogue
	shared    int  // the dynamic shared memory of the stages
}

func newWGMMAConfig(p *multiword.Plan, la, lb Layout, presplit, update bool) (wgmmaConfig, error) {
	k, err := newKernelPlan(p, la, lb)
	if err != nil {
		return wgmmaConfig{}, err
	}
	sf, sw, shared := wgmmaStages(p, presplit)
	return wgmmaConfig{kernelPlan: k, sf: sf, sw: sw, presplit: presplit, groupRegs: wgmmaGroupRegs(p),
		update: update, shared: shared}, nil
}

func (c wgmmaConfig) defines() []define {
	return append(c.kernelPlan.defines(), define{"SF", c.sf}, define{"SW", c.sw}, defineBool("PRESPLIT", c.presplit),
		define{"GROUP_WREG", c.groupRegs}, defineBool("UPDATE", c.update),
		define{"BM", wgBM}, define{"BN", wgBN}, define{"BK", wgBK}, define{"THREADS", wgThreads},
		define{"SPLIT_THREADS", wgSplitThreads}, define{"SHARED_BYTES", c.shared})
}

// grid is the persistent grid: a block per multiprocessor (sms), or per
// tile where there are fewer.
func (wgmmaConfig) grid(m, n, sms int) ([3]uint32, error) {
	tiles := ((m + wgBM - 1) / wgBM) * ((n + wgBN - 1) / wgBN)
	if tiles > 1<<31-1 {
		return [3]uint32{}, errors.New("gpu: too many tiles for the wgmma kernel")
	}
	return [3]uint32{uint32(min(tiles, sms)), 1, 1}, nil
}

func (wgmmaConfig) block() [3]uint32 { return [3]uint32{wgThreads, 1, 1} }

// splitGrid is wgmma_split's grid-stride grid over tiles word tiles.
func (wgmmaConfig) splitGrid(tiles int64) [3]uint32 {
	return [3]uint32{uint32(min(tiles, 1<<20)), 1, 1}
}

func (wgmmaConfig) splitBlock() [3]uint32 { return [3]uint32{wgSplitThreads, 1, 1} }
