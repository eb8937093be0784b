package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mwmm/mwmm/experiment"
)

// fits reports the first line of out wider than cols, and whether out has
// more than rows lines.
func fits(t *testing.T, what, out string, rows, cols int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) > rows {
		t.Errorf("%s: %d lines, want at most %d:\n%s", what, len(lines), rows, out)
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n >= cols {
			t.Errorf("%s: a line of %d columns, want under %d:\n%s", what, n, cols, l)
		}
	}
}

// Every "mwmm CMD -h" fits a screen: at most 40 lines of at most 100
// columns; the manual, "mwmm help CMD", is as narrow.
func TestShortHelpFits(t *testing.T) {
	_, out, _ := mwmm(t, "", "help")
	fits(t, "help", out, 40, 101)
	for _, c := range commands {
		code, out, _ := mwmm(t, "", c.name, "-h")
		if code != 0 {
			t.Errorf("%s -h: exit %d", c.name, code)
		}
		fits(t, c.name+" -h", out, 40, 101)
		_, out, _ = mwmm(t, "", "help", c.name)
		fits(t, "help "+c.name, out, 1000, 101)
	}
}

// The brief names each flag once, and only flags the command has: -h
// hides none and lists none twice.
func TestShortHelpGroups(t *testing.T) {
	for _, c := range commands {
		if c.flags == nil {
			continue
		}
		fs := c.flags()
		seen := map[string]int{}
		for _, g := range parseBrief(c.brief) {
			if !strings.HasSuffix(g.title, ":") || len(g.flags) == 0 {
				t.Errorf("%s: group %q: want a title ending in ':' and flags", c.name, g.title)
			}
			for _, f := range g.flags {
				for _, n := range f.names {
					seen[n]++
					if fs.Lookup(n) == nil {
						t.Errorf("%s: the brief names --%s, which the command has not", c.name, n)
					}
				}
			}
		}
		fs.VisitAll(func(f *flag.Flag) {
			if seen[f.Name] != 1 {
				t.Errorf("%s: --%s is in the brief %d times, want once", c.name, f.Name, seen[f.Name])
			}
		})
	}
}

// The synopsis shows the first examples, three where the flags leave room
// in 40 lines, and wraps the usage.
func TestShortHelpLayout(t *testing.T) {
	_, out, _ := mwmm(t, "", "solve", "-h")
	for _, s := range []string{"Usage: mwmm solve [--a A.npy", "\nGPU only (--engine gpu):\n  --bench SIZES",
		"  --tol ERROR           stop at this normwise backward error (default √n·2^-53)\n",
		"mwmm help solve", "  mwmm solve --engine gpu --size 8192"} {
		if !strings.Contains(out, s) {
			t.Errorf("solve -h lacks %q:\n%s", s, out)
		}
	}
	if n := strings.Count(out, "\n  mwmm solve "); n != 2 {
		t.Errorf("solve -h: %d examples, want the 2 that fit", n)
	}
	if _, out, _ = mwmm(t, "", "gemm", "-h"); strings.Count(out, "\n  mwmm gemm ") != 3 {
		t.Errorf("gemm -h: want 3 examples:\n%s", out)
	}
	// Aliases follow the flag they stand for.
	_, out, _ = mwmm(t, "", "bound", "-h")
	if !strings.Contains(out, "--block SIZE          the FABsum block size, also -b (default 256)") {
		t.Errorf("bound -h:\n%s", out)
	}
	_, out, _ = mwmm(t, "", "help", "bound")
	if !strings.Contains(out, "\n  --b SIZE\n      the same as --block SIZE") {
		t.Errorf("help bound lacks the alias:\n%s", out)
	}
}

func TestWrapLine(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  []string
	}{
		{"a b c", 10, []string{"a b c"}},
		{"mwmm x [--a A | --b B] [--c C]", 20, []string{"mwmm x", "[--a A | --b B]", "[--c C]"}},
		{"one [two three four five six] seven", 12, []string{"one", "[two three", "four five", "six] seven"}},
	} {
		if got := wrapAt(c.in, c.width, true); strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("wrapLine(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
}

// paperFiles are the papers' file names in the project's notes: a user
// has none of them, so no output, help or document names them.
var paperFiles = regexp.MustCompile(`(numerical-behavior-tensor-cores|multiword-matmul-tensor-cores|narrow-range-matmul-slides|multiword-tensor-cores-slides|block-fma-abstract)(\.txt)?`)

func TestNoPaperFileNames(t *testing.T) {
	runs := [][]string{{"help"}, {"mma", "list", "--sources"}, {"mma", "list", "--json"}, {"bound", "--table"},
		{"probe"}, {"experiment", "list"}, {"experiment", "list", "--json"}}
	for _, c := range commands {
		runs = append(runs, []string{c.name, "-h"}, []string{"help", c.name})
	}
	for _, e := range experiment.List() {
		runs = append(runs, []string{"experiment", "show", e.Name})
	}
	for _, args := range runs {
		_, out, errs := mwmm(t, "", args...)
		if m := paperFiles.FindString(out + errs); m != "" {
			t.Errorf("mwmm %s names %s; cite the paper by authors, title, year and link", strings.Join(args, " "), m)
		}
	}
	docs, _ := filepath.Glob("../../docs/*.md")
	more, _ := filepath.Glob("../../docs/*/*.md")
	for _, f := range append(append(docs, more...), "../../README.md") {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := paperFiles.FindString(string(b)); m != "" {
			t.Errorf("%s names %s; cite the paper by authors, title, year and link", f, m)
		}
	}
}

// experiment list fits 100 columns and names, for each experiment, the
// figure, table or section it reproduces and the paper's author and year.
func TestExperimentListNamesFigures(t *testing.T) {
	_, out, _ := mwmm(t, "", "experiment", "list")
	fits(t, "experiment list", out, 1000, 100)
	part := regexp.MustCompile(`^\S+\s+(Fig\. \d+\.\d|Table \d\.\d|§|Experiments I|plots ")`)
	for _, e := range experiment.List() {
		i := strings.Index(out, "\n"+e.Name+" ")
		if i < 0 {
			t.Errorf("experiment list lacks %s", e.Name)
			continue
		}
		line, _, _ := strings.Cut(out[i+1:], "\n")
		if !part.MatchString(line) || !regexp.MustCompile(`(Fasi|Blanchard|Mary|Mikaitis|Carson),? (\d{4})?`).MatchString(out[i:]) {
			t.Errorf("experiment list: %q names no figure and paper", line)
		}
	}
	for cite, want := range map[string]string{
		"Figure 4.3 of " + experiment.Fasi:                                          "Fig. 4.3, Fasi 2023",
		"Figure 4.4 (right panel: the error) of " + experiment.Fasi + "; simulated": "Fig. 4.4 (right), Fasi 2023",
		"Numerical experiments II of " + experiment.MaryPASC25:                      "Experiments II, Mikaitis 2025",
	} {
		if got := shortCite(cite); got != want {
			t.Errorf("shortCite(%.40q…) = %q, want %q", cite, got, want)
		}
	}
}
