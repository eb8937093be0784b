package npy

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/x448/float16"
)

// TestFloat16Exhaustive decodes every fp16 code and compares with
// x448/float16's conversion, bit for bit (NaNs: NaN with the same payload).
func TestFloat16Exhaustive(t *testing.T) {
	for c := range 1 << 16 {
		got := float16ToFloat64(uint16(c))
		want := float64(float16.Frombits(uint16(c)).Float32())
		if math.IsNaN(want) {
			if !math.IsNaN(got) || math.Float64bits(got)>>42&0x3ff != uint64(c)&0x3ff || math.Signbit(got) != (c>>15 == 1) {
				t.Fatalf("code %#04x: %x, want a NaN with payload %#x", c, math.Float64bits(got), c&0x3ff)
			}
			continue
		}
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("code %#04x: %v, want %v", c, got, want)
		}
	}
}

// TestStreamRoundTrip writes arrays of several shapes, orders and dtypes
// in small pieces with Writer and reads them back with Reader and Read.
func TestStreamRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		dtype   string
		shape   []int
		fortran bool
	}{
		{"float64", []int{2, 3, 4}, false}, {"float32", []int{5}, false}, {"uint8", []int{4, 5}, true},
		{"uint16", []int{}, false}, {"float64", []int{0, 3}, false}, {"uint16", []int{3, 1, 1, 2}, false},
	} {
		n := 1
		for _, d := range tc.shape {
			n *= d
		}
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = float64(i*37%251) / map[bool]float64{true: 1, false: 4}[strings.HasPrefix(tc.dtype, "uint")]
		}
		var buf bytes.Buffer
		w, err := NewWriter(&buf, tc.dtype, tc.shape, tc.fortran)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i += 7 {
			part := vals[i:min(i+7, n)]
			if strings.HasPrefix(tc.dtype, "uint") && i%2 == 0 {
				cs := make([]uint64, len(part))
				for j, v := range part {
					cs[j] = uint64(v)
				}
				err = w.WriteCodes(cs)
			} else {
				err = w.Write(part)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if buf.Len()%64 != (n*map[string]int{"float64": 8, "float32": 4, "uint8": 1, "uint16": 2}[tc.dtype])%64 {
			t.Errorf("%v: data does not start on a 64-byte boundary", tc)
		}
		r, err := NewReader(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if r.Dtype != tc.dtype || r.Fortran != tc.fortran || r.Len != n || shapeRepr(r.Shape) != shapeRepr(tc.shape) {
			t.Fatalf("%v: header %+v", tc, r.Header)
		}
		got := make([]float64, 0, n)
		chunk := make([]float64, 5)
		for {
			k, err := r.Read(chunk)
			got = append(got, chunk[:k]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		for i := range vals {
			if got[i] != vals[i] {
				t.Fatalf("%v: element %d = %v, want %v", tc, i, got[i], vals[i])
			}
		}
		if len(tc.shape) <= 2 && !tc.fortran {
			if m, err := Read(bytes.NewReader(buf.Bytes())); err != nil || len(m.Data) != n {
				t.Errorf("%v: Read: %v", tc, err)
			}
		}
	}
}

func TestStreamErrors(t *testing.T) {
	var buf bytes.Buffer
	if _, err := NewWriter(&buf, "int32", []int{1}, false); err == nil || !strings.Contains(err.Error(), `unsupported dtype "int32"`) {
		t.Errorf("NewWriter int32: %v", err)
	}
	w, _ := NewWriter(&buf, "uint8", []int{3}, false)
	for _, v := range []float64{256, -1, 1.5, math.NaN()} {
		if err := w.Write([]float64{v}); err == nil || !strings.Contains(err.Error(), "is not a uint8") {
			t.Errorf("Write(%v) to uint8: %v", v, err)
		}
	}
	if err := w.WriteCodes([]uint64{256}); err == nil || !strings.Contains(err.Error(), "256 is not a uint8") {
		t.Errorf("WriteCodes(256) to uint8: %v", err)
	}
	if err := w.Write([]float64{1, 2, 3, 4}); err == nil {
		t.Error("Write beyond the shape: no error")
	}
	w.Write([]float64{1, 2})
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "2 of 3") {
		t.Errorf("Close after 2 of 3: %v", err)
	}

	// Truncated data: the header claims 4 elements, 2 follow (unknown length).
	file := build(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", f64s(le, 1, 2))
	if _, err := NewReader(bytes.NewReader(file)); err == nil || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("NewReader, known length: %v", err)
	}
	r, err := NewReader(onlyReader{bytes.NewReader(file)})
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]float64, 8)
	if _, err := r.Read(dst); err == nil || !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "got 2") {
		t.Errorf("Read past the data: %v", err)
	}
	// An inexact int64 is named by its index, also in the second chunk.
	var raw []byte
	for i := range 10 {
		v := uint64(i)
		if i == 7 {
			v = 1<<53 + 1
		}
		raw = le.AppendUint64(raw, v)
	}
	r, _ = NewReader(bytes.NewReader(build(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (10,), }", raw)))
	r.Read(dst[:5])
	if _, err := r.Read(dst[:5]); err == nil || !strings.Contains(err.Error(), "element 7: int64 value 9007199254740993") {
		t.Errorf("inexact int64: %v", err)
	}
}

// int64 is for indices (mwmm lu --perm): NumPy indexes with them, not with
// floats. Read gives the values back exactly.
func TestWriteInt64(t *testing.T) {
	var buf bytes.Buffer
	vs := []float64{0, 3, -1, 1 << 53, -(1 << 63)}
	w, err := NewWriter(&buf, "int64", []int{len(vs)}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []float64{1 << 63, 1.5, math.NaN(), math.Inf(-1)} {
		if err := w.Write([]float64{bad}); err == nil || !strings.Contains(err.Error(), "is not an int64") {
			t.Errorf("Write(%v) to int64: %v", bad, err)
		}
	}
	if err := errors.Join(w.Write(vs), w.Close()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte("'descr': '<i8', 'fortran_order': False, 'shape': (5,)")) {
		t.Errorf("header %q", buf.Bytes()[:80])
	}
	m, err := Read(&buf)
	if err != nil || m.Dtype != "int64" || m.Rows != len(vs) || m.Cols != 1 {
		t.Fatalf("read back %+v, %v", m, err)
	}
	for i, v := range vs {
		if m.Data[i] != v {
			t.Errorf("element %d = %v, want %v", i, m.Data[i], v)
		}
	}
}
