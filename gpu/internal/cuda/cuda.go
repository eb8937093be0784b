// Package cuda binds the few functions of the CUDA driver API, NVRTC and
// cuBLASLt that mwmm needs, without cgo: the libraries are opened at run time
// with purego's Dlopen, each symbol is looked up with Dlsym (a missing one is
// an error, not a panic) and given a typed Go function with RegisterFunc.
//
// Each library is loaded once, on first use (LoadDriver, LoadNVRTC,
// LoadCublasLt); a library that is not on the machine is an error wrapping
// ErrNoDriver, ErrNoNVRTC or ErrNoCublasLt, never a crash. Every binding
// returns a Go error (*Error) for a non-zero status code.
//
// The C types are mapped as follows: handles (CUcontext, CUmodule, CUstream,
// nvrtcProgram, cublasLtHandle_t, descriptors) and device pointers
// (CUdeviceptr) are uintptr, enums and int are int32, size_t is uintptr.
// Host memory passed to C must stay put during the call: pass pointers to
// Go values (purego keeps them alive) or memory pinned with runtime.Pinner.
//
// The driver API keeps the current context per OS thread: the caller (package
// gpu) makes all context-dependent calls from one locked OS thread.
//
// Enum values come from the CUDA 12.6 headers (cuda.h, cublasLt.h,
// cublas_api.h, library_types.h, nvrtc.h); NVIDIA keeps them stable across
// releases (they are ABI), so they hold for CUDA 13.
package cuda

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Errors for what is missing on the machine. The errors returned wrap one of
// these (test with errors.Is) and say which file was looked for and where.
var (
	ErrNoDriver     = errors.New("no CUDA driver found")
	ErrNoNVRTC      = errors.New("no NVRTC found")
	ErrNoCublasLt   = errors.New("no cuBLASLt found")
	ErrDriverTooOld = errors.New("CUDA driver too old")
	ErrNoDevice     = errors.New("no CUDA device")
)

// MinDriverVersion is the oldest driver accepted, as cuDriverGetVersion
// reports it (1000*major + 10*minor): the libraries we load are the CUDA 13
// ones (libnvrtc.so.13, libcublasLt.so.13), which need a CUDA 13 driver.
const MinDriverVersion = 13000

// Error is a non-zero status returned by a CUDA, NVRTC or cuBLASLt function.
type Error struct {
	Call    string // the C function, e.g. "cuMemAlloc_v2"
	Code    int    // the status code (CUresult, nvrtcResult, cublasStatus_t)
	Name    string // the code's name, e.g. "CUDA_ERROR_OUT_OF_MEMORY"
	Message string // the library's description, e.g. "out of memory"; may be empty
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s: %s (%d)", e.Call, e.Name, e.Code)
	if e.Message != "" && e.Message != e.Name {
		s += ": " + e.Message
	}
	return s
}

// A LoadError says that a library could not be loaded.
type LoadError struct {
	Err   error    // ErrNoDriver, ErrNoNVRTC or ErrNoCublasLt
	File  string   // the soname looked for, e.g. "libcuda.so.1"
	Hint  string   // what the user can do
	Dirs  []string // the folders searched after the loader's own path
	Cause error    // a dlopen error for a file that exists but did not load; may be nil
}

func (e *LoadError) Error() string {
	s := fmt.Sprintf("%v (%s): %s", e.Err, e.File, e.Hint)
	if e.Cause != nil {
		s += fmt.Sprintf(" (%s exists but did not load: %v)", e.File, e.Cause)
	} else if len(e.Dirs) > 0 {
		s += fmt.Sprintf(" (searched the dynamic loader's path and %s)", strings.Join(e.Dirs, ", "))
	}
	return s
}

func (e *LoadError) Unwrap() error { return e.Err }

