package gpu

import (
	"math"

	"github.com/mwmm/mwmm/gpu/internal/cuda"
)

// A trailing computes one blocked-LU step's trailing updates
// A₂₂ −= L₂₁·U₁₂ on the binary32 working matrix: prepare once the step's
// L₂₁ and U₁₂ are final, then update any range of the trailing columns
// (the look-ahead updates the next panel's columns first).
type trailing interface {
	prepare(j, jb int, st *Stream) error
	update(c0, cols int, st *Stream, sms int) error
	free()
}

// fusedTrailing runs the updates on the fused kernel with the form's
// multiword plan, reading L₂₁ and U₁₂ where they are.
type fusedTrailing struct {
	e     *Engine
	f     LUForm
	w     *Buffer
	n     int
	j, jb int
}

func (t *fusedTrailing) prepare(j, jb int, _ *Stream) error {
	t.j, t.jb = j, jb
	return nil
}

func (t *fusedTrailing) update(c0, cols int, st *Stream, sms int) error {
	at := func(i, j int) int { return 4 * (i + j*t.n) }
	r := t.j + t.jb
	return t.e.Fused(*t.f.Plan, FusedArgs{M: t.n - r, N: cols, K: t.jb, Stream: st, SMs: sms, Update: true,
		A: t.w.view(at(r, t.j)), LayoutA: ColMajor, LdA: t.n, B: t.w.view(at(t.j, c0)), LayoutB: ColMajor, LdB: t.n,
		C: t.w.view(at(r, c0)), LayoutC: ColMajor, LdC: t.n})
}

func (t *fusedTrailing) free() {}

// tc32Words are the TC32 forms' words: the form's name, the type cuBLASLt
// multiplies, round_words' kind (lu.cu) and the word as reports name it.
var tc32Words = []struct {
	form  string
	typ   DataType
	kind  int32
	label string
}{
	{"tc32-fp16", F16, 0, "fp16"},
	{"tc32-bf16", BF16, 1, "bf16"},
	{"tc32-tf32", F32, 2, "TF32"}, // binary32 values with TF32's 10 fraction bits
}

// WordName is the word a TC32 form's updates round to (fp16, bf16,
// TF32), or "" for the other forms.
func (f LUForm) WordName() string {
	for _, w := range tc32Words {
		if w.typ == f.Words {
			return w.label
		}
	}
	return ""
}

// ltTrailing runs the TC32 forms' updates on cuBLASLt: L₂₁ and U₁₂ are
// copied rounded to nearest in the form's word (fp16, bf16, or TF32
// values held in fp32) and multiplied on the tensor cores with fp32
// accumulation into A₂₂, as the hardware's TC32 arithmetic does. fp16's
// range is kept by scaling U₁₂ by a power of two (max |U₁₂| lands in
// [2^14, 2^15)) and α = −1/scale undoing it exactly; L₂₁ is not scaled
// (partial pivoting keeps |l| ≤ 1), so multipliers below 2^-24 flush to
// zero.
type ltTrailing struct {
	e                *Engine
	round, amax      *Function
	words            DataType
	w, l, u, maxBits *Buffer
	n                int
	j, jb            int
	scale            float32
	// The algorithms of the first step's two products (the next panel's
	// columns, the rest), run again for every later step's shapes.
	algos map[bool]*cuda.HeuristicResult
}

func (e *Engine) newLtTrailing(mod *Module, words DataType, w *Buffer, n, nb int) (*ltTrailing, error) {
	d := e.d
	t := &ltTrailing{e: e, words: words, w: w, n: n, algos: map[bool]*cuda.HeuristicResult{}}
	var err error
	if t.round, err = mod.Function("round_words"); err != nil {
		return nil, err
	}
	if t.amax, err = mod.Function("amax_f32"); err != nil {
		return nil, err
	}
	size := words.Size()
	if t.l, err = d.Alloc(size * n * nb); err != nil {
		return nil, err
	}
	if t.u, err = d.Alloc(size * n * nb); err != nil {
		t.free()
		return nil, err
	}
	if t.maxBits, err = d.Alloc(4); err != nil {
		t.free()
		return nil, err
	}
	return t, nil
}

func (t *ltTrailing) free() {
	for _, b := range []*Buffer{t.l, t.u, t.maxBits} {
		if b != nil {
			b.Free()
		}
	}
}

func (t *ltTrailing) prepare(j, jb int, st *Stream) error {
	t.j, t.jb = j, jb
	r := j + jb
	rest := t.n - r
	at := func(i, j int) int { return 4 * (i + j*t.n) }
	t.scale = 1
	if t.words == F16 {
		// The largest |u| decides the scale: one 4-byte wait per step.
		if err := t.e.d.Upload(t.maxBits, []uint32{0}); err != nil {
			return err
		}
		if err := t.amax.Launch(grid(jb*rest), [3]uint32{256, 1, 1}, 0, st,
			t.w.view(at(j, r)), int64(t.n), int32(jb), int32(rest), t.maxBits); err != nil {
			return err
		}
		bits := make([]uint32, 1)
		if err := t.e.d.Download(bits, t.maxBits); err != nil {
			return err
		}
		t.scale = fp16Scale(math.Float32frombits(bits[0]))
	}
	var kind int32
	for _, w := range tc32Words {
		if w.typ == t.words {
			kind = w.kind
		}
	}
	if err := t.round.Launch(grid(rest*jb), [3]uint32{256, 1, 1}, 0, st,
		t.w.view(at(r, j)), int64(t.n), int32(rest), int32(jb), t.l, float32(1), kind); err != nil {
		return err
	}
	return t.round.Launch(grid(jb*rest), [3]uint32{256, 1, 1}, 0, st,
		t.w.view(at(j, r)), int64(t.n), int32(jb), int32(rest), t.u, t.scale, kind)
}

// fp16Scale is the power of two that brings max into [2^14, 2^15): the
// product of at most 2^15 and |l| ≤ 1 stays below fp16's 65504. Zero, Inf
// and NaN keep the scale 1 (Factors.check reports the last two).
func fp16Scale(m float32) float32 {
	if m == 0 || math.IsInf(float64(m), 0) || math.IsNaN(float64(m)) {
		return 1
	}
	_, e := math.Frexp(float64(m)) // m in [2^(e-1), 2^e)
	return float32(math.Ldexp(1, min(max(15-e, -126), 127)))
}

func (t *ltTrailing) update(c0, cols int, st *Stream, sms int) error {
	r := t.j + t.jb
	compute := Compute32F
	if t.words == F32 {
		compute = Compute32FFastTF32
	}
	c := t.w.view(4 * (r + c0*t.n))
	spec := MatmulSpec{M: t.n - r, N: cols, K: t.jb,
		A: t.l, B: t.u.view(t.words.Size() * (c0 - r) * t.jb), C: c, D: c, LdC: t.n, LdD: t.n,
		TypeA: t.words, TypeB: t.words, TypeC: F32, TypeD: F32, Compute: compute,
		Alpha: -1 / float64(t.scale), Beta: 1, Workspace: t.e.workspace, Stream: st, SMs: sms}
	// A new heuristic and kernel per shape cost about 20-30 ms a
	// factorization on an H100; the first step's algorithms serve all.
	rest := c0 > r
	spec.reuse = t.algos[rest]
	used, err := t.e.lt.matmul(spec)
	if err != nil && spec.reuse != nil {
		spec.reuse = nil // it does not suit this shape: ask the heuristic
		used, err = t.e.lt.matmul(spec)
	}
	if err == nil && t.algos[rest] == nil {
		t.algos[rest] = &used
	}
	return err
}
