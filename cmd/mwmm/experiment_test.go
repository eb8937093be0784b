package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/experiment"
)

func TestExperimentList(t *testing.T) {
	code, out, errOut := mwmm(t, "", "experiment", "list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, e := range experiment.List() {
		if !strings.Contains(out, e.Name) {
			t.Errorf("list lacks %s:\n%s", e.Name, out)
		}
	}
	code, out, _ = mwmm(t, "", "experiment", "list", "--json")
	var items []struct{ Name, Cites, Shows, Setup string }
	if err := json.Unmarshal([]byte(out), &items); code != 0 || err != nil || len(items) != len(experiment.List()) {
		t.Fatalf("list --json: exit %d, %v, %d items:\n%s", code, err, len(items), out)
	}
	code, out, _ = mwmm(t, "", "experiment", "show", "fig4.3")
	if code != 0 || !strings.Contains(out, "Figure 4.3") || !strings.Contains(out, "The paper shows:") {
		t.Errorf("show fig4.3: exit %d\n%s", code, out)
	}
}

func TestExperimentRun(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := mwmm(t, "", "experiment", "run", "narrow2", "--quick", "--out", dir, "--seed", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"input = fp8-E4M3", "subnormals off", "56 of 56 points", "narrow2.svg"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	f, err := os.Open(filepath.Join(dir, "narrow2.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) != 57 || strings.Join(recs[0], ",") != "input,series,n,normwise_error" {
		t.Fatalf("CSV: %v, %d records, header %v", err, len(recs), recs[0])
	}
	if errOut != "" {
		t.Errorf("stderr is not a terminal, yet got %q", errOut)
	}
}

func TestExperimentErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"experiment"}, exitUsage, "want a verb"},
		{[]string{"experiment", "frobnicate"}, exitUsage, "unknown verb"},
		{[]string{"experiment", "run"}, exitUsage, "one experiment name"},
		{[]string{"experiment", "run", "fig9.9"}, exitUsage, "unknown experiment"},
		{[]string{"experiment", "show", "fig9.9"}, exitUsage, "fig3.1"},
		{[]string{"experiment", "run", "fig4.3", "--quick", "--engine", "reference", "--out", ""}, exitFailure, "must be model:<unit>"},
		{[]string{"experiment", "run", "narrow1", "--engine", "warp-drive", "--out", ""}, exitFailure, "unknown engine"},
		{[]string{"experiment", "run", "narrow1", "--workers", "-1"}, exitUsage, "--workers"},
	} {
		code, _, errOut := mwmm(t, "", c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", c.args, code, errOut, c.code, c.want)
		}
	}
}
