package cuda

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ebitengine/purego"
)

// The sonames of cuBLAS and cuSOLVER in CUDA 13 (cuSOLVER keeps major
// version 12 there).
const (
	CublasFile   = "libcublas.so.13"
	CusolverFile = "libcusolver.so.12"
)

// ErrNoCusolver is wrapped by the error of a machine without cuBLAS or
// cuSOLVER: the GPU solver needs both.
var ErrNoCusolver = errors.New("no cuSOLVER or cuBLAS found")

// cuBLAS enums (cublas_api.h).
const (
	SideLeft    = 0 // CUBLAS_SIDE_LEFT
	SideRight   = 1 // CUBLAS_SIDE_RIGHT
	FillLower   = 0 // CUBLAS_FILL_MODE_LOWER
	FillUpper   = 1 // CUBLAS_FILL_MODE_UPPER
	DiagNonUnit = 0 // CUBLAS_DIAG_NON_UNIT
	DiagUnit    = 1 // CUBLAS_DIAG_UNIT
)

var blas struct {
	cublasCreate     func(h *uintptr) result
	cublasDestroy    func(h uintptr) result
	cublasSetStream  func(h, s uintptr) result
	cublasSetSmCount func(h uintptr, n int32) result
	cublasGetVersion func(h uintptr, v *int32) result
	cublasStrsm      func(h uintptr, side, uplo, trans, diag, m, n int32, alpha *float32, a uintptr, lda int32, b uintptr, ldb int32) result
	cublasStrmm      func(h uintptr, side, uplo, trans, diag, m, n int32, alpha *float32, a uintptr, lda int32, b uintptr, ldb int32, c uintptr, ldc int32) result
	cublasDtrsm      func(h uintptr, side, uplo, trans, diag, m, n int32, alpha *float64, a uintptr, lda int32, b uintptr, ldb int32) result
	cublasDtrmm      func(h uintptr, side, uplo, trans, diag, m, n int32, alpha *float64, a uintptr, lda int32, b uintptr, ldb int32, c uintptr, ldc int32) result
	cublasSgemm      func(h uintptr, transa, transb, m, n, k int32, alpha *float32, a uintptr, lda int32, b uintptr, ldb int32, beta *float32, c uintptr, ldc int32) result
	cublasDgemm      func(h uintptr, transa, transb, m, n, k int32, alpha *float64, a uintptr, lda int32, b uintptr, ldb int32, beta *float64, c uintptr, ldc int32) result
	cublasSgemmBatch func(h uintptr, transa, transb, m, n, k int32, alpha *float32, a uintptr, lda int32, b uintptr, ldb int32, beta *float32, c uintptr, ldc int32, count int32) result
	cublasDgemv      func(h uintptr, trans, m, n int32, alpha *float64, a uintptr, lda int32, x uintptr, incx int32, beta *float64, y uintptr, incy int32) result
	cublasSgemv      func(h uintptr, trans, m, n int32, alpha *float32, a uintptr, lda int32, x uintptr, incx int32, beta *float32, y uintptr, incy int32) result
	cublasDtrsv      func(h uintptr, uplo, trans, diag, n int32, a uintptr, lda int32, x uintptr, incx int32) result
	cublasStrsv      func(h uintptr, uplo, trans, diag, n int32, a uintptr, lda int32, x uintptr, incx int32) result
	cublasDnrm2      func(h uintptr, n int32, x uintptr, incx int32, result *float64) result
	cublasDscal      func(h uintptr, n int32, alpha *float64, x uintptr, incx int32) result
}

