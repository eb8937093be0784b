package main

import (
	"encoding/json"
	"os"
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
		"v100 fp16→fp32",
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
	m, err := mma.Lookup(r.Spec, "bf16", "fp32")
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
	if code, out, _ := mwmm(t, "", "help", "probe"); code != 0 || !strings.Contains(out, "extra alignment bits") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
}

// --record is checked before the work, and only with --crosscheck, as
// --against is (issue 27).
func TestProbeRecordChecks(t *testing.T) {
	for _, args := range [][]string{
		{"probe", "--record", t.TempDir() + "/r.jsonl"},
		{"probe", "--against", "h100"},
	} {
		code, out, errs := mwmm(t, "", args...)
		if code != 2 || !strings.Contains(errs, "add --crosscheck N") || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	// An unwritable path fails with nothing probed or printed.
	bad := t.TempDir() + "/no/such/dir/r.jsonl"
	code, out, errs := mwmm(t, "", "probe", "--crosscheck", "100", "--record", bad)
	if code != 1 || out != "" || !strings.Contains(errs, "no/such/dir") {
		t.Errorf("unwritable --record: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// A good path gets one line a case.
	good := t.TempDir() + "/r.jsonl"
	if code, _, errs := mwmm(t, "", "probe", "--unit", "t4", "--crosscheck", "40", "--against", "t4", "--record", good); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(good)
	if err != nil || strings.Count(string(b), "\n") < 40 {
		t.Errorf("record: %d lines, %v", strings.Count(string(b), "\n"), err)
	}
}

// An fp64 unit's report states one model: the table, the fitted model
// and the spec agree (issue 27: they said k=4, k=1 and k=2, carries
// unlimited and 1, normalisation each and end).
func TestProbeBinary64OneTruth(t *testing.T) {
	for _, unit := range [][]string{{"ieee", "fp64", "fp64"}, {"a100", "fp64", "fp64"}} {
		code, out, errs := mwmm(t, "", "probe", "--unit", unit[0], "--input", unit[1], "--output", unit[2])
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", unit, code, errs)
		}
		for _, want := range []string{
			"products per block      1 ",
			"carry bits              unlimited",
			"normalisation           each, in order",
			"fitted model: fp64×fp64→fp64, k=1, exact products, normalise each addition (in-order), exact alignment, carries unlimited",
			"spec: exact:k=1,",
			",carry=unlimited,norm=each,order=inorder,",
			"no carry bits are needed",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: no %q in\n%s", unit, want, out)
			}
		}
		if strings.Contains(out, "\n\n\n") || strings.Contains(out, "the narrow output") {
			t.Errorf("%v: stray blank lines or a narrow-output verdict:\n%s", unit, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "  ") && strings.TrimSpace(line) == "" {
				t.Errorf("%v: a blank table row:\n%s", unit, out)
			}
		}
	}
}
