package npy

import (
	"bufio"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSpeedBesideCp times reading and writing float64 .npy files against
// cp of the same file. It writes multi-GB files, so it runs only when
// NPY_SPEED_MB lists sizes in MB, e.g.
//
//	NPY_SPEED_MB=256,2048 go test -run SpeedBesideCp -v ./internal/npy/
//
// NPY_SPEED_DIR picks the directory (default: the test's temporary one).
// The page cache is warm for all: each operation runs three times and the
// fastest counts, so all read from memory and write into it (the kernel
// writes back later, for cp too). ReadFile "fresh" reads into memory given
// back to the OS before, so it pays the page faults a fresh process pays;
// "reused" into memory the Go heap holds from the last read. Beside cp:
// cat of the file to /dev/null (reading alone, into one small buffer) and
// dd with one block of the file's size (reading into fresh memory).
func TestSpeedBesideCp(t *testing.T) {
	env := os.Getenv("NPY_SPEED_MB")
	if env == "" {
		t.Skip("set NPY_SPEED_MB=256,2048 to time reading and writing beside cp")
	}
	dir := os.Getenv("NPY_SPEED_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	for _, f := range strings.Split(env, ",") {
		mb, err := strconv.Atoi(f)
		if err != nil || mb <= 0 {
			t.Fatalf("NPY_SPEED_MB=%q: %q is not a positive size in MB", env, f)
		}
		speedOne(t, dir, mb)
	}
}

// normalMatrix is about mb MB of float64 normal entries in 4096 columns,
// the same for a given mb.
func normalMatrix(mb int) Matrix {
	const cols = 4096
	rows := (mb << 20 / 8) / cols
	m := Matrix{Rows: rows, Cols: cols, Data: make([]float64, rows*cols), Dtype: "float64"}
	rng := rand.New(rand.NewPCG(1, uint64(mb)))
	for i := range m.Data {
		m.Data[i] = rng.NormFloat64()
	}
	return m
}

func speedOne(t *testing.T, dir string, mb int) {
	m := normalMatrix(mb)
	src, dst := filepath.Join(dir, "speed-src.npy"), filepath.Join(dir, "speed-dst.npy")
	defer os.Remove(src)
	defer os.Remove(dst)
	write := best(t, func() error { os.Remove(src); return WriteFile(src, m) })
	cp := best(t, func() error { os.Remove(dst); return exec.Command("cp", src, dst).Run() })
	cat := best(t, func() error { return exec.Command("sh", "-c", "cat \"$0\" >/dev/null", src).Run() })
	stream := best(t, func() error { os.Remove(dst); return streamCopy(src, dst) })
	fi, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	dd := best(t, func() error {
		return exec.Command("dd", "if="+src, "of=/dev/null", "bs="+strconv.FormatInt(fi.Size(), 10), "count=1", "iflag=fullblock", "status=none").Run()
	})
	var back Matrix
	readFile := func(fresh bool) func() error {
		return func() error {
			back = Matrix{}
			if fresh {
				debug.FreeOSMemory() // as a fresh process: the read faults its pages in
			} else {
				runtime.GC() // frees the last read for this one to reuse
			}
			var err error
			back, err = ReadFile(src)
			return err
		}
	}
	read := best(t, readFile(true))
	reread := best(t, readFile(false))
	for i := range m.Data {
		if back.Data[i] != m.Data[i] {
			t.Fatalf("%d MB: element %d read back as %v, wrote %v", mb, i, back.Data[i], m.Data[i])
		}
	}
	rate := func(d time.Duration) string {
		return strconv.FormatFloat(float64(fi.Size())/d.Seconds()/1e9, 'f', 2, 64) + " GB/s, " +
			strconv.FormatFloat(d.Seconds()/cp.Seconds(), 'f', 2, 64) + "× cp"
	}
	t.Logf("%d MB (%d bytes):", mb, fi.Size())
	for _, c := range []struct {
		what string
		d    time.Duration
	}{
		{"cp", cp}, {"cat >/dev/null", cat}, {"dd bs=size", dd}, {"ReadFile, fresh memory", read},
		{"ReadFile, memory reused", reread}, {"WriteFile", write}, {"Reader→Writer (as round)", stream},
	} {
		t.Logf("  %-26s %7.3f s  %s", c.what, c.d.Seconds(), rate(c.d))
	}
}

// streamCopy copies src to dst through Reader and Writer, 128 Ki values at a
// time, as mwmm round --in --out does (without the rounding).
func streamCopy(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	r, err := NewReader(in)
	if err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer out.Close()
	bw := bufio.NewWriterSize(out, 1<<20)
	w, err := NewWriter(bw, r.Dtype, r.Shape, r.Fortran)
	if err != nil {
		return err
	}
	buf := make([]float64, 1<<17)
	for {
		k, err := r.Read(buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := w.Write(buf[:k]); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return out.Close()
}

// best runs f three times and returns its fastest time.
func best(t *testing.T, f func() error) time.Duration {
	var d time.Duration
	for i := range 3 {
		start := time.Now()
		if err := f(); err != nil {
			t.Fatal(err)
		}
		if e := time.Since(start); i == 0 || e < d {
			d = e
		}
	}
	return d
}

// BenchmarkBesideCp times cp of a float64 .npy file (NPY_BENCH_MB, default
// 256 MB; in NPY_SPEED_DIR or a temporary folder) beside ReadFile,
// WriteFile and the Reader→Writer copy of mwmm round --in --out, each as
// MB/s of the file, so that one run gives the ratios:
//
//	go test -run '^$' -bench BesideCp -count 5 ./internal/npy/
//
// The page cache is warm after the first iteration, for cp as for the rest.
func BenchmarkBesideCp(b *testing.B) {
	mb := 256
	if env := os.Getenv("NPY_BENCH_MB"); env != "" {
		var err error
		if mb, err = strconv.Atoi(env); err != nil || mb <= 0 {
			b.Fatalf("NPY_BENCH_MB=%q is not a positive size in MB", env)
		}
	}
	dir := os.Getenv("NPY_SPEED_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	m := normalMatrix(mb)
	src, dst := filepath.Join(dir, "bench-src.npy"), filepath.Join(dir, "bench-dst.npy")
	defer os.Remove(src)
	defer os.Remove(dst)
	if err := WriteFile(src, m); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(src)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		f    func(b *testing.B) error
	}{
		{"cp", func(*testing.B) error { os.Remove(dst); return exec.Command("cp", src, dst).Run() }},
		{"ReadFile", func(*testing.B) error { _, err := ReadFile(src); return err }},
		{"ReadFile-fresh", func(b *testing.B) error {
			b.StopTimer()
			debug.FreeOSMemory() // as a fresh process: the read faults its pages in
			b.StartTimer()
			_, err := ReadFile(src)
			return err
		}},
		{"WriteFile", func(*testing.B) error { os.Remove(dst); return WriteFile(dst, m) }},
		{"Reader-Writer", func(*testing.B) error { os.Remove(dst); return streamCopy(src, dst) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(fi.Size())
			for b.Loop() {
				if err := c.f(b); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
