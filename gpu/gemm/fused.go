package gemm

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/multiword"
)

// Layout says how a matrix lies in device memory.
type Layout uint8

const (
	RowMajor Layout = iota // rows contiguous: element (i, j) at i·ld + j
	ColMajor               // columns contiguous: element (i, j) at j·ld + i
)

func (l Layout) String() string {
	if l == ColMajor {
		return "column-major"
	}
	return "row-major"
}

// FusedArgs are the operands of Engine.Fused: C (m×n) = A (m×k) · B (k×n),
// all fp32 on the device, each with its layout and leading dimension
// (0 means dense).
type FusedArgs struct {
	M, N, K int
	A       *gpu.Buffer
	LayoutA Layout
	LdA     int
	B       *gpu.Buffer
	LayoutB Layout
	LdB     int
	C       *gpu.Buffer
	LayoutC Layout
	LdC     int
	Stream  *gpu.Stream // nil: the default stream
	Kernel  FusedKernel // KernelAuto: wgmma on sm_90 where it can, else mma.sync
	// Update makes the call C ← C − A·B (the trailing update of an LU)
	// instead of C = A·B: on the wgmma kernel in its epilogue, elsewhere
	// through a scratch product. Elements of C in rows and columns with a
	// NaN or an Inf in A or B become NaN. The plan's words must hold every
	// finite fp32 (scaling on, or bf16 and tf32 words).
	Update bool
	// Passes, if set, is recorded on Stream between the passes before the
	// product kernel (the scans, the scalings, the wgmma kernel's split)
	// and the product kernel, so that a caller can time them apart.
	Passes *gpu.Event
	// SMs, if positive, caps the wgmma kernel's persistent grid below the
	// multiprocessors' count, leaving the rest to concurrent work (an LU's
	// look-ahead panel).
	SMs int
}

// fusedWord is the kernel's WORD for a format and its mma k-step.
func fusedWord(f format.Format) (word, kstep int, ok bool) {
	switch f {
	case format.Binary16:
		return 0, 16, true
	case format.BFloat16:
		return 1, 16, true
	case format.TF32:
		return 2, 8, true
	}
	return 0, 0, false
}

// checkFused reports why the fused kernel cannot run the plan, or nil. It
// runs FABsum plans (and plain plans when asked through Fused) with
// fp16, bf16 or TF32 words.
func (e *Engine) checkFused(p *multiword.Plan) error {
	if err := p.Check(); err != nil {
		return err
	}
	if p.Sum == bound.Plain {
		return errors.New("gpu: plain plans go through cuBLASLt; the fused kernel runs FABsum plans")
	}
	return FusedSupports(p)
}

// FusedSupports reports whether fused.cu can compute the plan as written.
func FusedSupports(p *multiword.Plan) error {
	_, kstep, ok := fusedWord(p.Low)
	switch {
	case !ok:
		return fmt.Errorf("gpu: the fused kernel takes fp16, bf16 or tf32 words, not %s", p.Low.Name())
	case p.Words > 3:
		return fmt.Errorf("gpu: the fused kernel splits into at most 3 words, plan %q has %d", p.Name, p.Words)
	case p.Acc != format.Binary32 || p.Out != format.Binary32:
		return fmt.Errorf("gpu: the fused kernel accumulates and returns fp32, plan %q has %s→%s", p.Name, p.Acc.Name(), p.Out.Name())
	case p.SplitMode != format.NearestEven:
		return fmt.Errorf("gpu: the fused kernel splits with round to nearest even, plan %q uses %s", p.Name, p.SplitMode)
	case p.Block%kstep != 0:
		return fmt.Errorf("gpu: the fused kernel's FABsum block b must be a multiple of %d for %s words, got %d", kstep, p.Low.Name(), p.Block)
	case p.WordShift > 40:
		return fmt.Errorf("gpu: the fused kernel shifts words by at most 2^40, plan %q asks 2^%d", p.Name, p.WordShift)
	}
	if _, err := fusedPairs(p); err != nil {
		return err
	}
	if jointProducts(p) && (p.Block <= 0 || 32%p.Block != 0) {
		return fmt.Errorf("gpu: the fused kernels run joint=products on blocks within one 32-element stage (b = 32 or a divisor), plan %q has b=%d", p.Name, p.Block)
	}
	return nil
}

