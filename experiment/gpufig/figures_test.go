package gpufig

// The GPU experiments and the bench's methods and data, checked without a
// GPU: the registry, the task lists (run against a fake engine), the specs
// (parsed by multiword.Lookup) and a CPU mirror of the fill_random kernel.
// TestEngineFillRandom compares the kernel with the mirror where a GPU is.

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mwmm/mwmm/experiment"
	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/gemm"
	"github.com/mwmm/mwmm/internal/plotting"
	"github.com/mwmm/mwmm/multiword"
)

// fakeMeasurer answers Time and Accuracy with made-up numbers and records
// what it was asked.
type fakeMeasurer struct {
	times []string // "n=1024 sgemm,double-fp16,..."
	accs  []string // "512×1024 dist 0 seed 7 sgemm,..."
}

func names(ms []gemm.Method) string {
	var s []string
	for _, m := range ms {
		s = append(s, m.Name)
	}
	return strings.Join(s, ",")
}

func (f *fakeMeasurer) Time(n, reps int, methods []gemm.Method, after func()) ([]gemm.Timing, error) {
	f.times = append(f.times, fmt.Sprintf("n=%d reps=%d %s", n, reps, names(methods)))
	var ts []gemm.Timing
	for i, m := range methods {
		ts = append(ts, gemm.Timing{Method: m.Name, N: n, Total: time.Duration(i+2) * time.Millisecond, Products: time.Millisecond,
			MeanProducts: time.Duration(i+1)*time.Millisecond + 500*time.Microsecond, Reps: reps})
	}
	return ts, nil
}

func (f *fakeMeasurer) Accuracy(m, n, dist int, seed uint64, methods []gemm.Method) ([]gemm.Accuracy, error) {
	f.accs = append(f.accs, fmt.Sprintf("%d×%d dist %d seed %d %s", m, n, dist, seed, names(methods)))
	var out []gemm.Accuracy
	for i, meth := range methods {
		if meth.Name == "dgemm" {
			continue
		}
		out = append(out, gemm.Accuracy{Method: meth.Name, Dist: gemm.DistNames[dist], N: n, Componentwise: float64(i+1) * 1e-7, Normwise: 1e-8})
	}
	return out, nil
}

func runTasks(t *testing.T, tasks []experiment.Task) []experiment.Row {
	t.Helper()
	var rows []experiment.Row
	for _, task := range tasks {
		rs, err := task.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, rs...)
	}
	return rows
}

