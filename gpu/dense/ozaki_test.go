package dense

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/mwmm/mwmm/gpu"
)

// ozakiRef is the Ozaki update C −= A·B (column-major, lda = m, ldb = k,
// ldc = m) computed here as kernels/ozaki.cu specifies it: the same
// exponents, digits and level sums (exact, in int64), combined in the
// same order, so the GPU's answer must equal it bit for bit.
func ozakiRef(digits, m, n, k int, a, b, c []float64) {
	const bad = math.MinInt32
	exponent := func(xs func(int) float64, count int) int {
		mx := 0.0
		for t := range count {
			v := math.Abs(xs(t))
			if v > mx || math.IsNaN(v) {
				mx = v
			}
		}
		if math.IsNaN(mx) || math.IsInf(mx, 0) {
			return bad
		}
		if mx == 0 {
			return 0
		}
		_, e := math.Frexp(mx)
		return e
	}
	cut := func(x float64, e int) []int64 {
		d := make([]int64, digits)
		if e == bad {
			return d
		}
		y := math.Ldexp(x, -e)
		for t := range d {
			y *= 128
			q := math.Trunc(y)
			y -= q
			d[t] = int64(q)
		}
		return d
	}
	ea, fb := make([]int, m), make([]int, n)
	da := make([][][]int64, m) // da[i][p]: the digits of a(i, p)
	for i := range m {
		ea[i] = exponent(func(p int) float64 { return a[i+p*m] }, k)
		da[i] = make([][]int64, k)
		for p := range k {
			da[i][p] = cut(a[i+p*m], ea[i])
		}
	}
	db := make([][][]int64, n)
	for j := range n {
		fb[j] = exponent(func(p int) float64 { return b[p+j*k] }, k)
		db[j] = make([][]int64, k)
		for p := range k {
			db[j][p] = cut(b[p+j*k], fb[j])
		}
	}
	for j := range n {
		for i := range m {
			if ea[i] == bad || fb[j] == bad {
				c[i+j*m] = math.NaN()
				continue
			}
			sum := 0.0
			for d := digits - 1; d >= 0; d-- {
				var lv int64
				for p := range k {
					for t := 0; t <= d; t++ {
						lv += da[i][p][t] * db[j][p][d-t]
					}
				}
				sum = sum*(1.0/128) + float64(lv)
			}
			c[i+j*m] -= math.Ldexp(sum, ea[i]+fb[j]-14)
		}
	}
}

// ozakiOperands draws A (m×k) and B (k×n) whose rows and columns span
// magnitudes from 2^-20 to 2^20, with a zero row and a zero column.
func ozakiOperands(m, n, k int, seed uint64) (a, b []float64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	a, b = make([]float64, m*k), make([]float64, k*n)
	for i := range m {
		scale := math.Ldexp(1, rng.IntN(41)-20)
		for p := range k {
			if i != m/2 {
				a[i+p*m] = (rng.Float64() - 0.5) * scale * math.Ldexp(1, -rng.IntN(8))
			}
		}
	}
	for j := range n {
		scale := math.Ldexp(1, rng.IntN(41)-20)
		for p := range k {
			if j != n/3 {
				b[p+j*k] = (rng.Float64() - 0.5) * scale
			}
		}
	}
	return a, b
}

