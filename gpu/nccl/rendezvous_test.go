package nccl

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestReadEnv(t *testing.T) {
	cases := []struct {
		name    string
		env     func(string) string
		ok      bool
		want    Env
		errPart string
	}{
		{"alone", envOf(), false, Env{Size: 1}, ""},
		{"open mpi", envOf("OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "4", "OMPI_COMM_WORLD_LOCAL_RANK", "1", "MWMM_ROOT", "h0:29500"),
			true, Env{Rank: 1, Size: 4, LocalRank: 1, Root: "h0:29500", Launcher: "Open MPI"}, ""},
		{"slurm, torch's variables", envOf("SLURM_PROCID", "3", "SLURM_NTASKS", "8", "SLURM_LOCALID", "3", "MASTER_ADDR", "node1", "MASTER_PORT", "1234"),
			true, Env{Rank: 3, Size: 8, LocalRank: 3, Root: "node1:1234", Launcher: "Slurm"}, ""},
		{"mwmm's first", envOf("MWMM_RANK", "0", "MWMM_WORLD_SIZE", "1", "PMI_RANK", "5", "PMI_SIZE", "9"),
			true, Env{Rank: 0, Size: 1, Launcher: "mwmm"}, ""},
		{"no root", envOf("PMI_RANK", "0", "PMI_SIZE", "2"), true, Env{}, "MWMM_ROOT"},
		{"rank past size", envOf("MWMM_RANK", "2", "MWMM_WORLD_SIZE", "2", "MWMM_ROOT", "x:1"), true, Env{}, "rank 2 of a world of 2"},
		{"not a number", envOf("MWMM_RANK", "one", "MWMM_WORLD_SIZE", "2", "MWMM_ROOT", "x:1"), true, Env{}, "MWMM_RANK"},
	}
	for _, c := range cases {
		got, ok, err := ReadEnv(c.env)
		if ok != c.ok {
			t.Errorf("%s: ok = %v", c.name, ok)
		}
		if c.errPart != "" {
			if err == nil || !strings.Contains(err.Error(), c.errPart) {
				t.Errorf("%s: err = %v, want one naming %s", c.name, err, c.errPart)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: ReadEnv = %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip("no loopback network:", err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// Every rank gets the id rank 0 made, whichever starts first.
func TestShareID(t *testing.T) {
	root := "127.0.0.1:" + freePort(t)
	want := ID{1, 2, 3, 127: 9}
	const size = 4
	ids := make([]ID, size)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for rank := size - 1; rank >= 0; rank-- { // the others dial before rank 0 listens
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			ids[rank], errs[rank] = ShareID(ctx, Env{Rank: rank, Size: size, Root: root}, func() (ID, error) { return want, nil })
		}()
		time.Sleep(20 * time.Millisecond)
	}
	wg.Wait()
	for r := range ids {
		if errs[r] != nil || ids[r] != want {
			t.Errorf("rank %d: %v, id starts %v", r, errs[r], ids[r][:4])
		}
	}
}

// A rank that reaches another program, or no rank 0, fails in time with
// a clear error.
func TestShareIDFailures(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip("no loopback network:", err)
	}
	go func() {
		c, err := l.Accept()
		if err == nil {
			c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
			c.Close()
		}
	}()
	_, err = ShareID(context.Background(), Env{Rank: 1, Size: 2, Root: l.Addr().String()}, nil)
	if err == nil || !strings.Contains(err.Error(), "another program") {
		t.Errorf("a stranger at the port: %v", err)
	}
	l.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = ShareID(ctx, Env{Rank: 1, Size: 2, Root: "127.0.0.1:" + freePort(t)}, nil)
	if err == nil || !strings.Contains(err.Error(), "reached no rank 0") {
		t.Errorf("no rank 0: %v", err)
	}

	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	_, err = ShareID(ctx2, Env{Rank: 0, Size: 3, Root: "127.0.0.1:" + freePort(t)}, func() (ID, error) { return ID{}, nil })
	if err == nil || !strings.Contains(err.Error(), "served the id to 0 of 2") {
		t.Errorf("rank 0 alone: %v", err)
	}
}
