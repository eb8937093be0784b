package gpu

import (
	"errors"
	"fmt"
	"time"

	"github.com/mwmm/mwmm/gpu/internal/cuda"
)

// A Stream is a queue of device work that runs in order. Wherever a
// *Stream is taken, nil means the default stream. Streams are created
// blocking: they wait for work on the default stream (where Upload,
// Download and Memset run) and it waits for them, so a Download sees what a
// kernel on any stream wrote before it.
type Stream struct {
	d  *Device
	h  uintptr
	id uint64
}

// NewStream creates a stream.
func (d *Device) NewStream() (*Stream, error) { return d.newStream(0, false) }

// NewIndependentStream creates a stream that does not wait for the
// legacy default stream, nor it for this one (CU_STREAM_NON_BLOCKING):
// a library call that copies or waits on the default stream (cuSOLVER's
// getrf does) then holds up neither this stream's work nor the others'.
// Download and Upload do not wait for it either: Sync it first.
func (d *Device) NewIndependentStream() (*Stream, error) {
	return d.newStream(cuda.StreamNonBlocking, false)
}

// NewUrgentStream is NewIndependentStream of the greatest priority: its
// blocks go before other streams' as multiprocessors free up (a
// look-ahead's panel beside an update).
func (d *Device) NewUrgentStream() (*Stream, error) { return d.newStream(cuda.StreamNonBlocking, true) }

func (d *Device) newStream(flags uint32, urgent bool) (*Stream, error) {
	s := &Stream{d: d}
	create := cuda.StreamCreate
	if urgent {
		create = cuda.StreamCreateUrgent
	}
	err := d.Do(func() error {
		h, err := create(flags)
		if err != nil {
			return err
		}
		s.h = h
		s.id = d.track(func() error { return cuda.StreamDestroy(h) })
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("gpu: NewStream: %w", err)
	}
	return s, nil
}

// handle returns the CUstream (0 for nil), checking that s is alive and on
// d; on the worker.
func (s *Stream) Handle(d *Device) (uintptr, error) {
	if s == nil {
		return 0, nil
	}
	if s.d != d {
		return 0, fmt.Errorf("gpu: the stream is on %v, not %v", s.d, d)
	}
	if !d.live(s.id) {
		return 0, errors.New("gpu: the stream is closed")
	}
	return s.h, nil
}

// Sync waits for the work queued on s and returns the error of any that
// failed.
func (s *Stream) Sync() error {
	if s == nil {
		return errors.New("gpu: Sync of a nil stream: use Device.Sync")
	}
	return s.d.Do(func() error {
		h, err := s.Handle(s.d)
		if err != nil {
			return err
		}
		return cuda.StreamSynchronize(h)
	})
}

// Close destroys the stream once its work is done; again does nothing.
func (s *Stream) Close() error {
	if s == nil {
		return nil
	}
	return s.d.releaseOnce(s.id)
}

// An Event marks a point in a stream, to wait for or to time work.
type Event struct {
	d  *Device
	h  uintptr
	id uint64
}

// NewEvent creates an event that records time.
func (d *Device) NewEvent() (*Event, error) {
	e := &Event{d: d}
	err := d.Do(func() error {
		h, err := cuda.EventCreate(cuda.EventDefault)
		if err != nil {
			return err
		}
		e.h = h
		e.id = d.track(func() error { return cuda.EventDestroy(h) })
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("gpu: NewEvent: %w", err)
	}
	return e, nil
}

func (e *Event) handle() (uintptr, error) {
	if !e.d.live(e.id) {
		return 0, errors.New("gpu: the event is closed")
	}
	return e.h, nil
}

// Record marks the point in stream s (nil: the default stream) after the
// work queued so far.
func (e *Event) Record(s *Stream) error {
	return e.d.Do(func() error { return e.record(s) })
}

// record is Record on the device's thread (a launchQueue's turn).
func (e *Event) record(s *Stream) error {
	h, err := e.handle()
	if err != nil {
		return err
	}
	sh, err := s.Handle(e.d)
	if err != nil {
		return err
	}
	return cuda.EventRecord(h, sh)
}

// Sync waits until the work before the recorded point has finished.
func (e *Event) Sync() error {
	return e.d.Do(func() error {
		h, err := e.handle()
		if err != nil {
			return err
		}
		return cuda.EventSynchronize(h)
	})
}

// Close destroys the event; again does nothing.
func (e *Event) Close() error {
	if e == nil {
		return nil
	}
	return e.d.releaseOnce(e.id)
}

// Elapsed returns the GPU time between two recorded events of one device,
// waiting for end first. The resolution is about half a microsecond.
func Elapsed(start, end *Event) (time.Duration, error) {
	if start == nil || end == nil {
		return 0, errors.New("gpu: Elapsed: nil event")
	}
	if start.d != end.d {
		return 0, fmt.Errorf("gpu: Elapsed: the events are on %v and %v", start.d, end.d)
	}
	var ms float32
	err := start.d.Do(func() error {
		hs, err := start.handle()
		if err != nil {
			return err
		}
		he, err := end.handle()
		if err != nil {
			return err
		}
		if err := cuda.EventSynchronize(he); err != nil {
			return err
		}
		ms, err = cuda.EventElapsedTime(hs, he)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("gpu: Elapsed: %w", err)
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

// Wait makes the work queued on s after this call wait for e's recorded
// point, without blocking the host: how two streams (or a stream and a
// communicator's transfers) take turns.
func (s *Stream) Wait(e *Event) error {
	if s == nil || e == nil {
		return errors.New("gpu: Stream.Wait needs a stream and an event")
	}
	if s.d != e.d {
		return fmt.Errorf("gpu: Stream.Wait: the stream is on %v, the event on %v", s.d, e.d)
	}
	return s.d.Do(func() error {
		sh, err := s.Handle(s.d)
		if err != nil {
			return err
		}
		eh, err := e.handle()
		if err != nil {
			return err
		}
		return cuda.StreamWaitEvent(sh, eh)
	})
}

// Done reports whether the work queued on s has finished, without
// waiting; an error is that of work that failed.
func (s *Stream) Done() (bool, error) {
	if s == nil {
		return false, errors.New("gpu: Done of a nil stream")
	}
	var done bool
	err := s.d.Do(func() error {
		h, err := s.Handle(s.d)
		if err != nil {
			return err
		}
		done, err = cuda.StreamDone(h)
		return err
	})
	return done, err
}
