package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/format"
)

// mwmm runs the command line args with stdin and returns the exit status and
// what went to stdout and stderr.
func mwmm(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// lines splits output into its lines, without the final newline.
func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// The expected results below are worked out by hand from the formats'
// definitions (precision p, exponent range, specials), not from the code.
func TestRound(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		// e4m3: p=4, emax=8, max finite 1.110b·2^8 = 448; the next grid
		// point 480 is NaN's code, so the midpoint 464 separates 448 from
		// overflow, and overflow gives NaN.
		{[]string{"--format", "e4m3", "--mode", "rne", "448", "460", "465", "1e9"}, []string{"448", "448", "NaN", "NaN"}},
		{[]string{"--format", "e4m3", "464"}, []string{"448"}}, // tie: 448 = 1.110b·2^8 has the even last bit
		{[]string{"--format", "e4m3", "--saturate", "1e9"}, []string{"448"}},
		{[]string{"--format", "e4m3", "--saturate", "-inf"}, []string{"-448"}},
		{[]string{"--format", "e4m3", "inf"}, []string{"NaN"}},
		{[]string{"--format", "e4m3", "--mode", "rz", "1e9", "-1e9"}, []string{"448", "-448"}},
		// e4m3 smallest subnormal 2^-9 = 0.001953125; 2^-10 is a tie with 0.
		{[]string{"--format", "e4m3", "0.001953125", "0.0009765625", "0.0009765626"}, []string{"0.001953125", "0", "0.001953125"}},

		// fp16: max finite (2-2^-10)·2^15 = 65504; overflow past the
		// midpoint 65520 gives +Inf in round to nearest, 65504 toward zero.
		{[]string{"--format", "fp16", "70000"}, []string{"+Inf"}},
		{[]string{"--format", "fp16", "--mode", "rz", "70000"}, []string{"65504"}},
		{[]string{"--format", "fp16", "65519", "65520"}, []string{"65504", "+Inf"}},
		{[]string{"--format", "fp16", "--saturate", "70000", "-inf"}, []string{"65504", "-65504"}},
		{[]string{"--format", "fp16", "inf", "-inf", "nan"}, []string{"+Inf", "-Inf", "NaN"}},
		// 1e-6 = 16.78·2^-24: the nearest subnormal is 17·2^-24. Without
		// subnormals the neighbours are 0 and 2^-14, and 1e-6 < 2^-15.
		{[]string{"--format", "fp16", "1e-6"}, []string{"1.0132789611816406e-06"}},
		{[]string{"--format", "fp16", "--no-subnormals", "1e-6"}, []string{"0"}},
		{[]string{"--format", "fp16", "--no-subnormals", "4e-5"}, []string{"6.103515625e-05"}},
		// 1+2^-11 is a tie between 1 and 1+2^-10.
		{[]string{"--format", "fp16", "1.00048828125"}, []string{"1"}},
		{[]string{"--format", "fp16", "--mode", "ru", "1.00048828125"}, []string{"1.0009765625"}},

		// bf16: p=8, 0.1 = 204.8·2^-11 → 205·2^-11 = 0.10009765625.
		{[]string{"--format", "BF16", "0.1"}, []string{"0.10009765625"}},
		// Negative numbers after the flags, and after --.
		{[]string{"--format", "bf16", "-0.1", "-1e-50"}, []string{"-0.10009765625", "-0"}},
		{[]string{"--format", "fp16", "--", "-0.5", "-1e-8"}, []string{"-0.5", "-0"}},
		{[]string{"-0.5", "--format", "fp16", "-inf", "--mode", "rz", "-70000"}, []string{"-0.5", "-Inf", "-65504"}},
		// --flag=value; -0.1 rounds down to -0.5 in e2m1.
		{[]string{"--format=e2m1", "--mode=rd", "-0.1"}, []string{"-0.5"}},

		// e2m1 (fp4): the values are 0, 0.5, 1, 1.5, 2, 3, 4, 6; no Inf or
		// NaN codes, so overflow saturates. 2.5, 5 and 0.25 are ties.
		{[]string{"--format", "e2m1", "2.5", "5", "0.25", "-7", "7", "0x1.8p1"}, []string{"2", "4", "0", "-6", "6", "3"}},
		{[]string{"--format", "fp4", "inf"}, []string{"6"}},

		// p3109-k8p3: bias 16, emax 15, max finite 1.10b·2^15 = 49152 (the
		// code 0x7F is +Inf); the finite variant's max is 1.11b·2^15 = 57344.
		{[]string{"--format", "p3109-k8p3", "49152", "1e9", "-1e9"}, []string{"49152", "+Inf", "-Inf"}},
		{[]string{"--format", "P3109-K8P3-finite", "57344", "1e9"}, []string{"57344", "NaN"}},
		// No negative zero in P3109.
		{[]string{"--format", "p3109-k8p4", "-1e-30"}, []string{"0"}},

		// custom: p=3, emin=-2, emax=3 is e3m2's grid with IEEE specials:
		// values 1, 1.25, 1.5, 1.75 in [1,2); max 1.75·2^3 = 14. 13 is a tie
		// between 12 = 1.10b·2^3 (even) and 14; 15 one between 14 and 16
		// (even), which overflows.
		{[]string{"--format", "custom:p=3,emin=-2,emax=3", "1.1", "1.2", "13", "13.5", "15"}, []string{"1", "1.25", "12", "14", "+Inf"}},
	}
	for _, tt := range tests {
		code, out, errs := mwmm(t, "", append([]string{"round"}, tt.args...)...)
		if code != 0 {
			t.Errorf("round %q: exit %d, stderr %q", tt.args, code, errs)
			continue
		}
		if got := lines(out); strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("round %q = %q, want %q", tt.args, got, tt.want)
		}
	}
}

