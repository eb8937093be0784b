package gpu

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRuntimeImports keeps the runtime free of numerical packages and
// plotting: a program that only asks Available links none of them.
func TestRuntimeImports(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command here")
	}
	out, err := exec.Command(goTool, "list", "-deps", "github.com/mwmm/mwmm/gpu").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if banned(dep) {
			t.Errorf("package gpu depends on %s", dep)
		}
	}
}

// banned says whether the runtime may not depend on the package: plotting,
// the numerical packages, or a GPU package above it.
func banned(dep string) bool {
	for _, p := range []string{"gonum.org/v1/plot", "github.com/mwmm/mwmm/experiment", "github.com/mwmm/mwmm/lu",
		"github.com/mwmm/mwmm/solve", "github.com/mwmm/mwmm/multiword", "github.com/mwmm/mwmm/gpu/gemm", "github.com/mwmm/mwmm/gpu/dense"} {
		if dep == p || strings.HasPrefix(dep, p+"/") {
			return true
		}
	}
	return false
}
