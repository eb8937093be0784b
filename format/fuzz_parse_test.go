package format

import (
	"math"
	"testing"
)

// FuzzParse: Parse never panics; a name it accepts gives a format whose
// Name parses back to the same format (same parameters, specials,
// subnormals, saturation, largest value) with the same Name. The same for
// ParseMode and ParseBlockFormat.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"fp16", "e4m3+sat", "E5M2+FTZ+sat", "p3109-k8p3", "p3109-k8p4-finite", "p3109-k16p11-extended",
		"custom:p=5,emin=-6,emax=7", "custom:p=1,emin=-3,emax=3,specials=none", "custom:p=53,emin=-1022,emax=1023,subnormals=off",
		"custom:p=3,emin=4,emax=8,specials=p3109-finite+sat", "bf16+ftz", " tf32 ", "custom:p=0,emin=1,emax=0", "p3109-k2p1",
		"sr-bits=7", "rne", "mxfp8", "nvfp4", "custom:p=5,p=6,emin=-1,emax=1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if fm, err := Parse(s); err == nil {
			again, err := Parse(fm.Name())
			if err != nil {
				t.Fatalf("Parse(%q) = %s, whose Name does not parse: %v", s, fm.Name(), err)
			}
			if again.Name() != fm.Name() || again.Precision() != fm.Precision() || again.Emin() != fm.Emin() ||
				again.Emax() != fm.Emax() || again.Specials() != fm.Specials() || again.Subnormals() != fm.Subnormals() ||
				again.Saturates() != fm.Saturates() || again.Bits() != fm.Bits() || again.MaxFinite() != fm.MaxFinite() {
				t.Fatalf("Parse(%q) = %+v; Parse of its Name %q = %+v", s, fm, fm.Name(), again)
			}
			if !(fm.MaxFinite() >= fm.MinNormal()) || math.IsInf(fm.MaxFinite(), 0) {
				t.Fatalf("Parse(%q): max finite %v, min normal %v", s, fm.MaxFinite(), fm.MinNormal())
			}
		} else if err.Error() == "" {
			t.Fatalf("Parse(%q): empty error", s)
		}
		if m, err := ParseMode(s); err == nil {
			if again, err := ParseMode(m.String()); err != nil || again != m {
				t.Fatalf("ParseMode(%q) = %v; ParseMode(%q) = %v, %v", s, m, m.String(), again, err)
			}
		}
		if b, err := ParseBlockFormat(s); err == nil {
			if again, err := ParseBlockFormat(b.Name()); err != nil || again.Name() != b.Name() {
				t.Fatalf("ParseBlockFormat(%q) = %v; of its Name: %v, %v", s, b, again, err)
			}
		}
	})
}
