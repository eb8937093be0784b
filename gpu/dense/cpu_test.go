package dense

// Tests that need no GPU.

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/pivot"
	"github.com/mwmm/mwmm/lu"
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

// ParseLUForm gives each name its kind of update, whose String is the
// name again.
func TestParseLUFormKinds(t *testing.T) {
	for _, c := range []struct {
		name    string
		want    Update
		working Precision
		blocked bool
		word    string
	}{
		{"fp64", Getrf{FP64}, FP64, false, ""},
		{"fp32", Getrf{FP32}, FP32, false, ""},
		{"tc32-fp16", TC32{gpu.F16}, FP32, true, "fp16"},
		{"tc32-bf16", TC32{gpu.BF16}, FP32, true, "bf16"},
		{"tc32-tf32", TC32{gpu.F32}, FP32, true, "TF32"},
		{"ozaki-int8x5", Ozaki{5}, FP64, true, ""},
		{"ozaki-int8x2", Ozaki{2}, FP64, true, ""},
		{"double-fp16-fabsum", nil, FP32, true, ""},
		{"triple-bf16-fabsum", nil, FP32, true, ""},
	} {
		f, err := ParseLUForm(c.name)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		u := f.Update
		if fu, ok := u.(Fused); ok {
			if c.want != nil || fu.Plan.Name != c.name {
				t.Errorf("%s: fused update with plan %q", c.name, fu.Plan.Name)
			}
		} else if u != c.want {
			t.Errorf("%s: update %#v, want %#v", c.name, u, c.want)
		}
		if f.Name != c.name || u.String() != c.name || u.Working() != c.working || u.Blocked() != c.blocked ||
			f.Blocked() != c.blocked || f.WordName() != c.word {
			t.Errorf("%s: name %q, String %q, working %v, blocked %t/%t, word %q", c.name, f.Name, u, u.Working(), u.Blocked(), f.Blocked(), f.WordName())
		}
	}
	for _, name := range []string{"", "tc32", "tc32-fp8", "ozaki-int8x1", "ozaki-int8x8", "nonsense"} {
		if f, err := ParseLUForm(name); err == nil {
			t.Errorf("ParseLUForm(%q) = %+v, no error", name, f)
		}
	}
	// A label the caller changed does not change the kind; a form
	// without an update is not cuSOLVER's.
	f, _ := ParseLUForm("fp64")
	f.Name += "+partial"
	if f.Blocked() || f.Update.Working() != FP64 {
		t.Errorf("%s: blocked %t, working %v", f.Name, f.Blocked(), f.Update.Working())
	}
	if !(LUForm{}).Blocked() || (LUForm{}).WordName() != "" || (LUForm{}).recursivePanels(32768, 132) {
		t.Error("LUForm{}: blocked, a word or recursive panels")
	}
}

func TestPrecision(t *testing.T) {
	for _, c := range []struct {
		p                     Precision
		size                  int
		name, suffixed, plain string
	}{
		{FP32, 4, "fp32", "copy_f32", "gather_rows"},
		{FP64, 8, "fp64", "copy_f64", "gather_rows_f64"},
	} {
		if c.p.Size() != c.size || c.p.String() != c.name || c.p.suffixed("copy") != c.suffixed ||
			c.p.variant("gather_rows") != c.plain || c.p.double() != (c.p == FP64) {
			t.Errorf("%v: size %d, %q, %q", c.p, c.p.Size(), c.p.suffixed("copy"), c.p.variant("gather_rows"))
		}
	}
	if s := Precision(0).String(); s != "Precision(0)" {
		t.Errorf("Precision(0): %q", s)
	}
}

