package progress

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

func TestNotATerminal(t *testing.T) {
	var buf bytes.Buffer
	if b := New(&buf, 10, "x"); b != nil {
		t.Fatal("a bytes.Buffer got a bar")
	}
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if b := New(f, 10, "x"); b != nil {
		t.Fatal("a regular file got a bar")
	}
	var nilBar *Bar // every method works on nil
	nilBar.Add(3)
	nilBar.Finish()
	if nilBar.Done() != 0 || nilBar.Shown() {
		t.Fatal("nil bar reports work")
	}
}

func TestAppearsAfterDelay(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Unix(0, 0)
	b := newBar(&buf, 100, "sweep", func() time.Time { return clock })
	b.Add(10)
	if b.Shown() || buf.Len() != 0 {
		t.Fatalf("bar shown before %v: %q", Delay, buf.String())
	}
	clock = clock.Add(Delay + time.Millisecond)
	b.Add(40)
	if !b.Shown() {
		t.Fatal("bar not shown after the delay")
	}
	if b.Done() != 50 {
		t.Fatalf("done = %d, want 50", b.Done())
	}
	if !strings.Contains(buf.String(), "sweep") {
		t.Fatalf("bar output %q lacks its description", buf.String())
	}
	b.Finish()
	if b.Shown() {
		t.Fatal("bar still shown after Finish")
	}
}
