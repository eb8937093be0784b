//go:build unix

package main

import (
	"bytes"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SIGTERM stops a long factorization within seconds (it did not within
// 10 s: the context was checked once a block step), and the message says
// "interrupted", exit 1, not Go's "context canceled".
func TestSIGTERMInterruptsLU(t *testing.T) {
	// Keep SIGTERM from ending the test binary while lu has not yet
	// installed its handler.
	sig := make(chan os.Signal, 8)
	signal.Notify(sig, syscall.SIGTERM)
	defer signal.Stop(sig)
	type result struct {
		code   int
		stderr string
	}
	done := make(chan result, 1)
	go func() {
		var out, errb bytes.Buffer
		// One 600×600×600 fp16 update and 600-column panels: tens of seconds.
		code := run([]string{"lu", "--size", "1200", "--factor", "fp16", "--nb", "600"}, strings.NewReader(""), &out, &errb)
		done <- result{code, errb.String()}
	}()
	start := time.Now()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case r := <-done:
			if d := time.Since(start); d > 10*time.Second || r.code != exitFailure || !strings.Contains(r.stderr, "mwmm lu: interrupted") || strings.Contains(r.stderr, "context canceled") {
				t.Errorf("after %v: exit %d, stderr %q; want 1, interrupted, within 10 s", d, r.code, r.stderr)
			}
			return
		case <-tick.C:
			syscall.Kill(os.Getpid(), syscall.SIGTERM)
		}
	}
}
