package main

import (
	"testing"

	"github.com/mwmm/mwmm/gpu/dist"
)

// --factor on several GPUs: unset is the auto storage (fp16 first, the
// default plan after it), fp16-store fixes fp16, a fused plan fixes fp32
// with that plan, and a form the fused kernels do not run is refused.
func TestGPUsStorage(t *testing.T) {
	for _, c := range []struct {
		factor string
		set    bool
		want   dist.Storage
		plan   string
	}{
		{"", false, dist.StorageAuto, "double-fp16-fabsum"},
		{"fp16-store", true, dist.StorageHalf, "double-fp16-fabsum"},
		{"double-fp16-fabsum", true, dist.StorageSingle, "double-fp16-fabsum"},
	} {
		got, plan, err := gpusStorage(c.factor, c.set)
		if err != nil || got != c.want || plan.Name != c.plan {
			t.Errorf("--factor %q (set %v): %v, plan %q, %v; want %v, %q", c.factor, c.set, got, plan.Name, err, c.want, c.plan)
		}
	}
	if _, _, err := gpusStorage("fp64", true); err == nil {
		t.Error("--factor fp64 on several GPUs was taken")
	}
}
