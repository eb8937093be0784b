/*
Package bound computes a-priori error bounds of multiword matrix
multiplication: how far the computed Ĉ can be from C = AB, given only the
formats, the number of words, the inner dimension n and how the products are
summed. They tell which arithmetic reaches which accuracy before anything is
run, and what an experiment's error should be compared with.

# Unit roundoffs

A format of precision p (significand bits, the implicit one counted) rounds to
nearest with a relative error of at most u = 2^-p; a directed or stochastic
rounding may miss by a whole spacing, u = 2^(1-p) (U). γ_n = nu/(1 − nu)
(Gamma) bounds the accumulated relative error of n roundings. The paper's
u_high is that of the block FMA's accumulation: fp32 with round to
nearest gives 2^-24, but NVIDIA's tensor cores round toward zero, which makes
it 2^-23 and, worse, makes the errors of a long sum of same-signed terms all
point one way (see Probabilistic below).

# Multiword bounds (Multiword)

Multiword matrix multiplication (Fasi, Higham, Lopez, Mary and Mikaitis,
multiword-matmul-tensor-cores.txt, Algorithm 2.1) splits A and B into p
words of a low precision, A = A_1 + ... + A_p + ΔA with |ΔA| ≤ u_low^p|A|
(2.3), and sums the products A_i·B_j computed by a block FMA that accumulates
in a high precision u_high. Its bounds are componentwise,

	|C − Ĉ| ≤ c·|A||B|,

to be compared with the componentwise relative error
max_ij |C − Ĉ|_ij / (|A||B|)_ij of eq. (3.1). The constant c has two parts:
the splitting (the words represent A and B to u_low^p) and the accumulation
(n products, plus the p² − 1 additions of the products, each in u_high):

  - all p² products, eq. (2.5): c = 2u_low^p + u_low^2p + γ_{n+p²-1}(u_high)·Σ_{i,j}|A_i||B_j|/(|A||B|);
  - only those with i+j ≤ p+1, p(p+1)/2 of them, eq. (2.7), which to first
    order is Theorem 2.1 (2.8): c ≈ (p+1)u_low^p + (n+p²−1)u_high.

Multiword.Bound evaluates the full expressions, not only their first order
(with a correction to the count of products in (2.7), see Multiword.Bound),
and lists their terms. The dominant term, as in Table 2.1 (Table21), keeps n
as a symbol: for fp16 words and fp32 accumulation, one word gives
2 × 2^-11 + n × 2^-24 and two words n × 2^-24 — double-fp16 is as accurate
as fp32, whose bound is also n × 2^-24. For bf16, two words give
3 × 2^-16 + n × 2^-24 and three words n × 2^-24.

# FABsum (section 4.4)

With round toward zero the accumulation term n·u_high is attained, not just
a worst case, because every rounding of a growing sum of positive terms goes
the same way. FABsum cuts the n products into blocks of b: each block is one
block-FMA dot product, the block sums are added in the high precision
(FABsumV1: (b + n/b)u_high to first order) or in fp64 (FABsumV2:
b·u_high + (n/b)u_64). FABsumPair adds them into a TwoSum pair (hi, lo) of
high-precision values, compensated summation (Sum2 of Ogita, Rump and
Oishi): b·u_high + u_high + (n/b)²u_high², nearly v2's accuracy without
fp64, which GPUs run slowly. Smaller b lowers the bound and the speed.

# Probabilistic bounds (section 4.3)

If the rounding errors are independent random variables of mean zero, the
constants n, b and n/b may be replaced, with high probability, by their
square roots (Higham and Mary): √n × 2^-24 instead of n × 2^-24. This is a
heuristic, not a bound. Round to nearest usually behaves so and stochastic
rounding always does; round toward zero on data of one sign never does,
which is why double-fp16 on tensor cores is less accurate than fp32 in the
paper's experiments although both have the bound n × 2^-24.

# Narrow-range formats (NarrowRange)

fp8, fp6 and fp4 formats have so few exponents that underflow and overflow
matter as much as rounding. Mary and Mikaitis (narrow-range-matmul-slides.txt,
Part 4) scale the rows of A and the columns of B by powers of two so that
their largest entries lie in (θ/2, θ], with θ = min(f_max, √(F_max/n))
(Theta) so that neither the inputs nor any sum of n products overflows, and
bound the error normwise,

	‖Ĉ − AB‖_∞ ≲ c·‖A‖_∞‖B‖_∞,

with c = 2u + nU + 4n²θ^-1·g_min + 4n²θ^-2·G_min for one word and
(p+1)u^p + 4nu^{p-1}θ^-1·g_min + (n+p²)U + 2p(p+1)n²θ^-2·G_min for p words,
where g_min and G_min (GMin) are the largest absolute errors of underflow in
the input and in the accumulation format: f_min/2 without subnormals, u·f_min
with them. Compare it with the slides' metric ‖Ĉ − C‖_∞/(‖A‖_∞‖B‖_∞).
A smaller θ is allowed (the slides round 127.97 down to 127); a larger one
is refused: the analysis assumes that nothing overflows, which θ ≤ f_max
and nθ² ≤ F_max guarantee.
*/
package bound
