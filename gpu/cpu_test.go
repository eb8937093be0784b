package gpu

// Tests that need no GPU: they run everywhere.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"structs"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"github.com/mwmm/mwmm/gpu/internal/cuda"
)

func TestArch(t *testing.T) {
	for _, tt := range []struct {
		major, minor int
		want         string
	}{
		{9, 0, "sm_90a"}, // wgmma, setmaxnreg
		{8, 0, "sm_80"},
		{8, 6, "sm_86"},
		{8, 9, "sm_89"},
		{7, 5, "sm_75"},
		{10, 0, "sm_100a"}, // tcgen05
		{10, 3, "sm_103a"},
		{12, 0, "sm_120a"},
	} {
		if got := Arch(tt.major, tt.minor); got != tt.want {
			t.Errorf("Arch(%d, %d) = %q, want %q", tt.major, tt.minor, got, tt.want)
		}
	}
}

// Without a driver, Open and friends return the reason, and errors.Is
// finds ErrNoDriver in it.
func TestNoGPU(t *testing.T) {
	err := Available()
	if err == nil {
		t.Skip("this machine has a GPU")
	}
	t.Logf("Available: %v", err)
	d, oerr := Open()
	if d != nil || oerr == nil {
		t.Fatalf("Open() = %v, %v; want an error", d, oerr)
	}
	if oerr.Error() != err.Error() {
		t.Errorf("Open: %q, want Available's %q", oerr, err)
	}
	if _, err := Count(); err == nil {
		t.Error("Count: no error")
	}
	if errors.Is(err, ErrNoDriver) {
		for _, s := range []string{"libcuda.so.1", "NVIDIA GPU and driver", "/usr/local/cuda/lib64"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("Available: %q does not mention %q", err, s)
			}
		}
	} else if !errors.Is(err, ErrDriverTooOld) && !errors.Is(err, ErrNoDevice) {
		t.Errorf("Available: %v wraps none of ErrNoDriver, ErrDriverTooOld, ErrNoDevice", err)
	}
}

func TestCacheKey(t *testing.T) {
	src := "extern \"C\" __global__ void k() {}"
	opts := compileOptions("sm_90a", nil)
	base := cacheKey(src, opts, "sm_90a", 13000, 13, 0)
	if len(base) != 64 {
		t.Errorf("cacheKey = %q, want 64 hex digits", base)
	}
	if again := cacheKey(src, compileOptions("sm_90a", nil), "sm_90a", 13000, 13, 0); again != base {
		t.Errorf("cacheKey is not deterministic: %s, %s", base, again)
	}
	for name, k := range map[string]string{
		"source":        cacheKey(src+" ", opts, "sm_90a", 13000, 13, 0),
		"--fmad=false":  cacheKey(src, compileOptions("sm_90a", []string{"--fmad=false"}), "sm_90a", 13000, 13, 0),
		"arch":          cacheKey(src, compileOptions("sm_80", nil), "sm_80", 13000, 13, 0),
		"driver":        cacheKey(src, opts, "sm_90a", 13010, 13, 0),
		"NVRTC version": cacheKey(src, opts, "sm_90a", 13000, 13, 1),
		// Options split differently are other options.
		"option split": cacheKey(src, append(opts[:len(opts):len(opts)], "-DA", "-DB"), "sm_90a", 13000, 13, 0),
		"option join":  cacheKey(src, append(opts[:len(opts):len(opts)], "-DA-DB"), "sm_90a", 13000, 13, 0),
	} {
		if k == base {
			t.Errorf("changing the %s leaves the cache key unchanged", name)
		}
	}
}

func TestCompileOptions(t *testing.T) {
	got := strings.Join(compileOptions("sm_90a", []string{"--fmad=false"}), " ")
	if want := "--gpu-architecture=sm_90a -default-device --std=c++17 --fmad=false"; got != want {
		t.Errorf("compileOptions = %q, want %q", got, want)
	}
}

