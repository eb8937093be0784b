/*
Package mma models matrix-multiply units — mixed-precision block FMAs such as
NVIDIA's tensor cores — bit for bit.

A unit computes D = A·B + C on a small tile, with A and B in a low-precision
input format (fp16, bf16, TF32, ...) and C and D in an output format
(fp32, fp16). Vendors document little of how: whether the products
are exact, how the terms are aligned and summed, where and how the sum is
rounded. Fasi, Higham, Mikaitis and Pranesh measured it for V100, T4 and A100
(numerical-behavior-tensor-cores.txt); the model here has a knob for each
feature they found and for those a later unit may need.

# The generic model

Each element of D is a dot product plus an addend. A hardware step fuses
BlockK products; a longer dot product is cut into blocks taken in order, the
rounded result of each block the addend of the next. One step:

	products   a_i·b_i, exact (or rounded to a format)
	alignment  every term shifted onto one grid of p-1+ExtraBits fraction bits
	           (p the accumulator's precision) below an anchor: the largest
	           exponent sum e_a+e_b (AnchorExponents, every NVIDIA preset) or
	           the largest term's leading bit; the bits below dropped or
	           rounded, maybe a sticky bit
	sum        an integer sum with CarryBits bits above the anchor
	           (a carry beyond is lost), normalised only at the end —
	           or pairwise in an Order, normalised after every addition
	rounding   into the accumulator format (round-toward-zero on NVIDIA),
	           then into the output format

V100's adder keeps {3.23} bits (ExtraBits 0), T4's and A100's {3.24}
(ExtraBits 1). Because the terms are aligned to the largest before they are
added, the order does not matter, but the result is not monotonic: raising
c from 1-2^-24 to 1 lowers 1-2^-24 + 4·2^-24 = 1+2^-23 to 1, since the
larger exponent pushes the small terms off the grid.

	u, err := mma.Lookup("v100", "fp16", "fp32")
	d := u.Dot([]float64{1, 1, 1, 1}, []float64{0x1p-24, 0x1p-24, 0x1p-24, 0x1p-24}, 1-0x1p-24) // 1+2^-23

# Presets and custom units

Presets (Presets, Lookup) are v100, t4 and a100 with the parameters the paper
measured, the grid anchored at the largest exponent sum as Khattak and
Mikaitis measured V100 and A100 (docs/hardware/v100-t4-a100.md), and, marked
"not measured" in their Doc, what the sources leave open,
h100 and h200 as mwmm measured them on an H200 (docs/hardware/hopper.md: the
grid anchored at the largest exponent sum, a sign-magnitude adder, fp8 summed
in 14 bits; Open("h100-mma.sync", ...) is the emulated fp8 mma.sync),
ieee, the IEEE block FMA of Blanchard et al. (exact products, accumulation
with round-to-nearest: TC32 and TC16), and exact, one correct rounding per
block. A spec can change any parameter of a preset:

	mma.Lookup("t4:extra=3,sticky=on,accmode=rne", "fp16", "fp32")
	mma.Lookup("ieee:k=1", "fp32", "fp32") // an fp32 FMA chain

or build Params directly and call NewModel.

# Whole products

Gemm multiplies matrices through any Unit, tile by tile with k-blocks
chained in order, on all cores: the engine of simulated experiments. Units
that are not models only need Dots, a batch of independent dot products:
package gpu registers the GPU's instructions with RegisterHardware, and
Open("gpu:wgmma", "e4m3", "fp32") returns one.

# How it is exact

Inputs have at most 26 bits (fp64 inputs are supported as an IEEE FMA
chain only), so products are exact float64 values. The aligned terms are
integers on the grid; their sum is an int64 when the grid is narrow enough
(the tensor-core case) and a big.Int otherwise (exact alignment of terms far
apart). The sum is rounded to odd at 53 bits and then by package format into
the accumulator: rounding to odd keeps enough information for any later
rounding to at most 51 bits to be correct. The tests check the adder against
an independent math/big implementation and the paper's cases.
*/
package mma
