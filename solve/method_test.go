package solve

import (
	"encoding/json"
	"testing"
)

// A report keeps its method as text: JSON readers see "gmres", and the
// typed value comes back.
func TestMethodText(t *testing.T) {
	for _, m := range []Method{GMRES, IR, None, Auto} {
		b, err := json.Marshal(Report{Refine: m})
		if err != nil {
			t.Fatal(err)
		}
		var back struct {
			Refine string `json:"refine"`
		}
		var rep Report
		if json.Unmarshal(b, &back) != nil || back.Refine != m.String() || json.Unmarshal(b, &rep) != nil || rep.Refine != m {
			t.Errorf("%v: %s", m, b)
		}
	}
	var m Method
	if m.UnmarshalText([]byte("jacobi")) == nil {
		t.Error("UnmarshalText(jacobi) succeeded")
	}
}
