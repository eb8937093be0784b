package main

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/format"
)

// checkBoundOutput checks that out shows each term of r with its value in
// %.3g, the total and the dominant term.
func checkBoundOutput(t *testing.T, args []string, out string, r bound.Result) {
	t.Helper()
	ls := lines(out)
	for i, l := range ls {
		if strings.Contains(l, "TERM") {
			ls = ls[i+1:] // the table of terms
			break
		}
	}
	find := func(prefix string) string {
		for _, l := range ls {
			if strings.HasPrefix(strings.TrimSpace(l), prefix) {
				return strings.TrimSpace(l)
			}
		}
		t.Errorf("%q: no line starting with %q in\n%s", args, prefix, out)
		return ""
	}
	for _, term := range r.Terms {
		l := find(term.Name + " ")
		want := term.Formula + " " + strconv.FormatFloat(term.Value, 'g', 3, 64)
		if got := strings.Join(strings.Fields(strings.TrimPrefix(l, term.Name)), " "); got != want {
			t.Errorf("%q: term %s: %q, want %q", args, term.Name, got, want)
		}
	}
	if l := find("total "); !strings.HasSuffix(l, " "+strconv.FormatFloat(r.Total, 'g', 3, 64)) {
		t.Errorf("%q: %q, want the total %.3g", args, l, r.Total)
	}
	if !strings.Contains(out, ": "+r.Dominant+"\n") {
		t.Errorf("%q: no dominant term %q in\n%s", args, r.Dominant, out)
	}
}

func TestBoundMultiword(t *testing.T) {
	fp16 := bound.U(format.Binary16, format.NearestEven)
	bf16 := bound.U(format.BFloat16, format.NearestEven)
	fp32 := bound.U(format.Binary32, format.NearestEven)
	fp32rz := bound.U(format.Binary32, format.TowardZero)
	for _, tt := range []struct {
		args  []string
		m     bound.Multiword
		texts []string
	}{
		{[]string{"--low", "fp16", "--high", "fp32", "-p", "2", "-n", "1e6"},
			bound.Multiword{ULow: fp16, UHigh: fp32, P: 2, N: 1e6},
			[]string{"u_low = 2^-11 (rne)", "u_high = 2^-24 (rne)", "3 products", "n             1000000", "(eq. 2.7)", ": n × 2^-24\n"}},
		{[]string{"--low", "fp16", "-p", "2", "-n", "1e6", "--mode-high", "rz"},
			bound.Multiword{ULow: fp16, UHigh: fp32rz, P: 2, N: 1e6},
			[]string{"u_high = 2^-23 (rz)", ": n × 2^-23\n"}},
		{[]string{"--low", "fp16", "-p", "2", "-n", "1e6", "--mode-high", "rz", "--fabsum", "v2", "-b", "256"},
			bound.Multiword{ULow: fp16, UHigh: fp32rz, P: 2, N: 1e6, Sum: bound.FABsumV2, B: 256},
			[]string{"FABsum-v2", "b = 256", "256 × 2^-23 + n/256 × 2^-53"}},
		// groups of 8 block sums in fp32 before fp64 (the GPU defaults' group=8)
		{[]string{"-n", "1e6", "--fabsum", "v2", "-b", "32", "--group", "8"},
			bound.Multiword{ULow: fp16, UHigh: fp32, P: 2, N: 1e6, Sum: bound.FABsumV2, B: 32, Group: 8},
			[]string{"groups of 8 block sums in fp32", ": 39 × 2^-24 + n/256 × 2^-53\n"}},
		// ... and into a TwoSum pair
		{[]string{"-n", "1e6", "--fabsum", "pair", "-b", "32", "--group", "16"},
			bound.Multiword{ULow: fp16, UHigh: fp32, P: 2, N: 1e6, Sum: bound.FABsumPair, B: 32, Group: 16},
			[]string{"groups of 16 block sums in fp32", "into a pair", ": 47 × 2^-24 + (n/512)² × 2^-48\n"}},
		// --fabsum without -b: b = 256.
		{[]string{"-n", "65536", "--fabsum", "v1"},
			bound.Multiword{ULow: fp16, UHigh: fp32, P: 2, N: 65536, Sum: bound.FABsumV1, B: 256},
			[]string{"FABsum-v1", "(256 + n/256) × 2^-24"}},
		// the TwoSum pair: the inter-block term is of second order.
		{[]string{"--low", "fp16", "-p", "2", "-n", "1e6", "--fabsum", "pair", "-b", "64"},
			bound.Multiword{ULow: fp16, UHigh: fp32, P: 2, N: 1e6, Sum: bound.FABsumPair, B: 64},
			[]string{"summation     FABsum-pair: blocks of b = 64 products", "pair (hi, lo) of fp32 by TwoSum", ": 64 × 2^-24 + (n/64)² × 2^-48\n"}},
		{[]string{"-n", "1e6", "--fabsum", "pair", "--prob", "--mode-high", "rz"},
			bound.Multiword{ULow: fp16, UHigh: fp32rz, P: 2, N: 1e6, Sum: bound.FABsumPair, B: 256, Probabilistic: true},
			[]string{"FABsum-pair", "b = 256", "16 × 2^-23 + n/256 × 2^-46"}},
		{[]string{"--low", "bf16", "-p", "3", "-n", "4096", "--all"},
			bound.Multiword{ULow: bf16, UHigh: fp32, P: 3, N: 4096, AllProducts: true},
			[]string{"9 products", "(all)", "(eq. 2.5)"}},
		{[]string{"--low", "bf16", "-p", "2", "-n", "0x1p20", "--prob"},
			bound.Multiword{ULow: bf16, UHigh: fp32, P: 2, N: 1 << 20, Probabilistic: true},
			[]string{"probabilistic", "3 × 2^-16 + √n × 2^-24"}},
		{[]string{"--low", "e4m3", "--mode-low", "rz", "-p", "1", "-n", "64"},
			bound.Multiword{ULow: 0x1p-3, UHigh: fp32, P: 1, N: 64},
			[]string{"u_low = 2^-3 (rz)", "1 product ", "2 × 2^-3 + n × 2^-24"}},
	} {
		code, out, errs := mwmm(t, "", append([]string{"bound"}, tt.args...)...)
		if code != 0 {
			t.Errorf("%q: exit %d, %s", tt.args, code, errs)
			continue
		}
		r, err := tt.m.Bound()
		if err != nil {
			t.Fatal(err)
		}
		checkBoundOutput(t, tt.args, out, r)
		for _, s := range tt.texts {
			if !strings.Contains(out, s) {
				t.Errorf("%q: no %q in\n%s", tt.args, s, out)
			}
		}
	}
	// Probabilistic with round toward zero: a warning.
	if _, out, _ := mwmm(t, "", "bound", "-n", "1e6", "--prob", "--mode-high", "rz"); !strings.Contains(out, "note: the accumulation rounds with rz") {
		t.Errorf("--prob with rz: no note in\n%s", out)
	}
	// n·u_high ≥ 1.
	if code, out, _ := mwmm(t, "", "bound", "-n", "1e8"); code != 0 || !strings.Contains(out, "+Inf") || !strings.Contains(out, "says nothing") {
		t.Errorf("n = 1e8: exit %d\n%s", code, out)
	}
}

