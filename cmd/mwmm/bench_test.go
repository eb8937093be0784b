package main

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/gemm"
)

func TestBenchErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--sizes", "8"}, "not a size"},
		{[]string{"bench", "--reps", "0"}, "--reps"},
		{[]string{"bench", "--accuracy", "12..10"}, "--accuracy"},
		{[]string{"bench", "extra"}, "unexpected"},
		{[]string{"bench", "--dists", "4"}, `unknown distribution "4"`},
		{[]string{"bench", "--dists", "0,cauchy"}, `unknown distribution "cauchy"`},
		{[]string{"bench", "--dists", ""}, "unknown distribution"},
		{[]string{"bench", "--methods", "double-fp17"}, `--methods: "double-fp17" is neither`},
		{[]string{"bench", "--methods", "b=64"}, `"b=64" is neither`},
		{[]string{"bench", "--methods", "double-fp16:sum=v9"}, "v9"},
		{[]string{"bench", "--methods", "sgemm,,fp16"}, "empty item"},
	} {
		code, _, errOut := mwmm(t, "", c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, %q; want exit 2 and %q", c.args, code, errOut, c.want)
		}
	}
	if gpu.Available() == nil {
		t.Skip("a GPU is present: the no-GPU message is not shown")
	}
	code, _, errOut := mwmm(t, "", "bench")
	if code != exitFailure || !strings.Contains(errOut, "no GPU to benchmark") {
		t.Errorf("bench without a GPU: exit %d, %q", code, errOut)
	}
	code, _, errOut = mwmm(t, "", "bench", "--methods", "fp16:sum=v2,b=128,hgemm", "--dists", "(0,1],logu")
	if code != exitFailure || !strings.Contains(errOut, "no GPU to benchmark") {
		t.Errorf("bench --methods --dists without a GPU: exit %d, %q", code, errOut)
	}
}

func TestBenchHelp(t *testing.T) {
	code, out, _ := mwmm(t, "", "help", "bench")
	if code != exitOK {
		t.Fatalf("help bench: exit %d", code)
	}
	for _, want := range []string{"--methods", "--dists", "    --methods double-fp16,", "--dists normal,logu:3", "sgemm is always measured",
		"ratios to its time", "log-uniform ±[1e-3,1e3]", "double-fp16-fabsum", "sum=pair,b=128", "2× better"} {
		if !strings.Contains(out, want) {
			t.Errorf("help bench lacks %q", want)
		}
	}
}

func methodNames(ms []gemm.Method) []string {
	var s []string
	for _, m := range ms {
		s = append(s, m.Name)
	}
	return s
}

func TestParseMethods(t *testing.T) {
	all := methodNames(gemm.Methods())
	for _, c := range []struct {
		list string
		want []string
	}{
		{"all", all},
		{"ALL", all},
		{"sgemm", []string{"sgemm"}},
		{"hgemm", []string{"sgemm", "hgemm"}},
		{"fp16, sgemm ,fp16", []string{"fp16", "sgemm"}}, // listed: kept where it is
		{"double-fp16,double-fp16:sum=v2,b=256", []string{"sgemm", "double-fp16", "double-fp16:sum=v2,b=256"}},
		{"double-fp16:scale=on,shift=11,first=on,sum=v1,b=64,fp16:sum=v2,b=128,dgemm",
			[]string{"sgemm", "double-fp16:scale=on,shift=11,first=on,sum=v1,b=64", "fp16:sum=v2,b=128", "dgemm"}},
		{"double-fp16-fabsum", []string{"sgemm", "double-fp16-fabsum"}}, // a bench method: known even if multiword is not
		{"all,3xtf32", append(slices.Clone(all), "3xtf32")},
	} {
		ms, err := parseMethods(c.list)
		if err != nil {
			t.Errorf("parseMethods(%q): %v", c.list, err)
			continue
		}
		if got := methodNames(ms); !slices.Equal(got, c.want) {
			t.Errorf("parseMethods(%q) = %q, want %q", c.list, got, c.want)
		}
		for _, m := range ms {
			base := slices.ContainsFunc(gemm.Baselines, func(b gemm.Method) bool { return b.Name == m.Name })
			want, err := gemm.ParseMethod(m.Name)
			if base != (m.Variant == "") || !base && (err != nil || m != want) {
				t.Errorf("parseMethods(%q): method %+v, want %+v (%v)", c.list, m, want, err)
			}
		}
	}
}

