package gpu

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"structs"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/mwmm/mwmm/gpu/internal/cuda"
)

// The runtime's own kernels (memory poisoning and the tests' echo).
//
//go:embed kernels/*.cu
var kernelFS embed.FS

// A Source is one kernel file's CUDA C++ text. Each package that brings
// kernels embeds its .cu files and hands them to Device.Module as Sources,
// so the runtime holds no other package's kernels.
type Source struct {
	Name string // the file's name without ".cu", for errors and logs
	Code []byte
}

// SourceFS reads the kernel file kernels/name.cu of fsys (a package's
// embedded kernels).
func SourceFS(fsys fs.FS, name string) (Source, error) {
	code, err := fs.ReadFile(fsys, path.Join("kernels", name+".cu"))
	if err != nil {
		return Source{}, fmt.Errorf("gpu: no kernel file %q; the kernels are %s", name, strings.Join(KernelNames(fsys), ", "))
	}
	return Source{Name: name, Code: code}, nil
}

// MustSource is SourceFS for files a package embeds itself: a missing one
// is a build mistake, not a run-time condition.
func MustSource(fsys fs.FS, name string) Source {
	src, err := SourceFS(fsys, name)
	if err != nil {
		panic(err)
	}
	return src
}

// KernelNames returns the names of the kernel files under fsys's kernels
// folder, without ".cu".
func KernelNames(fsys fs.FS) []string {
	entries, _ := fs.ReadDir(fsys, "kernels")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".cu"))
	}
	return names
}

// Kernels returns the names of the runtime's own kernel files.
func Kernels() []string { return KernelNames(kernelFS) }

// runtimeSource is one of the runtime's own kernel files.
func runtimeSource(name string) Source { return MustSource(kernelFS, name) }

// cacheDir returns the folder of compiled kernels; a variable for tests.
var cacheDir = func() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "mwmm", "kernels"), nil
}

// A Module is a compiled kernel file loaded on a device. It stays loaded
// until the device is closed.
type Module struct {
	d      *Device
	name   string
	h      uintptr
	id     uint64
	log    string
	cached bool // loaded from the cache, not compiled
	mu     sync.Mutex
	funcs  map[string]*Function
}

// Log returns NVRTC's warnings from compiling the module ("" when it came
// from the cache).
func (m *Module) Log() string { return m.log }

// compileOptions returns NVRTC's options for arch and the caller's opts.
func compileOptions(arch string, opts []string) []string {
	return append([]string{"--gpu-architecture=" + arch, "-default-device", "--std=c++17"}, opts...)
}

// cacheKey names the CUBIN of src compiled with options (which include the
// architecture) by an NVRTC and for a driver: any change gives a new name.
func cacheKey(src string, options []string, arch string, driver, nvrtcMajor, nvrtcMinor int) string {
	h := sha256.New()
	fmt.Fprintf(h, "mwmm kernel cache 1\x00%s\x00driver %d\x00nvrtc %d.%d\x00%d options\x00",
		arch, driver, nvrtcMajor, nvrtcMinor, len(options))
	for _, o := range options {
		fmt.Fprintf(h, "%s\x00", o)
	}
	h.Write([]byte(src))
	return hex.EncodeToString(h.Sum(nil))
}

// Module compiles kernels/<name>.cu for the device's architecture (Arch)
// and loads it. opts are extra NVRTC options, such as "--fmad=false"
// where every product must round separately. The CUBIN is cached on disk
// (see the package doc); asking again for the same name and options
// returns the same Module. A kernel that does not compile gives a
// *CompileError with NVRTC's log.
func (d *Device) Module(src Source, opts ...string) (*Module, error) {
	d.modMu.Lock()
	defer d.modMu.Unlock()
	key := src.Name + "\x00" + string(src.Code) + "\x00" + strings.Join(opts, "\x00")
	if m := d.modules[key]; m != nil {
		return m, nil
	}
	m, err := d.compileModule(src.Name, src.Code, opts)
	if err != nil {
		return nil, err
	}
	d.modules[key] = m
	return m, nil
}

