package multiword

import "math"

// Errors are the error metrics of a computed product Ĉ against the float64
// product C of A (m×k) and B (k×n), row-major: the componentwise relative
// error max_ij |C − Ĉ|_ij / (|A||B|)_ij of eq. (3.1) of Fasi et al. (an
// element with (|A||B|)_ij = 0 must be exact and counts as +Inf otherwise),
// and the normwise ‖C − Ĉ‖_F / ‖C‖_F. C and |A||B| in float64 err by about
// k·2^-53 relative: far below any multiword error from fp32 down.
func Errors(m, n, k int, a, b, c []float64) (componentwise, normwise float64) {
	var num, den float64
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s, abs := 0.0, 0.0
			for l := 0; l < k; l++ {
				t := a[i*k+l] * b[l*n+j]
				s += t
				abs += math.Abs(t)
			}
			d := math.Abs(s - c[i*n+j])
			num += d * d
			den += s * s
			switch {
			case d == 0:
			case abs == 0 || math.IsNaN(d):
				componentwise = math.Inf(1)
			default:
				componentwise = max(componentwise, d/abs)
			}
		}
	}
	return componentwise, math.Sqrt(num) / math.Sqrt(den)
}
