package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/mma"
)

func TestMMAList(t *testing.T) {
	// One line a preset; --sources adds the units and their sources.
	code, short, errs := mwmm(t, "", "mma", "list")
	if code != 0 || strings.Count(short, "\n") != len(mma.Units())+2 {
		t.Fatalf("mma list: exit %d, stderr %q; want one line a preset and a note:\n%s", code, errs, short)
	}
	code, out, errs := mwmm(t, "", "mma", "list", "--sources")
	if code != 0 {
		t.Fatalf("mma list --sources: exit %d, stderr %q", code, errs)
	}
	for _, p := range mma.Presets() {
		if !strings.Contains(out, p.Name+": "+p.Summary) || !strings.Contains(short, p.Name+": "+p.Summary+"\n") {
			t.Errorf("mma list does not list %s", p.Name)
		}
		q, err := p.Params(p.Pairs[0][0], p.Pairs[0][1])
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, q.String()+" (default)") {
			t.Errorf("mma list lacks the default unit of %s: %s", p.Name, q)
		}
	}
	// The parameters' sources, and the pairs only the A100 has.
	for _, s := range []string{"not measured", "Extra bits for carry out", "tf32×tf32→fp32", "fp64×fp64→fp64, k=2"} {
		if !strings.Contains(out, s) {
			t.Errorf("mma list does not mention %q", s)
		}
	}

	code, out, _ = mwmm(t, "", "mma", "list", "--json")
	var list []struct {
		Name  string
		Open  bool
		Doc   string
		Units []struct {
			Input, Output, Params string
			Default               bool
		}
	}
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil {
		t.Fatalf("mma list --json: exit %d, %v:\n%s", code, err, out)
	}
	if len(list) != len(mma.Units()) {
		t.Fatalf("mma list --json has %d presets, want %d", len(list), len(mma.Units()))
	}
	for i, p := range mma.Units() {
		j := list[i]
		if j.Name != p.Name || j.Open != p.Open || j.Doc != p.Doc || len(j.Units) != len(p.Pairs) {
			t.Errorf("mma list --json, preset %d: %+v", i, j)
			continue
		}
		for k, u := range j.Units {
			q, _ := p.Describe(p.Pairs[k][0], p.Pairs[k][1])
			if u.Input != p.Pairs[k][0].Name() || u.Output != p.Pairs[k][1].Name() || u.Params != q || u.Default != (k == 0) {
				t.Errorf("mma list --json, %s unit %d: %+v", p.Name, k, u)
			}
		}
	}

	code, out, _ = mwmm(t, "", "mma", "list", "--sources", "T4")
	if code != 0 || !strings.HasPrefix(out, "t4: ") || strings.Contains(out, "v100: ") {
		t.Errorf("mma list T4: exit %d\n%s", code, out)
	}
	if code, _, errs := mwmm(t, "", "mma", "list", "z900"); code != 2 || !strings.Contains(errs, `"z900"`) ||
		strings.Contains(errs, "mma: mma:") || !strings.Contains(errs, "h100-mma.sync") {
		t.Errorf("mma list z900: exit %d, stderr %q; want 2, one prefix, every preset named", code, errs)
	}
	// The instruction-level units are listed as eval takes them.
	code, out, errs = mwmm(t, "", "mma", "list", "h100-mma.sync", "--sources")
	if code != 0 || !strings.HasPrefix(out, "h100-mma.sync: ") || !strings.Contains(out, "e4m3×e4m3→fp32, k=32, emulated") {
		t.Errorf("mma list h100-mma.sync: exit %d\n%s%s", code, out, errs)
	}
	if code, _, errs := mwmm(t, "", "mma", "eval", "--unit", "z900"); code != 2 || strings.Contains(errs, "mma: mma:") {
		t.Errorf("mma eval --unit z900: exit %d, stderr %q", code, errs)
	}
	// The help names every key of a probe's spec.
	_, help, _ := mwmm(t, "", "help", "mma")
	r, _ := probeSpecKeys(t)
	for _, k := range r {
		if !strings.Contains(help, "  "+k+"=") {
			t.Errorf("mwmm help mma does not list %s=", k)
		}
	}
}

// probeSpecKeys are the keys of the spec of a fitted model.
func probeSpecKeys(t *testing.T) ([]string, string) {
	u, _ := mma.Lookup("h100", "", "")
	spec, err := u.Params().Spec()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	_, kv, _ := strings.Cut(spec, ":")
	for _, s := range strings.Split(kv, ",") {
		k, _, _ := strings.Cut(s, "=")
		keys = append(keys, k)
	}
	return keys, spec
}