// TestRoundModes rounds the ties ±2.5 of e2m1, between 2 (even last bit) and
// 3 (odd), in every deterministic mode.
func TestRoundModes(t *testing.T) {
	want := map[string][2]string{
		"rne": {"2", "-2"}, "rna": {"3", "-3"}, "rnz": {"2", "-2"}, "rz": {"2", "-2"},
		"ru": {"3", "-2"}, "rd": {"2", "-3"}, "ra": {"3", "-3"}, "ro": {"3", "-3"},
		"RNE": {"2", "-2"}, "nearest-away": {"3", "-3"}, "trunc": {"2", "-2"},
	}
	for mode, w := range want {
		code, out, errs := mwmm(t, "", "round", "--format", "e2m1", "--mode", mode, "2.5", "-2.5")
		if code != 0 {
			t.Errorf("mode %s: exit %d, stderr %q", mode, code, errs)
			continue
		}
		if got := lines(out); len(got) != 2 || got[0] != w[0] || got[1] != w[1] {
			t.Errorf("mode %s: 2.5, -2.5 round to %q, want %q", mode, got, w)
		}
	}
}

func TestRoundStdin(t *testing.T) {
	// e2m1 toward +Inf: 0.1 → 0.5, 0.2 → 0.5, -3 is exact.
	code, out, errs := mwmm(t, "0.1\n\n  0.2 \n-3\n\n", "round", "--format", "e2m1", "--mode", "ru")
	if code != 0 || out != "0.5\n0.5\n-3\n" {
		t.Errorf("round from stdin: exit %d, stdout %q, stderr %q; want 0.5 0.5 -3", code, out, errs)
	}
	// A last line without a newline counts too.
	code, out, _ = mwmm(t, "448\n460", "round", "--format", "e4m3")
	if code != 0 || out != "448\n448\n" {
		t.Errorf("round from stdin without final newline: exit %d, stdout %q", code, out)
	}
	// Bad input data is a failure (1), not a bad command line (2).
	code, out, errs = mwmm(t, "1\nxyz\n2\n", "round", "--format", "fp16")
	if code != 1 || !strings.Contains(errs, `"xyz"`) || !strings.Contains(errs, "line 2") {
		t.Errorf("bad stdin line: exit %d, stderr %q; want 1 naming \"xyz\" on line 2", code, errs)
	}
	if out != "1\n" {
		t.Errorf("bad stdin line: stdout %q, want the lines before it, \"1\\n\"", out)
	}
}

