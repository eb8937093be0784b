package gemm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/mma"
)

// The instruction families a Unit runs.
const (
	MMASync = "mma.sync" // warp-level tensor-core MMA (HMMA, QMMA, DMMA in SASS)
	WGMMA   = "wgmma"    // Hopper's warpgroup MMA (HGMMA, QGMMA), sm_90a only
	FMA     = "fma"      // the CUDA cores' fused multiply-add chain (FFMA, DFMA)
)

// A unitKind is one instruction with one pair of formats.
type unitKind struct {
	instr   string
	in, out format.Format
	kernel  string
	k       int    // the instruction's K: cases are padded to a multiple
	shape   string // the PTX shape and types
}

var unitKinds = []unitKind{
	{MMASync, format.Binary16, format.Binary32, "mma_f16_f32", 16, "m16n8k16.f32.f16.f16.f32"},
	{MMASync, format.Binary16, format.Binary16, "mma_f16_f16", 16, "m16n8k16.f16.f16.f16.f16"},
	{MMASync, format.BFloat16, format.Binary32, "mma_bf16_f32", 16, "m16n8k16.f32.bf16.bf16.f32"},
	{MMASync, format.TF32, format.Binary32, "mma_tf32_f32", 8, "m16n8k8.f32.tf32.tf32.f32"},
	{MMASync, format.Binary64, format.Binary64, "mma_f64", 4, "m8n8k4.f64.f64.f64.f64"},
	{MMASync, format.E4M3, format.Binary32, "mma_e4m3_f32", 32, "m16n8k32.f32.e4m3.e4m3.f32"},
	{MMASync, format.E5M2, format.Binary32, "mma_e5m2_f32", 32, "m16n8k32.f32.e5m2.e5m2.f32"},
	{MMASync, format.E4M3, format.Binary16, "mma_e4m3_f16", 32, "m16n8k32.f16.e4m3.e4m3.f16"},
	{MMASync, format.E5M2, format.Binary16, "mma_e5m2_f16", 32, "m16n8k32.f16.e5m2.e5m2.f16"},
	{WGMMA, format.Binary16, format.Binary32, "wgmma_f16_f32", 16, "m64n8k16.f32.f16.f16"},
	{WGMMA, format.Binary16, format.Binary16, "wgmma_f16_f16", 16, "m64n8k16.f16.f16.f16"},
	{WGMMA, format.BFloat16, format.Binary32, "wgmma_bf16_f32", 16, "m64n8k16.f32.bf16.bf16"},
	{WGMMA, format.TF32, format.Binary32, "wgmma_tf32_f32", 8, "m64n8k8.f32.tf32.tf32"},
	{WGMMA, format.E4M3, format.Binary32, "wgmma_e4m3_f32", 32, "m64n8k32.f32.e4m3.e4m3"},
	{WGMMA, format.E5M2, format.Binary32, "wgmma_e5m2_f32", 32, "m64n8k32.f32.e5m2.e5m2"},
	{WGMMA, format.E4M3, format.Binary16, "wgmma_e4m3_f16", 32, "m64n8k32.f16.e4m3.e4m3"},
	{WGMMA, format.E5M2, format.Binary16, "wgmma_e5m2_f16", 32, "m64n8k32.f16.e5m2.e5m2"},
	{FMA, format.Binary32, format.Binary32, "fma_f32", 1, "fma.rn.f32"},
	{FMA, format.Binary64, format.Binary64, "fma_f64", 1, "fma.rn.f64"},
}

// Instructions lists the instruction families.
func Instructions() []string { return []string{MMASync, WGMMA, FMA} }

// UnitPairs returns the (input, output) format pairs of an instruction
// family, the default first.
func UnitPairs(instr string) [][2]format.Format {
	var ps [][2]format.Format
	for _, k := range unitKinds {
		if k.instr == instr {
			ps = append(ps, [2]format.Format{k.in, k.out})
		}
	}
	return ps
}

// A Unit is one matrix instruction of the GPU as an mma.Unit: Dots runs a
// batch of independent dot products on the real hardware, eight per
// instruction tile (case j in row j of A and column j of B, its result
// D[j][j]), with longer dot products chained through the accumulator as a
// GEMM's k-loop does. A probe or a cross-check then sees exactly what the
// instruction computes. Inputs that are not values of the input format are
// rounded to nearest on the host first (fp32 values given to a TF32 unit
// are passed whole: the hardware reads their top 19 bits), and the addends
// likewise into the output format.
type Unit struct {
	d    *gpu.Device
	kind unitKind
	fn   *gpu.Function
	mu   sync.Mutex
}