// Binary32 bit patterns used below.
const (
	one      = "3f800000" // 1
	zero     = "00000000"
	tiny     = "33800000" // 2^-24, the smallest fp16 subnormal
	belowOne = "3f7fffff" // 1-2^-24
)

func rep(s string, n int) string { return strings.TrimSpace(strings.Repeat(s+" ", n)) }

// The expected results are worked out by hand from the units' descriptions
// in numerical-behavior-tensor-cores.txt, not from the model.
func TestMMAEval(t *testing.T) {
	tests := []struct {
		name string
		args []string
		in   string
		want string
	}{
		// "Monotonicity of dot product": c = 1-2^-24 sets the grid at 2^-24,
		// the four 2^-24 add up and the sum normalises to 1+2^-23 (RZ); with
		// c = 1 the grid is 2^-23 and the 2^-24 are truncated away.
		{"non-monotonic", nil, rep(one, 4) + " ; " + rep(tiny, 4) + " ; " + belowOne + "\n" +
			rep(one, 4) + " ; " + rep(tiny, 4) + " ; " + one + "\n",
			"3f800001\n3f800000\n"},
		// k=8 is two blocks on the V100: the first gives 1+2^-23 as above,
		// the second's 2^-24 are truncated against it. (One block of nine
		// terms would give RZ(1+7·2^-24) = 1+3·2^-23 = 3f800003.)
		{"two blocks", []string{"--unit", "v100"}, rep(one, 8) + " ; " + rep(tiny, 8) + " ; " + belowOne, "3f800001\n"},
		// The A100 fuses 8 products, on a grid one bit finer: 1+8·2^-24.
		{"a100 one block", []string{"--unit", "a100"}, rep(one, 8) + " ; " + rep(tiny, 8) + " ; " + one, "3f800004\n"},
		// The T4's extra alignment bit keeps 2^-24 against c = 1: 1+4·2^-24.
		{"t4 extra bit", []string{"--unit", "t4"}, rep(one, 4) + " ; " + rep(tiny, 4) + " ; " + one, "3f800002\n"},
		// "Normalization in subtraction": c = -1+2^-24, products 1 and -2^-24
		// give 2^-23, not 0.
		{"subtraction", nil, rep(one, 4) + " ; " + one + " b3800000 00000000 00000000 ; bf7fffff", "34000000\n"},
		// "Extra bits for carry out": c = 1+2^-22+2^-23 plus 1, 1, 1, 2^-23 is
		// exactly 4+2^-21; c = 1.875 plus 1, 1.5, 1.75, 1.875 is 8 with three
		// carry bits (0 with two).
		{"carries", nil, rep(one, 4) + " ; " + one + " " + one + " " + one + " 34000000 ; 3f800003\n" +
			rep(one, 4) + " ; 3f800000 3fc00000 3fe00000 3ff00000 ; 3ff00000\n",
			"40800001\n41000000\n"},
		// fp16 output: 1+3·2^-11 in fp32, then to nearest fp16, a tie
		// between 1+2^-10 and 1+2^-9 that goes to the even 1+2^-9.
		{"fp16 output", []string{"--output", "fp16"}, rep(one, 3) + " 00000000 ; " + rep("3a000000", 4) + " ; " + one, "3f804000\n"},
		// k=0 gives c; Inf·0 and NaN inputs give NVIDIA's NaN; Inf stays Inf.
		{"specials", nil, " ; ; c0400000\n7f800000 ; 00000000 ; 00000000\n7fc00001 ; 00000000 ; 00000000\nff800000 ; 3f800000 ; 7f7fffff\n",
			"c0400000\n7fffffff\n7fffffff\nff800000\n"},
		// Comments, blank lines, tabs, CRLF, 0x prefixes, ';' next to values,
		// upper-case hex.
		{"syntax", nil, "# a comment\n\n   \n\t0x3F800000\t0X40000000;0x40400000 0x40800000;0x00000000\r\n  # indented comment\n",
			"41300000\n"}, // 1·3 + 2·4 = 11
		// tf32 inputs are any fp32, truncated to tf32 by the A100:
		// 1+0x1fff·2^-23 is below 1+2^-10, above the midpoint: RZ gives 1.
		{"tf32", []string{"--unit", "a100", "--input", "tf32"}, "3f801fff ; 3f800000 ; 00000000", "3f800000\n"},
		// 2·(1+2^-7) + 1+2^-23 = 3+2^-6+2^-23: the grid of the largest term,
		// 2+2^-6, is 2^-23, and RZ into fp32 (ulp 2^-22) drops the 2^-23.
		{"bf16", []string{"--unit", "a100", "--input", "bf16"}, "3f810000 ; 40000000 ; 3f800001", "40410000\n"},
		// The extremes of fp16 are accepted: 65504 = 477fe000, 2^-24.
		{"fp16 range", nil, "477fe000 " + tiny + " ; 3f800000 3f800000 ; 00000000", "477fe000\n"},
	}
	for _, tt := range tests {
		code, out, errs := mwmm(t, tt.in, append([]string{"mma", "eval"}, tt.args...)...)
		if code != 0 || out != tt.want {
			t.Errorf("%s: mma eval %q\n%s\nexit %d, stderr %q, got\n%swant\n%s", tt.name, tt.args, tt.in, code, errs, out, tt.want)
		}
	}
}