func TestRoundStochastic(t *testing.T) {
	// 1+2^-11 lies halfway between the fp16 neighbours 1 and 1+2^-10.
	const x, lo, hi = "1.00048828125", "1", "1.0009765625"
	args := func(mode, seed string) []string {
		a := []string{"round", "--format", "fp16", "--mode", mode, "--seed", seed}
		for range 200 {
			a = append(a, x)
		}
		return a
	}
	for _, mode := range []string{"sr", "sr-half", "sr-bits=4", "SR-BITS=64"} {
		_, out1, _ := mwmm(t, "", args(mode, "42")...)
		code, out2, errs := mwmm(t, "", args(mode, "42")...)
		if code != 0 {
			t.Fatalf("%s: exit %d, stderr %q", mode, code, errs)
		}
		if out1 != out2 {
			t.Errorf("%s: two runs with seed 42 differ", mode)
		}
		n := map[string]int{}
		for _, v := range lines(out1) {
			n[v]++
		}
		if len(lines(out1)) != 200 || n[lo]+n[hi] != 200 || n[lo] == 0 || n[hi] == 0 {
			t.Errorf("%s: results %v; want 200 values, each %s or %s, both present", mode, n, lo, hi)
		}
		_, out3, _ := mwmm(t, "", args(mode, "43")...)
		if out3 == out1 {
			t.Errorf("%s: seeds 42 and 43 give the same 200 roundings", mode)
		}
		// The same values from stdin draw the same random bits.
		_, out4, _ := mwmm(t, strings.Repeat(x+"\n", 200), "round", "--format", "fp16", "--mode", mode, "--seed", "42")
		if out4 != out1 {
			t.Errorf("%s: values from stdin round differently from the same values as arguments", mode)
		}
	}
	// The default seed is 1: leaving it out is the same as --seed 1.
	withSeed := args("sr", "1")
	_, a, _ := mwmm(t, "", withSeed...)
	noSeed := append(withSeed[:5:5], withSeed[7:]...) // without "--seed", "1"
	if _, c, _ := mwmm(t, "", noSeed...); c != a {
		t.Errorf("sr without --seed differs from --seed 1")
	}
	// Representable values never move, and sr-bits=1 cannot round 1+2^-12 up
	// (η = 1/4 is below 2^-1).
	code, out, _ := mwmm(t, "", "round", "--format", "fp16", "--mode", "sr", "1", "0.5", "65504", "1.0009765625")
	if code != 0 || out != "1\n0.5\n65504\n1.0009765625\n" {
		t.Errorf("sr of representable values: exit %d, %q", code, out)
	}
	code, out, _ = mwmm(t, "", "round", "--format", "fp16", "--mode", "sr-bits=1", "1.000244140625", "1.000244140625", "1.000244140625", "1.000244140625")
	if code != 0 || out != "1\n1\n1\n1\n" {
		t.Errorf("sr-bits=1 of 1+2^-12: exit %d, %q; want 1 each time", code, out)
	}
}

func TestRoundErrors(t *testing.T) {
	tests := []struct {
		args []string
		want []string // substrings of stderr
	}{
		{[]string{"--format", "fp7", "1"}, []string{`"fp7"`, "fp16", "e4m3", "bf16", "p3109-k", "custom:"}},
		{[]string{"--format", "fp16", "--mode", "nearest", "1"}, []string{`"nearest"`, "rne", "sr-bits=N"}},
		{[]string{"--format", "fp16", "--mode", "sr-bits=0", "1"}, []string{"random bits"}},
		{[]string{"--format", "fp16", "1", "abc", "2"}, []string{`"abc"`, "not a number"}},
		{[]string{"1"}, []string{"--format is required"}},
		{[]string{"--format", "fp16", "--bogus", "1"}, []string{"-bogus"}},
		{[]string{"--format", "fp16", "--seed", "x", "1"}, []string{"seed"}},
		{[]string{"--format"}, []string{"format"}},
		{[]string{"--format", "custom:p=3,emin=2", "1"}, []string{"emax"}},
	}
	for _, tt := range tests {
		code, out, errs := mwmm(t, "", append([]string{"round"}, tt.args...)...)
		if code != 2 {
			t.Errorf("round %q: exit %d, want 2", tt.args, code)
		}
		if out != "" {
			t.Errorf("round %q: printed %q before failing", tt.args, out)
		}
		for _, w := range tt.want {
			if !strings.Contains(errs, w) {
				t.Errorf("round %q: stderr %q does not mention %q", tt.args, errs, w)
			}
		}
	}
}

