package dist

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mwmm/mwmm/gpu/fp16"
	"github.com/mwmm/mwmm/multiword"
	"github.com/mwmm/mwmm/solve"
)

// A Road is one factorization Solve may take.
type Road struct {
	Half    bool // FactorHalf: the matrix held in fp16; false: in fp32 (Factor, FactorPivoted)
	Pivoted bool // partial pivoting (FactorPivoted, 1×Q grids)
	Checked bool // FactorHalf's growth check ran
}

func (r Road) String() string {
	if r.Half {
		return "fp16-store, " + r.pivoting()
	}
	return "fp32 storage, " + r.pivoting()
}

// pivoting says how the road pivots.
func (r Road) pivoting() string {
	switch {
	case r.Pivoted:
		return "partial pivoting"
	case r.Checked:
		return "no pivoting, growth checked"
	}
	return "no pivoting"
}

// Storage chooses the factorization's working matrix.
type Storage int

const (
	StorageAuto   Storage = iota // fp16, falling back to fp32 where fp16's factors do not serve
	StorageHalf                  // fp16 only (FactorHalf)
	StorageSingle                // fp32 only, updated with the plan (Factor, FactorPivoted)
)

// Pivot chooses the pivoting.
type Pivot int

const (
	PivotAuto    Pivot = iota // none while the growth check passes; partial where it fails (1×Q grids)
	PivotNone                 // none, unchecked
	PivotPartial              // partial pivoting (1×Q grids, fp32 storage)
)

// SolveOptions choose Solve's factorizations and refinement.
type SolveOptions struct {
	Plan    *multiword.Plan // fp32 storage's updates; nil: double-fp16-fabsum
	Storage Storage
	Pivot   Pivot
	Refine  solve.Options // GMRES-IR by default
}

// An Attempt is a road Solve left, and why.
type Attempt struct {
	Road Road
	Err  error // a *fp16.GrowthError, or wraps solve.ErrNotConverged
}

// A SolveReport times a solve on several GPUs and holds refinement's
// report.
type SolveReport struct {
	GPUs     int
	Grid     Grid
	NB       int
	Road     Road          // the factorization that answered (or failed last)
	Attempts []Attempt     // the roads left before it
	Factor   time.Duration // Road's LU
	Gather   time.Duration // its factors to one GPU
	Total    time.Duration // every attempt's factorization, gather and refinement
	Refine   solve.Report
}

// LUTFLOPs is the LU's rate, 2/3·n³ over its time, in TFLOP/s.
func (r SolveReport) LUTFLOPs() float64 {
	n := float64(r.Refine.N)
	return 2 * n * n * n / 3 / r.Factor.Seconds() / 1e12
}

// firstRoad is the road Solve takes first on grid g.
func FirstRoad(opt SolveOptions, g Grid) (Road, error) {
	switch {
	case opt.Pivot == PivotPartial && opt.Storage == StorageHalf:
		return Road{}, errors.New("dist: fp16-store factors without pivoting; partial pivoting keeps the matrix in fp32")
	case opt.Pivot == PivotPartial && g.P != 1:
		return Road{}, fmt.Errorf("dist: partial pivoting needs a 1xQ grid (whole columns on each GPU), not %v", g)
	case opt.Pivot == PivotPartial:
		return Road{Pivoted: true}, nil
	case opt.Storage == StorageSingle:
		return Road{}, nil
	}
	return Road{Half: true, Checked: opt.Pivot == PivotAuto}, nil
}

// nextRoad is the road to take after road failed with err, if any: a
// failed growth check pivots (on 1×Q grids; elsewhere the matrix goes to
// fp32 unpivoted), fp16 factors that refinement could not use give way to
// fp32's, and fp32's unpivoted ones to pivoting where the options allow.
func nextRoad(road Road, err error, opt SolveOptions, g Grid) (Road, bool) {
	single := opt.Storage != StorageHalf
	canPivot := opt.Pivot == PivotAuto && g.P == 1
	var growth *fp16.GrowthError
	switch {
	case road.Half && errors.As(err, &growth) && canPivot && single:
		return Road{Pivoted: true}, true
	case road.Half && errors.As(err, &growth) && single:
		return Road{}, true
	case road.Half && errors.Is(err, solve.ErrNotConverged) && single:
		return Road{}, true
	case !road.Half && !road.Pivoted && errors.Is(err, solve.ErrNotConverged) && canPivot:
		return Road{Pivoted: true}, true
	}
	return Road{}, false
}