// jointProducts reports whether the kernels form the plan's products one
// after another over each block (JPROD) rather than k-step by k-step; with
// one word the two orders are the same.
func jointProducts(p *multiword.Plan) bool {
	return p.FABsumJoint && p.JointOrder == multiword.JointProducts && p.Words > 1
}

// fusedPairs returns ALLPAIRS for the plan's products, which must be the
// triangle or all pairs in the standard order; with a word shift, every
// cross product must carry the same shift (one accumulator holds them).
func fusedPairs(p *multiword.Plan) (all bool, err error) {
	pairs := p.Pairs
	switch {
	case pairs == nil || slices.Equal(pairs, multiword.Triangle(p.Words)):
	case slices.Equal(pairs, multiword.AllPairs(p.Words)):
		all = true
	default:
		return false, fmt.Errorf("gpu: the fused kernel forms the triangle or all products smallest first, not plan %q's order", p.Name)
	}
	maxLevel := p.Words - 1
	if all {
		maxLevel = 2 * (p.Words - 1)
	}
	if p.WordShift != 0 && maxLevel > 1 {
		return false, fmt.Errorf("gpu: plan %q shifts words by 2^%d and forms products of %d orders; the fused kernel's cross accumulator holds one (use shift=0 or 2 words)", p.Name, p.WordShift, maxLevel)
	}
	return all, nil
}

// fusedModule compiles (or takes from the cache) fused.cu for a
// configuration and returns its kernel, allowed the shared memory.
func (e *Engine) fusedModule(c mmaConfig) (*gpu.Function, error) {
	mod, err := e.d.Module(kernel("fused"), moduleOptions(c.defines())...)
	if err != nil {
		return nil, err
	}
	fn, err := mod.Function("fused_gemm")
	if err != nil {
		return nil, err
	}
	if err := fn.SetMaxDynamicShared(c.shared()); err != nil {
		return nil, err
	}
	return fn, nil
}

// extent returns the rows and columns of a layout's storage (outer lines
// of inner elements) and checks ld and the buffer's size.
func extent(name string, l Layout, rows, cols, ld int, buf *gpu.Buffer) (int, error) {
	outer, inner := rows, cols
	if l == ColMajor {
		outer, inner = cols, rows
	}
	if ld == 0 {
		ld = inner
	}
	if ld < inner {
		return 0, fmt.Errorf("gpu: %s is %d×%d %s; its leading dimension %d is below %d", name, rows, cols, l, ld, inner)
	}
	if buf == nil {
		return 0, fmt.Errorf("gpu: %s has no buffer", name)
	}
	if need := 4 * ((outer-1)*ld + inner); buf.Bytes() < need {
		return 0, fmt.Errorf("gpu: %s (%d×%d %s, ld %d) needs %d bytes; its buffer has %d", name, rows, cols, l, ld, need, buf.Bytes())
	}
	return ld, nil
}

