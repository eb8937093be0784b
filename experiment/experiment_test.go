package experiment

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/bound"
	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/internal/plotting"
)

func TestRegistry(t *testing.T) {
	want := []string{"table2.1", "fig3.1", "fig4.3", "fig4.4-sim", "fig4.5-sim", "slides-backward", "narrow1", "narrow2", "narrow3"}
	var got []string
	for _, e := range List() {
		got = append(got, e.Name)
		if e.Title == "" || e.Cites == "" || e.Shows == "" || e.Setup == "" || e.Tasks == nil {
			t.Errorf("%s: Title, Cites, Shows, Setup and Tasks must all be set", e.Name)
		}
		if e.PanelColumn == "" || e.SeriesColumn == "" || e.XColumn == "" || e.YColumn == "" {
			t.Errorf("%s: a CSV column has no name", e.Name)
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("experiment %s not registered; have %v", w, got)
		}
	}
	if e, err := Lookup(" FIG3.1 "); err != nil || e.Name != "fig3.1" {
		t.Errorf("Lookup is not case-insensitive: %v, %v", e, err)
	}
	if _, err := Lookup("fig9.9"); err == nil || !strings.Contains(err.Error(), "fig4.3") {
		t.Errorf("Lookup(fig9.9) = %v, want an error listing the experiments", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a name twice did not panic")
		}
	}()
	Register(&Experiment{Name: "Fig3.1"})
}

// runQuick runs an experiment's quick sweep into a temporary folder and
// checks the shape of what it wrote. Its callers are parallel tests: each
// run has its own folder and engines, and the registry only is shared (read).
func runQuick(t *testing.T, name string) []Row {
	t.Helper()
	e, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	res, err := Run(context.Background(), e, Config{Quick: true, Seed: 1}, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Interrupted || res.Done != res.Points || res.Points == 0 {
		t.Fatalf("%s: %d of %d points, interrupted %v", name, res.Done, res.Points, res.Interrupted)
	}
	f, err := os.Open(filepath.Join(dir, name+".csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(recs[0], e.header()) {
		t.Errorf("%s: CSV header %v, want %v", name, recs[0], e.header())
	}
	if len(recs)-1 != len(res.Rows) {
		t.Errorf("%s: CSV has %d rows, the run %d", name, len(recs)-1, len(res.Rows))
	}
	// Every curve of a panel has a point at every size of the panel.
	for _, panel := range unique(res.Rows, func(r Row) string { return r.Panel }) {
		in := filterPanel(res.Rows, panel)
		xs := map[string][]float64{}
		for _, r := range in {
			xs[r.Series] = append(xs[r.Series], r.X)
			if math.IsNaN(r.Y) || math.IsInf(r.Y, 0) || r.Y < 0 {
				t.Errorf("%s %s %s at n=%g: y = %g", name, panel, r.Series, r.X, r.Y)
			}
		}
		var first []float64
		for s, x := range xs {
			if first == nil {
				first = x
			} else if !slices.Equal(first, x) {
				t.Errorf("%s %s: series %s has sizes %v, another %v", name, panel, s, x, first)
			}
		}
	}
	pf, err := os.Open(filepath.Join(dir, name+".png"))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	if _, err := png.DecodeConfig(pf); err != nil {
		t.Errorf("%s.png: %v", name, err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, name+".svg"))
	if err != nil || !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("%s.svg: %v", name, err)
	}
	return res.Rows
}

func series(rows []Row, panel, s string) map[float64]float64 {
	m := map[float64]float64{}
	for _, r := range rows {
		if (panel == "" || r.Panel == panel) && r.Series == s {
			m[r.X] = r.Y
		}
	}
	return m
}

func TestTable21(t *testing.T) {
	t.Parallel()
	rows := runQuick(t, "table2.1")
	// The dominant terms of the paper's Table 2.1, as printed there.
	want := map[string]string{
		"fp16": "2 × 2^-11 + n × 2^-24", "double-fp16": "n × 2^-24",
		"bf16": "2 × 2^-8 + n × 2^-24", "double-bf16": "3 × 2^-16 + n × 2^-24", "triple-bf16": "n × 2^-24",
	}
	for _, r := range rows {
		if w, ok := want[r.Series]; ok && r.Note != w {
			t.Errorf("%s: dominant term %q, Table 2.1 says %q", r.Series, r.Note, w)
		}
		// To first order the bound is (p+1)u^p + n·2^-24 (the splitting term
		// and the accumulation); the full bound adds the p² products' sum
		// and second-order terms, a little more.
		if r.X <= 1<<16 && r.Series == "double-fp16" {
			first := 3*math.Pow(2, -22) + r.X*math.Pow(2, -24)
			if r.Y < first || r.Y > 1.25*first {
				t.Errorf("double-fp16 at n=%g: bound %g, first order %g", r.X, r.Y, first)
			}
		}
	}
}

func TestFig31(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("fig3.1 takes 10 s; the model it runs is tested bit for bit in mma")
	}
	rows := runQuick(t, "fig3.1")
	uh := math.Pow(2, -24)
	for _, d := range []Dist{Uniform, Centered} {
		fp16, dbl, dbl4 := series(rows, d.Label, "fp16"), series(rows, d.Label, "double-fp16"), series(rows, d.Label, "double-fp16, 4 products")
		for n, e := range dbl {
			b, err := bound.Multiword{ULow: math.Pow(2, -11), UHigh: uh, P: 2, N: n}.Bound()
			if err != nil {
				t.Fatal(err)
			}
			if e > b.Total {
				t.Errorf("%s n=%g: double-fp16 error %g above its bound %g", d.Label, n, e, b.Total)
			}
			// The paper: the A2B2 product changes nothing visible.
			if math.Abs(dbl4[n]-e) > 0.1*e {
				t.Errorf("%s n=%g: 4 products %g, 3 products %g", d.Label, n, dbl4[n], e)
			}
		}
		// Double-fp16 beats fp16 at the smallest n by over 10×.
		if !(dbl[512]*10 < fp16[512]) {
			t.Errorf("%s n=512: double-fp16 %g is not 10× better than fp16 %g", d.Label, dbl[512], fp16[512])
		}
	}
}

