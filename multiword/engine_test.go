package multiword_test

import (
	"testing"

	"github.com/mwmm/mwmm/multiword"
	"github.com/mwmm/mwmm/multiword/multiwordtest"
)

func TestConformanceReference(t *testing.T) {
	multiwordtest.Run(t, multiword.Reference{}, multiwordtest.Options{
		Plans: lookupAll(t, "bf16", "triple-bf16:sum=v1,b=4", "double-tf32", "double-e4m3", "triple-e5m2:sum=v2,b=8",
			"double-fp16:sum=pair,b=8,joint=on", "triple-bf16:sum=v1,b=20,joint=on,products=all"),
	})
}

func TestConformanceModels(t *testing.T) {
	for _, tc := range []struct {
		unit  string
		plans []string
	}{
		{"v100", nil},
		{"a100", []string{"double-bf16", "triple-bf16:sum=v2,b=8", "double-tf32", "double-fp16:sum=v1,b=16,joint=on", "double-tf32:sum=pair,b=8,joint=on"}},
		{"ieee", []string{"double-e4m3", "triple-bf16"}},
		{"exact", []string{"double-e5m2"}},
	} {
		t.Run(tc.unit, func(t *testing.T) {
			e, err := multiword.Open("model:" + tc.unit)
			if err != nil {
				t.Fatal(err)
			}
			multiwordtest.Run(t, e, multiwordtest.Options{Plans: lookupAll(t, tc.plans...), MaxSize: 8})
		})
	}
}

func lookupAll(t *testing.T, specs ...string) []multiword.Plan {
	t.Helper()
	var ps []multiword.Plan
	for _, s := range specs {
		p, err := multiword.Lookup(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		ps = append(ps, p)
	}
	return ps
}
