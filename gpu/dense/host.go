package dense

import (
	"errors"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/lu"
)

// Host copies the factors here as lu.Factors (row-major, 0-based pivots),
// for checks such as lu.Factors.Errors. Their Storage is the update's
// working precision: fp64 for cuSOLVER's dgetrf and the Ozaki forms,
// fp16 for the Half form (whose factors of R·A·C Host scales back to A's),
// fp32 for the others (A is rounded to fp32 first).
func (fa *Factors) Host() (*lu.Factors, error) {
	n, d := fa.s.n, fa.s.e.d
	if fa.bf != nil {
		return nil, errors.New("gpu: Host: these are the factors of the butterfly-transformed matrix M·A·Nᵀ, not of A")
	}
	cm := make([]float64, n*n)
	if fa.half {
		words := make([]uint16, n*n)
		if err := d.Download(words, fa.lu); err != nil {
			return nil, err
		}
		for i, w := range words {
			cm[i], _ = format.Binary16.Decode(uint64(w))
		}
	} else if err := d.Download(cm, fa.lu); err != nil {
		return nil, err
	}
	piv := make([]int32, n)
	if err := d.Download(piv, fa.ipiv); err != nil {
		return nil, err
	}
	if fa.rows != nil {
		r, c := make([]float64, n), make([]float64, n)
		if err := errors.Join(d.Download(r, fa.rows), d.Download(c, fa.cols)); err != nil {
			return nil, err
		}
		unscale(cm, r, c)
	}
	return fa.hostFactors(cm, piv), nil
}

// unscale turns the column-major factors L̂, Û of R·A·C (R, C diagonal
// powers of two) into A's: L = R⁻¹·L̂·R, U = R⁻¹·Û·C⁻¹, exactly.
func unscale(cm, r, c []float64) {
	n := len(r)
	for j := range n {
		for i := range n {
			if i > j {
				cm[i+j*n] *= r[j] / r[i]
			} else {
				cm[i+j*n] /= r[i] * c[j]
			}
		}
	}
}

// hostFactors is Host's lu.Factors from the column-major factors cm and
// the 1-based pivots piv.
func (fa *Factors) hostFactors(cm []float64, piv []int32) *lu.Factors {
	n := fa.s.n
	h := &lu.Factors{N: n, Form: fa.Form, Storage: format.Binary32, NB: fa.NB, LU: make([]float64, n*n), Piv: make([]int, n), Singular: -1, Duration: fa.Duration}
	// By the update, not the name: a caller may relabel the form.
	if fa.update != nil && fa.update.Working() == FP64 {
		h.Storage = format.Binary64
	}
	if fa.update != nil && fa.update.Working() == FP16 {
		h.Storage = format.Binary16
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			h.LU[i*n+j] = cm[i+j*n]
		}
		h.Piv[i] = int(piv[i]) - 1
	}
	return h
}
