package dist

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mwmm/mwmm/gpu/gemm"
	"github.com/mwmm/mwmm/gpu/internal/gputest"
	"github.com/mwmm/mwmm/gpu/nccl"
)

// childEnv marks a test binary started by TestOneProcessPerGPU as one of
// its ranks; its value is what the rank does ("multiply" or "die").
const childEnv = "MWMM_DIST_TEST_CHILD"

// runRanks starts one process per rank of a 1×2 job on this host and
// returns each one's output and error.
func runRanks(t *testing.T, roles [2]string, timeout time.Duration) ([2]string, [2]error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip(err)
	}
	root := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var outs [2]string
	var errs [2]error
	done := make(chan int, 2)
	for r := range 2 {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestOneProcessPerGPU$", "-test.v")
		cmd.Env = append(os.Environ(), childEnv+"="+roles[r], "MWMM_ROOT="+root,
			fmt.Sprintf("MWMM_RANK=%d", r), "MWMM_WORLD_SIZE=2", fmt.Sprintf("MWMM_LOCAL_RANK=%d", r))
		go func() {
			out, err := cmd.CombinedOutput()
			outs[r], errs[r] = string(out), err
			done <- r
		}()
	}
	<-done
	<-done
	return outs, errs
}

// One process per GPU, the id shared through MWMM_ROOT: the product is the
// one-process product; and a rank that dies leaves the other an error, not
// a hang.
func TestOneProcessPerGPU(t *testing.T) {
	if role := os.Getenv(childEnv); role != "" {
		rankMain(t, role)
		return
	}
	gputest.RequireGPUs(t, 2)
	if err := nccl.Available(); err != nil {
		t.Skip(err)
	}
	outs, errs := runRanks(t, [2]string{"multiply", "multiply"}, 5*time.Minute)
	for r := range 2 {
		if errs[r] != nil || !strings.Contains(outs[r], "rank ok") {
			t.Errorf("rank %d: %v\n%s", r, errs[r], outs[r])
		}
	}
	outs, errs = runRanks(t, [2]string{"survive", "die"}, 5*time.Minute)
	if errs[0] != nil || !strings.Contains(outs[0], "rank 0 saw the failure") {
		t.Errorf("rank 0 with a dead peer: %v\n%s", errs[0], outs[0])
	}
}

// rankMain is a child's body.
func rankMain(t *testing.T, role string) {
	env, ok, err := nccl.ReadEnv(os.Getenv)
	if !ok || err != nil {
		t.Fatal("no job environment:", err)
	}
	e, err := gemm.SharedEngine(env.LocalRank)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := JoinTeam(context.Background(), e, env, Grid{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if role == "die" {
		os.Exit(3)
	}
	tm.Timeout = 30 * time.Second
	p := plan(t)
	rng := rand.New(rand.NewPCG(3, 4)) // every rank draws the same A and B
	m, n, k := 200, 300, 250
	a, b := randomF32(rng, m*k), randomF32(rng, k*n)
	got := make([]float64, m*n)
	err = (&Engine{Team: tm, Panel: k}).Multiply(p, m, n, k, a, b, got)
	if role == "survive" {
		if err == nil {
			t.Fatal("a product with a dead peer succeeded")
		}
		t.Log("rank 0 saw the failure:", err)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if env.Rank == 0 {
		want := make([]float64, m*n)
		if err := e.Multiply(p, m, n, k, a, b, want); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("C[%d] = %g, one GPU %g", i, got[i], want[i])
			}
		}
	}
	t.Log("rank ok")
	tm.Close()
}