func TestMMAEvalErrors(t *testing.T) {
	const good = "3f800000 ; 3f800000 ; 3f800000\n" // 2
	tests := []struct {
		args   []string
		in     string
		code   int
		out    string // the results before the bad line
		errors []string
	}{
		{nil, good + "# comment\n3f80000g ; 3f800000 ; 00000000\n" + good, 1, "40000000\n", []string{"line 3:", `"3f80000g"`, "8 hex digits"}},
		{nil, "3c00 ; 3c00 ; 00000000\n", 1, "", []string{"line 1:", `"3c00"`}},
		{nil, "3f8000000 ; 3f800000 ; 00000000\n", 1, "", []string{"line 1:", `"3f8000000"`}},
		{nil, good + good + "3f800000 3f800000 ; 3f800000 ; 00000000\n", 1, "40000000\n40000000\n", []string{"line 3:", "2 values of a but 1 of b"}},
		{nil, good + "3f800000 3f800000 3f800000\n", 1, "40000000\n", []string{"line 2:", "found 0 ';'"}},
		{nil, "3f800000 ; 3f800000 00000000\n", 1, "", []string{"line 1:", "found 1 ';'"}},
		{nil, "3f800000 ; 3f800000 ;\n", 1, "", []string{"line 1:", "no value of c"}},
		{nil, "3f800000 ; 3f800000 ; 00000000 00000000\n", 1, "", []string{"line 1:", "more than one value of c"}},
		{nil, "3f800000 ; 3f800000 ; 00000000 ; 00000000\n", 1, "", []string{"line 1:", "more than two ';'"}},
		{nil, good + "3f800000 3f800000 ; 3f800000 3f800001 ; 00000000\n", 1, "40000000\n", []string{"line 2:", "b_2 = 3f800001 (1.0000001) is not a value of fp16"}},
		// 65536 is above fp16's max finite 65504, 2^-25 below its smallest subnormal.
		{nil, "47800000 ; 00000000 ; 00000000\n", 1, "", []string{"line 1:", "a_1 = 47800000 (65536) is not a value of fp16"}},
		{nil, "00000000 00000000 ; 00000000 33000000 ; 00000000\n", 1, "", []string{"line 1:", "b_2 = 33000000 (2.9802322e-08)"}},
		{[]string{"--output", "fp16"}, good + "00000000 ; 00000000 ; 3f800001\n", 1, "40000000\n", []string{"line 2:", "c = 3f800001", "not a value of fp16"}},
		{[]string{"--unit", "a100", "--input", "bf16"}, "3f800001 ; 00000000 ; 00000000\n", 1, "", []string{"line 1:", "not a value of bf16"}},
		{[]string{"--unit", "z900"}, good, 2, "", []string{`"z900"`, "v100"}},
		{[]string{"--unit", "a100", "--input", "fp64"}, good, 2, "", []string{"fp64", "fp32 values only"}},
		{[]string{"--unit", "v100", "--input", "bf16"}, good, 2, "", []string{"v100 has no bf16→fp32 unit"}},
		{[]string{"--unit", "v100:extra=x"}, good, 2, "", []string{"extra=x"}},
		{[]string{"--input", "fp17"}, good, 2, "", []string{"fp17"}},
		{[]string{"cases.txt"}, good, 2, "", []string{"no arguments"}},
	}
	for _, tt := range tests {
		code, out, errs := mwmm(t, tt.in, append([]string{"mma", "eval"}, tt.args...)...)
		ok := code == tt.code && out == tt.out
		for _, s := range tt.errors {
			ok = ok && strings.Contains(errs, s)
		}
		if !ok {
			t.Errorf("mma eval %q\n%s: exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr with %q",
				tt.args, tt.in, code, out, errs, tt.code, tt.out, tt.errors)
		}
	}
	for _, args := range [][]string{{"mma"}, {"mma", "run"}} {
		if code, _, errs := mwmm(t, "", args...); code != 2 || !strings.Contains(errs, "list or eval") {
			t.Errorf("%q: exit %d, stderr %q; want 2", args, code, errs)
		}
	}
	var errb bytes.Buffer
	if code := run([]string{"mma", "eval"}, strings.NewReader(good), failWriter{}, &errb); code != 1 || !strings.Contains(errb.String(), "disk full") {
		t.Errorf("write error: exit %d, stderr %q; want 1", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"mma", "eval"}, failReader{}, io.Discard, &errb); code != 1 || !strings.Contains(errb.String(), "device gone") {
		t.Errorf("read error: exit %d, stderr %q; want 1", code, errb.String())
	}
}

