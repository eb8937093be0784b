package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// build assembles a .npy file by hand: magic, version major.0, the header
// length in the width that version uses, dict padded with spaces and a
// final '\n' to a 64-byte boundary, then data.
func build(major byte, dict string, data []byte) []byte {
	lenBytes := 4
	if major == 1 {
		lenBytes = 2
	}
	pre := 6 + 2 + lenBytes
	hlen := len(dict) + 1
	pad := (64 - (pre+hlen)%64) % 64
	h := dict + strings.Repeat(" ", pad) + "\n"
	b := append([]byte(magic), major, 0)
	if major == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(h)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(h)))
	}
	b = append(b, h...)
	return append(b, data...)
}

// unpadded is a version 1.0 file whose header is exactly dict: no padding,
// no newline. NumPy never writes this, but it parses it.
func unpadded(dict string, data []byte) []byte {
	b := append([]byte(magic), 1, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(dict)))
	return append(append(b, dict...), data...)
}

func f64s(order binary.AppendByteOrder, vs ...float64) []byte {
	var b []byte
	for _, v := range vs {
		b = order.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

func f32s(order binary.AppendByteOrder, vs ...float32) []byte {
	var b []byte
	for _, v := range vs {
		b = order.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

var (
	le = binary.LittleEndian
	be = binary.BigEndian
)

// onlyReader hides a reader's Len method, so Read cannot know the size.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// readAll decodes b three ways: from a sized reader, from an unsized one,
// and from a file. All three must agree.
func readAll(t *testing.T, b []byte) (Matrix, error) {
	t.Helper()
	m1, err1 := Read(bytes.NewReader(b))
	m2, err2 := Read(onlyReader{bytes.NewReader(b)})
	path := filepath.Join(t.TempDir(), "x.npy")
	if err := os.WriteFile(path, b, 0o666); err != nil {
		t.Fatal(err)
	}
	m3, err3 := ReadFile(path)
	if (err1 == nil) != (err2 == nil) || (err1 == nil) != (err3 == nil) {
		t.Fatalf("sized, unsized and file reads disagree: %v / %v / %v", err1, err2, err3)
	}
	if err1 == nil {
		sameMatrix(t, "unsized read", m2, m1)
		sameMatrix(t, "file read", m3, m1)
	}
	return m1, errors.Join(err1, err2, err3)
}

// sameMatrix compares bit for bit, so NaN payloads and -0 count.
func sameMatrix(t *testing.T, what string, got, want Matrix) {
	t.Helper()
	if got.Rows != want.Rows || got.Cols != want.Cols || got.Dtype != want.Dtype || len(got.Data) != len(want.Data) {
		t.Fatalf("%s: got %d×%d %s (len %d), want %d×%d %s (len %d)", what,
			got.Rows, got.Cols, got.Dtype, len(got.Data), want.Rows, want.Cols, want.Dtype, len(want.Data))
	}
	for i := range got.Data {
		if math.Float64bits(got.Data[i]) != math.Float64bits(want.Data[i]) {
			t.Fatalf("%s: Data[%d] = %v (%#x), want %v (%#x)", what, i,
				got.Data[i], math.Float64bits(got.Data[i]), want.Data[i], math.Float64bits(want.Data[i]))
		}
	}
}

func TestRoundTrip(t *testing.T) {
	shapes := [][2]int{{1, 1}, {3, 1}, {1, 5}, {4, 3}, {0, 4}}
	for _, dtype := range []string{"float32", "float64"} {
		for _, s := range shapes {
			m := Matrix{Rows: s[0], Cols: s[1], Dtype: dtype, Data: make([]float64, s[0]*s[1])}
			for i := range m.Data {
				m.Data[i] = float64(i)*1.25 - 3 // exact in float32
			}
			var buf bytes.Buffer
			if err := Write(&buf, m); err != nil {
				t.Fatal(err)
			}
			b := buf.Bytes()
			hlen := int(le.Uint16(b[8:]))
			if b[6] != 1 || b[7] != 0 || (10+hlen)%64 != 0 || b[10+hlen-1] != '\n' {
				t.Errorf("%s %v: header not version 1.0 padded to 64 bytes: %q", dtype, s, b[:10+hlen])
			}
			elem := map[string]int{"float32": 4, "float64": 8}[dtype]
			if want := 10 + hlen + len(m.Data)*elem; len(b) != want {
				t.Errorf("%s %v: file is %d bytes, want %d", dtype, s, len(b), want)
			}
			got, err := readAll(t, b)
			if err != nil {
				t.Fatal(err)
			}
			sameMatrix(t, dtype, got, m)

			path := filepath.Join(t.TempDir(), "m.npy")
			if err := WriteFile(path, m); err != nil {
				t.Fatal(err)
			}
			got, err = ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			sameMatrix(t, "WriteFile/ReadFile "+dtype, got, m)
		}
	}
}

func TestWriteDefaultDtypeIsFloat64(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, Matrix{Rows: 1, Cols: 1, Data: []float64{0.1}}); err != nil {
		t.Fatal(err)
	}
	m, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	sameMatrix(t, "default dtype", m, Matrix{Rows: 1, Cols: 1, Data: []float64{0.1}, Dtype: "float64"})
}

// TestNumPyBytes checks the exact output of
//
//	np.save(f, np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32))
func TestNumPyBytes(t *testing.T) {
	dict := "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }"
	want := []byte("\x93NUMPY\x01\x00")
	want = le.AppendUint16(want, 128-10)
	want = append(want, dict...)
	for len(want) < 127 {
		want = append(want, ' ')
	}
	want = append(want, '\n')
	want = append(want, f32s(le, 1, 2, 3, 4)...)

	var buf bytes.Buffer
	m := Matrix{Rows: 2, Cols: 2, Dtype: "float32", Data: []float64{1, 2, 3, 4}}
	if err := Write(&buf, m); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("Write produced\n%q\nwant\n%q", buf.Bytes(), want)
	}
	got, err := readAll(t, want)
	if err != nil {
		t.Fatal(err)
	}
	sameMatrix(t, "numpy file", got, m)
}

func TestFloat32RoundsToNearestEven(t *testing.T) {
	ulp := math.Ldexp(1, -23) // float32 spacing at 1
	in := []float64{
		0.1,
		1 + ulp/2,                         // tie: rounds down to even 1
		1 + 3*ulp/2,                       // tie: rounds up to even 1+2ulp
		1 + ulp/2 + math.Ldexp(1, -40),    // just above a tie: rounds up
		math.MaxFloat64, -math.MaxFloat64, // overflow to ±Inf
		math.SmallestNonzeroFloat64, // underflows to +0
	}
	want := []float64{
		float64(float32(0.1)),
		1,
		1 + 2*ulp,
		1 + ulp,
		math.Inf(1), math.Inf(-1),
		0,
	}
	var buf bytes.Buffer
	if err := Write(&buf, Matrix{Rows: len(in), Cols: 1, Dtype: "float32", Data: in}); err != nil {
		t.Fatal(err)
	}
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	sameMatrix(t, "float32 rounding", got, Matrix{Rows: len(in), Cols: 1, Dtype: "float32", Data: want})
}

func TestSpecialValues(t *testing.T) {
	vals := []float64{
		math.NaN(),
		math.Float64frombits(0x7ff8000000000123), // quiet NaN with payload
		math.Float64frombits(0x7ff0000000000001), // signalling NaN
		math.Float64frombits(0xfff8000000000000), // negative NaN
		math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0,
		math.SmallestNonzeroFloat64, math.MaxFloat64,
	}
	m := Matrix{Rows: 2, Cols: 5, Dtype: "float64", Data: vals}
	var buf bytes.Buffer
	if err := Write(&buf, m); err != nil {
		t.Fatal(err)
	}
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	sameMatrix(t, "float64 specials", got, m) // bit for bit

	m.Dtype = "float32"
	m.Data = []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0}
	m.Rows, m.Cols = 1, 5
	buf.Reset()
	if err := Write(&buf, m); err != nil {
		t.Fatal(err)
	}
	got, err = Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(got.Data[0]) {
		t.Errorf("float32 NaN read back as %v", got.Data[0])
	}
	got.Data[0], m.Data[0] = 0, 0
	sameMatrix(t, "float32 specials", got, m)
}

func TestReadHandBuilt(t *testing.T) {
	tests := []struct {
		name string
		file []byte
		want Matrix
	}{
		{"v1 2-D", build(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", f64s(le, 1, 2, 3, 4, 5, 6)),
			Matrix{2, 3, []float64{1, 2, 3, 4, 5, 6}, "float64"}},
		{"v2 2-D", build(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }", f32s(le, 1, 2, 3, 4, 5, 6)),
			Matrix{3, 2, []float64{1, 2, 3, 4, 5, 6}, "float32"}},
		{"v3", build(3, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }", f64s(le, -1, 1)),
			Matrix{1, 2, []float64{-1, 1}, "float64"}},
		{"fortran 2x3", build(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", f64s(le, 1, 4, 2, 5, 3, 6)),
			Matrix{2, 3, []float64{1, 2, 3, 4, 5, 6}, "float64"}},
		{"fortran v2 f4 3x2", build(2, "{'descr': '<f4', 'fortran_order': True, 'shape': (3, 2), }", f32s(le, 1, 3, 5, 2, 4, 6)),
			Matrix{3, 2, []float64{1, 2, 3, 4, 5, 6}, "float32"}},
		{"fortran 1-D", build(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (3,), }", f64s(le, 1, 2, 3)),
			Matrix{3, 1, []float64{1, 2, 3}, "float64"}},
		{"big-endian f8", build(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (2, 2), }", f64s(be, 1.5, -2.25, math.Inf(1), 1e300)),
			Matrix{2, 2, []float64{1.5, -2.25, math.Inf(1), 1e300}, "float64"}},
		{"big-endian f4", build(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (1, 3), }", f32s(be, 0.5, -8, 3)),
			Matrix{1, 3, []float64{0.5, -8, 3}, "float32"}},
		{"native =f8", build(1, "{'descr': '=f8', 'fortran_order': False, 'shape': (1, 1), }", f64s(le, 7)),
			Matrix{1, 1, []float64{7}, "float64"}},
		{"native =f4", build(1, "{'descr': '=f4', 'fortran_order': False, 'shape': (1,), }", f32s(le, 7)),
			Matrix{1, 1, []float64{7}, "float32"}},
		{"0-d", build(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", f64s(le, 42)),
			Matrix{1, 1, []float64{42}, "float64"}},
		{"1-D column", build(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", f32s(le, 1, 2, 3)),
			Matrix{3, 1, []float64{1, 2, 3}, "float32"}},
		{"empty 0x4", build(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 4), }", nil),
			Matrix{0, 4, []float64{}, "float64"}},
		{"empty 1-D", build(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0,), }", nil),
			Matrix{0, 1, []float64{}, "float64"}},
		{"empty fortran 3x0", build(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (3, 0), }", nil),
			Matrix{3, 0, []float64{}, "float64"}},
		{"key order, double quotes", build(1, `{"shape": (2,1), "fortran_order": False, "descr": "<f8"}`, f64s(le, 1, 2)),
			Matrix{2, 1, []float64{1, 2}, "float64"}},
		{"no spaces, no padding, no newline", unpadded("{'descr':'<f8','fortran_order':False,'shape':(1,2)}", f64s(le, 3, 4)),
			Matrix{1, 2, []float64{3, 4}, "float64"}},
		{"lots of spaces and trailing commas", build(1, "{ 'fortran_order' :False ,\t'shape' : ( 1 , 2 , ) , 'descr':'<f8' , }", f64s(le, 5, 6)),
			Matrix{1, 2, []float64{5, 6}, "float64"}},
		{"python 2 longs", build(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1L, 2L), }", f64s(le, 5, 6)),
			Matrix{1, 2, []float64{5, 6}, "float64"}},
		{"parenthesised dimension", build(1, "{'descr': '<f8', 'fortran_order': False, 'shape': ((2), 1), }", f64s(le, 5, 6)),
			Matrix{2, 1, []float64{5, 6}, "float64"}},
		{"float16", build(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (9,), }",
			le.AppendUint16(le.AppendUint16(le.AppendUint16(le.AppendUint16(le.AppendUint16(le.AppendUint16(le.AppendUint16(le.AppendUint16(le.AppendUint16(nil,
				0x3c00), 0xc000), 0x7bff), 0x0001), 0x03ff), 0x0400), 0x8000), 0x7c00), 0x3555)),
			Matrix{9, 1, []float64{1, -2, 65504, 0x1p-24, 1023 * 0x1p-24, 0x1p-14, math.Copysign(0, -1), math.Inf(1), 0x1.554p-2}, "float16"}},
		{"float16 big-endian", build(1, "{'descr': '>f2', 'fortran_order': False, 'shape': (1, 2), }", be.AppendUint16(be.AppendUint16(nil, 0xfc00), 0x4248)),
			Matrix{1, 2, []float64{math.Inf(-1), 3.140625}, "float16"}},
		{"int8", build(1, "{'descr': '|i1', 'fortran_order': False, 'shape': (3,), }", []byte{0x80, 0xff, 0x7f}),
			Matrix{3, 1, []float64{-128, -1, 127}, "int8"}},
		{"uint8", build(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }", []byte{0xff, 3}),
			Matrix{2, 1, []float64{255, 3}, "uint8"}},
		{"bool", build(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", []byte{1, 0}),
			Matrix{2, 1, []float64{1, 0}, "bool"}},
		{"int16 big-endian", build(1, "{'descr': '>i2', 'fortran_order': False, 'shape': (2,), }", []byte{0x80, 0x00, 0x01, 0x02}),
			Matrix{2, 1, []float64{-32768, 258}, "int16"}},
		{"uint16", build(1, "{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }", []byte{0xff, 0xff}),
			Matrix{1, 1, []float64{65535}, "uint16"}},
		{"int32 fortran", build(1, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 2), }", le.AppendUint32(le.AppendUint32(le.AppendUint32(le.AppendUint32(nil, 1), 0xffffffff), 0x80000000), 4)),
			Matrix{2, 2, []float64{1, -2147483648, -1, 4}, "int32"}},
		{"uint32", build(1, "{'descr': '<u4', 'fortran_order': False, 'shape': (1,), }", le.AppendUint32(nil, 0xffffffff)),
			Matrix{1, 1, []float64{4294967295}, "uint32"}},
		{"int64 exact", build(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (4,), }",
			le.AppendUint64(le.AppendUint64(le.AppendUint64(le.AppendUint64(nil, 1<<53), 1<<62), 0x8000000000000000), 0xffffffffffffffff)),
			Matrix{4, 1, []float64{1 << 53, 1 << 62, -(1 << 63), -1}, "int64"}},
		{"uint64 exact", build(1, "{'descr': '<u8', 'fortran_order': False, 'shape': (2,), }", le.AppendUint64(le.AppendUint64(nil, 1<<63), 1<<64-1<<11)),
			Matrix{2, 1, []float64{1 << 63, 1<<64 - 1<<11}, "uint64"}},
		{"trailing bytes ignored", build(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", append(f64s(le, 9), "junk"...)),
			Matrix{1, 1, []float64{9}, "float64"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(t, tc.file)
			if err != nil {
				t.Fatal(err)
			}
			sameMatrix(t, tc.name, got, tc.want)
		})
	}
}

// TestReadConsecutive checks that Read consumes exactly one array, so
// several can be read from one stream.
func TestReadConsecutive(t *testing.T) {
	var buf bytes.Buffer
	a := Matrix{2, 2, []float64{1, 2, 3, 4}, "float64"}
	b := Matrix{1, 3, []float64{5, 6, 7}, "float32"}
	for _, m := range []Matrix{a, b} {
		if err := Write(&buf, m); err != nil {
			t.Fatal(err)
		}
	}
	r := onlyReader{&buf}
	for _, want := range []Matrix{a, b} {
		got, err := Read(r)
		if err != nil {
			t.Fatal(err)
		}
		sameMatrix(t, "consecutive", got, want)
	}
	if _, err := Read(r); err == nil || !strings.Contains(err.Error(), "empty input") {
		t.Fatalf("Read at end of stream: err = %v, want empty input", err)
	}
}

func TestReadErrors(t *testing.T) {
	hdr := func(descr, fortran, shape string) string {
		return "{'descr': " + descr + ", 'fortran_order': " + fortran + ", 'shape': " + shape + ", }"
	}
	ok := func(shape string) string { return hdr("'<f8'", "False", shape) }
	withDescr := func(descr string) []byte { return build(1, hdr(descr, "False", "(1,)"), f64s(le, 1)) }
	bigLen := append([]byte("\x93NUMPY\x02\x00"), le.AppendUint32(nil, 0xffffffff)...)
	tests := []struct {
		name string
		file []byte
		want string // substring of the error
	}{
		{"empty", nil, "empty input"},
		{"short preamble", []byte("\x93NUM"), "truncated preamble"},
		{"bad magic", []byte("\x93NUMPZ\x01\x00\x10\x00{}"), "bad magic"},
		{"not npy at all", []byte("PK\x03\x04 this is a zip file"), "bad magic"},
		{"magic only", []byte(magic), "truncated preamble"},
		{"unsupported version", append([]byte("\x93NUMPY\x04\x00"), build(1, ok("(1,)"), f64s(le, 1))[8:]...), "unsupported format version 4.0"},
		{"unsupported minor", append([]byte("\x93NUMPY\x01\x01"), build(1, ok("(1,)"), f64s(le, 1))[8:]...), "unsupported format version 1.1"},
		{"no header length", []byte("\x93NUMPY\x02\x00\x10"), "truncated header length"},
		{"header shorter than length", []byte("\x93NUMPY\x01\x00\x40\x00{'descr': '<f8'"), "truncated header"},
		{"huge header length", bigLen, "exceeds the limit"},
		{"header not a dict", build(1, "[1, 2, 3]", nil), "not a Python dict"},
		{"unterminated dict", build(1, "{'descr': '<f8', ", nil), "unexpected end"},
		{"unterminated string", build(1, "{'descr: '<f8'}", nil), "header"},
		{"missing colon", build(1, "{'descr' '<f8'}", nil), "missing ':'"},
		{"missing comma", build(1, "{'descr': '<f8' 'shape': (1,)}", nil), "expected ','"},
		{"junk after dict", build(1, ok("(1,)")+" x", f64s(le, 1)), "after the dict"},
		{"non-string key", build(1, "{1: 2}", nil), "not a string"},
		{"unknown name", build(1, hdr("'<f8'", "false", "(1,)"), f64s(le, 1)), "unexpected name"},
		{"missing shape", build(1, "{'descr': '<f8', 'fortran_order': False}", nil), `lacks key "shape"`},
		{"missing descr", build(1, "{'shape': (1,), 'fortran_order': False}", nil), `lacks key "descr"`},
		{"extra key", build(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'x': 1}", f64s(le, 1)), `unexpected key "x"`},
		{"duplicate key", build(1, "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (1,)}", f64s(le, 1)), "twice"},
		{"complex", withDescr("'<c16'"), `unsupported dtype "<c16": only float16, float32, float64, int8`},
		{"complex64", withDescr("'<c8'"), `unsupported dtype "<c8"`},
		{"longdouble", withDescr("'<f16'"), `unsupported dtype "<f16"`},
		{"object", withDescr("'|O'"), `unsupported dtype "|O"`},
		{"string", withDescr("'<U8'"), `unsupported dtype "<U8"`},
		{"bytes", withDescr("'|S4'"), `unsupported dtype "|S4"`},
		{"datetime", withDescr("'<M8[ns]'"), `unsupported dtype "<M8[ns]"`},
		{"int128", withDescr("'<i16'"), `unsupported dtype "<i16"`},
		{"no byte order", withDescr("'f8'"), `unsupported dtype "f8"`},
		{"pipe float", withDescr("'|f4'"), `invalid dtype "|f4"`},
		{"pipe int16", withDescr("'|i2'"), `invalid dtype "|i2": a 2-byte int16 needs byte order`},
		{"structured", withDescr("[('a', '<f8'), ('b', '<f8')]"), "unsupported dtype [('a', '<f8'), ('b', '<f8')]: only float16, float32"},
		{"int64 beyond 2^53", build(1, hdr("'<i8'", "False", "(3,)"), le.AppendUint64(le.AppendUint64(le.AppendUint64(nil, 1), 1<<53), 1<<53+1)),
			"element 2: int64 value 9007199254740993 is not a float64"},
		{"int64 max", build(1, hdr("'<i8'", "False", "(1,)"), le.AppendUint64(nil, 1<<63-1)), "int64 value 9223372036854775807 is not a float64"},
		{"uint64 beyond 2^53", build(1, hdr("'>u8'", "False", "(1,)"), be.AppendUint64(nil, 1<<60+1)), "uint64 value 1152921504606846977"},
		{"uint64 max", build(1, hdr("'<u8'", "False", "(1,)"), le.AppendUint64(nil, 1<<64-1)), "uint64 value 18446744073709551615"},
		{"descr not string", withDescr("8"), "unsupported dtype 8"},
		{"fortran_order not bool", build(1, hdr("'<f8'", "0", "(1,)"), f64s(le, 1)), "'fortran_order' is 0"},
		{"shape is list", build(1, ok("[2, 1]"), f64s(le, 1, 2)), "want a tuple"},
		{"shape is int", build(1, ok("(2)"), f64s(le, 1, 2)), "want a tuple"},
		{"shape 3-D", build(1, ok("(1, 2, 1)"), f64s(le, 1, 2)), "has 3 dimensions: a matrix has only 0, 1 or 2"},
		{"shape 65-D", build(1, ok("("+strings.Repeat("1, ", 65)+")"), f64s(le, 1)), "NumPy allows at most 64"},
		{"shape of strings", build(1, ok("('2', 1)"), f64s(le, 1, 2)), "not an integer"},
		{"negative dimension", build(1, ok("(-1, 2)"), f64s(le, 1, 2)), "negative dimension -1"},
		{"dimension beyond int", build(1, ok("(99999999999999999999, 1)"), nil), "too large"},
		{"product overflows", build(1, ok("(4294967296, 4294967296)"), nil), "too large"},
		{"malformed number", build(1, ok("(1.5,)"), nil), "malformed number"},
		{"truncated data", build(1, ok("(2, 3)"), f64s(le, 1, 2, 3, 4, 5)), "truncated data"},
		{"truncated mid-element", build(1, ok("(2,)"), f64s(le, 1, 2)[:12]), "truncated data"},
		{"no data", build(1, ok("(2,)"), nil), "truncated data"},
		{"deep nesting", build(1, "{'descr': "+strings.Repeat("[", 100)+"}", nil), "nested too deeply"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAll(t, tc.file)
			if err == nil {
				t.Fatalf("no error, want one containing %q", tc.want)
			}
			for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
				if !strings.HasPrefix(e.Error(), "npy: ") || !strings.Contains(e.Error(), tc.want) {
					t.Errorf("error %q: want prefix \"npy: \" and %q", e, tc.want)
				}
				if strings.Contains(tc.want, "truncated") && !errors.Is(e, io.ErrUnexpectedEOF) {
					t.Errorf("error %q does not wrap io.ErrUnexpectedEOF", e)
				}
			}
		})
	}
}

