package cuda

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ebitengine/purego"
)

// MgFile is cuSOLVERMg's soname: cuSOLVER's LU and solves over the GPUs
// of one process, the baseline of mwmm's own on several GPUs.
const MgFile = "libcusolverMg.so.12"

// ErrNoCusolverMg is wrapped by the error of a machine without it.
var ErrNoCusolverMg = errors.New("no cuSOLVERMg found")

const (
	mgGridColMajor = 0 // CUDALIBMG_GRID_MAPPING_COL_MAJOR
	dataR64F       = 1 // CUDA_R_64F
)

var mg struct {
	cusolverMgCreate            func(h *uintptr) result
	cusolverMgDestroy           func(h uintptr) result
	cusolverMgDeviceSelect      func(h uintptr, n int32, ids *int32) result
	cusolverMgCreateDeviceGrid  func(g *uintptr, rows, cols int32, ids *int32, mapping int32) result
	cusolverMgDestroyGrid       func(g uintptr) result
	cusolverMgCreateMatrixDesc  func(d *uintptr, rows, cols, rowBlock, colBlock int64, dtype int32, grid uintptr) result
	cusolverMgDestroyMatrixDesc func(d uintptr) result
	cusolverMgGetrf_bufferSize  func(h uintptr, m, n int32, a *uintptr, ia, ja int32, desc uintptr, ipiv *uintptr, compute int32, lwork *int64) result
	cusolverMgGetrf             func(h uintptr, m, n int32, a *uintptr, ia, ja int32, desc uintptr, ipiv *uintptr, compute int32, work *uintptr, lwork int64, info *int32) result
	cusolverMgGetrs_bufferSize  func(h uintptr, trans, n, nrhs int32, a *uintptr, ia, ja int32, descA uintptr, ipiv *uintptr, b *uintptr, ib, jb int32, descB uintptr, compute int32, lwork *int64) result
	cusolverMgGetrs             func(h uintptr, trans, n, nrhs int32, a *uintptr, ia, ja int32, descA uintptr, ipiv *uintptr, b *uintptr, ib, jb int32, descB uintptr, compute int32, work *uintptr, lwork int64, info *int32) result
}

var (
	mgOnce sync.Once
	mgErr  error
)

// LoadCusolverMg loads libcusolverMg.so.12, once.
func LoadCusolverMg() error {
	mgOnce.Do(func() { mgErr = loadCusolverMg() })
	return mgErr
}

func loadCusolverMg() error {
	if err := LoadCusolver(); err != nil {
		return err
	}
	h, _, err := open(MgFile, purego.RTLD_NOW|purego.RTLD_LOCAL, ErrNoCusolverMg, "install the CUDA toolkit's cuSOLVER (libcusolver-13-0), which ships cuSOLVERMg")
	if err != nil {
		return err
	}
	m := &mg
	return bind(MgFile, h, []binding{
		fn(&m.cusolverMgCreate, "cusolverMgCreate"),
		fn(&m.cusolverMgDestroy, "cusolverMgDestroy"),
		fn(&m.cusolverMgDeviceSelect, "cusolverMgDeviceSelect"),
		fn(&m.cusolverMgCreateDeviceGrid, "cusolverMgCreateDeviceGrid"),
		fn(&m.cusolverMgDestroyGrid, "cusolverMgDestroyGrid"),
		fn(&m.cusolverMgCreateMatrixDesc, "cusolverMgCreateMatrixDesc"),
		fn(&m.cusolverMgDestroyMatrixDesc, "cusolverMgDestroyMatrixDesc"),
		fn(&m.cusolverMgGetrf_bufferSize, "cusolverMgGetrf_bufferSize"),
		fn(&m.cusolverMgGetrf, "cusolverMgGetrf"),
		fn(&m.cusolverMgGetrs_bufferSize, "cusolverMgGetrs_bufferSize"),
		fn(&m.cusolverMgGetrs, "cusolverMgGetrs"),
	})
}

