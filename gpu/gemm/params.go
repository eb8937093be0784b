package gemm

import "structs"

// The parameter structs of the kernels with long argument lists, each the
// Go mirror of a struct in kernels/*.cu that the kernel takes by value
// (gpu.ParamsOf). Device addresses are uint64; the C types map as
// long long → int64, int → int32, u32 → uint32, float → float32, double →
// float64. Field names are the C names without underscores, capitalized;
// TestParamsLayout pins names, types and offsets to the C text.

// fusedParams is fused.cu's FusedParams (fused_gemm): C = A·B with
// leading dimensions, vecA/vecB when 16-byte loads are allowed, the scale
// exponents ea, eb (0: none), the words' shift and FABsum's block in
// mma k-steps.
type fusedParams struct {
	_         structs.HostLayout
	A         uint64
	Lda       int64
	B         uint64
	Ldb       int64
	C         uint64
	Ldc       int64
	CRowmajor int32
	M, N, K   int32
	VecA      int32
	VecB      int32
	Ea, Eb    uint64
	ShiftE    int32
	Bsteps    int32
	FirstOnly int32
}

// wgmmaParams is wgmma.cu's WgmmaParams (wgmma_gemm, after the two tensor
// maps): C, the scale exponents, FABsum's block in 32-k items, and the
// presplit words of A and B (0 when splitting in shared memory).
type wgmmaParams struct {
	_              structs.HostLayout
	C              uint64
	Ldc            int64
	CRowmajor      int32
	M, N, K        int32
	Ea, Eb         uint64
	Bitems         int32
	WordsA, WordsB uint64
}

// wgmmaSplitParams is wgmma.cu's WgmmaSplitParams (wgmma_split): for A
// then B, the fp32 matrix, whether k is contiguous, its lines, scale
// exponents, output words, tiles and line flags; then K, the flags' limit
// and mark.
type wgmmaSplitParams struct {
	_        structs.HostLayout
	XA       uint64
	LdA      int64
	KContigA int32
	LinesA   int32
	EA       uint64
	OutA     uint64
	TA       int64
	FlagsA   uint64
	XB       uint64
	LdB      int64
	KContigB int32
	LinesB   int32
	EB       uint64
	OutB     uint64
	TB       int64
	FlagsB   uint64
	K        int32
	Limit    uint32
	Mark     uint32
}

// amaxParams is scan.cu's AmaxParams (line_amax): lines of x (line l,
// element i at l·ls + i·es), the limit in bits, the magnitudes and flags
// out, this call's mark.
type amaxParams struct {
	_      structs.HostLayout
	X      uint64
	Ls, Es int64
	Lines  int32
	Len    int64
	Limit  uint32
	Info   uint64
	Flags  uint64
	Mark   uint32
}

// splitParams is split.cu's SplitParams (split_f32, split_f64): x into up
// to four words of a format, given by its kind, precision, smallest
// exponent and largest value, the residuals scaled by shift.
type splitParams struct {
	_              structs.HostLayout
	X              uint64
	W0, W1, W2, W3 uint64
	N              int64
	Words          int32
	Kind           int32
	Prec           int32
	Emin           int32
	Maxv           float64
	Shift          float64
}

// patchParams is scan.cu's PatchParams (patch_specials): A, B and C with
// row and column strides, the sizes, the line flags and this call's mark.
type patchParams struct {
	_                  structs.HostLayout
	A                  uint64
	Ars, Acs           int64
	B                  uint64
	Brs, Bcs           int64
	C                  uint64
	Crs, Ccs           int64
	M, N               int32
	K                  int64
	RowFlags, ColFlags uint64
	AnyA, AnyB         uint64
	Mark               uint32
	Update             int32
}
