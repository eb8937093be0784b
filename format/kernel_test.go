package format

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// TestAddAndMaskParamsLayout pins the layout of addAndMaskParams that the
// assembly kernels address by offset (kernel_amd64.s: P_BASE … P_SPAN).
func TestAddAndMaskParamsLayout(t *testing.T) {
	var p addAndMaskParams
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"base", unsafe.Offsetof(p.base), 0},
		{"tieEven", unsafe.Offsetof(p.tieEven), 8},
		{"dirPos", unsafe.Offsetof(p.dirPos), 16},
		{"dirNeg", unsafe.Offsetof(p.dirNeg), 24},
		{"shift", unsafe.Offsetof(p.shift), 32},
		{"keep", unsafe.Offsetof(p.keep), 40},
		{"minNormal", unsafe.Offsetof(p.minNormal), 48},
		{"span", unsafe.Offsetof(p.span), 56},
		{"size", unsafe.Sizeof(p), 64},
	} {
		if c.got != c.want {
			t.Errorf("addAndMaskParams.%s at %d, the assembly kernels expect %d", c.name, c.got, c.want)
		}
	}
	var sp subParams
	for i, off := range []uintptr{
		unsafe.Offsetof(sp.limit), unsafe.Offsetof(sp.one), unsafe.Offsetof(sp.k), unsafe.Offsetof(sp.c63),
		unsafe.Offsetof(sp.h1), unsafe.Offsetof(sp.h0), unsafe.Offsetof(sp.tie), unsafe.Offsetof(sp.dirPos),
		unsafe.Offsetof(sp.dirX), unsafe.Offsetof(sp.magic), unsafe.Offsetof(sp.noNegZero), unsafe.Offsetof(sp.quantum), unsafe.Offsetof(sp.rneC), unsafe.Offsetof(sp.always),
		unsafe.Offsetof(sp.fltC), unsafe.Offsetof(sp.zero), unsafe.Offsetof(sp.halfQ), unsafe.Offsetof(sp.negHalfQ),
		unsafe.Offsetof(sp.upPos), unsafe.Offsetof(sp.upNeg), unsafe.Offsetof(sp.dnPos), unsafe.Offsetof(sp.dnNeg),
		unsafe.Offsetof(sp.tieUp), unsafe.Offsetof(sp.tieDn), unsafe.Offsetof(sp.mxRC),
		unsafe.Offsetof(sp.expMask), unsafe.Offsetof(sp.pShift), unsafe.Offsetof(sp.maxBits),
		unsafe.Offsetof(sp.eminExp),
	} {
		if off != uintptr(32*i) { // S_LIMIT … S_EMINEXP
			t.Errorf("subParams field %d at %d, the assembly kernel expects %d", i, off, 32*i)
		}
	}
}

// roundAddAndMaskGo is the reference for the fast loops (the AVX2 kernel,
// roundAddAndMaskPortable), which must match it bit for bit: it applies p
// to len(src) ≤ block values, and sp to those below 2^Emin that p cannot
// round; it notes in slow the positions that need roundSlow (overflow,
// Inf, NaN, and what sp does not cover), leaves x itself in dst there, and
// returns their count. dst may be src.
func roundAddAndMaskGo(dst, src []float64, p *addAndMaskParams, sp *subParams, slow *[block]uint8) int {
	dst = dst[:len(src)]
	n := 0
	for i, x := range src {
		b := math.Float64bits(x)
		a := b &^ signBit
		r := p.round(a, b)
		_, out := bits.Sub64(p.span, r-p.minNormal, 0)
		keepX := -out
		dst[i] = math.Float64frombits((r|(b^a))&^keepX | b&keepX)
		slow[n&(block-1)] = uint8(i)
		n += int(out)
	}
	k := 0
	for _, j := range slow[:n] {
		b := math.Float64bits(dst[j])
		if int64(b&^signBit) < int64(sp.limit[0]) { // signed, as the kernel's VPCMPGTQ
			dst[j] = math.Float64frombits(sp.round(b))
			continue
		}
		slow[k] = j
		k++
	}
	return k
}

// testKernels lists the loops RoundSlice can take on this machine:
// "portable", "avx2" where the CPU has AVX2 and "avx512" where it has
// AVX-512F too. The slice tests run under each, in the same process, so
// all are held to the oracles.
func testKernels() []string {
	ks := []string{"portable"}
	if haveAVX2 {
		ks = append(ks, "avx2")
	}
	if haveAVX512 {
		ks = append(ks, "avx512")
	}
	return ks
}

