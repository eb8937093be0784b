package gpu

// Tests that need a GPU: each skips when Available reports none. On a GPU
// machine:
//
//	CGO_ENABLED=0 go test -c -o .bin/gpu.test ./gpu/ && ./.bin/gpu.test -test.v
//
// TestFakeCUDA runs them here too, against fake CUDA libraries.

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/x448/float16"
)

// openGPU opens device 0 with a kernel cache in a temporary folder, and
// closes it at the end of the test; it skips the test without a GPU.
func openGPU(t *testing.T) *Device {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	useTempCache(t)
	d, err := Open()
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return d
}

func useTempCache(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "kernels")
	saved := cacheDir
	cacheDir = func() (string, error) { return dir, nil }
	t.Cleanup(func() { cacheDir = saved })
	return dir
}

func alloc(t *testing.T, d *Device, bytes int) *Buffer {
	t.Helper()
	b, err := d.Alloc(bytes)
	if err != nil {
		t.Fatalf("Alloc(%d): %v", bytes, err)
	}
	t.Cleanup(func() { b.Free() })
	return b
}

func upload(t *testing.T, d *Device, src any) *Buffer {
	t.Helper()
	_, n, err := hostBytes(src)
	if err != nil {
		t.Fatal(err)
	}
	b := alloc(t, d, max(n, 1))
	if err := d.Upload(b, src); err != nil {
		t.Fatalf("Upload: %v", err)
	}
	return b
}

func function(t *testing.T, d *Device, module, name string) *Function {
	t.Helper()
	m, err := d.Module(runtimeSource(module))
	if err != nil {
		t.Fatalf("Module(%q): %v", module, err)
	}
	f, err := m.Function(name)
	if err != nil {
		t.Fatalf("Function(%q): %v", name, err)
	}
	return f
}

func TestGPUDevice(t *testing.T) {
	d := openGPU(t)
	major, minor := d.ComputeCapability()
	free, err := d.FreeMemory()
	if err != nil {
		t.Fatalf("FreeMemory: %v", err)
	}
	nvMajor, nvMinor, nvErr := d.NVRTCVersion()
	ltVer, ltErr := d.CublasLtVersion()
	t.Logf("%v: %q, compute capability %d.%d, arch %s, %d SMs, %s total, %s free, driver %d, NVRTC %d.%d (%v), cuBLASLt %d (%v)",
		d, d.Name(), major, minor, d.Arch(), d.Multiprocessors(), size(d.TotalMemory()), size(free),
		d.DriverVersion(), nvMajor, nvMinor, nvErr, ltVer, ltErr)
	if d.Name() == "" || major < 5 || d.Multiprocessors() <= 0 || d.TotalMemory() == 0 {
		t.Errorf("implausible device: name %q, cc %d.%d, %d SMs, %d bytes", d.Name(), major, minor, d.Multiprocessors(), d.TotalMemory())
	}
	if free == 0 || free > d.TotalMemory() {
		t.Errorf("FreeMemory = %d, total %d", free, d.TotalMemory())
	}
	if d.DriverVersion() < 13000 {
		t.Errorf("DriverVersion = %d < 13000 passed the check", d.DriverVersion())
	}
	if nvErr != nil || nvMajor != 13 {
		t.Errorf("NVRTCVersion = %d.%d, %v; want 13.x", nvMajor, nvMinor, nvErr)
	}
	if ltErr != nil || ltVer < 130000 || ltVer >= 140000 {
		t.Errorf("CublasLtVersion = %d, %v; want 13xxyy", ltVer, ltErr)
	}
	if _, err := OpenIndex(1 << 20); !errors.Is(err, ErrNoDevice) {
		t.Errorf("OpenIndex(1<<20): %v, want ErrNoDevice", err)
	}
}

