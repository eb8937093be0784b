package dense

import (
	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/gemm"
	"github.com/mwmm/mwmm/multiword"
)

// A trailing computes one blocked-LU step's trailing updates
// A₂₂ −= L₂₁·U₁₂ on the working matrix (binary32, or binary64 for the
// Ozaki forms): prepare once the step's L₂₁ and U₁₂ are final, then
// update any range of the trailing columns (the look-ahead updates the
// next panel's columns first).
type trailing interface {
	prepare(j, jb int, st *gpu.Stream) error
	update(c0, cols int, st *gpu.Stream, sms int) error
	free()
}

// fusedTrailing runs the updates on the fused kernel with the form's
// multiword plan, reading L₂₁ and U₁₂ where they are.
type fusedTrailing struct {
	e     *Solver
	plan  multiword.Plan
	w     *gpu.Buffer
	n     int
	j, jb int
}

func (t *fusedTrailing) prepare(j, jb int, _ *gpu.Stream) error {
	t.j, t.jb = j, jb
	return nil
}

func (t *fusedTrailing) update(c0, cols int, st *gpu.Stream, sms int) error {
	at := func(i, j int) int { return 4 * (i + j*t.n) }
	r := t.j + t.jb
	return t.e.eng.Fused(t.plan, gemm.FusedArgs{M: t.n - r, N: cols, K: t.jb, Stream: st, SMs: sms, Update: true,
		A: t.w.View(at(r, t.j)), LayoutA: gemm.ColMajor, LdA: t.n, B: t.w.View(at(t.j, c0)), LayoutB: gemm.ColMajor, LdB: t.n,
		C: t.w.View(at(r, c0)), LayoutC: gemm.ColMajor, LdC: t.n})
}

func (t *fusedTrailing) free() {}

// tc32Words are the TC32 forms' words: the form's name, the type cuBLASLt
// multiplies, round_words' kind (lu.cu) and the word as reports name it.
var tc32Words = []struct {
	form  string
	typ   gpu.DataType
	kind  int32
	label string
}{
	{"tc32-fp16", gpu.F16, 0, "fp16"},
	{"tc32-bf16", gpu.BF16, 1, "bf16"},
	{"tc32-tf32", gpu.F32, 2, "TF32"}, // binary32 values with TF32's 10 fraction bits
}

// tc32Word finds the TC32 word of type typ (index −1: none).
func tc32Word(typ gpu.DataType) int {
	for i, w := range tc32Words {
		if w.typ == typ {
			return i
		}
	}
	return -1
}

// ltTrailing runs the TC32 forms' updates on cuBLASLt: L₂₁ and U₁₂ are
// copied rounded to nearest in the form's word (fp16, bf16, or TF32
// values held in fp32) and multiplied on the tensor cores with fp32
// accumulation into A₂₂, as the hardware's TC32 arithmetic does. fp16's
// range is kept by scaling L₂₁, and each update's columns of U₁₂, by a
// power of two (the largest magnitude lands in [2^14, 2^15): multipliers
// far below 1 keep their bits, and those above 1 of an LU without
// pivoting stay finite) and α = −1/(product of the scales) undoing it
// exactly. The scales are found, applied and undone on the device
// (fp16_scales, cuBLASLt's device pointer mode), so no update waits for
// the host.
type ltTrailing struct {
	e                   *Solver
	round, amax, scales *gpu.Function
	words               gpu.DataType
	w, l, u             *gpu.Buffer
	// fp16 only: for L₂₁, for the next panel's columns of U₁₂ and for the
	// rest, the max |value| (binary32 bits), then s, alpha and beta
	// (fp16_scales; L₂₁'s only s).
	scaleSlots *gpu.Buffer
	n          int
	j, jb      int
	// The algorithms of the first step's two products (the next panel's
	// columns, the rest), run again for every later step's shapes.
	algos map[bool]*gpu.Algorithm
}

// scaleSlot is the words a scaleSlots entry takes (max, s, alpha, beta);
// the slots are L₂₁'s, then U₁₂'s for the next panel and for the rest.
const (
	scaleSlot = 4
	lSlot     = 0
)

func (e *Solver) newLtTrailing(mod *gpu.Module, words gpu.DataType, w *gpu.Buffer, n, nb int) (*ltTrailing, error) {
	d := e.d
	t := &ltTrailing{e: e, words: words, w: w, n: n, algos: map[bool]*gpu.Algorithm{}}
	var err error
	for _, f := range []struct {
		fn   **gpu.Function
		name string
	}{{&t.round, "round_words"}, {&t.amax, "amax_f32"}, {&t.scales, "fp16_scales"}} {
		if *f.fn, err = mod.Function(f.name); err != nil {
			return nil, err
		}
	}
	size := words.Size()
	if t.l, err = d.Alloc(size * n * nb); err != nil {
		return nil, err
	}
	if t.u, err = d.Alloc(size * n * nb); err != nil {
		t.free()
		return nil, err
	}
	if words == gpu.F16 {
		if t.scaleSlots, err = d.Alloc(4 * 3 * scaleSlot); err != nil {
			t.free()
			return nil, err
		}
		if err := d.Memset32(t.scaleSlots, 0); err != nil {
			t.free()
			return nil, err
		}
	}
	return t, nil
}

