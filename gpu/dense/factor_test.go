package dense

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mwmm/mwmm/experiment"
	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/pivot"
	"github.com/mwmm/mwmm/lu"
	"github.com/mwmm/mwmm/solve"
	"gonum.org/v1/gonum/mat"
)

// The solver tests are not TestGPU*: the fake CUDA of TestFakeCUDA has no
// cuSOLVER, so they run on real GPUs only.
func centered(n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	a := make([]float64, n*n)
	for i := range a {
		a[i] = rng.Float64() - 0.5
	}
	return a
}

// cpuForm is the model form whose bound covers a GPU form: the same
// storage and update arithmetic, on the h100 model for the tensor cores.
func cpuForm(t *testing.T, name string) lu.Form {
	t.Helper()
	var f lu.Form
	var err error
	switch name {
	case "tc32-fp16", "tc32-bf16", "tc32-tf32":
		f, err = lu.ParseForm("tc32", "h100", strings.TrimPrefix(name, "tc32-"))
	case "fp32", "fp64":
		f, err = lu.ParseForm(name, "", "")
	default:
		f, err = lu.ParseForm(name, "reference", "")
	}
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// The GPU's factors of every form satisfy the componentwise bound of the
// model form with the same arithmetic, and GMRES-IR from them reaches
// fp64 accuracy; sizes that are not multiples of the block (1, 17,
// 300 with nb = 64) exercise the panel edges, with cuSOLVER's panels and
// with our recursive one.
func TestSolverLUForms(t *testing.T) {
	e := engineGPU(t)
	type formPanel struct {
		name      string
		recursive bool
	}
	var forms []formPanel
	for _, name := range append(LUForms, "double-fp16-fabsum", "triple-bf16-fabsum") {
		if name == HalfForm {
			continue // it does not pivot: TestSolverHalf
		}
		forms = append(forms, formPanel{name, false})
	}
	forms = append(forms, formPanel{"double-fp16-fabsum", true})
	for _, n := range []int{1, 17, 300} {
		a := centered(n, uint64(n))
		b := make([]float64, n)
		for i := range b {
			b[i] = float64(i%7) - 3
		}
		s, err := e.NewSystem(n, a)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range forms {
			name := v.name
			f, err := ParseLUForm(name)
			if err != nil {
				t.Fatal(err)
			}
			f.NB, f.Panels, f.Pivoting = 64, PanelsGetrf, PivotPartial
			if v.recursive {
				f.Panels = PanelsRecursive
				name += "+recursive"
			}
			fa, err := s.Factor(f)
			if err != nil {
				t.Errorf("n=%d %s: %v", n, name, err)
				continue
			}
			h, err := fa.Host()
			if err != nil {
				t.Fatal(err)
			}
			got, err := h.Errors(a)
			if err != nil {
				t.Fatal(err)
			}
			if oz, ok := f.Update.(Ozaki); ok {
				if bnd := ozakiLUBound(oz.Digits, h, a, got); !(got.Normwise <= bnd) {
					t.Errorf("n=%d %s: normwise error %.3g above the bound %.3g", n, name, got.Normwise, bnd)
				}
			} else {
				bnd, err := cpuForm(t, v.name).Bound(n, 64)
				if err != nil {
					t.Fatal(err)
				}
				if !(got.Componentwise <= bnd.Total) {
					t.Errorf("n=%d %s: componentwise error %.3g above the bound %.3g", n, name, got.Componentwise, bnd.Total)
				}
			}
			x, rep, err := solve.RefineOperator(context.Background(), s, b, fa, solve.Options{Refine: solve.GMRES})
			if err != nil {
				t.Errorf("n=%d %s: %v (%+v)", n, name, err, rep)
			} else if be := solve.BackwardError(n, a, x, b); be > 4*rep.Tol {
				t.Errorf("n=%d %s: backward error %.3g measured here, %.3g reported", n, name, be, rep.BackwardError)
			}
			fa.Free()
		}
		s.Free()
	}
}

// ozakiLUBound bounds ‖P·A − L̂Û‖∞/‖A‖∞ for an Ozaki form's factors h of
// a: every update adds to an entry at most ozakiBound·2^(e_i+f_j) ≤
// ozakiBound·4·max|L|·max|U|, and the updates' depths add up to n; the
// fp64 arithmetic adds γ_n·‖|L̂||Û|‖∞.
func ozakiLUBound(digits int, h *lu.Factors, a []float64, e lu.Errors) float64 {
	n := h.N
	maxL, maxU, normA := 0.0, 0.0, 0.0
	for i := range n {
		row := 0.0
		for j := range n {
			row += math.Abs(a[i*n+j]) // a is row-major: row i
			if v := math.Abs(h.LU[i*n+j]); j < i {
				maxL = math.Max(maxL, v)
			} else {
				maxU = math.Max(maxU, v)
			}
		}
		normA = math.Max(normA, row)
	}
	perEntry := ozakiBound(digits, n) * 4 * math.Max(maxL, 1) * maxU
	return float64(n)*perEntry/normA + 2*float64(n)*0x1p-53*e.LUNorm
}

// Pivoting: a zero leading entry and tied candidates; a singular matrix is
// an error naming the column; NaN is refused before any work.
func TestSolverPivotsAndErrors(t *testing.T) {
	e := engineGPU(t)
	a := []float64{
		0, 1, 2,
		1, 1, 1,
		-1, 2, 0,
	}
	s, err := e.NewSystem(3, a)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Free()
	for _, name := range []string{"fp64", "tc32-fp16", "double-fp16-fabsum", "ozaki-int8x5"} {
		f, _ := ParseLUForm(name)
		f.Pivoting = PivotPartial
		fa, err := s.Factor(f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		x, _, err := solve.RefineOperator(context.Background(), s, []float64{3, 3, 1}, fa, solve.Options{Refine: solve.GMRES})
		if err != nil || math.Abs(x[0]-1) > 1e-15 || math.Abs(x[1]-1) > 1e-15 || math.Abs(x[2]-1) > 1e-15 {
			t.Errorf("%s: x = %v, %v; want 1, 1, 1", name, x, err)
		}
		fa.Free()
	}

	sing, err := e.NewSystem(3, []float64{1, 2, 3, 2, 4, 6, 1, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	defer sing.Free()
	for _, name := range []string{"fp64", "fp32", "tc32-fp16", "ozaki-int8x5"} {
		f, _ := ParseLUForm(name)
		f.Pivoting = PivotPartial
		_, err := sing.Factor(f)
		var se *SingularError
		if !errors.As(err, &se) {
			t.Errorf("%s on a singular matrix: %v, want a SingularError", name, err)
		} else if se.Column < 0 || se.Column >= 3 {
			t.Errorf("%s on a singular matrix: column %d, want 0, 1 or 2 (from 0)", name, se.Column)
		}
	}

	if _, err := e.NewSystem(2, []float64{1, math.NaN(), 0, 1}); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("NaN in A: %v", err)
	}
}

// Many solves of different sizes, with the fused kernel's and the Ozaki
// forms' scratch, leave no device memory behind; a system
// beyond the device's memory is a clear error.
func TestSolverNoLeaks(t *testing.T) {
	e := engineGPU(t)
	fabsum, _ := ParseLUForm("double-fp16-fabsum")
	ozaki, _ := ParseLUForm("ozaki-int8x5")
	half, _ := ParseLUForm(HalfForm)
	calls := 0
	run := func(n int) { // the three forms by turns (fp16-store on a matrix it factors)
		f, kind := fabsum, "centered"
		switch calls++; calls % 3 {
		case 1:
			f = ozaki
		case 2:
			f, kind = half, "diagdom"
		}
		s, err := e.GenerateSystem(n, kind, uint64(n))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Free()
		fa, err := s.Factor(f)
		if err != nil {
			t.Fatal(err)
		}
		defer fa.Free()
		b := make([]float64, n)
		b[0] = 1
		if _, _, err := solve.RefineOperator(context.Background(), s, b, fa, solve.Options{Refine: solve.GMRES}); err != nil {
			t.Fatal(err)
		}
	}
	run(256) // compiles the kernels and makes the handles, for the three forms
	run(257)
	run(258)
	before, err := e.d.FreeMemory()
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range []int{100, 513, 64, 1000, 256, 31} {
		run(n + i)
	}
	after, err := e.d.FreeMemory()
	if err != nil {
		t.Fatal(err)
	}
	if before > after+64<<20 {
		t.Errorf("free device memory went from %d to %d bytes over 6 solves", before, after)
	}
	if _, err := e.GenerateSystem(1<<20, "centered", 1); err == nil || !strings.Contains(err.Error(), "memory") {
		t.Errorf("a 2^20 system: %v, want an out-of-memory error", err)
	}
}

// The cuSOLVER baselines solve a diagonally dominant system to fp64
// accuracy; the generators are deterministic.
func TestSolverBaselines(t *testing.T) {
	e := engineGPU(t)
	const n = 512
	s, err := e.GenerateSystem(n, "diagdom", 3)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Free()
	a := make([]float64, n*n)
	if err := e.d.Download(a, s.a); err != nil {
		t.Fatal(err)
	}
	dominant := 1.0 // a_00 = ±(1 + Σ_{j>0} |a_0j|), summed from 1 in the order of j (matgen)
	for j := 1; j < n; j++ {
		dominant += math.Abs(a[j*n])
	}
	if math.Abs(a[0]) != dominant || math.Abs(a[1]) > 0.5 {
		t.Errorf("diagdom entries %v, %v; 1 + the off-diagonal sum of row 0 is %v", a[0], a[1], dominant)
	}
	s2, err := e.GenerateSystem(n, "diagdom", 3)
	if err != nil {
		t.Fatal(err)
	}
	a2 := make([]float64, n*n)
	e.d.Download(a2, s2.a)
	s2.Free()
	for i := range a {
		if a[i] != a2[i] {
			t.Fatalf("entry %d differs between two draws with the same seed", i)
		}
	}
	// A is column-major on the device: the row-major A of solve is its
	// transpose.
	rm := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			rm[i*n+j] = a[i+j*n]
		}
	}
	b := make([]float64, n)
	for i := range b {
		b[i] = 1
	}
	for _, m := range SolveBaselines {
		r, err := s.Baseline(m, b)
		if err != nil {
			t.Errorf("%s: %v", m, err)
			continue
		}
		// getrf+getrs does not refine: n·2^-53 is a generous bound for its
		// error on a diagonally dominant matrix, and above the refined ones'.
		if be := solve.BackwardError(n, rm, r.X, b); be > n*0x1p-53 {
			t.Errorf("%s: backward error %.3g (%d iterations)", m, be, r.Iterations)
		}
	}
}

// BenchmarkSolverFactor times the blocked LU with the look-ahead
// (default block sizes and panels), with sms=k multiprocessors left to the
// panel: double-fp16-fabsum with partial pivoting on centered matrices,
// and tc32-fp16 on diagonally dominant ones (no pivoting). It reports the
// shortest factorization of b.N and, with -test.v, the steps' timeline at
// n = 32768 (stepTimeline).
// ./gpu_dense.test -test.run '^$' -test.bench SolverFactor -test.benchtime 3x -test.v
func BenchmarkSolverFactor(b *testing.B) {
	e, _, _ := solverSetup(b)
	for _, c := range []struct {
		form, matrix string
		sms          []int
	}{{"double-fp16-fabsum", "centered", []int{32, 48, 64}}, {"tc32-fp16", "diagdom", []int{16, 32}}} {
		f, err := ParseLUForm(c.form)
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range []int{8192, 16384, 32768} {
			s, err := e.GenerateSystem(n, c.matrix, 1)
			if err != nil {
				b.Fatal(err)
			}
			for _, sms := range c.sms {
				b.Run(fmt.Sprintf("%s/%s/n=%d/sms=%d", c.form, c.matrix, n, sms), func(b *testing.B) {
					f.LookaheadSMs = sms
					var best time.Duration
					for i := 0; i < b.N; i++ {
						var marks []stepEvent
						if b.N > 1 && i == b.N-1 && n == 32768 { // not the first run's, with its loads
							stepMark = func(j int, what string, st *gpu.Stream) {
								ev, err := e.d.NewEvent()
								if err == nil {
									err = ev.Record(st)
								}
								if err != nil {
									b.Fatal(err)
								}
								marks = append(marks, stepEvent{j, what, ev})
							}
						}
						fa, err := s.Factor(f)
						stepMark = nil
						if err != nil {
							b.Fatal(err)
						}
						if marks != nil {
							b.Logf("%s, pivoting %s\n%s", fa.Form, fa.Pivoting, stepTimeline(b, marks))
						}
						if i == 0 || fa.Duration < best {
							best = fa.Duration
						}
						if err := fa.Free(); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(best.Seconds(), "s/factorization")
				})
			}
			if err := s.Free(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

type stepEvent struct {
	j    int
	what string
	ev   *gpu.Event
}

// stepTimeline tabulates stepMark's events: for each step (its first
// column j), the milliseconds from the first step's start (after the
// first panel) to its start, and from its start to each of its marks.
func stepTimeline(tb testing.TB, marks []stepEvent) string {
	var out strings.Builder
	var t0, start *gpu.Event
	row := map[string]string{}
	flush := func(j int) {
		if start != nil {
			at, err := gpu.Elapsed(t0, start)
			if err != nil {
				tb.Fatal(err)
			}
			fmt.Fprintf(&out, "%6d %9.2f", j, at.Seconds()*1e3)
			for _, what := range []string{"ready", "updated", "panel"} {
				fmt.Fprintf(&out, " %9s", row[what])
			}
			out.WriteString("\n")
		}
		clear(row)
	}
	fmt.Fprintf(&out, "%6s %9s %9s %9s %9s   (ms)\n", "j", "start", "ready", "updated", "panel")
	last := -1
	for _, m := range marks {
		if m.what == "start" {
			flush(last)
			last, start = m.j, m.ev
			if t0 == nil {
				t0 = m.ev
			}
			continue
		}
		if start == nil {
			continue
		}
		d, err := gpu.Elapsed(start, m.ev)
		if err != nil {
			tb.Fatal(err)
		}
		row[m.what] = fmt.Sprintf("%.2f", d.Seconds()*1e3)
	}
	flush(last)
	for _, m := range marks {
		m.ev.Close()
	}
	return out.String()
}

// composeLater's gathers leave L's column blocks as the moves of every
// later step, applied one step after another, would.
func TestComposeLater(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	for trial := 0; trial < 100; trial++ {
		n, nb := 1+rng.IntN(60), 1+rng.IntN(9)
		nsteps := (n + nb - 1) / nb
		steps := make([][]int32, nsteps)
		for s := range steps {
			j := s * nb
			piv := make([]int32, min(nb, n-j))
			for k := range piv {
				piv[k] = int32(k + 1 + rng.IntN(n-j-k))
			}
			steps[s] = pivot.Moves(nil, piv, j)
		}
		src := composeLater(steps, nb, n)
		for k := 0; k < nsteps; k++ {
			eager := make([]int32, n) // a column of block k: its rows' labels
			for i := range eager {
				eager[i] = int32(i)
			}
			for s := k + 1; s < nsteps; s++ {
				np := len(steps[s]) / 2
				old := slices.Clone(eager)
				for t := 0; t < np; t++ {
					eager[steps[s][t]] = old[steps[s][np+t]]
				}
			}
			r0 := (k + 1) * nb
			for i := 0; i < n; i++ {
				want := int32(i)
				if i >= r0 && src[k] != nil {
					want = src[k][i-r0]
				}
				if eager[i] != want {
					t.Fatalf("n=%d nb=%d block %d row %d: gathered row %d, the steps give %d", n, nb, k, i, want, eager[i])
				}
			}
		}
	}
}

// The TC32 forms round the update's inputs as named: 1+2^-10 is exact in
// fp16 and TF32 and rounds to 1 in bf16; 1+2^-12 rounds to 1 in all three
// (not in fp32); 2^-30 underflows in fp16 only. U₁₂ = 2^20·I, beyond
// fp16's range, comes through fp16's scaling exactly. The working matrix
// is [· U₁₂; L₂₁ A₂₂] with 16×16 blocks, A₂₂ = 0, so A₂₂ becomes −L₂₁·2^20.
func TestSolverTC32Inputs(t *testing.T) {
	e := engineGPU(t)
	mod, err := e.d.Module(kernel("lu"))
	if err != nil {
		t.Fatal(err)
	}
	const k, n = 16, 32
	// Two L₂₁: multipliers at most 1 (as partial pivoting leaves them),
	// and multipliers up to 2^20 (as an LU without pivoting may): fp16
	// keeps 2^-30 beside 1 only because L₂₁ is scaled, and 2^20 only
	// because it is scaled down.
	for _, c := range []struct {
		l    [3]float32
		want map[string][3]float32
	}{
		{[3]float32{1 + 0x1p-10, 0x1p-30, 1 + 0x1p-12}, map[string][3]float32{
			"tc32-fp16": {1 + 0x1p-10, 0x1p-30, 1},
			"tc32-bf16": {1, 0x1p-30, 1},
			"tc32-tf32": {1 + 0x1p-10, 0x1p-30, 1},
		}},
		{[3]float32{0x1p20, 3, 1 + 0x1p-12}, map[string][3]float32{
			"tc32-fp16": {0x1p20, 3, 1},
			"tc32-bf16": {0x1p20, 3, 1},
			"tc32-tf32": {0x1p20, 3, 1},
		}},
	} {
		w := make([]float32, n*n)
		for i := 0; i < k; i++ {
			for j := 0; j < k; j++ {
				w[(k+i)+j*n] = c.l[(i+j*k)%3] // L₂₁
			}
			w[i+(k+i)*n] = 0x1p20 // U₁₂
		}
		for name, want := range c.want {
			f, err := ParseLUForm(name)
			if err != nil {
				t.Fatal(err)
			}
			buf, err := e.d.Alloc(4 * n * n)
			if err != nil {
				t.Fatal(err)
			}
			defer buf.Free()
			if err := e.d.Upload(buf, w); err != nil {
				t.Fatal(err)
			}
			tr, err := e.newLtTrailing(mod, f.Update.(TC32).Words, buf, n, k)
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.prepare(0, k, nil); err != nil {
				t.Fatal(err)
			}
			if err := tr.update(k, k, nil, 0); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			tr.free()
			got := make([]float32, n*n)
			if err := e.d.Download(got, buf); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < k; i++ {
				for j := 0; j < k; j++ {
					if g, w := got[(k+i)+(k+j)*n], -0x1p20*want[(i+j*k)%3]; g != w {
						t.Fatalf("%s, L₂₁ of %g: A₂₂(%d,%d) = %g, want %g", name, c.l, i, j, g, w)
					}
				}
			}
		}
	}
}

// amax_f32 finds a block's largest |value|, and fp16_scales turns it into
// the power of two 2^k that brings it into [2^14, 2^15), within 2^±126 and,
// beside the other factor's scale 2^j, with alpha = -2^-(k+j) a normal
// number (and beta = 1), zeroing the max for the next step.
func TestSolverFP16Scales(t *testing.T) {
	e := engineGPU(t)
	mod, err := e.d.Module(kernel("lu"))
	if err != nil {
		t.Fatal(err)
	}
	amax, err := mod.Function("amax_f32")
	if err != nil {
		t.Fatal(err)
	}
	scales, err := mod.Function("fp16_scales")
	if err != nil {
		t.Fatal(err)
	}
	slot, err := e.d.Alloc(4 * (scaleSlot + 1))
	if err != nil {
		t.Fatal(err)
	}
	defer slot.Free()
	other := slot.View(4 * scaleSlot)
	// check runs fp16_scales on max m, beside the scale 2^j (none when
	// j is nil), and wants 2^k.
	check := func(m float32, j *int, k int) {
		t.Helper()
		var o any = uintptr(0)
		in := []float32{math.Float32frombits(math.Float32bits(m)), 0, 0, 0, 0}
		if j != nil {
			in[4] = float32(math.Ldexp(1, *j))
			o = other
		}
		if err := e.d.Upload(slot, in); err != nil {
			t.Fatal(err)
		}
		if err := scales.Launch([3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, nil, slot, slot.View(4), o); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, scaleSlot)
		if err := e.d.Download(got, slot.View(0)); err != nil {
			t.Fatal(err)
		}
		want := []float32{0, float32(math.Ldexp(1, k)), 0, 0}
		if j != nil {
			want[2], want[3] = -float32(math.Ldexp(1, -k-*j)), 1
		}
		if !slices.Equal(got, want) {
			t.Errorf("max %g, other scale %v: got max, s, alpha, beta %g, want %g", m, j, got, want)
		}
	}
	for _, m := range []float32{1, 0x1p20, 0x1p-20, 3, 65504, 0x1p-100} {
		// m·2^k in [2^14, 2^15), from m's exponent.
		_, exp := math.Frexp(float64(m))
		check(m, nil, 15-exp)
	}
	check(0x1.fffffep127, nil, -113)
	check(0x1p-149, nil, 126) // 1/2^k stays normal
	check(0x1p-120, nil, 126)
	for _, m := range []float32{0, float32(math.Inf(1)), float32(math.NaN())} {
		check(m, nil, 0)
	}
	j := func(v int) *int { return &v }
	check(1, j(14), 14)
	check(0x1p-149, j(14), 112) // alpha = -2^-126
	check(0x1.fffffep127, j(-20), -106)
	check(0x1p120, j(-20), -106)
	check(0, j(-126), 0)

	// amax over a 3×2 block of a matrix with 5 rows: the rows below the
	// block do not count.
	x := []float32{1, -7.5, 2, 100, 100, 3, 0.5, -4, -100, 100}
	buf, err := e.d.Alloc(4 * len(x))
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	if err := e.d.Upload(buf, x); err != nil {
		t.Fatal(err)
	}
	if err := e.d.Upload(slot, []uint32{0, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	if err := amax.Launch([3]uint32{2, 1, 1}, [3]uint32{256, 1, 1}, 0, nil, buf, int64(5), int32(3), int32(2), slot); err != nil {
		t.Fatal(err)
	}
	got := make([]uint32, 1)
	if err := e.d.Download(got, slot.View(0)); err != nil {
		t.Fatal(err)
	}
	if m := math.Float32frombits(got[0]); m != 7.5 {
		t.Errorf("amax_f32 = %g, want 7.5", m)
	}
}

// randsvd's singular values are the ones asked for (an SVD here checks).
func TestSolverRandsvd(t *testing.T) {
	e := engineGPU(t)
	const n = 64
	defer func(c int) { randsvdChunk = c }(randsvdChunk)
	for _, oneSmall := range []bool{false, true} {
		spec := experiment.MatrixSpec{Kind: "randsvd", Kappa: 1e6, Mode: experiment.Geometric}
		if oneSmall {
			spec.Mode = experiment.OneSmall
		}
		var whole []float64
		// dormqr's blocks: 24 leaves a last one of 16; the same Q either way.
		for _, chunk := range []int{8192, 24} {
			randsvdChunk = chunk
			s, err := e.GenerateRandsvd(spec.Sigmas(n), 9)
			if err != nil {
				t.Fatal(err)
			}
			a := make([]float64, n*n)
			if err := e.d.Download(a, s.a); err != nil {
				t.Fatal(err)
			}
			s.Free()
			if whole == nil {
				whole = a
			} else {
				for i := range a {
					if math.Abs(a[i]-whole[i]) > 1e-13 {
						t.Fatalf("oneSmall=%v: entry %d is %v applied in blocks of %d, %v in one", oneSmall, i, a[i], chunk, whole[i])
					}
				}
			}
			var svd mat.SVD
			if !svd.Factorize(mat.NewDense(n, n, a), mat.SVDNone) {
				t.Fatal("SVD failed")
			}
			sv := svd.Values(nil)
			want2 := 1e-6 * math.Pow(1e6, 1.0/(n-1)) // σ_{n−1} geometric
			if oneSmall {
				want2 = 1
			}
			for _, c := range []struct{ got, want float64 }{{sv[0], 1}, {sv[n-1], 1e-6}, {sv[n-2], want2}} {
				if math.Abs(c.got-c.want) > 1e-9*c.want {
					t.Errorf("oneSmall=%v, blocks of %d: singular value %.15g, want %.15g", oneSmall, chunk, c.got, c.want)
				}
			}
		}
	}
}

// The recursive panel pivots as partial pivoting must. A = Pᵀ·L·U with
// |l_ij| ≤ 1/2 leaves each step's pivot twice any other candidate, so the
// factorization must find P, L and U again (rows moved between the leaves'
// blocks, n not a multiple of the leaf or the block); L's and U's
// off-diagonal row sums stay below 1/2 of the diagonal, so both are well
// conditioned and their entries come back to fp32's accuracy. On a random
// matrix every multiplier must be at most 1. Both panels, with and without
// the look-ahead, and L's interchanges at the end or at every step.
func TestSolverPanel(t *testing.T) {
	e := engineGPU(t)
	const n = 1000
	rng := rand.New(rand.NewPCG(26, 1))
	perm := rng.Perm(n)
	l, u := make([]float64, n*n), make([]float64, n*n) // row-major
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			switch {
			case j < i:
				l[i*n+j] = (rng.Float64() - 0.5) / float64(i)
			case j == i:
				l[i*n+j] = 1
				u[i*n+j] = (1 + rng.Float64()) * float64(1-2*rng.IntN(2))
			default:
				u[i*n+j] = (rng.Float64() - 0.5) / float64(n-i)
			}
		}
	}
	a := make([]float64, n*n) // row perm[i] of A is row i of L·U
	for i := 0; i < n; i++ {
		for k := 0; k <= i; k++ {
			for j := k; j < n; j++ {
				a[perm[i]*n+j] += l[i*n+k] * u[k*n+j]
			}
		}
	}
	planted, err := e.NewSystem(n, a)
	if err != nil {
		t.Fatal(err)
	}
	defer planted.Free()
	random, err := e.NewSystem(n, centered(n, 9))
	if err != nil {
		t.Fatal(err)
	}
	defer random.Free()
	defer func(limit int) { deferredRows = limit }(deferredRows)
	for _, c := range []struct {
		nb, lookahead int
		recursive     bool
		eagerL        bool // L's interchanges at every step
		form          string
	}{{256, 0, true, false, ""}, {96, -1, true, false, ""}, {1000, 0, true, false, ""}, {256, 0, false, false, ""}, {96, 0, false, true, ""},
		{256, 0, true, false, "ozaki-int8x5"}, {96, -1, true, false, "ozaki-int8x5"}} {
		if c.form == "" {
			c.form = "double-fp16-fabsum"
		}
		f, _ := ParseLUForm(c.form)
		f.NB, f.LookaheadSMs, f.Panels = c.nb, c.lookahead, PanelsGetrf
		if c.recursive {
			f.Panels = PanelsRecursive
		}
		deferredRows = 1 << 26
		if c.eagerL {
			deferredRows = 0
		}
		fa, err := planted.Factor(f)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if want := map[bool]string{true: "partial, recursive panels", false: "partial"}[c.recursive]; fa.Pivoting.String() != want {
			t.Errorf("%+v: pivoting %q, want %q", c, fa.Pivoting, want)
		}
		h, err := fa.Host()
		fa.Free()
		if err != nil {
			t.Fatal(err)
		}
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		for k, p := range h.Piv {
			order[k], order[p] = order[p], order[k]
		}
		worst := 0.0
		for i := 0; i < n; i++ {
			if order[i] != perm[i] {
				t.Fatalf("%+v: row %d of P·A is row %d of A, want %d", c, i, order[i], perm[i])
			}
			for j := 0; j < n; j++ {
				want := u[i*n+j]
				if j < i {
					want = l[i*n+j]
				}
				worst = max(worst, math.Abs(h.LU[i*n+j]-want))
			}
		}
		if worst > 1e-3 {
			t.Errorf("%+v: factors differ from the planted L and U by up to %.3g", c, worst)
		}

		fa, err = random.Factor(f)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		h, err = fa.Host()
		fa.Free()
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			for j := 0; j < i; j++ {
				if m := math.Abs(h.LU[i*n+j]); !(m <= 1) {
					t.Fatalf("%+v: multiplier l(%d,%d) = %g: not partial pivoting", c, i, j, m)
				}
			}
		}
	}
}

// rowDominant is centered off the diagonal with a_ii = ±(1 + Σ_j≠i |a_ij|)
// (row-major), and a₁₀ = 2a₀₀: strictly diagonally dominant by rows, not
// by columns, and partial pivoting would swap rows 0 and 1 first.
func rowDominant(n int, seed uint64) []float64 {
	a := centered(n, seed)
	off := func(i int) float64 {
		s := 0.0
		for j := 0; j < n; j++ {
			if j != i {
				s += math.Abs(a[i*n+j])
			}
		}
		return s
	}
	a[0] = 1 + off(0)
	if n > 1 {
		a[n] = 2 * a[0]
	}
	for i := 1; i < n; i++ {
		a[i*n+i] = math.Copysign(1+off(i), a[i*n+i])
	}
	return a
}

func transposed(n int, a []float64) []float64 {
	t := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			t[j*n+i] = a[i*n+j]
		}
	}
	return t
}

// PivotAuto leaves out the pivoting of a strictly diagonally dominant A
// (by rows or by columns), where partial pivoting would interchange rows;
// the factors still satisfy the model's bound and refinement reaches fp64
// accuracy. Dominance must be strict, beyond a margin of 2^-20; PivotNone
// on a matrix that needs pivoting is an error that says so.
func TestSolverPivoting(t *testing.T) {
	e := engineGPU(t)
	const n, nb = 300, 64
	rows := rowDominant(n, 3)
	b := make([]float64, n)
	for i := range b {
		b[i] = float64(i%5) - 2
	}
	for _, c := range []struct {
		a    []float64
		how  Pivoting
		want string
	}{
		{rows, PivotAuto, "none: A is strictly diagonally dominant by rows"},
		{transposed(n, rows), PivotAuto, "none: A is strictly diagonally dominant by columns"},
		{rows, PivotPartial, "partial"},
		{centered(n, 4), PivotAuto, "partial"},
	} {
		s, err := e.NewSystem(n, c.a)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"tc32-fp16", "double-fp16-fabsum", "fp32", "fp64", "ozaki-int8x5"} {
			f, err := ParseLUForm(name)
			if err != nil {
				t.Fatal(err)
			}
			f.NB, f.Pivoting = nb, c.how
			fa, err := s.Factor(f)
			if err != nil {
				t.Fatalf("%s, %s: %v", name, c.want, err)
			}
			if name == "fp64" && c.how == PivotAuto && c.want == "partial" {
				// fp64 factors absorb the butterfly's growth.
				if fa.Pivoting.Kind != PivotButterfly {
					t.Errorf("fp64 on a random matrix: pivoting %q, want %q", fa.Pivoting, "none, after a random butterfly transform")
				}
				fa.Free()
				continue
			}
			if fa.Pivoting.String() != c.want {
				t.Errorf("%s: pivoting %q, want %q", name, fa.Pivoting, c.want)
			}
			h, err := fa.Host()
			if err != nil {
				t.Fatal(err)
			}
			swapped := false
			for k, p := range h.Piv {
				swapped = swapped || p != k
			}
			if swapped != (c.want == "partial") {
				t.Errorf("%s, %s: pivots %v", name, c.want, h.Piv[:8])
			}
			got, err := h.Errors(c.a)
			if err != nil {
				t.Fatal(err)
			}
			if oz, ok := f.Update.(Ozaki); ok {
				if bnd := ozakiLUBound(oz.Digits, h, c.a, got); !(got.Normwise <= bnd) {
					t.Errorf("%s, %s: normwise error %.3g above the bound %.3g", name, c.want, got.Normwise, bnd)
				}
			} else {
				bnd, err := cpuForm(t, name).Bound(n, nb)
				if err != nil {
					t.Fatal(err)
				}
				if !(got.Componentwise <= bnd.Total) {
					t.Errorf("%s, %s: componentwise error %.3g above the bound %.3g", name, c.want, got.Componentwise, bnd.Total)
				}
			}
			x, rep, err := solve.RefineOperator(context.Background(), s, b, fa, solve.Options{Refine: solve.GMRES})
			if err != nil {
				t.Errorf("%s, %s: %v (%+v)", name, c.want, err, rep)
			} else if be := solve.BackwardError(n, c.a, x, b); be > 4*rep.Tol {
				t.Errorf("%s, %s: backward error %.3g measured here, %.3g reported", name, c.want, be, rep.BackwardError)
			}
			fa.Free()
		}
		s.Free()
	}
	// Larger, with many look-ahead steps (the next panel factored on the
	// side stream while this one finishes): refinement from every form
	// reaches fp64 accuracy without pivoting.
	const big, bigNB = 2048, 128
	a := rowDominant(big, 5)
	s, err := e.NewSystem(big, a)
	if err != nil {
		t.Fatal(err)
	}
	bb := make([]float64, big)
	for i := range bb {
		bb[i] = float64(i%5) - 2
	}
	for _, name := range []string{"tc32-fp16", "tc32-bf16", "double-fp16-fabsum", "fp32", "ozaki-int8x5"} {
		f, _ := ParseLUForm(name)
		f.NB = bigNB
		fa, err := s.Factor(f)
		if err != nil {
			t.Fatalf("n=%d %s: %v", big, name, err)
		}
		if !strings.HasPrefix(fa.Pivoting.String(), "none") {
			t.Errorf("n=%d %s: pivoting %q", big, name, fa.Pivoting)
		}
		x, rep, err := solve.RefineOperator(context.Background(), s, bb, fa, solve.Options{Refine: solve.GMRES})
		if err != nil {
			t.Errorf("n=%d %s: %v (%+v)", big, name, err, rep)
		} else if be := solve.BackwardError(big, a, x, bb); be > 4*rep.Tol || rep.GMRES > 10 {
			t.Errorf("n=%d %s: backward error %.3g (%.3g reported) after %d GMRES iterations", big, name, be, rep.BackwardError, rep.GMRES)
		}
		fa.Free()
	}
	s.Free()

	// Dominance is strict and needs the margin: |a_ii| = 1 against an
	// off-diagonal sum of 1, or of 1 − 2^-30, is not enough; against
	// 1 − 2^-10 it is.
	for _, c := range []struct {
		a          []float64
		rows, cols bool
	}{
		{[]float64{1, -1, 0.5, 2}, false, true},
		{[]float64{1, 0.5, -1, 2}, true, false},
		{[]float64{1, 1 - 0x1p-30, 0, 4}, false, true},
		{[]float64{1, 1 - 0x1p-10, 0, 4}, true, true},
		{[]float64{-3}, true, true},
		{[]float64{0}, false, false},
	} {
		m := int(math.Sqrt(float64(len(c.a))))
		s, err := e.NewSystem(m, c.a)
		if err != nil {
			t.Fatal(err)
		}
		mod, err := e.d.Module(kernel("lu"))
		if err != nil {
			t.Fatal(err)
		}
		r, k, err := s.dominance(mod)
		if err != nil {
			t.Fatal(err)
		}
		if r != c.rows || k != c.cols {
			t.Errorf("%v: dominant by rows %v, by columns %v; want %v, %v", c.a, r, k, c.rows, c.cols)
		}
		s.Free()
	}

	// DiagonallyDominant's pass serves the next Factor, and only it: with
	// A overwritten behind the system's back (nothing else writes A), the
	// first Factor keeps the first answer and the second finds the new
	// one.
	s, err = e.NewSystem(2, []float64{2, 1, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if dom, err := s.DiagonallyDominant(); err != nil || !dom {
		t.Fatalf("[2 1; 1 2]: dominant %v, %v", dom, err)
	}
	if err := e.d.Upload(s.a, []float64{1, 3, 3, 1}); err != nil {
		t.Fatal(err)
	}
	fp32, _ := ParseLUForm("fp32")
	fa, err := s.Factor(fp32)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(fa.Pivoting.String(), "none: A is strictly diagonally dominant") {
		t.Errorf("after DiagonallyDominant, Factor found pivoting %q: the pass ran again", fa.Pivoting)
	}
	fa.Free()
	if fa, err = s.Factor(fp32); err != nil {
		t.Fatal(err)
	}
	if fa.Pivoting.String() != "partial" {
		t.Errorf("the second Factor found pivoting %q, want partial: it reused the answer", fa.Pivoting)
	}
	fa.Free()
	s.Free()

	// Without pivoting, a zero leading entry is an error naming the cause.
	s, err = e.NewSystem(2, []float64{0, 1, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Free()
	for _, name := range []string{"tc32-fp16", "fp64"} {
		f, _ := ParseLUForm(name)
		f.Pivoting = PivotNone
		if _, err := s.Factor(f); err == nil || !strings.Contains(err.Error(), "without pivoting") {
			t.Errorf("%s without pivoting on [0 1; 1 1]: %v, want an error that says it did not pivot", name, err)
		}
		f.Pivoting = PivotAuto
		fa, err := s.Factor(f)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		want := "partial"
		if name == "fp64" {
			want = "none, after a random butterfly transform"
		}
		if fa.Pivoting.String() != want {
			t.Errorf("%s on [0 1; 1 1]: pivoting %q, want %q", name, fa.Pivoting, want)
		}
		fa.Free()
	}
}

// PivotButterfly: the kernel's transform is the host's, rounded once to
// fp32 for the fp32 forms; the factors of Ã = M·A·Nᵀ precondition A, so
// refinement from every form reaches fp64 accuracy on random matrices
// without pivoting; a matrix whose leading block is zero factors after
// the transform; and a permutation the depth-2 transform cannot mix
// gives an error that names it.
func TestSolverButterfly(t *testing.T) {
	e := engineGPU(t)
	mod, err := e.d.Module(kernel("lu"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 37, 300} {
		a := centered(n, uint64(n))
		s, err := e.NewSystem(n, a)
		if err != nil {
			t.Fatal(err)
		}
		bf := newButterfly(n, butterflySeed)
		want := transposed(n, a) // column-major
		bf.transform(want)
		got64, got32 := make([]float64, n*n), make([]float32, n*n)
		b64, err := e.d.Alloc(8 * n * n)
		if err != nil {
			t.Fatal(err)
		}
		b32, err := e.d.Alloc(4 * n * n)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.transform(mod, bf, b64, nil); err != nil {
			t.Fatal(err)
		}
		if err := e.d.Download(got64, b64); err != nil {
			t.Fatal(err)
		}
		if err := s.transform(mod, bf, b64, b32); err != nil {
			t.Fatal(err)
		}
		if err := e.d.Download(got32, b32); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if got64[i] != want[i] || got32[i] != float32(want[i]) {
				t.Fatalf("n=%d entry %d: %v and %v on the device, %v here", n, i, got64[i], got32[i], want[i])
			}
		}
		b64.Free()
		b32.Free()
		s.Free()
	}

	for _, c := range []struct {
		n, nb int
		forms []string
	}{
		{300, 64, []string{"tc32-fp16", "double-fp16-fabsum", "fp32", "fp64"}},
		{2048, 128, []string{"double-fp16-fabsum", "fp32", "fp64"}},
		{1, 64, []string{"tc32-fp16", "fp64"}},
	} {
		a := centered(c.n, 11)
		s, err := e.NewSystem(c.n, a)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]float64, c.n)
		for i := range b {
			b[i] = float64(i%5) - 2
		}
		for _, name := range c.forms {
			f, _ := ParseLUForm(name)
			f.NB, f.Pivoting = c.nb, PivotButterfly
			fa, err := s.Factor(f)
			if err != nil {
				t.Fatalf("n=%d %s: %v", c.n, name, err)
			}
			if fa.Pivoting.Kind != PivotButterfly {
				t.Errorf("n=%d %s: pivoting %q", c.n, name, fa.Pivoting)
			}
			if _, err := fa.Host(); err == nil {
				t.Errorf("n=%d %s: Host gave the factors of the transformed matrix as A's", c.n, name)
			}
			x, rep, err := solve.RefineOperator(context.Background(), s, b, fa, solve.Options{Refine: solve.GMRES})
			if err != nil {
				t.Errorf("n=%d %s: %v (%+v)", c.n, name, err, rep)
			} else if be := solve.BackwardError(c.n, a, x, b); be > 4*rep.Tol {
				t.Errorf("n=%d %s: backward error %.3g measured here, %.3g reported", c.n, name, be, rep.BackwardError)
			} else {
				t.Logf("n=%d %s: %d steps, %d GMRES iterations, backward error %.3g", c.n, name, len(rep.Steps), rep.GMRES, be)
			}
			fa.Free()
		}
		s.Free()
	}

	const n = 64
	zeroLead := centered(n, 12)
	reversal := make([]float64, n*n)
	for i := 0; i < n; i++ {
		if i < 8 {
			clear(zeroLead[i*n : i*n+8])
		}
		reversal[i*n+n-1-i] = 1
	}
	for _, c := range []struct {
		a       []float64
		factors bool
	}{{zeroLead, true}, {reversal, false}} {
		s, err := e.NewSystem(n, c.a)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := ParseLUForm("fp64")
		f.Pivoting = PivotNone
		if _, err := s.Factor(f); err == nil {
			t.Errorf("a zero leading entry factored without pivoting")
		}
		f.Pivoting = PivotButterfly
		fa, err := s.Factor(f)
		switch {
		case c.factors && err != nil:
			t.Errorf("zero leading block after the transform: %v", err)
		case !c.factors && (err == nil || !strings.Contains(err.Error(), "butterfly") || !errors.Is(err, ErrButterflyFailed)):
			t.Errorf("reversal after the transform: %v, want an error that names the butterfly transform", err)
		}
		if fa != nil {
			fa.Free()
		}
		s.Free()
	}
}