func TestWriteCache(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	file := filepath.Join(dir, "k.cubin")
	writeCache(file, []byte("one"))
	writeCache(file, []byte("two")) // overwrites
	if b, err := os.ReadFile(file); err != nil || string(b) != "two" {
		t.Errorf("cache file: %q, %v", b, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("cache folder holds %d files, want 1 (no temporary files left)", len(entries))
	}
	// A folder that cannot be made is not an error, just no cache.
	writeCache(filepath.Join(file, "x", "y.cubin"), []byte("z"))
}

func TestKernelsEmbedded(t *testing.T) {
	names := Kernels()
	for _, want := range []string{"poison", "echo"} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if !found {
			t.Errorf("Kernels() = %q lacks %q", names, want)
		}
	}
	for _, n := range names {
		src, err := kernelFS.ReadFile("kernels/" + n + ".cu")
		if err != nil {
			t.Fatal(err)
		}
		// NVRTC has no CUDA headers here.
		if regexp.MustCompile(`(?m)^\s*#\s*include`).Match(src) {
			t.Errorf("kernels/%s.cu has an #include", n)
		}
	}
}

func TestPackArgs(t *testing.T) {
	d := &Device{}
	buf := &Buffer{d: d, ptr: 0x7f0000001000, n: 64}
	tm := new(cuda.TensorMap)
	pa, err := packArgs(d, []any{buf, uintptr(0xabc), int32(-2), uint32(0xfffffffe),
		int64(-3), uint64(1 << 63), float32(1.5), float64(-0.1), tm})
	if err != nil {
		t.Fatal(err)
	}
	want := []uint64{0x7f0000001000, 0xabc, 0xfffffffe, 0xfffffffe,
		0xfffffffffffffffd, 1 << 63, uint64(math.Float32bits(1.5)), math.Float64bits(-0.1)}
	for i := range want {
		if pa.slots[i] != want[i] {
			t.Errorf("slot %d = %#x, want %#x", i, pa.slots[i], want[i])
		}
	}
	if len(pa.bufs) != 1 || pa.bufs[0] != (argBuffer{0, buf}) {
		t.Errorf("bufs = %v, want the buffer of argument 0", pa.bufs)
	}
	if pa.byValue[8] != tm.Bytes() || pa.byValue[0] != nil {
		t.Errorf("byValue = %v, want the tensor map at 8 only", pa.byValue)
	}

	other := &Buffer{d: &Device{}, n: 4}
	for _, tt := range []struct {
		arg  any
		want string
	}{
		{7, "Go int"},
		{uint(7), "Go uint"},
		{"s", "type string"},
		{(*Buffer)(nil), "nil buffer"},
		{other, "the buffer is on"},
		{int16(1), "type int16"},
		{(*cuda.TensorMap)(nil), "nil tensor map"},
		{(*Params)(nil), "nil params"},
		{ParamsOf(&struct{ A uint64 }{}), "no structs.HostLayout"},
		{ParamsOf(&struct {
			_ structs.HostLayout
			P uintptr
		}{}), "no fixed C counterpart"},
		{ParamsOf(&struct {
			_ structs.HostLayout
			N int
		}{}), "no fixed C counterpart"},
		{ParamsOf(&struct {
			_ structs.HostLayout
			X [4097]byte
		}{}), "above CUDA's 4096"},
		{ParamsOf(&testParams{}, other), "the buffer is on"},
		{ParamsOf(&testParams{}, nil), "nil buffer"},
	} {
		_, err := packArgs(d, []any{int32(0), tt.arg})
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "argument 1") {
			t.Errorf("packArgs(%T): %v, want an error about argument 1 with %q", tt.arg, err, tt.want)
		}
	}
}

// testParams is a kernel's parameter struct, as a C struct
// { void* p; int n; float x; double y; short s[3]; } lays it out.
type testParams struct {
	_ structs.HostLayout
	P uint64
	N int32
	X float32
	Y float64
	S [3]int16
}

