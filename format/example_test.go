package format_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/mwmm/mwmm/format"
)

func ExampleFormat_Round() {
	for _, x := range []float64{460, 464, 465, 1e6} {
		fmt.Println(x, "→", format.E4M3.Round(x, format.NearestEven))
	}
	sat := format.E4M3.WithSaturation(true)
	fmt.Println(sat.Name(), sat.Round(1e6, format.NearestEven))
	fmt.Println(format.Binary16.Round(1.0/3, format.TowardZero), format.Binary16.Round(1.0/3, format.Up))
	// Output:
	// 460 → 448
	// 464 → 448
	// 465 → NaN
	// 1e+06 → NaN
	// e4m3+sat 448
	// 0.333251953125 0.33349609375
}

func ExampleFormat_RoundRand() {
	rng := rand.New(rand.NewPCG(1, 2))
	f := format.Binary16
	x := 1 + 0.25*0x1p-10 // a quarter of the way from 1 to the next fp16
	ups := 0
	for range 10000 {
		if f.RoundRand(x, format.Stochastic, rng) > 1 {
			ups++
		}
	}
	fmt.Println(ups > 2300 && ups < 2700)
	// Output: true
}

func ExampleFormat_Encode() {
	f, _ := format.Parse("p3109-k8p3")
	for _, x := range []float64{1, -1, 49152} {
		code, _ := f.Encode(x)
		fmt.Printf("%v %#02x\n", x, code)
	}
	v, _ := f.Decode(0x80)
	fmt.Println(v)
	// Output:
	// 1 0x40
	// -1 0xc0
	// 49152 0x7e
	// NaN
}

func ExampleParse() {
	f, err := format.Parse("custom:p=5,emin=-6,emax=7")
	fmt.Println(f.Bits(), f.MaxFinite(), err == nil)
	_, err = format.Parse("fp7")
	fmt.Println(err != nil)
	// Output:
	// 9 248 true
	// true
}

// MXFP8 quantizes a block of values that share one power-of-two scale: the
// block's largest magnitude 1000 lies in [2^9, 2^10), so the scale is
// 2^(9-8) = 2 (E8M0 code 128); 500/2 clips to e4m3's 448, and 2^-10/2 is
// below half of e4m3's smallest subnormal.
func ExampleBlockFormat_Quantize() {
	src := []float64{1000, 1, 0x1p-10, 500}
	dst := make([]float64, len(src))
	b := format.MXFP8
	scales := b.Quantize(dst, nil, src, 0, 1, format.ScaleSpec, format.NearestEven, nil, nil)
	fmt.Println(dst, scales[0].ScaleCode, scales[0].Scale)
	b.Quantize(dst, nil, src, 0, 1, format.ScaleNoClip, format.NearestEven, nil, nil)
	fmt.Println(dst)
	// Output:
	// [896 1 0 512] 128 2
	// [1024 1 0 512]
}