func TestParseDists(t *testing.T) {
	for _, c := range []struct {
		list string
		want []int
	}{
		{"all", []int{0, 1, 2, 3}},
		{"0", []int{0}},
		{"3,0", []int{3, 0}},
		{"(0,1],(-0.5,0.5]", []int{0, 1}},
		{" normal , log-uniform ±[1e-3,1e3]", []int{2, 3}},
		{"uniform,CENTERED,logu,log-uniform,3", []int{0, 1, 3}},
	} {
		got, err := parseDists(c.list)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("parseDists(%q) = %v, %v; want %v", c.list, got, err, c.want)
		}
	}
	for _, bad := range []string{"4", "-1", "gauss", "(0,1", "0,,1"} {
		if _, err := parseDists(bad); err == nil || !strings.Contains(err.Error(), "unknown distribution") {
			t.Errorf("parseDists(%q): %v, want an unknown-distribution error", bad, err)
		}
	}
}

func acc(method string, n int, cw float64) gemm.Accuracy {
	return gemm.Accuracy{Method: method, N: n, Componentwise: cw}
}

func TestWorstRatios(t *testing.T) {
	const k = 1 << 10
	in := []gemm.Accuracy{
		acc("sgemm", k, 1e-7), acc("a", k, 0.5e-7), acc("b", k, 3e-7), acc("c", k, 0), acc("d", k, 1e-7),
		acc("sgemm", 1<<16, 2e-7), acc("a", 1<<16, 1e-7), acc("b", 1<<16, 1e-7), acc("c", 1<<16, 0), acc("d", 1<<16, 1.8e-7),
		acc("sgemm", 1<<17, 4e-7), acc("a", 1<<17, 1e-7), acc("b", 1<<17, 5e-7), acc("c", 1<<17, 1e-7), acc("d", 1<<17, math.Inf(1)),
		acc("e", 1<<18, 1e-7), // no sgemm at 2^18: nothing to compare
		acc("f", k, 1e-7), acc("f", 1<<17, 1e-7),
	}
	got := worstRatios(in, []string{"a", "sgemm", "b", "c", "d", "e", "f", "g"}, "sgemm", 1<<16)
	want := []errorRatio{
		{method: "a", worst: 0.5, worstN: k, threshold: 1 << 16, large: 0.5, largeN: 1 << 16},
		{method: "b", worst: 3, worstN: k, threshold: 1 << 16, large: 1.25, largeN: 1 << 17},
		{method: "c", worst: 0.25, worstN: 1 << 17, threshold: 1 << 16, large: 0.25, largeN: 1 << 17},
		{method: "d", worst: math.Inf(1), worstN: 1 << 17, threshold: 1 << 16, large: math.Inf(1), largeN: 1 << 17},
		{method: "e", threshold: 1 << 16},
		{method: "f", worst: 1, worstN: k, threshold: 1 << 16, large: 0.25, largeN: 1 << 17},
		{method: "g", threshold: 1 << 16}, // failed: no errors at all
	}
	if len(got) != len(want) {
		t.Fatalf("worstRatios = %+v\nwant %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		close := func(a, b float64) bool { return a == b || math.Abs(a-b) <= 1e-12*math.Abs(b) }
		if g.method != w.method || !close(g.worst, w.worst) || g.worstN != w.worstN || !close(g.large, w.large) ||
			g.largeN != w.largeN || g.threshold != w.threshold {
			t.Errorf("ratio %d = %+v, want %+v", i, g, w)
		}
	}
	meets := map[string]bool{"a": true, "b": false, "c": true, "d": false, "e": false, "f": true, "g": false}
	for _, r := range got {
		if r.meets() != meets[r.method] {
			t.Errorf("%s: meets() = %v", r.method, r.meets())
		}
	}
	// Targets on a sweep with no n ≥ 2^16: the every-n target alone.
	small := worstRatios([]gemm.Accuracy{acc("sgemm", k, 1e-7), acc("x", k, 0.9e-7)}, []string{"sgemm", "x"}, "sgemm", 1<<16)
	if len(small) != 1 || small[0].largeN != 0 || !small[0].meets() {
		t.Errorf("small sweep: %+v", small)
	}
	for _, c := range [][3]float64{{0, 0, 1}, {1, 0, math.Inf(1)}, {0, 1, 0}, {math.NaN(), 1, math.Inf(1)}, {math.Inf(1), math.Inf(1), math.Inf(1)}, {2, 4, 0.5}} {
		if r := ratioOf(c[0], c[1]); r != c[2] {
			t.Errorf("ratioOf(%g, %g) = %g, want %g", c[0], c[1], r, c[2])
		}
	}

	var buf bytes.Buffer
	writeRatios(&buf, got)
	out := buf.String()
	for _, line := range []string{"a  worst 0.5 at 2^10  n ≥ 2^16: 0.5 at 2^16  meets the targets",
		"b  worst 3 at 2^10", "n ≥ 2^16: 1.25 at 2^17  misses the targets", "d  worst +Inf at 2^17",
		"e  -  -  no error to compare", "g  -  -  no error to compare"} {
		if !strings.Contains(strings.Join(strings.Fields(out), "  "), strings.Join(strings.Fields(line), "  ")) {
			t.Errorf("writeRatios lacks %q:\n%s", line, out)
		}
	}
	if lines := strings.Count(out, "\n"); lines != len(got) {
		t.Errorf("writeRatios: %d lines for %d methods:\n%s", lines, len(got), out)
	}
}

func TestWriteAccuracyTable(t *testing.T) {
	var buf bytes.Buffer
	writeAccuracyTable(&buf, []string{"sgemm", "double-fp16"}, []int{1 << 10, 1 << 11, 3000},
		[]gemm.Accuracy{acc("sgemm", 1<<10, 6.13e-7), acc("double-fp16", 1<<10, 6.54e-6), acc("sgemm", 1<<11, 3.15e-7), acc("sgemm", 3000, 1e-7)})
	got := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	want := [][]string{{"method", "2^10", "2^11", "3000"}, {"sgemm", "6.13e-07", "3.15e-07", "1e-07"}, {"double-fp16", "6.54e-06", "-", "-"}}
	if len(got) != len(want) {
		t.Fatalf("table:\n%s", buf.String())
	}
	for i := range want {
		if f := strings.Fields(got[i]); !slices.Equal(f, want[i]) {
			t.Errorf("line %d = %q, want %q", i, f, want[i])
		}
	}
}

func TestFailures(t *testing.T) {
	var f failures
	var buf bytes.Buffer
	f.write(&buf)
	if buf.Len() != 0 {
		t.Errorf("no failures wrote %q", buf.String())
	}
	f.add("x", errString("x at n=1024: boom"))
	f.add("y", errString("y: no"))
	f.add("x", errString("x at n=2048: boom"))
	f.write(&buf)
	if want := "\nfailed (the other methods were measured):\n  x: x at n=1024: boom (and 1 more point)\n  y: y: no\n"; buf.String() != want {
		t.Errorf("failures:\n%q\nwant\n%q", buf.String(), want)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// fakeBench times and measures with made-up numbers; methods whose name
// contains "fabsum" fail, as they do where no kernel runs them.
type fakeBench struct{ calls []string }

func (f *fakeBench) Time(n, reps int, methods []gemm.Method, after func()) ([]gemm.Timing, error) {
	if len(methods) != 1 {
		return nil, errString("the bench should time one method at a time")
	}
	m := methods[0]
	f.calls = append(f.calls, fmt.Sprintf("time %s %d %d", m.Name, n, reps))
	if strings.Contains(m.Name, "fabsum") {
		return nil, fmt.Errorf("%s at n=%d: gpu: the fused kernel is not built yet", m.Name, n)
	}
	d := 4 * time.Millisecond
	if m.Name != "sgemm" {
		d = time.Millisecond
	}
	return []gemm.Timing{{Method: m.Name, N: n, Total: d, Products: d / 2, Reps: reps}}, nil
}

func (f *fakeBench) Accuracy(m, n, dist int, seed uint64, methods []gemm.Method) ([]gemm.Accuracy, error) {
	if len(methods) != 1 || m != 512 || seed != 1 {
		return nil, errString("bad call")
	}
	meth := methods[0]
	f.calls = append(f.calls, fmt.Sprintf("accuracy %s %d %d", meth.Name, n, dist))
	if strings.Contains(meth.Name, "fabsum") {
		return nil, fmt.Errorf("%s at n=%d: gpu: the fused kernel is not built yet", meth.Name, n)
	}
	cw := 1e-7
	if meth.Name != "sgemm" {
		cw = 3e-7
	}
	return []gemm.Accuracy{{Method: meth.Name, Dist: gemm.DistNames[dist], N: n, Componentwise: cw, Normwise: cw / 10}}, nil
}

func TestBenchMeasure(t *testing.T) {
	ms, err := parseMethods("double-fp16,double-fp16-fabsum,dgemm")
	if err != nil {
		t.Fatal(err)
	}
	p := benchPlan{sizes: []int{1024, 2048}, reps: 3, lo: 15, hi: 16, methods: ms, dists: []int{0, 3}}
	if got := p.steps(); got != 2*4+2*2*3 {
		t.Errorf("steps = %d", got)
	}
	f := &fakeBench{}
	var buf bytes.Buffer
	steps := 0
	records, failed := p.measure(&buf, f, func() { steps++ })
	if steps != int(p.steps()) || len(f.calls) != steps {
		t.Errorf("%d steps, %d calls, want %d", steps, len(f.calls), p.steps())
	}
	if f.calls[0] != "time sgemm 1024 3" || f.calls[8] != "accuracy sgemm 32768 0" || f.calls[len(f.calls)-1] != "accuracy double-fp16-fabsum 65536 3" {
		t.Errorf("calls: %q", f.calls)
	}
	out := buf.String()
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{
		"sgemm 1024 4.000 2.000 0.5 1.1 1.00",
		"double-fp16 1024 1.000 0.500 2.1 4.3 4.00",
		"double-fp16-fabsum 1024 - - - - -",
		"distribution (0,1] method 2^15 2^16 sgemm 1e-07 1e-07 double-fp16 3e-07 3e-07 double-fp16-fabsum - -",
		"distribution log-uniform ±[1e-3,1e3]",
		"double-fp16 worst 3 at 2^15 n ≥ 2^16: 3 at 2^16 misses the targets",
		"double-fp16-fabsum - - no error to compare (failed, or no sgemm error at its n)",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "dgemm 2^") || strings.Count(out, "dgemm") != 2 { // timed at two sizes, not in the accuracy tables
		t.Errorf("dgemm in the accuracy tables:\n%s", out)
	}
	if len(failed.methods) != 1 || failed.methods[0] != "double-fp16-fabsum" || failed.count["double-fp16-fabsum"] != 6 {
		t.Errorf("failures: %+v", failed)
	}
	if len(records) != 2*4+2*2*3 {
		t.Errorf("%d records", len(records))
	}
	for _, r := range records {
		if len(r) != len(benchHeader) {
			t.Fatalf("record %q: %d fields, header %d", r, len(r), len(benchHeader))
		}
		failedRow := r[len(r)-1] != ""
		if failedRow != (r[1] == "double-fp16-fabsum") || failedRow && !strings.Contains(r[len(r)-1], "not built") {
			t.Errorf("record %q", r)
		}
	}
	if r := records[1]; r[0] != "speed" || r[1] != "double-fp16" || r[2] != "(0,1]" || r[8] != "4" {
		t.Errorf("speed record %q", r)
	}
	if r := records[len(records)-2]; r[0] != "accuracy" || r[1] != "double-fp16" || r[2] != "log-uniform ±[1e-3,1e3]" || r[3] != "65536" || r[9] != "3e-07" {
		t.Errorf("accuracy record %q", r)
	}

	// No accuracy sweep, and a failing sgemm: no speed-ups.
	p = benchPlan{sizes: []int{64}, reps: 1, lo: 0, hi: -1, methods: []gemm.Method{{Name: "sgemm-fabsum"}, {Name: "fp16", Variant: "fp16"}}}
	buf.Reset()
	_, failed = p.measure(&buf, &fakeBench{}, func() {})
	if flat := strings.Join(strings.Fields(buf.String()), " "); !strings.Contains(flat, "fp16 64 1.000 0.500 0.0 0.0 -") ||
		strings.Contains(flat, "componentwise") || len(failed.methods) != 1 {
		t.Errorf("without sgemm:\n%s", buf.String())
	}
}