// NewUnit opens the unit of instruction family instr (MMASync, WGMMA, FMA)
// for the formats in → out on d; a zero Format picks the family's default.
func NewUnit(d *gpu.Device, instr string, in, out format.Format) (*Unit, error) {
	var kind *unitKind
	var have []string
	for i, k := range unitKinds {
		if k.instr != instr {
			continue
		}
		have = append(have, k.in.Name()+"→"+k.out.Name())
		if kind == nil && (in == format.Format{} || k.in == in) && (out == format.Format{} || k.out == out) {
			kind = &unitKinds[i]
		}
	}
	switch {
	case have == nil:
		return nil, fmt.Errorf("no instruction family %q; the GPU units are %s", instr, strings.Join(Instructions(), ", "))
	case kind == nil:
		return nil, fmt.Errorf("%s has no %s→%s unit; it has %s", instr, nameOr(in), nameOr(out), strings.Join(have, ", "))
	}
	mod, err := d.Module(kernel("units"))
	if err != nil {
		return nil, err
	}
	fn, err := mod.Function(kind.kernel)
	if err != nil {
		if kind.instr == WGMMA {
			return nil, fmt.Errorf("wgmma needs a Hopper GPU (sm_90a); %v is %s", d, d.Arch())
		}
		return nil, err
	}
	return &Unit{d: d, kind: *kind, fn: fn}, nil
}

func nameOr(f format.Format) string {
	if f == (format.Format{}) {
		return "any"
	}
	return f.Name()
}

// openUnit resolves "gpu:INSTR" and "gpuN:INSTR" for mma.Open.
func openUnit(spec, input, output string) (mma.Unit, error) {
	head, instr, _ := strings.Cut(spec, ":")
	i := 0
	if idx := strings.TrimPrefix(head, "gpu"); idx != "" {
		var err error
		if i, err = strconv.Atoi(idx); err != nil {
			return nil, fmt.Errorf("a GPU unit is gpu:INSTR or gpuN:INSTR with N a device index, got %q", spec)
		}
	}
	if instr == "" {
		instr = MMASync
	}
	var in, out format.Format
	var err error
	if input != "" {
		if in, err = format.Parse(input); err != nil {
			return nil, err
		}
	}
	if output != "" {
		if out, err = format.Parse(output); err != nil {
			return nil, err
		}
	}
	if !knownInstruction(instr) {
		return nil, fmt.Errorf("no instruction family %q; the GPU units are %s", instr, strings.Join(Instructions(), ", "))
	}
	e, err := SharedEngine(i)
	if err != nil {
		if errors.Is(err, gpu.ErrNoDriver) || errors.Is(err, gpu.ErrNoDevice) || errors.Is(err, gpu.ErrDriverTooOld) {
			return nil, fmt.Errorf("%w (the GPU units run on an NVIDIA GPU; the models are presets such as h100)", err)
		}
		return nil, err
	}
	return NewUnit(e.Device(), instr, in, out)
}

func knownInstruction(instr string) bool {
	for _, s := range Instructions() {
		if s == instr {
			return true
		}
	}
	return false
}

// Name says which instruction on which GPU, e.g.
// "gpu:mma.sync m16n8k16.f32.f16.f16.f32 (NVIDIA H200)".
func (u *Unit) Name() string {
	return fmt.Sprintf("gpu:%s %s (%s)", u.kind.instr, u.kind.shape, u.d.Name())
}

func (u *Unit) Input() format.Format  { return u.kind.in }
func (u *Unit) Output() format.Format { return u.kind.out }

// BlockK is the instruction's K; the products one hardware step fuses may
// be fewer (the probe measures that).
func (u *Unit) BlockK() int { return u.kind.k }

// Instruction returns the instruction family: MMASync, WGMMA or FMA.
func (u *Unit) Instruction() string { return u.kind.instr }

// Kernel returns the name of the kernel in units.cu that runs the unit.
func (u *Unit) Kernel() string { return u.kind.kernel }

// unitBatch is the most cases one launch takes: enough to fill the GPU,
// few enough to bound the host and device memory.
const unitBatch = 1 << 18