// kernelNamed is the kernel of a name of testKernels.
func kernelNamed(k string) kernel {
	return kernel(slices.Index(kernelNames[:], k))
}

// roundSliceWith is RoundSlice (or RoundSlice32) on kernel k whatever
// useAVX2 says, so that tests of the kernels can run in parallel.
func roundSliceWith[T float32 | float64](k string, f *Format, dst, src []T, m Mode, rnd Source) {
	roundChunks(f, dst, src, m, rnd, kernelNamed(k))
}

// useKernel switches RoundSlice to kernel k; the returned func restores
// the previous choice. Tests that call it cannot run in parallel.
func useKernel(k string) (restore func()) {
	saved, saved512 := useAVX2, useAVX512
	useAVX2, useAVX512 = k != "portable", k == "avx512"
	return func() { useAVX2, useAVX512 = saved, saved512 }
}

func TestKernelName(t *testing.T) {
	t.Logf("Kernel() = %q", Kernel()) // the comparison script records it
	for _, k := range testKernels() {
		restore := useKernel(k)
		if got := Kernel(); got != k {
			t.Errorf("with the %s loops, Kernel() = %q", k, got)
		}
		restore()
	}
}

// kernelFormats is signedFormats() with and without subnormals, and saturating.
func kernelFormats() []Format {
	var fs []Format
	for _, f := range signedFormats() {
		fs = append(fs, f, f.WithSubnormals(false), f.WithSaturation(true))
	}
	return fs
}

// kernelAddAndMaskModes lists the modes that take the add-and-mask path.
func kernelAddAndMaskModes(t *testing.T) []Mode {
	var ms []Mode
	for m := range numFixedModes {
		if m.addAndMask() {
			ms = append(ms, m)
		}
	}
	if len(ms) != 7 {
		t.Fatalf("%d add-and-mask modes, want 7: %v", len(ms), ms)
	}
	return ms
}

// kernelInputs returns n float64 values that exercise f: random bit
// patterns, values spread over and beyond f's range, exact ties and their
// neighbours at f's precision, the edges of the normal range, specials.
func kernelInputs(f Format, rng *rand.Rand, n int) []float64 {
	fixed := []float64{
		0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
		math.Float64frombits(0x7ff0000000000001), math.Float64frombits(0xfff0000000000001),
		math.Float64frombits(0x7ff8000000000123), math.Float64frombits(0xfff4000000000000),
		math.Float64frombits(0x7fffffffffffffff), math.Float64frombits(0xffffffffffffffff),
		math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64,
		math.Float64frombits(0x000fffffffffffff), math.Float64frombits(0x800fffffffffffff),
		math.Float64frombits(0x0010000000000000), -math.MaxFloat64, math.MaxFloat64,
	}
	for _, v := range []float64{f.MaxFinite(), f.MinNormal(), f.MinSubnormal(), 1, 2} {
		if v == 0 {
			continue
		}
		b := math.Float64bits(v)
		for d := -3; d <= 3; d++ {
			u := b + uint64(d)
			fixed = append(fixed, math.Float64frombits(u), -math.Float64frombits(u))
		}
		for _, w := range []float64{v * (1 + 0.5*f.UnitRoundoff()*2), v * (1 - 0.5*f.UnitRoundoff()), v * (1 + f.UnitRoundoff())} {
			fixed = append(fixed, w, -w, math.Nextafter(w, 0), math.Nextafter(w, math.Inf(1)))
		}
	}
	xs := make([]float64, 0, n+len(fixed))
	xs = append(xs, fixed...)
	for len(xs) < n {
		var x float64
		switch rng.IntN(6) {
		case 0: // any bit pattern
			x = math.Float64frombits(rng.Uint64())
		case 1: // float64 subnormals
			x = math.Float64frombits(rng.Uint64() & 0x800fffffffffffff)
		case 2, 3: // spread over the format's range and a little beyond
			e := f.Emin() - f.Precision() - 3 + rng.IntN(f.Emax()-f.Emin()+f.Precision()+6)
			x = math.Ldexp(1+rng.Float64(), e)
		case 4: // exact ties at f's precision and their float64 neighbours
			e := f.Emin() - f.Precision() - 2 + rng.IntN(f.Emax()-f.Emin()+f.Precision()+4)
			b := math.Float64bits(math.Ldexp(1+rng.Float64(), e))
			if f.shift > 0 {
				b = b&^f.dropMask | 1<<(f.shift-1)
			}
			x = math.Float64frombits(b + uint64(rng.IntN(3)) - 1)
		case 5: // values of the format and their float64 neighbours
			e := f.Emin() - f.Precision() + rng.IntN(f.Emax()-f.Emin()+f.Precision()+1)
			b := math.Float64bits(math.Ldexp(1+rng.Float64(), e)) &^ f.dropMask
			x = math.Float64frombits(b + uint64(rng.IntN(3)) - 1)
		}
		if rng.IntN(2) == 0 {
			x = -x
		}
		xs = append(xs, x)
	}
	rng.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
	return xs
}