// Fused computes C = A·B with the plan on a fused kernel, a.Kernel: fp32
// data split into the plan's words (on Hopper once, ahead of the GEMM, for
// one-word and joint plans: wgmma.cu; else inside fused.cu's mma.sync
// kernel), tensor-core products, FABsum promotion every p.Block elements
// (of A_1B_1 alone with FABsumFirstOnly; through group sums with p.Group). A row or column with
// a NaN or Inf gives the IEEE result of the exact dot products, as
// multiword.Engine specifies; one with an entry the words cannot hold
// (possible only without p.Scale) is computed in fp64 too, so the kernel
// returns no Inf where SGEMM would not (the CPU engines overflow there).
// The plan may also be plain (one tensor-core accumulator over all of k,
// no cuBLASLt).
func (e *Engine) Fused(p multiword.Plan, a FusedArgs) error {
	cfg, err := e.fusedConfig(&p, a.Kernel, a.LayoutA, a.LayoutB, a.Update)
	if err != nil {
		return err
	}
	lda, ldb, ldc, err := fusedShape(&a)
	if err != nil {
		return err
	}
	m := a.M
	if cfg.wg && !cfg.presplit {
		if err := wgmmaOperands(&a, lda, ldb); err != nil {
			return err
		}
	}
	if !cfg.wg && (m+fusedBM-1)/fusedBM > 65535 {
		return fmt.Errorf("gpu: m = %d is too large for the mma.sync kernel's grid", m)
	}
	if a.Update && !cfg.wg {
		return e.updateThroughScratch(p, a, ldc)
	}
	q := e.d.NewLaunchQueue() // every launch below, in one trip to the device's thread
	ps, err := e.queuePasses(q, cfg, &p, &a, lda, ldb, ldc)
	if err != nil {
		return err
	}
	if cfg.wg {
		var words uintptr
		if cfg.presplit {
			words = ps.info.Ptr() + uintptr(ps.infoBytes)
		}
		err = e.launchWGMMA(q, cfg, &p, &a, lda, ldb, ldc, ps.ea, ps.eb, words, ps.splitFlags, ps.limit, ps.mark)
	} else {
		markPasses(q, &a)
		err = launchMMA(q, cfg, &p, &a, lda, ldb, ldc, ps.ea, ps.eb)
	}
	if err != nil {
		return err
	}
	if err := patchSpecials(q, ps.scan, &a, ps.ars, ps.acs, ps.brs, ps.bcs, ps.crs, ps.ccs, ps.rowFlags, ps.colFlags, ps.mark); err != nil {
		return err
	}
	return q.Flush()
}

// fusedShape checks a call's dimensions and returns the leading
// dimensions of A, B and C.
func fusedShape(a *FusedArgs) (lda, ldb, ldc int, err error) {
	m, n, k := a.M, a.N, a.K
	switch {
	case m < 0 || n < 0 || k < 0:
		return 0, 0, 0, fmt.Errorf("gpu: negative dimensions %d×%d times %d×%d", m, k, k, n)
	case m == 0 || n == 0 || k == 0:
		return 0, 0, 0, fmt.Errorf("%w: A is %d×%d and B is %d×%d", multiword.ErrEmpty, m, k, k, n)
	case m > math.MaxInt32 || n > math.MaxInt32 || k > math.MaxInt32:
		return 0, 0, 0, fmt.Errorf("gpu: %d×%d×%d is too large for the fused kernel", m, n, k)
	}
	if lda, err = extent("A", a.LayoutA, m, k, a.LdA, a.A); err != nil {
		return 0, 0, 0, err
	}
	if ldb, err = extent("B", a.LayoutB, k, n, a.LdB, a.B); err != nil {
		return 0, 0, 0, err
	}
	ldc, err = extent("C", a.LayoutC, m, n, a.LdC, a.C)
	return lda, ldb, ldc, err
}

// fusedPasses is what the passes before a fused product leave for it and
// for the fp64 patch after it.
type fusedPasses struct {
	scan                         *gpu.Module
	info                         *gpu.Buffer // A's rows then B's columns; then, presplit, the words
	infoBytes                    int
	rowFlags, colFlags           uintptr
	mark                         uint32
	limit                        uint32     // the largest entry the words hold, as fp32 bits
	splitFlags                   [2]uintptr // the flags the presplit wgmma split sets itself
	ea, eb                       uintptr    // the rows' and columns' scaling exponents, 0 without scaling
	ars, acs, brs, bcs, crs, ccs int64
}

