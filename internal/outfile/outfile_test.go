package outfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// leftovers lists the hidden temporary files in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	ms, err := filepath.Glob(filepath.Join(dir, ".*.partial"))
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func TestWriteFileReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "C.npy")
	for _, want := range []string{"first", "second, longer"} {
		err := WriteFile(context.Background(), p, nil, func(w io.Writer) error {
			_, err := io.WriteString(w, want)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(p); string(got) != want {
			t.Errorf("file holds %q, want %q", got, want)
		}
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

// A write that fails half-way (as on a full disk) leaves the earlier file
// whole and no temporary file.
func TestFailedWriteKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "C.npy")
	os.WriteFile(p, []byte("the good C"), 0o644)
	full := errors.New("no space left on device")
	err := WriteFile(context.Background(), p, nil, func(w io.Writer) error {
		w.Write(bytes.Repeat([]byte{1}, 3*chunk)) // past the buffer: bytes reach the disk
		return full
	})
	if !errors.Is(err, full) {
		t.Fatalf("error %v, want %v", err, full)
	}
	if got, _ := os.ReadFile(p); string(got) != "the good C" {
		t.Errorf("the earlier file now holds %d bytes", len(got))
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

// An interrupt (the context cancelled) stops the next Write; Abort removes
// the temporary file and the earlier file stays.
func TestInterruptRemovesTemporary(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "y.npy")
	os.WriteFile(p, []byte("old"), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	f, err := Create(ctx, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, chunk+1)); err != nil {
		t.Fatal(err)
	}
	if len(leftovers(t, dir)) != 1 {
		t.Fatal("no temporary file while writing")
	}
	cancel()
	if _, err := f.Write([]byte("more")); err == nil || !strings.Contains(err.Error(), "interrupted") || !errors.Is(err, context.Canceled) {
		t.Errorf("Write after the interrupt: %v", err)
	}
	if err := f.Commit(); err == nil {
		t.Error("Commit after the interrupt succeeded")
	}
	f.Abort()
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}
	if got, _ := os.ReadFile(p); string(got) != "old" {
		t.Errorf("the earlier file holds %q", got)
	}
}

// A FIFO is written in place and stays a FIFO (a rename would replace it).
func TestSpecialFileInPlace(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	got := make(chan string)
	go func() {
		r, err := os.Open(p)
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(r)
		r.Close()
		got <- string(b)
	}()
	if err := Check(p); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(context.Background(), p, nil, func(w io.Writer) error {
		_, err := io.WriteString(w, "through the pipe")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through the pipe" {
		t.Errorf("the reader got %q", s)
	}
	if st, err := os.Lstat(p); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("after the write: %v, %v; want a FIFO still", st.Mode(), err)
	}
	if err := WriteFile(context.Background(), os.DevNull, nil, func(w io.Writer) error { _, err := w.Write([]byte("x")); return err }); err != nil {
		t.Errorf("%s: %v", os.DevNull, err)
	}
	if st, _ := os.Stat(os.DevNull); st.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("%s is now %v", os.DevNull, st.Mode())
	}
	// /dev/full: the write's error, and the device stays (round --out
	// /dev/full, run as root, replaced it with a regular file).
	if st, err := os.Stat("/dev/full"); err == nil && st.Mode()&os.ModeCharDevice != 0 {
		err := WriteFile(context.Background(), "/dev/full", nil, func(w io.Writer) error { _, err := w.Write([]byte("x")); return err })
		if err == nil || !strings.Contains(err.Error(), "/dev/full: no space left") {
			t.Errorf("/dev/full: %v", err)
		}
		if st, err := os.Stat("/dev/full"); err != nil || st.Mode()&os.ModeCharDevice == 0 {
			t.Errorf("/dev/full is now %v", st.Mode())
		}
	}
}

// "-" and /dev/stdout are the stdout given: /dev/stdout is a link to
// /proc/self/fd/1, which may be a pipe (no file to rename over) or the
// file the shell opened (a second opening would write from its start).
func TestStdout(t *testing.T) {
	for _, path := range []string{Stdout, "/dev/stdout"} {
		var out bytes.Buffer
		if err := Check(path); err != nil {
			t.Fatal(err)
		}
		if err := WriteFile(context.Background(), path, &out, func(w io.Writer) error { _, err := io.WriteString(w, "C"); return err }); err != nil {
			t.Fatal(err)
		}
		if out.String() != "C" {
			t.Errorf("%s: stdout got %q", path, out.String())
		}
	}
}

// A link is written through: the link stays, its target gets the data.
func TestSymlinkWrittenThrough(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "real.npy"), filepath.Join(dir, "link.npy")
	os.WriteFile(target, []byte("old"), 0o600)
	if err := os.Symlink("real.npy", link); err != nil {
		t.Skip(err)
	}
	if err := WriteFile(context.Background(), link, nil, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced by a file")
	}
	st, _ := os.Stat(target)
	if b, _ := os.ReadFile(target); string(b) != "new" || st.Mode().Perm() != 0o600 {
		t.Errorf("target holds %q with mode %v, want \"new\" and the old mode 0600", b, st.Mode().Perm())
	}
}

func TestNewFileMode(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	p := filepath.Join(t.TempDir(), "x.npy")
	if err := WriteFile(context.Background(), p, nil, func(io.Writer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644 (0666 less the umask 022, as os.Create)", st.Mode().Perm())
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	ro := filepath.Join(dir, "ro")
	os.Mkdir(ro, 0o555)
	tests := []struct {
		path, want string // want: part of the error, "" for none
	}{
		{filepath.Join(dir, "new.npy"), ""},
		{file, ""},
		{"-", ""},
		{os.DevNull, ""},
		{filepath.Join(dir, "nodir", "x.npy"), "no folder"},
		{filepath.Join(file, "x.npy"), "no folder"}, // the "folder" is a file
		{dir, "is a folder"},
		{"", "empty"},
	}
	if os.Geteuid() != 0 { // root writes anywhere
		tests = append(tests, struct{ path, want string }{filepath.Join(ro, "x.npy"), "cannot write into"})
	}
	for _, tt := range tests {
		err := Check(tt.path)
		if (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Check(%q) = %v, want %q", tt.path, err, tt.want)
		}
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("Check left %v", l)
	}
}

// Writes of every size, around the buffer's and after a short header,
// reach the file in order, byte for byte (large ones bypass the buffer).
func TestWriteSizesInOrder(t *testing.T) {
	p := filepath.Join(t.TempDir(), "y.npy")
	var want []byte
	err := WriteFile(context.Background(), p, nil, func(w io.Writer) error {
		for i, n := range []int{128, chunk, 3*chunk + 5, 7, chunk - 1, chunk + 1, 2 * chunk, 0, 1} {
			b := bytes.Repeat([]byte{byte(i + 1)}, n)
			want = append(want, b...)
			if k, err := w.Write(b); err != nil || k != n {
				return fmt.Errorf("write %d of %d bytes: %v", k, n, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, want) {
		t.Errorf("file of %d bytes (%v), want %d bytes as written", len(got), err, len(want))
	}
}