// randomCases writes n cases of random length (up to maxK) with a and b drawn
// by in and c by out, and returns them with the inputs as Dot takes them.
type evalCase struct {
	a, b []float64
	c    float64
}

func randomCases(r *rand.Rand, n, maxK int, in, out func() uint32) (string, []evalCase) {
	var sb strings.Builder
	cases := make([]evalCase, n)
	val := func(x uint32) float64 {
		fmt.Fprintf(&sb, "%08x ", x)
		return float64(math.Float32frombits(x))
	}
	for i := range cases {
		k := r.IntN(maxK + 1)
		cs := &cases[i]
		for range k {
			cs.a = append(cs.a, val(in()))
		}
		sb.WriteString("; ")
		for range k {
			cs.b = append(cs.b, val(in()))
		}
		sb.WriteString("; ")
		cs.c = val(out())
		sb.WriteString("\n")
	}
	return sb.String(), cases
}

// fp16Bits returns the fp32 bits of a random fp16 value; one in 64 is
// an Inf or a NaN.
func fp16Bits(r *rand.Rand) uint32 {
	code := uint64(r.Uint32() & 0xffff)
	if r.IntN(64) != 0 {
		code &^= 0x4000 // exponent field below 31: finite, and sums stay finite
	}
	x, err := format.Binary16.Decode(code)
	if err != nil {
		panic(err)
	}
	return math.Float32bits(float32(x))
}

// binary32Bits returns random fp32 bits, mostly of moderate magnitude.
func binary32Bits(r *rand.Rand) uint32 {
	x := r.Uint32()
	if r.IntN(64) != 0 {
		x = x&0x80ffffff | uint32(112+r.IntN(32))<<23
	}
	return x
}

func canon(d float64) string {
	if d != d {
		return "7fffffff"
	}
	return fmt.Sprintf("%08x", math.Float32bits(float32(d)))
}

// Eval must give Dot's bits, case by case, in order, across chunks and
// batches, with lines of different k.
func TestMMAEvalMatchesDot(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fp16 := func() uint32 { return fp16Bits(r) }
	bf16 := func() uint32 { return binary32Bits(r) &^ 0xffff }
	b32 := func() uint32 { return binary32Bits(r) }
	tests := []struct {
		unit, input, output string
		in, out             func() uint32
	}{
		{"v100", "", "", fp16, b32},
		{"v100", "", "fp16", fp16, fp16},
		{"t4", "", "", fp16, b32},
		{"a100", "", "", fp16, b32},
		{"a100", "bf16", "", bf16, b32},
		{"a100", "tf32", "", b32, b32},
		{"ieee", "", "", fp16, b32},
		{"exact", "bf16", "", bf16, b32},
		{"t4:extra=2,carry=2", "", "", fp16, b32},
	}
	for _, tt := range tests {
		u, err := mma.Lookup(tt.unit, tt.input, tt.output)
		if err != nil {
			t.Fatal(err)
		}
		// 40000 lines of up to 20 values: about 6 MB, many chunks.
		in, cases := randomCases(r, 40000, 20, tt.in, tt.out)
		var want strings.Builder
		for _, cs := range cases {
			want.WriteString(canon(u.Dot(cs.a, cs.b, cs.c)) + "\n")
		}
		var out bytes.Buffer
		if err := evalCases(u, strings.NewReader(in), &out); err != nil {
			t.Fatalf("%s: %v", u.Name(), err)
		}
		got, wantLines := lines(out.String()), lines(want.String())
		if len(got) != len(wantLines) {
			t.Fatalf("%s: %d results for %d cases", u.Name(), len(got), len(wantLines))
		}
		bad := 0
		for i := range got {
			if got[i] != wantLines[i] && bad < 5 {
				bad++
				t.Errorf("%s, line %d: eval %s, Dot %s", u.Name(), i+1, got[i], wantLines[i])
			}
		}
	}
}

