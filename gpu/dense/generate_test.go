package dense

import (
	"fmt"
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
				sameMatrix(t, s, want, fmt.Sprintf("%s n=%d seed %d", kind, n, seed))
			}
		}
	}
	if _, err := e.GenerateSystem(4, "randsvd", 1); err == nil {
		t.Error("GenerateSystem drew randsvd, which is GenerateRandsvd's")
	}
}

// sameMatrix checks, bit for bit, that the system's A (column-major on
// the device) is want (row-major), and frees the system.
func sameMatrix(t *testing.T, s *System, want []float64, label string) {
	t.Helper()
	n := s.n
	cm := make([]float64, n*n)
	err := s.e.d.Download(cm, s.a)
	s.Free()
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i := range n {
		for j := range n {
			if got, w := cm[i+j*n], want[i*n+j]; math.Float64bits(got) != math.Float64bits(w) {
				if bad++; bad <= 5 {
					t.Errorf("%s: (%d, %d) = %x on the GPU, %x on the CPU", label, i, j, got, w)
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d entries differ", label, bad, n*n)
	}
}