func TestPackParams(t *testing.T) {
	d := &Device{}
	a := &Buffer{d: d, ptr: 0x7f0000002000, n: 64}
	b := a.View(16)
	v := testParams{P: uint64(b.Ptr()), N: -2, X: 1.5, Y: -0.1, S: [3]int16{1, -1, 7}}
	pa, err := packArgs(d, []any{int32(5), ParamsOf(&v, a, b)})
	if err != nil {
		t.Fatal(err)
	}
	v.N = 99 // the parameter is a copy: later changes do not travel
	got := unsafe.Slice((*byte)(pa.byValue[1]), 32)
	want := binary.LittleEndian.AppendUint64(nil, 0x7f0000002010)
	want = binary.LittleEndian.AppendUint32(want, uint32(0xfffffffe))
	want = binary.LittleEndian.AppendUint32(want, math.Float32bits(1.5))
	want = binary.LittleEndian.AppendUint64(want, math.Float64bits(-0.1))
	want = append(want, 1, 0, 0xff, 0xff, 7, 0, 0, 0) // s[3], then padding to 8
	if !bytes.Equal(got, want) {
		t.Errorf("params bytes\n% x\nwant\n% x", got, want)
	}
	if len(pa.bufs) != 2 || pa.bufs[0] != (argBuffer{1, a}) || pa.bufs[1] != (argBuffer{1, b}) {
		t.Errorf("bufs = %v, want a and b of argument 1", pa.bufs)
	}
	if pa.slots[0] != 5 || pa.byValue[0] != nil {
		t.Errorf("argument 0: slot %d, by value %v", pa.slots[0], pa.byValue[0])
	}
}

func TestHostBytes(t *testing.T) {
	for _, tt := range []struct {
		x    any
		want int
	}{
		{[]float32{1, 2, 3}, 12},
		{[]float64{1, 2}, 16},
		{[]uint16{1, 2, 3}, 6},
		{[]uint8{1}, 1},
		{[]int8{1, 2}, 2},
		{[]int16{1}, 2},
		{[]int32{1, 2}, 8},
		{[]uint32{1}, 4},
		{[]int64{1}, 8},
		{[]uint64{1, 2}, 16},
		{[]float32{}, 0},
	} {
		p, n, err := hostBytes(tt.x)
		if err != nil || n != tt.want || (n > 0) != (p != nil) {
			t.Errorf("hostBytes(%T len %d) = %v, %d, %v; want %d bytes", tt.x, n, p, n, err, tt.want)
		}
	}
	for _, x := range []any{[]int{1}, []complex64{1}, 3.0, "s"} {
		if _, _, err := hostBytes(x); err == nil {
			t.Errorf("hostBytes(%T): no error", x)
		}
	}
}

func TestMatmulSpecNormalized(t *testing.T) {
	d := &Device{}
	buf := func(n int) *Buffer { return &Buffer{d: d, n: n} }
	// 3×5 · 5×2, all f32, tight: A 60, B 40, D 24 bytes.
	base := MatmulSpec{M: 3, N: 2, K: 5, A: buf(60), B: buf(40), D: buf(24),
		TypeA: F32, TypeB: F32, TypeD: F32, Compute: Compute32FPedantic, Alpha: 1}
	s, err := base.normalized()
	if err != nil {
		t.Fatal(err)
	}
	if s.LdA != 3 || s.LdB != 5 || s.LdC != 3 || s.LdD != 3 || s.C != s.D || s.TypeC != F32 {
		t.Errorf("defaults: ld %d %d %d %d, C==D %v, TypeC %v", s.LdA, s.LdB, s.LdC, s.LdD, s.C == s.D, s.TypeC)
	}
	// Transposed A is stored 5×3: its ld defaults to 5.
	ta := base
	ta.TransA = true
	if s, err := ta.normalized(); err != nil || s.LdA != 5 {
		t.Errorf("TransA: LdA %d, %v; want 5", s.LdA, err)
	}
	// A padded ld needs ld·(cols−1) + rows elements.
	pad := base
	pad.LdA = 4
	pad.A = buf(4 * (4*4 + 3))
	if _, err := pad.normalized(); err != nil {
		t.Errorf("LdA 4 with %d bytes: %v", pad.A.n, err)
	}
	pad.A = buf(4*(4*4+3) - 1)
	if _, err := pad.normalized(); err == nil || !strings.Contains(err.Error(), "needs 76 bytes") {
		t.Errorf("LdA 4 with a byte too few: %v", err)
	}
	for name, tt := range map[string]struct {
		edit func(*MatmulSpec)
		want string
	}{
		"k 0":         {func(s *MatmulSpec) { s.K = 0 }, "must be positive"},
		"no compute":  {func(s *MatmulSpec) { s.Compute = 0 }, "no compute type"},
		"no B":        {func(s *MatmulSpec) { s.B = nil }, "no buffer B"},
		"no type A":   {func(s *MatmulSpec) { s.TypeA = 0 }, "no type for A"},
		"small ld":    {func(s *MatmulSpec) { s.LdD = 2 }, "= 2 is less than the 3 rows"}, // C = D: LdC too
		"small A":     {func(s *MatmulSpec) { s.A = buf(59) }, "A (3×5 f32, ld 3) needs 60 bytes, its buffer has 59"},
		"f64 D small": {func(s *MatmulSpec) { s.TypeD = F64 }, "(3×2 f64, ld 3) needs 48 bytes, its buffer has 24"},
	} {
		s := base
		tt.edit(&s)
		if _, err := s.normalized(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, tt.want)
		}
	}
	if got := base.String(); !strings.Contains(got, "m=3 n=2 k=5") || !strings.Contains(got, "32F_PEDANTIC") {
		t.Errorf("String() = %q", got)
	}
}

