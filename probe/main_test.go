package probe

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestMain lets the heap grow to 5× its live size between collections: the
// probes of a few hundred units allocate gigabytes of short-lived cases and
// reports over a live heap of megabytes, and at the default (100%) the
// collector ran 600 times and took a sixth of the tests' CPU time. A GOGC
// in the environment wins.
func TestMain(m *testing.M) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(m.Run())
}
