package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitFor polls until ok, or fails the test after 20 s.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// partials lists the hidden temporary files of outfile in dir.
func partials(dir string) []string {
	m, _ := filepath.Glob(filepath.Join(dir, ".*.partial"))
	return m
}

type result struct {
	code        int
	out, errOut string
}

func runAsync(t *testing.T, args ...string) chan result {
	done := make(chan result, 1)
	go func() {
		code, out, errOut := mwmm(t, "", args...)
		done <- result{code, out, errOut}
	}()
	return done
}

// Ctrl-C stops round mid-array: its temporary file goes (each run left
// one of hundreds of MB) and the earlier y.npy stays.
func TestRoundInterrupted(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "x.npy")
	if err := syscall.Mkfifo(in, 0o600); err != nil {
		t.Skip("no FIFOs:", err)
	}
	out := writeFile(t, dir, "y.npy", []byte("earlier result"))
	go func() { // 2^28 zeros, as fast as round takes them, until it stops
		f, err := os.OpenFile(in, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		f.Write(npyBytes("<f8", "(268435456,)", false, nil))
		for buf := make([]byte, 1<<16); ; {
			if _, err := f.Write(buf); err != nil {
				return
			}
		}
	}()
	done := runAsync(t, "round", "--format", "fp16", "--in", in, "--out", out)
	// The temporary file exists once the signal handler is installed.
	waitFor(t, "round's temporary file", func() bool { return len(partials(dir)) > 0 })
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	r := <-done
	if r.code != exitFailure || !strings.Contains(r.errOut, "interrupted") {
		t.Errorf("exit %d, stderr %q; want 1 and interrupted", r.code, r.errOut)
	}
	if p := partials(dir); len(p) > 0 {
		t.Errorf("left behind: %v", p)
	}
	if b, _ := os.ReadFile(out); string(b) != "earlier result" {
		t.Errorf("y.npy now holds %d bytes", len(b))
	}
}

// Ctrl-C stops probe --record between two cases: the record ends on a
// whole line (it ended mid-record) and the message says how many.
func TestProbeRecordInterrupted(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "r.jsonl")
	done := runAsync(t, "probe", "--unit", "t4", "--against", "t4", "--crosscheck", "10000000", "--record", rec)
	// Wait for the first lines to reach the temporary file (its buffer
	// holds 1 MiB): the signal handler is installed by then.
	waitFor(t, "the record's first lines", func() bool {
		p := partials(dir)
		st, err := os.Stat(strings.Join(p, ""))
		return len(p) == 1 && err == nil && st.Size() > 0
	})
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	r := <-done
	if r.code != exitFailure || !strings.Contains(r.errOut, "interrupted") {
		t.Fatalf("exit %d, stderr %q; want 1 and interrupted", r.code, r.errOut)
	}
	b, err := os.ReadFile(rec)
	if err != nil || len(b) < 1<<20 || b[len(b)-1] != '\n' {
		t.Fatalf("record: %d bytes, %v; want at least 1 MiB of whole lines", len(b), err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for i, l := range lines {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line %d of %d: %v: %.80q", i+1, len(lines), err, l)
		}
	}
	if want := "holds the first " + count(len(lines), "case"); !strings.Contains(r.errOut, want) {
		t.Errorf("stderr %q; want %q", r.errOut, want)
	}
	if p := partials(dir); len(p) > 0 {
		t.Errorf("left behind: %v", p)
	}
}

// On a full disk (here a 4 KiB file-size limit), gemm --out fails and the
// earlier C.npy stays whole: it was truncated to a corrupt 4 KiB file.
func TestGemmFullDisk(t *testing.T) {
	if dir := os.Getenv("MWMM_TEST_FULL_DISK"); dir != "" {
		// The child: writes past 4 KiB fail (EFBIG) instead of killing it.
		syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 4096, Max: 4096})
		os.Exit(run([]string{"gemm", "--size", "64,8,64", "--out", filepath.Join(dir, "C.npy")}, nil, os.Stdout, os.Stderr))
	}
	dir := t.TempDir()
	good := bytes.Repeat([]byte("the good C "), 2000)
	c := writeFile(t, dir, "C.npy", good)
	cmd := exec.Command(os.Args[0], "-test.run=^TestGemmFullDisk$")
	cmd.Env = append(os.Environ(), "MWMM_TEST_FULL_DISK="+dir)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailure || !strings.Contains(string(out), "C.npy: file too large") {
		t.Errorf("gemm on a full disk: %v: %s; want exit 1 and the write's error", err, out)
	}
	if b, _ := os.ReadFile(c); !bytes.Equal(b, good) {
		t.Errorf("the earlier C.npy now holds %d bytes", len(b))
	}
	if p := partials(dir); len(p) > 0 {
		t.Errorf("left behind: %v", p)
	}
}
