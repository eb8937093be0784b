package mma

import (
	"fmt"
	"strings"

	"github.com/mwmm/mwmm/format"
)

// Hopper has no fp8 mma.sync instruction (no QMMA): the compiler builds
// mma.sync.m16n8k32 with e4m3/e5m2 inputs from two fp16 HMMA.16816 steps.
// Measured on an H200 (docs/hardware/hopper.md): the fp8 values are
// converted to fp16 (exactly), the first HMMA takes the k positions j with
// j mod 4 < 2 (the low bytes of each 32-bit register), starting from zero,
// the second the others, chained; the sum is then added to c by one FADD
// (HADD2 into fp16) rounding to nearest. So c is not aligned with the
// products, and their order matters.
type fp8Sync struct {
	name    string
	in, out format.Format
	half    *Model // the fp16 HMMA step
}

// SyncPresets are the instruction-level units of Hopper that differ from
// its presets: "h100-mma.sync" (and "h200-mma.sync") is the h100 preset but
// for fp8 inputs, where it is the emulation above. Open resolves them.
var SyncPresets = []string{"h100-mma.sync", "h200-mma.sync"}

// syncPreset describes h100-mma.sync (or h200-mma.sync): the chip's
// preset, fp8 pairs emulated as above.
func syncPreset(name, chip string) Preset {
	p, _ := FindPreset(chip)
	p.Name = name
	p.Summary = "Hopper's mma.sync: " + chip + ", but fp8 emulated by two fp16 HMMA steps and an FADD"
	p.Doc = `Measured on an NVIDIA H200 (docs/hardware/hopper.md, "fp8 mma.sync is
emulated"): fp16, bf16, tf32 and fp64 as the ` + chip + ` preset (mma.sync and
wgmma agree). e4m3/e5m2 (m16n8k32): no QMMA on Hopper; the fp8 values are
converted to fp16 exactly, one HMMA.16816 (the ` + chip + ` fp16 adder) sums the
products at positions j mod 4 < 2 from zero, a second chained one the
others, and one FADD (HADD2 for fp16) adds c rounding to nearest.
Agrees with the hardware on 10^6 random cases a format.`
	p.describe = func(in, out format.Format) (string, bool) {
		if in != format.E4M3 && in != format.E5M2 {
			return "", false
		}
		return fmt.Sprintf("%s×%s→%s, k=32, emulated: fp16 HMMA of the 16 products at j mod 4 < 2 from 0, a second HMMA of the other 16 chained, then c added rounding to nearest (FADD)",
			in.Name(), in.Name(), out.Name()), true
	}
	return p
}

func openSync(spec, input, output string) (Unit, error) {
	chip, _, _ := strings.Cut(spec, "-")
	if input == "" {
		input = "fp16"
	}
	in, err := format.Parse(input)
	if err != nil {
		return nil, err
	}
	if in != format.E4M3 && in != format.E5M2 {
		return Lookup(chip, input, output)
	}
	out := format.Binary32
	if output != "" {
		if out, err = format.Parse(output); err != nil {
			return nil, err
		}
	}
	if out != format.Binary32 && out != format.Binary16 {
		return nil, fmt.Errorf("mma: %s has no %s→%s unit; fp8 goes to fp32 or fp16", spec, in.Name(), out.Name())
	}
	half, err := Lookup(chip, "fp16", out.Name())
	if err != nil {
		return nil, err
	}
	return &fp8Sync{name: spec + " " + in.Name() + "→" + out.Name(), in: in, out: out, half: half}, nil
}

func (u *fp8Sync) Name() string          { return u.name }
func (u *fp8Sync) Input() format.Format  { return u.in }
func (u *fp8Sync) Output() format.Format { return u.out }
func (u *fp8Sync) BlockK() int           { return 32 }

func (u *fp8Sync) Dots(k int, a, b, c, d []float64) error {
	if err := CheckDots(k, a, b, c, d); err != nil {
		return err
	}
	var lo, hi [2][16]float64
	for i := range c {
		acc := u.out.Round(c[i], format.NearestEven)
		for s := 0; s < k; s += 32 {
			n := [2]int{}
			for j := s; j < min(s+32, k); j++ {
				h := (j % 4) / 2
				lo[h][n[h]] = u.in.Round(a[i*k+j], format.NearestEven)
				hi[h][n[h]] = u.in.Round(b[i*k+j], format.NearestEven)
				n[h]++
			}
			p := u.half.Dot(lo[0][:n[0]], hi[0][:n[0]], 0)
			p = u.half.Dot(lo[1][:n[1]], hi[1][:n[1]], p)
			acc = u.out.Round(acc+p, format.NearestEven) // exact in float64, one rounding
		}
		d[i] = acc
	}
	return nil
}