// queuePasses queues the passes before the product: the lines' magnitudes
// and flags of entries the words cannot hold, and with scaling the
// exponents.
func (e *Engine) queuePasses(q *gpu.LaunchQueue, cfg *fusedConfig, p *multiword.Plan, a *FusedArgs, lda, ldb, ldc int) (*fusedPasses, error) {
	m, n, k := a.M, a.N, a.K
	ps := &fusedPasses{}
	var err error
	if ps.scan, err = e.scanModule(); err != nil {
		return nil, err
	}
	// info: A's rows then B's columns, the magnitudes (made exponents with
	// scaling); their flags are in the stream's flag buffer.
	infoWords := m + n
	ps.infoBytes = (4*infoWords + 255) &^ 255
	wordBytes := 0
	if cfg.presplit {
		wordBytes = (wgmmaTiles(m, k) + wgmmaTiles(n, k)) * cfg.wordTile
	}
	if ps.info, err = e.scratch(a.Stream, ps.infoBytes+wordBytes); err != nil {
		return nil, err
	}
	zero, err := ps.scan.Function("zero_u32")
	if err != nil {
		return nil, err
	}
	// flags: A's rows, any of them, B's columns, any of them.
	flags, mark, err := e.lineFlags(zero, a.Stream, m+n+2)
	if err != nil {
		return nil, err
	}
	ps.rowFlags, ps.colFlags, ps.mark = flags, flags+uintptr(4*(m+1)), mark
	if p.Scale { // the magnitudes, for line_amax's atomicMax
		if err := q.Launch(zero, gpu.StrideGrid(infoWords), [3]uint32{256, 1, 1}, 0, a.Stream, ps.info, int64(infoWords)); err != nil {
			return nil, err
		}
	}
	ps.ars, ps.acs = strides(a.LayoutA, lda)
	ps.brs, ps.bcs = strides(a.LayoutB, ldb)
	ps.crs, ps.ccs = strides(a.LayoutC, ldc)
	// Entries the words cannot hold (only without scaling, which brings
	// every row below the format's largest value) send their rows and
	// columns to the fp64 patch as NaN and Inf do.
	ps.limit = math.Float32bits(math.MaxFloat32)
	if !p.Scale {
		ps.limit = math.Float32bits(float32(min(p.Low.MaxFinite(), math.MaxFloat32)))
	}
	if err := ps.scanLines(q, cfg, p, a); err != nil {
		return nil, err
	}
	return ps, ps.scaleExponents(q, p, a)
}

// scanLines queues line_amax over A's rows and B's columns. Without
// scaling the presplit wgmma kernel's split sets the flags as it reads the
// entries, and nothing needs the magnitudes: no scan (two fifths of
// triple-bf16's passes at n = 2048, docs/perf/fabsum-kernels.md).
func (ps *fusedPasses) scanLines(q *gpu.LaunchQueue, cfg *fusedConfig, p *multiword.Plan, a *FusedArgs) error {
	if cfg.presplit && !p.Scale {
		ps.splitFlags = [2]uintptr{ps.rowFlags, ps.colFlags}
		return nil
	}
	rowInfo := ps.info.Ptr()
	colInfo := rowInfo + uintptr(4*a.M)
	if err := lineAmax(q, ps.scan, a.A, ps.ars, ps.acs, a.M, a.K, ps.limit, rowInfo, ps.rowFlags, ps.mark, a.Stream); err != nil {
		return err
	}
	return lineAmax(q, ps.scan, a.B, ps.bcs, ps.brs, a.N, a.K, ps.limit, colInfo, ps.colFlags, ps.mark, a.Stream)
}

// scaleExponents queues scale_exps, which turns the lines' magnitudes
// into their scaling exponents (ea, eb), with scaling.
func (ps *fusedPasses) scaleExponents(q *gpu.LaunchQueue, p *multiword.Plan, a *FusedArgs) error {
	if !p.Scale {
		return nil
	}
	exps, err := ps.scan.Function("scale_exps")
	if err != nil {
		return err
	}
	theta := p.ScaleTarget(a.K)
	rowInfo := ps.info.Ptr()
	colInfo := rowInfo + uintptr(4*a.M)
	for _, l := range []struct {
		ptr   uintptr
		lines int
	}{{rowInfo, a.M}, {colInfo, a.N}} {
		if err := q.Launch(exps, [3]uint32{uint32((l.lines + 255) / 256), 1, 1}, [3]uint32{256, 1, 1}, 0, a.Stream,
			l.ptr, int32(l.lines), theta); err != nil {
			return err
		}
	}
	ps.ea, ps.eb = rowInfo, colInfo
	return nil
}

