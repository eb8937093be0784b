package dist

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/gemm"
	"github.com/mwmm/mwmm/gpu/nccl"
)

// JoinTimeout bounds how long ranks wait for each other to form the
// team's communicators.
var JoinTimeout = 2 * time.Minute

// A Team is the ranks of a grid that this process drives (all of them, or
// one when each GPU has its process), with their communicators.
type Team struct {
	Grid  Grid
	Ranks []*Rank // this process's ranks, in rank order
	// Timeout bounds each wait for a rank's transfers (a peer that died
	// must not hang the rest).
	Timeout time.Duration
	// TransferSMs is how many multiprocessors the products leave to
	// NCCL's transfers on Row and Col: NCCL_MAX_CTAS where set, else
	// DefaultTransferSMs.
	TransferSMs int
}

// A Rank is one GPU of a team.
type Rank struct {
	Rank, P, Q int
	Engine     *gemm.Engine
	World      *nccl.Comm // every rank
	Row, Col   *nccl.Comm // the ranks of its grid row (ranked by column), of its grid column (by row)
	// panelRow and panelCol are Row and Col for the factorizations' panels,
	// with PanelTransferSMs thread blocks (Row's and Col's: TransferSMs).
	panelRow, panelCol *nccl.Comm
	compute            *gpu.Stream
	transfers          *gpu.Stream
	apart              [2]*gpu.Stream  // compute's and transfers' stand-ins in a factorization (independently)
	buffers            []*gpu.Buffer   // scratch kept between calls (panels), by slot
	marks              [][2]*gpu.Event // pairs of events kept between calls
}

// DefaultTransferSMs is how many multiprocessors the products leave to
// NCCL's transfers (the row and column communicators' thread blocks are
// capped to as many): the fused kernel's persistent grid fills every
// multiprocessor it is given, and a broadcast queued beside it would
// otherwise wait for the product to end. On two H200s at n = 32768 (panels
// of 8192) 2, 4 and 8 gave 1.79×, 1.90× and 1.83× one GPU's speed.
const DefaultTransferSMs = 4

// PanelTransferSMs caps the thread blocks of a factorization's panel
// broadcasts, beside updates that leave LookaheadSMs multiprocessors: on
// two H200s, 16 moved a 90 MB fp16 panel in 0.26 ms where 4 took 0.67,
// and FactorHalf of order 46080 and 65536 took 5% less time.
const PanelTransferSMs = 16

// transferSMs is NCCL_MAX_CTAS where set (NCCL then caps every
// communicator to it), else DefaultTransferSMs.
func transferSMs() int {
	if n, err := strconv.Atoi(os.Getenv("NCCL_MAX_CTAS")); err == nil && n > 0 {
		return n
	}
	return DefaultTransferSMs
}

// scratch returns the rank's scratch buffer slot, of at least bytes.
func (r *Rank) scratch(slot, bytes int) (*gpu.Buffer, error) {
	for len(r.buffers) <= slot {
		r.buffers = append(r.buffers, nil)
	}
	if b := r.buffers[slot]; b != nil && b.Bytes() >= bytes {
		return b, nil
	}
	r.buffers[slot].Free()
	b, err := r.Engine.Device().Alloc(bytes)
	r.buffers[slot] = b
	return b, err
}

// events returns the rank's pair of events slot.
func (r *Rank) events(slot int) (a, b *gpu.Event, err error) {
	for len(r.marks) <= slot {
		var m [2]*gpu.Event
		d := r.Engine.Device()
		if m[0], err = d.NewEvent(); err == nil {
			m[1], err = d.NewEvent()
		}
		if err != nil {
			m[0].Close()
			return nil, nil, err
		}
		r.marks = append(r.marks, m)
	}
	return r.marks[slot][0], r.marks[slot][1], nil
}

// NewTeam forms a team of the GPUs of engines, in this process, on grid
// (engines[r] is rank r).
func NewTeam(engines []*gemm.Engine, g Grid) (*Team, error) {
	if g.Size() != len(engines) {
		return nil, fmt.Errorf("dist: a %v grid needs %d GPUs, not %d", g, g.Size(), len(engines))
	}
	devs := make([]*gpu.Device, len(engines))
	for i, e := range engines {
		devs[i] = e.Device()
	}
	sms := transferSMs()
	world, err := nccl.JoinAll(devs, JoinTimeout)
	if err != nil {
		return nil, err
	}
	return form(g, engines, world, sms)
}

// JoinTeam forms the team of a job of one process per GPU: this process
// is rank env.Rank of g.Size(), on engine's GPU.
func JoinTeam(ctx context.Context, e *gemm.Engine, env nccl.Env, g Grid) (*Team, error) {
	if g.Size() != env.Size {
		return nil, fmt.Errorf("dist: a %v grid needs %d ranks; the job has %d (%s)", g, g.Size(), env.Size, env.Launcher)
	}
	ctx, cancel := context.WithTimeout(ctx, JoinTimeout)
	defer cancel()
	sms := transferSMs()
	world, err := nccl.JoinEnv(ctx, e.Device(), env)
	if err != nil {
		return nil, err
	}
	return form(g, []*gemm.Engine{e}, []*nccl.Comm{world}, sms)
}