// searchDirs lists the folders where CUDA libraries are usually installed,
// tried after the dynamic loader's own search (LD_LIBRARY_PATH as it was at
// start-up, ld.so.cache), without duplicates. The driver's stubs folder is
// left out on purpose: its libcuda.so only returns errors.
func searchDirs() []string {
	triple, target := "x86_64-linux-gnu", "x86_64-linux"
	if runtime.GOARCH == "arm64" {
		triple, target = "aarch64-linux-gnu", "sbsa-linux"
	}
	var dirs []string
	for _, v := range []string{"CUDA_PATH", "CUDA_HOME"} {
		if d := os.Getenv(v); d != "" {
			dirs = append(dirs, filepath.Join(d, "lib64"), filepath.Join(d, "lib"))
		}
	}
	for _, d := range filepath.SplitList(os.Getenv("LD_LIBRARY_PATH")) {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	dirs = append(dirs,
		"/usr/local/cuda/lib64",
		"/usr/local/cuda/targets/"+target+"/lib",
		"/usr/lib/"+triple,
		"/usr/local/nvidia/lib64",
		"/usr/local/nvidia/lib",
		"/usr/lib64",
		"/usr/lib/wsl/lib",
	)
	seen := map[string]bool{}
	out := dirs[:0]
	for _, d := range dirs {
		d = filepath.Clean(d)
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// LibsEnv names an environment variable: a folder to load the CUDA
// libraries from before any other (a particular CUDA install, or the fake
// libraries of the tests).
const LibsEnv = "MWMM_CUDA_LIBS"

// open loads the library soname: from $MWMM_CUDA_LIBS if set, then by its
// bare name, so that the dynamic loader's configuration wins, then from
// each of searchDirs that has the file. It returns the handle and the folder it came from ("" when it is
// unknown).
func open(soname string, mode int, sentinel error, hint string) (uintptr, string, error) {
	var cause error
	if d := os.Getenv(LibsEnv); d != "" && exists(filepath.Join(d, soname)) {
		h, err := purego.Dlopen(filepath.Join(d, soname), mode)
		if err == nil {
			return h, d, nil
		}
		cause = err
	}
	h, err := purego.Dlopen(soname, mode)
	if err == nil {
		return h, loadedFrom(soname), nil
	}
	dirs := searchDirs()
	for _, d := range dirs {
		p := filepath.Join(d, soname)
		if !exists(p) {
			continue
		}
		h, err := purego.Dlopen(p, mode)
		if err == nil {
			return h, d, nil
		}
		if cause == nil {
			cause = err
		}
	}
	if d := os.Getenv(LibsEnv); d != "" {
		dirs = append([]string{d}, dirs...)
	}
	return 0, "", &LoadError{Err: sentinel, File: soname, Hint: hint, Dirs: dirs, Cause: cause}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// loadedFrom returns the folder of a loaded library whose file name starts
// with soname, read from /proc/self/maps; "" when it cannot tell.
func loadedFrom(soname string) string {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(maps), "\n") {
		i := strings.IndexByte(line, '/')
		if i < 0 {
			continue
		}
		p := line[i:]
		if strings.HasPrefix(filepath.Base(p), soname) {
			return filepath.Dir(p)
		}
	}
	return ""
}

// A binding names a C function and the Go function variable to bind it to.
// The first of names found is used (newest version first); optional ones may
// be missing, and then fn stays nil.
type binding struct {
	fn       any // pointer to a func variable
	names    []string
	optional bool
}

func fn(f any, names ...string) binding       { return binding{fn: f, names: names} }
func optional(f any, names ...string) binding { return binding{fn: f, names: names, optional: true} }

// bind looks up every symbol before registering any, so that a library
// missing one is reported as such instead of half bound.
func bind(file string, h uintptr, bs []binding) error {
	addrs := make([]uintptr, len(bs))
	for i, b := range bs {
		for _, n := range b.names {
			if a, err := purego.Dlsym(h, n); err == nil && a != 0 {
				addrs[i] = a
				break
			}
		}
		if addrs[i] == 0 && !b.optional {
			return fmt.Errorf("%s has no function %s: the library is too old or not the real one", file, strings.Join(b.names, " or "))
		}
	}
	for i, b := range bs {
		if addrs[i] != 0 {
			purego.RegisterFunc(b.fn, addrs[i])
		}
	}
	return nil
}

// goString copies the NUL-terminated C string at p.
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// cString returns s as a NUL-terminated byte slice for C.
func cString(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}
