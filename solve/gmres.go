package solve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// A KrylovBasis holds GMRES's orthonormal basis v₀, v₁, … of the Krylov
// space of the preconditioned matrix M⁻¹A where A and the factors live:
// the host for a *lu.Factors, the device for gpu.Factors, so that GMRES's
// n-vectors never cross to the host. GMRES itself (the Hessenberg matrix,
// its Givens rotations, the stopping test) stays here, in one place.
type KrylovBasis interface {
	// Expand computes w = M⁻¹A·v_k, orthogonalises it against v₀…v_k,
	// and, when ‖w‖₂ ≠ 0, stores v_{k+1} = w/‖w‖₂. It writes the k+1
	// coefficients to h[:k+1] and ‖w‖₂ to h[k+1].
	Expand(k int, h []float64) error
	// Combine writes Σ y_j·v_j, j < len(y), to d.
	Combine(y, d []float64) error
	Free() error
}

// A KrylovFactorization can hold GMRES's basis itself. NewKrylovBasis
// returns nil (and no error) for an operator it cannot pair with; GMRES
// then keeps the basis on the host. v0 is the unit first vector; size
// bounds the iterations, so the basis holds up to size+1 vectors.
type KrylovFactorization interface {
	Factorization
	NewKrylovBasis(a Operator, v0 []float64, size int) (KrylovBasis, error)
}

// hostBasis is the basis in host memory: products with A and solves with
// the factors through their interfaces (in double-word arithmetic when dw
// is set), modified Gram–Schmidt.
type hostBasis struct {
	a  Operator
	fa Factorization
	dw bool
	v  [][]float64
}

func (b *hostBasis) Expand(k int, h []float64) error {
	w := make([]float64, len(b.v[k]))
	if err := preconditioned(b.a, b.fa, b.dw, b.v[k], w); err != nil {
		return err
	}
	for i := 0; i <= k; i++ {
		h[i] = dot(w, b.v[i])
		axpy(-h[i], b.v[i], w)
	}
	h[k+1] = norm2(w)
	if h[k+1] != 0 {
		s := 1 / h[k+1]
		for i := range w {
			w[i] *= s
		}
		b.v = append(b.v, w)
	}
	return nil
}

func (b *hostBasis) Combine(y, d []float64) error {
	clear(d)
	for j, c := range y {
		axpy(c, b.v[j], d)
	}
	return nil
}

func (b *hostBasis) Free() error { return nil }

// preconditioned sets w = Û⁻¹L̂⁻¹P·A·v: in fp64, or with dw in
// double-word arithmetic (A dense, the factors a DoubleWordFactorization;
// Options.check made sure), rounded to fp64 at the end.
func preconditioned(a Operator, fa Factorization, dw bool, v, w []float64) error {
	if !dw {
		if err := a.MulVec(v, w); err != nil {
			return err
		}
		return fa.Solve(w)
	}
	d := a.(dense)
	lo := make([]float64, d.n)
	for i := 0; i < d.n; i++ {
		w[i], lo[i] = dotDW(d.a[i*d.n:(i+1)*d.n], v)
	}
	return solveDW(fa, w, lo)
}

// solveDW overwrites w with Û⁻¹L̂⁻¹P·(w + lo) in double-word arithmetic,
// rounded to fp64.
func solveDW(fa Factorization, w, lo []float64) error {
	if err := fa.(DoubleWordFactorization).SolveDoubleWord(w, lo); err != nil {
		return err
	}
	for i := range w {
		w[i] += lo[i]
	}
	return nil
}

// dotDW is x·y as a double-word (hi, lo): exact products by FMA summed
// with TwoSum, the residual's double-word arithmetic.
func dotDW(x, y []float64) (float64, float64) {
	var hi, lo float64
	for j, v := range x {
		p := float64(v * y[j]) // converted: TwoSum needs the rounded product
		e := math.FMA(v, y[j], -p)
		s := hi + p
		bb := s - hi
		lo += (hi - (s - bb)) + (p - bb) + e
		hi = s
	}
	s := hi + lo // TwoSum: lo may outweigh hi after cancellation
	bb := s - hi
	return s, (hi - (s - bb)) + (lo - bb)
}

// newBasis gives the factorization's own basis when it has one for a (and
// the products are in fp64), else a host basis.
func newBasis(a Operator, fa Factorization, dw bool, v0 []float64, size int) (KrylovBasis, error) {
	if kf, ok := fa.(KrylovFactorization); ok && !dw {
		b, err := kf.NewKrylovBasis(a, v0, size)
		if err != nil || b != nil {
			return b, err
		}
	}
	return &hostBasis{a: a, fa: fa, dw: dw, v: [][]float64{v0}}, nil
}

// gmres solves M⁻¹A·d = z (z = M⁻¹r, already preconditioned) from d = 0
// by GMRES without restarts, in fp64 but for the products with M⁻¹A
// (opt.Precond): Arnoldi on the factorization's basis (newBasis), the
// least-squares problem by Givens rotations. It stops when the
// preconditioned residual is ≤ opt.GMRESTol·‖z‖₂, after opt.MaxInner
// iterations, or at a breakdown (the Krylov space holds the solution); past
// the deadline (when not zero) it fails as a gmresFailure. It returns d,
// the iterations and the final relative residual.
func gmres(ctx context.Context, n int, a Operator, fa Factorization, z []float64, opt Options, deadline time.Time) (_ []float64, _ int, _ float64, err error) {
	tol, budget := opt.GMRESTol, opt.TimeBudget
	beta := norm2(z)
	d := make([]float64, n)
	if beta == 0 {
		return d, 0, 0, nil
	}
	m := min(opt.MaxInner, n)
	basis, err := newBasis(a, fa, opt.Precond == DoubleWord, scaled(z, 1/beta), m)
	if err != nil {
		return nil, 0, 1, err
	}
	defer func() { err = errors.Join(err, basis.Free()) }()
	h := make([][]float64, m) // h[j] is column j of the Hessenberg matrix, j+2 entries
	cs, sn := make([]float64, m), make([]float64, m)
	g := make([]float64, m+1)
	g[0] = beta
	k := 0
	res := 1.0
	for k < m {
		if k%16 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, k, res, err
			}
		}
		col := make([]float64, k+2)
		if err := basis.Expand(k, col); err != nil {
			return nil, k, res, err
		}
		hn := col[k+1]
		for i := 0; i < k; i++ {
			col[i], col[i+1] = cs[i]*col[i]+sn[i]*col[i+1], -sn[i]*col[i]+cs[i]*col[i+1]
		}
		r := math.Hypot(col[k], col[k+1])
		if r == 0 {
			return nil, k, res, gmresFailure(fmt.Sprintf("GMRES broke down at iteration %d (the preconditioned matrix is singular)", k+1))
		}
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
		if !deadline.IsZero() && time.Now().After(deadline) {
			return nil, k, res, gmresFailure(fmt.Sprintf("%s after %d GMRES iterations of this step", budgetSpent(budget), k))
		}
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
	if err := basis.Combine(y, d); err != nil {
		return nil, k, res, err
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