// form splits the world into row and column communicators and makes each
// rank's streams.
func form(g Grid, engines []*gemm.Engine, world []*nccl.Comm, transferSMs int) (*Team, error) {
	t := &Team{Grid: g, Timeout: 10 * time.Minute, TransferSMs: transferSMs}
	for i, w := range world {
		p, q := g.Coords(w.Rank())
		t.Ranks = append(t.Ranks, &Rank{Rank: w.Rank(), P: p, Q: q, Engine: engines[i], World: w})
	}
	var err error
	rowOf := func(r int) int { p, _ := g.Coords(r); return p }
	colOf := func(r int) int { _, q := g.Coords(r); return q }
	var split [4][]*nccl.Comm // rows, columns, and both for panels
	for i, c := range []struct {
		color, key func(int) int
		ctas       int
	}{{rowOf, colOf, transferSMs}, {colOf, rowOf, transferSMs}, {rowOf, colOf, PanelTransferSMs}, {colOf, rowOf, PanelTransferSMs}} {
		if split[i], err = nccl.SplitAll(world, c.color, c.key, c.ctas, JoinTimeout); err != nil {
			for _, s := range split[:i] {
				nccl.Abort(s...)
			}
			t.Close()
			return nil, err
		}
	}
	for i, r := range t.Ranks {
		r.Row, r.Col, r.panelRow, r.panelCol = split[0][i], split[1][i], split[2][i], split[3][i]
	}
	err = t.Each(func(r *Rank) error {
		var err error
		d := r.Engine.Device()
		if r.compute, err = d.NewStream(); err == nil {
			r.transfers, err = d.NewStream()
		}
		return err
	})
	if err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// connectBytes is the size of Connect's transfers: larger than a panel
// of 1024 fp16 columns of order 46080 (90 MB), the size whose first
// broadcast was seen to set up NCCL's channels.
const connectBytes = 128 << 20

// Connect makes each of the team's communicators move connectBytes once,
// a broadcast and an all-reduce: NCCL connects its channels lazily, at the
// first transfer large enough to use them, and on two H200s that cost the
// first LU of order 46080 35 ms (0.149 s against 0.114 s the second time).
// A benchmark calls it before its clock runs; every process of the team
// calls it, as for any collective.
func (t *Team) Connect() error {
	return t.Each(func(r *Rank) error {
		d := r.Engine.Device()
		buf, err := d.Alloc(connectBytes)
		if err != nil {
			return err
		}
		defer buf.Free()
		if err := d.Memset32(buf, 0); err != nil {
			return err
		}
		for _, c := range []*nccl.Comm{r.World, r.Row, r.Col, r.panelRow, r.panelCol} {
			if err := errors.Join(c.Broadcast(buf, connectBytes, nccl.Bytes, 0, r.transfers),
				c.AllReduce(buf, buf, connectBytes/4, nccl.Float32, nccl.Sum, r.transfers)); err != nil {
				return err
			}
		}
		return r.wait(t.Timeout)
	})
}

// Whole reports whether this process drives every rank.
func (t *Team) Whole() bool { return len(t.Ranks) == t.Grid.Size() }

// Each runs f for every rank of this process, concurrently, and joins
// their errors, each named by its rank; where every rank failed with the
// same message (a verdict the team reached together, as the growth
// check's), that one error alone.
func (t *Team) Each(f func(r *Rank) error) error {
	errs := make([]error, len(t.Ranks))
	var wg sync.WaitGroup
	for i, r := range t.Ranks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(r)
		}()
	}
	wg.Wait()
	same := true
	for _, err := range errs {
		same = same && err != nil && err.Error() == errs[0].Error()
	}
	if same && len(errs) > 0 {
		return errs[0]
	}
	for i, err := range errs {
		if err != nil {
			errs[i] = fmt.Errorf("rank %d: %w", t.Ranks[i].Rank, err)
		}
	}
	return errors.Join(errs...)
}

// Close frees the communicators and streams.
func (t *Team) Close() error {
	var errs []error
	for _, r := range t.Ranks {
		for _, c := range []*nccl.Comm{r.panelRow, r.panelCol, r.Row, r.Col, r.World} {
			errs = append(errs, c.Close())
		}
		errs = append(errs, r.compute.Close(), r.transfers.Close(), r.apart[0].Close(), r.apart[1].Close(), gpu.FreeAll(r.buffers...))
		for _, m := range r.marks {
			errs = append(errs, m[0].Close(), m[1].Close())
		}
	}
	return errors.Join(errs...)
}

// independently runs f, a factorization's steps, with the rank's streams
// replaced by two that do not wait for the legacy default stream, nor it
// for them: an independent compute stream and an urgent transfer stream.
// cuSOLVER's getrf copies on the default stream, which with the usual
// streams waits for every one of them: a look-ahead's panel waited for
// the whole update beside it. The usual streams are waited for before,
// the stand-ins after, so that work on the default stream (uploads,
// memsets, downloads) keeps its order with f's; f itself must wait for
// its streams before any.
func (r *Rank) independently(timeout time.Duration, f func() error) error {
	d := r.Engine.Device()
	var err error
	if r.apart[0] == nil {
		if r.apart[0], err = d.NewIndependentStream(); err != nil {
			return err
		}
	}
	if r.apart[1] == nil {
		if r.apart[1], err = d.NewUrgentStream(); err != nil {
			return err
		}
	}
	if err := r.wait(timeout); err != nil {
		return err
	}
	usual := [2]*gpu.Stream{r.compute, r.transfers}
	r.compute, r.transfers = r.apart[0], r.apart[1]
	err = errors.Join(f(), r.wait(timeout))
	r.compute, r.transfers = usual[0], usual[1]
	return err
}

// wait waits for the rank's streams, through its world communicator's
// watch for failed peers.
func (r *Rank) wait(timeout time.Duration) error {
	return errors.Join(r.World.Wait(r.transfers, timeout), r.World.Wait(r.compute, timeout))
}
