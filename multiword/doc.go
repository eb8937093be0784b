/*
Package multiword multiplies matrices in multiword arithmetic on block FMA
units: A and B are split into p words of a low-precision format and the
product is assembled from products of words computed by a mixed-precision
block FMA (a tensor core) — Algorithm 2.1 of Fasi, Higham, Lopez, Mary and
Mikaitis (multiword-matmul-tensor-cores.txt), with the FABsum summation of
their section 4.4 and the narrow-range scaling of Mary and Mikaitis
(narrow-range-matmul-slides.txt).

# Splitting

Split expands every entry x into words w_1, ..., w_p of the low format,
each the rounded remainder of the ones before (eq. 2.2):

	w_i = fl_low(x − Σ_{k<i} w_k),   |x − Σ w_i| ≤ u_low^p |x|,

so two fp16 words carry about 22 bits and three bf16 words 24. With
a word shift t, word i is stored multiplied by 2^(t·i) (t = p of the low
format divides by u^i as the slides do), which keeps the low words of small
entries out of the subnormal range; the products are scaled back exactly.

# Scaling

A multiword format has the precision of p words but the range of one. The
narrow-range algorithm multiplies row i of A by λ_i and column j of B by μ_j,
powers of two, so that each row's and column's largest magnitude lies in
(θ/2, θ] with θ = min(f_max, sqrt(F_max/n)): the words do not overflow the
low format (f_max) and a sum of n products does not overflow the
accumulator (F_max). C is divided by λ_iμ_j at the end (RowScales,
ColScales, Plan.Scale).

# Plans and variants

A Plan fixes the words' format and number, the accumulator (Acc, the unit's
output format) and the returned format (Out), the products A_iB_j to form
(by default the p(p+1)/2 with i+j ≤ p+1, smallest first; the dropped ones
change the error only at order u_low^p), and the summation:

	plain      each product accumulated into C by the block FMA, C its addend
	           (Algorithm 4.1, cuBLAS-like)
	FABsum-v1  blocks of b along the inner dimension summed by the unit from
	           zero, the block sums added to C in Acc with round-to-nearest
	FABsum-v2  the block sums added in fp64, C rounded at the end
	pair       the block sums added into a TwoSum pair (hi, lo) of Acc values,
	           C = fl(hi + lo): compensated, nearly v2's accuracy in fp32
	           arithmetic, which GPUs run much faster than fp64
	Alg. 4.4   FABsum for A_1B_1 only (FABsumFirstOnly), plain for the rest
	joint      FABsum with all products of a block in one accumulator,
	           interleaved k-step by k-step or each over the block in turn
	           (JointOrder), one promotion per block (FABsumJoint; no word
	           shift), as a GPU kernel with one accumulator per output runs it

Lookup builds the named variants of Table 2.1, the fp8 ones
(fp16, double-fp16, bf16, double-bf16, triple-bf16, tf32, double-tf32 alias
3xtf32, e4m3 and e5m2 with one to four words, fp32) and the fused GPU
kernels' defaults, joint FABsum by products with fp64 (v2) summation,
blocks of 32 and groups (double-fp16-fabsum, scaled; triple-bf16-fabsum;
3xtf32-fabsum) with options:

	plan, err := multiword.Lookup("double-fp16:sum=v2,b=256,first=on")
	plan, err = multiword.Lookup("double-fp16:scale=on,sum=pair,b=64,joint=on")

# Engines

An Engine runs a plan: Reference computes each product of words as a
float64 dot product rounded once to Acc (fast); Model sends every block
FMA through an mma unit, bit for bit as the modelled hardware ("model:v100",
"model:a100", "model:ieee"); a GPU engine registers itself from package gpu.
Open finds them by name. Every engine passes the conformance suite in
multiwordtest: shapes, exact cases, the a-priori bound, clear errors for
empty or short matrices, IEEE propagation of NaN and Inf, and overflow and
underflow with and without scaling.

	e, _ := multiword.Open("model:v100")
	err := e.Multiply(plan, m, n, k, a, b, c) // C = A·B, row-major

# Bounds

Plan.Bound is the a-priori componentwise bound |C − Ĉ| ≤ c·|A||B| of the
plan's own schedule of roundings (to first order Theorem 2.1's
(p+1)u_low^p + n·u_high, or the FABsum bounds), for a unit described by a
UnitError: ModelError derives one from a model's parameters (a truncating
adder such as V100's errs up to 3·2^-24 per product, not 2^-24), and
ReferenceError is the reference engine's. Package bound has the paper's
formulas in their printed form.
*/
package multiword