var solver struct {
	cusolverDnCreate    func(h *uintptr) result
	cusolverDnDestroy   func(h uintptr) result
	cusolverDnSetStream func(h, s uintptr) result
	cusolverGetProperty func(typ int32, v *int32) result

	cusolverDnSgetrf_bufferSize func(h uintptr, m, n int32, a uintptr, lda int32, lwork *int32) result
	cusolverDnDgetrf_bufferSize func(h uintptr, m, n int32, a uintptr, lda int32, lwork *int32) result
	cusolverDnSgetrf            func(h uintptr, m, n int32, a uintptr, lda int32, work, ipiv, info uintptr) result
	cusolverDnDgetrf            func(h uintptr, m, n int32, a uintptr, lda int32, work, ipiv, info uintptr) result
	cusolverDnDgetrs            func(h uintptr, trans, n, nrhs int32, a uintptr, lda int32, ipiv, b uintptr, ldb int32, info uintptr) result
	cusolverDnDgeqrf_bufferSize func(h uintptr, m, n int32, a uintptr, lda int32, lwork *int32) result
	cusolverDnDgeqrf            func(h uintptr, m, n int32, a uintptr, lda int32, tau, work uintptr, lwork int32, info uintptr) result
	cusolverDnDormqr_bufferSize func(h uintptr, side, trans, m, n, k int32, a uintptr, lda int32, tau, c uintptr, ldc int32, lwork *int32) result
	cusolverDnDormqr            func(h uintptr, side, trans, m, n, k int32, a uintptr, lda int32, tau, c uintptr, ldc int32, work uintptr, lwork int32, info uintptr) result

	// The iterative-refinement solvers cusolverDn<T1><T2>gesv: T1 the
	// data (D: fp64), T2 the factorization's precision.
	gesvBufferSize [5]func(h uintptr, n, nrhs int32, a uintptr, lda int32, ipiv, b uintptr, ldb int32, x uintptr, ldx int32, work uintptr, bytes *uintptr) result
	gesv           [5]func(h uintptr, n, nrhs int32, a uintptr, lda int32, ipiv, b uintptr, ldb int32, x uintptr, ldx int32, work, bytes uintptr, iter *int32, info uintptr) result
}

// GesvNames are the suffixes of cuSOLVER's iterative-refinement solvers,
// in the order of GesvBufferSize's and Gesv's index: DD (fp64 LU), DS
// (fp32), DX (tf32), DH (fp16), DB (bf16).
var GesvNames = [5]string{"DD", "DS", "DX", "DH", "DB"}

var (
	solverOnce sync.Once
	solverErr  error
)

// LoadCusolver loads libcublas.so.13 and libcusolver.so.12, once.
func LoadCusolver() error {
	solverOnce.Do(func() { solverErr = loadCusolver() })
	return solverErr
}

