package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/format"
	"github.com/mwmm/mwmm/internal/npy"
)

// npyBytes builds a .npy file by hand: descr, shape as Python writes it,
// order, and the raw data.
func npyBytes(descr, shape string, fortran bool, data []byte) []byte {
	order := "False"
	if fortran {
		order = "True"
	}
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr, order, shape)
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	out := []byte("\x93NUMPY\x01\x00")
	out = binary.LittleEndian.AppendUint16(out, uint16(len(h)+1))
	return append(append(out, h...), '\n')
}

func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readArray reads an .npy file back through the streaming reader.
func readArray(t *testing.T, path string) (npy.Header, []float64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := npy.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	vs := make([]float64, r.Len)
	for k := 0; k < r.Len; {
		n, err := r.Read(vs[k:])
		if err != nil {
			t.Fatal(err)
		}
		k += n
	}
	return r.Header, vs
}

func f32le(vs ...float32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

// TestRoundArray rounds hand-built arrays and checks shape, order, dtype and
// every element against format.Round.
func TestRoundArray(t *testing.T) {
	dir := t.TempDir()
	xs := []float32{448, 460, 465, -1e9, 0.001953125, 0.0009765625, 0.3, float32(math.Copysign(0, -1))}
	in := writeFile(t, dir, "x.npy", append(npyBytes("<f4", "(2, 2, 2)", true, nil), f32le(xs...)...))
	out := filepath.Join(dir, "y.npy")
	if code, _, stderr := mwmm(t, "", "round", "--format", "e4m3", "--in", in, "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	h, got := readArray(t, out)
	if h.Dtype != "float32" || !h.Fortran || fmt.Sprint(h.Shape) != "[2 2 2]" {
		t.Errorf("header %+v, want float32, Fortran order, (2, 2, 2)", h)
	}
	// By hand (e4m3: max 448, overflow NaN, subnormal 2^-9, 2^-10 a tie with 0).
	want := []float64{448, 448, math.NaN(), math.NaN(), 0.001953125, 0, 0.3125, math.Copysign(0, -1)}
	for i := range want {
		if !sameFloat(got[i], want[i]) {
			t.Errorf("element %d: %v → %v, want %v", i, xs[i], got[i], want[i])
		}
	}
	info, err := os.Stat(out)
	if err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("output mode %v (%v), want 0644", info.Mode(), err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*partial")); len(m) > 0 {
		t.Errorf("left behind: %v", m)
	}

	// --codes: e4m3 codes as uint8, by hand: 448 = 0x7e, NaN 0x7f, 2^-9 = 0x01, -0 = 0x80.
	codes := filepath.Join(dir, "c.npy")
	if code, _, stderr := mwmm(t, "", "round", "--format", "e4m3", "--in", in, "--out", codes, "--codes"); code != 0 {
		t.Fatalf("--codes: exit %d: %s", code, stderr)
	}
	h, gotc := readArray(t, codes)
	wantc := []float64{0x7e, 0x7e, 0x7f, 0x7f, 0x01, 0x00, 0x2a, 0x80}
	if h.Dtype != "uint8" || fmt.Sprint(gotc) != fmt.Sprint(wantc) {
		t.Errorf("--codes: %s %v, want uint8 %v", h.Dtype, gotc, wantc)
	}
}

func sameFloat(a, b float64) bool {
	return a != a && b != b || a == b && math.Signbit(a) == math.Signbit(b)
}

// TestRoundArrayInputs: float16 and integer inputs convert exactly; the
// output dtype follows the rule in the help.
func TestRoundArrayInputs(t *testing.T) {
	dir := t.TempDir()
	var f16 []byte
	for _, c := range []uint16{0x3c00, 0x3555, 0xfc00, 0x0001} { // 1, 0.333251953125, -Inf, 2^-24
		f16 = binary.LittleEndian.AppendUint16(f16, c)
	}
	var i64 []byte
	for _, v := range []int64{3, -7, 1 << 53, 100} {
		i64 = binary.LittleEndian.AppendUint64(i64, uint64(v))
	}
	for _, tc := range []struct {
		name, descr string
		data        []byte
		args        []string
		dtype       string
		want        []float64
	}{
		{"float16 to bf16", "<f2", f16, []string{"--format", "bf16"}, "float32", []float64{1, 0.333984375, math.Inf(-1), 0x1p-24}},
		{"float16 to fp64", "<f2", f16, []string{"--format", "fp64"}, "float64", []float64{1, 0.333251953125, math.Inf(-1), 0x1p-24}},
		{"int64 to e2m1", "<i8", i64, []string{"--format", "e2m1"}, "float32", []float64{3, -6, 6, 6}},
		{"int64 to fp16 rz, float64 out", "<i8", i64, []string{"--format", "fp16", "--mode", "rz", "--dtype", "float64"}, "float64", []float64{3, -7, 65504, 100}},
	} {
		in := writeFile(t, dir, "x.npy", append(npyBytes(tc.descr, "(4,)", false, nil), tc.data...))
		out := filepath.Join(dir, "y.npy")
		args := append([]string{"round", "--in", in, "--out", out}, tc.args...)
		if code, _, stderr := mwmm(t, "", args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, code, stderr)
		}
		h, got := readArray(t, out)
		if h.Dtype != tc.dtype || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %s %v, want %s %v", tc.name, h.Dtype, got, tc.dtype, tc.want)
		}
	}
}

