package dense

// Tests that need no GPU.

import (
	"testing"
)

// The wider block is for the fused kernel's forms with pivoting at large
// n only, as measured (docs/perf/solve-h100.md, "Block size").
func TestDefaultNB(t *testing.T) {
	for _, c := range []struct {
		form   string
		n      int
		pivots bool
		want   int
	}{
		{"double-fp16-fabsum", 32768, true, 1536},
		{"double-fp16-fabsum", 40000, true, 1536},
		{"double-fp16-fabsum", 32768, false, 1024},
		{"double-fp16-fabsum", 16384, true, 1024},
		{"tc32-fp16", 32768, true, 1024},
		{"tc32-bf16", 32768, false, 1024},
		{"ozaki-int8x5", 8192, true, 2048},
		{"ozaki-int8x4", 32768, false, 2048},
	} {
		f, err := ParseLUForm(c.form)
		if err != nil {
			t.Fatal(err)
		}
		if got := DefaultNB(f, c.n, c.pivots); got != c.want {
			t.Errorf("%s, n = %d, pivoting %v: block size %d, want %d", c.form, c.n, c.pivots, got, c.want)
		}
	}
}

// PanelsAuto takes the recursive panel from RecursivePanelsFrom on, for
// the fp32 working forms and panels the leaves can hold; the kinds are
// parsed by name.
func TestPanelsChoice(t *testing.T) {
	multiword, _ := ParseLUForm("double-fp16-fabsum")
	ozaki, _ := ParseLUForm("ozaki-int8x5")
	for _, c := range []struct {
		form   LUForm
		panels Panels
		n, sms int
		want   bool
	}{
		{multiword, PanelsAuto, 8192, 132, false},
		{multiword, PanelsAuto, RecursivePanelsFrom - 1, 132, false},
		{multiword, PanelsAuto, RecursivePanelsFrom, 132, true},
		{multiword, PanelsAuto, 32768, 132, true},
		{multiword, PanelsAuto, 132*1024 + 1, 132, false}, // taller than the leaves hold
		{multiword, PanelsAuto, 32768, 16, false},         // 16 blocks of 1024 rows
		{multiword, PanelsGetrf, 32768, 132, false},
		{multiword, PanelsRecursive, 300, 132, true},
		{ozaki, PanelsAuto, 32768, 132, false}, // fp64 panels: dgetrf
	} {
		f := c.form
		f.Panels = c.panels
		if got := f.recursivePanels(c.n, c.sms); got != c.want {
			t.Errorf("%s, %s, n = %d, %d SMs: recursive %t, want %t", f.Name, PanelKinds[c.panels], c.n, c.sms, got, c.want)
		}
	}
	for i, name := range PanelKinds {
		if p, err := ParsePanels(name); err != nil || p != Panels(i) {
			t.Errorf("ParsePanels(%q) = %d, %v", name, p, err)
		}
	}
	if _, err := ParsePanels("lapack"); err == nil {
		t.Error("ParsePanels(lapack): no error")
	}
}
