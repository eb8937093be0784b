package gemm

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/gpu"
	"github.com/mwmm/mwmm/mma"
	"github.com/mwmm/mwmm/probe"
)

func TestUnitSpecErrors(t *testing.T) {
	if _, err := mma.Open("gpu:tensor", "", ""); err == nil || !strings.Contains(err.Error(), "mma.sync") {
		t.Errorf("Open(gpu:tensor) = %v, want an error listing the families", err)
	}
	if _, err := mma.Open("gpux:wgmma", "", ""); err == nil {
		t.Error("Open(gpux:wgmma) succeeded")
	}
	if _, err := mma.Open("gpu:wgmma", "nosuch", ""); err == nil {
		t.Error("Open with an unknown format succeeded")
	}
	if gpu.Available() != nil {
		if _, err := mma.Open("gpu:mma.sync", "", ""); err == nil || !strings.Contains(err.Error(), "h100") {
			t.Errorf("Open without a GPU = %v, want an error that points to the presets", err)
		}
	}
	if got := UnitPairs(WGMMA); len(got) == 0 || got[0] != [2]format.Format{format.Binary16, format.Binary32} {
		t.Errorf("UnitPairs(wgmma) = %v, want fp16→fp32 first", got)
	}
}

// unitsGPU opens every unit the GPU has; it skips without a GPU.
func unitsGPU(t *testing.T) []*Unit {
	t.Helper()
	e := engineGPU(t)
	var us []*Unit
	for _, k := range unitKinds {
		u, err := NewUnit(e.Device(), k.instr, k.in, k.out)
		if err != nil {
			if k.instr == WGMMA && !strings.HasSuffix(e.Device().Arch(), "a") {
				continue
			}
			t.Fatalf("NewUnit(%s %s→%s): %v", k.instr, k.in, k.out, err)
		}
		us = append(us, u)
	}
	return us
}

// Small integers are summed exactly by any adder, so every case must come
// back as its exact value: this checks the fragment layouts (a case read
// from the wrong row or column gets another sum), the chaining of long
// cases and the padding.
func TestUnitsExactOnIntegers(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, u := range unitsGPU(t) {
		t.Run(u.Kernel(), func(t *testing.T) {
			for _, k := range []int{1, u.BlockK() - 1, u.BlockK(), 3*u.BlockK() + 1} {
				if k < 1 {
					continue
				}
				n := 1000 + rng.IntN(8) // not a whole number of tiles
				a, b := make([]float64, n*k), make([]float64, n*k)
				c, d := make([]float64, n), make([]float64, n)
				for i := range a {
					a[i], b[i] = float64(rng.IntN(7)-3), float64(rng.IntN(7)-3)
				}
				for i := range c {
					c[i] = float64(rng.IntN(17) - 8)
				}
				if err := u.Dots(k, a, b, c, d); err != nil {
					t.Fatal(err)
				}
				for i := range c {
					want := c[i]
					for j := 0; j < k; j++ {
						want += a[i*k+j] * b[i*k+j]
					}
					if d[i] != want {
						t.Fatalf("k=%d case %d: got %v, want %v", k, i, d[i], want)
					}
				}
			}
		})
	}
}

// The measured presets must agree with the hardware on every random case
// (the full cross-check, 10^6 cases a unit, is 'mwmm probe --crosscheck').
func TestUnitsMatchPresets(t *testing.T) {
	for _, u := range unitsGPU(t) {
		t.Run(u.Kernel(), func(t *testing.T) {
			spec := "h100"
			switch {
			case u.Instruction() == FMA:
				spec = "ieee:k=1"
			case emulatedFP8(u):
				spec = "h100-mma.sync" // two fp16 HMMA steps and an FADD
			}
			m, err := mma.Open(spec, u.Input().Name(), u.Output().Name())
			if err != nil {
				t.Fatal(err)
			}
			cc, err := probe.RunCrosscheck(u, m, probe.CrosscheckOptions{Cases: 20000, Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range cc.Rows {
				if r.Mismatches > 0 {
					ex := r.Examples[0]
					t.Errorf("%s: %d of %d cases differ from %s; e.g. a=%v b=%v c=%v: unit %v, model %v",
						r.Generator, r.Mismatches, r.Cases, spec, ex.A, ex.B, ex.C, ex.Unit, ex.Model)
				}
			}
		})
	}
}

// emulatedFP8 reports an fp8 mma.sync on Hopper, which has no QMMA: the
// compiler emulates it with fp16 HMMA steps (mma.SyncPresets).
func emulatedFP8(u *Unit) bool {
	fp8 := u.Input() == format.E4M3 || u.Input() == format.E5M2
	return fp8 && u.Instruction() == MMASync && strings.HasPrefix(u.d.Arch(), "sm_90")
}

func TestUnitDotsArguments(t *testing.T) {
	us := unitsGPU(t)
	u := us[0]
	if err := u.Dots(2, make([]float64, 3), make([]float64, 4), make([]float64, 2), make([]float64, 2)); err == nil {
		t.Error("Dots with short a succeeded")
	}
	d := []float64{math.NaN()}
	if err := u.Dots(0, nil, nil, []float64{1.5}, d); err != nil || d[0] != 1.5 {
		t.Errorf("Dots with k=0 = %v, %v; want c", d, err)
	}
}