// TestRoundArrayChunks rounds an array longer than several chunks, in a
// stochastic mode, and checks it equals RoundSlice over the whole array with
// the same seed: streaming changes nothing.
func TestRoundArrayChunks(t *testing.T) {
	defer func(c int) { arrayChunk = c }(arrayChunk)
	arrayChunk = 16384
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	xs := make([]float64, 3*16384+1234)
	var raw []byte
	for i := range xs {
		xs[i] = rng.NormFloat64()
		raw = binary.LittleEndian.AppendUint64(raw, math.Float64bits(xs[i]))
	}
	in := writeFile(t, dir, "x.npy", append(npyBytes("<f8", fmt.Sprintf("(%d,)", len(xs)), false, nil), raw...))
	out := filepath.Join(dir, "y.npy")
	code, stdout, stderr := mwmm(t, "", "round", "--format", "e5m2", "--mode", "sr", "--seed", "9", "--in", in, "--out", out, "--stats")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := make([]float64, len(xs))
	format.E5M2.RoundSlice(want, xs, format.Stochastic, rand.New(rand.NewPCG(9, 9^0x9e3779b97f4a7c15)))
	h, got := readArray(t, out)
	if h.Dtype != "float64" {
		t.Errorf("dtype %s, want float64 (the input's)", h.Dtype)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("element %d: %v, want %v (RoundSlice in one piece)", i, got[i], want[i])
		}
	}
	changed := 0
	for i := range xs {
		if xs[i] != want[i] {
			changed++
		}
	}
	if !strings.Contains(stdout, fmt.Sprintf("%d values (float64 (%d,))", len(xs), len(xs))) ||
		!strings.Contains(stdout, fmt.Sprintf(": %d changed, 0 to zero, 0 beyond", changed)) || !strings.Contains(stdout, "values/s") {
		t.Errorf("--stats: %q", stdout)
	}
}

