package experiment

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// A Dist is a distribution of random matrix entries.
type Dist struct {
	Name  string // as typed: uniform, centered, normal, logu
	Label string // as the papers write it
	draw  func(r *rand.Rand) float64
}

// The distributions of the papers' experiments.
var (
	// Uniform is uniform in (0, 1]: data of one sign, where round-toward-zero
	// errors add up (section 4.2 of Fasi et al.).
	Uniform = Dist{"uniform", "(0,1]", func(r *rand.Rand) float64 { return 1 - r.Float64() }}
	// Centered is uniform in (−0.5, 0.5]: zero mean, errors cancel.
	Centered = Dist{"centered", "(-0.5,0.5]", func(r *rand.Rand) float64 { return 0.5 - r.Float64() }}
	// Normal is the standard normal distribution.
	Normal = Dist{"normal", "N(0,1)", func(r *rand.Rand) float64 { return r.NormFloat64() }}
	// LogUniform has magnitudes log-uniform in [1e−10, 1e10] and random
	// signs: the narrow-range experiments of Mary and Mikaitis.
	LogUniform = Dist{"logu", "±[1e-10,1e10]", func(r *rand.Rand) float64 {
		return math.Pow(10, 20*r.Float64()-10) * float64(1-2*r.IntN(2))
	}}
)

// logUniform is logu:e, magnitudes log-uniform in [10^-e, 10^e].
func logUniform(e float64) Dist {
	t := strconv.FormatFloat(e, 'g', -1, 64)
	return Dist{"logu:" + t, "±[1e-" + t + ",1e" + t + "]", func(r *rand.Rand) float64 {
		return math.Pow(10, e*(2*r.Float64()-1)) * float64(1-2*r.IntN(2))
	}}
}

// Dists lists the distributions ParseDist knows.
func Dists() []Dist { return []Dist{Uniform, Centered, Normal, LogUniform} }

// ParseDist returns the distribution of that name.
//
// logu:E is log-uniform magnitudes in [1e-E, 1eE] with random signs (E > 0
// up to 300); logu alone is logu:10, the same data in every command.
func ParseDist(name string) (Dist, error) {
	if rest, ok := strings.CutPrefix(strings.ToLower(strings.TrimSpace(name)), "logu:"); ok {
		e, err := strconv.ParseFloat(rest, 64)
		if err != nil || !(e > 0 && e <= 300) {
			return Dist{}, fmt.Errorf("distribution %q: logu:E wants a number 0 < E ≤ 300 (magnitudes in [1e-E, 1eE])", name)
		}
		if e == 10 {
			return LogUniform, nil
		}
		return logUniform(e), nil
	}
	var names []string
	for _, d := range Dists() {
		if strings.EqualFold(d.Name, strings.TrimSpace(name)) {
			return d, nil
		}
		names = append(names, d.Name)
	}
	return Dist{}, fmt.Errorf("unknown distribution %q: %s or logu:E", name, strings.Join(names, ", "))
}

// Fill sets every element of x to a draw.
func (d Dist) Fill(r *rand.Rand, x []float64) {
	for i := range x {
		x[i] = d.draw(r)
	}
}

// Matrices returns A (m×k) and B (k×n), row-major, drawn from d with a
// generator seeded by seed and key: every series of a panel at one size
// multiplies the same matrices, whichever worker computes it.
func (d Dist) Matrices(seed uint64, key string, m, k, n int) (a, b []float64) {
	h := fnv.New64a()
	h.Write([]byte(key))
	r := rand.New(rand.NewPCG(seed, h.Sum64()))
	a, b = make([]float64, m*k), make([]float64, k*n)
	d.Fill(r, a)
	d.Fill(r, b)
	return a, b
}

// InfNormError is ‖Ĉ − C‖∞ / (‖A‖∞‖B‖∞), the normwise error of the
// narrow-range experiments, with C the float64 product.
func InfNormError(m, n, k int, a, b, c []float64) float64 {
	rowMax := func(x []float64, rows, cols int) float64 {
		best := 0.0
		for i := 0; i < rows; i++ {
			s := 0.0
			for _, v := range x[i*cols : (i+1)*cols] {
				s += math.Abs(v)
			}
			best = math.Max(best, s)
		}
		return best
	}
	diff := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for l := 0; l < k; l++ {
				s += a[i*k+l] * b[l*n+j]
			}
			diff[i*n+j] = s - c[i*n+j]
		}
	}
	return rowMax(diff, m, n) / (rowMax(a, m, k) * rowMax(b, k, n))
}