// A fusedConfig is what the fused kernels' launches take from a plan for
// one kernel choice, pair of layouts and update mode: which kernel, its
// configuration and compiled function, the words' tile size. It is derived
// once (Engine.fusedConfig) and cached on the engine: an LU makes tens of
// update calls with one plan.
type fusedConfig struct {
	wg, presplit bool
	kstep        int           // the mma k-step of the words
	mma          mmaConfig     // !wg
	wgmma        wgmmaConfig   // wg
	gemm, split  *gpu.Function // the product kernel; wgmma_split when presplit
	wordTile     int           // presplit: bytes of a 128-line × 32-k tile in all the words
}

// fusedKey identifies a fusedConfig: the plan as String describes it (its
// split mode besides), the kernel asked for, the layouts, the update mode.
type fusedKey struct {
	plan   string
	kernel FusedKernel
	la, lb Layout
	update bool
}

// fusedConfig checks the plan against the kernels, chooses the kernel
// (KernelAuto: wgmma on sm_90 where it can, else mma.sync) and compiles it,
// once per key.
func (e *Engine) fusedConfig(p *multiword.Plan, kernel FusedKernel, la, lb Layout, update bool) (*fusedConfig, error) {
	key := fusedKey{p.String() + "|" + p.SplitMode.String(), kernel, la, lb, update}
	e.cfgMu.Lock()
	cfg := e.cfgs[key]
	e.cfgMu.Unlock()
	if cfg != nil {
		return cfg, nil
	}
	var err error
	if cfg, err = planFused(p, kernel, la, lb, update, e.WGMMASupports); err != nil {
		return nil, err
	}
	switch {
	case cfg.wg:
		cfg.gemm, cfg.split, err = e.wgmmaModule(cfg.wgmma)
	case !update: // the mma.sync kernel updates through a scratch product
		cfg.gemm, err = e.fusedModule(cfg.mma)
	}
	if err != nil {
		return nil, err
	}
	e.cfgMu.Lock()
	if e.cfgs == nil {
		e.cfgs = map[fusedKey]*fusedConfig{}
	}
	e.cfgs[key] = cfg
	e.cfgMu.Unlock()
	return cfg, nil
}

// planFused checks the plan against the kernels, chooses the kernel and
// builds its configuration, without compiling it: the engine's choice,
// which TestKernelOptions also lists for the ptxas scripts. wgmma reports
// why the device cannot run the wgmma kernel on a plan (WGMMASupports).
func planFused(p *multiword.Plan, kernel FusedKernel, la, lb Layout, update bool, wgmma func(multiword.Plan) error) (*fusedConfig, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	if err := FusedSupports(p); err != nil {
		return nil, err
	}
	if update && !p.Scale && p.Low.MaxFinite() < 1e38 {
		return nil, fmt.Errorf("gpu: C −= A·B needs a plan whose words hold every finite fp32 (scale=on); %q's %s words do not", p.Name, p.Low.Name())
	}
	cfg := &fusedConfig{}
	_, cfg.kstep, _ = fusedWord(p.Low)
	switch kernel {
	case KernelAuto:
		cfg.wg = wgmma(*p) == nil
		cfg.presplit = cfg.wg
	case KernelWGMMA, KernelWGMMASmem:
		if err := wgmma(*p); err != nil {
			return nil, err
		}
		if kernel == KernelWGMMASmem {
			if sf, _, _ := wgmmaStages(p, false); sf == 0 {
				return nil, fmt.Errorf("gpu: plan %q's %d %s words leave no room for 2 shared-memory stages of fp32 tiles and of words; use the presplit wgmma kernel", p.Name, p.Words, p.Low.Name())
			}
		}
		cfg.wg, cfg.presplit = true, kernel == KernelWGMMA
	case KernelMMA:
	default:
		return nil, fmt.Errorf("gpu: unknown fused kernel %d", kernel)
	}
	var err error
	switch {
	case cfg.wg:
		cfg.wordTile = wgmmaWordTile(p)
		cfg.wgmma, err = newWGMMAConfig(p, la, lb, cfg.presplit, update)
	case !update:
		cfg.mma, err = newMMAConfig(p, la, lb)
	}
	return cfg, err
}

