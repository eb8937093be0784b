package mma

import (
	"math"
	"testing"
)

// Where the grid hangs, worked out by hand. F = 23 + extra bits (23 on the
// V100, 24 on T4 and A100) and g = 2^-F. Take the products 1.5·1.5 = 2.25
// and -1.5·1 = -1.5, so that the exact sum is 0.75 + n·g:
//
//   - anchored at the largest exponent sum (anchor=exp): e_a+e_b = 0+0 = 0
//     for 1.5·1.5, the grid unit is 2^(0-F) = g, every term is on it and the
//     sum 0.75 + n·g is exact in fp32 (its ulp at 0.75 is 2^-24);
//   - anchored at the largest product's leading bit (anchor=lead): 2.25 has
//     its leading bit at 2^1, the unit is 2^(1-F) = 2g, each g is truncated
//     to 0 and the result is 0.75.
//
// The measurements of Khattak and Mikaitis (docs/hardware/v100-t4-a100.md)
// put V100 and A100 on the first line; the seed paper's tests give the
// same results under both anchors.
func TestAnchorExponentSum(t *testing.T) {
	block := func(f, n int) (a, b []float64) {
		a, b = []float64{1.5, -1.5}, []float64{1.5, 1}
		for range n {
			// g = 2^-12 · 2^(12-F), both fp16 normals.
			a, b = append(a, 0x1p-12), append(b, math.Ldexp(1, 12-f))
		}
		return a, b
	}
	cases := []struct {
		unit     string
		f, n     int
		exp, lea float64 // anchor=exp and anchor=lead
	}{
		{"v100", 23, 2, 0.75 + 0x1p-22, 0.75}, // four products
		{"t4", 24, 2, 0.75 + 0x1p-23, 0.75},   // four products
		{"a100", 24, 2, 0.75 + 0x1p-23, 0.75}, // four of a block of eight
		{"a100", 24, 6, 0.75 + 0x3p-23, 0.75}, // eight products
	}
	for _, c := range cases {
		a, b := block(c.f, c.n)
		for _, anchor := range []string{"", ":anchor=lead"} {
			u, err := Lookup(c.unit+anchor, "fp16", "fp32")
			if err != nil {
				t.Fatal(err)
			}
			want := c.exp
			if anchor != "" {
				want = c.lea
			}
			if got := u.Dot(a, b, 0); got != want {
				t.Errorf("%s: 2.25 - 1.5 + %d·2^-%d: got %x, want %x", u.Name(), c.n, c.f, got, want)
			}
			// Through an fp16 output both round to 0.75: the anchors
			// differ in fp32 only.
			h, _ := Lookup(c.unit+anchor, "fp16", "fp16")
			if got := h.Dot(a, b, 0); got != 0.75 {
				t.Errorf("%s: got %x, want 0.75", h.Name(), got)
			}
		}
	}
	// Cancellation: 1.5·1.5 - 1.5·1.5 + g is g under the exponent-sum anchor
	// and +0 under the leading-bit one.
	for _, c := range []struct {
		unit string
		f    int
	}{{"v100", 23}, {"t4", 24}, {"a100", 24}} {
		a, b := []float64{1.5, -1.5, 0x1p-12, 0}, []float64{1.5, 1.5, math.Ldexp(1, 12-c.f), 0}
		u, _ := Lookup(c.unit, "fp16", "fp32")
		lead, _ := Lookup(c.unit+":anchor=lead", "fp16", "fp32")
		if got, want := u.Dot(a, b, 0), math.Ldexp(1, -c.f); got != want {
			t.Errorf("%s: 2.25 - 2.25 + 2^-%d: got %x, want %x", u.Name(), c.f, got, want)
		}
		if got := lead.Dot(a, b, 0); got != 0 || math.Signbit(got) {
			t.Errorf("%s: 2.25 - 2.25 + 2^-%d: got %x, want +0", lead.Name(), c.f, got)
		}
	}
}

// The T4's non-monotonicity with its extra bit (issue 27): c = 1 - 2^-24
// and the products 3·2^-25, 2^-25, 2^-25, 2^-25 sum to 1 + 2^-23 exactly
// on a grid of 2^-25 (the exponent of 1 - 2^-24 is -1, F = 24); with
// c = 1 the grid is 2^-24, 3·2^-25 keeps 2^-24, the others vanish, and
// 1 + 2^-24 truncates to 1. Both anchors agree: every exponent sum is
// below c's.
func TestT4NonMonotonic(t *testing.T) {
	a := []float64{0x3p-13, 0x1p-12, 0x1p-12, 0x1p-12}
	b := []float64{0x1p-12, 0x1p-13, 0x1p-13, 0x1p-13}
	for _, spec := range []string{"t4", "t4:anchor=lead", "a100"} {
		u, _ := Lookup(spec, "fp16", "fp32")
		lo, hi := u.Dot(a, b, 1-0x1p-24), u.Dot(a, b, 1)
		if lo != 1+0x1p-23 || hi != 1 {
			t.Errorf("%s: c = 1-2^-24 gives %x, c = 1 gives %x; want 1+2^-23 and 1", u.Name(), lo, hi)
		}
	}
}
