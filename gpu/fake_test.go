package gpu

import (
	_ "embed"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The fake libraries' source, embedded so that a test binary run from any
// folder can build them.
//
//go:embed testdata/fakecuda.c
var fakeSource []byte

// fakeChild is set in the environment of the test processes that run
// against the fake libraries.
const fakeChild = "MWMM_FAKE_CUDA_CHILD"

// buildFake compiles testdata/fakecuda.c into the four fake libraries in a
// temporary folder; it skips the test without a C compiler.
func buildFake(t *testing.T) string {
	t.Helper()
	if os.Getenv(fakeChild) != "" {
		t.Skip("in a child process")
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc) to build the fake CUDA libraries")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "fakecuda.c")
	if err := os.WriteFile(src, fakeSource, 0o644); err != nil {
		t.Fatal(err)
	}
	for def, lib := range map[string]string{
		"FAKE_DRIVER":   "libcuda.so.1",
		"FAKE_NVRTC":    "libnvrtc.so.13",
		"FAKE_BUILTINS": "libnvrtc-builtins.so.13.0",
		"FAKE_CUBLASLT": "libcublasLt.so.13",
	} {
		cmd := exec.Command(cc, "-shared", "-fPIC", "-O1", "-Wall", "-D"+def, "-Wl,-soname,"+lib,
			"-o", filepath.Join(dir, lib), src, "-ldl")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", lib, err, out)
		}
	}
	return dir
}

// child runs this test binary on the tests matching run, with the fake
// libraries and env, and returns its output.
func child(t *testing.T, dir, run string, env ...string) (string, error) {
	cmd := exec.Command(os.Args[0], "-test.run="+run, "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "MWMM_CUDA_LIBS="+dir, fakeChild+"=1",
		"XDG_CACHE_HOME="+t.TempDir(), "HOME="+t.TempDir())
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The GPU tests, run against fake CUDA libraries that check what the real
// ones would (a context current on the calling thread, pointers into live
// allocations, every argument of the 16 of cublasLtMatmul, struct layouts)
// and compute in double on the CPU. This checks the Go side here; the real
// libraries are checked on a GPU.
func TestFakeCUDA(t *testing.T) {
	dir := buildFake(t)
	out, err := child(t, dir, "^TestGPU")
	if err != nil {
		t.Fatalf("the GPU tests against the fake CUDA: %v\n%s", err, out)
	}
	passed := regexp.MustCompile(`(?m)^--- PASS: (TestGPU\w+)`).FindAllStringSubmatch(out, -1)
	if strings.Contains(out, "--- SKIP") || len(passed) < 10 {
		t.Errorf("want every GPU test to run and pass against the fake, got %d passed:\n%s", len(passed), out)
	}
	if testing.Verbose() {
		t.Logf("%s", out)
	}
}

// A driver older than CUDA 13.0 is refused with both versions named.
func TestFakeDriverTooOld(t *testing.T) {
	if os.Getenv(fakeChild) != "" {
		err := Available()
		if !errors.Is(err, ErrDriverTooOld) || !strings.Contains(err.Error(), "CUDA 12.8") || !strings.Contains(err.Error(), "13.0") {
			t.Fatalf("Available with a CUDA 12.8 driver: %v, want ErrDriverTooOld naming 12.8 and 13.0", err)
		}
		t.Logf("%v", err)
		return
	}
	dir := buildFake(t)
	if out, err := child(t, dir, "^TestFakeDriverTooOld$", "FAKE_CUDA_DRIVER_VERSION=12080"); err != nil || !strings.Contains(out, "--- PASS") {
		t.Errorf("%v\n%s", err, out)
	}
}
