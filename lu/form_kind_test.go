package lu

import (
	"testing"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/mma"
	"github.com/mwmm/mwmm/multiword"
)

// Every constructor says which update its form runs.
func TestFormKind(t *testing.T) {
	u, err := mma.Lookup("v100", "fp16", "fp32")
	if err != nil {
		t.Fatal(err)
	}
	p, err := multiword.Lookup("double-fp16")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		f    Form
		want UpdateKind
	}{
		{Scalar(format.Binary32), ScalarUpdate},
		{BlockFMA(u), BlockFMAUpdate},
		{Multiword(p, multiword.Reference{}), MultiwordUpdate},
	} {
		if c.f.Kind != c.want {
			t.Errorf("%s: kind %d, want %d", c.f.Name, c.f.Kind, c.want)
		}
	}
}