// TestRoundAddAndMaskAVX2 compares the AVX2 kernel with roundAddAndMaskGo
// bit for bit (dst and the slow list), for every length 0..block, out of
// place and in place, and checks that it writes nothing past dst[n-1].
func TestRoundAddAndMaskAVX2(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	const guard = 8
	const sentinel = 0x5a5a5a5a5a5a5a5a
	for _, f := range kernelFormats() {
		xs := kernelInputs(f, rng, 8192)
		for _, m := range kernelAddAndMaskModes(t) {
			p, sp := f.addAndMaskParams(m), f.subParams(m)
			bad := 0
			for n := 0; n <= block; n++ {
				for rep := range 2 {
					off := rng.IntN(len(xs) - n + 1)
					src := xs[off : off+n]
					var slowGo, slowAsm [block]uint8
					want := make([]float64, n)
					k := roundAddAndMaskGo(want, src, &p, &sp, &slowGo)

					buf := make([]float64, n+guard)
					for i := range buf {
						buf[i] = math.Float64frombits(sentinel)
					}
					dst := buf[:n]
					in := src
					if rep == 1 { // in place
						copy(dst, src)
						in = dst
					}
					var got int
					if n > 0 {
						got = roundAddAndMaskAVX2(&dst[0], &in[0], n, &p, &sp, &slowAsm)
					} else {
						got = roundAddAndMaskAVX2(nil, nil, 0, &p, &sp, &slowAsm)
					}
					ok := true
					for i := range n {
						if math.Float64bits(dst[i]) != math.Float64bits(want[i]) {
							ok = false
							if bad < 5 {
								t.Errorf("%v %v n=%d in-place=%v: x=%x: dst %x, Go loop %x", f.Name(), m, n, rep == 1,
									math.Float64bits(src[i]), math.Float64bits(dst[i]), math.Float64bits(want[i]))
							}
						}
					}
					for i := n; i < len(buf); i++ {
						if math.Float64bits(buf[i]) != sentinel {
							ok = false
							t.Errorf("%v %v n=%d: wrote dst[%d]", f.Name(), m, n, i)
						}
					}
					if got != k || string(slowGo[:k]) != string(slowAsm[:min(got, block)]) {
						ok = false
						if bad < 5 {
							t.Errorf("%v %v n=%d in-place=%v: slow list %v, Go loop %v", f.Name(), m, n, rep == 1,
								slowAsm[:min(got, block)], slowGo[:k])
						}
					}
					if !ok {
						bad++
					}
				}
			}
			if bad > 0 {
				t.Errorf("%v %v: %d mismatching runs", f.Name(), m, bad)
			}
		}
	}
}