func loadCusolver() error {
	const hint = "install the CUDA 13 toolkit's cuBLAS and cuSOLVER (libcublas-13-0, libcusolver-13-0) or add their folder to LD_LIBRARY_PATH"
	hb, _, err := open(CublasFile, purego.RTLD_NOW|purego.RTLD_GLOBAL, ErrNoCusolver, hint)
	if err != nil {
		return err
	}
	b := &blas
	if err := bind(CublasFile, hb, []binding{
		fn(&b.cublasCreate, "cublasCreate_v2", "cublasCreate"),
		fn(&b.cublasDestroy, "cublasDestroy_v2", "cublasDestroy"),
		fn(&b.cublasSetStream, "cublasSetStream_v2", "cublasSetStream"),
		fn(&b.cublasSetSmCount, "cublasSetSmCountTarget"),
		fn(&b.cublasGetVersion, "cublasGetVersion_v2", "cublasGetVersion"),
		fn(&b.cublasStrsm, "cublasStrsm_v2", "cublasStrsm"),
		fn(&b.cublasStrmm, "cublasStrmm_v2"),
		fn(&b.cublasDtrsm, "cublasDtrsm_v2", "cublasDtrsm"),
		fn(&b.cublasDtrmm, "cublasDtrmm_v2"),
		fn(&b.cublasSgemm, "cublasSgemm_v2", "cublasSgemm"),
		fn(&b.cublasDgemm, "cublasDgemm_v2", "cublasDgemm"),
		fn(&b.cublasSgemmBatch, "cublasSgemmBatched"),
		fn(&b.cublasDgemv, "cublasDgemv_v2", "cublasDgemv"),
		fn(&b.cublasSgemv, "cublasSgemv_v2", "cublasSgemv"),
		fn(&b.cublasDtrsv, "cublasDtrsv_v2", "cublasDtrsv"),
		fn(&b.cublasStrsv, "cublasStrsv_v2", "cublasStrsv"),
		fn(&b.cublasDnrm2, "cublasDnrm2_v2", "cublasDnrm2"),
		fn(&b.cublasDscal, "cublasDscal_v2", "cublasDscal"),
	}); err != nil {
		return fmt.Errorf("%w: %v", ErrNoCusolver, err)
	}
	hs, _, err := open(CusolverFile, purego.RTLD_NOW|purego.RTLD_LOCAL, ErrNoCusolver, hint)
	if err != nil {
		return err
	}
	s := &solver
	bs := []binding{
		fn(&s.cusolverDnCreate, "cusolverDnCreate"),
		fn(&s.cusolverDnDestroy, "cusolverDnDestroy"),
		fn(&s.cusolverDnSetStream, "cusolverDnSetStream"),
		fn(&s.cusolverGetProperty, "cusolverGetProperty"),
		fn(&s.cusolverDnSgetrf_bufferSize, "cusolverDnSgetrf_bufferSize"),
		fn(&s.cusolverDnDgetrf_bufferSize, "cusolverDnDgetrf_bufferSize"),
		fn(&s.cusolverDnSgetrf, "cusolverDnSgetrf"),
		fn(&s.cusolverDnDgetrf, "cusolverDnDgetrf"),
		fn(&s.cusolverDnDgetrs, "cusolverDnDgetrs"),
		fn(&s.cusolverDnDgeqrf_bufferSize, "cusolverDnDgeqrf_bufferSize"),
		fn(&s.cusolverDnDgeqrf, "cusolverDnDgeqrf"),
		fn(&s.cusolverDnDormqr_bufferSize, "cusolverDnDormqr_bufferSize"),
		fn(&s.cusolverDnDormqr, "cusolverDnDormqr"),
	}
	for i, name := range GesvNames {
		bs = append(bs, fn(&s.gesvBufferSize[i], "cusolverDn"+name+"gesv_bufferSize"), fn(&s.gesv[i], "cusolverDn"+name+"gesv"))
	}
	if err := bind(CusolverFile, hs, bs); err != nil {
		return fmt.Errorf("%w: %v", ErrNoCusolver, err)
	}
	return nil
}

// cusolverStatus_t names (cusolver_common.h).
var cusolverStatus = map[int32]string{
	0: "CUSOLVER_STATUS_SUCCESS", 1: "CUSOLVER_STATUS_NOT_INITIALIZED", 2: "CUSOLVER_STATUS_ALLOC_FAILED",
	3: "CUSOLVER_STATUS_INVALID_VALUE", 4: "CUSOLVER_STATUS_ARCH_MISMATCH", 6: "CUSOLVER_STATUS_EXECUTION_FAILED",
	7: "CUSOLVER_STATUS_INTERNAL_ERROR", 8: "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED", 10: "CUSOLVER_STATUS_NOT_SUPPORTED",
	26: "CUSOLVER_STATUS_IRS_PARAMS_INVALID", 32: "CUSOLVER_STATUS_IRS_INTERNAL_ERROR", 33: "CUSOLVER_STATUS_IRS_NOT_SUPPORTED",
	34: "CUSOLVER_STATUS_IRS_OUT_OF_RANGE", 35: "CUSOLVER_STATUS_IRS_NRHS_NOT_SUPPORTED_FOR_REFINE_GMRES",
	37: "CUSOLVER_STATUS_IRS_INFOS_NOT_DESTROYED", 38: "CUSOLVER_STATUS_IRS_MATRIX_SINGULAR",
}

func solverCheck(call string, s result) error {
	if s == 0 {
		return nil
	}
	name := cusolverStatus[s]
	if name == "" {
		name = "CUSOLVER_STATUS_UNKNOWN"
	}
	return &Error{Call: call, Code: int(s), Name: name}
}

// CublasCreate creates a cuBLAS handle in the current context.
func CublasCreate() (uintptr, error) {
	var h uintptr
	err := ltCheck("cublasCreate_v2", blas.cublasCreate(&h))
	return h, err
}

// CublasDestroy destroys a handle.
func CublasDestroy(h uintptr) error { return ltCheck("cublasDestroy_v2", blas.cublasDestroy(h)) }

