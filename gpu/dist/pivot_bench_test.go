package dist

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mwmm/mwmm/gpu"
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

type stepEvent struct {
	r    *Rank
	k    int
	what string
	ev   *gpu.Event
}

// stepTimeline runs factor with stepMark set and tabulates its events: a
// line a rank and step, each mark's milliseconds from the rank's first.
func stepTimeline(tb testing.TB, factor func() error) string {
	var mu sync.Mutex
	var marks []stepEvent
	stepMark = func(r *Rank, k int, what string, st *gpu.Stream) {
		ev, err := r.Engine.Device().NewEvent()
		if err == nil {
			err = ev.Record(st)
		}
		if err != nil {
			tb.Fatal(err)
		}
		mu.Lock()
		marks = append(marks, stepEvent{r, k, what, ev})
		mu.Unlock()
	}
	err := factor()
	stepMark = nil
	if err != nil {
		tb.Fatal(err)
	}
	var out strings.Builder
	first := map[*Rank]*gpu.Event{}
	for _, m := range marks {
		if first[m.r] == nil {
			first[m.r] = m.ev
		}
	}
	line := map[[2]int][]string{}
	var keys [][2]int
	for _, m := range marks {
		t, err := gpu.Elapsed(first[m.r], m.ev)
		if err != nil {
			tb.Fatal(err)
		}
		key := [2]int{m.r.Rank, m.k}
		if line[key] == nil {
			keys = append(keys, key)
		}
		line[key] = append(line[key], fmt.Sprintf("%s %.2f", m.what, t.Seconds()*1e3))
	}
	for _, m := range marks {
		m.ev.Close()
	}
	slices.SortFunc(keys, func(a, b [2]int) int { return cmp.Or(a[0]-b[0], a[1]-b[1]) })
	for _, key := range keys {
		fmt.Fprintf(&out, "rank %d step %2d: %s\n", key[0], key[1], strings.Join(line[key], ", "))
	}
	return out.String()
}
