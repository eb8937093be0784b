package dense

import (
	"fmt"
	"math"
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
	n, d := s.n, s.e.d
	la, err := d.Linalg()
	if err != nil {
		return res, err
	}
	if len(b) != n {
		return res, fmt.Errorf("gpu: %d right-hand side entries for a system of order %d", len(b), n)
	}
	if err := baselineFits(n); err != nil {
		return res, err
	}
	a, err := d.Alloc(8 * n * n)
	if err != nil {
		return res, err
	}
	defer a.Free()
	// b, x, the pivots and the info word.
	vec, err := d.Alloc(16*n + 4*n + 256)
	if err != nil {
		return res, err
	}
	defer vec.Free()
	bl := baselineRun{la: la, a: a, b: vec.Ptr(), x: vec.Ptr() + uintptr(8*n), ipiv: vec.Ptr() + uintptr(16*n), gesv: gesvIndex(method)}
	bl.info = bl.ipiv + uintptr(4*n)
	if err := d.Upload(vec, b); err != nil {
		return res, err
	}
	if bl.gesv < 0 && method != "getrf+getrs" {
		return res, fmt.Errorf("gpu: no cuSOLVER method %q; the methods are %v", method, SolveBaselines)
	}
	if err := d.Copy(a, s.a); err != nil {
		return res, err
	}
	if err := s.gesvWork(&bl); err != nil {
		return res, err
	}
	defer bl.work.Free()
	if err := d.Sync(); err != nil {
		return res, err
	}
	start := time.Now()
	err = s.runBaseline(&bl, &res)
	res.Duration = time.Since(start)
	if err != nil {
		return res, fmt.Errorf("gpu: cuSOLVER %s: %w", method, err)
	}
	var inf [1]int32
	if err := d.Download(inf[:], vec.View(int(bl.info-vec.Ptr()))); err != nil {
		return res, err
	}
	if inf[0] != 0 {
		return res, fmt.Errorf("gpu: cuSOLVER %s: info = %d (a zero pivot, or the refinement failed)", method, inf[0])
	}
	res.X = make([]float64, n)
	return res, d.Download(res.X, vec.View(int(bl.x-vec.Ptr())))
}

// baselineFits refuses orders past cuSOLVER's 32-bit API (getrf, getrs,
// the *gesv solvers), which indexes A with 32-bit integers: at n = 65536
// (2^32 entries) its getrf ran into an illegal address on an H200, an
// error that ends every later call in the process.
func baselineFits(n int) error {
	if int64(n)*int64(n) > math.MaxInt32 {
		return fmt.Errorf("gpu: cuSOLVER's 32-bit solvers index at most 2^31−1 entries; n = %d has %d", n, int64(n)*int64(n))
	}
	return nil
}

// baselineRun is one Baseline's operands on the device.
type baselineRun struct {
	la               *gpu.Linalg
	a, work          *gpu.Buffer // work: gesv's, nil for getrf+getrs
	b, x, ipiv, info uintptr
	gesv             int // cuda.GesvNames' index; −1: getrf+getrs
}

// gesvIndex is the index in cuda.GesvNames of a gesv method, or −1.
func gesvIndex(method string) int {
	gesv := -1
	for i, name := range cuda.GesvNames {
		if method == name+"gesv" {
			gesv = i
		}
	}
	return gesv
}

// gesvWork allocates a gesv solver's work space.
func (s *System) gesvWork(bl *baselineRun) error {
	if bl.gesv < 0 {
		return nil
	}
	d, n := s.e.d, s.n
	var bytes int
	if err := d.Do(func() error {
		var err error
		bytes, err = cuda.GesvBufferSize(bl.gesv, bl.la.Solver, n, bl.a.Ptr(), bl.ipiv, bl.b, bl.x)
		return err
	}); err != nil {
		return err
	}
	var err error
	bl.work, err = d.Alloc(max(bytes, 256))
	return err
}

// runBaseline solves, the time's part: x (getrf+getrs: in place of b)
// and the iterations in res.
func (s *System) runBaseline(bl *baselineRun, res *BaselineResult) error {
	d, n, la := s.e.d, s.n, bl.la
	var err error
	if bl.gesv >= 0 {
		err = d.Do(func() error {
			var err error
			res.Iterations, err = cuda.Gesv(bl.gesv, la.Solver, n, bl.a.Ptr(), bl.ipiv, bl.b, bl.x, bl.work.Ptr(), bl.work.Bytes(), bl.info)
			return err
		})
	} else {
		err = s.e.getrf(la, FP64, n, n, bl.a.Ptr(), n, bl.ipiv)
		if err == nil {
			err = d.Do(func() error { return cuda.Dgetrs(la.Solver, cuda.OpN, n, 1, bl.a.Ptr(), n, bl.ipiv, bl.b, n, bl.info) })
		}
		bl.x = bl.b
	}
	if err == nil {
		err = d.Sync()
	}
	return err
}
