package mma

import (
	"testing"

	"github.com/mwmm/mwmm/format"
)

// The b200 preset shares the h100 preset's parameters for every pair but
// fp8: Khattak and Mikaitis's models of the two GPUs differ only there.
func TestB200SharesHopper(t *testing.T) {
	b200, err := FindPreset("b200")
	if err != nil {
		t.Fatal(err)
	}
	h100, _ := FindPreset("h100")
	for _, pair := range b200.Pairs {
		in, out := pair[0], pair[1]
		pb, err := b200.Params(in, out)
		if err != nil {
			t.Fatal(err)
		}
		ph, err := h100.Params(in, out)
		if err != nil {
			t.Fatalf("h100 lacks %v→%v: %v", in, out, err)
		}
		pb.Name, ph.Name = "", ""
		fp8 := in == format.E4M3 || in == format.E5M2
		if same := pb == ph; same == fp8 {
			t.Errorf("%v→%v: b200 %+v, h100 %+v; want equal parameters except for fp8", in, out, pb, ph)
		}
	}
	if _, err := b200.Params(format.E4M3, format.Binary16); err == nil {
		t.Error("b200 has an e4m3→fp16 unit, which its source does not model")
	}
}

// fp8 into fp32, worked out by hand: 1·1 + 2^-9·2^-9 = 1 + 2^-18. The
// B200's sum keeps 23 + 2 bits below the exponent sum 0, so 2^-18 stays
// and fp32 holds 1 + 2^-18; Hopper's wgmma keeps 13 (a 14-bit sum) and
// drops it: 1.
func TestB200FP8Accumulator(t *testing.T) {
	a, b := []float64{1, 0x1p-9}, []float64{1, 0x1p-9}
	for _, c := range []struct {
		unit string
		want float64
	}{{"b200", 1 + 0x1p-18}, {"h100", 1}} {
		m, err := Lookup(c.unit, "e4m3", "fp32")
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Dot(a, b, 0); got != c.want {
			t.Errorf("%s: 1·1 + 2^-9·2^-9 = %v, want %v", c.unit, got, c.want)
		}
	}
	// Alignment truncates: with c = −2^-26 the exact sum 1 − 2^-26 would
	// round toward zero to 1 − 2^-24, but c lies below the grid of 2^-25
	// and is dropped on alignment, leaving 1.
	m, _ := Lookup("b200", "e4m3", "fp32")
	if got := m.Dot([]float64{1}, []float64{1}, -0x1p-26); got != 1 {
		t.Errorf("1·1 − 2^-26 = %v, want 1", got)
	}
}
