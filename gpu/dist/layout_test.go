package dist

import (
	"math/rand/v2"
	"testing"
)

// Every global index has one owner and one local place, and back.
func TestLayoutMapsEveryIndexOnce(t *testing.T) {
	for n := 0; n <= 40; n++ {
		for nb := 1; nb <= 7; nb++ {
			for procs := 1; procs <= 4; procs++ {
				total := 0
				for who := 0; who < procs; who++ {
					total += localCount(n, nb, who, procs)
				}
				if total != n {
					t.Fatalf("n=%d nb=%d procs=%d: local counts sum to %d", n, nb, procs, total)
				}
				next := make([]int, procs) // local indices are dealt in order
				for i := 0; i < n; i++ {
					who, li := owner(i, nb, procs)
					if li != next[who] || global(li, nb, who, procs) != i {
						t.Fatalf("n=%d nb=%d procs=%d: index %d → (%d, %d), want local %d", n, nb, procs, i, who, li, next[who])
					}
					next[who]++
				}
			}
		}
	}
}

func TestPackUnpackRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		g := Grid{1 + rng.IntN(3), 1 + rng.IntN(3)}
		l := Layout{Rows: rng.IntN(20), Cols: rng.IntN(20), RowBlock: 1 + rng.IntN(5), ColBlock: 1 + rng.IntN(5), Grid: g}
		a := make([]float64, l.Rows*l.Cols)
		for i := range a {
			a[i] = float64(i + 1)
		}
		back := make([]float64, len(a))
		for r := 0; r < g.Size(); r++ {
			p, q := g.Coords(r)
			local := make([]float32, l.LocalRows(p)*l.LocalCols(q))
			l.Pack(local, a, r)
			for li := 0; li < l.LocalRows(p); li++ {
				for lj := 0; lj < l.LocalCols(q); lj++ {
					i, j := l.GlobalRow(p, li), l.GlobalCol(q, lj)
					if pp, _ := l.RowOwner(i); pp != p {
						t.Fatalf("%+v: row %d on grid row %d, owner says %d", l, i, p, pp)
					}
					if got := local[lj*l.LocalRows(p)+li]; got != float32(a[i*l.Cols+j]) {
						t.Fatalf("%+v: rank %d local (%d, %d) = %g, want a[%d][%d] = %g", l, r, li, lj, got, i, j, a[i*l.Cols+j])
					}
				}
			}
			l.Unpack(back, local, r)
		}
		for i := range a {
			if back[i] != a[i] {
				t.Fatalf("%+v: element %d came back as %g, want %g", l, i, back[i], a[i])
			}
		}
	}
}

func TestGrids(t *testing.T) {
	for ranks, want := range map[int]Grid{1: {1, 1}, 2: {1, 2}, 3: {1, 3}, 4: {2, 2}, 6: {2, 3}, 8: {2, 4}, 9: {3, 3}} {
		if g := SquareGrid(ranks); g != want {
			t.Errorf("SquareGrid(%d) = %v, want %v", ranks, g, want)
		}
	}
	g := Grid{2, 3}
	for r := 0; r < g.Size(); r++ {
		if p, q := g.Coords(r); g.Rank(p, q) != r {
			t.Errorf("rank %d → (%d, %d) → %d", r, p, q, g.Rank(p, q))
		}
	}
	if g, err := ParseGrid("2X4"); err != nil || g != (Grid{2, 4}) {
		t.Errorf("ParseGrid(2X4) = %v, %v", g, err)
	}
	for _, bad := range []string{"", "2", "0x2", "2x", "axb", "-1x2"} {
		if _, err := ParseGrid(bad); err == nil {
			t.Errorf("ParseGrid(%q) took it", bad)
		}
	}
}

func TestParseSpec(t *testing.T) {
	cases := []struct {
		spec string
		devs []int
		grid Grid
	}{
		{"2", []int{0, 1}, Grid{1, 2}},
		{"4", []int{0, 1, 2, 3}, Grid{2, 2}},
		{"4:1x4", []int{0, 1, 2, 3}, Grid{1, 4}},
		{"1,3", []int{1, 3}, Grid{1, 2}},
		{"0,1:2x1", []int{0, 1}, Grid{2, 1}},
	}
	for _, c := range cases {
		devs, g, err := ParseSpec(c.spec)
		if err != nil || g != c.grid || len(devs) != len(c.devs) {
			t.Errorf("ParseSpec(%q) = %v, %v, %v; want %v, %v", c.spec, devs, g, err, c.devs, c.grid)
			continue
		}
		for i := range devs {
			if devs[i] != c.devs[i] {
				t.Errorf("ParseSpec(%q) = %v, want %v", c.spec, devs, c.devs)
			}
		}
	}
	for _, bad := range []string{"", "0", "-1", "a", "1,1", "2:2x2", "2:x"} {
		if _, _, err := ParseSpec(bad); err == nil {
			t.Errorf("ParseSpec(%q) took it", bad)
		}
	}
}

// The engine's layouts cut k alike for A's columns and B's rows, and C
// like A's rows and B's columns: what Multiply checks.
func TestEngineLayoutsMultiply(t *testing.T) {
	e := &Engine{Team: &Team{Grid: Grid{2, 3}}, Panel: 100}
	for _, mnk := range [][3]int{{1, 1, 1}, {777, 1234, 555}, {64, 64, 4096}} {
		la, lb, lc := e.layouts(mnk[0], mnk[1], mnk[2])
		a, b, c := &Matrix{Layout: la}, &Matrix{Layout: lb}, &Matrix{Layout: lc}
		if err := errShape(a, b, c); err != nil {
			t.Errorf("%v: %v", mnk, err)
		}
	}
}
