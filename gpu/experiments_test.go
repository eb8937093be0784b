package gpu

// The GPU experiments and the bench's methods and data, checked without a
// GPU: the registry, the task lists (run against a fake engine), the specs
// (parsed by multiword.Lookup) and a CPU mirror of the fill_random kernel.
// TestEngineFillRandom compares the kernel with the mirror where a GPU is.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mwmm/mwmm/experiment"
	"github.com/mwmm/mwmm/internal/plotting"
	"github.com/mwmm/mwmm/multiword"
)

// fakeMeasurer answers Time and Accuracy with made-up numbers and records
// what it was asked.
type fakeMeasurer struct {
	times []string // "n=1024 sgemm,double-fp16,..."
	accs  []string // "512×1024 dist 0 seed 7 sgemm,..."
}

func names(ms []Method) string {
	var s []string
	for _, m := range ms {
		s = append(s, m.Name)
	}
	return strings.Join(s, ",")
}

func (f *fakeMeasurer) Time(n, reps int, methods []Method, after func()) ([]Timing, error) {
	f.times = append(f.times, fmt.Sprintf("n=%d reps=%d %s", n, reps, names(methods)))
	var ts []Timing
	for i, m := range methods {
		ts = append(ts, Timing{Method: m.Name, N: n, Total: time.Duration(i+2) * time.Millisecond, Products: time.Millisecond,
			MeanProducts: time.Duration(i+1)*time.Millisecond + 500*time.Microsecond, Reps: reps})
	}
	return ts, nil
}

