package dist

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mwmm/mwmm/gpu/fp16"
	"github.com/mwmm/mwmm/solve"
)

// The roads Solve takes, first and after each kind of failure, for every
// storage and pivoting on 1×Q and P×Q grids.
func TestRoads(t *testing.T) {
	growth := fmt.Errorf("dist: %w", &fp16.GrowthError{Column: 64, Multiplier: 1e8})
	stalled := fmt.Errorf("%w: stalled", solve.ErrNotConverged)
	other := errors.New("device lost")
	half, checked := Road{Half: true}, Road{Half: true, Checked: true}
	single, pivoted := Road{}, Road{Pivoted: true}
	row, square := Grid{1, 2}, Grid{2, 2}
	for _, c := range []struct {
		opt   SolveOptions
		g     Grid
		first Road
		after map[error]*Road // nil: stop
	}{
		{SolveOptions{}, row, checked, map[error]*Road{growth: &pivoted, stalled: &single, other: nil}},
		{SolveOptions{}, square, checked, map[error]*Road{growth: &single, stalled: &single, other: nil}},
		{SolveOptions{Storage: StorageHalf}, row, checked, map[error]*Road{growth: nil, stalled: nil}},
		{SolveOptions{Pivot: PivotNone}, row, half, map[error]*Road{stalled: &single}},
		{SolveOptions{Storage: StorageSingle}, row, single, map[error]*Road{stalled: &pivoted, other: nil}},
		{SolveOptions{Storage: StorageSingle}, square, single, map[error]*Road{stalled: nil}},
		{SolveOptions{Storage: StorageSingle, Pivot: PivotNone}, row, single, map[error]*Road{stalled: nil}},
		{SolveOptions{Pivot: PivotPartial}, row, pivoted, map[error]*Road{stalled: nil}},
	} {
		first, err := FirstRoad(c.opt, c.g)
		if err != nil || first != c.first {
			t.Errorf("%+v on %v: first road %v (%v), want %v", c.opt, c.g, first, err, c.first)
		}
		for failure, want := range c.after {
			next, ok := nextRoad(first, failure, c.opt, c.g)
			if ok != (want != nil) || ok && next != *want {
				t.Errorf("%+v on %v: after %v (%q): %v %v, want %v", c.opt, c.g, first, failure, next, ok, want)
			}
		}
	}
	for _, opt := range []SolveOptions{{Pivot: PivotPartial, Storage: StorageHalf}} {
		if _, err := FirstRoad(opt, row); err == nil {
			t.Errorf("%+v: accepted", opt)
		}
	}
	if _, err := FirstRoad(SolveOptions{Pivot: PivotPartial}, square); err == nil {
		t.Error("partial pivoting on a 2×2 grid: accepted")
	}
}

// Each names each rank's error, but says a verdict every rank reached
// once.
func TestEachErrors(t *testing.T) {
	tm := &Team{Ranks: []*Rank{{Rank: 0}, {Rank: 1}, {Rank: 2}}}
	verdict := errors.New("the matrix needs pivoting")
	if err := tm.Each(func(*Rank) error { return verdict }); err != verdict {
		t.Errorf("the same error on every rank: %q", err)
	}
	err := tm.Each(func(r *Rank) error {
		if r.Rank == 1 {
			return verdict
		}
		return nil
	})
	if !errors.Is(err, verdict) || err.Error() != "rank 1: the matrix needs pivoting" {
		t.Errorf("one rank's error: %q", err)
	}
	err = tm.Each(func(r *Rank) error { return fmt.Errorf("timeout on %d", r.Rank) })
	if want := "rank 0: timeout on 0\nrank 1: timeout on 1\nrank 2: timeout on 2"; err == nil || err.Error() != want {
		t.Errorf("different errors: %q, want %q", err, want)
	}
	if err := tm.Each(func(*Rank) error { return nil }); err != nil {
		t.Errorf("no error: %v", err)
	}
}

// permutation composes the panels' pivots as the interchanges one by
// one, and refuses a pivot outside its panel.
func TestPermutation(t *testing.T) {
	// Panels of 2 rows: swap rows 0 and 3, keep 1; swap rows 2 and 4;
	// keep 4 (the last panel, one row).
	perm, err := permutation([]int32{4, 2, 3, 2, 1}, 2)
	if want := []int{3, 1, 4, 0, 2}; err != nil || fmt.Sprint(perm) != fmt.Sprint(want) {
		t.Errorf("permutation: %v, %v; want %v", perm, err, want)
	}
	if _, err := permutation([]int32{1, 1}, 2); err == nil {
		t.Error("a pivot above its row was accepted")
	}
	if _, err := permutation([]int32{1, 5}, 2); err == nil {
		t.Error("a pivot below the matrix was accepted")
	}
}