// The block size and the panels on every kind: the blocked forms' only
// (cuSOLVER's getrf takes neither), the Ozaki forms' recursive panels
// only when asked.
func TestKindsTuning(t *testing.T) {
	for _, c := range []struct {
		name       string
		nb         int // at n = 32768 with pivots
		autoPanels bool
	}{
		{"tc32-fp16", 1024, true}, {"tc32-tf32", 1024, true}, {"double-fp16-fabsum", 1536, true},
		{"ozaki-int8x5", 2048, false}, {"ozaki-int8x7", 2048, false},
	} {
		f, err := ParseLUForm(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if nb := DefaultNB(f, 32768, true); nb != c.nb {
			t.Errorf("%s: block size %d, want %d", c.name, nb, c.nb)
		}
		if got := f.recursivePanels(32768, 132); got != c.autoPanels {
			t.Errorf("%s: auto panels recursive %t, want %t", c.name, got, c.autoPanels)
		}
		f.Panels = PanelsRecursive
		if !f.recursivePanels(32768, 132) {
			t.Errorf("%s: PanelsRecursive not recursive", c.name)
		}
	}
}

// PivotAuto: none for a dominant A, the butterflies for fp64's getrf,
// partial pivoting for the others.
func TestAutoPivoting(t *testing.T) {
	fp64, fp32, ozaki := Getrf{FP64}, Getrf{FP32}, Ozaki{5}
	for _, c := range []struct {
		rows, cols bool
		u          Update
		want       PivotingDone
		say        string
	}{
		{true, true, fp64, PivotingDone{Kind: PivotNone, Reason: ReasonRowDominant}, "none: A is strictly diagonally dominant by rows"},
		{false, true, ozaki, PivotingDone{Kind: PivotNone, Reason: ReasonColumnDominant}, "none: A is strictly diagonally dominant by columns"},
		{false, false, fp64, PivotingDone{Kind: PivotButterfly, Reason: ReasonNotDominant}, "none, after a random butterfly transform"},
		{false, false, fp32, PivotingDone{Kind: PivotPartial, Reason: ReasonNotDominant}, "partial"},
		{false, false, ozaki, PivotingDone{Kind: PivotPartial, Reason: ReasonNotDominant}, "partial"},
		{false, false, TC32{gpu.F16}, PivotingDone{Kind: PivotPartial, Reason: ReasonNotDominant}, "partial"},
	} {
		got := autoPivoting(c.rows, c.cols, c.u)
		if got != c.want || got.String() != c.say {
			t.Errorf("rows %t cols %t %v: %+v %q, want %+v %q", c.rows, c.cols, c.u, got, got, c.want, c.say)
		}
	}
}

func TestPivotingDoneStrings(t *testing.T) {
	for want, p := range map[string]PivotingDone{
		"partial":                   {Kind: PivotPartial},
		"partial, recursive panels": {Kind: PivotPartial, RecursivePanels: true},
		"none, as asked":            {Kind: PivotNone},
		"none, after a random butterfly transform":            {Kind: PivotButterfly},
		"partial, as the butterfly transform failed: stalled": {Kind: PivotPartial, Reason: ReasonNotDominant, Fallback: "stalled"},
	} {
		if p.String() != want {
			t.Errorf("%+v: %q, want %q", p, p, want)
		}
		if p.Pivots() != (p.Kind == PivotPartial) {
			t.Errorf("%+v: Pivots %t", p, p.Pivots())
		}
	}
}

// composeLater on a worked example: nb = 2, n = 6; step 1 swaps rows 2
// and 4, step 2 rows 4 and 5. Block 0 (rows 2…) sees both, block 1
// (rows 4…) the second only, block 2 none.
func TestComposeLaterExample(t *testing.T) {
	steps := [][]int32{nil, pivot.Moves(nil, []int32{3, 2}, 2), pivot.Moves(nil, []int32{2, 2}, 4)}
	got := composeLater(steps, 2, 6)
	want := [][]int32{{4, 3, 5, 2}, {5, 4}, nil}
	for k := range want {
		if !slices.Equal(got[k], want[k]) {
			t.Errorf("block %d: rows %v, want %v", k, got[k], want[k])
		}
	}
}

// Host marks factors held in fp64 as fp64 whatever their label: lu's
// Errors then measures exact fp64 factors as exact, not as off by fp32's
// rounding of A.
func TestHostStorage(t *testing.T) {
	// A = L·U exactly, with 0.1 (not an fp32 number) in L.
	a := []float64{1, 0, 0.1, 1}
	cm := []float64{1, 0.1, 0, 1} // L\U, column-major
	piv := []int32{1, 2}
	for _, c := range []struct {
		label string
		u     Update
		want  format.Format
	}{
		{"fp64", Getrf{FP64}, format.Binary64}, {"fp64+partial", Getrf{FP64}, format.Binary64},
		{"ozaki-int8x5", Ozaki{5}, format.Binary64}, {"fp32", Getrf{FP32}, format.Binary32},
		{"tc32-fp16", TC32{gpu.F16}, format.Binary32},
	} {
		fa := &Factors{s: &System{n: 2}, Form: c.label, update: c.u}
		h := fa.hostFactors(cm, piv)
		if h.Storage != c.want || h.Form != c.label {
			t.Errorf("%s: storage %v, want %v", c.label, h.Storage, c.want)
		}
		e, err := h.Errors(a)
		if err != nil {
			t.Fatal(err)
		}
		if exact := c.want == format.Binary64; exact != (e.Componentwise == 0) {
			t.Errorf("%s: componentwise error %g", c.label, e.Componentwise)
		}
	}
}

// diag_check's column counts from 1; SingularError's from 0, as lu's.
func TestSingularErrorColumn(t *testing.T) {
	for c, want := range map[int32]int{1: 0, 3: 2, 1000: 999} {
		var se *SingularError
		err := diagCheckError(c)
		if !errors.As(err, &se) || se.Column != want {
			t.Errorf("diag_check %d: %v, want column %d", c, err, want)
			continue
		}
		if say := fmt.Sprintf("U(%d,%d) = 0", want+1, want+1); !strings.Contains(err.Error(), say) {
			t.Errorf("diag_check %d: %q, want it to say %q", c, err, say)
		}
	}
	if err := diagCheckError(-1); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("diag_check −1: %v", err)
	}
	if err := diagCheckError(0); err != nil {
		t.Errorf("diag_check 0: %v", err)
	}
}

