package dist

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mwmm/mwmm/gpu/gemm"
	"github.com/mwmm/mwmm/multiword"
)

// DefaultPanel is the panel width (A's column blocks, B's row blocks)
// of Engine's products: wide enough that each step's product keeps the
// tensor cores busy, narrow enough that the next panel's broadcast hides
// under it.
const DefaultPanel = 8192

// Engine is a multiword.Engine over several GPUs of this process: each
// Multiply scatters A and B over its team, multiplies with Multiply and
// gathers C. Only plans the fused kernels run (FABsum) on fp32 values.
type Engine struct {
	Team  *Team
	Panel int // the panel width; 0: DefaultPanel
	name  string
}

// OpenEngine forms a team of the GPUs devices (by index) on grid g.
func OpenEngine(devices []int, g Grid) (*Engine, error) {
	engines := make([]*gemm.Engine, len(devices))
	for i, d := range devices {
		e, err := gemm.SharedEngine(d)
		if err != nil {
			return nil, err
		}
		engines[i] = e
	}
	t, err := NewTeam(engines, g)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(devices))
	for i, d := range devices {
		ids[i] = strconv.Itoa(d)
	}
	return &Engine{Team: t, name: fmt.Sprintf("gpus:%s:%v", strings.Join(ids, ","), g)}, nil
}

// Register makes multiword.Open("gpus:N"), "gpus:0,2" and "gpus:4:2x2"
// open an Engine (default grid: SquareGrid).
func Register() {
	multiword.Register("gpus", func(arg string) (multiword.Engine, error) {
		devs, g, err := ParseSpec(arg)
		if err != nil {
			return nil, err
		}
		return OpenEngine(devs, g)
	})
}

// ParseSpec reads "N" (GPUs 0…N−1), "0,2,3" (those GPUs), either with
// ":PxQ" for the grid.
func ParseSpec(arg string) (devices []int, g Grid, err error) {
	list, grid, hasGrid := strings.Cut(arg, ":")
	bad := fmt.Errorf("dist: engine gpus takes a count or a list of GPUs and an optional grid (gpus:4, gpus:0,1, gpus:4:2x2), got %q", arg)
	if n, err := strconv.Atoi(list); err == nil && !strings.Contains(list, ",") {
		if n < 1 {
			return nil, g, bad
		}
		for i := range n {
			devices = append(devices, i)
		}
	} else {
		seen := map[int]bool{}
		for _, f := range strings.Split(list, ",") {
			d, err := strconv.Atoi(f)
			if err != nil || d < 0 || seen[d] {
				return nil, g, bad
			}
			seen[d] = true
			devices = append(devices, d)
		}
	}
	g = SquareGrid(len(devices))
	if hasGrid {
		if g, err = ParseGrid(grid); err != nil {
			return nil, g, err
		}
		if g.Size() != len(devices) {
			return nil, g, fmt.Errorf("dist: a %v grid needs %d GPUs, the engine names %d", g, g.Size(), len(devices))
		}
	}
	return devices, g, nil
}

func (e *Engine) Name() string { return e.name }

// Close frees the team.
func (e *Engine) Close() error { return e.Team.Close() }

// Multiply computes C = A·B (row-major, see multiword.Engine).
func (e *Engine) Multiply(p multiword.Plan, m, n, k int, a, b, c []float64) error {
	if err := multiword.CheckArgs(&p, m, n, k, a, b, c); err != nil {
		return err
	}
	if err := gemm.FusedSupports(&p); err != nil {
		return fmt.Errorf("%w (several GPUs run the fused kernels' plans only)", err)
	}
	if !gemm.Binary32Values(a) || !gemm.Binary32Values(b) {
		return fmt.Errorf("dist: plan %q on several GPUs takes fp32 values; A or B has wider ones", p.Name)
	}
	la, lb, lc := e.layouts(m, n, k)
	mats := make([]*Matrix, 0, 3)
	defer func() {
		for _, x := range mats {
			x.Free()
		}
	}()
	for _, l := range []Layout{la, lb, lc} {
		x, err := NewMatrix(e.Team, l)
		if err != nil {
			return err
		}
		mats = append(mats, x)
	}
	if err := mats[0].Scatter(a); err != nil {
		return err
	}
	if err := mats[1].Scatter(b); err != nil {
		return err
	}
	if err := Multiply(p, mats[0], mats[1], mats[2]); err != nil {
		return err
	}
	return mats[2].Gather(c)
}

// layouts cuts C into one block per rank in each dimension (rounded to
// 64 for the kernels' tiles) and k into panels.
func (e *Engine) layouts(m, n, k int) (a, b, c Layout) {
	g := e.Team.Grid
	mb := max(64, roundUp((m+g.P-1)/g.P, 64))
	nb := max(64, roundUp((n+g.Q-1)/g.Q, 64))
	kb := e.Panel
	if kb <= 0 {
		kb = DefaultPanel
	}
	kb = min(kb, max(k, 1))
	return Layout{m, k, mb, kb, g}, Layout{k, n, kb, nb, g}, Layout{m, n, mb, nb, g}
}

func roundUp(x, m int) int { return (x + m - 1) / m * m }