func TestBoundJSON(t *testing.T) {
	code, out, errs := mwmm(t, "", "bound", "--low", "fp16", "-p", "2", "-n", "1e6", "--fabsum", "v2", "-b", "128", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got struct {
		Low, High string
		ModeHigh  string `json:"mode_high"`
		Multiword bound.Multiword
		Result    struct {
			Terms []struct {
				Name, Formula string
				Value         float64
			}
			Total    float64
			Dominant string
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	m := bound.Multiword{ULow: 0x1p-11, UHigh: 0x1p-24, P: 2, N: 1e6, Sum: bound.FABsumV2, B: 128}
	r, _ := m.Bound()
	if got.Low != "fp16" || got.High != "fp32" || got.ModeHigh != "rne" || got.Multiword != m ||
		got.Result.Total != r.Total || got.Result.Dominant != r.Dominant || len(got.Result.Terms) != 3 ||
		got.Result.Terms[2].Value != r.Terms[2].Value {
		t.Errorf("JSON %+v, want %+v and %+v", got, m, r)
	}
	// The pair is written by name.
	code, out, errs = mwmm(t, "", "bound", "-n", "65536", "--fabsum", "pair", "-b", "64", "--json")
	if code != 0 || !strings.Contains(out, `"summation": "pair"`) {
		t.Errorf("--fabsum pair --json: exit %d, %s\n%s", code, errs, out)
	}
	// +Inf as a string.
	code, out, _ = mwmm(t, "", "bound", "-n", "1e9", "--json")
	if code != 0 || !strings.Contains(out, `"total": "+Inf"`) {
		t.Errorf("infinite bound as JSON: exit %d\n%s", code, out)
	}
}

func TestBoundTable(t *testing.T) {
	code, out, errs := mwmm(t, "", "bound", "--table")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	text := norm(out)
	// The paper's Table 2.1, row by row.
	for _, row := range []string{
		"2^-24 (fp32) 2^-11 (fp16) p = 1 fp16 1 2 × 2^-11 + n × 2^-24",
		"p = 2 double-fp16 3 n × 2^-24",
		"2^-8 (bf16) p = 1 bf16 1 2 × 2^-8 + n × 2^-24",
		"p = 2 double-bf16 3 3 × 2^-16 + n × 2^-24",
		"p = 3 triple-bf16 6 n × 2^-24",
		"2^-11 (tf32) p = 1 tf32 1 2 × 2^-11 + n × 2^-24",
		"p = 4 quadruple-e4m3 10 5 × 2^-16 + n × 2^-24",
		"p = 2 double-e5m2 3 3 × 2^-6 + n × 2^-24",
	} {
		if !strings.Contains(text, row) {
			t.Errorf("--table lacks %q:\n%s", row, out)
		}
	}
	if !strings.Contains(out, "u_high") || !strings.Contains(out, "products") {
		t.Errorf("--table has no header:\n%s", out)
	}
	// Columns line up: "bound" starts in the same column on every row.
	ls := lines(out)
	col := -1
	for _, l := range ls {
		if i := strings.Index(l, "n × 2^-24"); i >= 0 {
			i = len([]rune(l[:strings.LastIndex(l, "  ")]))
			if col >= 0 && i != col {
				t.Errorf("--table: misaligned row %q", l)
			}
			col = i
		}
	}

	code, out, _ = mwmm(t, "", "bound", "--table", "--json")
	var rows []bound.Table21Row
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil || len(rows) != len(bound.Table21()) || rows[1].Dominant != "n × 2^-24" {
		t.Errorf("--table --json: exit %d, %v, %+v", code, err, rows)
	}
}

func TestBoundNarrow(t *testing.T) {
	// The narrow-range slides' example: e4m3 into fp16, no subnormals, n = 4.
	args := []string{"bound", "--narrow", "--low", "e4m3+ftz", "--high", "fp16+ftz", "-p", "1", "-n", "4"}
	code, out, errs := mwmm(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	theta := math.Sqrt(65504.0 / 4)
	nr := bound.NarrowRange{U: 0x1p-4, UHigh: 0x1p-11, N: 4, P: 1, Theta: theta, GMin: 0x1p-7, GMinHigh: 0x1p-15, FMax: 448, FMaxHigh: 65504}
	r, err := nr.Bound()
	if err != nil {
		t.Fatal(err)
	}
	checkBoundOutput(t, args, out, r)
	for _, s := range []string{"θ             127.969", "g_min = 2^-7", "G_min = 2^-15", "‖Ĉ − AB‖_∞", "2 × 2^-4"} {
		if !strings.Contains(out, s) {
			t.Errorf("no %q in\n%s", s, out)
		}
	}
	// --theta 127, as the slides round it; and two words.
	args = append(args, "--theta", "127")
	args[7] = "2"
	_, out, _ = mwmm(t, "", args...)
	nr.Theta, nr.P = 127, 2
	r, _ = nr.Bound()
	checkBoundOutput(t, args, out, r)
	if !strings.Contains(out, "127 (given)") {
		t.Errorf("--theta 127:\n%s", out)
	}
	// With subnormals: g_min = u·f_min; directed rounding doubles u and g_min.
	code, out, _ = mwmm(t, "", "bound", "--narrow", "--low", "e4m3", "--high", "fp16", "--mode-high", "rz", "-p", "1", "-n", "4", "--json")
	var got struct {
		NarrowRange bound.NarrowRange `json:"narrow_range"`
		Result      struct{ Total float64 }
	}
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
		t.Fatalf("exit %d, %v\n%s", code, err, out)
	}
	want := bound.NarrowRange{U: 0x1p-4, UHigh: 0x1p-10, N: 4, P: 1, Theta: theta, GMin: 0x1p-10, GMinHigh: 0x1p-24, FMax: 448, FMaxHigh: 65504}
	if got.NarrowRange != want {
		t.Errorf("narrow range with subnormals, rz: %+v, want %+v", got.NarrowRange, want)
	}
}

func TestBoundErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-n", "1e6", "--low", "fp7"},
		{"-n", "1e6", "--high", "nope"},
		{"-n", "1e6", "--mode-high", "sideways"},
		{"-n", "1e6", "--mode-low", "x"},
		{"-n", "1e6", "-p", "0"},
		{"-n", "1e6", "-p", "-2"},
		{"-n", "0"},
		{"-n", "-5"},
		{"-n", "0.5"},
		{"-n", "1.5"},
		{"-n", "inf"},
		{"-n", "abc"},
		{"-p", "2"}, // no -n
		{"-n", "1e6", "--fabsum", "v3"},
		{"-n", "1e6", "--fabsum", "v1", "-b", "2e6"},
		{"-n", "1e6", "--fabsum", "v2", "-b", "0"},
		{"-n", "1e6", "--fabsum", "v2", "-b", "x"},
		{"-n", "1e6", "--fabsum", "v1", "--group", "8"},
		{"-n", "1e6", "--fabsum", "v2", "--group", "0"},
		{"-n", "1e6", "-b", "128"}, // -b without FABsum
		{"-n", "1e6", "--fabsum", "pair", "-b", "2e6"},
		{"--narrow", "-n", "4", "--fabsum", "pair"},
		{"-n", "1e6", "--theta", "127"},
		{"--table", "--low", "fp16"},
		{"--table", "-n", "5"},
		{"--narrow", "-n", "4", "--all"},
		{"--narrow", "-n", "4", "--fabsum", "v1"},
		{"--narrow", "-n", "4", "--prob"},
		{"--narrow", "-n", "4", "--theta", "-1"},
		{"--narrow", "-n", "4", "--theta", "0"},
		{"--narrow", "-n", "4", "--low", "e4m3", "--high", "fp16", "--theta", "449"}, // > f_max
		{"--narrow", "-n", "4", "--low", "e4m3", "--high", "fp16", "--theta", "128"}, // 4·128² > F_max
		{"--narrow", "-n", "4", "--low", "fp7"},
		{"-n", "1e6", "extra"},
		{"--frobnicate"},
	} {
		code, out, errs := mwmm(t, "", append([]string{"bound"}, args...)...)
		if code != 2 || errs == "" || out != "" {
			t.Errorf("bound %q: exit %d, stdout %q, stderr %q; want exit 2 and a message", args, code, out, errs)
		}
	}
	// The message for -b names every FABsum summation.
	if _, _, errs := mwmm(t, "", "bound", "-n", "1e6", "-b", "128"); !strings.Contains(errs, "--fabsum v1, v2 or pair") {
		t.Errorf("-b without FABsum: %q, want it to name v1, v2 and pair", errs)
	}
	code, out, _ := mwmm(t, "", "help", "bound")
	for _, s := range []string{"Usage: mwmm bound", "--low FORMAT", "(default fp32)", "--mode-high MODE", "rz", "u_high doubles",
		"--fabsum SUMMATION", "v1|v2|pair", "TwoSum", "--fabsum pair", "(default 256)", "--prob", "--table", "--narrow", "--theta T", "|C − Ĉ| ≤ c·|A||B|", "Examples:"} {
		if !strings.Contains(out, s) {
			t.Errorf("help bound: exit %d, no %q", code, s)
		}
	}
}

// A flag that the mode chosen (--lu, --table, --narrow, or the multiword
// bound) does not read is refused by name: the first in alphabetical
// order, every time (the flags were a map, and the name changed from run
// to run), and for the multiword bound with the mode that reads it.
func TestBoundModeFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--narrow", "--low", "e4m3", "--high", "fp32", "-n", "100", "--lu"}, "--high does not go with --lu"},
		{[]string{"--table", "--unit", "v100", "--narrow"}, "--narrow does not go with --table"},
		{[]string{"--narrow", "-n", "4", "--prob", "--all"}, "--all does not go with --narrow"},
		{[]string{"-n", "5", "--unit", "a100"}, "--unit goes with --lu"},
		{[]string{"-n", "5", "--nb", "8"}, "--nb goes with --lu"},
		{[]string{"-n", "5", "--theta", "3"}, "--theta goes with --narrow"},
	} {
		for range 5 {
			code, _, errs := mwmm(t, "", append([]string{"bound"}, c.args...)...)
			if code != exitUsage || !strings.Contains(errs, c.want) {
				t.Fatalf("bound %q: exit %d, stderr %q; want %q", c.args, code, errs, c.want)
			}
		}
	}
	// A mode flag given as false chooses nothing.
	if code, out, errs := mwmm(t, "", "bound", "--lu=false", "--table=false", "-n", "5"); code != 0 || !strings.Contains(out, "componentwise bound") {
		t.Errorf("--lu=false --table=false: exit %d, %s%s", code, out, errs)
	}
}
