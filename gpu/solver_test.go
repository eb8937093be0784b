package gpu

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/experiment"
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
			f.NB, f.RecursivePanels = 64, v.recursive
			if v.recursive {
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
			bnd, err := cpuForm(t, v.name).Bound(n, 64)
			if err != nil {
				t.Fatal(err)
			}
			if !(got.Componentwise <= bnd.Total) {
				t.Errorf("n=%d %s: componentwise error %.3g above the bound %.3g", n, name, got.Componentwise, bnd.Total)
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
	for _, name := range []string{"fp64", "tc32-fp16", "double-fp16-fabsum"} {
		f, _ := ParseLUForm(name)
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
	for _, name := range []string{"fp64", "fp32", "tc32-fp16"} {
		f, _ := ParseLUForm(name)
		_, err := sing.Factor(f)
		var se *SingularError
		if !errors.As(err, &se) {
			t.Errorf("%s on a singular matrix: %v, want a SingularError", name, err)
		}
	}

	if _, err := e.NewSystem(2, []float64{1, math.NaN(), 0, 1}); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("NaN in A: %v", err)
	}
}

// Many solves of different sizes leave no device memory behind; a system
// beyond the device's memory is a clear error.
func TestSolverNoLeaks(t *testing.T) {
	e := engineGPU(t)
	f, _ := ParseLUForm("double-fp16-fabsum")
	run := func(n int) {
		s, err := e.GenerateSystem(n, "centered", uint64(n))
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
	run(256) // compiles the kernels and makes the handles
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
	if a[0] == a[1] || math.Abs(a[0]) < float64(n)/2 || math.Abs(a[1]) > 0.5 {
		t.Errorf("diagdom entries %v, %v", a[0], a[1])
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

// panelMoves gives the permutation that the interchanges give one by one.
func TestPanelMoves(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(40)
		r0 := rng.IntN(n)
		jb := 1 + rng.IntN(n-r0)
		piv := make([]int32, jb)
		for k := range piv {
			if rng.IntN(3) == 0 {
				piv[k] = int32(k + 1) // no interchange
			} else {
				piv[k] = int32(k + 1 + rng.IntN(n-r0-k))
			}
		}
		want := make([]int, n)
		got := make([]int, n)
		for i := range want {
			want[i], got[i] = i, i
		}
		for k, p := range piv {
			a, b := r0+k, r0+int(p)-1
			want[a], want[b] = want[b], want[a]
		}
		moves := panelMoves(nil, piv, r0)
		np := len(moves) / 2
		old := append([]int(nil), got...)
		for i := 0; i < np; i++ {
			got[moves[i]] = old[moves[np+i]]
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("n=%d r0=%d piv=%v: rows %v, want %v", n, r0, piv, got, want)
			}
		}
	}
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
			steps[s] = panelMoves(nil, piv, j)
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
	mod, err := e.d.Module("lu")
	if err != nil {
		t.Fatal(err)
	}
	const k, n = 16, 32
	w := make([]float32, n*n)
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			x := float32(1 + 0x1p-10)
			switch (i + j*k) % 3 {
			case 1:
				x = 0x1p-30
			case 2:
				x = 1 + 0x1p-12
			}
			w[(k+i)+j*n] = x // L₂₁
		}
		w[i+(k+i)*n] = 0x1p20 // U₁₂
	}
	want := map[string][3]float32{
		"tc32-fp16": {1 + 0x1p-10, 0, 1},
		"tc32-bf16": {1, 0x1p-30, 1},
		"tc32-tf32": {1 + 0x1p-10, 0x1p-30, 1},
	}
	for name, want := range want {
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
		tr, err := e.newLtTrailing(mod, f.Words, buf, n, k)
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
					t.Fatalf("%s: A₂₂(%d,%d) = %g, want %g", name, i, j, g, w)
				}
			}
		}
	}
}

// fp16Scale brings the largest |u| into [2^14, 2^15), as far as fp32's
// largest power of two (2^127) reaches.
func TestFP16Scale(t *testing.T) {
	if s := fp16Scale(0x1p-149); s != 0x1p127 {
		t.Errorf("fp16Scale(2^-149) = %g, want 2^127", s)
	}
	for _, m := range []float32{1, 0x1p20, 0x1p-20, 3, 65504, 0x1.fffffep127, 0x1p-112} {
		s := float64(fp16Scale(m))
		if v := float64(m) * s; v < 0x1p14 || v >= 0x1p15 || s != math.Exp2(math.Round(math.Log2(s))) {
			t.Errorf("fp16Scale(%g) = %g: %g", m, s, v)
		}
	}
	for _, m := range []float32{0, float32(math.Inf(1)), float32(math.NaN())} {
		if s := fp16Scale(m); s != 1 {
			t.Errorf("fp16Scale(%g) = %g, want 1", m, s)
		}
	}
}

// randsvd's singular values are the ones asked for (an SVD here checks).
func TestSolverRandsvd(t *testing.T) {
	e := engineGPU(t)
	const n = 64
	for _, oneSmall := range []bool{false, true} {
		spec := experiment.MatrixSpec{Kind: "randsvd", Kappa: 1e6, Mode: experiment.Geometric}
		if oneSmall {
			spec.Mode = experiment.OneSmall
		}
		s, err := e.GenerateRandsvd(spec.Sigmas(n), 9)
		if err != nil {
			t.Fatal(err)
		}
		a := make([]float64, n*n)
		if err := e.d.Download(a, s.a); err != nil {
			t.Fatal(err)
		}
		s.Free()
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
				t.Errorf("oneSmall=%v: singular value %.15g, want %.15g", oneSmall, c.got, c.want)
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
	}{{256, 0, true, false}, {96, -1, true, false}, {1000, 0, true, false}, {256, 0, false, false}, {96, 0, false, true}} {
		f, _ := ParseLUForm("double-fp16-fabsum")
		f.NB, f.LookaheadSMs, f.RecursivePanels = c.nb, c.lookahead, c.recursive
		deferredRows = 1 << 26
		if c.eagerL {
			deferredRows = 0
		}
		fa, err := planted.Factor(f)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
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