// TestHugeShapeDoesNotAllocate feeds headers claiming 512 MiB of data backed
// by 16 bytes, and checks that reading fails without allocating anywhere
// near that much.
func TestHugeShapeDoesNotAllocate(t *testing.T) {
	file := build(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (16777216, 4), }", f64s(le, 1, 2))
	path := filepath.Join(t.TempDir(), "huge.npy")
	if err := os.WriteFile(path, file, 0o666); err != nil {
		t.Fatal(err)
	}
	reads := map[string]func() error{
		"sized":   func() error { _, err := Read(bytes.NewReader(file)); return err },
		"unsized": func() error { _, err := Read(onlyReader{bytes.NewReader(file)}); return err },
		"file":    func() error { _, err := ReadFile(path); return err },
	}
	for name, read := range reads {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := read()
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "truncated data") {
			t.Errorf("%s: err = %v, want truncated data", name, err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
			t.Errorf("%s: allocated %d bytes for a %d-byte input", name, n, len(file))
		}
	}
}

type failWriter struct{ after int }

func (f *failWriter) Write(p []byte) (int, error) {
	if len(p) > f.after {
		n := f.after
		f.after = 0
		return n, errors.New("disk full")
	}
	f.after -= len(p)
	return len(p), nil
}

func TestWriteErrors(t *testing.T) {
	tests := []struct {
		name string
		m    Matrix
		want string
	}{
		{"too few elements", Matrix{Rows: 2, Cols: 3, Data: make([]float64, 5)}, "len(Data) = 5, want Rows*Cols = 2×3 = 6"},
		{"too many elements", Matrix{Rows: 1, Cols: 1, Data: make([]float64, 2)}, "len(Data) = 2"},
		{"nil data for 1x1", Matrix{Rows: 1, Cols: 1}, "len(Data) = 0"},
		{"negative rows", Matrix{Rows: -1, Cols: 2}, "negative dimensions -1×2"},
		{"negative cols", Matrix{Rows: 0, Cols: -2}, "negative dimensions"},
		{"overflowing dims", Matrix{Rows: math.MaxInt / 2, Cols: 4}, "too large"},
		{"bad dtype", Matrix{Rows: 1, Cols: 1, Data: []float64{1}, Dtype: "int32"}, `unsupported Dtype "int32"`},
		{"numpy-style dtype", Matrix{Rows: 1, Cols: 1, Data: []float64{1}, Dtype: "<f8"}, `unsupported Dtype "<f8"`},
	}
	for _, tc := range tests {
		var buf bytes.Buffer
		err := Write(&buf, tc.m)
		if err == nil || !strings.HasPrefix(err.Error(), "npy: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want prefix \"npy: \" and %q", tc.name, err, tc.want)
		}
		if buf.Len() != 0 {
			t.Errorf("%s: wrote %d bytes before failing validation", tc.name, buf.Len())
		}
	}

	m := Matrix{Rows: 100, Cols: 100, Data: make([]float64, 100*100)}
	for _, after := range []int{0, 50, 200} { // in the header, in the data
		err := Write(&failWriter{after: after}, m)
		if err == nil || !strings.HasPrefix(err.Error(), "npy: ") || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("failing writer after %d bytes: err = %v", after, err)
		}
	}
}

