// Package lu factors square matrices, P·A = L·U, the way a GPU whose
// Schur-complement updates run on tensor cores does, bit for bit through
// the models of package mma.
//
// The algorithm is the right-looking blocked LU with partial pivoting of
// Blanchard, Higham, Lopez, Mary and Pranesh, "Mixed precision block fused
// multiply-add: error analysis and application to GPU tensor cores", SIAM
// J. Sci. Comput. 42(3), C124–C141, 2020 (https://doi.org/10.1137/19M1289546,
// https://hal.science/hal-02491076), section 4. For each block column of
// width nb:
//
//  1. the panel (rows k0.., columns k0..k0+nb−1) is factored unblocked with
//     partial pivoting (or none, Options.Pivot), every division, product
//     and subtraction rounded to nearest in the storage format; row swaps
//     apply to whole rows;
//  2. U12 = L11⁻¹·A12, a triangular solve in the storage format;
//  3. A22 ← A22 − L21·U12, in the form's arithmetic.
//
// A Form says what step 3 is and what the storage format is:
//
//	form      storage   update C ← C − L21·U12
//	tc16      fp16  block FMA (mma.Unit) with fp16 output: TC16
//	tc32      fp32  block FMA with fp32 output; L21, U12 rounded to fp16: TC32
//	fp16,bf16 the same  plain arithmetic, fl(c − fl(l·u)) term by term
//	fp32,fp64 the same  plain arithmetic (the machine's own operations)
//	VARIANT   fp32  a multiword plan (double-fp16-fabsum, ...) forms L21·U12,
//	                    then c ← fl32(c − p)
//
// Any unit can serve a block-FMA form: a preset (v100, t4, a100, h100),
// the IEEE block FMA, or a spec with overrides (mwmm help mma). Only the
// updates differ between forms, so the difference between tc16 and tc32 is
// the unit's output format, as on the V100.
//
// Form.Bound gives the a-priori componentwise bound
// |P·fl(A) − L̂Û| ≤ c·|L̂||Û| (bound.LU) from the unit's error model, and
// Factors.Errors measures the same quantity with double-word arithmetic;
// the tests check the one against the other for every form. Package solve
// refines the solution of A·x = b to fp64 accuracy from these factors.
package lu
