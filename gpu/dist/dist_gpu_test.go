package dist

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/gemm"
	"github.com/mwmm/mwmm/gpu/internal/gputest"
	"github.com/mwmm/mwmm/gpu/nccl"
	"github.com/mwmm/mwmm/matgen"
	"github.com/mwmm/mwmm/multiword"
)

// team forms a team on grid g of GPUs 0…, or skips.
func team(t testing.TB, g Grid) *Team {
	t.Helper()
	gputest.RequireGPUs(t, g.Size())
	if err := nccl.Available(); err != nil {
		t.Skip(err)
	}
	engines := make([]*gemm.Engine, g.Size())
	for i := range engines {
		e, err := gemm.SharedEngine(i)
		if err != nil {
			t.Fatal(err)
		}
		engines[i] = e
	}
	tm, err := NewTeam(engines, g)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tm.Close() })
	return tm
}

// grids are the grids the machine's GPUs make: 1×2 and 2×1, 2×2 with 4.
func grids(t *testing.T) []Grid {
	gs := []Grid{{1, 2}, {2, 1}}
	if gputest.RequireGPUs(t, 2); gpusAtLeast(4) {
		gs = append(gs, Grid{2, 2})
	}
	return gs
}

func plan(t testing.TB) multiword.Plan {
	p, err := multiword.Lookup("double-fp16-fabsum")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func randomF32(rng *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(float32(rng.Float64() - 0.5))
	}
	return x
}

// With one panel (k wide) every element is the one-GPU fused kernel's, bit
// for bit, on every grid and odd sizes.
func TestMultiplyOnePanelIsOneGPU(t *testing.T) {
	p := plan(t)
	for _, g := range grids(t) {
		tm := team(t, g)
		rng := rand.New(rand.NewPCG(uint64(g.P), uint64(g.Q)))
		m, n, k := 333, 517, 291
		a, b := randomF32(rng, m*k), randomF32(rng, k*n)
		one, err := gemm.SharedEngine(0)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float64, m*n)
		if err := one.Multiply(p, m, n, k, a, b, want); err != nil {
			t.Fatal(err)
		}
		got := make([]float64, m*n)
		e := &Engine{Team: tm, Panel: k}
		if err := e.Multiply(p, m, n, k, a, b, got); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%v grid: C[%d] = %g, one GPU %g", g, i, got[i], want[i])
			}
		}
		tm.Close()
	}
}

// With many panels the product stays fp32-accurate: its componentwise
// error is within a few units of fp32 of |A||B| (the plan's promise),
// and within twice the one-GPU kernel's plus one unit.
func TestMultiplyPanelsAccurate(t *testing.T) {
	p := plan(t)
	for _, g := range grids(t) {
		tm := team(t, g)
		rng := rand.New(rand.NewPCG(7, uint64(g.Size())))
		m, n, k := 300, 200, 1000
		a, b := randomF32(rng, m*k), randomF32(rng, k*n)
		got := make([]float64, m*n)
		e := &Engine{Team: tm, Panel: 96}
		if err := e.Multiply(p, m, n, k, a, b, got); err != nil {
			t.Fatal(err)
		}
		one, _ := gemm.SharedEngine(0)
		single := make([]float64, m*n)
		if err := one.Multiply(p, m, n, k, a, b, single); err != nil {
			t.Fatal(err)
		}
		errMulti, errOne := componentwise(a, b, got, m, n, k), componentwise(a, b, single, m, n, k)
		const u32 = 0x1p-24
		if errMulti > 8*u32 || errMulti > 2*errOne+u32 {
			t.Errorf("%v grid, panels of 96: error %.3g (one GPU %.3g)", g, errMulti, errOne)
		}
		tm.Close()
	}
}

// componentwise returns max |C − Ĉ| / (|A||B|) against the float64 product.
func componentwise(a, b, c []float64, m, n, k int) float64 {
	worst := 0.0
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s, abs float64
			for l := 0; l < k; l++ {
				s += a[i*k+l] * b[l*n+j]
				abs += math.Abs(a[i*k+l] * b[l*n+j])
			}
			worst = max(worst, math.Abs(c[i*n+j]-s)/abs)
		}
	}
	return worst
}

