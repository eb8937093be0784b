package cuda

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// NVRTCFile is NVRTC's soname for CUDA 13.
const NVRTCFile = "libnvrtc.so.13"

// builtinsGlob matches the library NVRTC dlopens by name when it compiles
// (libnvrtc-builtins.so.13.0 for CUDA 13.0).
const builtinsGlob = "libnvrtc-builtins.so.13*"

// nvrtcResult values (nvrtc.h).
const NVRTCErrorCompilation = 6 // NVRTC_ERROR_COMPILATION

var nv struct {
	nvrtcVersion           func(major, minor *int32) result
	nvrtcGetErrorString    func(r result) string
	nvrtcCreateProgram     func(prog *uintptr, src, name *byte, numHeaders int32, headers, includeNames unsafe.Pointer) result
	nvrtcDestroyProgram    func(prog *uintptr) result
	nvrtcCompileProgram    func(prog uintptr, numOptions int32, options unsafe.Pointer) result
	nvrtcGetProgramLogSize func(prog uintptr, n *uintptr) result
	nvrtcGetProgramLog     func(prog uintptr, log *byte) result
	nvrtcGetCUBINSize      func(prog uintptr, n *uintptr) result
	nvrtcGetCUBIN          func(prog uintptr, cubin *byte) result
}

var (
	nvrtcOnce  sync.Once
	nvrtcErr   error
	nvrtcMajor int
	nvrtcMinor int
)

// LoadNVRTC loads libnvrtc.so.13, once.
func LoadNVRTC() error {
	nvrtcOnce.Do(func() { nvrtcErr = loadNVRTC() })
	return nvrtcErr
}

func loadNVRTC() error {
	const hint = "install the CUDA 13 toolkit's NVRTC (e.g. the cuda-nvrtc-13-0 package) or add its folder to LD_LIBRARY_PATH"
	// NVRTC finds its builtins with a plain dlopen by name, which fails when
	// only we know the folder: load them first, RTLD_GLOBAL, so that the
	// name is already taken. Where NVRTC itself comes from decides which
	// builtins go with it.
	preloadBuiltins(nvrtcDir())
	h, _, err := open(NVRTCFile, purego.RTLD_NOW|purego.RTLD_GLOBAL, ErrNoNVRTC, hint)
	if err != nil {
		return err
	}
	n := &nv
	err = bind(NVRTCFile, h, []binding{
		fn(&n.nvrtcVersion, "nvrtcVersion"),
		fn(&n.nvrtcGetErrorString, "nvrtcGetErrorString"),
		fn(&n.nvrtcCreateProgram, "nvrtcCreateProgram"),
		fn(&n.nvrtcDestroyProgram, "nvrtcDestroyProgram"),
		fn(&n.nvrtcCompileProgram, "nvrtcCompileProgram"),
		fn(&n.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize"),
		fn(&n.nvrtcGetProgramLog, "nvrtcGetProgramLog"),
		fn(&n.nvrtcGetCUBINSize, "nvrtcGetCUBINSize"),
		fn(&n.nvrtcGetCUBIN, "nvrtcGetCUBIN"),
	})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoNVRTC, err)
	}
	var major, minor int32
	if r := n.nvrtcVersion(&major, &minor); r != 0 {
		return nvrtcError("nvrtcVersion", r)
	}
	nvrtcMajor, nvrtcMinor = int(major), int(minor)
	return nil
}

// nvrtcDir returns the folder NVRTC is loaded from, searched in open's
// order; "" when it cannot tell.
func nvrtcDir() string {
	if d := os.Getenv(LibsEnv); d != "" && exists(filepath.Join(d, NVRTCFile)) {
		return d
	}
	if _, err := purego.Dlopen(NVRTCFile, purego.RTLD_NOW|purego.RTLD_GLOBAL); err == nil {
		return loadedFrom(NVRTCFile)
	}
	for _, d := range searchDirs() {
		if exists(filepath.Join(d, NVRTCFile)) {
			return d
		}
	}
	return ""
}