// The reference's error against the exact product (math/big) is within
// ozakiBound times 2^(e_i+f_j), plus C's rounding; with one digit's worth
// of bits per entry, the product is exact.
func TestOzakiRefBound(t *testing.T) {
	m, n, k := 9, 7, 40
	a, b := ozakiOperands(m, n, k, 1)
	for digits := OzakiMinDigits; digits <= OzakiMaxDigits; digits++ {
		c := make([]float64, m*n)
		ozakiRef(digits, m, n, k, a, b, c)
		for i := range m {
			for j := range n {
				exact := new(big.Float).SetPrec(2000)
				rowMax, colMax := 0.0, 0.0
				for p := range k {
					x := new(big.Float).SetPrec(2000).SetFloat64(a[i+p*m])
					exact.Add(exact, x.Mul(x, new(big.Float).SetFloat64(b[p+j*k])))
					rowMax, colMax = math.Max(rowMax, math.Abs(a[i+p*m])), math.Max(colMax, math.Abs(b[p+j*k]))
				}
				want, _ := exact.Neg(exact).Float64()
				got := c[i+j*m]
				// 2^e bounds the row's max: 2·max, at most.
				bound := ozakiBound(digits, k)*4*rowMax*colMax + math.Abs(want)*0x1p-52
				if diff := math.Abs(got - want); !(diff <= bound) {
					t.Errorf("digits=%d (%d,%d): error %.3g above the bound %.3g", digits, i, j, diff, bound)
				}
			}
		}
	}
	// Entries of 7 bits at the scale of their row or column: one digit,
	// and every level's product is exact.
	rng := rand.New(rand.NewPCG(2, 2))
	for i := range a {
		a[i] = float64(rng.IntN(255)-127) / 128
	}
	for i := range b {
		b[i] = math.Ldexp(float64(rng.IntN(255)-127), -7-3)
	}
	c := make([]float64, m*n)
	ozakiRef(OzakiMinDigits, m, n, k, a, b, c)
	for i := range m {
		for j := range n {
			want := 0.0 // exact: |a·b| sums stay far inside 53 bits
			for p := range k {
				want -= a[i+p*m] * b[p+j*k]
			}
			if c[i+j*m] != want {
				t.Fatalf("one-digit entries (%d,%d): %v, want exactly %v", i, j, c[i+j*m], want)
			}
		}
	}
}

// The GPU's Ozaki update equals the reference bit for bit: odd shapes,
// every digit count, C's columns in one chunk and in several, and a NaN
// that marks its row of C.
func TestOzakiUpdateGPU(t *testing.T) {
	e := engineGPU(t)
	d := e.d
	defer func(v int) { ozakiLevelBytes = v }(ozakiLevelBytes)
	for _, sh := range []struct{ m, n, k, levelBytes int }{
		{1, 1, 1, 1 << 31}, {37, 45, 19, 1 << 31}, {300, 257, 128, 1 << 31}, {300, 257, 128, 4 * 7 * 300 * 40},
	} {
		ozakiLevelBytes = sh.levelBytes
		m, n, k := sh.m, sh.n, sh.k
		a, b := ozakiOperands(m, n, k, uint64(m))
		if m > 2 {
			a[2+(k-1)*m] = math.NaN()
		}
		c0 := centered(max(m, n), 9)[:m*n]
		for digits := OzakiMinDigits; digits <= OzakiMaxDigits; digits++ {
			want := append([]float64(nil), c0...)
			ozakiRef(digits, m, n, k, a, b, want)
			u, err := e.newOzakiUpdate(digits, m, n, k)
			if err != nil {
				t.Fatal(err)
			}
			bufs := make([]*gpu.Buffer, 3)
			for i, x := range [][]float64{a, b, c0} {
				if bufs[i], err = d.Alloc(8 * len(x)); err != nil {
					t.Fatal(err)
				}
				if err := d.Upload(bufs[i], x); err != nil {
					t.Fatal(err)
				}
			}
			if err := u.sub(nil, m, n, k, bufs[0], m, bufs[1], k, bufs[2], m, 0); err != nil {
				t.Fatalf("m=%d n=%d k=%d digits=%d: %v", m, n, k, digits, err)
			}
			got := make([]float64, m*n)
			if err := d.Download(got, bufs[2]); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
					t.Fatalf("m=%d n=%d k=%d digits=%d chunk=%d: C(%d,%d) = %v, want %v",
						m, n, k, digits, u.chunk, i%m, i/m, got[i], want[i])
				}
			}
			u.free()
			gpu.FreeAll(bufs...)
		}
	}
}

func TestParseOzakiForm(t *testing.T) {
	for s := OzakiMinDigits; s <= OzakiMaxDigits; s++ {
		name := ozakiPrefix + string(rune('0'+s))
		f, err := ParseLUForm(name)
		if err != nil || f.Update != (Ozaki{Digits: s}) || !f.Blocked() || f.Name != name {
			t.Errorf("%s: %+v, %v", name, f, err)
		}
	}
	for _, name := range []string{"ozaki-int8x1", "ozaki-int8x8", "ozaki-int8x", "ozaki-int8xa", "ozaki-int8x-3"} {
		if _, err := ParseLUForm(name); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