// TestRoundArrayErrors: bad data leaves an earlier output as it was and
// says which element; bad combinations of flags exit 2.
func TestRoundArrayErrors(t *testing.T) {
	defer func(c int) { arrayChunk = c }(arrayChunk)
	arrayChunk = 16384
	dir := t.TempDir()
	out := writeFile(t, dir, "y.npy", []byte("earlier result"))
	var i64 []byte
	for i := range 20000 {
		v := int64(i)
		if i == 19999 {
			v = 1<<53 + 1
		}
		i64 = binary.LittleEndian.AppendUint64(i64, uint64(v))
	}
	ints := writeFile(t, dir, "i.npy", append(npyBytes("<i8", "(20000,)", false, nil), i64...))
	nan := writeFile(t, dir, "n.npy", append(npyBytes("<f4", "(3,)", false, nil), f32le(1, float32(math.NaN()), 2)...))
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--format", "fp16", "--in", ints, "--out", out}, 1, "element 19999: int64 value 9007199254740993 is not a float64"},
		{[]string{"--format", "e2m1", "--codes", "--in", nan, "--out", out}, 1, "element 1 rounds to NaN, which has no e2m1 code"},
		{[]string{"--format", "fp16", "--in", filepath.Join(dir, "none.npy"), "--out", out}, 1, "no such file"},
		{[]string{"--format", "fp16", "--in", nan, "--out", filepath.Join(dir, "no", "y.npy")}, 1, "--out " + filepath.Join(dir, "no", "y.npy") + ": no folder"},
		{[]string{"--format", "fp16", "--in", nan}, 2, "--in and --out go together"},
		{[]string{"--format", "fp16", "--in", nan, "--out", out, "1.5"}, 2, "beside --in"},
		{[]string{"--format", "fp32", "--codes", "--in", nan, "--out", out}, 2, "32 bits, more than uint16"},
		{[]string{"--format", "custom:p=5,emin=-10,emax=20", "--codes", "--in", nan, "--out", out}, 2, "has no encoding"},
		{[]string{"--format", "fp64", "--dtype", "float32", "--in", nan, "--out", out}, 2, "cannot hold every fp64 value"},
		{[]string{"--format", "fp16", "--dtype", "int8", "--in", nan, "--out", out}, 2, "float32 or float64"},
		{[]string{"--format", "fp16", "--codes", "--dtype", "float32", "--in", nan, "--out", out}, 2, "does not apply"},
		{[]string{"--format", "fp16", "--stats", "1"}, 2, "apply to arrays"},
	} {
		code, _, stderr := mwmm(t, "", append([]string{"round"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want exit %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
		if b, _ := os.ReadFile(out); !bytes.Equal(b, []byte("earlier result")) {
			t.Fatalf("%v: the earlier output was replaced", tc.args)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*partial")); len(m) > 0 {
		t.Errorf("left behind: %v", m)
	}
}

// TestRoundBlock: block formats on values, worked out by hand
// (format/block_test.go derives the same blocks).
func TestRoundBlock(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		// amax 1000: X = 2^(9-8) = 2; 500 clips to 448 → 896; 250 → 256 → 512.
		{[]string{"--block-format", "mxfp8", "1000", "1", "0x1p-10", "500"}, []string{"896", "1", "0", "512"}},
		{[]string{"--block-format", "mxfp8", "--scale-rule", "noclip", "1000", "1", "0x1p-10", "500"}, []string{"1024", "1", "0", "512"}},
		// e2m1, X = 1: 5 ties to 4, 0.75 ties to 1; with rz 5 → 4, 0.75 → 0.5.
		{[]string{"--block-format", "mxfp4", "5", "0.75", "-0.25"}, []string{"4", "1", "-0"}},
		{[]string{"--block-format", "mxfp4", "--mode", "rz", "5", "0.75"}, []string{"4", "0.5"}},
		// nvfp4: amax 2688 = 6·448 gives tensor scale 1 and block scale 448: 1/448 → 0.
		{[]string{"--block-format", "nvfp4", "2688", "1", "-100"}, []string{"2688", "0", "-0"}},
		// A NaN makes its block NaN.
		{[]string{"--block-format", "mxfp6", "1", "nan", "2"}, []string{"NaN", "NaN", "NaN"}},
	} {
		code, stdout, stderr := mwmm(t, "", append([]string{"round"}, tc.args...)...)
		if code != 0 || fmt.Sprint(lines(stdout)) != fmt.Sprint(tc.want) {
			t.Errorf("%v: exit %d, %q (%s); want %v", tc.args, code, lines(stdout), stderr, tc.want)
		}
	}
	// 33 values from stdin: two blocks; the second ({33}) has its own scale.
	var in strings.Builder
	for i := 1; i <= 33; i++ {
		fmt.Fprintf(&in, "%d\n", i)
	}
	_, stdout, _ := mwmm(t, in.String(), "round", "--block-format", "mxfp4")
	got := lines(stdout)
	// Block 1: amax 32, X = 2^(5-2) = 8: 1..32 / 8 in e2m1; 31/8 = 3.875 → 4 → 32. Block 2: 33 alone, X = 8: 4.125 → 4 → 32.
	if len(got) != 33 || got[30] != "32" || got[32] != "32" || got[0] != "0" || got[3] != "4" {
		t.Errorf("stdin blocks: %v", got)
	}
	for _, bad := range [][]string{
		{"--block-format", "mxint8", "1"}, {"--block-format", "mxfp8", "--format", "fp16", "1"},
		{"--block-format", "mxfp8", "--saturate", "1"}, {"--block-format", "mxfp8", "--scale-rule", "round", "1"},
		{"--format", "fp16", "--scale-rule", "noclip", "1"}, {"--block-format", "mxfp8", "--codes", "1"},
	} {
		if code, _, _ := mwmm(t, "", append([]string{"round"}, bad...)...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}

// TestRoundBlockArray: an array in blocks along its last axis, as values
// and as codes with the scales.
func TestRoundBlockArray(t *testing.T) {
	dir := t.TempDir()
	// Shape (2, 3): rows {1000, 1, 500} and {0, -0, 0}.
	raw := f32le(1000, 1, 500, 0, float32(math.Copysign(0, -1)), 0)
	in := writeFile(t, dir, "x.npy", append(npyBytes("<f4", "(2, 3)", false, nil), raw...))
	out := filepath.Join(dir, "y.npy")
	if code, _, stderr := mwmm(t, "", "round", "--block-format", "mxfp8", "--in", in, "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	h, got := readArray(t, out)
	want := []float64{896, 1, 512, 0, math.Copysign(0, -1), 0}
	if h.Dtype != "float64" || fmt.Sprint(h.Shape) != "[2 3]" {
		t.Errorf("header %+v", h)
	}
	for i := range want {
		if !sameFloat(got[i], want[i]) {
			t.Errorf("element %d = %v, want %v", i, got[i], want[i])
		}
	}
	codes, scales := filepath.Join(dir, "c.npy"), filepath.Join(dir, "s.npy")
	if code, _, stderr := mwmm(t, "", "round", "--block-format", "mxfp8", "--in", in, "--out", codes, "--codes", "--scales", scales); code != 0 {
		t.Fatalf("--codes: exit %d: %s", code, stderr)
	}
	// Elements 448, 0.5, 256 in e4m3: 0x7e, 0x30, 0x78; zeros 0x00, 0x80, 0x00.
	// Scales: X = 2 (E8M0 128) and the all-zero row's 2^-127 (0).
	_, gc := readArray(t, codes)
	hs, gs := readArray(t, scales)
	if fmt.Sprint(gc) != "[126 48 120 0 128 0]" || fmt.Sprint(gs) != "[128 0]" || fmt.Sprint(hs.Shape) != "[2 1]" {
		t.Errorf("codes %v, scales %v %v; want [126 48 120 0 128 0], [128 0] of shape (2, 1)", gc, gs, hs.Shape)
	}
	// nvfp4 prints its tensor scale; Fortran order is refused.
	code, stdout, stderr := mwmm(t, "", "round", "--block-format", "nvfp4", "--in", in, "--out", codes, "--codes", "--scales", scales)
	if code != 0 || !strings.Contains(stdout, "nvfp4 tensor scale: ") {
		t.Errorf("nvfp4: exit %d, %q %s", code, stdout, stderr)
	}
	fort := writeFile(t, dir, "f.npy", append(npyBytes("<f4", "(2, 3)", true, nil), raw...))
	if code, _, stderr := mwmm(t, "", "round", "--block-format", "mxfp4", "--in", fort, "--out", out); code != 1 || !strings.Contains(stderr, "Fortran order") {
		t.Errorf("Fortran order: exit %d, %s", code, stderr)
	}
	for _, bad := range [][]string{{"--dtype", "float32"}, {"--codes"}, {"--scales", scales}} {
		args := append([]string{"round", "--block-format", "mxfp8", "--in", in, "--out", out}, bad...)
		if code, _, _ := mwmm(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}

// BenchmarkRoundArray times mwmm round on a 16 Mi-value float32 .npy file
// (64 MiB; e4m3, rne, float32 out) beside format.RoundSlice on the same
// values in memory, in the same run: values/s of each. The file goes
// through the page cache, so the command's figure is its reading,
// converting, rounding and writing; run with -benchtime=3x or so.
func BenchmarkRoundArray(b *testing.B) {
	const n = 16 << 20
	dir := b.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, n)
	raw := make([]byte, 0, 4*n)
	for i := range xs {
		x := float32(rng.NormFloat64())
		xs[i] = float64(x)
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(x))
	}
	in := filepath.Join(dir, "x.npy")
	if err := os.WriteFile(in, append(npyBytes("<f4", fmt.Sprintf("(%d,)", n), false, nil), raw...), 0o644); err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(dir, "y.npy")
	b.Run("cli", func(b *testing.B) {
		for b.Loop() {
			if code := run([]string{"round", "--format", "e4m3", "--in", in, "--out", out}, nil, io.Discard, io.Discard); code != 0 {
				b.Fatalf("exit %d", code)
			}
		}
		b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "values/s")
	})
	b.Run("RoundSlice", func(b *testing.B) {
		dst := make([]float64, n)
		for b.Loop() {
			format.E4M3.RoundSlice(dst, xs, format.NearestEven, nil)
		}
		b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "values/s")
	})
}

// E8M0, a format of its own: formats prints its parameters; round gives
// powers of two (ties up), NaN for what has no value, and its codes
// 2^(c−127) → c, NaN 0xFF, by hand.
func TestRoundE8M0(t *testing.T) {
	code, out, stderr := mwmm(t, "", "formats", "e8m0")
	if code != 0 || !strings.Contains(out, "e8m0  8     1  -127  127") || !strings.Contains(out, "unsigned") {
		t.Errorf("formats e8m0: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = mwmm(t, "", "round", "--format", "e8m0", "1", "1.5", "1.49", "3", "0", "-2", "1e39")
	if want := "1\n2\n1\n4\nNaN\nNaN\nNaN\n"; code != 0 || out != want {
		t.Errorf("round --format e8m0: exit %d, %q, want %q (%s)", code, out, want, stderr)
	}
	dir := t.TempDir()
	xs := []float32{1, 0.5, 3, 0, float32(math.Inf(1)), 0x1p-127, 0x1p127}
	in := writeFile(t, dir, "x.npy", append(npyBytes("<f4", "(7,)", false, nil), f32le(xs...)...))
	codes := filepath.Join(dir, "c.npy")
	if code, _, stderr := mwmm(t, "", "round", "--format", "e8m0", "--in", in, "--out", codes, "--codes"); code != 0 {
		t.Fatalf("--codes: exit %d: %s", code, stderr)
	}
	h, got := readArray(t, codes)
	want := []float64{127, 126, 129, 0xFF, 0xFF, 0, 254}
	if h.Dtype != "uint8" || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("--codes: %s %v, want uint8 %v", h.Dtype, got, want)
	}
}
