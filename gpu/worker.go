package gpu

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// A worker runs functions on one goroutine locked to its OS thread, so that
// every CUDA call of a device sees the context made current there.
type worker struct {
	jobs     chan job
	quit     chan struct{}
	stopOnce sync.Once
	tid      atomic.Int64 // the thread's id (threadID), once the loop runs
}

type job struct {
	f    func() error
	done chan error
}

func newWorker() *worker {
	w := &worker{jobs: make(chan job), quit: make(chan struct{})}
	go w.loop()
	return w
}

func (w *worker) loop() {
	runtime.LockOSThread()
	w.tid.Store(threadID())
	// No UnlockOSThread: when the loop ends the thread ends with it, and
	// any CUDA state bound to it goes too.
	for {
		select {
		case j := <-w.jobs:
			j.done <- run(j.f)
		case <-w.quit:
			return
		}
	}
}

// run calls f, turning a panic into an error so that the worker survives.
func run(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("gpu: panic in a CUDA call: %v", p)
		}
	}()
	return f()
}

// do runs f on the worker's thread and returns its error, or ErrClosed once
// the worker has stopped. Called from the worker's own thread (inside a
// job), it runs f there and then: a job may gather many calls into one
// trip to the thread, which costs 15–20 µs, as much as the launch it
// carries. A job must not wait for another goroutine's call to do.
func (w *worker) do(f func() error) error {
	if id := w.tid.Load(); id != 0 && threadID() == id {
		return run(f)
	}
	done := make(chan error, 1)
	select {
	case w.jobs <- job{f, done}:
		return <-done
	case <-w.quit:
		return ErrClosed
	}
}

// stop ends the worker; later calls of do return ErrClosed.
func (w *worker) stop() { w.stopOnce.Do(func() { close(w.quit) }) }