// Generate draws matgen's matrix whatever the grid; Gather brings it back.
func TestGenerateIsMatgen(t *testing.T) {
	for _, g := range grids(t) {
		tm := team(t, g)
		l := Layout{Rows: 301, Cols: 173, RowBlock: 32, ColBlock: 48, Grid: g}
		m, err := NewMatrix(tm, l)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Generate("centered", 5); err != nil {
			t.Fatal(err)
		}
		got := make([]float64, l.Rows*l.Cols)
		if err := m.Gather(got); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < l.Rows; i++ {
			for j := 0; j < l.Cols; j++ {
				want := float64(float32(matgen.Unit(5, uint64(i+j*l.Rows)) - 0.5))
				if got[i*l.Cols+j] != want {
					t.Fatalf("%v grid: (%d, %d) = %g, want %g", g, i, j, got[i*l.Cols+j], want)
				}
			}
		}
		m.Free()
		tm.Close()
	}
}

// hpl-mxp is matgen's hpl-mxp (scale 1), which one GPU (gpu/dense) and
// the CPU engines draw: the same off-diagonal entries on every grid, and
// the same diagonal bit for bit on grids of one column, where each row's
// sum is one GPU's, from 0 in the order of j; elsewhere the grid row's
// partial sums are added by NCCL, in another order: within n·u.
func TestGenerateSystemIsMatgen(t *testing.T) {
	gs := []Grid{{1, 1}}
	if gpusAtLeast(2) {
		gs = append(gs, Grid{1, 2}, Grid{2, 1})
	}
	if gpusAtLeast(4) {
		gs = append(gs, Grid{2, 2})
	}
	const n, nb, seed = 301, 32, 5
	want, err := matgen.Generate("hpl-mxp", n, seed)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gs {
		tm := team(t, g)
		s, err := GenerateSystem(tm, n, nb, "hpl-mxp", seed)
		if err != nil {
			t.Fatal(err)
		}
		got := gatherSystem(t, s)
		s.Free()
		tm.Close()
		for i := range n {
			for j := range n {
				w, v := want[i*n+j], got[i*n+j]
				if v != w && (i != j || g.Q == 1 || math.Abs(v-w) > n*0x1p-53*w) {
					t.Fatalf("%v grid: (%d, %d) = %v, matgen's %v", g, i, j, v, w)
				}
			}
		}
	}
}

func gpusAtLeast(n int) bool {
	c, err := gpuCount()
	return err == nil && c >= n
}

var gpuCount = gpu.Count

// Connect runs on every grid, twice, and leaves the communicators working:
// a broadcast along each panel row and column afterwards arrives whole.
func TestConnect(t *testing.T) {
	for _, g := range grids(t) {
		tm := team(t, g)
		if err := errors.Join(tm.Connect(), tm.Connect()); err != nil {
			t.Fatalf("%v: %v", g, err)
		}
		const n = 4096
		err := tm.Each(func(r *Rank) error {
			d := r.Engine.Device()
			for _, c := range []*nccl.Comm{r.panelRow, r.panelCol} {
				x := make([]float32, n)
				for i := range x {
					x[i] = float32(c.Rank()*n + i)
				}
				buf, err := d.Alloc(4 * n)
				if err != nil {
					return err
				}
				defer buf.Free()
				if err := d.Upload(buf, x); err != nil {
					return err
				}
				if err := c.Broadcast(buf, n, nccl.Float32, c.Size()-1, r.transfers); err != nil {
					return err
				}
				if err := errors.Join(r.wait(tm.Timeout), d.Download(x, buf)); err != nil {
					return err
				}
				for i, v := range x {
					if want := float32((c.Size()-1)*n + i); v != want {
						return fmt.Errorf("rank %d: element %d = %g, want %g", r.Rank, i, v, want)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%v: %v", g, err)
		}
		tm.Close()
	}
}
