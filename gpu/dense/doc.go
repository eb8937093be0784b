// Package dense solves dense linear systems A·x = b on one NVIDIA GPU to
// fp64 accuracy: LU factors made on the tensor cores, refined in fp64 by
// package solve's iterative refinement and GMRES-IR, with A, the factors
// and GMRES's basis on the device.
//
// # Solve: the policy
//
// Solve chooses for the caller. Given no forms (Policy.Forms empty) it
// factors first in fp16-store, the LU without pivoting held in fp16 whose
// growth check says whether A needs pivoting; it then goes on, when a
// factorization fails or refinement does not converge (every form but
// the last refines for a budget of its factorization's time), to
// fp32-accurate forms without pivoting, or, where the check failed, to
// PivotedForms. The Report lists every attempt with its form, pivoting
// (and why), times and refinement:
//
//	e, _ := gemm.SharedEngine(0)
//	s := dense.New(e)
//	sys, _ := s.GenerateSystem(32768, "centered", 1)
//	defer sys.Free()
//	x, rep, err := dense.Solve(ctx, sys, b, dense.Policy{})
//	final := rep.Final() // final.Form.Name, final.Pivoting, final.Refine ...
//
// # The pieces
//
// A System holds A on the device in binary64 (NewSystem copies one;
// GenerateSystem, GenerateSpec and GenerateRandsvd draw one there, the
// first two matgen's matrices bit for bit, hpl-mxp and fasi-higham with
// their options included). System.Factor makes
// LU factors in an LUForm: fp16-store (Half: HPL-MxP's LU, A scaled by
// powers of two into fp16, the diagonal blocks by sgetrf, their inverted
// triangles applied as fp16 products, the updates fp16 products with fp32
// accumulation stored back in fp16), cuSOLVER's getrf in fp64 or fp32, or
// a blocked LU whose pivoted panels are cuSOLVER's getrf or our recursive panel
// (LUForm.Panels) and whose trailing updates run on the tensor cores:
// TC32 forms on cuBLASLt from copies of L₂₁ and U₁₂ rounded to fp16, bf16
// or TF32, multiword forms on gpu/gemm's fused FABsum kernel, and the
// Ozaki forms (ozaki-int8x5 ...), held in fp64, on the int8 tensor cores:
// L₂₁'s rows and U₁₂'s columns cut into 7-bit digits whose products
// cuBLASLt sums exactly in int32. The next panel is factored on a second
// stream beside the update (the look-ahead), and L's row interchanges are
// applied once, at the end.
//
// Pivoting (LUForm.Pivoting): PivotAuto, the zero value, means for
// fp16-store no pivoting with the growth check on every panel (the
// largest multiplier and |U|, measured on the device; a GrowthError,
// wrapping ErrNeedsPivoting, names the panel that failed), and for the
// other forms none when A is strictly diagonally dominant (one pass over
// A), else a random butterfly transform for fp64 and partial pivoting for
// the rest; Factors.Pivoting says what was done and why.
//
// Factors and System are what package solve's refinement needs
// (solve.Factorization, solve.Operator), and Factors keeps GMRES's basis
// on the device (solve.KrylovFactorization), so a caller may also factor
// and refine by hand:
//
//	f, _ := dense.ParseLUForm("double-fp16-fabsum")
//	fa, _ := sys.Factor(f)
//	x, r, err := solve.RefineOperator(ctx, sys, b, fa, solve.Options{})
//
// System.Baseline runs cuSOLVER's getrf+getrs and its gesv refinement
// solvers on the same A, for comparison.
package dense