// compileModule compiles src (the file name.cu) with opts, or takes the
// CUBIN from the cache, and loads it.
func (d *Device) compileModule(name string, src []byte, opts []string) (*Module, error) {
	if err := cuda.LoadNVRTC(); err != nil {
		return nil, fmt.Errorf("gpu: compiling %s.cu: %w", name, err)
	}
	arch := d.Arch()
	options := compileOptions(arch, opts)
	major, minor := cuda.NVRTCVersion()
	file := ""
	if dir, err := cacheDir(); err == nil {
		file = filepath.Join(dir, cacheKey(string(src), options, arch, cuda.DriverVersion(), major, minor)+".cubin")
	}

	m := &Module{d: d, name: name, funcs: map[string]*Function{}}
	if file != "" {
		// A file that is not an ELF object, or that the driver refuses, is
		// compiled again and overwritten.
		if cubin, err := os.ReadFile(file); err == nil && bytes.HasPrefix(cubin, []byte("\x7fELF")) {
			if err := d.loadCubin(m, cubin); err == nil {
				m.cached = true
				return m, nil
			}
		}
	}
	cubin, log, err := cuda.Compile(string(src), name+".cu", options)
	if err != nil {
		var ce *Error
		if errors.As(err, &ce) && ce.Code == cuda.NVRTCErrorCompilation {
			return nil, &CompileError{Name: name + ".cu", Log: log, Err: err}
		}
		if log != "" {
			return nil, fmt.Errorf("gpu: compiling %s.cu with %q: %w\n%s", name, options, err, log)
		}
		return nil, fmt.Errorf("gpu: compiling %s.cu with %q: %w", name, options, err)
	}
	m.log = log
	if err := d.loadCubin(m, cubin); err != nil {
		return nil, fmt.Errorf("gpu: loading %s.cu compiled for %s: %w", name, arch, err)
	}
	if file != "" {
		writeCache(file, cubin)
	}
	return m, nil
}

func (d *Device) loadCubin(m *Module, cubin []byte) error {
	return d.Do(func() error {
		h, err := cuda.ModuleLoadData(cubin)
		if err != nil {
			return err
		}
		m.h = h
		m.id = d.track(func() error { return cuda.ModuleUnload(h) })
		return nil
	})
}

// writeCache writes data to file atomically (a temporary file renamed), so
// that concurrent processes never read half a CUBIN. Failing is fine: the
// kernel is compiled again next time.
func writeCache(file string, data []byte) {
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	f, err := os.CreateTemp(dir, ".cubin-*")
	if err != nil {
		return
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), file)
	}
	if err != nil {
		os.Remove(f.Name())
	}
}

// A Function is a kernel of a Module.
type Function struct {
	m         *Module
	name      string
	h         uintptr
	maxShared atomic.Int64 // the last SetMaxDynamicShared, so that a repeat costs no driver call
	// cooperative launches the kernel with every block resident at once
	// (its blocks wait for each other), or fails.
	cooperative atomic.Bool
}