// markPasses queues the record of a.Passes, if set.
func markPasses(q *gpu.LaunchQueue, a *FusedArgs) {
	if a.Passes != nil {
		q.Record(a.Passes, a.Stream)
	}
}

// launchMMA queues fused.cu's kernel on the scanned operands (ea, eb: the
// scale exponents or 0, in the scratch buffer the caller holds).
func launchMMA(q *gpu.LaunchQueue, cfg *fusedConfig, p *multiword.Plan, a *FusedArgs, lda, ldb, ldc int, ea, eb uintptr) error {
	vec := func(b *gpu.Buffer, ld int) int32 {
		if ld%4 == 0 && b.Ptr()%16 == 0 {
			return 1
		}
		return 0
	}
	bsteps := 0
	if p.Sum != bound.Plain && p.Block > 0 {
		bsteps = p.Block / cfg.kstep
	}
	params := fusedParams{
		A: uint64(a.A.Ptr()), Lda: int64(lda), B: uint64(a.B.Ptr()), Ldb: int64(ldb), C: uint64(a.C.Ptr()), Ldc: int64(ldc),
		CRowmajor: b2i32(a.LayoutC == RowMajor), M: int32(a.M), N: int32(a.N), K: int32(a.K),
		VecA: vec(a.A, lda), VecB: vec(a.B, ldb), Ea: uint64(ea), Eb: uint64(eb),
		ShiftE: int32(p.WordShift), Bsteps: int32(bsteps), FirstOnly: b2i32(p.FABsumFirstOnly),
	}
	c := cfg.mma
	return q.Launch(cfg.gemm, c.grid(a.M, a.N), c.block(), uint32(c.shared()), a.Stream, gpu.ParamsOf(&params, a.A, a.B, a.C))
}

// patchSpecials queues the fp64 recomputation of the rows and columns
// flagged with mark (NaN, Inf, out of the words' range): rowFlags[m] and
// colFlags[n] say whether any is.
func patchSpecials(q *gpu.LaunchQueue, scan *gpu.Module, a *FusedArgs, ars, acs, brs, bcs, crs, ccs int64, rowFlags, colFlags uintptr,
	mark uint32) error {
	m, n, k := a.M, a.N, a.K
	patch, err := scan.Function("patch_specials")
	if err != nil {
		return err
	}
	params := patchParams{
		A: uint64(a.A.Ptr()), Ars: ars, Acs: acs, B: uint64(a.B.Ptr()), Brs: brs, Bcs: bcs, C: uint64(a.C.Ptr()), Crs: crs, Ccs: ccs,
		M: int32(m), N: int32(n), K: int64(k),
		RowFlags: uint64(rowFlags), ColFlags: uint64(colFlags), AnyA: uint64(rowFlags + uintptr(4*m)), AnyB: uint64(colFlags + uintptr(4*n)),
		Mark: mark, Update: b2i32(a.Update),
	}
	return q.Launch(patch, [3]uint32{1024, 1, 1}, [3]uint32{256, 1, 1}, 0, a.Stream, gpu.ParamsOf(&params, a.A, a.B, a.C))
}

