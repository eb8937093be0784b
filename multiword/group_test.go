package multiword_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/multiword"
)

// Grouped FABsum-v2 (Plan.Group) against an oracle built from its
// definition: each block's result computed alone (a one-block plan returns
// it unchanged), the results of each group of g added in float32 with
// round to nearest, the group sums in float64 (pair: into a float32 pair
// by Knuth's TwoSum, C = hi + lo), C rounded to float32 once. k leaves a
// shorter last block and a shorter last group.
func TestGroupedV2Oracle(t *testing.T) {
	h100, err := multiword.Open("model:h100")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(61, 62))
	for _, tc := range []struct {
		spec string
		b, g int
	}{
		{"double-fp16:joint=on,sum=v2,b=32", 32, 3},
		{"triple-bf16:joint=on,sum=v2,b=32", 32, 8},
		{"fp16:sum=v2,b=16", 16, 4},
		{"double-fp16:joint=products,sum=pair,b=32", 32, 16},
		{"3xtf32:joint=on,sum=pair,b=32", 32, 3},
		{"bf16:sum=pair,b=16", 16, 5},
	} {
		pair := strings.Contains(tc.spec, "pair")
		p := lookupAll(t, fmt.Sprintf("%s,group=%d", tc.spec, tc.g))[0]
		block := lookupAll(t, tc.spec)[0]
		block.Block = 0 // one block: the block FMA's result, unchanged
		for _, k := range []int{tc.b * 10, tc.b*10 + 7, 5} {
			for _, d := range distributions[:3] {
				a, b := d.matrix(rng, k), d.matrix(rng, k)
				got := []float64{0}
				if err := h100.Multiply(p, 1, 1, k, a, b, got); err != nil {
					t.Fatal(err)
				}
				var wide float64
				var mid, hi, lo float32
				for l0, i := 0, 0; l0 < k; l0, i = l0+tc.b, i+1 {
					kb := min(tc.b, k-l0)
					x := []float64{0}
					if err := h100.Multiply(block, 1, 1, kb, a[l0:l0+kb], b[l0:l0+kb], x); err != nil {
						t.Fatal(err)
					}
					mid += float32(x[0])
					if i%tc.g == tc.g-1 || l0+kb == k {
						if pair {
							s := hi + mid
							bb := s - hi
							e := (hi - (s - bb)) + (mid - bb)
							hi, lo = s, lo+e
						} else {
							wide += float64(mid)
						}
						mid = 0
					}
				}
				if pair {
					wide = float64(hi + lo)
				}
				if want := float64(float32(wide)); math.Float64bits(got[0]) != math.Float64bits(want) {
					t.Errorf("%s k=%d %s: C = %x, oracle %x", tc.spec, k, d.name, math.Float32bits(float32(got[0])), math.Float32bits(float32(want)))
				}
			}
		}
	}
}

// Group 1 is v2; group is a v2 option for one result per block; the
// option parses and shows.
func TestGroupCheck(t *testing.T) {
	rng := rand.New(rand.NewPCG(63, 64))
	const m, n, k = 3, 4, 200
	a, b := distributions[1].matrix(rng, m*k), distributions[1].matrix(rng, k*n)
	c1, c0 := make([]float64, m*n), make([]float64, m*n)
	if err := (multiword.Reference{}).Multiply(lookupAll(t, "double-fp16-fabsum:group=1")[0], m, n, k, a, b, c1); err != nil {
		t.Fatal(err)
	}
	if err := (multiword.Reference{}).Multiply(lookupAll(t, "double-fp16-fabsum:group=0")[0], m, n, k, a, b, c0); err != nil {
		t.Fatal(err)
	}
	for i := range c0 {
		if c0[i] != c1[i] {
			t.Fatalf("group=1: C[%d] = %g, v2 gives %g", i, c1[i], c0[i])
		}
	}
	if p := lookupAll(t, "3xtf32-fabsum:group=8")[0]; p.Group != 8 || !strings.HasSuffix(p.String(), "FABsum-v2 b=32 group=8 joint by products") {
		t.Errorf("group=8: %v", p)
	}
	// The defaults' group goes with their v2 joint sum.
	for spec, want := range map[string]int{"double-fp16-fabsum": 16, "triple-bf16-fabsum": 16, "3xtf32-fabsum": 8,
		"double-fp16-fabsum:sum=v1": 0, "double-fp16-fabsum:joint=off": 0, "triple-bf16-fabsum:b=64": 16} {
		if p := lookupAll(t, spec)[0]; p.Group != want {
			t.Errorf("%s: group %d, want %d", spec, p.Group, want)
		}
	}
	for _, spec := range []string{"double-fp16-fabsum:sum=v1,group=4",
		"double-fp16-fabsum:joint=off,group=4", "double-fp16-fabsum:group=-2", "double-fp16-fabsum:group=x"} {
		if _, err := multiword.Lookup(spec); err == nil {
			t.Errorf("%s accepted", spec)
		} else if !strings.Contains(err.Error(), "group") {
			t.Errorf("%s: error %q does not name the group", spec, err)
		}
	}
}