// Function returns the kernel name (its extern "C" name) of the module.
func (m *Module) Function(name string) (*Function, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f := m.funcs[name]; f != nil {
		return f, nil
	}
	f := &Function{m: m, name: name}
	err := m.d.Do(func() error {
		var err error
		f.h, err = cuda.ModuleGetFunction(m.h, name)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("gpu: kernel %s in %s.cu (is it extern \"C\"?): %w", name, m.name, err)
	}
	m.funcs[name] = f
	return f, nil
}

// SetCooperative makes every launch of f a cooperative one: all its blocks
// resident at once (they may wait for each other), or the launch fails.
func (f *Function) SetCooperative() { f.cooperative.Store(true) }

// Name returns the kernel's name.
func (f *Function) Name() string { return f.name }

// SetMaxDynamicShared allows launches with up to bytes of dynamic shared
// memory; above 48 KiB a kernel must ask for it.
func (f *Function) SetMaxDynamicShared(bytes int) error {
	if f.maxShared.Load() == int64(bytes) {
		return nil
	}
	err := f.m.d.Do(func() error {
		return cuda.FuncSetAttribute(f.h, cuda.FuncAttrMaxDynamicSharedSizeBytes, bytes)
	})
	if err != nil {
		return fmt.Errorf("gpu: %s: %d bytes of dynamic shared memory: %w", f.name, bytes, err)
	}
	f.maxShared.Store(int64(bytes))
	return nil
}

// Launch queues the kernel on stream (nil: the default stream) with grid
// blocks of block threads and sharedBytes of dynamic shared memory. The
// args are the kernel's parameters in order, each a Go value of the C
// parameter's size: int32, uint32, int64 (long long), uint64 (unsigned long
// long, size_t), float32, float64, uintptr, *Buffer for a pointer, or
// *Params for a struct passed by value (ParamsOf). It returns the
// launch's errors (a bad configuration); a fault while the kernel runs
// surfaces at the next synchronizing call.
func (f *Function) Launch(grid, block [3]uint32, sharedBytes uint32, stream *Stream, args ...any) error {
	run, err := f.launcher(grid, block, sharedBytes, stream, args...)
	if err != nil {
		return err
	}
	if err := f.m.d.Do(run); err != nil {
		return f.launchError(grid, block, sharedBytes, err)
	}
	return nil
}

// launcher checks and packs the arguments of a launch and returns what
// queues it, to run on the device's thread (Launch, or a launchQueue).
func (f *Function) launcher(grid, block [3]uint32, sharedBytes uint32, stream *Stream, args ...any) (func() error, error) {
	d := f.m.d
	pa, err := packArgs(d, args)
	if err == nil && (slices.Contains(grid[:], 0) || slices.Contains(block[:], 0)) {
		err = errors.New("grid and block sizes must be positive")
	}
	if err != nil {
		return nil, f.launchError(grid, block, sharedBytes, err)
	}
	return func() error {
		for _, b := range pa.bufs {
			if !d.live(b.buf.id) {
				return fmt.Errorf("argument %d: the buffer was freed", b.arg)
			}
		}
		sh, err := stream.Handle(d)
		if err != nil {
			return err
		}
		// void** kernelParams: a pointer to each argument's slot, or to
		// the bytes of one passed by value. All are pinned while the
		// driver reads them; it copies the values before returning.
		var pin runtime.Pinner
		defer pin.Unpin()
		var params unsafe.Pointer
		if n := len(pa.slots); n > 0 {
			ptrs := make([]unsafe.Pointer, n)
			pin.Pin(&pa.slots[0])
			for i := range pa.slots {
				ptrs[i] = unsafe.Pointer(&pa.slots[i])
				if v := pa.byValue[i]; v != nil {
					pin.Pin(v)
					ptrs[i] = v
				}
			}
			pin.Pin(&ptrs[0])
			params = unsafe.Pointer(&ptrs[0])
		}
		if f.cooperative.Load() {
			return cuda.LaunchCooperativeKernel(f.h, grid, block, sharedBytes, sh, params)
		}
		return cuda.LaunchKernel(f.h, grid, block, sharedBytes, sh, params)
	}, nil
}

func (f *Function) launchError(grid, block [3]uint32, sharedBytes uint32, err error) error {
	return fmt.Errorf("gpu: launching %s (grid %v, block %v, %d bytes shared): %w", f.name, grid, block, sharedBytes, err)
}

// A LaunchQueue gathers launches and other driver work for one trip to
// the device's thread. Each trip costs tens of microseconds; a fused
// product is seven launches, which at n = 2048 took longer to queue one
// by one than the kernels took to run.
type LaunchQueue struct {
	d    *Device
	runs []func() error
}

// NewLaunchQueue returns an empty queue for d.
func (d *Device) NewLaunchQueue() *LaunchQueue { return &LaunchQueue{d: d} }

// Launch adds fn's launch (as Function.Launch).
func (q *LaunchQueue) Launch(fn *Function, grid, block [3]uint32, sharedBytes uint32, stream *Stream, args ...any) error {
	run, err := fn.launcher(grid, block, sharedBytes, stream, args...)
	if err != nil {
		return err
	}
	q.runs = append(q.runs, func() error {
		if err := run(); err != nil {
			return fn.launchError(grid, block, sharedBytes, err)
		}
		return nil
	})
	return nil
}

// Do adds f, run on the device's thread in its turn.
func (q *LaunchQueue) Do(f func() error) { q.runs = append(q.runs, f) }

// Flush runs what was queued, in order, stopping at the first error.
func (q *LaunchQueue) Flush() error {
	return q.d.Do(func() error {
		for _, run := range q.runs {
			if err := run(); err != nil {
				return err
			}
		}
		return nil
	})
}

// packedArgs are a launch's arguments: each in its own 8-byte slot, in
// the bytes the C parameter occupies (little-endian: the low bytes; the
// driver copies only the parameter's size), or, for byValue[i] != nil,
// at that address (a tensor map, a Params struct).
type packedArgs struct {
	slots   []uint64
	byValue []unsafe.Pointer
	bufs    []argBuffer // checked alive at launch
}

// An argBuffer is a buffer that argument arg passes or holds.
type argBuffer struct {
	arg int
	buf *Buffer
}

// packArgs packs a launch's arguments (see Function.Launch).
func packArgs(d *Device, args []any) (*packedArgs, error) {
	pa := &packedArgs{slots: make([]uint64, len(args)), byValue: make([]unsafe.Pointer, len(args))}
	for i, a := range args {
		switch v := a.(type) {
		case *cuda.TensorMap: // a __grid_constant__ CUtensorMap, by value
			if v == nil {
				return nil, fmt.Errorf("argument %d: nil tensor map", i)
			}
			pa.byValue[i] = v.Bytes()
		case *Params:
			if err := v.check(d); err != nil {
				return nil, fmt.Errorf("argument %d: %w", i, err)
			}
			pa.byValue[i] = unsafe.Pointer(&v.words[0])
			for _, b := range v.bufs {
				pa.bufs = append(pa.bufs, argBuffer{i, b})
			}
		case *Buffer:
			if err := bufferOn(d, v); err != nil {
				return nil, fmt.Errorf("argument %d: %w", i, err)
			}
			pa.slots[i] = uint64(v.ptr)
			pa.bufs = append(pa.bufs, argBuffer{i, v})
		case uintptr:
			pa.slots[i] = uint64(v)
		case int32:
			pa.slots[i] = uint64(uint32(v))
		case uint32:
			pa.slots[i] = uint64(v)
		case int64:
			pa.slots[i] = uint64(v)
		case uint64:
			pa.slots[i] = v
		case float32:
			pa.slots[i] = uint64(math.Float32bits(v))
		case float64:
			pa.slots[i] = math.Float64bits(v)
		case int, uint:
			return nil, fmt.Errorf("argument %d is a Go %T, whose C size is unclear: pass int32 (int) or int64 (long long)", i, v)
		default:
			return nil, fmt.Errorf("argument %d has type %T; kernels take int32, uint32, int64, uint64, float32, float64, uintptr, *Buffer or *Params", i, a)
		}
	}
	return pa, nil
}

// bufferOn reports why b cannot be a kernel argument on d, or nil.
func bufferOn(d *Device, b *Buffer) error {
	switch {
	case b == nil:
		return errors.New("nil buffer")
	case b.d != d:
		return fmt.Errorf("the buffer is on %v, not %v", b.d, d)
	}
	return nil
}

// maxParamBytes is the most bytes a kernel's parameters may take (CUDA's
// classic limit, which every driver allows).
const maxParamBytes = 4096

// Params is one kernel parameter passed by value: a C struct, as the bytes
// of a Go struct with the same layout. It replaces long lists of positional
// arguments with one named, layout-tested type per kernel. The struct holds
// device addresses as uint64 (Buffer.Ptr); the buffers behind them are
// listed, so that a launch checks them alive and on its device.
type Params struct {
	words []uint64 // the struct's bytes, 8-byte aligned
	bufs  []*Buffer
	err   error // reported at launch
}

// ParamsOf copies v, a struct of fixed-size fields (intN, uintN, floatN,
// arrays and structs of them) marked structs.HostLayout, into a kernel
// parameter; bufs are the buffers whose addresses v holds.
func ParamsOf[T any](v *T, bufs ...*Buffer) *Params {
	size := unsafe.Sizeof(*v)
	p := &Params{bufs: bufs, err: paramsType(reflect.TypeFor[T]())}
	if p.err == nil && size == 0 {
		p.err = errors.New("an empty parameter struct")
	}
	if p.err != nil {
		return p
	}
	p.words = make([]uint64, (size+7)/8)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&p.words[0])), size), unsafe.Slice((*byte)(unsafe.Pointer(v)), size))
	return p
}

