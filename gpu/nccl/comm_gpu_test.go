package nccl_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/internal/gputest"
	"github.com/mwmm/mwmm/gpu/nccl"
)

// open returns n devices and their communicator, or skips.
func open(t *testing.T, n int) []*nccl.Comm {
	t.Helper()
	gputest.RequireGPUs(t, n)
	if err := nccl.Available(); err != nil {
		t.Skip(err)
	}
	devs := make([]*gpu.Device, n)
	for i := range devs {
		d, err := gpu.OpenIndex(i)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		devs[i] = d
	}
	comms, err := nccl.JoinAll(devs, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, c := range comms {
			c.Close()
		}
	})
	return comms
}

// A broadcast and an all-reduce give every rank the right values, and a
// split makes communicators of the asked size.
func TestBroadcastAllReduceSplit(t *testing.T) {
	comms := open(t, 2)
	const n = 1000
	bufs := make([]*gpu.Buffer, len(comms))
	for r, c := range comms {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(r*n + i)
		}
		bufs[r] = gputest.Upload(t, c.Device(), x)
	}
	each(t, comms, func(c *nccl.Comm) error {
		s, err := c.Device().NewStream()
		if err != nil {
			return err
		}
		defer s.Close()
		if err := c.Broadcast(bufs[c.Rank()], n, nccl.Float64, 1, s); err != nil {
			return err
		}
		if err := c.AllReduce(bufs[c.Rank()], bufs[c.Rank()], n, nccl.Float64, nccl.Sum, s); err != nil {
			return err
		}
		return c.Wait(s, time.Minute)
	})
	for r, c := range comms {
		got := make([]float64, n)
		if err := c.Device().Download(got, bufs[r]); err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if want := float64(len(comms) * (n + i)); v != want {
				t.Fatalf("rank %d element %d = %g, want %g", r, i, v, want)
			}
		}
	}
	subs, err := nccl.SplitAll(comms, func(r int) int { return r }, func(int) int { return 0 }, 0, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range subs {
		if s.Size() != 1 || s.Rank() != 0 {
			t.Errorf("split by rank: size %d rank %d", s.Size(), s.Rank())
		}
		s.Close()
	}
	// One thread block, ranks reversed: a configuration NCCL accepts,
	// whose broadcast still arrives whole.
	capped, err := nccl.SplitAll(comms, func(int) int { return 0 }, func(r int) int { return -r }, 1, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	each(t, capped, func(c *nccl.Comm) error {
		defer c.Close()
		if c.Size() != len(comms) {
			return fmt.Errorf("capped split: size %d", c.Size())
		}
		s, err := c.Device().NewStream()
		if err != nil {
			return err
		}
		defer s.Close()
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(c.Rank()*n - i)
		}
		buf := gputest.Upload(t, c.Device(), x)
		if err := c.Broadcast(buf, n, nccl.Float64, 0, s); err != nil {
			return err
		}
		if err := c.Wait(s, time.Minute); err != nil {
			return err
		}
		if err := c.Device().Download(x, buf); err != nil {
			return err
		}
		for i, v := range x {
			if v != float64(-i) {
				return fmt.Errorf("capped split, rank %d: element %d = %g, want %d", c.Rank(), i, v, -i)
			}
		}
		return nil
	})
}

// A rank left waiting for a peer that never sends gets an error in time,
// not a hang: both ranks connect with one all-reduce, then rank 0 alone
// waits for a broadcast from rank 1.
func TestWaitTimesOut(t *testing.T) {
	comms := open(t, 2)
	bufs := make([]*gpu.Buffer, 2)
	streams := make([]*gpu.Stream, 2)
	for r, c := range comms {
		bufs[r] = gputest.Alloc(t, c.Device(), 4096)
		s, err := c.Device().NewStream()
		if err != nil {
			t.Fatal(err)
		}
		streams[r] = s
	}
	each(t, comms, func(c *nccl.Comm) error {
		r := c.Rank()
		if err := c.AllReduce(bufs[r], bufs[r], 1024, nccl.Float32, nccl.Sum, streams[r]); err != nil {
			return err
		}
		return c.Wait(streams[r], time.Minute)
	})
	c := comms[0]
	if err := c.Broadcast(bufs[0], 1024, nccl.Float32, 1, streams[0]); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := c.Wait(streams[0], 2*time.Second)
	if !errors.Is(err, nccl.ErrTimeout) {
		t.Fatalf("Wait = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the timeout took %v", d)
	}
	nccl.Abort(comms...) // rank 1's peer is gone: no orderly close
}

func each(t *testing.T, comms []*nccl.Comm, f func(c *nccl.Comm) error) {
	t.Helper()
	errs := make(chan error, len(comms))
	for _, c := range comms {
		go func() { errs <- f(c) }()
	}
	for range comms {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
