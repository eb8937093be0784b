package gpu

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/mwmm/mwmm/gpu/internal/cuda"
)

// A DataType is the element type of a matrix in Lt.Matmul.
type DataType int

const (
	F32  DataType = iota + 1 // fp32
	F64                      // fp64
	F16                      // fp16 (Go: uint16 bits)
	BF16                     // bf16 (Go: uint16 bits)
	E4M3                     // OCP fp8 e4m3 (Go: uint8 bits)
	E5M2                     // OCP fp8 e5m2 (Go: uint8 bits)
	I8                       // int8, with Compute32I
	I32                      // int32, with Compute32I
)

var dataTypes = [...]struct {
	name string
	size int
	cuda int32
}{
	F32:  {"f32", 4, cuda.R32F},
	F64:  {"f64", 8, cuda.R64F},
	F16:  {"f16", 2, cuda.R16F},
	BF16: {"bf16", 2, cuda.R16BF},
	E4M3: {"e4m3", 1, cuda.R8FE4M3},
	E5M2: {"e5m2", 1, cuda.R8FE5M2},
	I8:   {"i8", 1, cuda.R8I},
	I32:  {"i32", 4, cuda.R32I},
}

func (t DataType) valid() bool { return t >= F32 && t <= I32 }

func (t DataType) String() string {
	if !t.valid() {
		return fmt.Sprintf("DataType(%d)", int(t))
	}
	return dataTypes[t].name
}

// Size returns the bytes of one element (0 for an invalid type).
func (t DataType) Size() int {
	if !t.valid() {
		return 0
	}
	return dataTypes[t].size
}

// A ComputeType is how cuBLASLt multiplies and accumulates.
type ComputeType int

const (
	// Compute32F accumulates in fp32; with fp32 inputs cuBLASLt may
	// still use TF32 tensor cores if the math mode allows (it does not by
	// default).
	Compute32F ComputeType = iota + 1
	// Compute32FPedantic is fp32 throughout: the SGEMM baseline.
	Compute32FPedantic
	// Compute32FFastTF32 rounds fp32 inputs to TF32 for the tensor cores.
	Compute32FFastTF32
	// Compute32FFast16F rounds fp32 inputs to fp16 for the tensor cores.
	Compute32FFast16F
	// Compute32FFast16BF rounds fp32 inputs to bf16 for the tensor cores.
	Compute32FFast16BF
	// Compute64F is fp64 throughout: DGEMM.
	Compute64F
	// Compute32I multiplies int8 and accumulates in int32, exactly (the
	// int8 tensor cores); alpha and beta are int32.
	Compute32I
)

var computeTypes = [...]struct {
	name string
	cuda int32
}{
	Compute32F:         {"32F", cuda.Compute32F},
	Compute32FPedantic: {"32F_PEDANTIC", cuda.Compute32FPedantic},
	Compute32FFastTF32: {"32F_FAST_TF32", cuda.Compute32FFastTF32},
	Compute32FFast16F:  {"32F_FAST_16F", cuda.Compute32FFast16F},
	Compute32FFast16BF: {"32F_FAST_16BF", cuda.Compute32FFast16BF},
	Compute64F:         {"64F", cuda.Compute64F},
	Compute32I:         {"32I", cuda.Compute32I},
}

func (c ComputeType) valid() bool { return c >= Compute32F && c <= Compute32I }

func (c ComputeType) String() string {
	if !c.valid() {
		return fmt.Sprintf("ComputeType(%d)", int(c))
	}
	return computeTypes[c].name
}

// scaleType is the cudaDataType_t of alpha and beta: fp64 for fp64
// compute, int32 for int32 compute, fp32 for the other 32-bit compute
// types.
func (c ComputeType) scaleType() int32 {
	switch c {
	case Compute64F:
		return cuda.R64F
	case Compute32I:
		return cuda.R32I
	}
	return cuda.R32F
}

// scaleSize is the bytes of alpha (and of beta) in the scale type.
func (c ComputeType) scaleSize() int {
	if c == Compute64F {
		return 8
	}
	return 4
}