// Solve solves A·x = b: the first road's factorization (FactorHalf,
// Factor or FactorPivoted), Gather, and refinement in fp64, then the
// next road while one fails in a way another may not (nextRoad).
func Solve(ctx context.Context, s *System, b []float64, opt SolveOptions) ([]float64, SolveReport, error) {
	rep := SolveReport{GPUs: s.A.Grid.Size(), Grid: s.A.Grid, NB: s.A.RowBlock}
	if opt.Plan == nil {
		p, err := multiword.Lookup("double-fp16-fabsum")
		if err != nil {
			return nil, rep, err
		}
		opt.Plan = &p
	}
	if len(b) != s.N() || !finite(b) {
		return nil, rep, fmt.Errorf("dist: b has %d entries (want %d) or a NaN or Inf", len(b), s.N())
	}
	road, err := FirstRoad(opt, s.A.Grid)
	if err != nil {
		return nil, rep, err
	}
	start := time.Now()
	for {
		var x []float64
		rep.Road = road
		x, err = solveBy(ctx, s, b, road, opt, &rep)
		rep.Total = time.Since(start)
		next, ok := nextRoad(road, err, opt, s.A.Grid)
		// Stalled at the floor, the next road would refine no further.
		floor := errors.Is(err, solve.ErrNotConverged) && rep.Refine.BackwardError <= solve.ResidualFloor
		if err == nil || !ok || floor || ctx.Err() != nil {
			return x, rep, err
		}
		rep.Attempts = append(rep.Attempts, Attempt{Road: road, Err: err})
		road = next
	}
}

// solveBy factors by road, gathers and refines, into rep.
func solveBy(ctx context.Context, s *System, b []float64, road Road, opt SolveOptions, rep *SolveReport) ([]float64, error) {
	start := time.Now()
	f, err := factorBy(ctx, s, road, *opt.Plan, rep)
	if err != nil {
		return nil, err
	}
	defer f.Free()
	rep.Gather = time.Since(start) - rep.Factor
	x, rr, err := solve.RefineOperator(ctx, s, b, f, opt.Refine)
	rep.Refine = rr
	rep.Refine.Factor = "fp16-store (" + road.pivoting() + ", " + rep.Grid.String() + " GPUs)"
	if !road.Half {
		rep.Refine.Factor = opt.Plan.Name + " (fp32 storage, " + road.pivoting() + ", " + rep.Grid.String() + " GPUs)"
	}
	rep.Refine.FactorSeconds, rep.Refine.NB = (rep.Factor + rep.Gather).Seconds(), rep.NB
	return x, err
}

// gathered are factors on the first GPU.
type gathered interface {
	solve.Factorization
	Free()
}

// factorBy factors by road and gathers the factors to the first GPU,
// timing the factorization into rep.
func factorBy(ctx context.Context, s *System, road Road, plan multiword.Plan, rep *SolveReport) (gathered, error) {
	start := time.Now()
	rep.Factor, rep.Gather = 0, 0
	if road.Half {
		lu, err := FactorHalf(ctx, s, road.Checked)
		if rep.Factor = time.Since(start); err != nil {
			return nil, err
		}
		return GatherHalf(lu)
	}
	var w *Matrix
	var perm []int
	var err error
	if road.Pivoted {
		w, perm, err = FactorPivoted(ctx, s, plan)
	} else {
		w, err = Factor(ctx, s, plan)
	}
	if rep.Factor = time.Since(start); err != nil {
		return nil, err
	}
	f, err := Gather(w)
	w.Free()
	if err != nil {
		return nil, err
	}
	f.perm = perm
	return f, nil
}
