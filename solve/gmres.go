package solve

import (
	"context"
	"fmt"
	"math"
)

// gmres solves M⁻¹A·d = z (z = M⁻¹r, already preconditioned) from d = 0
// by GMRES without restarts, in fp64: Arnoldi with modified
// Gram–Schmidt, the least-squares problem by Givens rotations. It stops
// when the preconditioned residual is ≤ tol·‖z‖₂, after maxIt iterations,
// or at a breakdown (the Krylov space holds the solution). It returns d,
// the iterations and the final relative residual.
func gmres(ctx context.Context, n int, a Operator, fa Factorization, z []float64, tol float64, maxIt int) ([]float64, int, float64, error) {
	beta := norm2(z)
	d := make([]float64, n)
	if beta == 0 {
		return d, 0, 0, nil
	}
	m := min(maxIt, n)
	v := make([][]float64, 1, m+1)
	v[0] = scaled(z, 1/beta)
	h := make([][]float64, m) // h[j] is column j of the Hessenberg matrix, j+2 entries
	cs, sn := make([]float64, m), make([]float64, m)
	g := make([]float64, m+1)
	g[0] = beta
	w := make([]float64, n)
	k := 0
	res := 1.0
	for k < m {
		if k%16 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, k, res, err
			}
		}
		if err := a.MulVec(v[k], w); err != nil {
			return nil, k, res, err
		}
		if err := fa.Solve(w); err != nil {
			return nil, k, res, err
		}
		col := make([]float64, k+2)
		for i := 0; i <= k; i++ {
			col[i] = dot(w, v[i])
			axpy(-col[i], v[i], w)
		}
		col[k+1] = norm2(w)
		for i := 0; i < k; i++ {
			col[i], col[i+1] = cs[i]*col[i]+sn[i]*col[i+1], -sn[i]*col[i]+cs[i]*col[i+1]
		}
		r := math.Hypot(col[k], col[k+1])
		if r == 0 {
			return nil, k, res, gmresFailure(fmt.Sprintf("GMRES broke down at iteration %d (the preconditioned matrix is singular)", k+1))
		}
		hn := col[k+1]
		cs[k], sn[k] = col[k]/r, hn/r
		col[k], col[k+1] = r, 0
		g[k], g[k+1] = cs[k]*g[k], -sn[k]*g[k]
		h[k] = col
		k++
		res = math.Abs(g[k]) / beta
		if math.IsNaN(res) {
			return nil, k, res, gmresFailure(fmt.Sprintf("GMRES residual is NaN at iteration %d (the preconditioner overflowed)", k))
		}
		if res <= tol || hn == 0 {
			break
		}
		v = append(v, scaled(w, 1/hn))
	}
	// Undo the rotations' triangular system: R·y = g.
	y := make([]float64, k)
	for i := k - 1; i >= 0; i-- {
		s := g[i]
		for j := i + 1; j < k; j++ {
			s -= h[j][i] * y[j]
		}
		y[i] = s / h[i][i]
	}
	for j := 0; j < k; j++ {
		axpy(y[j], v[j], d)
	}
	return d, k, res, nil
}

// A gmresFailure is GMRES failing on the numbers, not on the device: the
// refinement stops there and returns its best iterate, not converged.
type gmresFailure string

func (f gmresFailure) Error() string { return "solve: " + string(f) }

func dot(x, y []float64) float64 {
	s := 0.0
	for i, v := range x {
		s += v * y[i]
	}
	return s
}

func axpy(alpha float64, x, y []float64) {
	for i, v := range x {
		y[i] += alpha * v
	}
}

func norm2(x []float64) float64 {
	scale, ssq := 0.0, 1.0
	for _, v := range x {
		if v == 0 {
			continue
		}
		av := math.Abs(v)
		if scale < av {
			ssq = 1 + ssq*(scale/av)*(scale/av)
			scale = av
		} else {
			ssq += (av / scale) * (av / scale)
		}
	}
	return scale * math.Sqrt(ssq)
}

func scaled(x []float64, s float64) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = v * s
	}
	return y
}
