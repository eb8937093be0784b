package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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
	for _, want := range []string{"input = e4m3", "subnormals off", "56 of 56 points", "narrow2.svg"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	recs := readCSV(t, filepath.Join(dir, "narrow2.csv"))
	if len(recs) != 57 || strings.Join(recs[0], ",") != "input,series,n,normwise_error" {
		t.Fatalf("CSV: %d records, header %v", len(recs), recs[0])
	}
	if errOut != "" {
		t.Errorf("stderr is not a terminal, yet got %q", errOut)
	}
}

// readCSV reads the whole CSV file at path, or fails the test.
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("%s: %v, %d records", path, err, len(recs))
	}
	return recs
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
		{[]string{"experiment", "run", "fig4.3", "--quick", "--engine", "reference", "--out", "x"}, exitUsage, "must be model:<unit>"},
		{[]string{"experiment", "run", "narrow1", "--engine", "warp-drive", "--out", "x"}, exitUsage, "unknown engine"},
		// Issue 28: an engine the experiment does not take, a bad one, and no folder are bad command lines.
		{[]string{"experiment", "run", "fig4.3", "--quick", "--engine", "gpu", "--out", "x"}, exitUsage, "must be model:<unit>"},
		{[]string{"experiment", "run", "table2.1", "--engine", "model:nosuch", "--out", "x"}, exitUsage, "takes no --engine"},
		{[]string{"experiment", "run", "table2.1", "--engine", "reference", "--out", "x"}, exitUsage, "takes no --engine"},
		{[]string{"experiment", "run", "all", "--engine", "model:nosuch", "--out", "x"}, exitUsage, "nosuch"},
		{[]string{"experiment", "run", "narrow1", "--out", ""}, exitUsage, "--out"},
		{[]string{"experiment", "run", "narrow1", "--workers", "-1"}, exitUsage, "--workers"},
	} {
		code, _, errOut := mwmm(t, "", c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", c.args, code, errOut, c.code, c.want)
		}
	}
}

// Issue 28, defect 1: a refused run touches no file, and the old results
// stay whole beside it.
func TestExperimentRefusedRunKeepsFiles(t *testing.T) {
	dir := t.TempDir()
	old := map[string]string{"fig3.1.csv": "series,n\nold,1\n", "fig3.1.png": "png", "fig3.1.svg": "svg"}
	for name, body := range old {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, _, errOut := mwmm(t, "", "experiment", "run", "fig3.1", "--quick", "--engine", "model:nosuch", "--out", dir)
	if code != exitUsage || !strings.Contains(errOut, "nosuch") {
		t.Errorf("exit %d, stderr %q; want 2 naming the engine", code, errOut)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != len(old) {
		t.Errorf("folder holds %d files after a refused run, want the %d old ones", len(ents), len(old))
	}
	for name, body := range old {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != body {
			t.Errorf("%s: %q, %v; want the old %q", name, b, err, body)
		}
	}
}

// Issue 28, defect 5: 'run all' with an engine skips the experiments that
// do not take it and runs the others.
func TestExperimentRunAllSkips(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every CPU experiment that takes the reference engine")
	}
	dir := t.TempDir()
	code, out, errOut := mwmm(t, "", "experiment", "run", "all", "--quick", "--engine", "reference", "--out", dir, "--workers", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"skipped: table2.1 takes no --engine", "skipped: fig4.3 runs its products through unit models"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	for _, name := range []string{"fig3.1", "slides-backward", "narrow1", "narrow2", "narrow3"} {
		if _, err := os.Stat(filepath.Join(dir, name+".csv")); err != nil {
			t.Errorf("%s did not run: %v", name, err)
		}
	}
}

// Issue 28, defect 9: SIGHUP (the terminal closed) ends a run as Ctrl-C
// does: exit 1, the rows computed in the CSV in sweep order, and plots.
func TestExperimentSIGHUP(t *testing.T) {
	dir := t.TempDir()
	done := make(chan int)
	var out string
	go func() {
		code, o, _ := mwmm(t, "", "experiment", "run", "fig3.1", "--out", dir, "--workers", "1")
		out = o
		done <- code
	}()
	// The streaming file exists once the signal handler is installed.
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(dir, "fig3.1.csv.partial"))
		if err == nil && strings.Count(string(b), "\n") >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	if code := <-done; code != exitFailure {
		t.Fatalf("exit %d after SIGHUP, want 1", code)
	}
	for _, ext := range []string{".csv", ".png", ".svg"} {
		if _, err := os.Stat(filepath.Join(dir, "fig3.1"+ext)); err != nil {
			t.Errorf("after SIGHUP: %v\n%s", err, out)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "fig3.1.csv"))
	recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil || len(recs) < 3 {
		t.Fatalf("CSV %q: %v", b, err)
	}
	// Sweep order: the first distribution's sizes before the second's, n rising within.
	for i := 2; i < len(recs); i++ {
		if recs[i][0] == recs[i-1][0] && len(recs[i][2]) < len(recs[i-1][2]) {
			t.Errorf("CSV not in sweep order at record %d: %v after %v", i, recs[i], recs[i-1])
		}
	}
}