// TestRoundAddAndMaskAVX2RandomParams holds the kernel to the Go loop's
// arithmetic for arbitrary parameters, beyond those a Format produces
// (shifts of 64 and more, wrapping sums, any keep mask).
func TestRoundAddAndMaskAVX2RandomParams(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	rng := rand.New(rand.NewPCG(17, 18))
	src := make([]float64, block)
	dst, want := make([]float64, block), make([]float64, block)
	for trial := range 20000 {
		p := addAndMaskParams{
			base: rng.Uint64() >> rng.IntN(64), tieEven: rng.Uint64() >> rng.IntN(64),
			dirPos: rng.Uint64() >> rng.IntN(64), dirNeg: rng.Uint64() >> rng.IntN(64),
			shift: uint64(rng.IntN(130)), keep: rng.Uint64(),
			minNormal: rng.Uint64() >> rng.IntN(64), span: rng.Uint64() >> rng.IntN(64),
		}
		if trial%3 == 0 {
			p.dirNeg = p.dirPos // the kernel's loop without the sign blend
		}
		// The subnormal step's parameters: a format's, or random integer
		// fields (the float steps need magic and quantum as they are).
		fs := kernelFormats()
		sp := fs[rng.IntN(len(fs))].subParams(Mode(rng.IntN(int(numFixedModes))))
		if trial%2 == 0 {
			for _, v := range []*[4]uint64{&sp.limit, &sp.k, &sp.h1, &sp.h0, &sp.tie, &sp.dirPos, &sp.dirX, &sp.noNegZero} {
				x := rng.Uint64() >> rng.IntN(64)
				*v = [4]uint64{x, x, x, x}
			}
		}
		// The float paths (rneC, fltC) take the sign from the fast result,
		// which only a Format's own parameters keep clear of bit 63.
		sp.rneC, sp.fltC, sp.mxRC = [4]uint64{}, [4]uint64{}, [4]uint64{}
		for i := range src {
			src[i] = math.Float64frombits(rng.Uint64())
		}
		n := rng.IntN(block + 1)
		var s1, s2 [block]uint8
		k2 := roundAddAndMaskGo(want[:n], src[:n], &p, &sp, &s2)
		k1 := roundAddAndMaskAVX2(&dst[0], &src[0], n, &p, &sp, &s1)
		if k1 != k2 || string(s1[:k1]) != string(s2[:k2]) {
			t.Fatalf("%+v n=%d: slow list %v, Go loop %v", p, n, s1[:k1], s2[:k2])
		}
		for i := range n {
			if math.Float64bits(dst[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%+v n=%d: x=%x: dst %x, Go loop %x", p, n, math.Float64bits(src[i]),
					math.Float64bits(dst[i]), math.Float64bits(want[i]))
			}
		}
	}
}

// TestRoundAddAndMaskDispatch checks roundAddAndMask, whichever loop it
// picks, and the portable loop against roundAddAndMaskGo, out of place and
// in place.
func TestRoundAddAndMaskDispatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	loops := map[string]func([]float64, []float64, *addAndMaskParams, *subParams, *[block]uint8) int{
		"portable": roundAddAndMaskPortable,
		"dispatch": func(d, s []float64, p *addAndMaskParams, sp *subParams, slow *[block]uint8) int {
			return roundAddAndMask(currentKernel(), d, s, p, sp, slow)
		},
	}
	for _, f := range kernelFormats() {
		xs := kernelInputs(f, rng, 4*block)
		for _, m := range kernelAddAndMaskModes(t) {
			p, sp := f.addAndMaskParams(m), f.subParams(m)
			for _, n := range []int{0, 1, 3, 4, 5, 7, 8, 9, 63, 64, 65, 255, block} {
				off := rng.IntN(len(xs) - n + 1)
				src := xs[off : off+n]
				var s2 [block]uint8
				want := make([]float64, n)
				k2 := roundAddAndMaskGo(want, src, &p, &sp, &s2)
				for name, loop := range loops {
					for _, inPlace := range []bool{false, true} {
						var s1 [block]uint8
						d1 := make([]float64, n)
						in := src
						if inPlace {
							copy(d1, src)
							in = d1
						}
						k1 := loop(d1, in, &p, &sp, &s1)
						if k1 != k2 || string(s1[:k1]) != string(s2[:k2]) {
							t.Errorf("%v %v %s n=%d in-place=%v: slow list %v, Go loop %v", f.Name(), m, name, n, inPlace, s1[:k1], s2[:k2])
						}
						for i := range n {
							if math.Float64bits(d1[i]) != math.Float64bits(want[i]) {
								t.Errorf("%v %v %s n=%d in-place=%v: dst[%d] %v, Go loop %v", f.Name(), m, name, n, inPlace, i, d1[i], want[i])
								break
							}
						}
					}
				}
			}
		}
	}
}

// TestRoundSliceKernelMatchesRound checks RoundSlice on a long slice (many
// blocks, a ragged end, several goroutines) against element-wise Round in
// every deterministic mode, with the AVX2 kernel (where the CPU has it) and
// with the Go loop; the formats in parallel.
func TestRoundSliceKernelMatchesRound(t *testing.T) {
	t.Parallel()
	n := 1<<18 + 3
	fs := kernelFormats()
	if testing.Short() {
		n = 1<<12 + 3
		fs = []Format{Binary16, BFloat16, E4M3, E2M1}
	}
	rng := rand.New(rand.NewPCG(15, 16))
	for _, f := range fs {
		src := kernelInputs(f, rng, n)[:n]
		t.Run(f.Name(), func(t *testing.T) {
			t.Parallel()
			kernelMatchesRound(t, f, src)
		})
	}
}

