package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/gpu"
)

// mwmmInfo runs "mwmm info args...". Until main.go lists infoCmd, it is
// added to the command list for the call.
func mwmmInfo(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	if lookup("info") == nil {
		saved := commands
		commands = append(commands[:len(commands):len(commands)], infoCmd)
		defer func() { commands = saved }()
	}
	return mwmm(t, "", append([]string{"info"}, args...)...)
}

// Without a GPU (this machine, CI), info says why in one line and succeeds.
func TestInfoNoGPU(t *testing.T) {
	code, out, errs := mwmmInfo(t)
	if code != exitOK || errs != "" {
		t.Fatalf("mwmm info: exit %d, stderr %q", code, errs)
	}
	if gpu.Available() == nil {
		t.Skipf("this machine has a GPU; mwmm info said:\n%s", out)
	}
	ls := lines(out)
	if len(ls) != 2 || !strings.HasPrefix(ls[1], "no GPU: ") {
		t.Fatalf("mwmm info: %q, want the CPU line and one starting with \"no GPU: \"", out)
	}
	if want := "rounding kernel " + format.Kernel(); !strings.HasPrefix(ls[0], "CPU ") || !strings.HasSuffix(ls[0], want) {
		t.Errorf("mwmm info: first line %q, want \"CPU ...\" ending in %q", ls[0], want)
	}
	if want := gpu.Available().Error(); ls[1] != "no GPU: "+want {
		t.Errorf("mwmm info: %q, want the reason %q", ls[1], want)
	}

	code, out, errs = mwmmInfo(t, "--json")
	if code != exitOK || errs != "" {
		t.Fatalf("mwmm info --json: exit %d, stderr %q", code, errs)
	}
	var got infoJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("mwmm info --json: %v in\n%s", err, out)
	}
	if got.GPU || got.Reason == "" || len(got.Devices) != 0 {
		t.Errorf("mwmm info --json: %+v, want no GPU and a reason", got)
	}
	if got.CPU == "" || got.RoundingKernel != format.Kernel() {
		t.Errorf("mwmm info --json: cpu %q, rounding_kernel %q; want a CPU and %q", got.CPU, got.RoundingKernel, format.Kernel())
	}
}

// With a GPU, info lists at least device 0 with a name and an architecture.
func TestInfoGPU(t *testing.T) {
	if err := gpu.Available(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	code, out, errs := mwmmInfo(t, "--json")
	if code != exitOK {
		t.Fatalf("mwmm info --json: exit %d, stderr %q", code, errs)
	}
	var got infoJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("mwmm info --json: %v in\n%s", err, out)
	}
	if !got.GPU || len(got.Devices) == 0 || got.Devices[0].Name == "" || !strings.HasPrefix(got.Devices[0].Arch, "sm_") {
		t.Errorf("mwmm info --json: %+v, want device 0 with a name and an sm_ architecture", got)
	}
	t.Logf("mwmm info --json:\n%s", out)
}

func TestInfoUsage(t *testing.T) {
	if code, _, errs := mwmmInfo(t, "extra"); code != exitUsage || !strings.Contains(errs, "no arguments") {
		t.Errorf("mwmm info extra: exit %d, stderr %q; want a usage error", code, errs)
	}
}
