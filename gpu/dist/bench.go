package dist

import (
	"fmt"
	"time"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/gemm"
	"github.com/mwmm/mwmm/multiword"
)

// A Timing is one product's best time of several runs, on the team and on
// its first GPU alone, for the same n×n matrices.
type Timing struct {
	N, GPUs, Panel int
	Grid           Grid
	Team, One      time.Duration // best of the runs; One is 0 when not run
}

// Speedup is One / Team.
func (t Timing) Speedup() float64 { return t.One.Seconds() / t.Team.Seconds() }

// TFLOPs returns the team's rate, 2n³ over its time, in TFLOP/s.
func (t Timing) TFLOPs() float64 {
	return 2 * float64(t.N) * float64(t.N) * float64(t.N) / t.Team.Seconds() / 1e12
}

// Bench times Multiply of n×n centered matrices drawn on the team, best
// of reps runs after one to warm up, and (alone, when one is set) the
// same product on the team's first GPU through the fused kernel.
func Bench(t *Team, plan multiword.Plan, n, panel, reps int, one bool) (Timing, error) {
	res := Timing{N: n, GPUs: t.Grid.Size(), Grid: t.Grid, Panel: min(panel, n)}
	e := &Engine{Team: t, Panel: panel}
	la, lb, lc := e.layouts(n, n, n)
	var mats []*Matrix
	defer func() {
		for _, m := range mats {
			m.Free()
		}
	}()
	for i, l := range []Layout{la, lb, lc} {
		m, err := NewMatrix(t, l)
		if err != nil {
			return res, err
		}
		mats = append(mats, m)
		if i < 2 {
			if err := m.Generate("centered", uint64(i+1)); err != nil {
				return res, err
			}
		}
	}
	var err error
	res.Team, err = best(reps, func() error { return Multiply(plan, mats[0], mats[1], mats[2]) })
	if err != nil || !one || !t.Whole() {
		return res, err
	}
	res.One, err = benchOne(t.Ranks[0], plan, n, reps)
	return res, err
}

// best returns the shortest of reps timed runs of f, after a first one.
func best(reps int, f func() error) (time.Duration, error) {
	if err := f(); err != nil {
		return 0, err
	}
	var b time.Duration
	for i := 0; i < max(1, reps); i++ {
		start := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		if d := time.Since(start); i == 0 || d < b {
			b = d
		}
	}
	return b, nil
}

// benchOne times the n×n product on r's GPU alone: the fused kernel on
// dense column-major matrices.
func benchOne(r *Rank, plan multiword.Plan, n, reps int) (time.Duration, error) {
	d := r.Engine.Device()
	bufs := make([]*gpu.Buffer, 3)
	defer func() { gpu.FreeAll(bufs...) }()
	single := Layout{n, n, n, n, Grid{1, 1}}
	for i := range bufs {
		b, err := d.Alloc(4 * n * n)
		if err != nil {
			return 0, fmt.Errorf("dist: the one-GPU baseline: %w", err)
		}
		bufs[i] = b
		if i < 2 {
			if err := r.fill(b, single, 0, 0, -0.5, uint64(i+1), false); err != nil {
				return 0, err
			}
		}
	}
	return best(reps, func() error {
		err := r.Engine.Fused(plan, gemm.FusedArgs{M: n, N: n, K: n, A: bufs[0], LayoutA: gemm.ColMajor,
			B: bufs[1], LayoutB: gemm.ColMajor, C: bufs[2], LayoutC: gemm.ColMajor, Stream: r.compute})
		if err != nil {
			return err
		}
		return r.compute.Sync()
	})
}

// fill draws rank (p, q)'s blocks of layout l: lo + matgen.Unit(seed, ·),
// in fp64 or rounded to fp32.
func (r *Rank) fill(buf *gpu.Buffer, l Layout, p, q int, lo float64, seed uint64, double bool) error {
	name := "fill_local"
	if double {
		name = "fill_local_f64"
	}
	f, err := r.function(name)
	if err != nil {
		return err
	}
	return f.Launch([3]uint32{2048, 1, 1}, [3]uint32{256, 1, 1}, 0, r.compute,
		buf, int32(l.LocalRows(p)), int32(l.LocalCols(q)), int32(l.RowBlock), int32(l.ColBlock),
		int32(p), int32(l.Grid.P), int32(q), int32(l.Grid.Q), int64(l.Rows), seed, lo)
}