// Bytes returns the parameter's bytes, padded to a multiple of 8.
func (p *Params) Bytes() []byte {
	if len(p.words) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&p.words[0])), 8*len(p.words))
}

func (p *Params) check(d *Device) error {
	switch {
	case p == nil:
		return errors.New("nil params")
	case p.err != nil:
		return p.err
	case 8*len(p.words) > maxParamBytes:
		return fmt.Errorf("%d bytes of parameters, above CUDA's %d", 8*len(p.words), maxParamBytes)
	}
	for _, b := range p.bufs {
		if err := bufferOn(d, b); err != nil {
			return err
		}
	}
	return nil
}

// paramsTypes caches paramsType's verdict per type: launches repeat.
var paramsTypes sync.Map // reflect.Type → error

// paramsType reports why t cannot mirror a C struct, or nil: it must be a
// struct marked structs.HostLayout (Go keeps its field order and natural
// alignment) whose fields have the same size on every platform.
func paramsType(t reflect.Type) error {
	if v, ok := paramsTypes.Load(t); ok {
		err, _ := v.(error)
		return err
	}
	err := checkParamsType(t)
	paramsTypes.Store(t, err)
	return err
}

func checkParamsType(t reflect.Type) error {
	if t.Kind() != reflect.Struct {
		return fmt.Errorf("parameters of type %v, not a struct", t)
	}
	host := reflect.TypeFor[structs.HostLayout]()
	marked := false
	for f := range t.Fields() {
		if f.Type == host {
			marked = true
			continue
		}
		if err := fixedSize(f.Type); err != nil {
			return fmt.Errorf("%v.%s: %w", t, f.Name, err)
		}
	}
	if !marked {
		return fmt.Errorf("%v has no structs.HostLayout field: its layout is not C's", t)
	}
	return nil
}

// fixedSize reports why t has no fixed C counterpart, or nil.
func fixedSize(t reflect.Type) error {
	switch t.Kind() {
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return nil
	case reflect.Array:
		return fixedSize(t.Elem())
	case reflect.Struct:
		return checkParamsType(t)
	}
	return fmt.Errorf("a Go %v has no fixed C counterpart (device addresses are uint64)", t)
}

// Record adds e's record on s (as Event.Record).
func (q *LaunchQueue) Record(e *Event, s *Stream) { q.Do(func() error { return e.record(s) }) }

// StrideGrid is the grid of a grid-stride launch of 256-thread blocks over
// elems elements: enough blocks to fill any current GPU, no more.
func StrideGrid(elems int) [3]uint32 {
	return [3]uint32{uint32(max(1, min((elems+255)/256, 8192))), 1, 1}
}