// Reads that end anywhere in a line give the same results.
func TestMMAEvalShortReads(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	in, _ := randomCases(r, 500, 12, func() uint32 { return fp16Bits(r) }, func() uint32 { return binary32Bits(r) })
	u, err := mma.Lookup("v100", "", "")
	if err != nil {
		t.Fatal(err)
	}
	var want, got, got2 bytes.Buffer
	if err := evalCases(u, strings.NewReader(in), &want); err != nil {
		t.Fatal(err)
	}
	if err := evalCases(u, iotest.OneByteReader(strings.NewReader(in)), &got); err != nil {
		t.Fatal(err)
	}
	// No final newline.
	if err := evalCases(u, iotest.HalfReader(strings.NewReader(strings.TrimSuffix(in, "\n"))), &got2); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() || got2.String() != want.String() {
		t.Errorf("short reads change the results")
	}
}

// b32Check must agree with IsRepresentable (of the format with subnormals)
// on every kind of fp32.
func TestB32Check(t *testing.T) {
	fmts := append(format.Builtin()[1:], format.Binary16.WithSubnormals(false), format.E4M3.WithSaturation(true))
	for _, name := range []string{"custom:p=5,emin=-130,emax=20", "custom:p=24,emin=-126,emax=127,subnormals=off", "p3109-k6p3", "custom:p=3,emin=-140,emax=0"} {
		f, err := format.Parse(name)
		if err != nil {
			t.Fatal(err)
		}
		fmts = append(fmts, f)
	}
	r := rand.New(rand.NewPCG(5, 6))
	var xs []uint32
	for e := uint32(0); e < 256; e++ {
		for j := 0; j < 23; j++ {
			xs = append(xs, e<<23, e<<23|1<<j, e<<23|(1<<23-1)>>j, e<<23|(1<<23-1)<<j&(1<<23-1))
		}
		for range 64 {
			xs = append(xs, e<<23|r.Uint32()&(1<<23-1)>>r.IntN(23))
		}
	}
	for _, f := range fmts {
		if !holdsBinary32(f) {
			t.Errorf("%s: not within fp32", f.Name())
			continue
		}
		c := newB32Check(f, false)
		ref := f.WithSubnormals(true)
		for _, x := range xs {
			for _, s := range []uint32{0, 1 << 31} {
				v := float64(math.Float32frombits(x | s))
				if got, want := c.ok(x|s), ref.IsRepresentable(v); got != want {
					t.Errorf("%s: %08x (%g): check says %v, IsRepresentable %v", f.Name(), x|s, v, got, want)
				}
			}
		}
	}
	if holdsBinary32(format.Binary64) || holdsBinary32(mustParse(t, "custom:p=11,emin=-140,emax=15")) {
		t.Errorf("holdsBinary32 accepts formats wider than fp32")
	}
}

func mustParse(t *testing.T, name string) format.Format {
	f, err := format.Parse(name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// BenchmarkMMAEval measures eval on 100k fp16 cases of k=16 (about 300
// bytes a line) on the V100 unit.
func BenchmarkMMAEval(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	const n = 100000
	var sb strings.Builder
	for range n {
		for part := range 3 {
			m := 16
			if part == 2 {
				m = 1
			}
			for range m {
				x := fp16Bits(r)
				if x&0x7f800000 == 0x7f800000 {
					x = 0x3f800000
				}
				fmt.Fprintf(&sb, "%08x ", x)
			}
			if part < 2 {
				sb.WriteString("; ")
			}
		}
		sb.WriteString("\n")
	}
	in := []byte(sb.String())
	u, err := mma.Lookup("v100", "", "")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if err := evalCases(u, bytes.NewReader(in), io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "cases/s")
}

// A bad line deep in a long input is reported with its number, after the
// results of every line before it.
func TestMMAEvalLateError(t *testing.T) {
	const good = "3f800000 3f800000 ; 3f800000 40000000 ; 3f800000\n" // 4
	in := "# header\n" + strings.Repeat(good, 29999) + "\n" + "3f800000 ; 3f800000 ; 3c00\n" + good
	for _, r := range []io.Reader{strings.NewReader(in), iotest.HalfReader(strings.NewReader(in))} {
		u, err := mma.Lookup("v100", "", "")
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		err = evalCases(u, r, &out)
		if err == nil || !strings.HasPrefix(err.Error(), "line 30002: ") || out.String() != strings.Repeat("40800000\n", 29999) {
			t.Errorf("error %v after %d results", err, len(lines(out.String())))
		}
	}
}
