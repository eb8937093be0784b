package dist

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkPivotedPieces times FactorPivoted of a centered A of order
// 32768 in blocks of 1024 on a 1×2 grid, with the rest of each update
// leaving 32, 0 and 64 multiprocessors to the next panel, and the chain
// of panels alone: cuSOLVER sgetrf of each (n − k·nb)×nb panel in turn on
// GPU 0, the update's floor under a look-ahead.
func BenchmarkPivotedPieces(b *testing.B) {
	const n, nb = 32768, 1024
	tm := team(b, Grid{1, 2})
	defer tm.Close()
	s, err := GenerateSystem(tm, n, nb, "centered", 1)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Free()
	defer func(v int) { pivotPanelSMs = v }(pivotPanelSMs)
	if w, _, err := FactorPivoted(context.Background(), s, plan(b)); err != nil { // compiles and allocates
		b.Fatal(err)
	} else {
		w.Free()
	}
	defer func(v bool) { pivotRecursive = v }(pivotRecursive)
	for _, c := range []struct {
		sms       int
		recursive bool
	}{{32, true}, {32, false}, {0, true}, {64, true}} {
		panel := "recursive"
		if !c.recursive {
			panel = "sgetrf"
		}
		b.Run(fmt.Sprintf("factor/%s/panel-sms=%d", panel, c.sms), func(b *testing.B) {
			pivotPanelSMs, pivotRecursive = c.sms, c.recursive
			for b.Loop() {
				w, _, err := FactorPivoted(context.Background(), s, plan(b))
				if err != nil {
					b.Fatal(err)
				}
				w.Free()
			}
		})
	}
	b.Run("timeline", func(b *testing.B) {
		pivotPanelSMs, pivotRecursive = LookaheadSMs, true
		for b.Loop() {
			b.Logf("steps' marks, ms from each rank's first:\n%s", stepTimeline(b, func() error {
				w, _, err := FactorPivoted(context.Background(), s, plan(b))
				if err == nil {
					w.Free()
				}
				return err
			}))
		}
	})
	b.Run("panels", func(b *testing.B) {
		r := tm.Ranks[0]
		d := r.Engine.Device()
		a, err := d.Alloc(4 * n * nb)
		if err != nil {
			b.Fatal(err)
		}
		defer a.Free()
		piv, err := r.scratch(slotPivots, 4*nb)
		if err != nil {
			b.Fatal(err)
		}
		if err := r.launch("fill_local", n*nb, a, int32(n), int32(nb), int32(nb), int32(nb), int32(0), int32(1), int32(0), int32(1), int64(n), uint64(3), -0.5); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			start := time.Now()
			for k := 0; k*nb < n; k++ {
				if err := r.getrf(r.compute, a, n, n-k*nb, nb, piv); err != nil {
					b.Fatal(err)
				}
			}
			if err := r.compute.Sync(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/float64(n), "µs/column")
		}
	})
}