func TestFig43RoundToNearestFixesDoubleFP16(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("fig4.3 runs the V100 and A100 models for seconds; they are tested bit for bit in mma")
	}
	rows := runQuick(t, "fig4.3")
	rz := series(rows, "round toward zero", "double-fp16")
	rn := series(rows, "round to nearest", "double-fp16")
	fp32 := series(rows, "round to nearest", "fp32")
	n := float64(1 << 16)
	// Section 4.3: with RZ the error grows like n, with RN it stays at fp32's.
	if !(rz[n] > 10*rn[n]) {
		t.Errorf("n=2^16: RZ %g is not 10× RN %g", rz[n], rn[n])
	}
	if !(rn[n] < 3*fp32[n]) {
		t.Errorf("n=2^16: RN double-fp16 %g is not near fp32 %g", rn[n], fp32[n])
	}
	if g := rz[n] / rz[512]; g < 16 {
		t.Errorf("RZ error grew only %g× from n=2^9 to 2^16 (linear growth is 128×)", g)
	}
}

// Figure 4.4 simulated: Algorithm 4.4's errors on both units lie under
// the FABsum-v1 bound (b + n/b)·2^-24 (doubled: the tensor cores truncate,
// and A₁B₂, A₂B₁ add their share), v2's stay flat while cuBLAS
// double-fp16's grows like n.
func TestFig44Sim(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("fig4.4-sim runs the V100 and A100 models for seconds; they are tested bit for bit in mma")
	}
	rows := runQuick(t, "fig4.4-sim")
	lo, hi := float64(1<<10), float64(1<<14)
	for _, unit := range []string{"V100 model", "A100 model"} {
		plain := series(rows, unit, "double-fp16 (cuBLAS)")
		if g := plain[hi] / plain[lo]; g < 8 {
			t.Errorf("%s: cuBLAS double-fp16 grew %g× over 16× more n, want ≥ 8", unit, g)
		}
		for _, sum := range []string{"v1", "v2"} {
			for _, b := range []float64{64, 128, 256, 512} {
				name := fmt.Sprintf("FABsum-%s b=%g", sum, b)
				s := series(rows, unit, name)
				if len(s) != 5 {
					t.Fatalf("%s %s: %d points, want 5", unit, name, len(s))
				}
				for n, e := range s {
					if lim := 2 * (b + n/b + 3) * math.Pow(2, -24); e > lim {
						t.Errorf("%s %s n=%g: error %g above the bound %g", unit, name, n, e, lim)
					}
				}
				if g := s[hi] / s[lo]; sum == "v2" && g > 2 {
					t.Errorf("%s %s: error grew %g× over 16× more n", unit, name, g)
				}
			}
		}
		if v2, p := series(rows, unit, "FABsum-v2 b=64")[hi], plain[hi]; !(v2 < p/8) {
			t.Errorf("%s n=2^14: FABsum-v2 b=64 %g not 8× below cuBLAS double-fp16 %g", unit, v2, p)
		}
	}
}

