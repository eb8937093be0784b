package fp16

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestVerdict(t *testing.T) {
	const nb = 100
	ok := []float32{1, 40, 0.5, 60}
	if v := Verdict(2, ok, nb); v != nil {
		t.Errorf("within the limits: %v", v)
	}
	if v := Verdict(0, []float32{1e9, 1e9}, nb); v != nil {
		t.Errorf("A = 0: %v, want nil (the factors' check finds the singular matrix)", v)
	}
	for _, c := range []struct {
		steps  []float32
		column int
	}{
		{[]float32{MaxMultiplier + 1, 1, 0, 0}, 0},                             // a multiplier
		{[]float32{1, 1, 1, 2*MaxGrowth + 1}, nb},                              // growth of U (maxA = 2)
		{[]float32{1, 1, 1, 1, float32(math.NaN()), 1}, 2 * nb},                // a NaN
		{[]float32{1, 1, 1, 1, 1, float32(math.Inf(1))}, 2 * nb},               // an Inf
		{append(append([]float32{}, ok...), 1, 1, MaxMultiplier*2, 1), 3 * nb}, // later
	} {
		v := Verdict(2, c.steps, nb)
		if v == nil || v.Column != c.column || !errors.Is(v, ErrNeedsPivoting) {
			t.Errorf("%v: verdict %v, want a failure at column %d", c.steps, v, c.column)
		}
	}
}

func TestGrowthErrorNamesColumn(t *testing.T) {
	e := &GrowthError{Column: 1024, Multiplier: 3e4, Growth: 2}
	if msg := e.Error(); !strings.Contains(msg, "column 1025") || !strings.Contains(msg, "3e+04") {
		t.Errorf("message %q: want the 1-based column and the multiplier", msg)
	}
}

// The kernels that gpu/dense and gpu/dist launch by name are defined.
func TestKernelsDefined(t *testing.T) {
	code := string(Kernels().Code)
	for _, name := range []string{"row_amax", "pow2_scales", "col_amax", "scale_to_f16", "to_f32_f16", "from_f32_f16",
		"copy_f16", "amax_f16", "amax_tri_f32", "scale_vec", "eye_f32", "tri_inv_leaf", "tri_zero",
		"diag_check_f16", "transpose_f32", "tri_sweep_f16", "zero_u32"} {
		if !strings.Contains(code, " "+name+"(") && !strings.Contains(code, "("+name+",") { // AMAX(name, ...) defines one too
			t.Errorf("kernels/half.cu defines no %s", name)
		}
	}
}

// A TriSolver refuses, before it touches a device, blocks wider than its
// kernel's shared memory holds and empty shapes.
func TestTriSolverRefusesBadShapes(t *testing.T) {
	for _, f := range []TriFactors{{N: 100, NB: TriMaxNB + 1, P: 1, Q: 1}, {N: 0, NB: 64, P: 1, Q: 1},
		{N: 100, NB: 0, P: 1, Q: 1}, {N: 100, NB: 64, P: 0, Q: 1}} {
		if _, err := NewTriSolver(nil, f); err == nil {
			t.Errorf("%+v: no error", f)
		}
	}
}

// PairChunks covers the columns with chunks of one width, the last
// possibly narrower but not empty, at most 64 of them, and about enough
// for 8 blocks a multiprocessor where the columns allow it.
func TestPairChunks(t *testing.T) {
	for _, rows := range []int{0, 1, 255, 256, 1000, 8192, 32768, 65536, 100000} {
		for _, cols := range []int{0, 1, 7, 64, 65, 1000, 8192, 32768} {
			for _, sms := range []int{1, 132} {
				chunks, chunk := PairChunks(rows, cols, sms)
				c := max(cols, 1)
				if chunks < 1 || chunks > 64 || chunk < 1 || chunks*chunk < c || (chunks-1)*chunk >= c {
					t.Fatalf("rows %d, cols %d, sms %d: %d chunks of %d", rows, cols, sms, chunks, chunk)
				}
				rowBlocks := (max(rows, 1) + 255) / 256
				want := min((8*sms+rowBlocks-1)/rowBlocks, 64, c) // equal widths may round it down, not below half
				if 2*chunks < want {
					t.Errorf("rows %d, cols %d, sms %d: %d chunks of %d, want about %d", rows, cols, sms, chunks, chunk, want)
				}
			}
		}
	}
}
