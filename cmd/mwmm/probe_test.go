package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/mma"
)

func TestProbeTable(t *testing.T) {
	code, out, errs := mwmm(t, "", "probe")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"v100 binary16→binary32",
		"extra alignment bits    0 ",
		"rounding of the sum     rz ",
		"products per block      4 ",
		"monotonicity: not monotonic",
		"toward zero (as V100–A100)",
		"spec: exact:k=4,",
		"disagrees with the unit on 0 of",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

func TestProbeJSON(t *testing.T) {
	code, out, errs := mwmm(t, "", "probe", "--unit", "a100", "--input", "bf16", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct {
		Unit     string
		Findings []struct {
			Feature, Value string
			Candidates     []string
			Evidence       []struct {
				Note string
				Got  float64
			}
		}
		Seeds []struct{ Name, Verdict string }
		Spec  string
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) < 10 || len(r.Seeds) < 10 || len(r.Findings[0].Evidence) == 0 {
		t.Fatalf("short report: %+v", r)
	}
	m, err := mma.Lookup(r.Spec, "bf16", "binary32")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := mma.Lookup("a100", "bf16", "")
	if p, q := m.Params(), want.Params(); p.BlockK != q.BlockK || p.ExtraBits != q.ExtraBits || p.AccumulatorMode != q.AccumulatorMode {
		t.Errorf("spec %q: %v, want %v", r.Spec, p, q)
	}
}

func TestProbeErrors(t *testing.T) {
	for _, args := range [][]string{
		{"probe", "--unit", "z900"},
		{"probe", "--input", "fp7"},
		{"probe", "v100"},
		{"probe", "--frobnicate"},
	} {
		if code, _, errs := mwmm(t, "", args...); code != 2 || errs == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
	if code, out, _ := mwmm(t, "", "probe", "--help"); code != 0 || !strings.Contains(out, "extra alignment bits") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
}
