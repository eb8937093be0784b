// Package solve solves A·x = b to fp64 accuracy from LU factors
// computed in low precision (package lu), by iterative refinement.
//
// Each step computes the residual r = b − A·x (in fp64, or in
// double-word arithmetic with Residual DoubleWord), a correction d, and
// x ← x + d, until the normwise backward error
//
//	η(x) = ‖b − A·x‖∞ / (‖A‖∞‖x‖∞ + ‖b‖∞)
//
// is at most the tolerance (by default LAPACK dsgesv's √n·2^-53). The
// correction is
//
//   - IR: d = Û⁻¹L̂⁻¹P·r, classical refinement, which converges while
//     κ∞(A)·u_f < 1 for factors of unit roundoff u_f;
//   - GMRES (the default): GMRES-IR of Carson and Higham ("A new analysis of
//     iterative refinement and its application to accurate solution of
//     ill-conditioned sparse linear systems", SIAM J. Sci. Comput. 39(6),
//     2017; "Accelerating the solution of linear systems by iterative
//     refinement in three precisions", SIAM J. Sci. Comput. 40(2), 2018):
//     GMRES in fp64 on the left-preconditioned system
//     Û⁻¹L̂⁻¹P·A·d = Û⁻¹L̂⁻¹P·r, which converges while about
//     κ∞(A)·u_f·u^½ < 1, so fp16 factors serve matrices up to κ ≈ 10^11.
//     This is the method of Haidar, Tomov, Dongarra and Higham,
//     "Harnessing GPU tensor cores for fast FP16 arithmetic to speed up
//     mixed-precision iterative refinement solvers", SC18, 2018.
//
// Every product with A, the triangular solves with the factors and GMRES's
// orthogonalisation run in fp64. A solve that does not reach the
// tolerance (stalled, diverged, or out of steps) returns an error wrapping
// ErrNotConverged with its report: never a silent answer.
//
// Refine works on any Factorization, and RefineOperator on any Operator
// too (A·x and ‖A‖∞), so that a GPU engine keeps A and its factors on the
// device (gpu.System, gpu.Factors); System factors on the CPU and refines.
package solve
