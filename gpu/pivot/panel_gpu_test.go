package pivot

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
	"github.com/mwmm/mwmm/gpu/internal/gputest"
)

// BenchmarkPanelLeaf times the recursive panel on m×w panels of random
// values, binary32 and binary64 (f64/), for several rows a leaf block
// (so grid sizes), against cuSOLVER's getrf.
// ./pivot.test -test.run '^$' -test.bench PanelLeaf
func BenchmarkPanelLeaf(b *testing.B) {
	d := device(b)
	la, err := d.Linalg()
	if err != nil {
		b.Fatal(err)
	}
	defer func(r int) { leafRows = r }(leafRows)
	for _, double := range []bool{false, true} {
		prefix, getrf, kinds := "", "sgetrf", []int{256, 512, 1024}
		if double {
			prefix, getrf, kinds = "f64/", "dgetrf", []int{256, 512}
		}
		for _, shape := range [][2]int{{8192, 32}, {32768, 32}, {8192, 1024}, {16384, 2048}, {32768, 1024}} {
			m, w := shape[0], shape[1]
			values := randomPanel(m, w, double)
			a, ipiv := gputest.Alloc(b, d, size(double)*m*w), gputest.Alloc(b, d, 4*w)
			info, work := gputest.Alloc(b, d, 4), getrfWork(b, d, la, double, m, w, a)
			for _, rows := range append([]int{0}, kinds...) { // 0: cuSOLVER's getrf
				leafRows = rows
				name := fmt.Sprintf("%sm=%d/w=%d/rows=%d", prefix, m, w, rows)
				if rows == 0 {
					name = fmt.Sprintf("%sm=%d/w=%d/%s", prefix, m, w, getrf)
				}
				b.Run(name, func(b *testing.B) {
					pl, err := NewPanel(d, double)
					if err != nil {
						b.Fatal(err)
					}
					defer pl.Free()
					for i := 0; i < b.N; i++ {
						b.StopTimer()
						if err := d.Upload(a, values); err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
						if rows == 0 {
							err = d.Do(func() error {
								if err := la.SolverOn(d, nil); err != nil {
									return err
								}
								return cuda.Getrf(la.Solver, double, m, w, a.Ptr(), m, work.Ptr(), ipiv.Ptr(), info.Ptr())
							})
						} else {
							err = pl.Factor(nil, a.Ptr(), m, m, w, ipiv.Ptr(), d.Multiprocessors())
						}
						if err == nil {
							err = d.Sync()
						}
						if err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*w), "µs/column")
				})
			}
		}
	}
}

// randomPanel is m×w values uniform in [−0.5, 0.5), as []float64 or
// []float32.
func randomPanel(m, w int, double bool) any {
	rng := rand.New(rand.NewPCG(uint64(m), uint64(w)))
	if double {
		x := make([]float64, m*w)
		for i := range x {
			x[i] = rng.Float64() - 0.5
		}
		return x
	}
	x := make([]float32, m*w)
	for i := range x {
		x[i] = float32(rng.Float64() - 0.5)
	}
	return x
}

