package pivot

import (
	"math/rand/v2"
	"testing"
)

// Moves gives the permutation that the interchanges give one by one.
func TestMoves(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(40)
		r0 := rng.IntN(n)
		jb := 1 + rng.IntN(n-r0)
		piv := make([]int32, jb)
		for k := range piv {
			if rng.IntN(3) == 0 {
				piv[k] = int32(k + 1) // no interchange
			} else {
				piv[k] = int32(k + 1 + rng.IntN(n-r0-k))
			}
		}
		want := make([]int, n)
		got := make([]int, n)
		for i := range want {
			want[i], got[i] = i, i
		}
		for k, p := range piv {
			a, b := r0+k, r0+int(p)-1
			want[a], want[b] = want[b], want[a]
		}
		moves := Moves(nil, piv, r0)
		np := len(moves) / 2
		if np > 2*jb {
			t.Fatalf("piv=%v: %d moves for %d interchanges", piv, np, jb)
		}
		old := append([]int(nil), got...)
		for i := 0; i < np; i++ {
			got[moves[i]] = old[moves[np+i]]
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("n=%d r0=%d piv=%v: rows %v, want %v", n, r0, piv, got, want)
			}
		}
	}
}

// The leaves take a full block on each multiprocessor, up to LEAF_GMAX.
func TestMaxPanelRows(t *testing.T) {
	if MaxPanelRows(132, false) != 132*1024 || MaxPanelRows(132, true) != 132*512 || MaxPanelRows(200, false) != leafBlocks*1024 {
		t.Errorf("MaxPanelRows: %d, %d, %d", MaxPanelRows(132, false), MaxPanelRows(132, true), MaxPanelRows(200, false))
	}
}
