package dense

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/matgen"
)

// GenerateSpec refuses a bad spec before it looks for the device (the
// Solver here has none), naming what is wrong.
func TestGenerateSpecRefuses(t *testing.T) {
	e := &Solver{}
	for _, c := range []struct {
		spec matgen.Spec
		want string
	}{
		{matgen.Spec{Kind: "randsvd"}, "no matrix kind"},
		{matgen.Spec{Kind: "hpl-mxp", Scale: -1}, "want a finite number > 0"},
		{matgen.Spec{Kind: "hpl-mxp", Scale: math.Inf(1)}, "want a finite number > 0"},
		{matgen.Spec{Kind: "hpl-mxp", Kappa: 10}, "takes no kappa"},
		{matgen.Spec{Kind: "fasi-higham", Kappa: 1}, "want a finite number > 1"},
		{matgen.Spec{Kind: "fasi-higham", Scale: -2}, "decades"},
		{matgen.Spec{Kind: "centered", Scale: 2}, "takes no options"},
	} {
		if _, err := e.GenerateSpec(8, c.spec, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error saying %q", c.spec, err, c.want)
		}
	}
	if _, err := e.GenerateSpec(0, matgen.Spec{Kind: "hpl-mxp"}, 1); err == nil {
		t.Error("a system of order 0 was drawn")
	}
}

// The new kinds with their options are matgen's matrices bit for bit on
// the device (TestGenerateSystemMatchesCPU covers their defaults): the
// diagonal's scale, the condition number and the scalings that come from
// the host.
func TestGenerateSpecMatchesCPU(t *testing.T) {
	e := engineGPU(t)
	specs := []matgen.Spec{{Kind: "hpl-mxp", Scale: 0.5}, {Kind: "hpl-mxp", Scale: 3}, {Kind: "fasi-higham", Kappa: 1e3},
		{Kind: "fasi-higham", Kappa: 1e12, Scale: 6}, {Kind: "fasi-higham", Scale: 1}}
	for _, spec := range specs {
		for _, n := range []int{1, 2, 5, 300} {
			seed := matgen.Seed(3, "A")
			want, err := spec.Generate(n, seed)
			if err != nil {
				t.Fatal(err)
			}
			s, err := e.GenerateSpec(n, spec, seed)
			if err != nil {
				t.Fatalf("%+v n=%d: %v", spec, n, err)
			}
			sameMatrix(t, s, want, fmt.Sprintf("%+v n=%d", spec, n))
		}
	}
}
