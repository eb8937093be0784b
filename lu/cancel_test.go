package lu

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/multiword"
)

func randMatrix(n int) []float64 {
	rng := rand.New(rand.NewPCG(1, 2))
	a := make([]float64, n*n)
	for i := range a {
		a[i] = rng.Float64() - 0.5
	}
	return a
}

// A context ended during an update stops the factorization inside that
// update (SIGTERM on a 40000×40000 solve waited for a whole block step,
// minutes), with ctx's error, whatever the form's arithmetic.
func TestFactorCancelledInsideUpdate(t *testing.T) {
	for _, name := range []string{"fp64", "tc32", "double-fp16"} {
		form, err := ParseForm(name, "v100", "")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		inner, rows := form.update, 0
		form.update = func(ctx context.Context, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) error {
			cancel() // the signal arrives as the first update starts
			// Count the rows the update still computes: the first band at most.
			before := append([]float64(nil), c[:(m-1)*ldc+n]...)
			err := inner(ctx, m, n, k, a, lda, b, ldb, c, ldc)
			for i := 0; i < m; i++ {
				for j := 0; j < n; j++ {
					if c[i*ldc+j] != before[i*ldc+j] {
						rows++
						break
					}
				}
			}
			return err
		}
		_, err = Factor(ctx, form, 200, randMatrix(200), Options{NB: 32})
		if !errors.Is(err, context.Canceled) || rows > bandRows {
			t.Errorf("%s: err %v after %d updated rows; want context.Canceled within %d rows", name, err, rows, bandRows)
		}
	}
}

// Bands give the multiword update the same bits as one call.
func TestMultiwordUpdateBands(t *testing.T) {
	p, err := multiword.Lookup("double-fp16-fabsum")
	if err != nil {
		t.Fatal(err)
	}
	m, n, k := 2*bandRows+7, 40, 32
	a, b, c := randMatrix(m)[:m*k], randMatrix(n)[:k*n], make([]float64, m*n)
	if err := multiwordUpdate(p, multiword.Reference{})(context.Background(), m, n, k, a, k, b, n, c, n); err != nil {
		t.Fatal(err)
	}
	prod := make([]float64, m*n)
	if err := (multiword.Reference{}).Multiply(p, m, n, k, a, b, prod); err != nil {
		t.Fatal(err)
	}
	for i := range c {
		if want := p.Out.Round(-prod[i], format.NearestEven); c[i] != want {
			t.Fatalf("entry %d: %g, one call gives %g", i, c[i], want)
		}
	}
}

func TestErrorsCancelled(t *testing.T) {
	a := randMatrix(50)
	fa, err := Factor(context.Background(), Scalar(format.Binary64), 50, a, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := fa.ErrorsContext(ctx, a); !errors.Is(err, context.Canceled) {
		t.Errorf("ErrorsContext with an ended context: %v", err)
	}
	if e, err := fa.ErrorsContext(context.Background(), a); err != nil || e.Normwise > 1e-15 {
		t.Errorf("ErrorsContext: %+v, %v", e, err)
	}
}