// preloadBuiltins dlopens NVRTC's builtins library from dir (all matches,
// newest name first, until one loads), or by name when dir is unknown. A
// failure is not reported here: NVRTC may still find the builtins itself,
// and if not, its compile error says so.
func preloadBuiltins(dir string) {
	const mode = purego.RTLD_NOW | purego.RTLD_GLOBAL
	if dir != "" {
		matches, _ := filepath.Glob(filepath.Join(dir, builtinsGlob))
		// The shortest name (libnvrtc-builtins.so.13.0) is the soname link.
		sort.Slice(matches, func(i, j int) bool { return len(matches[i]) < len(matches[j]) })
		for _, p := range matches {
			if _, err := purego.Dlopen(p, mode); err == nil {
				return
			}
		}
	}
	for _, name := range []string{"libnvrtc-builtins.so.13.0", "libnvrtc-builtins.so.13"} {
		if _, err := purego.Dlopen(name, mode); err == nil {
			return
		}
	}
}

// NVRTCVersion returns NVRTC's version; LoadNVRTC must have succeeded.
func NVRTCVersion() (major, minor int) { return nvrtcMajor, nvrtcMinor }

func nvrtcError(call string, r result) error {
	e := &Error{Call: call, Code: int(r), Name: "NVRTC_ERROR_UNKNOWN"}
	if nv.nvrtcGetErrorString != nil {
		// NVRTC's "string" is the code's name, e.g. NVRTC_ERROR_COMPILATION.
		e.Name = nv.nvrtcGetErrorString(r)
	}
	return e
}

// Compile compiles CUDA C++ source with NVRTC and returns the CUBIN and the
// compiler's log (warnings, or the errors when err is a compile error:
// *Error with Code NVRTCErrorCompilation). name is the file name used in
// messages. opts must name a real architecture (--gpu-architecture=sm_90a),
// since a CUBIN is made for one.
func Compile(src, name string, opts []string) (cubin []byte, log string, err error) {
	var pin runtime.Pinner
	defer pin.Unpin()
	csrc, cname := cString(src), cString(name)
	var prog uintptr
	if r := nv.nvrtcCreateProgram(&prog, &csrc[0], &cname[0], 0, nil, nil); r != 0 {
		return nil, "", nvrtcError("nvrtcCreateProgram", r)
	}
	defer nv.nvrtcDestroyProgram(&prog)

	// const char* const* options: one C string each, pinned, as is the
	// array of pointers to them, which C reads during the call.
	var copts unsafe.Pointer
	if len(opts) > 0 {
		ptrs := make([]*byte, len(opts))
		for i, o := range opts {
			b := cString(o)
			pin.Pin(&b[0])
			ptrs[i] = &b[0]
		}
		pin.Pin(&ptrs[0])
		copts = unsafe.Pointer(&ptrs[0])
	}
	cr := nv.nvrtcCompileProgram(prog, int32(len(opts)), copts)
	runtime.KeepAlive(csrc)

	var n uintptr
	if r := nv.nvrtcGetProgramLogSize(prog, &n); r == 0 && n > 1 {
		b := make([]byte, n)
		if nv.nvrtcGetProgramLog(prog, &b[0]) == 0 {
			log = strings.TrimRight(goString(&b[0]), "\n")
		}
	}
	if cr != 0 {
		return nil, log, nvrtcError("nvrtcCompileProgram", cr)
	}
	if r := nv.nvrtcGetCUBINSize(prog, &n); r != 0 {
		return nil, log, nvrtcError("nvrtcGetCUBINSize", r)
	}
	if n == 0 {
		return nil, log, fmt.Errorf("nvrtcGetCUBINSize: no CUBIN; was the architecture a virtual one (compute_XX)? options %q", opts)
	}
	cubin = make([]byte, n)
	if r := nv.nvrtcGetCUBIN(prog, &cubin[0]); r != 0 {
		return nil, log, nvrtcError("nvrtcGetCUBIN", r)
	}
	return cubin, log, nil
}
