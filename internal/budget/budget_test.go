package budget

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestEntries(t *testing.T) {
	for _, c := range []struct {
		dims []int
		want int
		ok   bool
	}{
		{[]int{3, 4}, 12, true},
		{[]int{0, math.MaxInt}, 0, true},
		{[]int{1 << 20, 1 << 20}, 1 << 40, true},
		{[]int{1 << 22, 1 << 22}, 1 << 44, true},       // 2^47 bytes: the limit
		{[]int{1 << 22, 1<<22 + 1}, 0, false},          // past it
		{[]int{3037000500, 3037000500}, 0, false},      // overflows int itself
		{[]int{math.MaxInt, 2}, 0, false},              // wraps negative in plain int arithmetic
		{[]int{4294967296, 4294967296}, 0, false},      // wraps to 0
		{[]int{1000000, 1000000}, 1000000000000, true}, // 8 TB: memory's check, not overflow
	} {
		got, err := Entries(c.dims...)
		var se *SizeError
		if c.ok && (err != nil || got != c.want) || !c.ok && !errors.As(err, &se) {
			t.Errorf("Entries(%v) = %d, %v; want %d, ok %v", c.dims, got, err, c.want, c.ok)
		}
	}
	if _, err := Entries(-1, 2); err == nil {
		t.Error("Entries(-1, 2): no error")
	}
}

func TestCheck(t *testing.T) {
	l := Limits{Time: time.Hour, Memory: 1e9}
	var tl *TooLongError
	var me *MemoryError
	if err := l.Check(Cost{Seconds: 3601, Bytes: 2e9}, false); !errors.As(err, &tl) {
		t.Errorf("over an hour and memory: %v; want the time refused first", err)
	}
	if err := l.Check(Cost{Seconds: 10, Bytes: 2e9}, false); !errors.As(err, &me) || me.Error() != "needs about 2 GB of memory, 1 GB available; run it with --force" {
		t.Errorf("over memory: %v", err)
	}
	if err := l.Check(Cost{Seconds: 3600, Bytes: 1e9}, false); err != nil {
		t.Errorf("at the limits: %v", err)
	}
	if err := l.Check(Cost{Seconds: 1e30, Bytes: 1e30}, true); err != nil {
		t.Errorf("forced: %v", err)
	}
	l.Total = 4e9
	if err := l.Check(Cost{Seconds: 1, Bytes: 5e9}, true); !errors.As(err, &me) || !me.Total {
		t.Errorf("beyond the machine's total, forced: %v; want refused", err)
	}
	if err := l.Check(Cost{Seconds: 1e9, Bytes: 5e9}, false); !errors.As(err, &me) || !me.Total {
		t.Errorf("beyond the machine's total and long: %v; want the memory refused first", err)
	}
	if m := Machine(); m.Memory > 0 && m.Total < m.Memory {
		t.Errorf("Machine() = %+v: total below available", m)
	}
	if err := (Limits{}).Check(Cost{Seconds: 1e30, Bytes: 1e30}, false); err != nil {
		t.Errorf("no limits known: %v", err)
	}
	if got := (&TooLongError{Seconds: 11.9 * 3600, Limit: time.Hour}).Error(); got != "about 11.9 hours on this machine, over the 1 hour a run takes without --force" {
		t.Errorf("TooLongError: %q", got)
	}
}

func TestWords(t *testing.T) {
	for s, want := range map[float64]string{
		12.4: "12s", 60: "1 minute", 89: "1 minute", 91: "2 minutes", 3600: "1 hour",
		42840: "11.9 hours", 1e20: "2.78e+16 hours", math.NaN(): "an unknown time",
	} {
		if got := Words(s); got != want {
			t.Errorf("Words(%g) = %q, want %q", s, got, want)
		}
	}
}
