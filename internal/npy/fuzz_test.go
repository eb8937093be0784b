package npy

import (
	"bytes"
	"io"
	"math"
	"testing"
)

// FuzzRead: Read never panics and either fails or returns a consistent
// Matrix (len(Data) = Rows·Cols); the parallel read by blocks (ReadFile's
// path) and the streaming Reader agree with it element for element; and
// what Read returns writes (as float64) and reads back bit for bit.
func FuzzRead(f *testing.F) {
	f.Add(build(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", f64s(le, 1, 2, 3, 4, 5, 6)))
	f.Add(build(1, "{'descr': '>f4', 'fortran_order': True, 'shape': (2, 2), }", f32s(be, 1, 2, 3, 4)))
	f.Add(build(2, "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }", []byte{0, 0x3c, 0, 0x7c, 1, 0x7e}))
	f.Add(build(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", le.AppendUint64(le.AppendUint64(nil, 1<<53+1), 3)))
	f.Add(build(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (), }", []byte{7}))
	f.Add(build(3, "{'descr': '|b1', 'fortran_order': False, 'shape': (1, 1, 2), }", []byte{1, 0}))
	f.Add([]byte("\x93NUMPY\x01\x00\x10\x00{'descr': '<f8'"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Read(bytes.NewReader(data))
		if err == nil && (m.Rows < 0 || m.Cols < 0 || len(m.Data) != m.Rows*m.Cols) {
			t.Fatalf("Read: %d×%d with %d values", m.Rows, m.Cols, len(m.Data))
		}
		pm, perr := decode(bytes.NewReader(data), int64(len(data)), bytes.NewReader(data))
		if (perr == nil) != (err == nil) {
			t.Fatalf("Read: %v; by blocks in parallel: %v", err, perr)
		}
		if err == nil {
			for i, v := range m.Data {
				if math.Float64bits(v) != math.Float64bits(pm.Data[i]) {
					t.Fatalf("element %d: Read %v, by blocks in parallel %v", i, v, pm.Data[i])
				}
			}
		}
		r, serr := NewReader(bytes.NewReader(data))
		var streamed []float64
		if serr == nil {
			buf := make([]float64, 3)
			for len(streamed) <= r.Len {
				n, err := r.Read(buf)
				streamed = append(streamed, buf[:n]...)
				if err == io.EOF {
					break
				}
				if err != nil {
					serr = err
					break
				}
			}
			if serr == nil && len(streamed) != r.Len {
				t.Fatalf("Reader: %d values, header says %d", len(streamed), r.Len)
			}
		}
		if err != nil {
			return
		}
		// Read takes what the Reader takes (and only matrices of ≤ 2 dimensions).
		if serr != nil {
			t.Fatalf("Read succeeded, the Reader failed: %v", serr)
		}
		if !r.Fortran || m.Rows <= 1 || m.Cols <= 1 {
			for i, v := range m.Data {
				if math.Float64bits(v) != math.Float64bits(streamed[i]) {
					t.Fatalf("element %d: Read %v, Reader %v", i, v, streamed[i])
				}
			}
		}
		var out bytes.Buffer
		m.Dtype = "float64"
		if err := Write(&out, m); err != nil {
			t.Fatalf("Write of what Read returned: %v", err)
		}
		back, err := Read(bytes.NewReader(out.Bytes()))
		if err != nil || back.Rows != m.Rows || back.Cols != m.Cols {
			t.Fatalf("read back: %v, %d×%d, want %d×%d", err, back.Rows, back.Cols, m.Rows, m.Cols)
		}
		for i, v := range m.Data {
			if math.Float64bits(v) != math.Float64bits(back.Data[i]) {
				t.Fatalf("element %d: wrote %v, read back %v", i, v, back.Data[i])
			}
		}
	})
}
