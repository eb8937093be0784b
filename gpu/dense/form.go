package dense

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mwmm/mwmm/gpu/gemm"
	"github.com/mwmm/mwmm/gpu/pivot"
	"github.com/mwmm/mwmm/multiword"
)

// An LUForm says how the GPU factors (Update: cuSOLVER's getrf, or our
// blocked LU with its trailing updates on the tensor cores) and tunes
// the blocked LU. Name is a label for reports, which callers may change.
type LUForm struct {
	Name   string
	Update Update
	NB     int // the block size of the blocked LU; 0: DefaultNB's
	// Profile times the blocked LU's phases (Factors.Phases), waiting for
	// the GPU after each: about 10 µs a phase. It turns the look-ahead off.
	Profile bool
	// LookaheadSMs are the multiprocessors the trailing update leaves to
	// the next panel, factored meanwhile on a second stream: 0 means 32,
	// negative turns the look-ahead off.
	LookaheadSMs int
	// Panels is how the blocked LU factors its panels when it pivots:
	// PanelsAuto (the zero value) takes our recursive panel where it was
	// faster than cuSOLVER's getrf on an H100, from n = 16384 on for the
	// fp32 working forms.
	Panels Panels
	// Pivoting is how the factorization picks its pivots (PivotAuto:
	// none when A is strictly diagonally dominant, else partial).
	Pivoting Pivoting
}

// Panels says how a blocked LU with partial pivoting factors its panels.
type Panels int

const (
	PanelsAuto      Panels = iota // PanelsRecursive from n = RecursivePanelsFrom on for the fp32 working forms, else PanelsGetrf
	PanelsGetrf                   // cuSOLVER's getrf down the panel (sgetrf; dgetrf for the Ozaki forms)
	PanelsRecursive               // our recursive panel (at most pivot.MaxPanelRows rows)
)

// PanelKinds names the Panels values, as ParsePanels reads them.
var PanelKinds = []string{"auto", "sgetrf", "recursive"}

// ParsePanels reads auto, sgetrf or recursive.
func ParsePanels(name string) (Panels, error) {
	if i := slices.Index(PanelKinds, name); i >= 0 {
		return Panels(i), nil
	}
	return 0, fmt.Errorf("gpu: no panel kind %q: %v", name, PanelKinds)
}

// RecursivePanelsFrom is the smallest order at which PanelsAuto takes the
// recursive panel: on an H100 both panels gave the same factorization
// times at n = 8192, and the recursive one 5–7% shorter (medians of four
// runs) at 16384 and 32768 (docs/perf/solve-h100.md).
const RecursivePanelsFrom = 16384

// recursivePanels says whether the blocked LU of order n in the form
// factors its pivoted panels with pivot.Panel, on a GPU of sms
// multiprocessors.
func (f LUForm) recursivePanels(n, sms int) bool {
	switch f.Panels {
	case PanelsRecursive:
		return true
	case PanelsAuto:
		return f.Update != nil && f.Update.Working() == FP32 && n >= RecursivePanelsFrom && n <= pivot.MaxPanelRows(sms, false)
	}
	return false
}

// Pivoting says how an LU picks its pivots.
type Pivoting int

const (
	// PivotAuto leaves pivoting out when A is strictly diagonally
	// dominant by rows or by columns (checked on the device, one pass
	// over A), where Gaussian elimination without pivoting is stable
	// (growth factor at most 2) and partial pivoting's panels, the LU's
	// critical path, are not needed: each panel is then the LU of its
	// diagonal block and a triangular solve for the rest. Otherwise the
	// fp64 form takes PivotButterfly, whose growth (3·10^4 at n = 1024
	// on a random matrix) fp64 factors absorb: refinement from
	// them converges in a step, and where it does not (or the
	// factorization fails), factor again with PivotPartial, as mwmm
	// solve does. The other forms pivot partially: the growth would cost
	// their fp32 factors their accuracy.
	PivotAuto Pivoting = iota
	PivotPartial
	// PivotNone never interchanges rows. On a matrix that needs pivoting
	// the factors may be inaccurate; refinement then says it stalled, or
	// the factorization finds a zero or non-finite pivot and says so.
	PivotNone
	// PivotButterfly factors Ã = M·A·Nᵀ without pivoting, M and N random
	// butterflies of depth 2 (two passes over A, in place of the
	// conversion to fp32): at the speed of no pivoting and without zero
	// pivots, but with the growth of elimination without pivoting on a
	// random matrix (3·10^4 at n = 1024), which fp64 factors absorb
	// and fp32 ones do not. Solve applies the butterflies, so the factors
	// still precondition A; refinement against A says when a matrix
	// defeats the transform.
	PivotButterfly
)

// ErrButterflyFailed is wrapped by Factor's error when the factors of
// PivotButterfly's transformed matrix have a zero or non-finite pivot.
var ErrButterflyFailed = errors.New("without pivoting, after a random butterfly transform")

// A PivotReason says why a factorization pivoted as it did.
type PivotReason int

const (
	ReasonAsked          PivotReason = iota // the form's Pivoting asked for it
	ReasonRowDominant                       // PivotAuto: A is strictly diagonally dominant by rows
	ReasonColumnDominant                    // PivotAuto: ... by columns
	ReasonNotDominant                       // PivotAuto: A is not diagonally dominant
	ReasonGrowthChecked                     // PivotAuto: no pivoting, the growth checked on every panel (Half)
	ReasonGrowthPassed                      // PivotAuto in Solve: no pivoting, as an earlier attempt's growth check passed
	ReasonGrowthFailed                      // PivotAuto in Solve: pivoting, as an earlier attempt's growth check failed
)