// Figure 4.5 simulated: one fp16 word carries its conversion error (up to
// 2u16 = 2^-10 of |A||B|) whatever the block; double-fp16 v2 b=256 is
// at least 2× below it at n = 2^14.
func TestFig45Sim(t *testing.T) {
	t.Parallel()
	rows := runQuick(t, "fig4.5-sim")
	n := float64(1 << 14)
	for _, unit := range []string{"V100 model", "A100 model"} {
		d := series(rows, unit, "double-fp16 FABsum-v2 b=256")
		for _, b := range []float64{128, 256, 512, 1024} {
			s := series(rows, unit, fmt.Sprintf("fp16 FABsum-v2 b=%g", b))
			for x, e := range s {
				if lim := math.Pow(2, -10) + 2*b*math.Pow(2, -24); e > lim {
					t.Errorf("%s fp16 b=%g n=%g: error %g above 2u16 + 2b·u32 = %g", unit, b, x, e, lim)
				}
			}
			if !(d[n] < s[n]/2) {
				t.Errorf("%s n=2^14: double-fp16 v2 b=256 %g not 2× below fp16 b=%g %g", unit, d[n], b, s[n])
			}
		}
	}
}

// The slides' backward-error plot: for data in [−1,1] double-fp16 is close
// to fp32 and far below fp16, and the normwise backward error falls with n;
// for data in (0,1] double-fp16's grows like n (round toward zero).
func TestSlidesBackward(t *testing.T) {
	t.Parallel()
	rows := runQuick(t, "slides-backward")
	lo, hi := float64(1<<9), float64(1<<14)
	f16, d16, f32 := series(rows, "[-1,1]", "fp16"), series(rows, "[-1,1]", "double-fp16"), series(rows, "[-1,1]", "fp32")
	for n := range f32 {
		if !(d16[n] < 4*f32[n] && d16[n] < f16[n]/20) {
			t.Errorf("[-1,1] n=%g: double-fp16 %g not within 4× of fp32 %g and 20× below fp16 %g", n, d16[n], f32[n], f16[n])
		}
	}
	if !(f16[hi] < f16[lo]) {
		t.Errorf("[-1,1]: fp16 backward error %g at 2^9, %g at 2^14: want it to fall", f16[lo], f16[hi])
	}
	u := series(rows, "(0,1]", "double-fp16")
	if g := u[hi] / u[lo]; g < 8 {
		t.Errorf("(0,1]: double-fp16 grew %g× over 32× more n, want ≥ 8", g)
	}
}

