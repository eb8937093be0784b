package nccl

import (
	"fmt"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
)

// A Type is the element type of a transfer.
type Type int

const (
	Bytes   Type = cuda.NCCLInt8
	Int32   Type = cuda.NCCLInt32
	Float32 Type = cuda.NCCLFloat32
	Float64 Type = cuda.NCCLFloat64
)

func (t Type) size() int {
	switch t {
	case Int32, Float32:
		return 4
	case Float64:
		return 8
	}
	return 1
}

// An Op is a reduction.
type Op int

const (
	Sum Op = cuda.NCCLSum
	Max Op = cuda.NCCLMax
)

// span checks that count elements of t fit b and returns b's address.
func span(what string, b *gpu.Buffer, count int, t Type) (uintptr, error) {
	if b == nil {
		return 0, fmt.Errorf("nccl: %s: nil buffer", what)
	}
	if count < 0 || count*t.size() > b.Bytes() {
		return 0, fmt.Errorf("nccl: %s: %d elements of %d bytes do not fit a buffer of %d", what, count, t.size(), b.Bytes())
	}
	return b.Ptr(), nil
}

// queue runs f on c's device thread with s's handle.
func (c *Comm) queue(s *gpu.Stream, f func(stream uintptr) error) error {
	return c.d.Do(func() error {
		h, err := s.Handle(c.d)
		if err != nil {
			return err
		}
		return f(h)
	})
}

// Broadcast queues on s a copy of count elements of root's buf to every
// rank's buf.
func (c *Comm) Broadcast(buf *gpu.Buffer, count int, t Type, root int, s *gpu.Stream) error {
	p, err := span("Broadcast", buf, count, t)
	if err != nil {
		return err
	}
	if c.size == 1 {
		return nil
	}
	return c.queue(s, func(h uintptr) error {
		return cuda.NCCLBroadcast(p, p, uintptr(count), int(t), root, c.h, h)
	})
}

// AllReduce queues on s the reduction of count elements of every rank's
// send into every rank's recv (send and recv may be the same buffer).
func (c *Comm) AllReduce(send, recv *gpu.Buffer, count int, t Type, op Op, s *gpu.Stream) error {
	ps, err := span("AllReduce", send, count, t)
	if err != nil {
		return err
	}
	pr, err := span("AllReduce", recv, count, t)
	if err != nil {
		return err
	}
	return c.queue(s, func(h uintptr) error {
		return cuda.NCCLAllReduce(ps, pr, uintptr(count), int(t), int(op), c.h, h)
	})
}

// Send queues on s a transfer of count elements of buf to rank peer, which
// must Recv them.
func (c *Comm) Send(buf *gpu.Buffer, count int, t Type, peer int, s *gpu.Stream) error {
	p, err := span("Send", buf, count, t)
	if err != nil {
		return err
	}
	return c.queue(s, func(h uintptr) error { return cuda.NCCLSend(p, uintptr(count), int(t), peer, c.h, h) })
}

// Recv queues on s the receipt of count elements from rank peer into buf.
func (c *Comm) Recv(buf *gpu.Buffer, count int, t Type, peer int, s *gpu.Stream) error {
	p, err := span("Recv", buf, count, t)
	if err != nil {
		return err
	}
	return c.queue(s, func(h uintptr) error { return cuda.NCCLRecv(p, uintptr(count), int(t), peer, c.h, h) })
}
