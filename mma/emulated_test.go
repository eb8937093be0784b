package mma

import (
	"math"
	"testing"
)

// Hand-derived cases of Hopper's emulated fp8 mma.sync (see fp8Sync).
func TestFP8SyncEmulation(t *testing.T) {
	u, err := Open("h100-mma.sync", "e4m3", "fp32")
	if err != nil {
		t.Fatal(err)
	}
	fused, err := Lookup("h100", "e4m3", "fp32")
	if err != nil {
		t.Fatal(err)
	}
	tiny := math.Ldexp(1, -5) // tiny·tiny = 2^-10 = 2^-26 of 256·256, below the grid
	one := func(k int) ([]float64, []float64) { return make([]float64, k), make([]float64, k) }

	// c is added after the products, rounding to nearest: 1 + (3/4) ulp
	// gives 1 + ulp, where a fused round-toward-zero sum gives 1.
	a, b := one(1)
	a[0], b[0] = 1, 1
	c := 0.75 * math.Ldexp(1, -23)
	d := []float64{0}
	if err := u.Dots(1, a, b, []float64{c}, d); err != nil {
		t.Fatal(err)
	}
	if want := 1 + math.Ldexp(1, -23); d[0] != want {
		t.Errorf("1·1 + 0.75 ulp = %v, want %v (c added to nearest)", d[0], want)
	}
	if got := fused.Dot(a, b, c); got != 1 {
		t.Errorf("the fused h100 model gives %v for 1·1 + 0.75 ulp, want 1", got)
	}

	// The first HMMA sums the positions j mod 4 < 2: eight 2^-10 there make
	// 2^-7, an ulp of 2^16, which survives next to 256·256 at j = 2 in the
	// second HMMA; one fused sum drops each 2^-10 below its grid.
	a, b = one(16)
	for _, j := range []int{0, 1, 4, 5, 8, 9, 12, 13} {
		a[j], b[j] = tiny, tiny
	}
	a[2], b[2] = 256, 256
	if err := u.Dots(16, a, b, []float64{0}, d); err != nil {
		t.Fatal(err)
	}
	if want := 65536 + math.Ldexp(1, -7); d[0] != want {
		t.Errorf("two-step sum = %v, want %v", d[0], want)
	}
	if got := fused.Dot(a, b, 0); got != 65536 {
		t.Errorf("the fused h100 model gives %v, want 65536 (the tiny products fall below its grid)", got)
	}
}

func TestSyncPresetsOtherFormats(t *testing.T) {
	u, err := Open("H200-mma.sync", "bf16", "fp32")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := u.(*Model); !ok || u.BlockK() != 16 {
		t.Errorf("h200-mma.sync bf16 = %T k=%d, want the h200 model", u, u.BlockK())
	}
	if _, err := Open("h100-mma.sync", "e4m3", "bf16"); err == nil {
		t.Error("an fp8 unit with a bf16 output opened")
	}
}