// MatmulSpec describes D = Alpha·op(A)·op(B) + Beta·C, where op(A) is M×K,
// op(B) is K×N and C, D are M×N. Matrices are column-major, as in cuBLAS:
// element (i, j) of A is at i + j·LdA. With TransA, A is stored K×M and
// op(A) = Aᵀ; likewise B.
type MatmulSpec struct {
	M, N, K        int
	TransA, TransB bool
	A, B, C, D     *Buffer // D may equal C; a nil C means C = D (its type and Ld too)
	// Leading dimensions: at least the stored matrix's rows; 0 means
	// exactly that.
	LdA, LdB, LdC, LdD         int
	TypeA, TypeB, TypeC, TypeD DataType
	Compute                    ComputeType
	// Alpha and Beta are passed as float32 for the 32-bit floating-point
	// compute types (so rounded to fp32), as float64 for Compute64F, and
	// as int32 (truncated) for Compute32I.
	Alpha, Beta float64
	Workspace   *Buffer // scratch memory for faster algorithms; nil: none
	Stream      *Stream // nil: the default stream
	// SMs, when positive, is the number of multiprocessors the product
	// may use, leaving the others to concurrent work.
	SMs int

	// Algorithm, when set, is the algorithm to run instead of asking the
	// heuristic (one that MatmulAlgo returned): a sequence of products of
	// shrinking shapes (the LU's updates) then loads no new kernel and
	// asks no heuristic per shape.
	Algorithm *Algorithm
	// DeviceScales, when set, holds alpha and then beta in the scale type
	// on the device (Alpha and Beta are not read): a kernel queued before
	// the product may compute them, with no wait on the host.
	DeviceScales *Buffer
}

// stored returns the shapes of A and B as stored: op(A) is M×K, so A is
// K×M when transposed.
func (s MatmulSpec) stored() (rowsA, colsA, rowsB, colsB int) {
	rowsA, colsA, rowsB, colsB = s.M, s.K, s.K, s.N
	if s.TransA {
		rowsA, colsA = colsA, rowsA
	}
	if s.TransB {
		rowsB, colsB = colsB, rowsB
	}
	return
}

// normalized fills in the defaults (Ld 0, nil C) and checks the spec
// against the buffers' sizes.
func (s MatmulSpec) normalized() (MatmulSpec, error) {
	if s.M <= 0 || s.N <= 0 || s.K <= 0 {
		return s, fmt.Errorf("m, n, k must be positive, got %d, %d, %d", s.M, s.N, s.K)
	}
	if s.C == nil {
		s.C, s.TypeC, s.LdC = s.D, s.TypeD, s.LdD
	}
	if !s.Compute.valid() {
		return s, fmt.Errorf("no compute type (Compute is %v)", s.Compute)
	}
	rA, cA, rB, cB := s.stored()
	for _, x := range []struct {
		name       string
		buf        *Buffer
		typ        DataType
		ld         *int
		rows, cols int
	}{
		{"A", s.A, s.TypeA, &s.LdA, rA, cA},
		{"B", s.B, s.TypeB, &s.LdB, rB, cB},
		{"C", s.C, s.TypeC, &s.LdC, s.M, s.N},
		{"D", s.D, s.TypeD, &s.LdD, s.M, s.N},
	} {
		if x.buf == nil {
			return s, fmt.Errorf("no buffer %s", x.name)
		}
		if !x.typ.valid() {
			return s, fmt.Errorf("no type for %s (Type%s is %v)", x.name, x.name, x.typ)
		}
		if *x.ld == 0 {
			*x.ld = x.rows
		}
		if *x.ld < x.rows {
			return s, fmt.Errorf("Ld%s = %d is less than the %d rows of %s as stored", x.name, *x.ld, x.rows, x.name)
		}
		need := (*x.ld*(x.cols-1) + x.rows) * x.typ.Size()
		if need > x.buf.n {
			return s, fmt.Errorf("%s (%d×%d %v, ld %d) needs %d bytes, its buffer has %d", x.name, x.rows, x.cols, x.typ, *x.ld, need, x.buf.n)
		}
	}
	if s.DeviceScales != nil && s.DeviceScales.n < 2*s.Compute.scaleSize() {
		return s, fmt.Errorf("alpha and beta need %d bytes on the device, their buffer has %d", 2*s.Compute.scaleSize(), s.DeviceScales.n)
	}
	return s, nil
}

func (s MatmulSpec) String() string {
	t := func(b bool) string {
		if b {
			return "ᵀ"
		}
		return ""
	}
	ws := 0
	if s.Workspace != nil {
		ws = s.Workspace.n
	}
	return fmt.Sprintf("m=%d n=%d k=%d: D %v (ld %d) = %g·A%s %v (ld %d)·B%s %v (ld %d) + %g·C %v (ld %d), compute %v, workspace %s",
		s.M, s.N, s.K, s.TypeD, s.LdD, s.Alpha, t(s.TransA), s.TypeA, s.LdA, t(s.TransB), s.TypeB, s.LdB,
		s.Beta, s.TypeC, s.LdC, s.Compute, size(uint64(ws)))
}

// planKey is what the descriptors and the chosen algorithm depend on.
type planKey struct {
	m, n, k, lda, ldb, ldc, ldd int
	transA, transB              bool
	types                       [4]DataType
	compute                     ComputeType
	workspace, sms              int
	reused, deviceScales        bool
}

