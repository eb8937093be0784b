package experiment

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/mwmm/mwmm/matgen"
)

// A MatrixSpec names a family of square test matrices for linear systems.
// ParseMatrix builds one from text; a hand-built spec may leave Kappa and
// Mode zero for their defaults.
type MatrixSpec struct {
	Kind  string  // "uniform", "centered", "normal", "diagdom", "randsvd"
	Kappa float64 // randsvd: the 2-norm condition number κ ≥ 1; 0 means DefaultKappa
	Mode  string  // randsvd: "geometric" or "one-small"; "" means geometric
}

// DefaultKappa is randsvd's κ when the spec names none (matgen's).
const DefaultKappa = matgen.DefaultKappa

// The randsvd singular value distributions (matgen's).
const (
	Geometric = matgen.Geometric // σ_i = κ^(−(i−1)/(n−1))
	OneSmall  = matgen.OneSmall  // σ = 1, …, 1, 1/κ
)

// A MatrixKind is one family ParseMatrix knows, for help texts.
type MatrixKind struct {
	Name string // as typed
	Doc  string // one line
}

// MatrixKinds lists the kinds ParseMatrix knows: matgen's, which the GPU
// draws too.
func MatrixKinds() []MatrixKind {
	var kinds []MatrixKind
	for _, k := range matgen.Kinds() {
		kinds = append(kinds, MatrixKind{k.Name, k.Doc})
	}
	return kinds
}

func matrixKindNames() string {
	var names []string
	for _, k := range MatrixKinds() {
		names = append(names, k.Name)
	}
	return strings.Join(names, ", ")
}

// ParseMatrix reads "KIND[:key=value,...]", case-insensitive. Only randsvd
// takes options: kappa, a finite κ ≥ 1, and mode.
func ParseMatrix(spec string) (MatrixSpec, error) {
	fail := func(format string, args ...any) (MatrixSpec, error) {
		return MatrixSpec{}, fmt.Errorf("matrix %q: %s", spec, fmt.Sprintf(format, args...))
	}
	kind, opts, hasOpts := strings.Cut(strings.TrimSpace(spec), ":")
	s := MatrixSpec{Kind: strings.ToLower(strings.TrimSpace(kind))}
	switch s.Kind {
	case "uniform", "centered", "normal", "diagdom":
		if hasOpts {
			return fail("%s takes no options (kappa and mode are randsvd's)", s.Kind)
		}
		return s, nil
	case "randsvd":
		s.Kappa, s.Mode = DefaultKappa, Geometric
	default:
		return fail("unknown kind %q: %s", s.Kind, matrixKindNames())
	}
	if !hasOpts {
		return s, nil
	}
	seen := map[string]bool{}
	for _, opt := range strings.Split(opts, ",") {
		key, val, ok := strings.Cut(opt, "=")
		key, val = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(val)
		if !ok || key == "" {
			return fail("option %q is not key=value (randsvd takes kappa=, mode=)", strings.TrimSpace(opt))
		}
		if seen[key] {
			return fail("%s given twice", key)
		}
		seen[key] = true
		switch key {
		case "kappa":
			k, err := strconv.ParseFloat(val, 64)
			if err != nil || !(k >= 1) || math.IsInf(k, 1) {
				return fail("kappa %q: want a finite number ≥ 1", val)
			}
			s.Kappa = k
		case "mode":
			s.Mode = strings.ToLower(val)
			if s.Mode != Geometric && s.Mode != OneSmall {
				return fail("unknown mode %q: %s, %s", val, Geometric, OneSmall)
			}
		default:
			return fail("unknown option %q: randsvd takes kappa, mode", key)
		}
	}
	return s, nil
}

// normalized fills in the defaults a hand-built spec may leave zero.
func (s MatrixSpec) normalized() MatrixSpec {
	s.Kind, s.Mode = strings.ToLower(s.Kind), strings.ToLower(s.Mode)
	if s.Kind == "randsvd" {
		if s.Kappa == 0 {
			s.Kappa = DefaultKappa
		}
		if s.Mode == "" {
			s.Mode = Geometric
		}
	}
	return s
}