func (f *fakeMeasurer) Accuracy(m, n, dist int, seed uint64, methods []Method) ([]Accuracy, error) {
	f.accs = append(f.accs, fmt.Sprintf("%d×%d dist %d seed %d %s", m, n, dist, seed, names(methods)))
	var out []Accuracy
	for i, meth := range methods {
		if meth.Name == "dgemm" {
			continue
		}
		out = append(out, Accuracy{Method: meth.Name, Dist: DistNames[dist], N: n, Componentwise: float64(i+1) * 1e-7, Normwise: 1e-8})
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
		if Available() != nil {
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
				if s.Method != Baselines[0] {
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
	ms := Methods()
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
	for _, v := range BenchVariants {
		m, err := ParseMethod(v)
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
				if r.Panel != panel || r.Series != s.Label || r.X != float64(n) || r.Y != TFLOPs(n, t0) {
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

func TestDistNames(t *testing.T) {
	// The first two are in the CSVs of earlier runs: they must not change.
	want := []string{"(0,1]", "(-0.5,0.5]", "normal", "log-uniform ±[1e-3,1e3]"}
	if !slices.Equal(DistNames, want) {
		t.Errorf("DistNames = %q, want %q", DistNames, want)
	}
}

// hash24 and fillRandom mirror kernels/split.cu's hash24 and fill_random.
func hash24(seed uint64, i int64, stream uint64) uint32 {
	z := seed + stream*0xd1b54a32d192ed03 + uint64(i)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return uint32(z >> 40)
}

func fillRandom(seed uint64, i int64, dist int) float32 {
	u := float32(hash24(seed, i, 0)) * (1.0 / 16777216)
	switch dist {
	case 0:
		return 1 - u
	case 1:
		return 0.5 - u
	case 2:
		u1 := float32(hash24(seed, i, 1)+1) * (1.0 / 16777216)
		r := float32(math.Sqrt(float64(-2 * float32(math.Log(float64(u1))))))
		return r * float32(math.Cos(float64(float32(2*math.Pi)*u)))
	}
	e := float32(hash24(seed, i, 1)) * (1.0 / 16777215)
	v := float32(math.Pow(10, float64(6*e-3)))
	v = min(max(v, 1e-3), 1e3)
	if hash24(seed, i, 2)&1 != 0 {
		v = -v
	}
	return v
}

// TestFillRandomMirror checks the distributions of the fill's algorithm on
// the CPU mirror: ranges, moments, and that stream 0 is the hash of the
// earlier fill_uniform (the uniform data of a seed are unchanged).
func TestFillRandomMirror(t *testing.T) {
	const n = 1 << 17
	const seed = 12345
	for i := int64(0); i < 100; i++ {
		z := seed + uint64(i)*0x9e3779b97f4a7c15
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		if old := 1 - float32(z>>40)*(1.0/16777216); fillRandom(seed, i, 0) != old {
			t.Fatalf("dist 0 at %d: %g, the earlier fill gave %g", i, fillRandom(seed, i, 0), old)
		}
	}
	type stats struct{ lo, hi, mean, variance, neg float64 }
	moments := func(f func(i int64) float64) stats {
		s := stats{lo: math.Inf(1), hi: math.Inf(-1)}
		var sum, sum2 float64
		for i := int64(0); i < n; i++ {
			x := f(i)
			s.lo, s.hi = min(s.lo, x), max(s.hi, x)
			sum += x
			sum2 += x * x
			if x < 0 {
				s.neg++
			}
		}
		s.mean = sum / n
		s.variance = sum2/n - s.mean*s.mean
		s.neg /= n
		return s
	}
	near := func(what string, got, want, tol float64) {
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %.4g, want %.4g ± %.2g", what, got, want, tol)
		}
	}
	// 5σ tolerances for n = 2^17 draws.
	u := moments(func(i int64) float64 { return float64(fillRandom(seed, i, 0)) })
	if u.lo <= 0 || u.hi > 1 {
		t.Errorf("(0,1]: range [%g, %g]", u.lo, u.hi)
	}
	near("(0,1] mean", u.mean, 0.5, 5*math.Sqrt(1.0/12/n))
	c := moments(func(i int64) float64 { return float64(fillRandom(seed, i, 1)) })
	if c.lo <= -0.5 || c.hi > 0.5 {
		t.Errorf("(-0.5,0.5]: range [%g, %g]", c.lo, c.hi)
	}
	near("(-0.5,0.5] mean", c.mean, 0, 5*math.Sqrt(1.0/12/n))
	g := moments(func(i int64) float64 { return float64(fillRandom(seed, i, 2)) })
	near("normal mean", g.mean, 0, 5/math.Sqrt(n))
	near("normal variance", g.variance, 1, 5*math.Sqrt(2.0/n))
	near("normal fraction < 0", g.neg, 0.5, 5*0.5/math.Sqrt(n))
	if g.lo < -5.8 || g.hi > 5.8 || math.IsNaN(g.mean) {
		t.Errorf("normal: range [%g, %g]", g.lo, g.hi)
	}
	// |x| ≤ 1 holds with probability 0.6827.
	within := moments(func(i int64) float64 {
		if math.Abs(float64(fillRandom(seed, i, 2))) <= 1 {
			return 1
		}
		return 0
	})
	near("normal P(|x| ≤ 1)", within.mean, 0.6827, 5*math.Sqrt(0.6827*0.3173/n))
	// The two streams of Box–Muller are not correlated.
	corr := moments(func(i int64) float64 {
		return (float64(hash24(seed, i, 0)) / (1 << 24)) * (float64(hash24(seed, i, 1)) / (1 << 24))
	})
	near("E[u·u1]", corr.mean, 0.25, 5*math.Sqrt(7.0/144/n))
	lu := moments(func(i int64) float64 { return float64(fillRandom(seed, i, 3)) })
	near("log-uniform fraction < 0", lu.neg, 0.5, 5*0.5/math.Sqrt(n))
	l := moments(func(i int64) float64 { return math.Log10(math.Abs(float64(fillRandom(seed, i, 3)))) })
	if l.lo < math.Log10(float64(float32(1e-3))) || l.hi > 3 || l.lo > -2.99 || l.hi < 2.99 {
		t.Errorf("log-uniform: log10|x| in [%g, %g], want [-3, 3]", l.lo, l.hi)
	}
	near("log-uniform mean of log10|x|", l.mean, 0, 5*math.Sqrt(3.0/n))
	near("log-uniform variance of log10|x|", l.variance, 3, 0.05) // 36/12
	// Reproducible, and the seed matters.
	if fillRandom(seed, 5, 2) != fillRandom(seed, 5, 2) || fillRandom(seed, 5, 2) == fillRandom(seed+1, 5, 2) {
		t.Error("normal draws are not a function of (seed, index)")
	}
}

// TestEngineFillRandom compares fill_random on the device with the mirror:
// exactly for the uniform data, within a few ulps of the math functions
// for the others. (Not a TestGPU test: the fake CUDA of TestFakeCUDA runs
// no such kernel.)
func TestEngineFillRandom(t *testing.T) {
	e := engineGPU(t)
	const m, k = 64, 1000
	for dist := range DistNames {
		e.mu.Lock()
		o, err := e.newOperands(m, m, k, dist, 99, false)
		if err != nil {
			e.mu.Unlock()
			t.Fatal(err)
		}
		got := make([]float32, m*k)
		err = e.d.Download(got, o.a)
		o.free()
		e.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range got {
			want := float64(fillRandom(99, int64(i), dist))
			// Uniform: exact. Normal: logf, sqrtf, cosf within a few ulps.
			// Log-uniform: exp10f within 2 ulps, and 6v − 3 maybe one FMA.
			tol := [4]float64{0, 0, 1e-5 * max(1, math.Abs(want)), 1e-5 * math.Abs(want)}[dist]
			if math.Abs(float64(g)-want) > tol || (g < 0) != (want < 0) {
				t.Fatalf("%s: element %d = %g, the mirror gives %g", DistNames[dist], i, g, want)
			}
		}
	}
	e.mu.Lock()
	_, err := e.newOperands(4, 4, 4, len(DistNames), 1, false)
	e.mu.Unlock()
	if err == nil || !strings.Contains(err.Error(), "distribution") {
		t.Errorf("newOperands with dist %d: %v", len(DistNames), err)
	}
}