func TestTypesStrings(t *testing.T) {
	for ty, want := range map[DataType]string{F32: "f32", F64: "f64", F16: "f16", BF16: "bf16", E4M3: "e4m3", E5M2: "e5m2", I8: "i8", I32: "i32", 0: "DataType(0)"} {
		if ty.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(ty), ty.String(), want)
		}
	}
	for ty, want := range map[DataType]int{F32: 4, F64: 8, F16: 2, BF16: 2, E4M3: 1, E5M2: 1, I8: 1, I32: 4, 99: 0} {
		if ty.Size() != want {
			t.Errorf("%v.Size() = %d, want %d", ty, ty.Size(), want)
		}
	}
	// The cuBLAS enum values (cublas_api.h, library_types.h).
	for c, want := range map[ComputeType]int32{Compute32F: 68, Compute32FPedantic: 69, Compute32FFast16F: 74,
		Compute32FFast16BF: 75, Compute32FFastTF32: 77, Compute64F: 70, Compute32I: 72} {
		if computeTypes[c].cuda != want {
			t.Errorf("%v = %d, want %d", c, computeTypes[c].cuda, want)
		}
	}
	for ty, want := range map[DataType]int32{F32: 0, F64: 1, F16: 2, BF16: 14, E4M3: 28, E5M2: 29, I8: 3, I32: 10} {
		if dataTypes[ty].cuda != want {
			t.Errorf("%v = %d, want %d", ty, dataTypes[ty].cuda, want)
		}
	}
	if Compute64F.scaleType() != 1 || Compute32FFastTF32.scaleType() != 0 || Compute32I.scaleType() != 10 {
		t.Error("scale types: want CUDA_R_64F for 64F, CUDA_R_32I for 32I, CUDA_R_32F otherwise")
	}
}

// The worker runs every job on one OS thread, in order, survives a panic,
// and refuses work once stopped.
func TestWorker(t *testing.T) {
	w := newWorker()
	var tids sync.Map
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				w.do(func() error { tids.Store(syscall.Gettid(), true); return nil })
			}
		}()
	}
	wg.Wait()
	n := 0
	tids.Range(func(any, any) bool { n++; return true })
	if n != 1 {
		t.Errorf("jobs ran on %d threads, want 1", n)
	}
	if err := w.do(func() error { panic("boom") }); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("a panicking job: %v", err)
	}
	want := errors.New("x")
	if err := w.do(func() error { return want }); err != want {
		t.Errorf("after a panic: %v, want %v", err, want)
	}
	w.stop()
	w.stop()
	if err := w.do(func() error { return nil }); err != ErrClosed {
		t.Errorf("after stop: %v, want ErrClosed", err)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 3 << 20: "3.0 MiB", 80 << 30: "80.0 GiB"} {
		if got := size(n); got != want {
			t.Errorf("size(%d) = %q, want %q", n, got, want)
		}
	}
}