// check says what ParseMatrix would reject in a normalized spec.
func (s MatrixSpec) check() error {
	switch s.Kind {
	case "uniform", "centered", "normal", "diagdom":
		if s.Kappa != 0 || s.Mode != "" {
			return fmt.Errorf("matrix %s takes no kappa or mode", s.Kind)
		}
	case "randsvd":
		if !(s.Kappa >= 1) || math.IsInf(s.Kappa, 1) {
			return fmt.Errorf("randsvd kappa %v: want a finite number ≥ 1", s.Kappa)
		}
		if s.Mode != Geometric && s.Mode != OneSmall {
			return fmt.Errorf("randsvd mode %q: want %s or %s", s.Mode, Geometric, OneSmall)
		}
	default:
		return fmt.Errorf("unknown matrix kind %q: %s", s.Kind, matrixKindNames())
	}
	return nil
}

// String is the canonical spec, with randsvd's defaults written out, so
// that it can label results and ParseMatrix reads it back.
func (s MatrixSpec) String() string {
	s = s.normalized()
	var opts []string
	if s.Kappa != 0 {
		opts = append(opts, "kappa="+formatKappa(s.Kappa))
	}
	if s.Mode != "" {
		opts = append(opts, "mode="+s.Mode)
	}
	if len(opts) == 0 {
		return s.Kind
	}
	return s.Kind + ":" + strings.Join(opts, ",")
}

// formatKappa writes the shortest text that reads back exactly, with
// exponents as people type them: 1e6, not 1e+06.
func formatKappa(k float64) string {
	t := strconv.FormatFloat(k, 'g', -1, 64)
	mant, exp, ok := strings.Cut(t, "e")
	if !ok {
		return t
	}
	sign := ""
	if strings.HasPrefix(exp, "-") {
		sign = "-"
	}
	return mant + "e" + sign + strings.TrimLeft(exp, "+-0")
}

// Generate returns an n×n row-major matrix of the family, drawn from
// seed and key. The counter kinds (uniform, centered, normal, diagdom)
// are matgen.Generate(kind, n, matgen.Seed(seed, key)), the matrix the
// GPU draws with dense.Solver.GenerateSystem(n, kind, matgen.Seed(seed,
// key)); randsvd is the CPU's own (matgen's doc says how the GPU's
// differs). It is deterministic whatever GOMAXPROCS is (on one
// architecture: Go may fuse multiply-adds in randsvd on some).
// n ≤ 0 gives an empty slice; callers validate n. An invalid spec (one
// ParseMatrix would reject) panics.
//
// randsvd costs about 8n³/3 flops, split over GOMAXPROCS goroutines:
// n = 512 takes 0.06 s and n = 1024 0.34 s on two AMD EPYC cores (0.35
// to 0.55 s on one: the trailing block streams through the cache). Its
// singular values are σ to about √n·u absolutely (u = 2⁻⁵³), so κ_2 of
// the stored matrix is κ to a relative √n·u·κ or better: at n = 50, 3e−13
// for κ = 1e4 and 4e−5 for κ = 1e12; beyond κ ≈ 1e15 σ_n is mostly
// rounding.
func (s MatrixSpec) Generate(seed uint64, key string, n int) []float64 {
	s = s.normalized()
	if err := s.check(); err != nil {
		panic("experiment: " + err.Error())
	}
	if n <= 0 {
		return []float64{}
	}
	if s.Kind != "randsvd" {
		a, err := matgen.Generate(s.Kind, n, matgen.Seed(seed, key))
		if err != nil {
			panic("experiment: " + err.Error()) // check knows the kinds
		}
		return a
	}
	a := make([]float64, n*n)
	randsvd(keyedRand(seed, key), a, s.Sigmas(n))
	return a
}

// Sigmas returns randsvd's singular values for order n (matgen.Sigmas),
// σ_1 = 1 ≥ … ≥ σ_n = 1/κ, geometric or one-small as the spec's Mode
// says. A 1×1 matrix has κ = 1 whatever the spec asks.
func (s MatrixSpec) Sigmas(n int) []float64 {
	s = s.normalized()
	return matgen.Sigmas(n, s.Kappa, s.Mode)
}