// CublasSetStream makes the handle's work go to stream.
func CublasSetStream(h, stream uintptr) error {
	return ltCheck("cublasSetStream_v2", blas.cublasSetStream(h, stream))
}

// CublasSetSMCountTarget makes the handle's later calls use at most n
// multiprocessors, leaving the others to concurrent work; 0: all.
func CublasSetSMCountTarget(h uintptr, n int) error {
	return ltCheck("cublasSetSmCountTarget", blas.cublasSetSmCount(h, int32(n)))
}

// CublasVersion returns cuBLAS's version (e.g. 130100).
func CublasVersion(h uintptr) (int, error) {
	var v int32
	err := ltCheck("cublasGetVersion_v2", blas.cublasGetVersion(h, &v))
	return int(v), err
}

// Strsm solves op(A)·X = alpha·B (side left) in place of B, column-major.
func Strsm(h uintptr, side, uplo, trans, diag, m, n int, alpha float32, a uintptr, lda int, b uintptr, ldb int) error {
	return ltCheck("cublasStrsm_v2", blas.cublasStrsm(h, int32(side), int32(uplo), int32(trans), int32(diag),
		int32(m), int32(n), &alpha, a, int32(lda), b, int32(ldb)))
}

// Dtrsm is Strsm in fp64.
func Dtrsm(h uintptr, side, uplo, trans, diag, m, n int, alpha float64, a uintptr, lda int, b uintptr, ldb int) error {
	return ltCheck("cublasDtrsm_v2", blas.cublasDtrsm(h, int32(side), int32(uplo), int32(trans), int32(diag),
		int32(m), int32(n), &alpha, a, int32(lda), b, int32(ldb)))
}

// Strmm computes C = alpha·op(A)·B (side left) or alpha·B·op(A) (side
// right) for triangular A, column-major, out of place.
func Strmm(h uintptr, side, uplo, trans, diag, m, n int, alpha float32, a uintptr, lda int, b uintptr, ldb int, c uintptr, ldc int) error {
	return ltCheck("cublasStrmm_v2", blas.cublasStrmm(h, int32(side), int32(uplo), int32(trans), int32(diag),
		int32(m), int32(n), &alpha, a, int32(lda), b, int32(ldb), c, int32(ldc)))
}

// Dtrmm is Strmm in fp64.
func Dtrmm(h uintptr, side, uplo, trans, diag, m, n int, alpha float64, a uintptr, lda int, b uintptr, ldb int, c uintptr, ldc int) error {
	return ltCheck("cublasDtrmm_v2", blas.cublasDtrmm(h, int32(side), int32(uplo), int32(trans), int32(diag),
		int32(m), int32(n), &alpha, a, int32(lda), b, int32(ldb), c, int32(ldc)))
}

// Sgemm computes C = alpha·op(A)·op(B) + beta·C in binary32, column-major
// (the handle's default math mode: no TF32).
func Sgemm(h uintptr, transa, transb, m, n, k int, alpha float32, a uintptr, lda int, b uintptr, ldb int, beta float32, c uintptr, ldc int) error {
	return ltCheck("cublasSgemm_v2", blas.cublasSgemm(h, int32(transa), int32(transb), int32(m), int32(n), int32(k),
		&alpha, a, int32(lda), b, int32(ldb), &beta, c, int32(ldc)))
}

// SgemmBatched is Sgemm on count triples of matrices of one shape, their
// addresses in device arrays a, b and c (count pointers each): one launch
// for many small products. (The strided form takes 18 arguments, past
// purego's 15.)
func SgemmBatched(h uintptr, transa, transb, m, n, k int, alpha float32, a uintptr, lda int, b uintptr, ldb int, beta float32, c uintptr, ldc, count int) error {
	return ltCheck("cublasSgemmBatched", blas.cublasSgemmBatch(h, int32(transa), int32(transb), int32(m), int32(n), int32(k),
		&alpha, a, int32(lda), b, int32(ldb), &beta, c, int32(ldc), int32(count)))
}

