package experiment

import (
	"context"
	"testing"
)

// On every class of matrices that need no pivoting, TC32's factorization
// and solution are an order of magnitude more accurate than TC16's (the
// paper's claim), and every componentwise error lies under its bound.
func TestBFMALUNoPivotingClasses(t *testing.T) {
	const n, nb = 256, 64
	for _, c := range luClasses {
		a := c.gen(1, "test "+c.name, n)
		got := map[string][]Row{}
		for _, s := range []luSeries{{"TC16", "tc16", "v100", nb, true}, {"TC32", "tc32", "v100", nb, true}} {
			rows, err := paperLUPoint(context.Background(), c, s, a, n)
			if err != nil {
				t.Fatalf("%s %s: %v", c.name, s.series, err)
			}
			if len(rows) != 3 || rows[2].Y < rows[0].Y {
				t.Fatalf("%s %s: rows %+v: want the error, the solution's and a bound above the error", c.name, s.series, rows)
			}
			got[s.series] = rows
		}
		for i, what := range []string{"factorization", "solution"} {
			tc16, tc32 := got["TC16"][i].Y, got["TC32"][i].Y
			if !(tc32 > 0 && 10*tc32 < tc16) {
				t.Errorf("%s: %s error TC32 %.3g, TC16 %.3g: want TC32 ten times smaller", c.name, what, tc32, tc16)
			}
		}
	}
}

// Beyond the paper: with partial pivoting on a dense random matrix the
// two forms' normwise backward errors are within 2× of each other.
func TestBFMALUPivotedEqual(t *testing.T) {
	var tc16, tc32 float64
	for _, task := range pivotedLUTasks(1, "v100", 256) {
		if task.Series != "TC16" && task.Series != "TC32" {
			continue
		}
		rows, err := task.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if task.Series == "TC16" {
			tc16 = rows[0].Y
		} else {
			tc32 = rows[0].Y
		}
	}
	if !(tc16 > 0 && tc32 > 0 && tc16 < 2*tc32 && tc32 < 2*tc16) {
		t.Errorf("normwise backward errors TC16 %.3g, TC32 %.3g: want within 2×", tc16, tc32)
	}
}