// RandomVector returns n entries uniform in (−0.5, 0.5], for right-hand
// sides and true solutions. Its stream is derived from (seed, key) but is
// not Generate's, so a vector may share its matrix's key; n ≤ 0 gives an
// empty slice.
func RandomVector(seed uint64, key string, n int) []float64 {
	if n <= 0 {
		return []float64{}
	}
	x := make([]float64, n)
	Centered.Fill(keyedRand(seed, key+"\x00vector"), x)
	return x
}

// keyedRand seeds a generator with seed and the FNV-1a hash of key, as
// Dist.Matrices does.
func keyedRand(seed uint64, key string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(key))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// randsvd sets the zero n×n matrix a to U·diag(sigma)·Vᵀ with U and V
// Haar-distributed orthogonal matrices, each the product D·H_1⋯H_{n−1} of
// Stewart (SIAM J. Numer. Anal. 17(3), 1980), as LAPACK's dlaror builds
// it: H_k is the Householder reflector, acting on indices k…n, that takes
// a standard normal vector x to −sign(x_k)‖x‖e_k, and D the signs
// −sign(x_k) and one random sign; without D, U would not be Haar (its
// determinant would be fixed).
//
// A = D_U H_1⋯H_{n−1} Σ G_{n−1}⋯G_1 D_V is built from the inside out,
// as LAPACK's dlagge does: step k applies H_k on the left and G_k on the
// right, and rows and columns before k are still those of Σ, so each step
// touches only the trailing (n−k+1)² block.
func randsvd(r *rand.Rand, a, sigma []float64) {
	n := len(sigma)
	for i, s := range sigma {
		a[i*n+i] = s
	}
	du, dv := make([]float64, n), make([]float64, n)
	x, y := make([]float64, n), make([]float64, n)
	var blk blockUpdate
	for k := n - 2; k >= 0; k-- {
		m := n - k
		fx := reflector(r, x[:m], &du[k])
		fy := reflector(r, y[:m], &dv[k])
		blk.apply(a, n, k, x[:m], fx, y[:m], fy)
	}
	du[n-1] = math.Copysign(1, r.NormFloat64())
	dv[n-1] = math.Copysign(1, r.NormFloat64())
	for i := 0; i < n; i++ {
		row := a[i*n : (i+1)*n]
		for j := range row {
			row[j] *= du[i] * dv[j]
		}
	}
}

// reflector fills v with a standard normal vector x and turns it into the
// Householder vector of H = I − f·v·vᵀ, Hx = −s·e_1 with s = sign(x_1)‖x‖;
// it returns f = 2/(vᵀv) and sets *d to Stewart's sign −sign(x_1).
func reflector(r *rand.Rand, v []float64, d *float64) float64 {
	norm := 0.0
	for i := range v {
		v[i] = r.NormFloat64()
		norm += v[i] * v[i]
	}
	norm = math.Sqrt(norm)
	*d = -math.Copysign(1, v[0])
	if norm == 0 { // probability zero; H = I keeps it orthogonal
		return 0
	}
	s := math.Copysign(norm, v[0])
	f := 1 / (s * (s + v[0])) // vᵀv = 2s(s + x_1), both terms of one sign
	v[0] += s
	return f
}

// rowChunk is the rows per partial sum of vᵀB. Fixed, not per goroutine,
// so that the sums, and the matrix, do not depend on GOMAXPROCS.
const rowChunk = 32

// blockUpdate applies one step's reflectors, keeping the partial sums'
// buffers between steps.
type blockUpdate struct {
	part, w []float64
}

// apply sets B ← (I − fx·x·xᵀ)·B·(I − fy·y·yᵀ) for the trailing block B =
// a[k:n, k:n], in two passes over B: each row is multiplied by the right
// reflector and its share of xᵀB summed by chunks; then the chunks' sums
// are added in order and the rank-1 left update applied.
func (u *blockUpdate) apply(a []float64, n, k int, x []float64, fx float64, y []float64, fy float64) {
	m := n - k
	chunks := (m + rowChunk - 1) / rowChunk
	if cap(u.part) < chunks*m {
		u.part, u.w = make([]float64, chunks*m), make([]float64, m)
	}
	part, w := u.part[:chunks*m], u.w[:m]
	row := func(i int) []float64 { return a[(k+i)*n+k : (k+i+1)*n] }
	parallel(m, chunks, func(c0, c1 int) {
		for c := c0; c < c1; c++ {
			p := part[c*m : (c+1)*m]
			clear(p)
			for i := c * rowChunk; i < min((c+1)*rowChunk, m); i++ {
				rightAndSum(row(i), y, fy, x[i], p)
			}
		}
	})
	copy(w, part[:m])
	for c := 1; c < chunks; c++ {
		axpy(1, part[c*m:(c+1)*m], w)
	}
	parallel(m, m, func(i0, i1 int) {
		for i := i0; i < i1; i++ {
			axpy(-fx*x[i], w, row(i))
		}
	})
}

