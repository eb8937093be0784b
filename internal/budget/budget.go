// Package budget decides whether a run fits before it starts: sizes whose
// products overflow (no machine holds them: a bad command line), memory
// beyond what this machine has, and work estimated at over an hour. The
// commands of mwmm share it, so that one policy holds for all: overflow
// is refused always, the other two unless forced.
//
//	if _, err := budget.Entries(n, n); err != nil { … }
//	err := budget.Machine().Check(budget.Cost{Seconds: s, Bytes: b}, force)
package budget

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// MaxTime is the longest estimate a run starts without being forced.
const MaxTime = time.Hour

// maxBytes bounds one array: beyond it Go's allocator panics (2^48 bytes
// on amd64 and arm64) whatever the machine's memory.
const maxBytes = 1 << 47

// A SizeError says the sizes multiply to an array no machine can hold:
// their product, in float64 entries, overflows.
type SizeError struct{ Dims []int }

func (e *SizeError) Error() string {
	s := make([]string, len(e.Dims))
	for i, d := range e.Dims {
		s[i] = strconv.Itoa(d)
	}
	return fmt.Sprintf("%s entries are more than any machine's memory holds", strings.Join(s, "×"))
}

// Entries returns the product of dims, the entries of an array of that
// shape, or a *SizeError when the product of float64 entries overflows
// what one array can hold. Negative sizes are the caller's to refuse; they
// give an error here too.
func Entries(dims ...int) (int, error) {
	p := 1
	for _, d := range dims {
		if d < 0 {
			return 0, fmt.Errorf("negative size %d", d)
		}
		if d != 0 && p > maxBytes/8/d {
			return 0, &SizeError{Dims: dims}
		}
		p *= d
	}
	return p, nil
}

// Cost is a run's estimate: its time on this machine (0: unknown) and
// the memory it needs.
type Cost struct {
	Seconds float64
	Bytes   float64
}

// A TooLongError refuses a run estimated at over Limit: a choice of the
// command line (smaller sizes, a faster engine, or force).
type TooLongError struct {
	Seconds float64
	Limit   time.Duration
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("about %s on this machine, over the %s a run takes without --force", Words(e.Seconds), Words(e.Limit.Seconds()))
}

// A MemoryError refuses a run that needs more memory than is available
// (Total false: --force may try it) or than the machine has (Total true:
// it cannot run here at all).
type MemoryError struct {
	Bytes     float64
	Available int64
	Total     bool
}

func (e *MemoryError) Error() string {
	if e.Total {
		return fmt.Sprintf("needs about %s of memory; this machine has %s", gb(e.Bytes), gb(float64(e.Available)))
	}
	return fmt.Sprintf("needs about %s of memory, %s available; run it with --force", gb(e.Bytes), gb(float64(e.Available)))
}

func gb(b float64) string { return fmt.Sprintf("%.3g GB", b/1e9) }

// Limits are what a run may take: Time and Memory without force, Total
// with it. A zero field is unknown and not checked.
type Limits struct {
	Time   time.Duration
	Memory int64 // bytes available now
	Total  int64 // bytes of memory and swap: more cannot be had, forced or not
}

// Machine is MaxTime and this machine's memory.
func Machine() Limits {
	avail, total := memInfo()
	return Limits{Time: MaxTime, Memory: avail, Total: total}
}

// Check refuses c beyond l: more memory than the machine has always (a
// *MemoryError with Total), then unless force a *TooLongError (the command
// line can change it) and a *MemoryError for memory not available now.
func (l Limits) Check(c Cost, force bool) error {
	switch {
	case l.Total > 0 && c.Bytes > float64(l.Total):
		return &MemoryError{Bytes: c.Bytes, Available: l.Total, Total: true}
	case force:
		return nil
	case l.Time > 0 && c.Seconds > l.Time.Seconds():
		return &TooLongError{Seconds: c.Seconds, Limit: l.Time}
	case l.Memory > 0 && c.Bytes > float64(l.Memory):
		return &MemoryError{Bytes: c.Bytes, Available: l.Memory}
	}
	return nil
}

// Words says a time estimate as people do: "12s", "1 minute", "40
// minutes", "1 hour", "11.9 hours". It takes seconds as a float64 so that
// no estimate overflows a time.Duration.
func Words(seconds float64) string {
	switch {
	case math.IsNaN(seconds) || seconds < 0:
		return "an unknown time"
	case seconds >= 1e7*3600:
		return fmt.Sprintf("%.3g hours", seconds/3600)
	case seconds >= 3600:
		h := math.Round(seconds/360) / 10
		if h == 1 {
			return "1 hour"
		}
		return strconv.FormatFloat(h, 'f', -1, 64) + " hours"
	case seconds >= 60:
		m := math.Round(seconds / 60)
		if m == 1 {
			return "1 minute"
		}
		return fmt.Sprintf("%.0f minutes", m)
	}
	return (time.Duration(seconds * float64(time.Second))).Round(time.Second).String()
}

// Available is MemAvailable of /proc/meminfo in bytes, or 0 where there
// is none (not Linux).
func Available() int64 {
	avail, _ := memInfo()
	return avail
}

// memInfo is MemAvailable and MemTotal + SwapTotal of /proc/meminfo in
// bytes, or zeros where there is none.
func memInfo() (avail, total int64) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	kb := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		if v, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64); err == nil {
			kb[key] = v
		}
	}
	if kb["MemTotal"] == 0 {
		return kb["MemAvailable"] << 10, 0
	}
	return kb["MemAvailable"] << 10, (kb["MemTotal"] + kb["SwapTotal"]) << 10
}
