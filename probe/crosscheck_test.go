package probe

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/mma"
)

func TestCrosscheck(t *testing.T) {
	a100, err := mma.Lookup("a100", "bf16", "fp32")
	if err != nil {
		t.Fatal(err)
	}
	h100, err := mma.Lookup("h100", "bf16", "fp32")
	if err != nil {
		t.Fatal(err)
	}
	recorded := 0
	same, err := RunCrosscheck(a100, a100, CrosscheckOptions{Cases: 4000, Seed: 1,
		Record: func(string, Case, float64) error { recorded++; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if same.Mismatches != 0 || same.Cases < 4000 || recorded != same.Cases || len(same.Rows) != len(Generators()) {
		t.Errorf("a model against itself: %d mismatches in %d cases, %d recorded, %d generators", same.Mismatches, same.Cases, recorded, len(same.Rows))
	}
	// The A100 and the H100 adders differ (block, extra bits, anchor, range),
	// most visibly near overflow, where the H100 gives Inf.
	diff, err := RunCrosscheck(h100, a100, CrosscheckOptions{Cases: 4000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if diff.Mismatches == 0 {
		t.Fatal("h100 against the a100 model: no mismatches")
	}
	inf := false
	for _, r := range diff.Rows {
		if r.Mismatches > 0 && len(r.Examples) == 0 {
			t.Errorf("%s: %d mismatches but no example", r.Generator, r.Mismatches)
		}
		for _, m := range r.Examples {
			inf = inf || math.IsInf(m.Unit, 0)
		}
	}
	if !inf {
		t.Error("no overflowing example among the mismatches")
	}
	b, err := json.Marshal(diff)
	if err != nil || !strings.Contains(string(b), `Inf"`) {
		t.Errorf("JSON of the cross-check: %v, Inf written as %q", err, b[:min(len(b), 200)])
	}
	if _, err := RunCrosscheck(h100, mustLookup(t, "h100", "fp16", "fp32"), CrosscheckOptions{Cases: 10}); err == nil {
		t.Error("a cross-check of different formats ran")
	}
}

func mustLookup(t *testing.T, spec, in, out string) *mma.Model {
	t.Helper()
	m, err := mma.Lookup(spec, in, out)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRecordLine(t *testing.T) {
	b, err := RecordLine("near overflow", Case{A: []float64{2, 3}, B: []float64{0.5, -1}, C: 1}, math.Inf(-1))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil || got["d"] != "-Inf" || got["gen"] != "near overflow" || len(got["a"].([]any)) != 2 {
		t.Errorf("RecordLine = %s (%v)", b, err)
	}
}