func kernelMatchesRound(t *testing.T, f Format, src []float64) {
	n := len(src)
	dst, want := make([]float64, n), make([]float64, n)
	for _, m := range []Mode{NearestEven, NearestAway, NearestTowardZero, TowardZero, Up, Down, AwayFromZero, ToOdd} {
		for i, x := range src {
			want[i] = f.Round(x, m)
		}
		for _, k := range testKernels() {
			roundSliceWith(k, &f, dst, src, m, nil)
			bad := 0
			for i := range dst {
				if math.Float64bits(dst[i]) != math.Float64bits(want[i]) {
					if bad < 3 {
						t.Errorf("%v %v %s: RoundSlice(%v) = %v, Round %v", f.Name(), m, k, src[i], dst[i], want[i])
					}
					bad++
				}
			}
			if bad > 0 {
				t.Errorf("%v %v %s: %d of %d differ", f.Name(), m, k, bad, n)
			}
		}
	}
}

// BenchmarkRoundAddAndMask times the fast loop alone over one block of
// values in [-2, 2] (few slow positions): the reference Go loop, the
// portable loop and the AVX2 kernel.
func BenchmarkRoundAddAndMask(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float64, block)
	for i := range src {
		src[i] = 4*rng.Float64() - 2
	}
	dst := make([]float64, block)
	for _, m := range []Mode{NearestEven, Up} {
		p, sp := Binary16.addAndMaskParams(m), Binary16.subParams(m)
		var slow [block]uint8
		b.Run(m.String()+"/reference", func(b *testing.B) {
			for b.Loop() {
				roundAddAndMaskGo(dst, src, &p, &sp, &slow)
			}
			b.ReportMetric(float64(b.N)*block/b.Elapsed().Seconds(), "values/s")
		})
		b.Run(m.String()+"/portable", func(b *testing.B) {
			for b.Loop() {
				roundAddAndMaskPortable(dst, src, &p, &sp, &slow)
			}
			b.ReportMetric(float64(b.N)*block/b.Elapsed().Seconds(), "values/s")
		})
		if useAVX2 {
			b.Run(m.String()+"/avx2", func(b *testing.B) {
				for b.Loop() {
					roundAddAndMaskAVX2(&dst[0], &src[0], block, &p, &sp, &slow)
				}
				b.ReportMetric(float64(b.N)*block/b.Elapsed().Seconds(), "values/s")
			})
		}
	}
}

// TestKernelVEXOnly: every instruction of the AVX2 kernels that names an
// X or Y register is VEX-encoded (mnemonic V...). On Intel cores since
// Skylake a legacy-SSE write to an XMM register while upper YMM halves are
// dirty costs a microcode assist of hundreds of cycles: five such MOVQs
// per 256 values made the kernel ~10x slower there than on AMD (issue 46).
// MXCSR loads and stores take their VEX forms too.
func TestKernelVEXOnly(t *testing.T) {
	files, _ := filepath.Glob("*_amd64.s")
	if len(files) < 2 {
		t.Fatalf("assembly files %v, want kernel_amd64.s and stochastic_amd64.s", files)
	}
	for _, file := range files {
		checkVEXOnly(t, file)
	}
}