// Every CPU experiment's figure, drawn from its task list (rows made up:
// one per panel, series and n), reads cleanly: title and legend inside
// the canvas and off the data, tick labels apart, a colour per series.
func TestFiguresReadCleanly(t *testing.T) {
	for _, e := range List() {
		if e.Requires != "" {
			continue // the GPU package checks its own
		}
		tasks, err := e.Tasks(Config{Quick: true, Seed: 1})
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		var rows []Row
		for i, task := range tasks {
			for _, panel := range strings.Split(task.Panel, ", ") {
				x := task.X
				if x == 0 {
					x = math.Ldexp(1, 4+i%12)
				}
				rows = append(rows, Row{Panel: panel, Series: task.Series, X: x, Y: 1e-7 * math.Sqrt(x) * float64(1+i%5)})
			}
		}
		lay, err := plotting.Inspect(e.Figure(rows))
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		for _, p := range lay.Problems() {
			t.Errorf("%s: %s", e.Name, p)
		}
	}
}

func TestNarrow(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"narrow1", "narrow2"} {
		rows := runQuick(t, name)
		for _, panel := range []string{"e4m3", "e5m2"} {
			u := map[string]float64{"e4m3": 1.0 / 16, "e5m2": 1.0 / 8}[panel]
			b := series(rows, panel, "bound (subnormals off)")
			for n, e := range series(rows, panel, "subnormals off") {
				if e > b[n] {
					t.Errorf("%s %s n=%g: error %g above the slides' bound %g", name, panel, n, e, b[n])
				}
				if e > 2*u {
					t.Errorf("%s %s n=%g: error %g above 2u = %g", name, panel, n, e, 2*u)
				}
			}
		}
	}
	rows := runQuick(t, "narrow3")
	for _, panel := range []string{"e4m3", "e5m2"} {
		p1, p2, p3 := series(rows, panel, "p=1, subnormals on"), series(rows, panel, "p=2, subnormals on"), series(rows, panel, "p=3, subnormals on")
		for n := range p1 {
			if !(p3[n] < p2[n] && p2[n] < p1[n]) {
				t.Errorf("%s n=%g: p=1,2,3 errors %g, %g, %g do not decrease", panel, n, p1[n], p2[n], p3[n])
			}
		}
	}
}

func TestNarrowPlanFormats(t *testing.T) {
	c := narrowCase{low: format.E4M3, acc: format.Binary16, words: 2}
	p, unit, err := c.plan()
	if err != nil {
		t.Fatal(err)
	}
	if p.Low.Subnormals() || p.Acc.Subnormals() || !p.Scale || p.WordShift != 4 || unit != "acc=fp16+ftz" {
		t.Errorf("subnormals-off plan %+v, unit %q", p, unit)
	}
	c.unbounded = true
	if p, unit, err = c.plan(); err != nil || p.Scale || p.Low.Precision() != 4 || p.Acc.Precision() != 11 || unit != "acc=fp64,accp=11" {
		t.Errorf("unbounded plan %+v, unit %q, %v", p, unit, err)
	}
}

func TestDeterministicAcrossWorkers(t *testing.T) {
	e, _ := Lookup("narrow2")
	var csvs [][]byte
	for _, w := range []int{1, 3} {
		dir := t.TempDir()
		if _, err := Run(context.Background(), e, Config{Quick: true, Seed: 7, Workers: w}, dir, nil); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "narrow2.csv"))
		if err != nil {
			t.Fatal(err)
		}
		csvs = append(csvs, b)
	}
	if !bytes.Equal(csvs[0], csvs[1]) {
		t.Error("the CSV depends on the number of workers")
	}
}

// synthetic is an experiment whose tasks the test controls.
func synthetic(run func(i int, ctx context.Context) ([]Row, error), n int) *Experiment {
	return &Experiment{Name: "synthetic", Title: "t", PanelColumn: "p", SeriesColumn: "s", XColumn: "n", YColumn: "err",
		LogX: true, LogY: true,
		Tasks: func(Config) ([]Task, error) {
			var ts []Task
			for i := 0; i < n; i++ {
				ts = append(ts, Task{Panel: "p", Series: "s", X: float64(i + 1), Cost: 1,
					Run: func(ctx context.Context) ([]Row, error) { return run(i, ctx) }})
			}
			return ts, nil
		}}
}