// An MgSystem is one n×n fp64 system for cuSOLVERMg: A 1-D column
// block-cyclic over the devices (blocks of nb columns, device j holding
// blocks j, j+G, …, all n rows, column-major), b (n×1) on the first.
type MgSystem struct {
	Devices []int
	N, NB   int
	A, B    []uintptr // per device: its columns of A, of b (B[0] holds b)
	IPIV    []uintptr // per device: int32 pivots of its columns
	Work    []uintptr // per device: Lwork fp64 words
	Lwork   int64
}

// MgWorkspace returns the fp64 words of workspace each device needs for
// getrf and getrs (the larger of the two).
func MgWorkspace(s *MgSystem) (int64, error) {
	var lw int64
	err := mgRun(s, func(h, descA, descB uintptr) error {
		var l1, l2 int64
		err := solverCheck("cusolverMgGetrf_bufferSize", mg.cusolverMgGetrf_bufferSize(h, int32(s.N), int32(s.N), &s.A[0], 1, 1, descA, &s.IPIV[0], dataR64F, &l1))
		if err == nil {
			err = solverCheck("cusolverMgGetrs_bufferSize", mg.cusolverMgGetrs_bufferSize(h, OpN, int32(s.N), 1, &s.A[0], 1, 1, descA, &s.IPIV[0], &s.B[0], 1, 1, descB, dataR64F, &l2))
		}
		lw = max(l1, l2)
		return err
	})
	return lw, err
}

// MgSolve factors A with partial pivoting (cusolverMgGetrf) and solves
// for b in place (cusolverMgGetrs); it returns getrf's info.
func MgSolve(s *MgSystem, getrfDone func()) (int, error) {
	lwork := s.Lwork
	var info int32
	err := mgRun(s, func(h, descA, descB uintptr) error {
		err := solverCheck("cusolverMgGetrf", mg.cusolverMgGetrf(h, int32(s.N), int32(s.N), &s.A[0], 1, 1, descA, &s.IPIV[0], dataR64F, &s.Work[0], lwork, &info))
		if err != nil || info != 0 {
			return err
		}
		getrfDone()
		var info2 int32
		err = solverCheck("cusolverMgGetrs", mg.cusolverMgGetrs(h, OpN, int32(s.N), 1, &s.A[0], 1, 1, descA, &s.IPIV[0], &s.B[0], 1, 1, descB, dataR64F, &s.Work[0], lwork, &info2))
		if err == nil && info2 != 0 {
			err = fmt.Errorf("cusolverMgGetrs: info %d", info2)
		}
		return err
	})
	return int(info), err
}

// mgRun makes the handle, grid and descriptors of s, calls f, and frees
// them. cuSOLVERMg switches devices itself through the CUDA runtime, so
// the caller runs it on a thread of its own, not a device's.
func mgRun(s *MgSystem, f func(h, descA, descB uintptr) error) error {
	if err := LoadCusolverMg(); err != nil {
		return err
	}
	ids := make([]int32, len(s.Devices))
	for i, d := range s.Devices {
		ids[i] = int32(d)
	}
	var h, grid, descA, descB uintptr
	err := solverCheck("cusolverMgCreate", mg.cusolverMgCreate(&h))
	if err != nil {
		return err
	}
	defer mg.cusolverMgDestroy(h)
	if err := solverCheck("cusolverMgDeviceSelect", mg.cusolverMgDeviceSelect(h, int32(len(ids)), &ids[0])); err != nil {
		return err
	}
	if err := solverCheck("cusolverMgCreateDeviceGrid", mg.cusolverMgCreateDeviceGrid(&grid, 1, int32(len(ids)), &ids[0], mgGridColMajor)); err != nil {
		return err
	}
	defer mg.cusolverMgDestroyGrid(grid)
	n, nb := int64(s.N), int64(s.NB)
	if err := solverCheck("cusolverMgCreateMatrixDesc", mg.cusolverMgCreateMatrixDesc(&descA, n, n, n, nb, dataR64F, grid)); err != nil {
		return err
	}
	defer mg.cusolverMgDestroyMatrixDesc(descA)
	if err := solverCheck("cusolverMgCreateMatrixDesc", mg.cusolverMgCreateMatrixDesc(&descB, n, 1, n, nb, dataR64F, grid)); err != nil {
		return err
	}
	defer mg.cusolverMgDestroyMatrixDesc(descB)
	return f(h, descA, descB)
}
