package pivot

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/mwmm/mwmm/gpu/internal/gputest"
)

// A Permuter moves the rows of a permutation in every column, with more
// columns than blocks and more pairs than a block has threads, in both
// precisions, leaving the rows that do not move alone; it refuses more
// pairs than it was made for.
func TestPermuter(t *testing.T) {
	d := device(t)
	const ld, ncols, np = 1000, 7, 600
	rng := rand.New(rand.NewPCG(5, 6))
	rows := rng.Perm(ld)[:np] // the rows that move, and where to
	moves := make([]int32, 2*np)
	for i, j := range rng.Perm(np) {
		moves[np+i] = int32(rows[i]) // sources
		moves[j] = int32(rows[i])    // destinations: a permutation of the same rows
	}
	for _, es := range []int{4, 8} {
		p, err := NewPermuter(d, es, np)
		if err != nil {
			t.Fatal(err)
		}
		a := make([]float64, ld*ncols)
		for i := range a {
			a[i] = float64(i)
		}
		want := slices.Clone(a)
		for c := range ncols {
			for i := range np {
				want[c*ld+int(moves[i])] = a[c*ld+int(moves[np+i])]
			}
		}
		var upload any = a
		if es == 4 {
			a32 := make([]float32, len(a))
			for i, v := range a {
				a32[i] = float32(v)
			}
			upload = a32
		}
		buf := gputest.Upload(t, d, upload)
		if err := p.Permute(nil, buf, ld, ncols, gputest.Upload(t, d, moves), np, 2); err != nil {
			t.Fatal(err)
		}
		got := make([]float64, len(a))
		if es == 4 {
			g32 := make([]float32, len(a))
			if err := d.Download(g32, buf); err != nil {
				t.Fatal(err)
			}
			for i, v := range g32 {
				got[i] = float64(v)
			}
		} else if err := d.Download(got, buf); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%d-byte values: entry (%d, %d) is %v, want %v", es, i%ld, i/ld, got[i], want[i])
			}
		}
		if err := p.Permute(nil, buf, ld, ncols, gputest.Upload(t, d, moves), np+1, 2); err == nil {
			t.Errorf("%d-byte values: a Permuter of %d rows moved %d", es, np, np+1)
		}
	}
	if _, err := NewPermuter(d, 2, np); err == nil {
		t.Error("a Permuter of 2-byte values was made")
	}
}