// checkVEXOnly reports each legacy-SSE instruction of an assembly file.
func checkVEXOnly(t *testing.T, file string) {
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	insn := regexp.MustCompile(`^\s*(?:\w+:)?\s*([A-Z][A-Z0-9]*)\s+(.*)$`)
	vecReg := regexp.MustCompile(`\b[XY]\d+\b`)
	for n, line := range strings.Split(string(src), "\n") {
		code, _, _ := strings.Cut(line, "//")
		for _, stmt := range strings.Split(strings.TrimSuffix(strings.TrimSpace(code), `\`), ";") {
			m := insn.FindStringSubmatch(stmt)
			if m == nil || strings.HasPrefix(m[1], "V") {
				continue
			}
			if vecReg.MatchString(m[2]) || strings.Contains(m[1], "MXCSR") {
				t.Errorf("%s:%d: legacy SSE %q; use its VEX form", file, n+1, strings.TrimSpace(stmt))
			}
		}
	}
}

// TestSRParamsLayout pins the layout of srParams that stochastic_amd64.s
// addresses by offset (R_LANES … R_FLTZMM).
func TestSRParamsLayout(t *testing.T) {
	var p srParams
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"lanes", unsafe.Offsetof(p.lanes), 0}, {"step", unsafe.Offsetof(p.step), 32},
		{"xor", unsafe.Offsetof(p.xor), 64}, {"lo32", unsafe.Offsetof(p.lo32), 96},
		{"keep", unsafe.Offsetof(p.keep), 128}, {"incMask", unsafe.Offsetof(p.incMask), 160},
		{"halfMask", unsafe.Offsetof(p.halfMask), 192}, {"uBias", unsafe.Offsetof(p.uBias), 224},
		{"spanX", unsafe.Offsetof(p.spanX), 256}, {"abs", unsafe.Offsetof(p.abs), 288},
		{"one", unsafe.Offsetof(p.one), 320}, {"k", unsafe.Offsetof(p.k), 352},
		{"c64", unsafe.Offsetof(p.c64), 384}, {"limit", unsafe.Offsetof(p.limit), 416},
		{"nBits", unsafe.Offsetof(p.nBits), 448}, {"magic", unsafe.Offsetof(p.magic), 480},
		{"quantum", unsafe.Offsetof(p.quantum), 512}, {"noNegZero", unsafe.Offsetof(p.noNegZero), 544},
		{"rshift", unsafe.Offsetof(p.rshift), 576}, {"lshift", unsafe.Offsetof(p.lshift), 584},
		{"half", unsafe.Offsetof(p.half), 592}, {"subLoop", unsafe.Offsetof(p.subLoop), 600},
		{"kshift", unsafe.Offsetof(p.kshift), 624}, {"subSkip", unsafe.Offsetof(p.subSkip), 632},
		{"xorHi", unsafe.Offsetof(p.xorHi), 664}, {"expMask", unsafe.Offsetof(p.expMask), 696},
		{"eminExp", unsafe.Offsetof(p.eminExp), 728}, {"qShift", unsafe.Offsetof(p.qShift), 760},
		{"pShift", unsafe.Offsetof(p.pShift), 792}, {"pShift1", unsafe.Offsetof(p.pShift1), 824},
		{"rMask", unsafe.Offsetof(p.rMask), 856}, {"pred2Q", unsafe.Offsetof(p.pred2Q), 888},
		{"maxBits", unsafe.Offsetof(p.maxBits), 920}, {"fltLoop", unsafe.Offsetof(p.fltLoop), 952},
		{"lanes8", unsafe.Offsetof(p.lanes8), 960}, {"step8", unsafe.Offsetof(p.step8), 1024},
		{"fltZmm", unsafe.Offsetof(p.fltZmm), 1040}, {"bias32", unsafe.Offsetof(p.bias32), 1048},
		{"span32", unsafe.Offsetof(p.span32), 1080}, {"blendBias", unsafe.Offsetof(p.blendBias), 1112},
		{"blendCnt", unsafe.Offsetof(p.blendCnt), 1144}, {"subBlend", unsafe.Offsetof(p.subBlend), 1176},
	} {
		if c.got != c.want {
			t.Errorf("srParams.%s at %d, the assembly kernel expects %d", c.name, c.got, c.want)
		}
	}
}

// kernelStochasticModes are the stochastic modes the kernel tests cover.
func kernelStochasticModes(t *testing.T) []Mode {
	return []Mode{Stochastic, StochasticHalf, mustStochasticBits(t, 1), mustStochasticBits(t, 8),
		mustStochasticBits(t, 13), mustStochasticBits(t, 52), mustStochasticBits(t, 64)}
}

// TestRoundStochasticAVX2 compares the AVX2 stochastic kernel with the
// portable loop bit for bit, each followed by finishStochastic on the
// positions it listed (the portable tables of fp8/fp6/fp4 round values
// below 2^Emin that the kernel lists), for every length 0..block, out of
// place and in place, from random stream states, and checks that the
// kernel writes nothing past dst[n-1] and lists only values it left.
func TestRoundStochasticAVX2(t *testing.T) {
	if !haveAVX2 {
		t.Skip("no AVX2")
	}
	rng := rand.New(rand.NewPCG(21, 22))
	for _, f := range append(kernelFormats(), Binary64) {
		xs := kernelInputs(f, rng, 4096)
		for _, m := range kernelStochasticModes(t) {
			p := f.srParams(m)
			var rr blockRounder
			rr.init(&f, m, avx2Kernel)
			for name, kernel := range stochasticKernels(&p) {
				for n := 0; n <= block; n++ {
					off := rng.IntN(len(xs) - n + 1)
					testStochasticKernel(t, f.Name()+" "+m.String()+" "+name, &p, &rr, kernel, xs[off:off+n], rng.Uint64())
				}
			}
		}
	}
}

type stochasticKernel func(dst, src *float64, n int, p *srParams, state uint64, slow *[block]uint8) int

// stochasticKernels lists the assembly stochastic loops this CPU can run
// on p: the AVX2 ones and, where they cover p, the AVX-512 ones.
func stochasticKernels(p *srParams) map[string]stochasticKernel {
	ks := map[string]stochasticKernel{"avx2": roundStochasticAVX2}
	if haveAVX512 && p.zmm != 0 {
		ks["avx512"] = roundStochasticAVX512
	}
	return ks
}

// testStochasticKernel is TestRoundStochasticAVX2 for one slice src: in
// place where its length is odd, with sentinels after dst.
func testStochasticKernel(t *testing.T, name string, p *srParams, rr *blockRounder, kernel stochasticKernel, src []float64, state uint64) {
	const guard = 8
	const sentinel = 0x5a5a5a5a5a5a5a5a
	n := len(src)
	var slowGo, slowAsm [block]uint8
	want := make([]float64, n)
	k := roundStochasticPortable(want, src, p, state, &slowGo)
	buf := make([]float64, n+guard)
	for i := range buf {
		buf[i] = math.Float64frombits(sentinel)
	}
	dst, in := buf[:n], src
	if n%2 == 1 { // in place
		copy(dst, src)
		in = dst
	}
	got := 0
	if n > 0 {
		got = kernel(&dst[0], &in[0], n, p, state, &slowAsm)
	} else {
		got = kernel(nil, nil, 0, p, state, &slowAsm)
	}
	for _, j := range slowAsm[:min(got, block)] {
		if math.Float64bits(dst[j]) != math.Float64bits(src[j]) {
			t.Fatalf("%s n=%d: the kernel listed %d but left %x there, not x=%x", name, n, j,
				math.Float64bits(dst[j]), math.Float64bits(src[j]))
		}
	}
	rr.finishStochastic(want, slowGo[:k], state)
	rr.finishStochastic(dst, slowAsm[:min(got, block)], state)
	for i := range n {
		if math.Float64bits(dst[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s n=%d: x=%x: dst %x, portable %x", name, n,
				math.Float64bits(src[i]), math.Float64bits(dst[i]), math.Float64bits(want[i]))
		}
	}
	for i := n; i < len(buf); i++ {
		if math.Float64bits(buf[i]) != sentinel {
			t.Fatalf("%s n=%d: wrote dst[%d]", name, n, i)
		}
	}
}

// TestWyrandVector holds the kernels' words to wyrandAt (the AVX2 loops'
// vector wyrand in the first group of each 8 and the tail, the scalar
// unit's in the second; the AVX-512 loops'): in a format with p = 1,
// Stochastic adds r's top 52 bits to 1+η, so each result depends on its
// own word; both loops must give roundStochastic's result with
// wyrandAt(state, i), from many states.
func TestWyrandVector(t *testing.T) {
	if !haveAVX2 {
		t.Skip("no AVX2")
	}
	f, err := Parse("custom:p=1,emin=-10,emax=10")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(23, 24))
	src := make([]float64, block)
	for i := range src {
		src[i] = 1 + rng.Float64()
	}
	p := f.srParams(Stochastic)
	want, got := make([]float64, block), make([]float64, block)
	for name, kernel := range stochasticKernels(&p) {
		for range 2000 {
			state := rng.Uint64()
			var s1, s2 [block]uint8
			roundStochasticPortable(want, src, &p, state, &s1)
			kernel(&got[0], &src[0], block, &p, state, &s2)
			for i := range got {
				exact := f.roundStochastic(src[i], Stochastic, wyrandAt(state, uint64(i)))
				if got[i] != exact || want[i] != exact {
					t.Fatalf("%s: state %#x word %d: kernel %v, portable %v, roundStochastic with wyrandAt %v", name, state, i, got[i], want[i], exact)
				}
			}
		}
	}
}

// TestSRFloatBand holds the kernels' float loops (srParams.fltLoop for
// AVX2, fltZmm for AVX-512) to roundStochastic where r's low 12 bits
// decide: x below the spacing Q with x/Q = (2^64 - r - δ)/2^64 (exact for
// words r ≥ 2^64 - 2^53, one in 2^11, found by scanning streams) rounds up
// iff δ = 0; a float loop must list such lanes for the general path.
func TestSRFloatBand(t *testing.T) {
	if !haveAVX2 {
		t.Skip("no AVX2")
	}
	rng := rand.New(rand.NewPCG(41, 42))
	for _, f := range kernelFormats() {
		for _, m := range []Mode{Stochastic, mustStochasticBits(t, 64), mustStochasticBits(t, 60)} {
			p := f.srParams(m)
			if p.fltZmm == 0 {
				continue
			}
			var rr blockRounder
			rr.init(&f, m, avx2Kernel)
			hits := 0
			for hits < 24 {
				state := rng.Uint64()
				src := make([]float64, block)
				for i := range src {
					src[i] = rng.Float64() * f.MinNormal()
				}
				var crafted []int
				for i := range src {
					r := wyrandAt(state, uint64(i))
					if r>>53 != 0x7ff {
						continue
					}
					d := uint64(rng.IntN(2))
					x := math.Ldexp(float64(-r-d), f.subQuantumExp()-64) // -r = 2^64 - r
					src[i] = math.Copysign(x, float64(rng.IntN(2)*2-1))
					if r&0xfff+d > 0 {
						crafted = append(crafted, i)
					}
				}
				hits += len(crafted)
				for name, kernel := range stochasticKernels(&p) {
					dst := make([]float64, block)
					var slow [block]uint8
					n := kernel(&dst[0], &src[0], block, &p, state, &slow)
					for _, i := range crafted {
						if (name == "avx512" || p.fltLoop != 0) && !slices.Contains(slow[:n], uint8(i)) {
							t.Fatalf("%s %s %v: x=%v [%#x] at %d in the band not listed", name, f.Name(), m, src[i], math.Float64bits(src[i]), i)
						}
					}
					rr.finishStochastic(dst, slow[:n], state)
					for i, x := range src {
						if want := f.roundStochastic(x, m, wyrandAt(state, uint64(i))); !identical(dst[i], want) {
							t.Fatalf("%s %s %v: x=%v [%#x] r=%#x: kernel %v, roundStochastic %v", name, f.Name(), m, x, math.Float64bits(x),
								wyrandAt(state, uint64(i)), dst[i], want)
						}
					}
				}
			}
		}
	}
}

// TestOut32 holds srParams.bias32 and span32 (the AVX2 loops' test of 8
// values by their high dwords) to their meaning: a lane is out exactly
// where A = |x|>>32 is below hi32(minNormal) or at least hi32(MaxFinite),
// so a lane in lies in [2^Emin, MaxFinite] (subBlend: hi32(Q) for
// minNormal, [Q, MaxFinite]); where the two are equal
// (p = 1, emin = emax) every lane is out, and the kernel still matches
// the portable loop.
func TestOut32(t *testing.T) {
	fs := append(kernelFormats(), Binary64)
	flat, err := Parse("custom:p=1,emin=-10,emax=-10")
	if err != nil {
		t.Fatal(err)
	}
	fs = append(fs, flat)
	rng := rand.New(rand.NewPCG(25, 26))
	for _, f := range fs {
		p := f.srParams(Stochastic)
		l, h := uint32(f.minNormal>>32), uint32(f.maxBits>>32)
		if p.subBlend != 0 {
			l = uint32(uint64(f.subQuantumExp()+1023) << 20)
		}
		as := []uint32{0, 1, l - 1, l, l + 1, h - 1, h, h + 1, 1<<31 - 1}
		for range 1000 {
			as = append(as, rng.Uint32()>>1)
		}
		for _, a := range as {
			a &= 1<<31 - 1
			for _, sign := range []uint32{0, 1 << 31} {
				out := int32(2*(a|sign)+p.bias32[0]) > int32(p.span32[0])
				if want := a < l || a >= h; out != want {
					t.Fatalf("%s: A=%#x: out %v, want %v", f.Name(), a, out, want)
				}
			}
		}
	}
	if !haveAVX2 {
		return
	}
	xs := kernelInputs(flat, rng, 4096)
	for _, m := range kernelStochasticModes(t) {
		p := flat.srParams(m)
		var rr blockRounder
		rr.init(&flat, m, avx2Kernel)
		for n := 0; n <= block; n += 7 {
			off := rng.IntN(len(xs) - n + 1)
			testStochasticKernel(t, "flat "+m.String(), &p, &rr, roundStochasticAVX2, xs[off:off+n], rng.Uint64())
		}
	}
}