func TestExperimentsRegistered(t *testing.T) {
	for _, name := range []string{"fig4.1", "fig4.2", "fig4.4", "fig4.4-error", "fig4.5", "fig4.5-error"} {
		e, err := experiment.Lookup(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if e.Requires != "gpu" || !e.Serial {
			t.Errorf("%s: Requires %q, Serial %v; want gpu and serial", name, e.Requires, e.Serial)
		}
		if e.Title == "" || e.Cites == "" || e.Shows == "" || e.Setup == "" || e.Tasks == nil ||
			e.PanelColumn == "" || e.SeriesColumn == "" || e.XColumn == "" || e.YColumn == "" || !e.LogX || !e.LogY {
			t.Errorf("%s: incomplete: %+v", name, e)
		}
		wantY := "tflops"
		if strings.HasSuffix(name, "-error") || name == "fig4.2" {
			wantY = "componentwise_error"
		}
		if e.YColumn != wantY {
			t.Errorf("%s: Y column %q, want %q", name, e.YColumn, wantY)
		}
		if gpu.Available() != nil {
			if _, err := e.Tasks(experiment.Config{Quick: true}); err == nil {
				t.Errorf("%s: Tasks without a GPU: no error", name)
			}
		}
	}
	for _, fig := range []string{"fig4.4", "fig4.5"} {
		left, _ := experiment.Lookup(fig)
		right, _ := experiment.Lookup(fig + "-error")
		if !strings.Contains(left.Cites, "(left)") || !strings.Contains(right.Cites, "(right)") ||
			!strings.Contains(left.Setup, fig+"-error") || !strings.Contains(right.Setup, "experiment "+fig) {
			t.Errorf("%s: the two panels do not name each other: %q / %q", fig, left.Setup, right.Setup)
		}
	}
}

func TestFABsumSeries(t *testing.T) {
	spec := func(s figureSeries) string {
		if s.Method.Variant == "" {
			return s.Method.Name
		}
		if s.Method.Name != s.Method.Variant {
			t.Errorf("%s: method name %q is not its spec %q", s.Label, s.Method.Name, s.Method.Variant)
		}
		return s.Method.Variant
	}
	for _, c := range []struct {
		fig    string
		series []figureSeries
		want   [][2]string // label, spec
	}{
		{"fig4.4", fig44Series(), [][2]string{
			{"fp32 (SGEMM)", "sgemm"},
			{"double-fp16 (cuBLAS)", "double-fp16"},
			{"FABsum-v1 b=64", "double-fp16:scale=on,shift=11,first=on,sum=v1,b=64"},
			{"FABsum-v1 b=128", "double-fp16:scale=on,shift=11,first=on,sum=v1,b=128"},
			{"FABsum-v1 b=256", "double-fp16:scale=on,shift=11,first=on,sum=v1,b=256"},
			{"FABsum-v1 b=512", "double-fp16:scale=on,shift=11,first=on,sum=v1,b=512"},
			{"FABsum-v2 b=64", "double-fp16:scale=on,shift=11,first=on,sum=v2,b=64"},
			{"FABsum-v2 b=128", "double-fp16:scale=on,shift=11,first=on,sum=v2,b=128"},
			{"FABsum-v2 b=256", "double-fp16:scale=on,shift=11,first=on,sum=v2,b=256"},
			{"FABsum-v2 b=512", "double-fp16:scale=on,shift=11,first=on,sum=v2,b=512"},
		}},
		{"fig4.5", fig45Series(), [][2]string{
			{"fp32 (SGEMM)", "sgemm"},
			{"double-fp16 FABsum-v2 b=256", "double-fp16:scale=on,shift=11,first=on,sum=v2,b=256"},
			{"fp16 FABsum-v2 b=128", "fp16:sum=v2,b=128"},
			{"fp16 FABsum-v2 b=256", "fp16:sum=v2,b=256"},
			{"fp16 FABsum-v2 b=512", "fp16:sum=v2,b=512"},
			{"fp16 FABsum-v2 b=1024", "fp16:sum=v2,b=1024"},
		}},
	} {
		var got [][2]string
		for _, s := range c.series {
			got = append(got, [2]string{s.Label, spec(s)})
			if s.Method.Variant == "" {
				if s.Method != gemm.Baselines[0] {
					t.Errorf("%s %s: baseline %+v, want sgemm", c.fig, s.Label, s.Method)
				}
				continue
			}
			p, err := multiword.Lookup(s.Method.Variant)
			if err != nil {
				t.Errorf("%s %s: %v", c.fig, s.Label, err)
				continue
			}
			if s.Label == "double-fp16 (cuBLAS)" {
				if p.Sum != 0 || p.Words != 2 {
					t.Errorf("%s %s: plan %v, want plain double-fp16", c.fig, s.Label, p)
				}
				continue
			}
			// Every other curve is FABsum with the block of its label.
			if p.Sum == 0 || !strings.HasSuffix(s.Label, fmt.Sprintf(" b=%d", p.Block)) ||
				!strings.Contains(s.Label, "FABsum-"+p.Sum.String()) {
				t.Errorf("%s %s: plan %v does not match the label", c.fig, s.Label, p)
			}
			if strings.HasPrefix(s.Method.Variant, "double-fp16") && (!p.FABsumFirstOnly || !p.Scale || p.WordShift != 11 || p.Words != 2) {
				t.Errorf("%s %s: plan %v is not Algorithm 4.4 (first=on, scale=on, shift=11)", c.fig, s.Label, p)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s series:\n got %q\nwant %q", c.fig, got, c.want)
		}
	}
}

// TestBenchVariants: the bench's methods, their number, and that every spec
// parses — except the names and summations being added to multiword by the
// fused kernel's work (double-fp16-fabsum, ..., sum=pair), skipped while
// Lookup does not know them.
func TestBenchVariants(t *testing.T) {
	ms := gemm.Methods()
	if len(ms) > 30 {
		t.Errorf("%d methods: keep mwmm bench at 30 or fewer", len(ms))
	}
	seen := map[string]bool{}
	for _, m := range ms {
		if seen[m.Name] {
			t.Errorf("method %q twice", m.Name)
		}
		seen[m.Name] = true
	}
	for _, want := range []string{"sgemm", "dgemm", "double-fp16", "double-fp16:products=all",
		"double-fp16-fabsum", "triple-bf16-fabsum", "3xtf32-fabsum", "double-fp16-fabsum@mma"} {
		if !seen[want] {
			t.Errorf("Methods() lacks %q", want)
		}
	}
	for _, sum := range []string{"v1", "v2", "pair"} {
		for _, b := range []int{64, 128} {
			if s := algorithm44(sum, b); !seen[s] {
				t.Errorf("Methods() lacks %q", s)
			}
		}
	}
	for _, v := range gemm.BenchVariants {
		m, err := gemm.ParseMethod(v)
		if err != nil {
			t.Errorf("%s: %v", v, err)
			continue
		}
		_, err = multiword.Lookup(m.Variant)
		switch {
		case err == nil:
		case strings.Contains(err.Error(), "unknown variant") && strings.HasSuffix(v, "-fabsum"),
			strings.Contains(err.Error(), `unknown summation "pair"`):
			t.Logf("%s: not in multiword yet: %v", v, err)
		default:
			t.Errorf("%s: %v", v, err)
		}
	}
	// The paper's figures keep the cuBLASLt methods.
	for _, m := range paperMethods() {
		if m.Variant == "" {
			continue
		}
		p, err := multiword.Lookup(m.Variant)
		if err != nil || p.Sum != 0 {
			t.Errorf("paper method %s: %v, sum %v; want a plain cuBLASLt plan", m.Name, err, p.Sum)
		}
	}
	if got := len(paperMethods()); got != 16 {
		t.Errorf("fig4.1/fig4.2 methods: %d, want the 16 of the paper's figures", got)
	}
}

func TestFigureTasks(t *testing.T) {
	for _, quick := range []bool{true, false} {
		cfg := experiment.Config{Quick: quick, Seed: 7}
		tHi, eHi := 14, 20
		if quick {
			tHi, eHi = 12, 14
		}
		for _, c := range []struct {
			name   string
			series []figureSeries
		}{{"fig4.4", fig44Series()}, {"fig4.5", fig45Series()}} {
			f := &fakeMeasurer{}
			methods := seriesMethods(c.series)
			tt := throughputTasks(cfg, "H200", c.series, methods, f)
			if len(tt) != tHi-9 {
				t.Fatalf("%s quick=%v: %d throughput tasks, want %d", c.name, quick, len(tt), tHi-9)
			}
			rows := runTasks(t, tt)
			for i, call := range f.times {
				if want := fmt.Sprintf("n=%d reps=10 %s", 1<<(10+i), names(methods)); call != want {
					t.Errorf("%s: Time call %q, want %q", c.name, call, want)
				}
			}
			// Each timing twice: the paper's t_avg (the mean without the
			// split) and ours (the median with it), a panel each.
			if len(rows) != 2*len(tt)*len(c.series) {
				t.Errorf("%s: %d throughput rows", c.name, len(rows))
			}
			for i, r := range rows {
				k := i % len(c.series)
				paper := (i/len(c.series))%2 == 0
				s := c.series[k]
				n := 1 << (10 + i/(2*len(c.series)))
				panel, t0 := "H200: "+ourTiming, time.Duration(k+2)*time.Millisecond
				if paper {
					panel, t0 = "H200: "+paperTiming, time.Duration(k+1)*time.Millisecond+500*time.Microsecond
				}
				if r.Panel != panel || r.Series != s.Label || r.X != float64(n) || r.Y != gemm.TFLOPs(n, t0) {
					t.Errorf("%s row %d: %+v", c.name, i, r)
				}
			}
			et := errorTasks(cfg, 512, 1, c.series, methods, f)
			if len(et) != eHi-9 {
				t.Fatalf("%s quick=%v: %d error tasks, want %d", c.name, quick, len(et), eHi-9)
			}
			rows = runTasks(t, et)
			for i, call := range f.accs {
				if want := fmt.Sprintf("512×%d dist 0 seed 7 %s", 1<<(10+i), names(methods)); call != want {
					t.Errorf("%s: Accuracy call %q, want %q", c.name, call, want)
				}
			}
			for i, r := range rows {
				if s := c.series[i%len(c.series)]; r.Panel != "(0,1]" || r.Series != s.Label {
					t.Errorf("%s error row %d: %+v", c.name, i, r)
				}
			}
		}
	}
	// fig4.1 and fig4.2: the paper's methods under their own names, and
	// fig4.2 on the paper's two distributions only.
	f := &fakeMeasurer{}
	rows := runTasks(t, throughputTasks(experiment.Config{Quick: true}, "dev", nil, paperMethods(), f))
	if rows[0].Series != "sgemm" || len(rows) != 2*3*16 {
		t.Errorf("fig4.1: %d rows, first %+v", len(rows), rows[0])
	}
	// fig4.2 has the paper's outer dimensions, 16.
	et := errorTasks(experiment.Config{Quick: true}, 16, paperDists, nil, paperMethods(), f)
	var panels []string
	for _, task := range et {
		if !slices.Contains(panels, task.Panel) {
			panels = append(panels, task.Panel)
		}
	}
	if !slices.Equal(panels, []string{"(0,1]", "(-0.5,0.5]"}) || len(et) != 2*5 {
		t.Errorf("fig4.2: panels %q, %d tasks", panels, len(et))
	}
	rows = runTasks(t, et)
	if len(rows) != 2*5*15 || rows[0].Series != "sgemm" { // dgemm is the reference
		t.Errorf("fig4.2: %d rows, first %+v", len(rows), rows[0])
	}
	if !strings.HasPrefix(f.accs[0], "16×1024 ") {
		t.Errorf("fig4.2: Accuracy call %q, want A 16×n", f.accs[0])
	}
}

// Every GPU experiment's figure, from the fake measurer's rows, reads
// cleanly: title and legend inside the canvas and off the data, tick
// labels apart, a colour per series.
func TestFiguresReadCleanly(t *testing.T) {
	f := &fakeMeasurer{}
	for _, c := range []struct {
		name  string
		tasks []experiment.Task
	}{
		{"fig4.1", throughputTasks(experiment.Config{}, "NVIDIA H100 80GB HBM3", nil, paperMethods(), f)},
		{"fig4.2", errorTasks(experiment.Config{}, 16, paperDists, nil, paperMethods(), f)},
		{"fig4.4", throughputTasks(experiment.Config{}, "NVIDIA H100 80GB HBM3", fig44Series(), seriesMethods(fig44Series()), f)},
		{"fig4.4-error", errorTasks(experiment.Config{}, 512, 1, fig44Series(), seriesMethods(fig44Series()), f)},
		{"fig4.5", throughputTasks(experiment.Config{}, "NVIDIA H100 80GB HBM3", fig45Series(), seriesMethods(fig45Series()), f)},
		{"fig4.5-error", errorTasks(experiment.Config{}, 512, 1, fig45Series(), seriesMethods(fig45Series()), f)},
	} {
		e, err := experiment.Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		lay, err := plotting.Inspect(e.Figure(runTasks(t, c.tasks)))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, p := range lay.Problems() {
			t.Errorf("%s: %s", c.name, p)
		}
	}
}

// TestMain registers the figures, as cmd/mwmm does.
func TestMain(m *testing.M) {
	Register()
	os.Exit(m.Run())
}
