package dense

import (
	"fmt"
	"time"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/gpu/internal/cuda"
)

// BaselineResult is one cuSOLVER solve of A·x = b.
type BaselineResult struct {
	Method     string        // "getrf+getrs" or a gesv solver, e.g. "DHgesv"
	X          []float64     // the solution
	Iterations int           // of the gesv solvers; negative: it fell back to fp64
	Duration   time.Duration // on the device, from A in fp64 to x
}

// SolveBaselines lists the methods of Baseline.
var SolveBaselines = []string{"getrf+getrs", "DDgesv", "DSgesv", "DXgesv", "DHgesv", "DBgesv"}

// Baseline solves A·x = b with cuSOLVER: getrf and getrs in fp64, or one
// of its iterative-refinement solvers cusolverDn{DD,DS,DX,DH,DB}gesv
// (A copied first: they overwrite it).
func (s *System) Baseline(method string, b []float64) (BaselineResult, error) {
	res := BaselineResult{Method: method}
	e, n, d := s.e, s.n, s.e.d
	la, err := e.d.Linalg()
	if err != nil {
		return res, err
	}
	if len(b) != n {
		return res, fmt.Errorf("gpu: %d right-hand side entries for a system of order %d", len(b), n)
	}
	a, err := d.Alloc(8 * n * n)
	if err != nil {
		return res, err
	}
	defer a.Free()
	vec, err := d.Alloc(16*n + 4*n + 256)
	if err != nil {
		return res, err
	}
	defer vec.Free()
	bp, xp, ipiv := vec.Ptr(), vec.Ptr()+uintptr(8*n), vec.Ptr()+uintptr(16*n)
	info := ipiv + uintptr(4*n)
	if err := d.Upload(vec, b); err != nil {
		return res, err
	}
	gesv := -1
	for i, name := range cuda.GesvNames {
		if method == name+"gesv" {
			gesv = i
		}
	}
	if gesv < 0 && method != "getrf+getrs" {
		return res, fmt.Errorf("gpu: no cuSOLVER method %q; the methods are %v", method, SolveBaselines)
	}
	if err := d.Copy(a, s.a); err != nil {
		return res, err
	}
	var work *gpu.Buffer
	if gesv >= 0 {
		var bytes int
		if err := d.Do(func() error {
			var err error
			bytes, err = cuda.GesvBufferSize(gesv, la.Solver, n, a.Ptr(), ipiv, bp, xp)
			return err
		}); err != nil {
			return res, err
		}
		if work, err = d.Alloc(max(bytes, 256)); err != nil {
			return res, err
		}
		defer work.Free()
	}
	if err := d.Sync(); err != nil {
		return res, err
	}
	start := time.Now()
	if gesv >= 0 {
		err = d.Do(func() error {
			var err error
			res.Iterations, err = cuda.Gesv(gesv, la.Solver, n, a.Ptr(), ipiv, bp, xp, work.Ptr(), work.Bytes(), info)
			return err
		})
	} else {
		err = e.getrf(la, FP64, n, n, a.Ptr(), n, ipiv)
		if err == nil {
			err = d.Do(func() error { return cuda.Dgetrs(la.Solver, cuda.OpN, n, 1, a.Ptr(), n, ipiv, bp, n, info) })
		}
		xp = bp
	}
	if err == nil {
		err = d.Sync()
	}
	res.Duration = time.Since(start)
	if err != nil {
		return res, fmt.Errorf("gpu: cuSOLVER %s: %w", method, err)
	}
	var inf [1]int32
	if err := d.Download(inf[:], vec.View(int(info-vec.Ptr()))); err != nil {
		return res, err
	}
	if inf[0] != 0 {
		return res, fmt.Errorf("gpu: cuSOLVER %s: info = %d (a zero pivot, or the refinement failed)", method, inf[0])
	}
	res.X = make([]float64, n)
	return res, d.Download(res.X, vec.View(int(xp-vec.Ptr())))
}
