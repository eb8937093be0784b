package dense

import (
	"math"
	"math/rand/v2"
)

// A butterfly is the two-sided random butterfly transform (RBT) of a
// PivotButterfly factorization: Ã = M·A·Nᵀ, where M = M₂M₁ and N = N₂N₁
// are recursive butterflies of depth 2. Level ℓ splits each of its
// segments [s, s+m) in halves and mixes index s+k with its partner
// s+⌊m/2⌋+k:
//
//	top    = d_top·(x_top + x_bot)/√2
//	bottom = d_bot·(x_top − x_bot)/√2
//
// with random diagonals d = e^(r/10), r uniform in [−½, ½) (Parker's
// choice: the butterflies stay well conditioned). An odd segment's last
// index has no partner and is only scaled. Level 1 has the one segment
// [0, n); level 2 has its two halves.
//
// After the transform elimination without pivoting meets no zero pivots
// (on all but structured matrices: a depth of 2 mixes each index with
// three others only, so a permutation that maps those groups onto each
// other, such as the reversal, keeps its zeros), and it leaves out partial
// pivoting's panels and interchanges. It is not stable: on a random
// matrix the growth factor is 10^3 to 10^5 (TestButterflyGrowth), which fp64
// factors absorb. A·x = b becomes Ã·z = M·b and x = Nᵀ·z; refinement
// against the original A catches a matrix where the factors are poor.
type butterfly struct {
	n     int
	pairs [2][]int32   // per level: (top, partner) index pairs, partner −1 for an unpaired index
	r, s  [2][]float64 // per level: M's and N's diagonals
}

// butterflyDepth is the recursion depth: two levels mix each index with
// three others, which is enough in practice (Baboulin et al.) and costs
// two passes over A.
const butterflyDepth = 2

// newButterfly draws the transform of order n from seed.
func newButterfly(n int, seed uint64) *butterfly {
	rng := rand.New(rand.NewPCG(seed, 0x5bd1e995))
	bf := &butterfly{n: n}
	h := n / 2
	segments := [butterflyDepth][][2]int{{{0, n}}, {{0, h}, {h, n - h}}}
	for l, segs := range segments {
		for _, sg := range segs {
			start, m := sg[0], sg[1]
			half := m / 2
			for k := 0; k < half; k++ {
				bf.pairs[l] = append(bf.pairs[l], int32(start+k), int32(start+half+k))
			}
			if m%2 == 1 {
				bf.pairs[l] = append(bf.pairs[l], int32(start+2*half), -1)
			}
		}
		bf.r[l], bf.s[l] = make([]float64, n), make([]float64, n)
		for i := 0; i < n; i++ {
			bf.r[l][i] = math.Exp((rng.Float64() - 0.5) / 10)
			bf.s[l][i] = math.Exp((rng.Float64() - 0.5) / 10)
		}
	}
	return bf
}

// mix overwrites x with M·x: level 1, then level 2.
func (bf *butterfly) mix(x []float64) {
	for l := 0; l < butterflyDepth; l++ {
		d, p := bf.r[l], bf.pairs[l]
		for k := 0; k < len(p); k += 2 {
			i, j := p[k], p[k+1]
			if j < 0 {
				x[i] *= d[i]
				continue
			}
			a, b := x[i], x[j]
			x[i], x[j] = d[i]*(a+b)*math.Sqrt2/2, d[j]*(a-b)*math.Sqrt2/2
		}
	}
}

// unmixT overwrites z with Nᵀ·z = N₁ᵀN₂ᵀ·z: level 2, then level 1.
func (bf *butterfly) unmixT(z []float64) {
	for l := butterflyDepth - 1; l >= 0; l-- {
		d, p := bf.s[l], bf.pairs[l]
		for k := 0; k < len(p); k += 2 {
			i, j := p[k], p[k+1]
			if j < 0 {
				z[i] *= d[i]
				continue
			}
			a, b := d[i]*z[i], d[j]*z[j]
			z[i], z[j] = (a+b)*math.Sqrt2/2, (a-b)*math.Sqrt2/2
		}
	}
}

// transform overwrites the column-major n×n matrix a with M·A·Nᵀ, one
// level at a time, as the butterfly kernel does on the device: the
// reference of the GPU tests.
func (bf *butterfly) transform(a []float64) {
	n := bf.n
	for l := 0; l < butterflyDepth; l++ {
		p := bf.pairs[l]
		for q := 0; q < len(p); q += 2 {
			for k := 0; k < len(p); k += 2 {
				butterflyQuad(a, n, p[k], p[k+1], p[q], p[q+1], bf.r[l], bf.s[l])
			}
		}
	}
}

// butterflyQuad mixes rows (i, i2) and columns (j, j2) of a, as the
// kernel's threads do: a partner −1 leaves its index only scaled.
func butterflyQuad(a []float64, n int, i, i2, j, j2 int32, dr, ds []float64) {
	at := func(r, c int32) float64 {
		if r < 0 || c < 0 {
			return 0
		}
		return a[int(r)+int(c)*n]
	}
	ci, cj := 1.0, 1.0
	if i2 >= 0 {
		ci = math.Sqrt2 / 2
	}
	if j2 >= 0 {
		cj = math.Sqrt2 / 2
	}
	x00, x10, x01, x11 := at(i, j), at(i2, j), at(i, j2), at(i2, j2)
	t0, b0 := x00+x10, x00-x10 // column j, rows mixed
	t1, b1 := x01+x11, x01-x11 // column j2
	set := func(r, c int32, v float64) {
		if r >= 0 && c >= 0 {
			a[int(r)+int(c)*n] = v
		}
	}
	set(i, j, dr[i]*ci*ds[j]*cj*(t0+t1))
	if j2 >= 0 {
		set(i, j2, dr[i]*ci*ds[j2]*cj*(t0-t1))
	}
	if i2 >= 0 {
		set(i2, j, dr[i2]*ci*ds[j]*cj*(b0+b1))
		if j2 >= 0 {
			set(i2, j2, dr[i2]*ci*ds[j2]*cj*(b0-b1))
		}
	}
}
