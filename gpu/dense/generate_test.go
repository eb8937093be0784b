package dense

import (
	"math"
	"testing"

	"github.com/mwmm/mwmm/matgen"
)

// GenerateSystem draws matgen's matrices bit for bit: the device's
// generator kernels are matgen's formulas (their coefficients are checked
// against lu.cu in package matgen). n = 300 is not a multiple of a block
// or warp; 1 and 2 are the edges of diagdom's row sums.
func TestGenerateSystemMatchesCPU(t *testing.T) {
	e := engineGPU(t)
	for _, kind := range MatrixKinds {
		for _, n := range []int{1, 2, 300} {
			for _, seed := range []uint64{1, matgen.Seed(1, "A")} {
				want, err := matgen.Generate(kind, n, seed)
				if err != nil {
					t.Fatal(err)
				}
				s, err := e.GenerateSystem(n, kind, seed)
				if err != nil {
					t.Fatalf("%s n=%d: %v", kind, n, err)
				}
				cm := make([]float64, n*n)
				err = e.d.Download(cm, s.a)
				s.Free()
				if err != nil {
					t.Fatal(err)
				}
				bad := 0
				for i := range n {
					for j := range n {
						if got, w := cm[i+j*n], want[i*n+j]; math.Float64bits(got) != math.Float64bits(w) {
							if bad++; bad <= 5 {
								t.Errorf("%s n=%d seed %d: (%d, %d) = %x on the GPU, %x on the CPU", kind, n, seed, i, j, got, w)
							}
						}
					}
				}
				if bad > 0 {
					t.Errorf("%s n=%d seed %d: %d of %d entries differ", kind, n, seed, bad, n*n)
				}
			}
		}
	}
	if _, err := e.GenerateSystem(4, "randsvd", 1); err == nil {
		t.Error("GenerateSystem drew randsvd, which is GenerateRandsvd's")
	}
}
