package mma

import (
	"fmt"
	"math"
	"testing"

	"github.com/mwmm/mwmm/format"
)

// FuzzLookup: Lookup and Open never panic on any spec and format names;
// what they accept is deterministic (the same spec gives the same
// parameters twice), has a block of at least one product, and computes a
// dot product whose result is NaN or a value of its output format.
func FuzzLookup(f *testing.F) {
	for _, s := range []string{
		"v100", "t4:extra=2,carry=unlimited", "ieee:k=16,acc=fp64", "a100:k=8,align=rne,sticky=on",
		"h100:anchor=lead,range=fixed", "generic:k=4,products=e4m3,productmode=rz,acc=fp32,accmode=rne",
		"v100:k=0", "v100:k=4,k=8", "h100-mma.sync", "ieee:order=inorder,addend=after,norm=each", "gpu:wgmma", "nosuch",
		"v100:subnormals-in=off,subnormals-out=on", "a100:accp=20,productp=12,outmode=rz,convert=rz",
	} {
		f.Add(s, "", "", 1.5, -0.375, 3.0)
	}
	f.Add("v100", "fp16", "fp32", 65504.0, 2.0, -1e9)
	f.Add("ieee", "bf16", "", 1e-40, 1e38, math.Inf(1))
	f.Fuzz(func(t *testing.T, spec, input, output string, a, b, c float64) {
		m, err := Lookup(spec, input, output)
		if err == nil {
			again, err := Lookup(spec, input, output)
			if err != nil || again.Name() != m.Name() || fmt.Sprintf("%+v", again.Params()) != fmt.Sprintf("%+v", m.Params()) {
				t.Fatalf("Lookup(%q, %q, %q) twice: %v; %+v and %+v", spec, input, output, err, m.Params(), again.Params())
			}
			checkDot(t, spec, m, a, b, c)
		} else if err.Error() == "" {
			t.Fatalf("Lookup(%q): empty error", spec)
		}
		if u, err := Open(spec, input, output); err == nil {
			checkDot(t, spec, u, a, b, c)
		}
	})
}

// checkDot runs one dot product of length BlockK (up to 64) on a, b
// rounded to the input format and c to the output format, and checks the
// result is NaN or a value of the output format.
func checkDot(t *testing.T, spec string, u Unit, a, b, c float64) {
	k := u.BlockK()
	if k < 1 {
		t.Fatalf("%q: BlockK %d", spec, k)
	}
	if k > 64 {
		return // valid, but too slow to fuzz
	}
	in, out := u.Input(), u.Output()
	as, bs := make([]float64, k), make([]float64, k)
	for i := range k {
		as[i], bs[i] = in.Round(a*float64(i+1), format.NearestEven), in.Round(b/float64(i+1), format.NearestEven)
	}
	d := make([]float64, 1)
	if err := u.Dots(k, as, bs, []float64{out.Round(c, format.NearestEven)}, d); err != nil {
		return // a unit may refuse values (e.g. specials it lacks)
	}
	if d[0] == d[0] && !out.IsRepresentable(d[0]) {
		t.Fatalf("%q (%s): %v·%v + %v = %v, not a value of %s", spec, u.Name(), as, bs, c, d[0], out.Name())
	}
}
