/*
Package format simulates low-precision floating-point arithmetic: it rounds
float64 (and float32) values to any binary floating-point format of at most
53 bits of precision, in every rounding mode, and encodes and decodes their bit
patterns.

# Formats

A Format is a set of numbers ±m·2^(e-p+1) with an integer significand m of p
bits (the implicit bit counted) and an exponent Emin ≤ e ≤ Emax, together with
what happens below and above that range:

  - subnormals on: gradual underflow, m < 2^(p-1) at e = Emin; off: values below
    2^Emin round as if 0 and 2^Emin were their only neighbours
    (Format.WithSubnormals);
  - the special codes (Specials): IEEE ±Inf and NaNs; NaNOnly (OCP E4M3, no
    Inf, one NaN pattern); NoSpecials (OCP MX FP6/FP4); P3109Extended and
    P3109Finite (one NaN, no negative zero, ±Inf only when extended);
    Unsigned (OCP MX's E8M0 scale: powers of two, no sign, no zero, one
    NaN);
  - overflow: to ±Inf where the format has Inf, to NaN where it has only NaN,
    to ±MaxFinite where it has neither or where saturation is asked for
    (Format.WithSaturation). As in IEEE 754, modes that round toward zero for
    the value's sign give ±MaxFinite, never Inf.

The predefined formats are fp64, fp32, fp16, bf16, TF32, the
OCP 8-bit formats E4M3 and E5M2, the OCP MX element types E2M3, E3M2 and E2M1,
the MX scale E8M0, and the IEEE P3109 8-bit formats K8P3, K8P4 and K8P5; P3109 builds any other
KkPp, New any custom format, and Parse finds them all by name:

	f, err := format.Parse("e4m3")                    // or "fp16", "p3109-k8p4-finite", ...
	g, err := format.Parse("custom:p=5,emin=-6,emax=7") // IEEE-like, 1+4+4 = 9 bits
	h := format.Binary16.WithSubnormals(false)         // its Name is "fp16+ftz"

# Rounding

Round takes a deterministic Mode; RoundRand any mode, with a random Source for
the stochastic ones (seed it, e.g. rand.NewPCG(seed, 0), for reproducible
runs). RoundSlice rounds whole slices on all cores:

	y := format.E4M3.Round(460, format.NearestEven)    // 448
	z := format.E4M3.Round(480, format.NearestEven)    // NaN: above 448 + 16
	s := format.BFloat16.RoundRand(x, format.Stochastic, rand.New(rand.NewPCG(1, 2)))
	format.Binary16.RoundSlice(dst, src, format.NearestEven, nil)

The modes: NearestEven, NearestAway, NearestTowardZero (the three ways of
breaking ties), TowardZero, Up, Down, AwayFromZero, ToOdd, and the stochastic
Stochastic (up with probability equal to the distance from the value below,
as a fraction of the gap), StochasticHalf (up or down with probability 1/2
when inexact) and StochasticBits(n), which uses n random bits as in IEEE P3109
(a fraction η rounds up iff ⌊η·2^n⌋ + R ≥ 2^n, R uniform in [0, 2^n)).

ToOdd picks, of the two neighbours, the one whose significand at the
neighbours' spacing is odd; zero counts as even, so with subnormals off a tiny
inexact value goes to 2^Emin.

# How it works

Within the normal range, rounding is integer arithmetic on the float64 bit
pattern: add an increment that depends on the mode (and on random bits for the
stochastic modes) and clear the 53-p dropped bits; a carry out of the fraction
moves to the next binade by itself. Below 2^Emin the grid is fixed point
(spacing 2^(Emin-p+1)): the same integer rounding on the significand
shifted by the exponent's distance, or in the AVX2 kernel one float64 add
of 2^(qe+52) (roundSub, slice.go). Everything else (overflow, Inf, NaN)
takes a slower general path that scales |x| so that the last kept place is
1 and chooses between the integer neighbours. The tests check every path
against math/big.Float and by exhaustive enumeration of every format of at
most 16 bits.

# Block-scaled formats

BlockFormat adds the OCP Microscaling (MX) v1.0 formats MXFP8, MXFP6 and
MXFP4 (32 elements sharing a power-of-two E8M0 scale) and NVIDIA's NVFP4
(16 e2m1 elements sharing an e4m3 scale, under a float32 per-tensor scale):

	b := format.MXFP4
	scales := b.Quantize(dst, nil, src, rowLen, 1, format.ScaleSpec, format.NearestEven, nil, nil)

docs/formats.md gives the sources and the choices made where they leave
one open.
*/
package format
