package gemm

// Tests that need no GPU.

import (
	"strings"
	"testing"

	"github.com/mwmm/mwmm/multiword"
)

func TestParseMethod(t *testing.T) {
	for _, c := range []struct {
		spec, variant string
		kernel        FusedKernel
	}{
		{"double-fp16-fabsum", "double-fp16-fabsum", KernelAuto},
		{"double-fp16-fabsum@mma", "double-fp16-fabsum", KernelMMA},
		{"fp16:sum=v2,b=64@wgmma", "fp16:sum=v2,b=64", KernelWGMMA},
		{"3xtf32-fabsum@wgmma-smem", "3xtf32-fabsum", KernelWGMMASmem},
		{"fp16@auto", "fp16", KernelAuto},
	} {
		m, err := ParseMethod(c.spec)
		if err != nil || m.Name != c.spec || m.Variant != c.variant || m.Kernel != c.kernel {
			t.Errorf("ParseMethod(%q) = %+v, %v; want variant %q on %s", c.spec, m, err, c.variant, c.kernel)
		}
	}
	if _, err := ParseMethod("fp16@tensor"); err == nil || !strings.Contains(err.Error(), "unknown kernel") {
		t.Errorf("ParseMethod(fp16@tensor): %v, want an unknown-kernel error", err)
	}
}

// The kernels run a joint plan by products on blocks inside one 32-element
// stage (the wgmma kernel: one pipeline item; larger blocks by products
// measured less accurate, docs/multiword.md) and say so for other blocks;
// by steps, any multiple of the k-step (wgmma: of 32).
func TestJointOrderSupport(t *testing.T) {
	const stage = "joint=products on blocks within one 32-element stage"
	for _, tc := range []struct {
		spec             string
		mmaErr, wgmmaErr string // "": runs
	}{
		{"double-fp16-fabsum", "", ""},
		{"3xtf32-fabsum:b=16", "", "multiple of 32"},
		{"3xtf32-fabsum:b=8,joint=products", "", "multiple of 32"},
		{"double-fp16-fabsum:b=64,joint=products", stage, stage},
		{"triple-bf16-fabsum:b=48,joint=products", stage, stage},
		{"double-fp16-fabsum:b=64", "", ""},         // by steps
		{"fp16:sum=v2,b=64,joint=products", "", ""}, // one word: one order
		{"double-fp16:sum=v2,b=0,joint=products", stage, stage},
	} {
		p, err := multiword.Lookup(tc.spec)
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		for _, k := range []struct {
			name string
			err  error
			want string
		}{{"mma.sync", FusedSupports(&p), tc.mmaErr}, {"wgmma", wgmmaPlan(&p), tc.wgmmaErr}} {
			if (k.err == nil) != (k.want == "") || k.err != nil && !strings.Contains(k.err.Error(), k.want) {
				t.Errorf("%s on the %s kernel: %v, want an error saying %q (none if empty)", tc.spec, k.name, k.err, k.want)
			}
		}
	}
}