// ozakiLUBound divides by ‖A‖∞ (the largest row sum), not ‖A‖₁: here 3
// and 2.
func TestOzakiLUBoundNorm(t *testing.T) {
	a := []float64{1, 1, 1, 0, 1, 0, 0, 0, 1} // row-major, upper triangular
	h := &lu.Factors{N: 3, LU: a}             // L = I, U = A
	want := 3 * ozakiBound(5, 3) * 4 / 3
	if got := ozakiLUBound(5, h, a, lu.Errors{}); math.Abs(got-want) > 1e-12*want {
		t.Errorf("bound %g, want %g", got, want)
	}
}

// columnMajor is the transpose of a row-major matrix, for orders that
// are and are not multiples of its tile.
func TestColumnMajor(t *testing.T) {
	for _, n := range []int{1, 2, 63, 64, 65, 200} {
		a := make([]float64, n*n)
		for k := range a {
			a[k] = float64(k)
		}
		cm := make([]float64, n*n)
		columnMajor(cm, a, n)
		for i := range n {
			for j := range n {
				if cm[i+j*n] != a[i*n+j] {
					t.Fatalf("n=%d: (%d,%d) is %v, want %v", n, i, j, cm[i+j*n], a[i*n+j])
				}
			}
		}
	}
}

// The baselines refuse orders whose n² passes int32, and take the largest
// that does not.
func TestBaselineFits(t *testing.T) {
	for n, ok := range map[int]bool{1: true, 46340: true, 46341: false, 65536: false} {
		if err := baselineFits(n); (err == nil) != ok {
			t.Errorf("n = %d: %v, want fits %v", n, err, ok)
		}
	}
}
