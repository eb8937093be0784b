package main

import (
	"strings"
	"testing"

	"github.com/mwmm/mwmm/gpu"
)

func TestBenchErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--sizes", "8"}, "not a size"},
		{[]string{"bench", "--reps", "0"}, "--reps"},
		{[]string{"bench", "--accuracy", "12..10"}, "--accuracy"},
		{[]string{"bench", "extra"}, "unexpected"},
	} {
		code, _, errOut := mwmm(t, "", c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, %q; want exit 2 and %q", c.args, code, errOut, c.want)
		}
	}
	if gpu.Available() == nil {
		t.Skip("a GPU is present: the no-GPU message is not shown")
	}
	code, _, errOut := mwmm(t, "", "bench")
	if code != exitFailure || !strings.Contains(errOut, "no GPU to benchmark") {
		t.Errorf("bench without a GPU: exit %d, %q", code, errOut)
	}
}
