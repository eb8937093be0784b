package gemm

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/multiword"
)

// kernelOptionsEnv makes TestKernelOptions print the NVRTC options of one
// kernel file's configurations (fused or wgmma), for scripts/fused-ptxas.sh
// and scripts/wgmma-ptxas.sh: the options exist once, here in Go, and the
// GPU machine needs only the compiled test binary, no Go toolchain.
const kernelOptionsEnv = "MWMM_KERNEL_OPTIONS"

// A kernelCase is a configuration the ptxas scripts compile: a plan spec
// on a kernel choice, with each pair of layouts listed.
type kernelCase struct {
	spec    string
	kernel  FusedKernel
	update  bool
	layouts [][2]Layout // A's, B's
}

var (
	oneLayout  = [][2]Layout{{RowMajor, RowMajor}}
	allLayouts = [][2]Layout{{RowMajor, RowMajor}, {RowMajor, ColMajor}, {ColMajor, RowMajor}, {ColMajor, ColMajor}}
	defaults   = []string{"double-fp16-fabsum", "triple-bf16-fabsum", "3xtf32-fabsum"}
)

// kernelCases returns the configurations of one kernel file: the
// defaults first, then other words, sums and groups. Presplit words take
// one pair of layouts (the GEMM kernel reads words, whatever the layouts).
func kernelCases(file string) []kernelCase {
	var cs []kernelCase
	add := func(k FusedKernel, update bool, ls [][2]Layout, specs ...string) {
		for _, s := range specs {
			cs = append(cs, kernelCase{s, k, update, ls})
		}
	}
	switch file {
	case "fused":
		add(KernelMMA, false, allLayouts, defaults...)
		add(KernelMMA, false, allLayouts, "fp16:sum=pair,b=32", "double-fp16:sum=pair,b=32", "double-fp16:sum=v2,b=32",
			"double-fp16:sum=v1,b=32", "triple-bf16:sum=pair,b=32", "triple-bf16:sum=v2,b=32,products=all",
			"double-tf32:sum=pair,b=32", "tf32:sum=v2,b=32")
	case "wgmma":
		add(KernelWGMMA, false, oneLayout, defaults...)
		add(KernelWGMMA, true, oneLayout, "double-fp16-fabsum")
		add(KernelWGMMA, false, oneLayout, "double-fp16-fabsum:group=1", "triple-bf16-fabsum:group=1", "3xtf32-fabsum:group=1",
			"fp16:sum=v2,b=32", "double-fp16-fabsum:sum=pair", "double-fp16-fabsum:joint=steps")
		add(KernelWGMMASmem, false, allLayouts, defaults...)
		add(KernelWGMMASmem, false, allLayouts, "fp16:sum=v2,b=32", "double-fp16-fabsum:sum=v1,group=1",
			"double-fp16-fabsum:sum=pair", "tf32")
	}
	return cs
}

// A kernelConfig is one compilation: a file-name-safe name and the
// module's defines.
type kernelConfig struct {
	name string
	defs []define
}

// configs builds c's configurations through planFused, as the engine does
// on an sm_90 device.
func (c kernelCase) configs(t *testing.T) []kernelConfig {
	t.Helper()
	p, err := multiword.Lookup(c.spec)
	if err != nil {
		t.Fatalf("%s: %v", c.spec, err)
	}
	hopper := func(p multiword.Plan) error { return wgmmaPlan(&p) }
	var out []kernelConfig
	for _, l := range c.layouts {
		cfg, err := planFused(&p, c.kernel, l[0], l[1], c.update, hopper)
		if err != nil {
			t.Fatalf("%s on %s: %v", c.spec, c.kernel, err)
		}
		name := fmt.Sprintf("%s-%s-ak%d-bkm%d", c.kernel, strings.NewReplacer(":", "+", ",", "+").Replace(c.spec),
			b2i32(l[0] == RowMajor), b2i32(l[1] == ColMajor))
		if c.update {
			name += "-update"
		}
		defs := cfg.mma.defines()
		if cfg.wg {
			defs = cfg.wgmma.defines()
		}
		out = append(out, kernelConfig{name, defs})
	}
	return out
}

// TestKernelOptions builds the ptxas scripts' configurations and checks
// their defines against the kernel files; with MWMM_KERNEL_OPTIONS=fused
// or wgmma it prints that file's as lines of "NAME OPTION ...".
func TestKernelOptions(t *testing.T) {
	only := os.Getenv(kernelOptionsEnv)
	if only != "" && only != "fused" && only != "wgmma" {
		t.Fatalf("%s=%q: want fused or wgmma", kernelOptionsEnv, only)
	}
	safe := regexp.MustCompile(`^[A-Za-z0-9+=._-]+$`)
	for _, file := range []string{"fused", "wgmma"} {
		seen := map[string]bool{}
		for _, c := range kernelCases(file) {
			for _, kc := range c.configs(t) {
				if !safe.MatchString(kc.name) || seen[kc.name] {
					t.Errorf("configuration name %q is not file-name safe or not unique", kc.name)
				}
				seen[kc.name] = true
				checkDefines(t, file, kc.name, kc.defs)
				if file == only {
					fmt.Println(kc.name, strings.Join(moduleOptions(kc.defs), " "))
				}
			}
		}
	}
}