func TestFormats(t *testing.T) {
	code, out, errs := mwmm(t, "", "formats")
	if code != 0 {
		t.Fatalf("formats: exit %d, stderr %q", code, errs)
	}
	table, footer, _ := strings.Cut(out, "\n\n")
	rows := map[string][]string{}
	for _, l := range lines(table) {
		if f := strings.Fields(l); len(f) > 0 {
			rows[f[0]] = f
		}
	}
	for _, f := range format.Builtin() {
		if rows[f.Name()] == nil {
			t.Errorf("formats: no row for %s", f.Name())
		}
	}
	// name bits p emin emax max-finite min-normal min-subnormal u specials,
	// from the formats' definitions.
	want := map[string]string{
		"fp64":              "64 53 -1022 1023 1.7976931348623157e+308 2^-1022 2^-1074 2^-53 ieee",
		"fp32":              "32 24 -126 127 3.4028234663852886e+38 2^-126 2^-149 2^-24 ieee",
		"fp16":              "16 11 -14 15 65504 2^-14 2^-24 2^-11 ieee",
		"bf16":              "16 8 -126 127 3.3895313892515355e+38 2^-126 2^-133 2^-8 ieee",
		"e5m2":              "8 3 -14 15 57344 2^-14 2^-16 2^-3 ieee",
		"e4m3":              "8 4 -6 8 448 2^-6 2^-9 2^-4 nan",
		"e3m2":              "6 3 -2 4 28 2^-2 2^-4 2^-3 none",
		"e2m3":              "6 4 0 2 7.5 2^0 2^-3 2^-4 none",
		"e2m1":              "4 2 0 2 6 2^0 2^-1 2^-2 none",
		"p3109-k8p4":        "8 4 -7 7 224 2^-7 2^-10 2^-4 p3109-extended",
		"p3109-k8p4-finite": "8 4 -7 7 240 2^-7 2^-10 2^-4 p3109-finite",
		"p3109-k8p5-finite": "8 5 -3 3 15.5 2^-3 2^-7 2^-5 p3109-finite",
	}
	for name, w := range want {
		if len(rows[name]) == 0 {
			continue // reported above
		}
		if got := strings.Join(rows[name][1:], " "); got != w {
			t.Errorf("formats row %s: %q, want %q", name, got, w)
		}
	}
	for _, s := range []string{"p3109-kKpP", "custom:p=P,emin=E,emax=M", "fp16", "bf16", "+sat"} {
		if !strings.Contains(footer, s) {
			t.Errorf("formats footer does not mention %q", s)
		}
	}

	// Named formats: a row each, "-" for no subnormals and no encoding.
	code, out, _ = mwmm(t, "", "formats", "fp16+ftz", "custom:p=5,emin=-6,emax=8")
	got := lines(out)
	if code != 0 || len(got) != 3 ||
		strings.Join(strings.Fields(got[1]), " ") != "fp16+ftz 16 11 -14 15 65504 2^-14 - 2^-11 ieee" ||
		strings.Join(strings.Fields(got[2]), " ") != "custom:p=5,emin=-6,emax=8 - 5 -6 8 496 2^-6 2^-10 2^-5 ieee" {
		t.Errorf("formats fp16+ftz custom:...: exit %d, output\n%s", code, out)
	}
	code, _, errs = mwmm(t, "", "formats", "fp7")
	if code != 2 || !strings.Contains(errs, "valid formats") {
		t.Errorf("formats fp7: exit %d, stderr %q", code, errs)
	}
}

func TestFormatsJSON(t *testing.T) {
	code, out, errs := mwmm(t, "", "formats", "--json")
	if code != 0 {
		t.Fatalf("formats --json: exit %d, stderr %q", code, errs)
	}
	var fs []struct {
		Name         string
		Aliases      []string
		Bits, P      int
		Emin, Emax   int
		MaxFinite    float64  `json:"max_finite"`
		MinNormal    float64  `json:"min_normal"`
		MinSubnormal *float64 `json:"min_subnormal"`
		UnitRoundoff float64  `json:"unit_roundoff"`
		Specials     string
	}
	if err := json.Unmarshal([]byte(out), &fs); err != nil {
		t.Fatalf("formats --json: %v", err)
	}
	if len(fs) != len(format.Builtin()) {
		t.Errorf("formats --json: %d formats, want %d", len(fs), len(format.Builtin()))
	}
	for _, f := range fs {
		if f.Name != "fp16" {
			continue
		}
		if f.Bits != 16 || f.P != 11 || f.Emin != -14 || f.Emax != 15 || f.MaxFinite != 65504 ||
			f.MinNormal != 1.0/16384 || f.MinSubnormal == nil || *f.MinSubnormal != 1.0/16777216 ||
			f.UnitRoundoff != 1.0/2048 || f.Specials != "ieee" || !strings.Contains(strings.Join(f.Aliases, " "), "binary16") {
			t.Errorf("formats --json fp16: %+v", f)
		}
	}
	_, out, _ = mwmm(t, "", "formats", "--json", "e4m3+ftz")
	if !strings.Contains(out, `"min_subnormal": null`) || !strings.Contains(out, `"max_finite": 448`) {
		t.Errorf("formats --json e4m3+ftz:\n%s", out)
	}
}