func (t *ltTrailing) free() {
	gpu.FreeAll(t.l, t.u, t.scaleSlots)
}

// columns is the grid of a kernel whose blocks take columns: one each, up
// to limit.
func columns(cols, limit int) [3]uint32 {
	return [3]uint32{uint32(max(1, min(cols, limit))), 1, 1}
}

func (t *ltTrailing) kind() int32 {
	if i := tc32Word(t.words); i >= 0 {
		return tc32Words[i].kind
	}
	panic("gpu: no TC32 word " + t.words.String())
}

// slot is the scaleSlots entry k: its max, then its s (alpha, beta).
func (t *ltTrailing) slot(k int) (maxBits, s *gpu.Buffer) {
	b := t.scaleSlots.View(4 * scaleSlot * k)
	return b, b.View(4)
}

// fp16Scale queues the scale of the rows×cols block at x into slot k
// (other: the scale of the product's other factor, or nil, and then only
// the scale) and returns the scale, followed by alpha and beta with other.
func (t *ltTrailing) fp16Scale(x *gpu.Buffer, rows, cols, k int, other *gpu.Buffer, st *gpu.Stream) (*gpu.Buffer, error) {
	maxBits, s := t.slot(k)
	if err := t.amax.Launch(columns(cols, 1024), [3]uint32{256, 1, 1}, 0, st,
		x, int64(t.n), int32(rows), int32(cols), maxBits); err != nil {
		return nil, err
	}
	var o any = uintptr(0)
	if other != nil {
		o = other
	}
	return s, t.scales.Launch([3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, st, maxBits, s, o)
}

// prepare rounds L₂₁; each update rounds its own columns of U₁₂.
func (t *ltTrailing) prepare(j, jb int, st *gpu.Stream) error {
	t.j, t.jb = j, jb
	r := j + jb
	rest := t.n - r
	x := t.w.View(4 * (r + j*t.n))
	var scale any = uintptr(0) // none: 1
	if t.words == gpu.F16 {
		s, err := t.fp16Scale(x, rest, jb, lSlot, nil, st)
		if err != nil {
			return err
		}
		scale = s
	}
	return t.round.Launch(columns(jb, 65535), [3]uint32{256, 1, 1}, 0, st,
		x, int64(t.n), int32(rest), int32(jb), t.l, scale, t.kind())
}

func (t *ltTrailing) update(c0, cols int, st *gpu.Stream, sms int) error {
	r := t.j + t.jb
	u := t.u.View(t.words.Size() * (c0 - r) * t.jb)
	uSrc := t.w.View(4 * (t.j + c0*t.n))
	rest := c0 > r
	spec := gpu.MatmulSpec{M: t.n - r, N: cols, K: t.jb, A: t.l, B: u,
		TypeA: t.words, TypeB: t.words, TypeC: gpu.F32, TypeD: gpu.F32, Compute: gpu.Compute32F,
		Alpha: -1, Beta: 1, Workspace: t.e.workspace, Stream: st, SMs: sms}
	if t.words == gpu.F32 {
		spec.Compute = gpu.Compute32FFastTF32
	}
	var scale any = uintptr(0) // none: 1
	if t.words == gpu.F16 {
		k := 1
		if rest {
			k = 2
		}
		_, lScale := t.slot(lSlot)
		s, err := t.fp16Scale(uSrc, t.jb, cols, k, lScale, st)
		if err != nil {
			return err
		}
		scale, spec.DeviceScales = s, s.View(4) // alpha, beta
	}
	if err := t.round.Launch(columns(cols, 65535), [3]uint32{256, 1, 1}, 0, st,
		uSrc, int64(t.n), int32(t.jb), int32(cols), u, scale, t.kind()); err != nil {
		return err
	}
	c := t.w.View(4 * (r + c0*t.n))
	spec.C, spec.D, spec.LdC, spec.LdD = c, c, t.n, t.n
	// A new heuristic and kernel per shape cost about 20-30 ms a
	// factorization on an H100; the first step's algorithms serve all.
	spec.Algorithm = t.algos[rest]
	used, err := t.e.lt.MatmulAlgo(spec)
	if err != nil && spec.Algorithm != nil {
		spec.Algorithm = nil // it does not suit this shape: ask the heuristic
		used, err = t.e.lt.MatmulAlgo(spec)
	}
	if err == nil && t.algos[rest] == nil {
		t.algos[rest] = &used
	}
	return err
}
