package gpu

import (
	"errors"
	"testing"
)

// A job's error comes back to its caller, a panic as an error, and a
// stopped worker says so.
func TestWorkerDo(t *testing.T) {
	w := newWorker()
	want := errors.New("x")
	if err := w.do(func() error { return want }); err != want {
		t.Errorf("do: %v, want %v", err, want)
	}
	if err := w.do(func() error { panic("boom") }); err == nil {
		t.Error("a panicking job gave no error")
	}
	w.stop()
	if err := w.do(func() error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("do after stop: %v, want ErrClosed", err)
	}
}

// BenchmarkWorkerDo is the round trip of one call to a device's thread,
// which every CUDA call of the package makes.
func BenchmarkWorkerDo(b *testing.B) {
	w := newWorker()
	defer w.stop()
	for b.Loop() {
		if err := w.do(func() error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// A job's own calls to do run in it, on the worker's thread, in order.
func TestWorkerDoNested(t *testing.T) {
	w := newWorker()
	defer w.stop()
	var order []int
	err := w.do(func() error {
		order = append(order, 1)
		if err := w.do(func() error { order = append(order, 2); return nil }); err != nil {
			return err
		}
		order = append(order, 3)
		return w.do(func() error { return errors.New("inner") })
	})
	if err == nil || err.Error() != "inner" || len(order) != 3 || order[1] != 2 {
		t.Errorf("nested do: %v, order %v", err, order)
	}
}
