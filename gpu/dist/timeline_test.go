package dist

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mwmm/mwmm/gpu"
)

// A stepTime is one of stepMark's points: rank, step (−1 before the
// steps), what, and its milliseconds from the rank's first point.
type stepTime struct {
	rank, k int
	what    string
	ms      float64
}

// stepTimeline runs factor with stepMark set and tabulates its points: a
// line a rank and step, then summarizeSteps' lines.
func stepTimeline(tb testing.TB, factor func() error) string {
	times := recordSteps(tb, factor)
	return formatSteps(times) + summarizeSteps(times)
}

// recordSteps runs factor with stepMark set, an event at each point.
func recordSteps(tb testing.TB, factor func() error) []stepTime {
	type mark struct {
		r    *Rank
		k    int
		what string
		ev   *gpu.Event
	}
	var mu sync.Mutex
	var marks []mark
	stepMark = func(r *Rank, k int, what string, st *gpu.Stream) {
		ev, err := r.Engine.Device().NewEvent()
		if err == nil {
			err = ev.Record(st)
		}
		if err != nil {
			tb.Fatal(err)
		}
		mu.Lock()
		marks = append(marks, mark{r, k, what, ev})
		mu.Unlock()
	}
	err := factor()
	stepMark = nil
	if err != nil {
		tb.Fatal(err)
	}
	first := map[*Rank]*gpu.Event{}
	var times []stepTime
	for _, m := range marks {
		if first[m.r] == nil {
			first[m.r] = m.ev
		}
		t, err := gpu.Elapsed(first[m.r], m.ev)
		if err != nil {
			tb.Fatal(err)
		}
		times = append(times, stepTime{m.r.Rank, m.k, m.what, t.Seconds() * 1e3})
	}
	for _, m := range marks {
		m.ev.Close()
	}
	return times
}

// formatSteps writes a line a rank and step, its points in order.
func formatSteps(times []stepTime) string {
	line := map[[2]int][]string{}
	var keys [][2]int
	for _, t := range times {
		key := [2]int{t.rank, t.k}
		if line[key] == nil {
			keys = append(keys, key)
		}
		line[key] = append(line[key], fmt.Sprintf("%s %.2f", t.what, t.ms))
	}
	slices.SortFunc(keys, func(a, b [2]int) int { return cmp.Or(a[0]-b[0], a[1]-b[1]) })
	var out strings.Builder
	for _, key := range keys {
		fmt.Fprintf(&out, "rank %d step %2d: %s\n", key[0], key[1], strings.Join(line[key], ", "))
	}
	return out.String()
}

// summarizeSteps says, for each rank, where its compute stream's time
// went: from its first point to the last step's end ("used"), the updates
// (each step's "start" to "used") and the waits between one step's end
// and the next one's start, in the first half of the steps and the second.
func summarizeSteps(times []stepTime) string {
	at := map[[2]int]map[string]float64{}
	ranks := map[int]int{} // rank → its last step
	for _, t := range times {
		key := [2]int{t.rank, t.k}
		if at[key] == nil {
			at[key] = map[string]float64{}
		}
		at[key][t.what] = t.ms
		ranks[t.rank] = max(ranks[t.rank], t.k)
	}
	var out strings.Builder
	for _, rank := range slices.Sorted(maps.Keys(ranks)) {
		last := ranks[rank]
		var busy, wait [2]float64
		for k := 0; k <= last; k++ {
			step := at[[2]int{rank, k}]
			half := min(2*k/(last+1), 1)
			busy[half] += step["used"] - step["start"]
			if k > 0 {
				wait[half] += step["start"] - at[[2]int{rank, k - 1}]["used"]
			}
		}
		fmt.Fprintf(&out, "rank %d: steps end at %.1f ms; updates %.1f + %.1f ms, waits %.1f + %.1f ms (first half + second)\n",
			rank, at[[2]int{rank, last}]["used"], busy[0], busy[1], wait[0], wait[1])
	}
	return out.String()
}

// summarizeSteps on a hand-made timeline: two ranks, four steps each.
func TestSummarizeSteps(t *testing.T) {
	var times []stepTime
	add := func(rank, k int, start, used float64) {
		times = append(times, stepTime{rank, k, "turn", start - 1}, stepTime{rank, k, "start", start}, stepTime{rank, k, "used", used})
	}
	add(0, 0, 1, 5)    // update 4
	add(0, 1, 6, 9)    // wait 1, update 3
	add(0, 2, 11, 12)  // wait 2, update 1
	add(0, 3, 15, 16)  // wait 3, update 1
	add(1, 0, 0, 2)    // update 2
	add(1, 1, 2, 4)    // update 2
	add(1, 2, 4.5, 5)  // wait 0.5, update 0.5
	add(1, 3, 5.5, 10) // wait 0.5, update 4.5
	got := summarizeSteps(times)
	want := "rank 0: steps end at 16.0 ms; updates 7.0 + 2.0 ms, waits 1.0 + 5.0 ms (first half + second)\n" +
		"rank 1: steps end at 10.0 ms; updates 4.0 + 5.0 ms, waits 0.0 + 1.0 ms (first half + second)\n"
	if got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
	if line := strings.SplitN(formatSteps(times), "\n", 2)[0]; line != "rank 0 step  0: turn 0.00, start 1.00, used 5.00" {
		t.Errorf("first line %q", line)
	}
}