func (s MatmulSpec) key() planKey {
	ws := 0
	if s.Workspace != nil {
		ws = s.Workspace.n
	}
	return planKey{s.M, s.N, s.K, s.LdA, s.LdB, s.LdC, s.LdD, s.TransA, s.TransB,
		[4]DataType{s.TypeA, s.TypeB, s.TypeC, s.TypeD}, s.Compute, ws, max(s.SMs, 0), s.Algorithm != nil, s.DeviceScales != nil}
}

// A plan holds cuBLASLt's descriptors for one planKey and the algorithm
// its heuristic chose.
type plan struct {
	desc       uintptr
	a, b, c, d uintptr
	algo       cuda.HeuristicResult
}

func (p *plan) destroy() error {
	var errs []error
	for _, l := range []uintptr{p.a, p.b, p.c, p.d} {
		if l != 0 {
			errs = append(errs, cuda.LtMatrixLayoutDestroy(l))
		}
	}
	if p.desc != 0 {
		errs = append(errs, cuda.LtMatmulDescDestroy(p.desc))
	}
	return errors.Join(errs...)
}

// Lt is a cuBLASLt handle on a device.
type Lt struct {
	d     *Device
	h     uintptr
	id    uint64
	plans map[planKey]*plan // on the worker
}

// Lt returns the device's cuBLASLt handle, creating it on first use; it
// lives until the device is closed. Without libcublasLt.so.13 the error
// wraps ErrNoCublasLt.
func (d *Device) Lt() (*Lt, error) {
	var lt *Lt
	err := d.Do(func() error {
		if d.lt != nil {
			lt = d.lt
			return nil
		}
		if err := cuda.LoadCublasLt(); err != nil {
			return err
		}
		h, err := cuda.LtCreate()
		if err != nil {
			return err
		}
		lt = &Lt{d: d, h: h, plans: map[planKey]*plan{}}
		lt.id = d.track(lt.destroy)
		d.lt = lt
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("gpu: cuBLASLt: %w", err)
	}
	return lt, nil
}

// destroy frees the plans and the handle; on the worker.
func (lt *Lt) destroy() error {
	var errs []error
	for k, p := range lt.plans {
		errs = append(errs, p.destroy())
		delete(lt.plans, k)
	}
	errs = append(errs, cuda.LtDestroy(lt.h))
	lt.d.lt = nil
	return errors.Join(errs...)
}

// plan returns the plan for s (normalized), making it on first use; on the
// worker.
func (lt *Lt) plan(s MatmulSpec) (*plan, error) {
	k := s.key()
	if p := lt.plans[k]; p != nil {
		return p, nil
	}
	p := &plan{}
	if err := p.make(lt.h, s); err != nil {
		return nil, errors.Join(err, p.destroy())
	}
	lt.plans[k] = p
	return p, nil
}

func (p *plan) make(h uintptr, s MatmulSpec) error {
	var err error
	if p.desc, err = cuda.LtMatmulDescCreate(computeTypes[s.Compute].cuda, s.Compute.scaleType()); err != nil {
		return err
	}
	op := func(t bool) int32 {
		if t {
			return cuda.OpT
		}
		return cuda.OpN
	}
	if err := cuda.LtMatmulDescSetInt32(p.desc, cuda.MatmulDescTransA, op(s.TransA)); err != nil {
		return err
	}
	if err := cuda.LtMatmulDescSetInt32(p.desc, cuda.MatmulDescTransB, op(s.TransB)); err != nil {
		return err
	}
	if s.SMs > 0 {
		if err := cuda.LtMatmulDescSetInt32(p.desc, cuda.MatmulDescSMCountTarget, int32(s.SMs)); err != nil {
			return err
		}
	}
	if s.DeviceScales != nil {
		if err := cuda.LtMatmulDescSetInt32(p.desc, cuda.MatmulDescPointerMode, cuda.PointerModeDevice); err != nil {
			return err
		}
	}
	layout := func(t DataType, rows, cols, ld int) (uintptr, error) {
		return cuda.LtMatrixLayoutCreate(dataTypes[t].cuda, uint64(rows), uint64(cols), int64(ld))
	}
	rA, cA, rB, cB := s.stored()
	if p.a, err = layout(s.TypeA, rA, cA, s.LdA); err != nil {
		return err
	}
	if p.b, err = layout(s.TypeB, rB, cB, s.LdB); err != nil {
		return err
	}
	if p.c, err = layout(s.TypeC, s.M, s.N, s.LdC); err != nil {
		return err
	}
	if p.d, err = layout(s.TypeD, s.M, s.N, s.LdD); err != nil {
		return err
	}

	if s.Algorithm != nil {
		p.algo = *s.Algorithm
		return nil
	}
	pref, err := cuda.LtMatmulPreferenceCreate()
	if err != nil {
		return err
	}
	defer cuda.LtMatmulPreferenceDestroy(pref)
	if err := cuda.LtMatmulPreferenceSetUint64(pref, cuda.MatmulPrefMaxWorkspaceBytes, uint64(s.key().workspace)); err != nil {
		return err
	}
	var results [1]cuda.HeuristicResult
	n, err := cuda.LtMatmulAlgoGetHeuristic(h, p.desc, p.a, p.b, p.c, p.d, pref, results[:])
	var ce *Error
	if err != nil && !(errors.As(err, &ce) && ce.Code == cuda.StatusNotSupported) {
		return err
	}
	if n == 0 || err != nil {
		why := "no result"
		if err != nil {
			why = err.Error()
		}
		return &noAlgorithm{why}
	}
	p.algo = results[0]
	return nil
}

// Matmul queues D = Alpha·op(A)·op(B) + Beta·C on s.Stream. The
// descriptors and the algorithm cuBLASLt's heuristic picks are made once
// per shape, layout, types and workspace size, and reused. A combination
// cuBLASLt does not support (fp8 wants TransA and not TransB, for one) is
// an error that says "cuBLASLt has no algorithm".
func (lt *Lt) Matmul(s MatmulSpec) error {
	_, err := lt.MatmulAlgo(s)
	return err
}

// An Algorithm is the cuBLASLt algorithm a product ran, to run again.
type Algorithm = cuda.HeuristicResult

// MatmulAlgo is Matmul, returning the algorithm it ran (for
// MatmulSpec.Algorithm). A reused algorithm that does not suit the shape
// is an error; its plan is dropped.
func (lt *Lt) MatmulAlgo(s MatmulSpec) (used Algorithm, err error) {
	s, err = s.normalized()
	d := lt.d
	bufs := []*Buffer{s.A, s.B, s.C, s.D}
	for _, b := range []*Buffer{s.Workspace, s.DeviceScales} {
		if b != nil {
			bufs = append(bufs, b)
		}
	}
	for _, b := range bufs {
		if err == nil {
			err = d.checkBuffer("Matmul", b)
		}
	}
	if err == nil {
		err = d.Do(func() error {
			if !d.live(lt.id) {
				return errors.New("the cuBLASLt handle is gone")
			}
			for _, b := range bufs {
				if err := d.liveBuffer("Matmul", b); err != nil {
					return err
				}
			}
			stream, err := s.Stream.Handle(d)
			if err != nil {
				return err
			}
			p, err := lt.plan(s)
			if err != nil {
				return err
			}
			used = p.algo
			var ws, wsSize uintptr
			if s.Workspace != nil {
				ws, wsSize = s.Workspace.ptr, uintptr(s.Workspace.n)
			}
			// Host pointers to alpha and beta in the scale type, read
			// during the call, or the device's.
			var pin runtime.Pinner
			defer pin.Unpin()
			var alpha, beta uintptr
			switch {
			case s.DeviceScales != nil:
				alpha, beta = s.DeviceScales.ptr, s.DeviceScales.ptr+uintptr(s.Compute.scaleSize())
			case s.Compute == Compute64F:
				ab := &[2]float64{s.Alpha, s.Beta}
				pin.Pin(ab)
				alpha, beta = uintptr(unsafe.Pointer(&ab[0])), uintptr(unsafe.Pointer(&ab[1]))
			case s.Compute == Compute32I:
				ab := &[2]int32{int32(s.Alpha), int32(s.Beta)}
				pin.Pin(ab)
				alpha, beta = uintptr(unsafe.Pointer(&ab[0])), uintptr(unsafe.Pointer(&ab[1]))
			default:
				ab := &[2]float32{float32(s.Alpha), float32(s.Beta)}
				pin.Pin(ab)
				alpha, beta = uintptr(unsafe.Pointer(&ab[0])), uintptr(unsafe.Pointer(&ab[1]))
			}
			err = cuda.LtMatmul(lt.h, p.desc, alpha, s.A.ptr, p.a, s.B.ptr, p.b, beta,
				s.C.ptr, p.c, s.D.ptr, p.d, &p.algo.Algo, ws, wsSize, stream)
			if err != nil && s.Algorithm != nil {
				delete(lt.plans, s.key())
				err = errors.Join(err, p.destroy())
			}
			return err
		})
	}
	var na *noAlgorithm
	if errors.As(err, &na) {
		return used, fmt.Errorf("gpu: Matmul: %w for %v (%s)", ErrNoAlgorithm, s, na.why)
	}
	if err != nil {
		return used, fmt.Errorf("gpu: Matmul %v: %w", s, err)
	}
	return used, nil
}

type noAlgorithm struct{ why string }

func (e *noAlgorithm) Error() string { return "cuBLASLt has no algorithm (" + e.why + ")" }