// parallel runs f over [0, items) split into contiguous ranges, one per
// goroutine up to GOMAXPROCS; blocks under 128 rows stay on the caller's,
// where goroutines would cost more than they save.
func parallel(m, items int, f func(lo, hi int)) {
	g := min(runtime.GOMAXPROCS(0), items)
	if m < 128 || g <= 1 {
		f(0, items)
		return
	}
	var wg sync.WaitGroup
	for t := range g {
		wg.Go(func() { f(t*items/g, (t+1)*items/g) })
	}
	wg.Wait()
}

// rightAndSum sets b ← b − fy·(b·y)·yᵀ and adds xi·b to p: one row's right
// reflector and its term of xᵀB, while the row is in cache.
func rightAndSum(b, y []float64, fy, xi float64, p []float64) {
	y, p = y[:len(b)], p[:len(b)]
	c := fy * dot(b, y)
	for j := range b {
		t := b[j] - c*y[j]
		b[j] = t
		p[j] += xi * t
	}
}

// axpy sets y ← y + alpha·x.
func axpy(alpha float64, x, y []float64) {
	y = y[:len(x)]
	for j := range x {
		y[j] += alpha * x[j]
	}
}

// dot is xᵀy with four sums, which hide the latency of the adds.
func dot(x, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	for len(x) >= 4 {
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
		x, y = x[4:], y[4:]
	}
	for i := range x {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// DominantMatrix returns the n×n diagonally dominant matrix of Lopez and
// Mary's tests of LU on tensor cores (their public code, flipflapflop/
// remifa): entries uniform in (lo, hi] off the diagonal and a_ii = n.
// With |lo|, |hi| ≤ 1 each row and column sums to below n off the
// diagonal, so elimination without pivoting is stable (the multipliers
// stay below 1 and the growth factor below 2).
func DominantMatrix(seed uint64, key string, n int, lo, hi float64) []float64 {
	r := keyedRand(seed, key)
	a := make([]float64, n*n)
	for i := range a {
		a[i] = hi - (hi-lo)*r.Float64()
	}
	for i := 0; i < n; i++ {
		a[i*n+i] = float64(n)
	}
	return a
}

// SPDMatrix returns Q·diag(σ)·Qᵀ with σ_i = 10^(−c·i/(n−1)), i = 0…n−1,
// and Q a Haar-distributed orthogonal matrix (Stewart's reflectors, as
// randsvd's U): symmetric positive definite with κ₂ = 10^c, the second
// class of Lopez and Mary's tests; it needs no pivoting. The result is
// symmetrised, (A + Aᵀ)/2, so that rounding leaves it exactly symmetric.
func SPDMatrix(seed uint64, key string, n int, c float64) []float64 {
	if n <= 0 {
		return []float64{}
	}
	a := make([]float64, n*n)
	sigma := matgen.Sigmas(n, math.Pow(10, c), Geometric)
	r := keyedRand(seed, key)
	for i, s := range sigma {
		a[i*n+i] = s
	}
	d, x := make([]float64, n), make([]float64, n)
	var blk blockUpdate
	for k := n - 2; k >= 0; k-- {
		m := n - k
		f := reflector(r, x[:m], &d[k])
		blk.apply(a, n, k, x[:m], f, x[:m], f)
	}
	d[n-1] = math.Copysign(1, r.NormFloat64())
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			v := (a[i*n+j] + a[j*n+i]) / 2 * d[i] * d[j]
			a[i*n+j], a[j*n+i] = v, v
		}
	}
	return a
}