// PivotingDone is how a factorization picked its pivots: Kind is
// PivotPartial, PivotNone or PivotButterfly (never PivotAuto).
type PivotingDone struct {
	Kind            Pivoting
	Reason          PivotReason
	RecursivePanels bool // partial pivoting with our recursive panel
	// Fallback, when set, says why partial pivoting replaced a failed
	// butterfly transform (Solve's escalation; Factor never sets it).
	Fallback string
}

// String says it for people: "partial", "partial, recursive panels",
// "none: A is strictly diagonally dominant by rows", "none, after a
// random butterfly transform", ...
func (p PivotingDone) String() string {
	var s string
	switch p.Kind {
	case PivotPartial:
		s = "partial"
		if p.RecursivePanels {
			s += ", recursive panels"
		}
	case PivotButterfly:
		s = "none, after a random butterfly transform"
	default:
		s = "none, as asked"
	}
	switch p.Reason {
	case ReasonRowDominant:
		s = "none: A is strictly diagonally dominant by rows"
	case ReasonColumnDominant:
		s = "none: A is strictly diagonally dominant by columns"
	case ReasonGrowthChecked:
		s = "none, the growth checked on every panel"
	case ReasonGrowthPassed:
		s = "none: the growth check passed"
	case ReasonGrowthFailed:
		s += ": the growth check without pivoting failed"
	}
	if p.Fallback != "" {
		s += ", as the butterfly transform failed: " + p.Fallback
	}
	return s
}

// Pivots says whether rows were interchanged.
func (p PivotingDone) Pivots() bool { return p.Kind == PivotPartial }

// Pivotings names the Pivoting values, as ParsePivoting reads them.
var Pivotings = []string{"auto", "partial", "none", "butterfly"}

// ParsePivoting reads auto, partial, none or butterfly.
func ParsePivoting(name string) (Pivoting, error) {
	if i := slices.Index(Pivotings, name); i >= 0 {
		return Pivoting(i), nil
	}
	return 0, fmt.Errorf("gpu: no pivoting %q: %v", name, Pivotings)
}

// LUForms lists the names ParseLUForm takes besides multiword variants
// and Ozaki forms with other digit counts.
var LUForms = []string{HalfForm, "fp64", "fp32", "tc32-fp16", "tc32-bf16", "tc32-tf32", "ozaki-int8x5"}

// ozakiPrefix begins the Ozaki forms' names: ozaki-int8x5 has 5 digits.
const ozakiPrefix = "ozaki-int8x"

// ParseLUForm reads a GPU factorization: fp16-store (Half: fp16 storage,
// no pivoting), fp64, fp32, tc32-fp16 (fp16
// tensor cores, fp32 accumulation and storage), tc32-bf16, tc32-tf32,
// a multiword variant with FABsum (double-fp16-fabsum ...), whose updates
// run on the fused kernel, or ozaki-int8xS (fp64 storage, updates from S
// int8 digits, S = 2 … 7).
func ParseLUForm(name string) (LUForm, error) {
	if digits, ok := strings.CutPrefix(name, ozakiPrefix); ok {
		s, err := strconv.Atoi(digits)
		if err != nil || s < OzakiMinDigits || s > OzakiMaxDigits {
			return LUForm{}, fmt.Errorf("gpu: factorization %q: the Ozaki forms are %s%d to %s%d (the digits per row of L₂₁ and column of U₁₂)",
				name, ozakiPrefix, OzakiMinDigits, ozakiPrefix, OzakiMaxDigits)
		}
		return LUForm{Name: name, Update: Ozaki{Digits: s}}, nil
	}
	switch name {
	case HalfForm:
		return LUForm{Name: name, Update: Half{}}, nil
	case "fp64":
		return LUForm{Name: name, Update: Getrf{FP64}}, nil
	case "fp32":
		return LUForm{Name: name, Update: Getrf{FP32}}, nil
	}
	for _, w := range tc32Words {
		// The words are rounded by our kernel, not by cuBLASLt's FAST_16F
		// or FAST_16BF compute types: on an H100 those ran TF32.
		if name == w.form {
			return LUForm{Name: name, Update: TC32{Words: w.typ}}, nil
		}
	}
	p, err := multiword.Lookup(name)
	if err != nil {
		return LUForm{}, fmt.Errorf("gpu: no GPU factorization %q: the forms are %v and the multiword variants with FABsum (%v)", name, LUForms, err)
	}
	if err := gemm.FusedSupports(&p); err != nil {
		return LUForm{}, fmt.Errorf("gpu: factorization %q: %w", name, err)
	}
	return LUForm{Name: name, Update: Fused{Plan: p}}, nil
}

// Blocked says whether the form is our blocked LU (not cuSOLVER's getrf).
func (f LUForm) Blocked() bool {
	_, getrf := f.Update.(Getrf)
	return !getrf
}

// WordName is the word a TC32 form's updates round to (fp16, bf16,
// TF32), or "" for the other forms.
func (f LUForm) WordName() string {
	if u, ok := f.Update.(TC32); ok {
		return u.WordName()
	}
	return ""
}
