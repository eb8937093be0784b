package experiment

import (
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mwmm/mwmm/matgen"
)

// A MatrixSpec names a family of square test matrices for linear systems.
// ParseMatrix builds one from text; a hand-built spec may leave Kappa,
// Mode and Scale zero for their defaults.
type MatrixSpec struct {
	Kind string // "uniform", "centered", "normal", "diagdom", "hpl-mxp", "fasi-higham", "randsvd"
	// Kappa is randsvd's 2-norm condition number κ ≥ 1, or fasi-higham's
	// ∞-norm one κ > 1; 0 means DefaultKappa.
	Kappa float64
	Mode  string // randsvd: "geometric" or "one-small"; "" means geometric
	// Scale is hpl-mxp's S > 0, a_ii = S·Σ_{j≠i}|a_ij| (0 means 1), or
	// fasi-higham's D ≥ 0, the decades of its random scalings (0: none).
	Scale float64
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

// matrixOptions are the options each kind takes, and what each value
// must be.
var matrixOptions = map[string]map[string]string{
	"randsvd":     {"kappa": "a finite number ≥ 1", "mode": Geometric + ", " + OneSmall},
	"hpl-mxp":     {"scale": "a finite number > 0"},
	"fasi-higham": {"kappa": "a finite number > 1", "scale": fmt.Sprintf("a number of decades in [0, %d]", matgen.MaxDecades)},
}

// ParseMatrix reads "KIND[:key=value,...]", case-insensitive. randsvd
// takes kappa (a finite κ₂ ≥ 1) and mode; hpl-mxp scale (S > 0);
// fasi-higham kappa (a finite κ∞ > 1) and scale (D in [0, 100]).
func ParseMatrix(spec string) (MatrixSpec, error) {
	fail := func(format string, args ...any) (MatrixSpec, error) {
		return MatrixSpec{}, fmt.Errorf("matrix %q: %s", spec, fmt.Sprintf(format, args...))
	}
	kind, opts, hasOpts := strings.Cut(strings.TrimSpace(spec), ":")
	s := MatrixSpec{Kind: strings.ToLower(strings.TrimSpace(kind))}.normalized()
	if !slices.ContainsFunc(MatrixKinds(), func(k MatrixKind) bool { return k.Name == s.Kind }) {
		return fail("unknown kind %q: %s", s.Kind, matrixKindNames())
	}
	takes := matrixOptions[s.Kind]
	if hasOpts && takes == nil {
		return fail("%s takes no options (%s)", s.Kind, whoTakesOptions())
	}
	if !hasOpts {
		return s, nil
	}
	seen := map[string]bool{}
	for _, opt := range strings.Split(opts, ",") {
		key, val, ok := strings.Cut(opt, "=")
		key, val = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(val)
		if !ok || key == "" {
			return fail("option %q is not key=value (%s takes %s)", strings.TrimSpace(opt), s.Kind, optionNames(takes))
		}
		if seen[key] {
			return fail("%s given twice", key)
		}
		seen[key] = true
		want, known := takes[key]
		if !known {
			return fail("unknown option %q: %s takes %s", key, s.Kind, optionNames(takes))
		}
		if err := s.set(key, val); err != nil {
			if key == "mode" {
				return fail("unknown mode %q: %s", val, want)
			}
			return fail("%s %q: want %s", key, val, want)
		}
	}
	return s, nil
}

// set sets option key to the text val and checks the spec.
func (s *MatrixSpec) set(key, val string) error {
	if key == "mode" {
		s.Mode = strings.ToLower(val)
		return s.check()
	}
	v, err := strconv.ParseFloat(val, 64)
	if err != nil {
		return err
	}
	if key == "kappa" {
		s.Kappa = v
	} else {
		s.Scale = v
	}
	return s.check()
}

// optionNames lists a kind's options, sorted.
func optionNames(takes map[string]string) string {
	return strings.Join(slices.Sorted(maps.Keys(takes)), ", ")
}

// whoTakesOptions says which kinds take options.
func whoTakesOptions() string {
	var parts []string
	for _, k := range matgen.Kinds() {
		if k.Params != "" {
			parts = append(parts, k.Name+" takes "+optionNames(matrixOptions[k.Name]))
		}
	}
	return strings.Join(parts, "; ")
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
	if c, ok := s.CounterSpec(); ok {
		c = c.Normalized()
		s.Kappa, s.Scale = c.Kappa, c.Scale
	}
	return s
}

// CounterSpec returns the matgen spec of a counter kind (matgen.Generate
// draws it, and dense.Solver.GenerateSpec on the GPU), false for randsvd
// and unknown kinds.
func (s MatrixSpec) CounterSpec() (matgen.Spec, bool) {
	kind := strings.ToLower(s.Kind)
	if !slices.Contains(matgen.CounterKinds(), kind) {
		return matgen.Spec{}, false
	}
	return matgen.Spec{Kind: kind, Kappa: s.Kappa, Scale: s.Scale}, true
}

// check says what ParseMatrix would reject in a normalized spec.
func (s MatrixSpec) check() error {
	if c, ok := s.CounterSpec(); ok {
		if s.Mode != "" {
			return fmt.Errorf("matrix %s takes no mode", s.Kind)
		}
		if err := c.Check(); err != nil {
			return fmt.Errorf("matrix %s", strings.TrimPrefix(err.Error(), "matgen: "))
		}
		return nil
	}
	if s.Kind != "randsvd" {
		return fmt.Errorf("unknown matrix kind %q: %s", s.Kind, matrixKindNames())
	}
	if !(s.Kappa >= 1) || math.IsInf(s.Kappa, 1) {
		return fmt.Errorf("randsvd kappa %v: want a finite number ≥ 1", s.Kappa)
	}
	if s.Mode != Geometric && s.Mode != OneSmall {
		return fmt.Errorf("randsvd mode %q: want %s or %s", s.Mode, Geometric, OneSmall)
	}
	if s.Scale != 0 {
		return errors.New("randsvd takes no scale")
	}
	return nil
}

// String is the canonical spec, so that it can label results and
// ParseMatrix reads it back: randsvd's and fasi-higham's κ (and randsvd's
// mode) written out, a scale only where it is not the default (hpl-mxp's
// 1, fasi-higham's 0).
func (s MatrixSpec) String() string {
	s = s.normalized()
	var opts []string
	if s.Kappa != 0 {
		opts = append(opts, "kappa="+formatKappa(s.Kappa))
	}
	if s.Mode != "" {
		opts = append(opts, "mode="+s.Mode)
	}
	if s.Scale != 0 && !(s.Kind == "hpl-mxp" && s.Scale == 1) {
		opts = append(opts, "scale="+formatKappa(s.Scale))
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
// seed and key. The counter kinds (uniform, centered, normal, diagdom,
// hpl-mxp, fasi-higham) are c.Generate(n, matgen.Seed(seed, key)), c =
// s.CounterSpec(), the matrix the GPU draws with
// dense.Solver.GenerateSpec(n, c, matgen.Seed(seed, key)); randsvd is the CPU's own (matgen's doc says how the GPU's
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
	if c, ok := s.CounterSpec(); ok {
		a, err := c.Generate(n, matgen.Seed(seed, key))
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
