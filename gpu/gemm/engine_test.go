package gemm

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/multiword"
	"github.com/mwmm/mwmm/multiword/multiwordtest"
)

// engineGPU is the shared engine on device 0; it skips without a GPU.
func engineGPU(t *testing.T) *Engine {
	t.Helper()
	if err := gpu.Available(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	e, err := SharedEngine(0)
	if err != nil {
		t.Fatalf("SharedEngine: %v", err)
	}
	return e
}

func TestEngineRegistered(t *testing.T) {
	if _, err := multiword.Open("gpu:x"); err == nil || !strings.Contains(err.Error(), "device index") {
		t.Errorf("Open(gpu:x) = %v, want a device-index error", err)
	}
	if gpu.Available() != nil {
		if _, err := multiword.Open("gpu"); err == nil {
			t.Error("Open(gpu) succeeded without a GPU")
		}
	}
}

// The conformance suite: exact small-integer products, specials, the
// a-priori bound on (0,1] data, bad arguments; for fp16 (the suite's
// plans: plain, all products, FABsum v1/v2/first, scaling) and the bf16
// and tf32 variants.
func TestEngineConformance(t *testing.T) {
	e := engineGPU(t)
	var plans []multiword.Plan
	for _, v := range []string{"bf16", "double-bf16", "triple-bf16", "tf32", "double-tf32", "triple-bf16:products=all",
		"e4m3", "double-e4m3", "triple-e5m2"} {
		p, err := multiword.Lookup(v)
		if err != nil {
			t.Fatal(err)
		}
		plans = append(plans, p)
	}
	multiwordtest.Run(t, e, multiwordtest.Options{Plans: plans})
}

// The fast path and the driver path (FABsum with one block of all of k is
// the same arithmetic) agree, and odd shapes come out whole: the fast path
// poisons C with NaN.
func TestEngineFastMatchesDrive(t *testing.T) {
	e := engineGPU(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, s := range [][3]int{{17, 33, 129}, {1, 70, 3}, {65, 1, 1000}} {
		m, n, k := s[0], s[1], s[2]
		a, b := make([]float64, m*k), make([]float64, k*n)
		for i := range a {
			a[i] = 0.5 - rng.Float64()
		}
		for i := range b {
			b[i] = 0.5 - rng.Float64()
		}
		for _, v := range []string{"double-fp16", "double-bf16", "double-tf32"} {
			p, _ := multiword.Lookup(v)
			fast := make([]float64, m*n)
			if err := e.Multiply(p, m, n, k, a, b, fast); err != nil {
				t.Fatal(err)
			}
			cw, _ := multiword.Errors(m, n, k, a, b, fast)
			if math.IsNaN(cw) || math.IsInf(cw, 0) || cw > 1e-5 {
				t.Errorf("%s %d×%d×%d: componentwise error %g", v, m, n, k, cw)
			}
		}
	}
}

func TestBenchSmall(t *testing.T) {
	e := engineGPU(t)
	ts, err := e.Time(512, 3, Methods(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range ts {
		if tm.Total <= 0 || tm.Products <= 0 || tm.Products > tm.Total {
			t.Errorf("%s: total %v, products %v", tm.Method, tm.Total, tm.Products)
		}
		// The fused kernels' passes (scans, scalings, the wgmma split) run
		// before the mark: the product kernel alone takes less.
		if strings.Contains(tm.Method, "fabsum") && tm.Products >= tm.Total {
			t.Errorf("%s: products %v, not less than the total %v", tm.Method, tm.Products, tm.Total)
		}
	}
	acc, err := e.Accuracy(64, 4096, 1, 9, Methods())
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]float64{}
	for _, a := range acc {
		byName[a.Method] = a.Componentwise
		t.Logf("%-28s %.3g", a.Method, a.Componentwise)
	}
	// Zero-mean data: two fp16 words beat one by far, and sgemm is fp32-accurate.
	if !(byName["double-fp16"]*10 < byName["fp16"]) || byName["sgemm"] > 1e-5 {
		t.Errorf("double-fp16 %g, fp16 %g, sgemm %g", byName["double-fp16"], byName["fp16"], byName["sgemm"])
	}
}

// TestMain registers the engine and units, as cmd/mwmm does.
func TestMain(m *testing.M) {
	Register()
	os.Exit(m.Run())
}