func TestWriteFileErrors(t *testing.T) {
	dir := t.TempDir()
	err := WriteFile(filepath.Join(dir, "no", "such", "dir.npy"), Matrix{Rows: 1, Cols: 1, Data: []float64{1}})
	if err == nil || !strings.HasPrefix(err.Error(), "npy: ") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("WriteFile into a missing directory: err = %v", err)
	}

	// An invalid Matrix must not clobber an existing file.
	path := filepath.Join(dir, "keep.npy")
	good := Matrix{Rows: 1, Cols: 2, Data: []float64{1, 2}, Dtype: "float64"}
	if err := WriteFile(path, good); err != nil {
		t.Fatal(err)
	}
	err = WriteFile(path, Matrix{Rows: 2, Cols: 2, Data: []float64{1}})
	if err == nil || !strings.HasPrefix(err.Error(), "npy: ") || !strings.Contains(err.Error(), "len(Data)") {
		t.Errorf("WriteFile of a bad Matrix: err = %v", err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sameMatrix(t, "file after failed WriteFile", got, good)

	if _, err := ReadFile(filepath.Join(dir, "missing.npy")); err == nil ||
		!strings.HasPrefix(err.Error(), "npy: ") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile of a missing file: err = %v", err)
	}
}

// TestHeaderMatchesNumPy checks the header layout rules np.save follows:
// version 1.0, a length field that covers the padded header, and padding
// with spaces and a final '\n' to a 64-byte boundary, whatever the digits.
func TestHeaderMatchesNumPy(t *testing.T) {
	for _, rc := range [][2]int{{0, 0}, {1, 1}, {12345, 7}, {math.MaxInt32, 3}, {math.MaxInt / 8, 1}, {1, math.MaxInt32}} {
		h := headerBytes("<f8", false, "("+strconv.Itoa(rc[0])+", "+strconv.Itoa(rc[1])+")", rc[0])
		if len(h)%64 != 0 || h[len(h)-1] != '\n' || int(le.Uint16(h[8:])) != len(h)-10 {
			t.Errorf("%v: bad layout %q", rc, h)
		}
		m, err := Read(onlyReader{bytes.NewReader(h)})
		if n, ok := mulCheck(rc[0], rc[1]); !ok {
			// Only on 32-bit platforms, where int is narrower.
			if err == nil || !strings.Contains(err.Error(), "too large") {
				t.Errorf("%v: header alone: err = %v, want too large", rc, err)
			}
		} else if n != 0 {
			if err == nil || !strings.Contains(err.Error(), "truncated data") {
				t.Errorf("%v: header alone: err = %v, want truncated data", rc, err)
			}
		} else if err != nil || m.Rows != rc[0] || m.Cols != rc[1] {
			t.Errorf("%v: read back %d×%d, %v", rc, m.Rows, m.Cols, err)
		}
	}
}

func TestWriteVector(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.npy")
	if err := WriteVectorFile(path, []float64{1, 2, 3}, "float64"); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "'shape': (3,), }") || len(raw)%64 != 24 {
		t.Fatalf("file %q", raw)
	}
	m, err := ReadFile(path)
	if err != nil || m.Rows != 3 || m.Cols != 1 || m.Data[2] != 3 {
		t.Fatalf("read back %+v, %v", m, err)
	}
}