// getrfWork is cuSOLVER getrf's work space for an m×w panel at a.
func getrfWork(tb testing.TB, d *gpu.Device, la *gpu.Linalg, double bool, m, w int, a *gpu.Buffer) *gpu.Buffer {
	var lwork int
	err := d.Do(func() error {
		var err error
		lwork, err = cuda.GetrfBufferSize(la.Solver, double, m, w, a.Ptr(), m)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return gputest.Alloc(tb, d, size(double)*max(1, lwork))
}

// device is the tests' GPU; it skips without one.
func device(tb testing.TB) *gpu.Device { return gputest.Device(tb) }

// A leaf (a panel of at most 32 columns, one kernel) factors as partial
// pivoting must in binary32 and binary64, bit for bit: pivots the largest
// magnitude, the lowest row on ties (as isamax), multipliers rounded
// quotients, and each update one fused multiply-add, all checked against
// math/big. Entries are multiples of 1/4 so that columns have ties; one
// column is zero (a zero pivot: no elimination), one holds a NaN (never a
// pivot). Shapes take one to several blocks of every kind (256, 512 and,
// in binary32, 1024 rows a block).
func TestPanelLeaf(t *testing.T) {
	d := device(t)
	defer func(r int) { leafRows = r }(leafRows)
	for _, double := range []bool{false, true} {
		pl, err := NewPanel(d, double)
		if err != nil {
			t.Fatal(err)
		}
		if double {
			testLeaf[float64](t, d, pl)
		} else {
			testLeaf[float32](t, d, pl)
		}
		pl.Free()
	}
}

func testLeaf[E float32 | float64](t *testing.T, d *gpu.Device, pl *Panel) {
	rng := rand.New(rand.NewPCG(7, 26))
	for _, c := range []struct{ m, w, blocks int }{{1, 1, 32}, {17, 17, 32}, {300, 32, 32}, {3000, 20, 32}, {9000, 32, 8}, {20000, 7, 132}} {
		a := make([]E, c.m*c.w) // column-major
		for i := range a {
			a[i] = E(rng.IntN(17)-8) / 4
		}
		if c.w > 5 {
			for i := 0; i < c.m; i++ {
				a[i+5*c.m] = 0
			}
			a[c.m-1+(c.w-1)*c.m] = E(math.NaN())
		}
		wantLU, wantPiv := leafReference(a, c.m, c.w)
		for _, rows := range []int{0, 256, 512, 1024} {
			leafRows = rows
			buf, err := d.Alloc(pl.es * len(a))
			if err != nil {
				t.Fatal(err)
			}
			ipiv, err := d.Alloc(4 * c.w)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Upload(buf, a); err != nil {
				t.Fatal(err)
			}
			err = pl.Factor(nil, buf.Ptr(), c.m, c.m, c.w, ipiv.Ptr(), c.blocks)
			lu, piv := make([]E, len(a)), make([]int32, c.w)
			if err == nil {
				err = d.Download(lu, buf)
			}
			if err == nil {
				err = d.Download(piv, ipiv)
			}
			buf.Free()
			ipiv.Free()
			if err != nil {
				t.Fatal(err)
			}
			for j := range piv {
				if piv[j] != wantPiv[j] {
					t.Fatalf("%d-byte %+v, %d rows a block: pivot %d is row %d, want %d", pl.es, c, leafRows, j, piv[j], wantPiv[j])
				}
			}
			for i := range lu {
				same := lu[i] == wantLU[i] && math.Signbit(float64(lu[i])) == math.Signbit(float64(wantLU[i]))
				if !same && !(lu[i] != lu[i] && wantLU[i] != wantLU[i]) {
					t.Fatalf("%d-byte %+v, %d rows a block: entry (%d, %d) is %g, want %g", pl.es, c, leafRows, i%c.m, i/c.m, lu[i], wantLU[i])
				}
			}
		}
	}
	if _, _, err := pl.leafShape(pl.MaxRows()+1, 32); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("a panel too tall for the leaves: %v", err)
	}
}

// leafReference is partial pivoting on the column-major m×w a, each
// operation rounded once to E (math/big): l = a/p, a − l·u by one fused
// multiply-add. A zero pivot eliminates nothing; NaNs are never pivots,
// and a column without a candidate keeps its diagonal row. Pivots are
// 1-based, as LAPACK's.
func leafReference[E float32 | float64](a []E, m, w int) ([]E, []int32) {
	lu := append([]E(nil), a...)
	piv := make([]int32, w)
	round := func(x *big.Float) E {
		if _, single := any(E(0)).(float32); single {
			f, _ := x.Float32()
			return E(f)
		}
		f, _ := x.Float64()
		return E(f)
	}
	exact := func(x E) *big.Float { return new(big.Float).SetPrec(200).SetFloat64(float64(x)) }
	special := func(xs ...E) bool {
		for _, x := range xs {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return true
			}
		}
		return false
	}
	for j := 0; j < w; j++ {
		p, best := j, E(-1)
		for i := j; i < m; i++ {
			if v := E(math.Abs(float64(lu[i+j*m]))); v > best {
				p, best = i, v
			}
		}
		piv[j] = int32(p + 1)
		for c := 0; c < w; c++ {
			lu[j+c*m], lu[p+c*m] = lu[p+c*m], lu[j+c*m]
		}
		d := lu[j+j*m]
		if d == 0 {
			continue
		}
		for i := j + 1; i < m; i++ {
			var l E
			if x := lu[i+j*m]; special(x, d) || x == 0 {
				l = x / d // IEEE: NaN, or a signed zero as the GPU's
			} else {
				l = round(new(big.Float).SetPrec(200).Quo(exact(x), exact(d)))
			}
			lu[i+j*m] = l
			for c := j + 1; c < w; c++ {
				x, u := lu[i+c*m], lu[j+c*m]
				if special(x, u, l) || l == 0 || u == 0 {
					lu[i+c*m] = E(math.FMA(float64(-l), float64(u), float64(x))) // exact product: rounds once
					continue
				}
				prod := new(big.Float).SetPrec(200).Mul(exact(l), exact(u))
				lu[i+c*m] = round(prod.Sub(exact(x), prod))
			}
		}
	}
	return lu, piv
}
