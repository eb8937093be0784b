package cuda

import (
	"fmt"
	"structs"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// CublasLtFile is cuBLASLt's soname for CUDA 13.
const CublasLtFile = "libcublasLt.so.13"

// cudaDataType_t values (library_types.h).
const (
	R32F    = 0  // CUDA_R_32F
	R64F    = 1  // CUDA_R_64F
	R16F    = 2  // CUDA_R_16F
	R8I     = 3  // CUDA_R_8I
	R32I    = 10 // CUDA_R_32I
	R16BF   = 14 // CUDA_R_16BF
	R8FE4M3 = 28 // CUDA_R_8F_E4M3
	R8FE5M2 = 29 // CUDA_R_8F_E5M2
)

// cublasComputeType_t values (cublas_api.h).
const (
	Compute32F         = 68 // CUBLAS_COMPUTE_32F
	Compute32FPedantic = 69 // CUBLAS_COMPUTE_32F_PEDANTIC
	Compute64F         = 70 // CUBLAS_COMPUTE_64F
	Compute32I         = 72 // CUBLAS_COMPUTE_32I
	Compute32FFast16F  = 74 // CUBLAS_COMPUTE_32F_FAST_16F
	Compute32FFast16BF = 75 // CUBLAS_COMPUTE_32F_FAST_16BF
	Compute32FFastTF32 = 77 // CUBLAS_COMPUTE_32F_FAST_TF32
)

// cublasOperation_t values (cublas_api.h).
const (
	OpN = 0 // CUBLAS_OP_N
	OpT = 1 // CUBLAS_OP_T
)

// cublasLtMatmulDescAttributes_t values (cublasLt.h); all take an int32_t.
const (
	MatmulDescPointerMode   = 2  // CUBLASLT_MATMUL_DESC_POINTER_MODE
	MatmulDescTransA        = 3  // CUBLASLT_MATMUL_DESC_TRANSA
	MatmulDescTransB        = 4  // CUBLASLT_MATMUL_DESC_TRANSB
	MatmulDescSMCountTarget = 15 // CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET
)

// PointerModeDevice (CUBLASLT_POINTER_MODE_DEVICE): alpha and beta are
// read from device memory when the product runs.
const PointerModeDevice = 1

// cublasLtMatmulPreferenceAttributes_t values (cublasLt.h).
const MatmulPrefMaxWorkspaceBytes = 1 // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t

// cublasStatus_t values (cublas_api.h) that callers test for.
const StatusNotSupported = 15 // CUBLAS_STATUS_NOT_SUPPORTED

// statusNames names the cublasStatus_t codes (cublas_api.h), for a
// cuBLASLt without cublasLtGetStatusName.
var statusNames = map[int32]string{
	0: "CUBLAS_STATUS_SUCCESS", 1: "CUBLAS_STATUS_NOT_INITIALIZED", 3: "CUBLAS_STATUS_ALLOC_FAILED",
	7: "CUBLAS_STATUS_INVALID_VALUE", 8: "CUBLAS_STATUS_ARCH_MISMATCH", 11: "CUBLAS_STATUS_MAPPING_ERROR",
	13: "CUBLAS_STATUS_EXECUTION_FAILED", 14: "CUBLAS_STATUS_INTERNAL_ERROR", 15: "CUBLAS_STATUS_NOT_SUPPORTED",
	16: "CUBLAS_STATUS_LICENSE_ERROR",
}

// MatmulAlgo mirrors cublasLtMatmulAlgo_t (cublasLt.h: uint64_t data[8]).
type MatmulAlgo struct {
	_    structs.HostLayout
	Data [8]uint64
}

// HeuristicResult mirrors cublasLtMatmulHeuristicResult_t (cublasLt.h):
// 96 bytes.
type HeuristicResult struct {
	_             structs.HostLayout
	Algo          MatmulAlgo
	WorkspaceSize uintptr // size_t
	State         int32   // cublasStatus_t
	WavesCount    float32
	Reserved      [4]int32
}

var lt struct {
	cublasLtCreate                       func(h *uintptr) result
	cublasLtDestroy                      func(h uintptr) result
	cublasLtGetVersion                   func() uintptr
	cublasLtGetStatusName                func(s result) string
	cublasLtGetStatusString              func(s result) string
	cublasLtMatmulDescCreate             func(d *uintptr, compute, scale int32) result
	cublasLtMatmulDescDestroy            func(d uintptr) result
	cublasLtMatmulDescSetAttribute       func(d uintptr, attr int32, buf unsafe.Pointer, size uintptr) result
	cublasLtMatrixLayoutCreate           func(l *uintptr, typ int32, rows, cols uint64, ld int64) result
	cublasLtMatrixLayoutDestroy          func(l uintptr) result
	cublasLtMatrixLayoutSetAttribute     func(l uintptr, attr int32, buf unsafe.Pointer, size uintptr) result
	cublasLtMatmulPreferenceCreate       func(p *uintptr) result
	cublasLtMatmulPreferenceDestroy      func(p uintptr) result
	cublasLtMatmulPreferenceSetAttribute func(p uintptr, attr int32, buf unsafe.Pointer, size uintptr) result
	cublasLtMatmulAlgoGetHeuristic       func(h, desc, a, b, c, d, pref uintptr, requested int32, results *HeuristicResult, returned *int32) result
	// 16 arguments: purego ≥ 0.11 (earlier versions stop at 15).
	cublasLtMatmul func(h, desc, alpha, a, adesc, b, bdesc, beta,
		c, cdesc, d, ddesc uintptr, algo *MatmulAlgo, workspace, workspaceSize, stream uintptr) result
}

var (
	ltOnce sync.Once
	ltErr  error
)

// LoadCublasLt loads libcublasLt.so.13, once.
func LoadCublasLt() error {
	ltOnce.Do(func() { ltErr = loadCublasLt() })
	return ltErr
}

func loadCublasLt() error {
	h, _, err := open(CublasLtFile, purego.RTLD_NOW|purego.RTLD_LOCAL, ErrNoCublasLt,
		"install the CUDA 13 toolkit's cuBLAS (e.g. the libcublas-13-0 package) or add its folder to LD_LIBRARY_PATH")
	if err != nil {
		return err
	}
	l := &lt
	err = bind(CublasLtFile, h, []binding{
		fn(&l.cublasLtCreate, "cublasLtCreate"),
		fn(&l.cublasLtDestroy, "cublasLtDestroy"),
		fn(&l.cublasLtGetVersion, "cublasLtGetVersion"),
		optional(&l.cublasLtGetStatusName, "cublasLtGetStatusName"),
		optional(&l.cublasLtGetStatusString, "cublasLtGetStatusString"),
		fn(&l.cublasLtMatmulDescCreate, "cublasLtMatmulDescCreate"),
		fn(&l.cublasLtMatmulDescDestroy, "cublasLtMatmulDescDestroy"),
		fn(&l.cublasLtMatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute"),
		fn(&l.cublasLtMatrixLayoutCreate, "cublasLtMatrixLayoutCreate"),
		fn(&l.cublasLtMatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy"),
		fn(&l.cublasLtMatrixLayoutSetAttribute, "cublasLtMatrixLayoutSetAttribute"),
		fn(&l.cublasLtMatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate"),
		fn(&l.cublasLtMatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy"),
		fn(&l.cublasLtMatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute"),
		fn(&l.cublasLtMatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic"),
		fn(&l.cublasLtMatmul, "cublasLtMatmul"),
	})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoCublasLt, err)
	}
	return nil
}

// CublasLtVersion returns cuBLASLt's version, 10000*major + 100*minor +
// patch (130100 for 13.1.0); LoadCublasLt must have succeeded.
func CublasLtVersion() int { return int(lt.cublasLtGetVersion()) }

// ltError names a cublasStatus_t, of cuBLASLt or cuBLAS (one enum), by
// cuBLASLt's own names where it is loaded.
func ltError(call string, s result) error {
	e := &Error{Call: call, Code: int(s), Name: statusNames[s]}
	if lt.cublasLtGetStatusName != nil {
		e.Name = lt.cublasLtGetStatusName(s)
	}
	if lt.cublasLtGetStatusString != nil {
		e.Message = lt.cublasLtGetStatusString(s)
	}
	if e.Name == "" {
		e.Name = "CUBLAS_STATUS_UNKNOWN"
	}
	return e
}

func ltCheck(call string, s result) error {
	if s != 0 {
		return ltError(call, s)
	}
	return nil
}

// LtCreate creates a cuBLASLt handle (in the current context).
func LtCreate() (uintptr, error) {
	var h uintptr
	err := ltCheck("cublasLtCreate", lt.cublasLtCreate(&h))
	return h, err
}

// LtDestroy destroys a handle.
func LtDestroy(h uintptr) error { return ltCheck("cublasLtDestroy", lt.cublasLtDestroy(h)) }

// LtMatmulDescCreate creates a matmul descriptor for a cublasComputeType_t
// and the cudaDataType_t of alpha and beta.
func LtMatmulDescCreate(compute, scale int32) (uintptr, error) {
	var d uintptr
	err := ltCheck("cublasLtMatmulDescCreate", lt.cublasLtMatmulDescCreate(&d, compute, scale))
	return d, err
}

// LtMatmulDescDestroy destroys a matmul descriptor.
func LtMatmulDescDestroy(d uintptr) error {
	return ltCheck("cublasLtMatmulDescDestroy", lt.cublasLtMatmulDescDestroy(d))
}

// LtMatmulDescSetInt32 sets an int32_t attribute of a matmul descriptor.
func LtMatmulDescSetInt32(d uintptr, attr int32, v int32) error {
	return ltCheck("cublasLtMatmulDescSetAttribute",
		lt.cublasLtMatmulDescSetAttribute(d, attr, unsafe.Pointer(&v), unsafe.Sizeof(v)))
}

// LtMatrixLayoutCreate describes a column-major rows×cols matrix of a
// cudaDataType_t with leading dimension ld.
func LtMatrixLayoutCreate(typ int32, rows, cols uint64, ld int64) (uintptr, error) {
	var l uintptr
	err := ltCheck("cublasLtMatrixLayoutCreate", lt.cublasLtMatrixLayoutCreate(&l, typ, rows, cols, ld))
	return l, err
}

// LtMatrixLayoutDestroy destroys a layout.
func LtMatrixLayoutDestroy(l uintptr) error {
	return ltCheck("cublasLtMatrixLayoutDestroy", lt.cublasLtMatrixLayoutDestroy(l))
}

// LtMatmulPreferenceCreate creates a heuristic preference.
func LtMatmulPreferenceCreate() (uintptr, error) {
	var p uintptr
	err := ltCheck("cublasLtMatmulPreferenceCreate", lt.cublasLtMatmulPreferenceCreate(&p))
	return p, err
}

// LtMatmulPreferenceDestroy destroys a preference.
func LtMatmulPreferenceDestroy(p uintptr) error {
	return ltCheck("cublasLtMatmulPreferenceDestroy", lt.cublasLtMatmulPreferenceDestroy(p))
}

// LtMatmulPreferenceSetUint64 sets a uint64_t attribute of a preference.
func LtMatmulPreferenceSetUint64(p uintptr, attr int32, v uint64) error {
	return ltCheck("cublasLtMatmulPreferenceSetAttribute",
		lt.cublasLtMatmulPreferenceSetAttribute(p, attr, unsafe.Pointer(&v), unsafe.Sizeof(v)))
}

// LtMatmulAlgoGetHeuristic asks for up to len(results) algorithms, best
// first, and returns how many it found.
func LtMatmulAlgoGetHeuristic(h, desc, a, b, c, d, pref uintptr, results []HeuristicResult) (int, error) {
	if len(results) == 0 {
		return 0, nil
	}
	var n int32
	err := ltCheck("cublasLtMatmulAlgoGetHeuristic",
		lt.cublasLtMatmulAlgoGetHeuristic(h, desc, a, b, c, d, pref, int32(len(results)), &results[0], &n))
	return int(n), err
}

// LtMatmul computes D = alpha·op(A)·op(B) + beta·C on stream. alpha and
// beta point to values of the descriptor's scale type: pinned host memory,
// or device memory under MatmulDescPointerMode's PointerModeDevice.
func LtMatmul(h, desc, alpha, a, adesc, b, bdesc, beta uintptr,
	c, cdesc, d, ddesc uintptr, algo *MatmulAlgo, workspace, workspaceSize, stream uintptr) error {
	return ltCheck("cublasLtMatmul", lt.cublasLtMatmul(h, desc, alpha, a, adesc, b, bdesc, beta,
		c, cdesc, d, ddesc, algo, workspace, workspaceSize, stream))
}
