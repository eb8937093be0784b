// Package progress shows a progress bar on stderr for long runs: only when
// stderr is a terminal (logs and CI stay clean) and only once the run has
// lasted a second (short runs print nothing).
//
//	bar := progress.New(os.Stderr, total, "fig3.1")
//	defer bar.Finish()
//	for ... { work(); bar.Add(cost) }
//
// A nil *Bar is valid and does nothing, so callers need no checks.
package progress

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Delay is how long a run goes before its bar appears.
const Delay = time.Second

// Bar counts work done out of a total; it is safe for concurrent use.
type Bar struct {
	mu      sync.Mutex
	w       io.Writer
	total   int64
	done    int64
	desc    string
	start   time.Time
	visible bool
	bar     *progressbar.ProgressBar
	now     func() time.Time
}

// New returns a bar for total units of work written to w, or nil when w is
// not a terminal or total ≤ 0.
func New(w io.Writer, total int64, desc string) *Bar {
	if total <= 0 || !IsTerminal(w) {
		return nil
	}
	return newBar(w, total, desc, time.Now)
}

func newBar(w io.Writer, total int64, desc string, now func() time.Time) *Bar {
	return &Bar{w: w, total: total, desc: desc, start: now(), visible: true, now: now}
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Add records n more units done.
func (b *Bar) Add(n int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done += n
	if b.bar == nil {
		if b.now().Sub(b.start) < Delay {
			return
		}
		b.bar = progressbar.NewOptions64(b.total,
			progressbar.OptionSetWriter(b.w),
			progressbar.OptionSetDescription(b.desc),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish())
	}
	_ = b.bar.Set64(min(b.done, b.total))
}

// Done returns the units recorded so far.
func (b *Bar) Done() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.done
}

// Shown reports whether the bar has been drawn.
func (b *Bar) Shown() bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bar != nil
}

// Finish clears the bar from the terminal.
func (b *Bar) Finish() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bar != nil {
		_ = b.bar.Finish()
		b.bar = nil
	}
}