// updateThroughScratch is C −= A·B for the kernels without the update
// epilogue: the product into scratch memory, then lu.cu's sub_f32.
func (e *Engine) updateThroughScratch(p multiword.Plan, a FusedArgs, ldc int) error {
	// sub_f32 walks a column-major C.
	if a.LayoutC == RowMajor {
		return errors.New("gpu: C −= A·B on the mma.sync kernel takes a column-major C")
	}
	t, err := e.d.Alloc(4 * a.M * a.N)
	if err != nil {
		return err
	}
	defer t.Free()
	prod := a
	prod.Update, prod.C, prod.LayoutC, prod.LdC = false, t, ColMajor, a.M
	if err := e.Fused(p, prod); err != nil {
		return err
	}
	mod, err := e.d.Module(kernel("update"))
	if err != nil {
		return err
	}
	sub, err := mod.Function("sub_f32")
	if err != nil {
		return err
	}
	m, n := a.M, a.N
	if err := sub.Launch([3]uint32{1024, 1, 1}, [3]uint32{256, 1, 1}, 0, a.Stream, a.C, int64(ldc), t, int64(m), int32(m), int32(n)); err != nil {
		return err
	}
	// The scratch is freed (deferred) only after the kernels that use it.
	if a.Stream != nil {
		return a.Stream.Sync()
	}
	return e.d.Sync()
}

// strides returns the distances between consecutive rows and between
// consecutive columns of a matrix stored in layout l.
func strides(l Layout, ld int) (row, col int64) {
	if l == ColMajor {
		return 1, int64(ld)
	}
	return int64(ld), 1
}

