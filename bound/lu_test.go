package bound

import (
	"math"
	"testing"
)

func near(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Abs(b) }

// Hand-derived: plain fp16 arithmetic of n = 4 products from fp64
// data is (1+u)²(1+u)(1+u)^4 − 1 = (1+u)^7 − 1.
func TestBlockFMAPlain(t *testing.T) {
	u := 0x1p-11
	r, err := BlockFMA{N: 4, K: 1, UStep: u, UOwn: u, UConv: u}.Bound()
	if err != nil {
		t.Fatal(err)
	}
	if want := math.Pow(1+u, 7) - 1; !near(r.Total, want, 1e-12) {
		t.Errorf("total %v, want %v", r.Total, want)
	}
	if r.Dominant != "2 × 2^-11 + 1 × 2^-11 + 4 × 2^-11" {
		t.Errorf("dominant %q", r.Dominant)
	}
}

// TC16 against TC32 on a V100-like unit (k = 4): to first order
// (n/4)·ε16 against 2u16 + (n/4)·ε32, so TC32's bound is far smaller for
// large n and the two meet where n/4·u16 ≈ 2u16.
func TestBlockFMATC16AgainstTC32(t *testing.T) {
	u16, u32 := 0x1p-11, 0x1p-24
	for _, n := range []int{8, 1024, 1 << 16} {
		tc16, _ := BlockFMA{N: n, K: 4, UStep: u16 + 4*u32, UConv: u16}.Bound()
		tc32, _ := BlockFMA{N: n, K: 4, UStep: 4 * u32, UConv: u16}.Bound()
		first16 := 2*u16 + float64(n/4)*(u16+4*u32)
		if first16 < 0.5 && !near(tc16.Total, first16, 0.3) {
			t.Errorf("n=%d: TC16 %v, first order %v", n, tc16.Total, first16)
		}
		if n >= 1024 && !(tc32.Total*50 < tc16.Total) {
			t.Errorf("n=%d: TC32 %v not far below TC16 %v", n, tc32.Total, tc16.Total)
		}
	}
}

func TestLUBound(t *testing.T) {
	u := 0x1p-24
	// Scalar fp32 LU, nb = n: the updates vanish and the panel gives
	// (1−u)^(−(n+1)) − 1 ≈ γ_{n+1}, Higham's Theorem 9.3 up to one rounding.
	r, err := LU{N: 100, NB: 100, UStorage: u, Update: LUUpdate{Chain: u, ChainSteps: 100, Own: u}}.Bound()
	if err != nil {
		t.Fatal(err)
	}
	// (n−1)/nb = 0 updates: own and panel only.
	if want := math.Pow(1-u, -(100+1+1)) - 1; !near(r.Total, want, 1e-9) {
		t.Errorf("total %v, want %v", r.Total, want)
	}
	// Blocked: 1000/32 → 31 updates of 8 steps each.
	r, err = LU{N: 1000, NB: 32, UStorage: u, Update: LUUpdate{Chain: 1e-7, ChainSteps: 8, Conversion: 0x1p-11}}.Bound()
	if err != nil {
		t.Fatal(err)
	}
	first := 31*8*1e-7 + 2*0x1p-11 + 33*u
	if !near(r.Total, first, 0.01) {
		t.Errorf("total %v, first order %v", r.Total, first)
	}
	for _, bad := range []LU{{N: 0, NB: 1}, {N: 4, NB: 0}, {N: 4, NB: 2, UStorage: 1.5}, {N: 4, NB: 2, Update: LUUpdate{ChainSteps: -1}}} {
		if _, err := bad.Bound(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if r, _ := (LU{N: 1 << 20, NB: 1, UStorage: 0x1p-11, Update: LUUpdate{Chain: 0.9, ChainSteps: 1}}).Bound(); !math.IsInf(r.Total, 1) && r.Total < 1e10 {
		t.Errorf("hopeless bound %v should be huge or +Inf", r.Total)
	}
}

// Carson and Higham's Table 3.2: fp16 factors, fp64 working precision:
// LU-IR to κ ≈ 2·10^3, GMRES-IR to κ ≈ 2·10^11.
func TestRefinementLimits(t *testing.T) {
	r := Refinement{UF: 0x1p-11, U: 0x1p-53, UR: 0x1p-53}
	if got := r.MaxKappaIR(); got != 2048 {
		t.Errorf("IR limit %v", got)
	}
	if got := r.MaxKappaGMRES(); !near(got, 2048*math.Pow(2, 26.5), 1e-12) {
		t.Errorf("GMRES-IR limit %v", got)
	}
	// Products in fp64 (u_p = u): (u + uκ)(κ·u_f)² = 1, about
	// κ³·u_f²·u = 1, κ = 2^((53+22)/3) = 2^25 (less by a part in 2^25).
	r.UP = 0x1p-53
	if got := r.MaxKappaGMRES(); !near(got, 0x1p25, 1e-6) {
		t.Errorf("GMRES-IR limit with fp64 products %v, want 2^25", got)
	}
	// Products in u² give back the first form (u²κ/u = 2^-53·κ ≈ 2e-5).
	r.UP = 0x1p-106
	if got := r.MaxKappaGMRES(); !near(got, 2048*math.Pow(2, 26.5), 1e-4) {
		t.Errorf("GMRES-IR limit with u² products %v", got)
	}
	r.UP = 0
	if got := r.ForwardError(1e8); !near(got, 0x1p-53*(1+1e8), 1e-12) {
		t.Errorf("forward error %v", got)
	}
}
