package dist

import "testing"

// The LU's schedule, on the CPU: over all steps, each element (i, j) of
// each rank is updated by exactly min(I, J) steps (I, J its block row and
// column), once each; the regions marked first hold all of block column
// and row k+1 that the rank owns below and right of the diagonal; and the
// panel's rows and columns start where the trailing blocks do.
func TestLUSchedule(t *testing.T) {
	for _, g := range []Grid{{1, 1}, {1, 2}, {2, 1}, {2, 2}, {2, 3}, {3, 2}} {
		for _, n := range []int{1, 5, 64, 100, 131} {
			for _, nb := range []int{1, 4, 32, 64} {
				checkSchedule(t, Layout{n, n, nb, nb, g})
			}
		}
	}
}

func checkSchedule(t *testing.T, l Layout) {
	t.Helper()
	w := &Matrix{Layout: l}
	n, nb := l.Rows, l.RowBlock
	count := make([]int, n*n)
	for rank := 0; rank < l.Grid.Size(); rank++ {
		p, q := l.Grid.Coords(rank)
		r := &Rank{Rank: rank, P: p, Q: q}
		for k := 0; k*nb < n; k++ {
			s := &luStep{w: w, r: r, k: k}
			first := map[[2]int]bool{}
			for _, g := range s.regions() {
				for li := g.i0; li < g.i1; li++ {
					for lj := g.j0; lj < g.j1; lj++ {
						i, j := l.GlobalRow(p, li), l.GlobalCol(q, lj)
						count[i*n+j]++
						if g.first {
							first[[2]int{i, j}] = true
						}
					}
				}
			}
			for li := 0; li < l.LocalRows(p); li++ {
				for lj := 0; lj < l.LocalCols(q); lj++ {
					i, j := l.GlobalRow(p, li), l.GlobalCol(q, lj)
					next := (i/nb == k+1 && j/nb > k) || (j/nb == k+1 && i/nb > k)
					if next && !first[[2]int{i, j}] {
						t.Fatalf("%+v rank %d step %d: (%d, %d) of block row or column k+1 is not updated first", l, rank, k, i, j)
					}
				}
			}
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if want := min(i/nb, j/nb); count[i*n+j] != want {
				t.Fatalf("%+v: (%d, %d) updated %d times, want %d", l, i, j, count[i*n+j], want)
			}
		}
	}
}
