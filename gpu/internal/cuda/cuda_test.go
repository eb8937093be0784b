package cuda

import (
	"errors"
	"strings"
	"testing"
	"unsafe"
)

func TestErrorText(t *testing.T) {
	for _, tt := range []struct {
		err  Error
		want string
	}{
		{Error{Call: "cuMemAlloc_v2", Code: 2, Name: "CUDA_ERROR_OUT_OF_MEMORY", Message: "out of memory"},
			"cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory"},
		// NVRTC's only string is the name: not repeated.
		{Error{Call: "nvrtcCompileProgram", Code: 6, Name: "NVRTC_ERROR_COMPILATION", Message: "NVRTC_ERROR_COMPILATION"},
			"nvrtcCompileProgram: NVRTC_ERROR_COMPILATION (6)"},
		{Error{Call: "cublasLtMatmul", Code: 15, Name: "CUBLAS_STATUS_NOT_SUPPORTED"},
			"cublasLtMatmul: CUBLAS_STATUS_NOT_SUPPORTED (15)"},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%#v.Error() = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestLoadErrorText(t *testing.T) {
	e := &LoadError{Err: ErrNoDriver, File: DriverFile, Hint: "is this a machine with an NVIDIA GPU and driver?",
		Dirs: []string{"/usr/local/cuda/lib64", "/usr/lib/x86_64-linux-gnu"}}
	want := "no CUDA driver found (libcuda.so.1): is this a machine with an NVIDIA GPU and driver? " +
		"(searched the dynamic loader's path and /usr/local/cuda/lib64, /usr/lib/x86_64-linux-gnu)"
	if got := e.Error(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if !errors.Is(e, ErrNoDriver) {
		t.Error("errors.Is(LoadError, ErrNoDriver) is false")
	}
	e.Cause = errors.New("wrong ELF class")
	if got := e.Error(); !strings.Contains(got, "libcuda.so.1 exists but did not load: wrong ELF class") {
		t.Errorf("with a cause: %q", got)
	}
}

// The Go mirrors of C structs must have C's layout (cublasLt.h).
func TestStructLayout(t *testing.T) {
	var r HeuristicResult
	for _, c := range []struct {
		what      string
		got, want uintptr
	}{
		{"sizeof(cublasLtMatmulAlgo_t)", unsafe.Sizeof(r.Algo), 64},
		{"sizeof(cublasLtMatmulHeuristicResult_t)", unsafe.Sizeof(r), 96},
		{"offsetof(workspaceSize)", unsafe.Offsetof(r.WorkspaceSize), 64},
		{"offsetof(state)", unsafe.Offsetof(r.State), 72},
		{"offsetof(wavesCount)", unsafe.Offsetof(r.WavesCount), 76},
		{"offsetof(reserved)", unsafe.Offsetof(r.Reserved), 80},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.what, c.got, c.want)
		}
	}
}

func TestVersionString(t *testing.T) {
	for v, want := range map[int]string{13000: "13.0", 12080: "12.8", 13010: "13.1"} {
		if got := VersionString(v); got != want {
			t.Errorf("VersionString(%d) = %q, want %q", v, got, want)
		}
	}
}

func TestSearchDirs(t *testing.T) {
	t.Setenv("CUDA_PATH", "/opt/cuda-x")
	t.Setenv("LD_LIBRARY_PATH", "/a/lib::/usr/local/cuda/lib64/")
	dirs := searchDirs()
	if dirs[0] != "/opt/cuda-x/lib64" {
		t.Errorf("searchDirs()[0] = %q, want $CUDA_PATH/lib64 first", dirs[0])
	}
	seen := map[string]int{}
	for _, d := range dirs {
		seen[d]++
		if strings.Contains(d, "stubs") {
			t.Errorf("searchDirs has the stubs folder %q", d)
		}
	}
	for _, d := range []string{"/a/lib", "/usr/local/cuda/lib64", "/usr/local/nvidia/lib64"} {
		if seen[d] != 1 {
			t.Errorf("searchDirs has %q %d times, want once: %q", d, seen[d], dirs)
		}
	}
}

func TestGoString(t *testing.T) {
	b := []byte("CUDA_ERROR_INVALID_VALUE\x00junk")
	if got := goString(&b[0]); got != "CUDA_ERROR_INVALID_VALUE" {
		t.Errorf("goString = %q", got)
	}
	if got := goString(nil); got != "" {
		t.Errorf("goString(nil) = %q", got)
	}
}