func TestHelp(t *testing.T) {
	code, _, errs := mwmm(t, "")
	if code != 2 || !strings.Contains(errs, "Commands:") || !strings.Contains(errs, "round") {
		t.Errorf("mwmm with no arguments: exit %d, stderr %q; want 2 and the overview", code, errs)
	}
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		code, out, _ := mwmm(t, "", args...)
		if code != 0 {
			t.Errorf("mwmm %q: exit %d", args, code)
		}
		for _, c := range commands {
			if !strings.Contains(out, c.name) || !strings.Contains(out, c.summary) {
				t.Errorf("mwmm %q does not list %s", args, c.name)
			}
		}
	}

	_, roundHelp, _ := mwmm(t, "", "help", "round")
	for _, s := range []string{"Usage: mwmm round", "--format NAME", "--mode MODE", "(default rne)",
		"--saturate", "--no-subnormals", "--seed SEED", "(default 1)", "sr-bits=N", "ties to even", "Examples:", "mwmm round --format e4m3"} {
		if !strings.Contains(roundHelp, s) {
			t.Errorf("help round does not mention %q", s)
		}
	}
	// -h is the synopsis, help the manual: both start with the usage.
	for _, c := range commands {
		code, h1, _ := mwmm(t, "", "help", c.name)
		code2, h2, _ := mwmm(t, "", c.name, "-h")
		if code != 0 || code2 != 0 || !strings.HasPrefix(h1, "Usage: mwmm "+c.name) || !strings.HasPrefix(h2, "Usage: mwmm "+c.name) ||
			len(h2) >= len(h1) || !strings.Contains(h2, "mwmm help "+c.name) {
			t.Errorf("help %s (exit %d) and %s -h (exit %d): want the manual and a shorter synopsis pointing to it:\n%s\n---\n%s", c.name, code, c.name, code2, h1, h2)
		}
	}
	_, formatsHelp, _ := mwmm(t, "", "formats", "--help")
	if !strings.Contains(formatsHelp, "--json") || !strings.Contains(formatsHelp, "mwmm formats --json") {
		t.Errorf("formats --help:\n%s", formatsHelp)
	}

	code, _, errs = mwmm(t, "", "frobnicate")
	if code != 2 || !strings.Contains(errs, `"frobnicate"`) || !strings.Contains(errs, "formats, round, help") {
		t.Errorf("unknown command: exit %d, stderr %q", code, errs)
	}
	code, _, errs = mwmm(t, "", "help", "frobnicate")
	if code != 2 || !strings.Contains(errs, "formats, round, help") {
		t.Errorf("help for an unknown command: exit %d, stderr %q", code, errs)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

type failReader struct{}

func (failReader) Read([]byte) (int, error) { return 0, errors.New("device gone") }

func TestRuntimeErrors(t *testing.T) {
	var errb bytes.Buffer
	if code := run([]string{"round", "--format", "fp16", "1"}, strings.NewReader(""), failWriter{}, &errb); code != 1 || !strings.Contains(errb.String(), "disk full") {
		t.Errorf("write error: exit %d, stderr %q; want 1", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"round", "--format", "fp16"}, failReader{}, io.Discard, &errb); code != 1 || !strings.Contains(errb.String(), "device gone") {
		t.Errorf("read error: exit %d, stderr %q; want 1", code, errb.String())
	}
}

// Issue 28, defect 6: stdin lines of any length, # comments and a BOM as
// mma eval takes them, and signed NaN as a value, not a flag.
func TestRoundStdinLines(t *testing.T) {
	// 1.5 written with 100,000 characters.
	long := "1.5" + strings.Repeat("0", 99997)
	in := "\uFEFF# a comment\n  # another\n" + long + "\n2\n"
	code, out, errs := mwmm(t, in, "round", "--format", "fp16")
	if code != 0 || out != "1.5\n2\n" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1.5 and 2", code, out, errs)
	}
	code, _, errs = mwmm(t, "1\n"+strings.Repeat("x", 200000)+"\n", "round", "--format", "fp16")
	if code != 1 || !strings.Contains(errs, "line 2") || !strings.Contains(errs, "200000 characters") || len(errs) > 300 {
		t.Errorf("long bad line: exit %d, stderr %.300q", code, errs)
	}
	code, out, errs = mwmm(t, "", "round", "--format", "fp16", "-NaN", "+nan", "-inf")
	if code != 0 || out != "NaN\nNaN\n-Inf\n" {
		t.Errorf("-NaN +nan -inf: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
