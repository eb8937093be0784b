// Package probe measures the numerical features of a matrix-multiply unit —
// a model or real hardware — through the mma.Unit interface only, and fits
// the generic mma model to them.
//
// The tests are those of numerical-behavior-tensor-cores.txt, turned from
// pass/fail checks for one GPU into measurements. For each feature (exact
// products, subnormals, the accumulator's precision, the rounding of the sum,
// carry bits, products per block, extra alignment bits, normalisation, where
// c is added, the rounding of a narrower output) Run runs inputs that
// discriminate between the feature's values and keeps the values whose
// generic model predicts every result the unit returned, the other features
// held at their current estimates. Features interact, so the inference
// settles them in passes from several starting adders; random dot products
// from the Generators break the remaining ties and judge the fit.
//
// Test values are relative to 1 and to U, the accumulator's ulp of 1, scaled
// per test by a power of two into the unit's formats. Through an output
// narrower than the accumulator each test is also run lifted by half an
// output ulp, so that the output's rounding shows where the accumulator's
// result fell.
//
// The Report keeps every input, the unit's result and each candidate's
// prediction, says when a feature could not be observed, and adds the
// paper's tests with verdicts, a search for non-monotonicity and the fitted
// parameters (Fit builds the model; Report.Spec names it for mma.Lookup).
// See docs/probe.md for each test and docs/probe-reports.md for the report
// of every preset.
package probe
