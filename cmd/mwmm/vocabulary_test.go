package main

import (
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/experiment"
	"github.com/mwmm/mwmm/gpu/gemm"
)

// Every flag's placeholder in the help is a name that says what to give
// (SIZE, FORMAT, ENGINE), never the Go type the flag package falls back to
// (string, int, uint, float, value) when the usage has no `backquoted` name.
func TestFlagPlaceholders(t *testing.T) {
	goTypes := map[string]bool{"string": true, "int": true, "int64": true, "uint": true, "uint64": true,
		"float": true, "float64": true, "duration": true, "value": true, "bool": true}
	for _, c := range commands {
		if c.flags == nil {
			continue
		}
		c.flags().VisitAll(func(f *flag.Flag) {
			name, usage := flag.UnquoteUsage(f)
			if goTypes[name] {
				t.Errorf("mwmm %s --%s: placeholder %q is a Go type; name it in the usage with backquotes", c.name, f.Name, name)
			}
			if strings.TrimSpace(usage) == "" {
				t.Errorf("mwmm %s --%s: no usage text", c.name, f.Name)
			}
		})
	}
}

// logu:E means magnitudes in [1e-E, 1eE] wherever a distribution is named,
// and logu alone is logu:10 (gemm's logu:3 was refused while its help
// offered it; bench's logu meant logu:3).
func TestDistLogu(t *testing.T) {
	for _, c := range []struct {
		name string
		e    float64
	}{{"logu", 10}, {"logu:10", 10}, {"logu:3", 3}, {"LOGU:0.5", 0.5}} {
		d, err := experiment.ParseDist(c.name)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		x := make([]float64, 20000)
		d.Fill(rand.New(rand.NewPCG(1, 2)), x)
		lo, hi, neg := math.Inf(1), 0.0, 0
		for _, v := range x {
			lo, hi = math.Min(lo, math.Abs(v)), math.Max(hi, math.Abs(v))
			if v < 0 {
				neg++
			}
		}
		// 20000 draws of a uniform exponent reach within 0.2% of the range's ends.
		span := 2 * c.e
		if lo < math.Pow(10, -c.e) || hi > math.Pow(10, c.e) || math.Log10(lo) > -c.e+span/500 || math.Log10(hi) < c.e-span/500 || neg < 9000 || neg > 11000 {
			t.Errorf("%s: magnitudes in [%g, %g], %d negative; want [1e-%g, 1e%g] filled, half negative", c.name, lo, hi, neg, c.e, c.e)
		}
	}
	for _, bad := range []string{"logu:0", "logu:-3", "logu:x", "logu:400"} {
		if _, err := experiment.ParseDist(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if code, _, errOut := mwmm(t, "", "gemm", "--size", "2,16,2", "--dist", "logu:3"); code != 0 {
		t.Errorf("gemm --dist logu:3: exit %d, %s", code, errOut)
	}
	// bench takes the old spelling, says what it means, then needs a GPU.
	_, _, errOut := mwmm(t, "", "bench", "--dists", "logu", "--sizes", "16")
	if !strings.Contains(errOut, "logu:3") {
		t.Errorf("bench --dists logu: stderr %q; want the note naming logu:3", errOut)
	}
	if ds, err := parseDists("logu:3"); err != nil || len(ds) != 1 || ds[0] != 3 || !strings.Contains(gemm.DistNames[3], "1e-3") {
		t.Errorf("bench --dists logu:3 = %v, %v", ds, err)
	}
}

// bound's --split, --accmode and --block are the variants' split=, the
// units' accmode= and gemm's --block; the older names still work.
func TestBoundFlagNames(t *testing.T) {
	base := []string{"bound", "--low", "fp16", "-p", "2", "-n", "1e6", "--fabsum", "v2"}
	_, want, _ := mwmm(t, "", append(base, "--split", "rz", "--accmode", "rz", "--block", "64")...)
	if !strings.Contains(want, "2^-23 (rz)") || !strings.Contains(want, "b = 64") {
		t.Fatalf("--split rz --accmode rz --block 64:\n%s", want)
	}
	code, got, errOut := mwmm(t, "", append(base, "--mode-low", "rz", "--mode-high", "rz", "-b", "64")...)
	if code != 0 || got != want {
		t.Errorf("older names: exit %d, %s\n%s\nwant\n%s", code, errOut, got, want)
	}
	if code, _, errOut := mwmm(t, "", append(base, "--accmode", "rz", "--mode-high", "rne")...); code != exitUsage || !strings.Contains(errOut, "one flag") {
		t.Errorf("--accmode and --mode-high: exit %d, stderr %q; want 2", code, errOut)
	}
}

// gemm --unit U and experiment run --unit U are --engine model:U.
func TestGemmUnit(t *testing.T) {
	_, a, _ := mwmm(t, "", "gemm", "--size", "2,64,2", "--unit", "t4", "--json")
	_, b, _ := mwmm(t, "", "gemm", "--size", "2,64,2", "--engine", "model:t4", "--json")
	var sa, sb gemmSummary
	if json.Unmarshal([]byte(a), &sa) != nil || json.Unmarshal([]byte(b), &sb) != nil || sa.Engine != "model:t4" || sa.Engine != sb.Engine {
		t.Errorf("--unit t4: %q; --engine model:t4: %q", a, b)
	}
	if code, _, _ := mwmm(t, "", "gemm", "--unit", "t4", "--engine", "reference"); code != exitUsage {
		t.Errorf("--unit with --engine: exit %d, want 2", code)
	}
	// experiment run takes it too: table2.1 refuses it as it refuses --engine.
	dir := t.TempDir()
	code, _, errOut := mwmm(t, "", "experiment", "run", "table2.1", "--unit", "v100", "--out", dir)
	if code != exitUsage || !strings.Contains(errOut, "takes no --engine") {
		t.Errorf("experiment run table2.1 --unit v100: exit %d, stderr %q; want 2 as for --engine model:v100", code, errOut)
	}
	if code, _, _ := mwmm(t, "", "experiment", "run", "fig4.3", "--unit", "v100", "--engine", "model:v100", "--out", dir); code != exitUsage {
		t.Errorf("experiment --unit with --engine: exit %d, want 2", code)
	}
}

// docs/cli.md names every command and every older spelling the commands
// keep, so that the page and the code do not drift apart.
func TestCLIDoc(t *testing.T) {
	b, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, c := range commands {
		if !strings.Contains(doc, "`"+c.name+"`") {
			t.Errorf("docs/cli.md does not name the command %s", c.name)
		}
	}
	for old, now := range boundAliases {
		dash := "--"
		if len(old) == 1 {
			dash = "-"
		}
		if !strings.Contains(doc, "`bound "+dash+old) || !strings.Contains(doc, "`bound --"+now) {
			t.Errorf("docs/cli.md lacks bound's %s%s → --%s", dash, old, now)
		}
	}
	for _, w := range []string{"logu:E", "logu:3", "`--unit U` is `--engine model:U`", "| 0 |", "| 1 |", "| 2 |"} {
		if !strings.Contains(doc, w) {
			t.Errorf("docs/cli.md lacks %q", w)
		}
	}
}