// Dgemm is Sgemm in binary64.
func Dgemm(h uintptr, transa, transb, m, n, k int, alpha float64, a uintptr, lda int, b uintptr, ldb int, beta float64, c uintptr, ldc int) error {
	return ltCheck("cublasDgemm_v2", blas.cublasDgemm(h, int32(transa), int32(transb), int32(m), int32(n), int32(k),
		&alpha, a, int32(lda), b, int32(ldb), &beta, c, int32(ldc)))
}

// Dgemv computes y = alpha·op(A)·x + beta·y, A m×n column-major.
func Dgemv(h uintptr, trans, m, n int, alpha float64, a uintptr, lda int, x uintptr, beta float64, y uintptr) error {
	return ltCheck("cublasDgemv_v2", blas.cublasDgemv(h, int32(trans), int32(m), int32(n), &alpha, a, int32(lda), x, 1, &beta, y, 1))
}

// Sgemv is Dgemv in fp32.
func Sgemv(h uintptr, trans, m, n int, alpha float32, a uintptr, lda int, x uintptr, beta float32, y uintptr) error {
	return ltCheck("cublasSgemv_v2", blas.cublasSgemv(h, int32(trans), int32(m), int32(n), &alpha, a, int32(lda), x, 1, &beta, y, 1))
}

// Dtrsv solves op(A)·x = b in place of x, A n×n triangular, column-major.
func Dtrsv(h uintptr, uplo, trans, diag, n int, a uintptr, lda int, x uintptr) error {
	return ltCheck("cublasDtrsv_v2", blas.cublasDtrsv(h, int32(uplo), int32(trans), int32(diag), int32(n), a, int32(lda), x, 1))
}

// Strsv is Dtrsv in fp32.
func Strsv(h uintptr, uplo, trans, diag, n int, a uintptr, lda int, x uintptr) error {
	return ltCheck("cublasStrsv_v2", blas.cublasStrsv(h, int32(uplo), int32(trans), int32(diag), int32(n), a, int32(lda), x, 1))
}

// Dnrm2 returns ‖x‖₂ of the n-vector at x; it waits for the result (the
// handle's default host pointer mode).
func Dnrm2(h uintptr, n int, x uintptr) (float64, error) {
	var r float64
	err := ltCheck("cublasDnrm2_v2", blas.cublasDnrm2(h, int32(n), x, 1, &r))
	return r, err
}

// Dscal computes x = alpha·x for the n-vector at x.
func Dscal(h uintptr, n int, alpha float64, x uintptr) error {
	return ltCheck("cublasDscal_v2", blas.cublasDscal(h, int32(n), &alpha, x, 1))
}

// CusolverCreate creates a cuSOLVER dense handle in the current context.
func CusolverCreate() (uintptr, error) {
	var h uintptr
	err := solverCheck("cusolverDnCreate", solver.cusolverDnCreate(&h))
	return h, err
}

// CusolverDestroy destroys a handle.
func CusolverDestroy(h uintptr) error {
	return solverCheck("cusolverDnDestroy", solver.cusolverDnDestroy(h))
}

// CusolverSetStream makes the handle's work go to stream.
func CusolverSetStream(h, stream uintptr) error {
	return solverCheck("cusolverDnSetStream", solver.cusolverDnSetStream(h, stream))
}

// CusolverVersion returns cuSOLVER's major, minor and patch level.
func CusolverVersion() (major, minor, patch int, err error) {
	var v [3]int32
	for i := range v {
		if err := solverCheck("cusolverGetProperty", solver.cusolverGetProperty(int32(i), &v[i])); err != nil {
			return 0, 0, 0, err
		}
	}
	return int(v[0]), int(v[1]), int(v[2]), nil
}

// GetrfBufferSize returns the workspace elements getrf needs for an m×n
// matrix, of fp64 (double) or fp32.
func GetrfBufferSize(h uintptr, double bool, m, n int, a uintptr, lda int) (int, error) {
	var w int32
	var s result
	call := "cusolverDnSgetrf_bufferSize"
	if double {
		call = "cusolverDnDgetrf_bufferSize"
		s = solver.cusolverDnDgetrf_bufferSize(h, int32(m), int32(n), a, int32(lda), &w)
	} else {
		s = solver.cusolverDnSgetrf_bufferSize(h, int32(m), int32(n), a, int32(lda), &w)
	}
	return int(w), solverCheck(call, s)
}

