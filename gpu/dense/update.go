package dense

import (
	"fmt"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/multiword"
)

// Precision is the floating-point format a factorization works in.
type Precision int

const (
	FP32 Precision = iota + 1 // binary32 (the zero value is no precision)
	FP64                      // binary64
	FP16                      // binary16: the Half form's storage
)

// Size is an element's size in bytes.
func (p Precision) Size() int {
	switch p {
	case FP64:
		return 8
	case FP16:
		return 2
	}
	return 4
}

func (p Precision) String() string {
	switch p {
	case FP32:
		return "fp32"
	case FP64:
		return "fp64"
	case FP16:
		return "fp16"
	}
	return fmt.Sprintf("Precision(%d)", int(p))
}

// double says whether cuBLAS and cuSOLVER take their D (not S) routines.
func (p Precision) double() bool { return p == FP64 }

// suffixed names a kernel of lu.cu compiled for both precisions
// (copy_f32, copy_f64).
func (p Precision) suffixed(name string) string {
	if p == FP64 {
		return name + "_f64"
	}
	return name + "_f32"
}

// variant names the fp64 variant (name_f64) of an fp32 kernel of lu.cu
// whose fp32 one has no suffix (gather_rows).
func (p Precision) variant(name string) string {
	if p == FP64 {
		return name + "_f64"
	}
	return name
}

// An Update is how an LUForm factors: one of Getrf, TC32, Fused, Ozaki
// and Half. Its String is the form's name as ParseLUForm reads it.
type Update interface {
	// Working is the precision the factorization holds the matrix in.
	Working() Precision
	// Blocked says whether it is our blocked LU (not cuSOLVER's getrf).
	Blocked() bool
	String() string
	update()
}

// Getrf is cuSOLVER's getrf on the whole matrix, in fp64 (dgetrf) or
// fp32 (sgetrf).
type Getrf struct{ Precision Precision }

// TC32 is the blocked LU in fp32 whose trailing updates round L₂₁ and
// U₁₂ to Words (F16, BF16, or F32 holding TF32 values) and multiply them
// on cuBLASLt with fp32 accumulation.
type TC32 struct{ Words gpu.DataType }

// Fused is the blocked LU in fp32 whose trailing updates run on the
// fused kernel with a multiword FABsum plan. (A Plan holds a slice: a
// Fused does not compare with ==.)
type Fused struct{ Plan multiword.Plan }

// Half is the blocked LU without pivoting held in fp16, HPL-MxP's form:
// A scaled by powers of two into fp16's range, each diagonal block
// factored in fp32, its triangles inverted and applied as products, and
// the trailing updates fp16 products with fp32 accumulation (cuBLASLt),
// stored back in fp16: half the bytes of fp32 storage, at fp16's tensor
// core rate. A growth check on every panel says when the matrix needs
// pivoting (GrowthError).
type Half struct{}

func (Half) Working() Precision { return FP16 }
func (Half) Blocked() bool      { return true }
func (Half) String() string     { return HalfForm }
func (Half) update()            {}

// HalfForm is the Half form's name.
const HalfForm = "fp16-store"

// Ozaki is the blocked LU held in fp64 whose updates run on the int8
// tensor cores, each row of L₂₁ and column of U₁₂ cut into Digits 7-bit
// digits (ozakiTrailing).
type Ozaki struct{ Digits int }

func (u Getrf) Working() Precision { return u.Precision }
func (TC32) Working() Precision    { return FP32 }
func (Fused) Working() Precision   { return FP32 }
func (Ozaki) Working() Precision   { return FP64 }

func (Getrf) Blocked() bool { return false }
func (TC32) Blocked() bool  { return true }
func (Fused) Blocked() bool { return true }
func (Ozaki) Blocked() bool { return true }

func (u Getrf) String() string { return u.Precision.String() }

func (u TC32) String() string {
	if i := tc32Word(u.Words); i >= 0 {
		return tc32Words[i].form
	}
	return "tc32-" + u.Words.String()
}

func (u Fused) String() string { return u.Plan.Name }
func (u Ozaki) String() string { return fmt.Sprintf("%s%d", ozakiPrefix, u.Digits) }

// WordName is the word the updates round to as reports name it: fp16,
// bf16 or TF32.
func (u TC32) WordName() string {
	if i := tc32Word(u.Words); i >= 0 {
		return tc32Words[i].label
	}
	return ""
}

func (Getrf) update() {}
func (TC32) update()  {}
func (Fused) update() {}
func (Ozaki) update() {}
