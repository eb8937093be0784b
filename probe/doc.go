// Package probe measures the numerical features of a matrix-multiply unit —
// a model or real hardware — through the mma.Unit interface only, and fits
// the generic mma model to them.
//
// The tests are those of numerical-behavior-tensor-cores.txt, turned from
// pass/fail checks for one GPU into measurements: for each feature (rounding
// of the sum, carry bits, products per block, extra alignment bits,
// normalisation, where c is added, exact products, subnormals) the probe runs
// inputs that discriminate between the feature's possible values and keeps
// the values whose generic model predicts every result the unit returned, the
// other features held at their current estimates. Features interact (the
// carry test rounds, the rounding test carries), so the inference makes up to
// three passes. The report keeps every input, the unit's result and each
// candidate's prediction, and says when a feature could not be observed (all
// candidates agree) or when no candidate explains the results.
package probe