func b2i32(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// lineAmax queues line_amax over `lines` lines of `length` elements.
func lineAmax(q *gpu.LaunchQueue, scan *gpu.Module, x *gpu.Buffer, ls, es int64, lines, length int, limit uint32, info, flags uintptr,
	mark uint32, stream *gpu.Stream) error {
	fn, err := scan.Function("line_amax")
	if err != nil {
		return err
	}
	var grid, block [3]uint32
	if es == 1 {
		// A block per line and chunk: about 2^16 blocks in all.
		chunks := max(1, min(65535, (1<<16)/lines, (length+4095)/4096))
		grid, block = [3]uint32{uint32(lines), uint32(chunks), 1}, [3]uint32{256, 1, 1}
	} else {
		chunks := max(1, min(65535, (1<<20)/lines, length/64))
		grid, block = [3]uint32{uint32((lines + 255) / 256), uint32(chunks), 1}, [3]uint32{256, 1, 1}
	}
	params := amaxParams{X: uint64(x.Ptr()), Ls: ls, Es: es, Lines: int32(lines), Len: int64(length), Limit: limit,
		Info: uint64(info), Flags: uint64(flags), Mark: mark}
	return q.Launch(fn, grid, block, 0, stream, gpu.ParamsOf(&params, x))
}

// scanModule is scan.cu, compiled once.
func (e *Engine) scanModule() (*gpu.Module, error) { return e.d.Module(kernel("scan")) }

// scratch returns the engine's scratch buffer for a stream, grown to at
// least bytes: work on one stream runs in order, so a call may reuse the
// buffer of the previous one; calls on different streams get their own.
func (e *Engine) scratch(s *gpu.Stream, bytes int) (*gpu.Buffer, error) {
	e.scratchMu.Lock()
	defer e.scratchMu.Unlock()
	if e.scratchBufs == nil {
		e.scratchBufs = map[*gpu.Stream]*gpu.Buffer{}
	}
	if b := e.scratchBufs[s]; b != nil {
		if b.Bytes() >= bytes {
			return b, nil
		}
		if err := e.d.Sync(); err != nil { // the old buffer may still be read
			return nil, err
		}
		b.Free()
		delete(e.scratchBufs, s)
	}
	b, err := e.d.Alloc(max(bytes, 1<<16))
	if err != nil {
		return nil, err
	}
	e.scratchBufs[s] = b
	return b, nil
}

// lineFlags is a stream's flags of the lines (rows of A, columns of B)
// with NaN, Inf or entries beyond the words' range. Each call sets the
// flags of its lines to a mark of its own instead of clearing them first,
// which saves a launch per call: the buffer holds only zeros and earlier
// calls' marks.
type lineFlags struct {
	buf  *gpu.Buffer
	mark uint32
}

// lineFlags returns the stream's flag buffer, of at least words words,
// and this call's mark. A new buffer, and the buffer once the marks wrap
// around, is cleared first, on the stream.
func (e *Engine) lineFlags(zero *gpu.Function, s *gpu.Stream, words int) (uintptr, uint32, error) {
	e.scratchMu.Lock()
	defer e.scratchMu.Unlock()
	if e.flagBufs == nil {
		e.flagBufs = map[*gpu.Stream]*lineFlags{}
	}
	f := e.flagBufs[s]
	if f != nil && f.buf.Bytes() < 4*words {
		if err := e.d.Sync(); err != nil { // the old buffer may still be read
			return 0, 0, err
		}
		f.buf.Free()
		delete(e.flagBufs, s)
		f = nil
	}
	clearAll := false
	if f == nil {
		b, err := e.d.Alloc(max(4*words, 1<<12))
		if err != nil {
			return 0, 0, err
		}
		f = &lineFlags{buf: b}
		e.flagBufs[s] = f
		clearAll = true
	}
	if f.mark++; f.mark == 0 { // wrapped: the old marks must go
		f.mark, clearAll = 1, true
	}
	if clearAll {
		n := f.buf.Bytes() / 4
		if err := zero.Launch(gpu.StrideGrid(n), [3]uint32{256, 1, 1}, 0, s, f.buf, int64(n)); err != nil {
			delete(e.flagBufs, s)
			f.buf.Free()
			return 0, 0, err
		}
	}
	return f.buf.Ptr(), f.mark, nil
}

// fusedOperands runs the plan with the fused kernel on the bench operands
// (fp32 A, B row-major) into o.c32, recording passes (if set) before the
// product kernel.
func (e *Engine) fusedOperands(p *multiword.Plan, o *operands, kernel FusedKernel, stream *gpu.Stream, passes *gpu.Event) error {
	return e.Fused(*p, FusedArgs{M: o.m, N: o.n, K: o.k, A: o.a, B: o.b, C: o.c32, Stream: stream, Kernel: kernel, Passes: passes})
}

// multiplyFused is Multiply on the fused kernel: A and B are fp32
// values (the caller checked), uploaded row-major with leading dimensions
// rounded up to multiples of 4, which the wgmma kernel's copy engine needs.
func (e *Engine) multiplyFused(p *multiword.Plan, m, n, k int, a, b, c []float64) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var bufs []*gpu.Buffer
	defer func() {
		for _, b := range bufs {
			b.Free()
		}
	}()
	up := func(x []float64, rows, cols int) (*gpu.Buffer, int, error) {
		ld := (cols + 3) &^ 3
		f := make([]float32, rows*ld)
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				f[i*ld+j] = float32(x[i*cols+j])
			}
		}
		buf, err := e.d.Alloc(4 * len(f))
		if err == nil {
			bufs = append(bufs, buf)
			err = e.d.Upload(buf, f)
		}
		return buf, ld, err
	}
	da, lda, err := up(a, m, k)
	if err != nil {
		return err
	}
	db, ldb, err := up(b, k, n)
	if err != nil {
		return err
	}
	dc, err := e.d.Alloc(4 * m * n)
	if err != nil {
		return err
	}
	bufs = append(bufs, dc)
	// NaN poison: an element the kernel fails to write shows.
	if err := e.d.Memset32(dc, 0x7fc00000); err != nil {
		return err
	}
	if err := e.Fused(*p, FusedArgs{M: m, N: n, K: k, A: da, LdA: lda, B: db, LdB: ldb, C: dc, Kernel: e.kernel}); err != nil {
		return err
	}
	out := make([]float32, m*n)
	if err := e.d.Download(out, dc); err != nil {
		return err
	}
	for i, v := range out {
		c[i] = float64(v)
	}
	return nil
}

// Binary32Values reports whether every element is an fp32 value (NaN
// and ±Inf included), so that the fused kernel sees the data exactly.
func Binary32Values(x []float64) bool {
	for _, v := range x {
		if float64(float32(v)) != v && !math.IsNaN(v) {
			return false
		}
	}
	return true
}