func TestInterruptKeepsRows(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := synthetic(func(i int, ctx context.Context) ([]Row, error) {
		if i < 3 {
			return []Row{{Panel: "p", Series: "s", X: float64(i + 1), Y: float64(i)}}, nil // zero error at i=0
		}
		if i == 3 {
			cancel() // Ctrl-C while the fourth point runs
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}, 10)
	dir := t.TempDir()
	res, err := Run(ctx, e, Config{Workers: 1}, dir, nil)
	if !errors.Is(err, context.Canceled) || !res.Interrupted {
		t.Fatalf("err %v, interrupted %v", err, res.Interrupted)
	}
	if res.Done != 3 || len(res.Rows) != 3 {
		t.Fatalf("kept %d rows of %d points, want 3", len(res.Rows), res.Done)
	}
	b, err := os.ReadFile(filepath.Join(dir, "synthetic.csv"))
	if err != nil || strings.Count(string(b), "\n") != 4 {
		t.Fatalf("CSV %q (%v), want a header and 3 rows", b, err)
	}
	for _, ext := range []string{".png", ".svg"} {
		if _, err := os.Stat(filepath.Join(dir, "synthetic"+ext)); err != nil {
			t.Errorf("no plot of the rows kept: %v", err)
		}
	}
}

func TestTaskErrorStopsRun(t *testing.T) {
	e := synthetic(func(i int, ctx context.Context) ([]Row, error) {
		if i == 2 {
			return nil, errors.New("engine broke")
		}
		return []Row{{Panel: "p", Series: "s", X: float64(i + 1), Y: 1}}, nil
	}, 5)
	res, err := Run(context.Background(), e, Config{Workers: 1}, t.TempDir(), nil)
	if err == nil || !strings.Contains(err.Error(), "engine broke") || !strings.Contains(err.Error(), "p s at 3") {
		t.Fatalf("err = %v, want the task's error with its point", err)
	}
	if res.Done != 2 {
		t.Errorf("kept %d points, want the 2 before the failure", res.Done)
	}
}

func TestInfNormError(t *testing.T) {
	// A = [1 2; 3 4], B = I: C = A; Ĉ off by 0.5 in one element of row 2.
	a := []float64{1, 2, 3, 4}
	b := []float64{1, 0, 0, 1}
	c := []float64{1, 2, 3.5, 4}
	// ‖Ĉ−C‖∞ = 0.5, ‖A‖∞ = 7, ‖B‖∞ = 1.
	if got, want := InfNormError(2, 2, 2, a, b, c), 0.5/7; got != want {
		t.Errorf("InfNormError = %g, want %g", got, want)
	}
}

func TestMatrices(t *testing.T) {
	a1, b1 := LogUniform.Matrices(3, "k", 4, 50, 5)
	a2, b2 := LogUniform.Matrices(3, "k", 4, 50, 5)
	a3, _ := LogUniform.Matrices(3, "other", 4, 50, 5)
	if !slices.Equal(a1, a2) || !slices.Equal(b1, b2) || slices.Equal(a1, a3) {
		t.Error("matrices are not a function of seed and key")
	}
	for _, v := range append(a1, b1...) {
		if m := math.Abs(v); m < 1e-10 || m > 1e10 {
			t.Errorf("log-uniform entry %g outside ±[1e-10, 1e10]", v)
		}
	}
	u, c := Uniform.Matrices(1, "x", 10, 10, 10)
	for i := range u {
		if u[i] <= 0 || u[i] > 1 || c[i] <= 0 || c[i] > 1 {
			t.Fatalf("uniform entry outside (0,1]: %g %g", u[i], c[i])
		}
	}
	if _, err := ParseDist("zipf"); err == nil {
		t.Error("ParseDist accepted zipf")
	}
}

func TestWithUnit(t *testing.T) {
	for _, c := range [][3]string{
		{"model:v100", "accmode=rn", "model:v100:accmode=rn"},
		{"model:a100:extra=3", "accmode=rn", "model:a100:extra=3,accmode=rn"},
		{"reference", "accmode=rn", "reference"},
	} {
		if got := withUnit(c[0], c[1]); got != c[2] {
			t.Errorf("withUnit(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}