// Getrf factors the m×n column-major matrix at a with partial pivoting:
// ipiv (device, int32) gets the 1-based pivot rows, info (device, int32)
// is k > 0 where U(k, k) is exactly zero.
func Getrf(h uintptr, double bool, m, n int, a uintptr, lda int, work, ipiv, info uintptr) error {
	if double {
		return solverCheck("cusolverDnDgetrf", solver.cusolverDnDgetrf(h, int32(m), int32(n), a, int32(lda), work, ipiv, info))
	}
	return solverCheck("cusolverDnSgetrf", solver.cusolverDnSgetrf(h, int32(m), int32(n), a, int32(lda), work, ipiv, info))
}

// Dgetrs solves op(A)·X = B from Dgetrf's factors, in place of B.
func Dgetrs(h uintptr, trans, n, nrhs int, a uintptr, lda int, ipiv, b uintptr, ldb int, info uintptr) error {
	return solverCheck("cusolverDnDgetrs", solver.cusolverDnDgetrs(h, int32(trans), int32(n), int32(nrhs), a, int32(lda), ipiv, b, int32(ldb), info))
}

// GesvBufferSize returns the workspace bytes of solver i (GesvNames).
func GesvBufferSize(i int, h uintptr, n int, a uintptr, ipiv, b, x uintptr) (int, error) {
	var w uintptr
	err := solverCheck("cusolverDn"+GesvNames[i]+"gesv_bufferSize",
		solver.gesvBufferSize[i](h, int32(n), 1, a, int32(n), ipiv, b, int32(n), x, int32(n), 0, &w))
	return int(w), err
}

// Gesv solves A·x = b (n×n, one right-hand side, fp64 data) with solver i
// (GesvNames) and returns its iteration count: negative when it fell back
// to a full-precision factorization.
func Gesv(i int, h uintptr, n int, a, ipiv, b, x, work uintptr, bytes int, info uintptr) (int, error) {
	var iter int32
	err := solverCheck("cusolverDn"+GesvNames[i]+"gesv",
		solver.gesv[i](h, int32(n), 1, a, int32(n), ipiv, b, int32(n), x, int32(n), work, uintptr(bytes), &iter, info))
	return int(iter), err
}

// DgeqrfBufferSize returns the fp64 workspace elements of Dgeqrf.
func DgeqrfBufferSize(h uintptr, m, n int, a uintptr, lda int) (int, error) {
	var w int32
	err := solverCheck("cusolverDnDgeqrf_bufferSize", solver.cusolverDnDgeqrf_bufferSize(h, int32(m), int32(n), a, int32(lda), &w))
	return int(w), err
}

// Dgeqrf computes the QR factorization of the m×n column-major A in place
// (Householder vectors below the diagonal, their scalars in tau).
func Dgeqrf(h uintptr, m, n int, a uintptr, lda int, tau, work uintptr, lwork int, info uintptr) error {
	return solverCheck("cusolverDnDgeqrf", solver.cusolverDnDgeqrf(h, int32(m), int32(n), a, int32(lda), tau, work, int32(lwork), info))
}

// DormqrBufferSize returns the fp64 workspace elements of Dormqr.
func DormqrBufferSize(h uintptr, side, trans, m, n, k int, a uintptr, lda int, tau, c uintptr, ldc int) (int, error) {
	var w int32
	err := solverCheck("cusolverDnDormqr_bufferSize", solver.cusolverDnDormqr_bufferSize(h, int32(side), int32(trans),
		int32(m), int32(n), int32(k), a, int32(lda), tau, c, int32(ldc), &w))
	return int(w), err
}

// Dormqr overwrites the m×n C with op(Q)·C (side left) or C·op(Q) (side
// right), Q the product of k reflectors from Dgeqrf.
func Dormqr(h uintptr, side, trans, m, n, k int, a uintptr, lda int, tau, c uintptr, ldc int, work uintptr, lwork int, info uintptr) error {
	return solverCheck("cusolverDnDormqr", solver.cusolverDnDormqr(h, int32(side), int32(trans), int32(m), int32(n), int32(k),
		a, int32(lda), tau, c, int32(ldc), work, int32(lwork), info))
}
