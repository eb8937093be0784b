// Package solve solves A·x = b to fp64 accuracy from LU factors
// computed in low precision (package lu), by iterative refinement.
//
// Each step computes the residual r = b − A·x (in fp64, or in
// double-word arithmetic with Residual DoubleWord, or in fp64 until that
// stops resolving the backward error and in double-word from there with
// AutoResidual), a correction d, and x ← x + d, until the normwise
// backward error
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
//     Û⁻¹L̂⁻¹P·A·d = Û⁻¹L̂⁻¹P·r. Their analysis computes the preconditioned
//     products Û⁻¹L̂⁻¹P·A·v in extended precision u² (u the working
//     precision, fp64 here) and then converges while about
//     κ∞(A)·u_f·u^½ < 1: fp16 factors to κ ≈ 2·10^11. Options.Precond
//     DoubleWord computes them so, in double-word arithmetic (about
//     2^-104); with them in fp64 (the default) GMRES's backward error on
//     the preconditioned system grows to about u·κ∞(A), and the condition
//     becomes about κ∞(A)³·u_f²·u < 1 (Amestoy et al., "Five-precision
//     GMRES-based iterative refinement", SIAM J. Matrix Anal. Appl. 45(1),
//     2024): fp16 factors to κ ≈ 3·10^7 (bound.Refinement gives both).
//     Either needs enough GMRES iterations (MaxInner): where many singular
//     values lie below the factors' error, that takes hundreds or more.
//     This is the method of Haidar, Tomov, Dongarra and Higham,
//     "Harnessing GPU tensor cores for fast FP16 arithmetic to speed up
//     mixed-precision iterative refinement solvers", SC18, 2018.
//
// The products with A, the triangular solves with the factors and GMRES's
// orthogonalisation run in fp64, but for the residual (Residual) and the
// preconditioned products (Precond) when asked for in double-word
// arithmetic. Each Step records the normwise and, with A a matrix, the
// componentwise backward error; Options.Iterate sees every iterate, and
// Options.AllSteps runs MaxIter steps for a convergence history. A solve that does not reach the
// tolerance (stalled, diverged, or out of steps) returns an error wrapping
// ErrNotConverged with its report: never a silent answer.
//
// Refine works on any Factorization, and RefineOperator on any Operator
// too (A·x and ‖A‖∞), so that a GPU engine keeps A and its factors on the
// device (gpu.System, gpu.Factors); System factors on the CPU and refines.
package solve