func TestGPURoundTrip(t *testing.T) {
	d := openGPU(t)
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 100_003
	x := make([]float32, n)
	for i := range x {
		x[i] = math.Float32frombits(rng.Uint32()) // every bit pattern, NaNs included
	}
	buf := upload(t, d, x)
	y := make([]float32, n)
	if err := d.Download(y, buf); err != nil {
		t.Fatalf("Download: %v", err)
	}
	bad := 0
	for i := range x {
		if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
			if bad < 5 {
				t.Errorf("float32 word %d: uploaded %#08x, downloaded %#08x", i, math.Float32bits(x[i]), math.Float32bits(y[i]))
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d float32 words differ after a round trip", bad, n)
	}

	// Device to device, then other element types through the same bytes.
	buf2 := alloc(t, d, buf.Bytes())
	if err := d.Copy(buf2, buf); err != nil {
		t.Fatalf("Copy: %v", err)
	}
	u := make([]uint16, 2*n)
	if err := d.Download(u, buf2); err != nil {
		t.Fatalf("Download []uint16: %v", err)
	}
	for i := range n {
		if got := uint32(u[2*i]) | uint32(u[2*i+1])<<16; got != math.Float32bits(x[i]) {
			t.Fatalf("after Copy, word %d read as two uint16 = %#08x, want %#08x", i, got, math.Float32bits(x[i]))
		}
	}
	f64 := []float64{math.Pi, -0.0, math.Inf(-1), 5e-324}
	g64 := make([]float64, len(f64))
	if err := d.Download(g64, upload(t, d, f64)); err != nil || fmt.Sprint(g64) != fmt.Sprint(f64) {
		t.Errorf("float64 round trip: %v, %v; want %v", g64, err, f64)
	}
	i32 := []int32{-1, 2, math.MinInt32}
	h32 := make([]int32, 3)
	if err := d.Download(h32, upload(t, d, i32)); err != nil || fmt.Sprint(h32) != fmt.Sprint(i32) {
		t.Errorf("int32 round trip: %v, %v", h32, err)
	}

	// Misuse is an error, not a crash.
	if err := d.Upload(buf, make([]float32, n+1)); err == nil {
		t.Error("Upload of more than the buffer holds: no error")
	}
	if err := d.Upload(buf, []int{1}); err == nil {
		t.Error("Upload of []int: no error")
	}
	small := alloc(t, d, 8)
	if err := small.Free(); err != nil {
		t.Errorf("Free: %v", err)
	}
	if err := small.Free(); err != nil {
		t.Errorf("second Free: %v", err)
	}
	if err := d.Upload(small, []float32{1}); err == nil || !strings.Contains(err.Error(), "freed") {
		t.Errorf("Upload to a freed buffer: %v", err)
	}
	if _, err := d.Alloc(0); err == nil {
		t.Error("Alloc(0): no error")
	}
}

// fill_u32 poisons a buffer: every word it should write is checked, and
// the words past n keep the value Memset32 gave them.
func TestGPUPoison(t *testing.T) {
	d := openGPU(t)
	f := function(t, d, "poison", "fill_u32")
	const words, n = 1<<20 + 37, 1<<20 + 3
	buf := alloc(t, d, 4*words)
	if err := d.Memset32(buf, 0x01020304); err != nil {
		t.Fatalf("Memset32: %v", err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatalf("NewStream: %v", err)
	}
	defer s.Close()
	// Fewer threads than words: the kernel's grid-stride loop covers the rest.
	if err := f.Launch([3]uint32{64, 1, 1}, [3]uint32{256, 1, 1}, 0, s, buf, uint32(0xdeadbeef), uint64(n)); err != nil {
		t.Fatalf("Launch: %v", err)
	}
	if err := s.Sync(); err != nil {
		t.Fatalf("Stream.Sync after fill_u32: %v", err)
	}
	got := make([]uint32, words)
	if err := d.Download(got, buf); err != nil {
		t.Fatalf("Download: %v", err)
	}
	bad := 0
	for i, w := range got {
		want := uint32(0xdeadbeef)
		if i >= n {
			want = 0x01020304
		}
		if w != want {
			if bad < 5 {
				t.Errorf("word %d = %#08x, want %#08x", i, w, want)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d words wrong", bad, words)
	}

	if err := f.Launch([3]uint32{0, 1, 1}, [3]uint32{256, 1, 1}, 0, nil, buf, uint32(0), uint64(1)); err == nil {
		t.Error("Launch with a zero grid: no error")
	}
	if err := f.Launch([3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, nil, buf, 0, uint64(1)); err == nil || !strings.Contains(err.Error(), "Go int") {
		t.Errorf("Launch with an int argument: %v, want an error about Go int", err)
	}
	if err := f.SetMaxDynamicShared(64 << 10); err != nil {
		t.Errorf("SetMaxDynamicShared(64 KiB): %v", err)
	} else if err := f.Launch([3]uint32{1, 1, 1}, [3]uint32{32, 1, 1}, 64<<10, nil, buf, uint32(7), uint64(1)); err != nil {
		t.Errorf("Launch with 64 KiB of dynamic shared memory: %v", err)
	}
	if err := d.Sync(); err != nil {
		t.Errorf("Device.Sync: %v", err)
	}
}

// echo_args writes back its arguments: each Go type must reach C as the
// parameter's type.
func TestGPUKernelArgs(t *testing.T) {
	d := openGPU(t)
	f := function(t, d, "echo", "echo_args")
	out := alloc(t, d, 6*8)
	if err := d.Memset32(out, 0); err != nil {
		t.Fatal(err)
	}
	a, b, c, u, e, g := int32(-5), uint32(0xfedcba98), int64(-1)<<40, uint64(0x0123456789abcdef), float32(-1.25), 0.1
	if err := f.Launch([3]uint32{1, 1, 1}, [3]uint32{32, 1, 1}, 0, nil, out, a, b, c, u, e, g); err != nil {
		t.Fatalf("Launch: %v", err)
	}
	got := make([]uint64, 6)
	if err := d.Download(got, out); err != nil {
		t.Fatalf("Download: %v", err)
	}
	want := []uint64{uint64(int64(a)), uint64(b), uint64(c), u, uint64(math.Float32bits(e)), math.Float64bits(g)}
	for i, name := range []string{"int32", "uint32", "int64", "uint64", "float32", "float64"} {
		if got[i] != want[i] {
			t.Errorf("%s argument: the kernel saw %#x, want %#x", name, got[i], want[i])
		}
	}
}

func TestGPUEvents(t *testing.T) {
	d := openGPU(t)
	f := function(t, d, "poison", "fill_u32")
	const words = 16 << 20
	buf := alloc(t, d, 4*words)
	start, err := d.NewEvent()
	if err != nil {
		t.Fatalf("NewEvent: %v", err)
	}
	defer start.Close()
	end, err := d.NewEvent()
	if err != nil {
		t.Fatalf("NewEvent: %v", err)
	}
	defer end.Close()
	if err := start.Record(nil); err != nil {
		t.Fatalf("Record: %v", err)
	}
	for i := range 10 {
		if err := f.Launch([3]uint32{uint32(4 * d.Multiprocessors()), 1, 1}, [3]uint32{256, 1, 1}, 0, nil, buf, uint32(i), uint64(words)); err != nil {
			t.Fatalf("Launch: %v", err)
		}
	}
	if err := end.Record(nil); err != nil {
		t.Fatalf("Record: %v", err)
	}
	if err := end.Sync(); err != nil {
		t.Fatalf("Event.Sync: %v", err)
	}
	el, err := Elapsed(start, end)
	if err != nil {
		t.Fatalf("Elapsed: %v", err)
	}
	t.Logf("10 fills of 64 MiB: %v (%.0f GB/s)", el, 10*4*words/el.Seconds()/1e9)
	if el <= 0 || el > 10*time.Second {
		t.Errorf("Elapsed = %v, want a positive time under 10 s", el)
	}
	if err := start.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := Elapsed(start, end); err == nil {
		t.Error("Elapsed with a closed event: no error")
	}
}

// A CUBIN is cached on disk; a corrupt cached file is compiled again.
func TestGPUModuleCache(t *testing.T) {
	if err := Available(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	dir := useTempCache(t)
	run := func(what string, cached bool) string {
		d, err := Open()
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer d.Close()
		m, err := d.Module(runtimeSource("poison"))
		if err != nil {
			t.Fatalf("%s: Module: %v", what, err)
		}
		if m.cached != cached {
			t.Errorf("%s: the module came from the cache: %v, want %v", what, m.cached, cached)
		}
		if m2, _ := d.Module(runtimeSource("poison")); m2 != m {
			t.Errorf("%s: a second Module(\"poison\") gave another module", what)
		}
		f, err := m.Function("fill_u32")
		if err != nil {
			t.Fatalf("%s: Function: %v", what, err)
		}
		buf := alloc(t, d, 16)
		if err := f.Launch([3]uint32{1, 1, 1}, [3]uint32{32, 1, 1}, 0, nil, buf, uint32(9), uint64(4)); err != nil {
			t.Fatalf("%s: Launch: %v", what, err)
		}
		got := make([]uint32, 4)
		if err := d.Download(got, buf); err != nil || got[3] != 9 {
			t.Errorf("%s: the kernel wrote %v, %v", what, got, err)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.cubin"))
		if len(files) != 1 {
			t.Fatalf("%s: %d cached CUBINs in %s, want 1", what, len(files), dir)
		}
		return files[0]
	}
	file := run("first compile", false)
	cubin, _ := os.ReadFile(file)
	if run("from the cache", true) != file {
		t.Error("the cache file changed name")
	}
	if err := os.WriteFile(file, []byte("not a cubin"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("corrupt cache", false)
	if again, _ := os.ReadFile(file); string(again) != string(cubin) {
		t.Errorf("the corrupt cache file was not replaced: %d bytes, want %d", len(again), len(cubin))
	}
}

func TestGPUCompileError(t *testing.T) {
	d := openGPU(t)
	src := "extern \"C\" __global__ void k(float* p)\n{\n    p[0] = undefined_name;\n}\n"
	_, err := d.compileModule("broken", []byte(src), nil)
	var ce *CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("compiling a broken kernel: %v, want a *CompileError", err)
	}
	if ce.Name != "broken.cu" || !strings.Contains(ce.Log, "broken.cu") || !strings.Contains(err.Error(), ce.Log) {
		t.Errorf("CompileError: name %q, log %q", ce.Name, ce.Log)
	}
	t.Logf("%v", err)
	if _, err := SourceFS(kernelFS, "no-such-kernel"); err == nil || !strings.Contains(err.Error(), "poison") {
		t.Errorf("Module of a missing file: %v, want a list of the kernels", err)
	}
}

// colMajor returns a rows×cols matrix with leading dimension ld and values
// from gen; the padding rows are NaN, to show if anything reads them.
func colMajor(rows, cols, ld int, gen func() float32) []float32 {
	a := make([]float32, ld*(cols-1)+rows)
	for i := range a {
		a[i] = float32(math.NaN())
	}
	for j := range cols {
		for i := range rows {
			a[i+j*ld] = gen()
		}
	}
	return a
}

// refGemm returns op(A)·op(B) and |op(A)|·|op(B)| in float64, column-major
// M×N with leading dimension M.
func refGemm(m, n, k int, transA, transB bool, a []float64, lda int, b []float64, ldb int) (ab, abs []float64) {
	ab, abs = make([]float64, m*n), make([]float64, m*n)
	for j := range n {
		for i := range m {
			var s, sa float64
			for l := range k {
				var x, y float64
				if transA {
					x = a[l+i*lda]
				} else {
					x = a[i+l*lda]
				}
				if transB {
					y = b[j+l*ldb]
				} else {
					y = b[l+j*ldb]
				}
				s += x * y
				sa += math.Abs(x * y)
			}
			ab[i+j*m], abs[i+j*m] = s, sa
		}
	}
	return ab, abs
}

func widen[T float32 | float64](x []T) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// checkProduct compares got (M×N, leading dimension ldd) with want
// componentwise: |got − want| ≤ tol·abs, abs = (|A||B|)_ij (+ |C|).
func checkProduct(t *testing.T, what string, m, n, ldd int, got []float64, want, abs []float64, tol float64) {
	t.Helper()
	bad, worst := 0, 0.0
	for j := range n {
		for i := range m {
			g, w, s := got[i+j*ldd], want[i+j*m], abs[i+j*m]
			e := math.Abs(g-w) / s
			if !(e <= tol) { // NaN fails too
				if bad < 5 {
					t.Errorf("%s: D[%d,%d] = %.9g, want %.9g (error %.3g × (|A||B|)_ij, tolerance %.3g)", what, i, j, g, w, e, tol)
				}
				bad++
			}
			if e > worst || math.IsNaN(e) {
				worst = e
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d entries beyond the tolerance", what, bad, m*n)
	}
	t.Logf("%s: largest componentwise error %.3g", what, worst)
}

func lt(t *testing.T, d *Device) *Lt {
	t.Helper()
	l, err := d.Lt()
	if err != nil {
		t.Fatalf("Lt: %v", err)
	}
	return l
}

// SGEMM with pedantic fp32 against a float64 product, in every
// transposition, with tight and padded leading dimensions.
func TestGPUSgemm(t *testing.T) {
	d := openGPU(t)
	l := lt(t, d)
	rng := rand.New(rand.NewPCG(3, 4))
	gen := func() float32 { return float32(rng.NormFloat64()) }
	const m, n, k = 64, 48, 80
	for _, tt := range []struct {
		transA, transB bool
		pad            int
	}{{false, false, 0}, {true, false, 0}, {false, true, 0}, {true, true, 0}, {false, false, 3}, {true, true, 5}} {
		rA, cA := m, k
		if tt.transA {
			rA, cA = k, m
		}
		rB, cB := k, n
		if tt.transB {
			rB, cB = n, k
		}
		lda, ldb, ldd := rA+tt.pad, rB+tt.pad, m+tt.pad
		a, b := colMajor(rA, cA, lda, gen), colMajor(rB, cB, ldb, gen)
		dBuf := alloc(t, d, 4*(ldd*(n-1)+m))
		what := fmt.Sprintf("SGEMM transA=%v transB=%v pad=%d", tt.transA, tt.transB, tt.pad)
		err := l.Matmul(MatmulSpec{M: m, N: n, K: k, TransA: tt.transA, TransB: tt.transB,
			A: upload(t, d, a), B: upload(t, d, b), D: dBuf, LdA: lda, LdB: ldb, LdD: ldd,
			TypeA: F32, TypeB: F32, TypeD: F32, Compute: Compute32FPedantic, Alpha: 1})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		got := make([]float32, ldd*(n-1)+m)
		if err := d.Download(got, dBuf); err != nil {
			t.Fatalf("%s: Download: %v", what, err)
		}
		want, abs := refGemm(m, n, k, tt.transA, tt.transB, widen(a), lda, widen(b), ldb)
		checkProduct(t, what, m, n, ldd, widen(got), want, abs, 1e-5)
	}
}

// fp16 inputs, fp32 output, fp32 accumulation (tensor cores): the products
// of fp16 values are exact in fp32, so only the k additions round.
func TestGPUHalfMatmul(t *testing.T) {
	d := openGPU(t)
	l := lt(t, d)
	rng := rand.New(rand.NewPCG(5, 6))
	const m, n, k = 64, 48, 80
	ah, bh := make([]uint16, m*k), make([]uint16, k*n)
	a, b := make([]float64, m*k), make([]float64, k*n)
	for i := range ah {
		h := float16.Fromfloat32(float32(rng.NormFloat64()))
		ah[i], a[i] = h.Bits(), float64(h.Float32())
	}
	for i := range bh {
		h := float16.Fromfloat32(float32(rng.NormFloat64()))
		bh[i], b[i] = h.Bits(), float64(h.Float32())
	}
	dBuf := alloc(t, d, 4*m*n)
	err := l.Matmul(MatmulSpec{M: m, N: n, K: k, A: upload(t, d, ah), B: upload(t, d, bh), D: dBuf,
		TypeA: F16, TypeB: F16, TypeD: F32, Compute: Compute32F, Alpha: 1})
	if err != nil {
		t.Fatalf("fp16 matmul: %v", err)
	}
	got := make([]float32, m*n)
	if err := d.Download(got, dBuf); err != nil {
		t.Fatal(err)
	}
	want, abs := refGemm(m, n, k, false, false, a, m, b, k)
	// The tensor cores may truncate: k·2^-23 bounds the additions' error.
	checkProduct(t, "fp16 → fp32", m, n, m, widen(got), want, abs, k*0x1p-23)
}

// Beta = 1 with D = C accumulates into C; DGEMM keeps fp64 accuracy.
func TestGPUMatmulAccumulate(t *testing.T) {
	d := openGPU(t)
	l := lt(t, d)
	rng := rand.New(rand.NewPCG(7, 8))
	const m, n, k = 33, 17, 50
	gen := func() float64 { return rng.NormFloat64() }
	a, b, c := make([]float64, m*k), make([]float64, k*n), make([]float64, m*n)
	for _, x := range [][]float64{a, b, c} {
		for i := range x {
			x[i] = gen()
		}
	}
	a32, b32, c32 := make([]float32, len(a)), make([]float32, len(b)), make([]float32, len(c))
	for i := range a {
		a32[i] = float32(a[i])
		a[i] = float64(a32[i])
	}
	for i := range b {
		b32[i] = float32(b[i])
		b[i] = float64(b32[i])
	}
	for i := range c {
		c32[i] = float32(c[i])
		c[i] = float64(c32[i])
	}
	ab, abs := refGemm(m, n, k, false, false, a, m, b, k)
	want := make([]float64, m*n)
	for i := range want {
		want[i] = 2*ab[i] + c[i] // alpha 2, beta 1
		abs[i] = 2*abs[i] + math.Abs(c[i])
	}

	cBuf := upload(t, d, c32)
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = l.Matmul(MatmulSpec{M: m, N: n, K: k, A: upload(t, d, a32), B: upload(t, d, b32), C: cBuf, D: cBuf,
		TypeA: F32, TypeB: F32, TypeC: F32, TypeD: F32, Compute: Compute32FPedantic, Alpha: 2, Beta: 1, Stream: s})
	if err != nil {
		t.Fatalf("SGEMM with beta=1: %v", err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, m*n)
	if err := d.Download(got, cBuf); err != nil {
		t.Fatal(err)
	}
	checkProduct(t, "C += 2AB (fp32)", m, n, m, widen(got), want, abs, 1e-5)

	// The same in fp64, with a workspace.
	c64 := upload(t, d, c)
	ws := alloc(t, d, 4<<20)
	err = l.Matmul(MatmulSpec{M: m, N: n, K: k, A: upload(t, d, a), B: upload(t, d, b), C: c64, D: c64,
		TypeA: F64, TypeB: F64, TypeC: F64, TypeD: F64, Compute: Compute64F, Alpha: 2, Beta: 1, Workspace: ws})
	if err != nil {
		t.Fatalf("DGEMM with beta=1: %v", err)
	}
	got64 := make([]float64, m*n)
	if err := d.Download(got64, c64); err != nil {
		t.Fatal(err)
	}
	checkProduct(t, "C += 2AB (fp64)", m, n, m, got64, want, abs, 4e-14)
}

// fp8 in NN form is not a layout cuBLASLt supports on Hopper: either it
// works (newer GPUs or libraries) or the error says there is no algorithm.
func TestGPUMatmulNoAlgorithm(t *testing.T) {
	d := openGPU(t)
	l := lt(t, d)
	const m, n, k = 64, 64, 64
	a, b, out := alloc(t, d, m*k), alloc(t, d, k*n), alloc(t, d, 4*m*n)
	err := l.Matmul(MatmulSpec{M: m, N: n, K: k, A: a, B: b, D: out,
		TypeA: E4M3, TypeB: E4M3, TypeD: F32, Compute: Compute32F, Alpha: 1})
	if err == nil {
		t.Logf("fp8 NN matmul is supported here")
		return
	}
	t.Logf("%v", err)
	if !errors.Is(err, ErrNoAlgorithm) {
		t.Errorf("fp8 NN matmul: %v, want ErrNoAlgorithm", err)
	}
}

// Close frees what is left; the values that outlive it fail cleanly.
func TestGPUClose(t *testing.T) {
	if err := Available(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	d, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	buf, err := d.Alloc(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := d.NewStream()
	e, _ := d.NewEvent()
	if _, err := d.Lt(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := errors.Join(buf.Free(), s.Close(), e.Close()); err != nil {
		t.Errorf("freeing after Close: %v", err)
	}
	if _, err := d.Alloc(4); !errors.Is(err, ErrClosed) {
		t.Errorf("Alloc after Close: %v, want ErrClosed", err)
	}
	if _, err := d.FreeMemory(); !errors.Is(err, ErrClosed) {
		t.Errorf("FreeMemory after Close: %v, want ErrClosed", err)
	}
}

// A buffer the program loses is freed after the collector finds it.
func TestGPULeakedBuffer(t *testing.T) {
	d := openGPU(t)
	id := func() uint64 {
		b, err := d.Alloc(64 << 20)
		if err != nil {
			t.Fatal(err)
		}
		return b.id
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		d.pendingMu.Lock()
		n := len(d.pending)
		d.pendingMu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the lost buffer's cleanup did not run in 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	live := true
	if err := d.Do(func() error { live = d.live(id); return nil }); err != nil {
		t.Fatal(err)
	}
	if live {
		t.Error("the lost buffer is still allocated after the next call")
	}
}

// Many goroutines share one device.
func TestGPUConcurrent(t *testing.T) {
	d := openGPU(t)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := make([]int32, 1000+g)
			for i := range x {
				x[i] = int32(g*100000 + i)
			}
			for range 20 {
				b, err := d.Alloc(4 * len(x))
				if err != nil {
					errs <- err
					return
				}
				y := make([]int32, len(x))
				err = errors.Join(d.Upload(b, x), d.Download(y, b), b.Free())
				if err == nil && fmt.Sprint(x) != fmt.Sprint(y) {
					err = fmt.Errorf("goroutine %d: the data came back changed", g)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// CopyRect moves a block between column-major matrices of other leading
// dimensions on a stream, and a second stream that waits for it sees it.
func TestGPUCopyRect(t *testing.T) {
	d := openGPU(t)
	const rows, cols, lds, ldd = 5, 7, 9, 6
	src := make([]float32, lds*cols)
	for i := range src {
		src[i] = float32(i)
	}
	sb := upload(t, d, src)
	db := upload(t, d, make([]float32, ldd*cols))
	s1, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	s2, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	ev, err := d.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	if err := d.CopyRect(db, ldd, sb.View(4*2), lds, rows, cols, 4, s1); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(ev.Record(s1), s2.Wait(ev), s2.Sync()); err != nil {
		t.Fatal(err)
	}
	if done, err := s1.Done(); err != nil || !done {
		t.Fatalf("Done after the wait = %v, %v", done, err)
	}
	got := make([]float32, ldd*cols)
	if err := d.Download(got, db); err != nil {
		t.Fatal(err)
	}
	for j := 0; j < cols; j++ {
		for i := 0; i < ldd; i++ {
			want := float32(0)
			if i < rows {
				want = src[j*lds+2+i]
			}
			if got[j*ldd+i] != want {
				t.Fatalf("(%d, %d) = %g, want %g", i, j, got[j*ldd+i], want)
			}
		}
	}
	if err := d.CopyRect(db, ldd, sb, lds, rows, cols+1, 4, s1); err == nil {
		t.Error("a block past the buffers was copied")
	}
	if err := d.CopyRect(db, 3, sb, lds, rows, cols, 4, s1); err == nil {
		t.Error("a leading dimension below the rows was taken")
	}
}
