package nccl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/mwmm/mwmm/gpu"
)

// Env is a process's place in a job of several processes, as the job's
// launcher tells it.
type Env struct {
	Rank, Size int    // this process's rank and the number of processes
	LocalRank  int    // its rank among the processes of its host: its GPU
	Root       string // rank 0's address, host:port, where the id is shared
	Launcher   string // whose variables gave Rank and Size
}

// launchers lists the variables of rank, size and local rank that job
// launchers set, in the order they are read.
var launchers = []struct{ name, rank, size, local string }{
	{"mwmm", "MWMM_RANK", "MWMM_WORLD_SIZE", "MWMM_LOCAL_RANK"},
	{"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
	{"PMI (MPICH, Intel MPI)", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
	{"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
}

// ReadEnv reads the job's variables through getenv (os.Getenv). ok is
// false when none of the launchers' are set: a process of its own.
func ReadEnv(getenv func(string) string) (e Env, ok bool, err error) {
	for _, l := range launchers {
		if getenv(l.rank) == "" || getenv(l.size) == "" {
			continue
		}
		e.Launcher = l.name
		num := func(key string, dflt int) int {
			v := getenv(key)
			if v == "" {
				return dflt
			}
			n, perr := strconv.Atoi(v)
			if perr != nil || n < 0 {
				err = errors.Join(err, fmt.Errorf("nccl: %s=%q is not a rank", key, v))
			}
			return n
		}
		e.Rank, e.Size, e.LocalRank = num(l.rank, 0), num(l.size, 1), num(l.local, 0)
		e.Root = rootAddress(getenv)
		if err == nil && (e.Size < 1 || e.Rank >= e.Size) {
			err = fmt.Errorf("nccl: rank %d of a world of %d (%s)", e.Rank, e.Size, l.name)
		}
		if err == nil && e.Size > 1 && e.Root == "" {
			err = errors.New("nccl: a job of several processes needs rank 0's address: set MWMM_ROOT=host:port (or MASTER_ADDR and MASTER_PORT)")
		}
		return e, true, err
	}
	return Env{Size: 1}, false, nil
}

func rootAddress(getenv func(string) string) string {
	if r := getenv("MWMM_ROOT"); r != "" {
		return r
	}
	if h, p := getenv("MASTER_ADDR"), getenv("MASTER_PORT"); h != "" && p != "" {
		return net.JoinHostPort(h, p)
	}
	return ""
}

// magic starts what rank 0 sends, so that a rank that reached another
// program at that port says so instead of joining with garbage.
var magic = []byte("mwmm nccl id v1\n")

// ShareID gives every rank of e's job the same id: rank 0 makes it with
// newID and serves it at e.Root until every other rank has read it.
func ShareID(ctx context.Context, e Env, newID func() (ID, error)) (ID, error) {
	if e.Rank == 0 {
		id, err := newID()
		if err != nil {
			return ID{}, err
		}
		return id, serveID(ctx, e, id)
	}
	return fetchID(ctx, e)
}

func serveID(ctx context.Context, e Env, id ID) error {
	if e.Size == 1 {
		return nil
	}
	_, port, err := net.SplitHostPort(e.Root)
	if err != nil {
		return fmt.Errorf("nccl: MWMM_ROOT=%q: %w", e.Root, err)
	}
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", net.JoinHostPort("", port))
	if err != nil {
		return fmt.Errorf("nccl: rank 0 cannot listen at %s: %w", e.Root, err)
	}
	defer l.Close()
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()
	msg := append(append([]byte{}, magic...), id[:]...)
	for served := 1; served < e.Size; served++ {
		c, err := l.Accept()
		if err != nil {
			return fmt.Errorf("nccl: rank 0 served the id to %d of %d ranks: %w", served-1, e.Size-1, errors.Join(ctx.Err(), err))
		}
		c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		_, err = c.Write(msg)
		c.Close()
		if err != nil {
			return fmt.Errorf("nccl: sending the id: %w", err)
		}
	}
	return nil
}

// fetchID dials rank 0 until it answers (it may start later) or ctx ends.
func fetchID(ctx context.Context, e Env) (ID, error) {
	var d net.Dialer
	for pause := 10 * time.Millisecond; ; pause = min(2*pause, time.Second) {
		c, err := d.DialContext(ctx, "tcp", e.Root)
		if err == nil {
			return readID(c, e)
		}
		select {
		case <-ctx.Done():
			return ID{}, fmt.Errorf("nccl: rank %d reached no rank 0 at %s: %w", e.Rank, e.Root, err)
		case <-time.After(pause):
		}
	}
}

func readID(c net.Conn, e Env) (ID, error) {
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, len(magic)+len(ID{}))
	if _, err := io.ReadFull(c, buf); err != nil || !bytes.Equal(buf[:len(magic)], magic) {
		return ID{}, fmt.Errorf("nccl: rank %d: %s did not send an mwmm communicator id (another program at that port?)", e.Rank, e.Root)
	}
	return ID(buf[len(magic):]), nil
}

// JoinEnv joins d to the job's communicator, rank e.Rank of e.Size.
func JoinEnv(ctx context.Context, d *gpu.Device, e Env) (*Comm, error) {
	id, err := ShareID(ctx, e, NewID)
	if err != nil {
		return nil, err
	}
	return Join(d, e.Size, e.Rank, id)
}