// Dots implements mma.Unit on the hardware, one launch per 2^18 cases.
func (u *Unit) Dots(k int, a, b, c, d []float64) error {
	if err := mma.CheckDots(k, a, b, c, d); err != nil {
		return err
	}
	n := len(c)
	if k == 0 {
		for i, x := range c {
			d[i] = u.kind.out.Round(x, format.NearestEven)
		}
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for lo := 0; lo < n; lo += unitBatch {
		hi := min(lo+unitBatch, n)
		if err := u.batch(k, a[lo*k:hi*k], b[lo*k:hi*k], c[lo:hi], d[lo:hi]); err != nil {
			return err
		}
	}
	return nil
}

func (u *Unit) batch(k int, a, b, c, d []float64) error {
	kd := u.kind
	n := len(c)
	kp := (k + kd.k - 1) / kd.k * kd.k
	cases := n
	if kd.instr != FMA {
		cases = (n + 7) / 8 * 8 // whole tiles of eight
	}
	inBytes, outBytes := codeBytes(kd.in), codeBytes(kd.out)
	ab := make([]byte, cases*kp*inBytes)
	bb := make([]byte, cases*kp*inBytes)
	// Padding terms are (-0)·(+0) = -0, which leaves every sum as it is
	// (+0 padding would turn a -0 result into +0).
	negZero := math.Copysign(0, -1)
	parallel(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for j := 0; j < kp; j++ {
				x, y := negZero, 0.0
				if j < k {
					x, y = a[i*k+j], b[i*k+j]
				}
				putCode(ab[(i*kp+j)*inBytes:], kd.in, x)
				putCode(bb[(i*kp+j)*inBytes:], kd.in, y)
			}
		}
	})
	cb := make([]byte, cases*outBytes)
	for i, x := range c {
		putCode(cb[i*outBytes:], kd.out, x)
	}
	bufs := make([]*gpu.Buffer, 4)
	defer func() {
		for _, x := range bufs {
			if x != nil {
				x.Free()
			}
		}
	}()
	for i, host := range [][]byte{ab, bb, cb, make([]byte, len(cb))} {
		var err error
		if bufs[i], err = u.d.Alloc(max(len(host), 4)); err != nil {
			return err
		}
		if i < 3 {
			if err := u.d.Upload(bufs[i], host); err != nil {
				return err
			}
		}
	}
	// NaN in every result slot, so that one the kernel missed shows.
	if err := u.d.Memset8(bufs[3], 0xff); err != nil {
		return err
	}
	sms := uint32(max(u.d.Multiprocessors(), 1))
	var grid, block uint32
	var count int64 // groups of eight cases, or cases for FMA
	var length int32
	switch kd.instr {
	case FMA:
		count, length, block = int64(n), int32(kp), 256
		grid = min(uint32((n+255)/256), 16*sms)
	case WGMMA:
		count, length, block = int64(cases/8), int32(kp*inBytes/4), 128
		grid = min(uint32(count), 16*sms)
	default:
		count, block = int64(cases/8), 128
		length = int32(kp * inBytes / 4)
		if kd.in == format.Binary64 {
			length = int32(kp)
		}
		grid = min(uint32((count+3)/4), 16*sms)
	}
	if err := u.fn.Launch([3]uint32{grid, 1, 1}, [3]uint32{block, 1, 1}, 0, nil,
		bufs[0], bufs[1], bufs[2], bufs[3], count, length); err != nil {
		return err
	}
	out := make([]byte, len(cb))
	if err := u.d.Download(out, bufs[3]); err != nil {
		return fmt.Errorf("gpu: %s: %w", u.Name(), err)
	}
	for i := range d {
		d[i] = getCode(out[i*outBytes:], kd.out)
	}
	return nil
}

// parallel calls f on slices of [0, n) on every core.
func parallel(n int, f func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	chunk := max((n+workers-1)/workers, 1024)
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += chunk {
		wg.Go(func() { f(lo, min(lo+chunk, n)) })
	}
	wg.Wait()
}

// codeBytes is the size of one value of f as the kernels take it: TF32
// travels as fp32.
func codeBytes(f format.Format) int {
	switch f {
	case format.TF32, format.Binary32:
		return 4
	case format.Binary64:
		return 8
	}
	return (f.Bits() + 7) / 8
}

// putCode writes x, rounded to nearest into f, as f's code.
func putCode(dst []byte, f format.Format, x float64) {
	switch f {
	case format.TF32, format.Binary32:
		binary.LittleEndian.PutUint32(dst, math.Float32bits(float32(x)))
		return
	case format.Binary64:
		binary.LittleEndian.PutUint64(dst, math.Float64bits(x))
		return
	}
	code, err := f.Encode(f.Round(x, format.NearestEven))
	if err != nil {
		panic(err) // a rounded value always encodes
	}
	switch codeBytes(f) {
	case 1:
		dst[0] = byte(code)
	default:
		binary.LittleEndian.PutUint16(dst, uint16(code))
	}
}

func getCode(src []byte, f format.Format) float64 {
	switch f {
	case format.Binary32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(src)))
	case format.Binary64:
		return math.Float64frombits(binary.LittleEndian.Uint64(src))
	}
	var code uint64
	if codeBytes(f) == 1 {
		code = uint64(src[0])
	} else {
		code = uint64(binary.LittleEndian.Uint16(src))
	}
	x, err := f.Decode(code)
	if err != nil {
		return math.NaN()
	}
	return x
}
