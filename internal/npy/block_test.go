package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// smallBlocks makes blockBytes and convBytes tiny for one test, so that
// small arrays span many blocks and end in a partial one.
func smallBlocks(t *testing.T, block, conv int) {
	bb, cb := blockBytes, convBytes
	blockBytes, convBytes = block, conv
	t.Cleanup(func() { blockBytes, convBytes = bb, cb })
}

var descrs = []string{"f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "b1"}

// randomData is n random elements of descr d (no byte order): any bits for
// floats (NaNs and all), integers below 2^53 so that all convert.
func randomData(rng *rand.Rand, d string, n int) []byte {
	size := int(d[1] - '0')
	b := make([]byte, n*size)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	for i := 0; i < n; i++ {
		switch d {
		case "i8", "u8": // the top 11 bits of each element, in either order, say 0 or all ones
			top := 0x00
			if d == "i8" && rng.IntN(2) == 0 {
				top = 0xff
			}
			b[i*8], b[i*8+7] = byte(top), byte(top)
			b[i*8+1] &= 0x0f
			b[i*8+6] &= 0x0f
			if top == 0xff {
				b[i*8+1] |= 0xf0
				b[i*8+6] |= 0xf0
			}
		case "b1":
			b[i] &= 1
		}
	}
	return b
}

// oracle decodes data per element (convertAs) and transposes by the
// definition: what the block paths must reproduce bit for bit.
func oracle(t *testing.T, descr string, fortran bool, rows, cols int, data []byte) []float64 {
	h, err := parseHeader(fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': (%d, %d)}", descr, pyBool(fortran), rows, cols))
	if err != nil {
		t.Fatal(err)
	}
	flat := make([]float64, rows*cols)
	if descr[0] == '>' {
		err = convertAs(binary.BigEndian, &h, data, flat, 0)
	} else {
		err = convertAs(binary.LittleEndian, &h, data, flat, 0)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !fortran {
		return flat
	}
	out := make([]float64, len(flat))
	for i := range rows {
		for j := range cols {
			out[i*cols+j] = flat[j*rows+i]
		}
	}
	return out
}

func pyBool(b bool) string { return map[bool]string{true: "True", false: "False"}[b] }

// TestBlocksMatchPerElement: every dtype, byte order and order, random
// shapes (0, 1 and sizes that end in partial blocks), read four ways
// (sized, unsized, from a file in parallel, streamed in random pieces),
// gives the per-element decoding bit for bit.
func TestBlocksMatchPerElement(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 45))
	dims := []int{0, 1, 2, 3, 7, 17, 64, 129}
	for _, sizes := range [][2]int{{8, 8}, {24, 40}, {1000, 56}, {4096, 4096}} {
		smallBlocks(t, sizes[0], sizes[1])
		for _, d := range descrs {
			for _, bo := range []string{"<", ">"} {
				if d == "b1" || d[1] == '1' {
					bo = "|"
				}
				for _, fortran := range []bool{false, true} {
					rows, cols := dims[rng.IntN(len(dims))], dims[rng.IntN(len(dims))]
					data := randomData(rng, d, rows*cols)
					want := oracle(t, bo+d, fortran, rows, cols, data)
					file := build(1, fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': (%d, %d), }", bo+d, pyBool(fortran), rows, cols), data)
					what := fmt.Sprintf("%s%s %d×%d fortran=%v blocks %v", bo, d, rows, cols, fortran, sizes)
					m, err := readAll(t, file)
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					sameMatrix(t, what, m, Matrix{Rows: rows, Cols: cols, Data: want, Dtype: m.Dtype})
					checkStream(t, what, rng, file, data, bo+d, rows*cols)
				}
			}
		}
	}
}

// checkStream reads file with Reader in random pieces and compares with
// the per-element decoding of data in its order on disk.
func checkStream(t *testing.T, what string, rng *rand.Rand, file, data []byte, descr string, n int) {
	want := oracle(t, descr, false, n, 1, data)
	r, err := NewReader(onlyReader{bytes.NewReader(file)})
	if err != nil {
		t.Fatalf("%s: NewReader: %v", what, err)
	}
	var got []float64
	for {
		buf := make([]float64, rng.IntN(300))
		k, err := r.Read(buf)
		got = append(got, buf[:k]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: Reader: %v", what, err)
		}
	}
	sameMatrix(t, what+" streamed", Matrix{Rows: len(got), Data: got}, Matrix{Rows: n, Data: want})
}

// TestWriteBlocksMatchPerElement: Write, WriteFile and Writer give the
// bytes of the per-element encoding, for random sizes across blocks.
func TestWriteBlocksMatchPerElement(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 45))
	smallBlocks(t, 24, 40)
	for _, n := range []int{0, 1, 2, 5, 7, 100, 1001} {
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = math.Float64frombits(rng.Uint64())
		}
		for _, dtype := range []string{"float64", "float32"} {
			var data []byte
			for _, v := range vals {
				if dtype == "float32" {
					data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(v)))
				} else {
					data = binary.LittleEndian.AppendUint64(data, math.Float64bits(v))
				}
			}
			descr := map[string]string{"float64": "<f8", "float32": "<f4"}[dtype]
			want := append(headerBytes(descr, false, fmt.Sprintf("(%d,)", n), n), data...)
			path := filepath.Join(t.TempDir(), "v.npy")
			if err := WriteVectorFile(path, vals, dtype); err != nil {
				t.Fatal(err)
			}
			if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("WriteVectorFile %s n=%d: bytes differ from the per-element encoding (%v)", dtype, n, err)
			}
			var buf bytes.Buffer
			w, err := NewWriter(&buf, dtype, []int{n}, false)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; {
				k := min(n-i, rng.IntN(50))
				if err := w.Write(vals[i : i+k]); err != nil {
					t.Fatal(err)
				}
				i += k
			}
			if err := w.Close(); err != nil || !bytes.Equal(buf.Bytes(), want) {
				t.Fatalf("Writer %s n=%d: bytes differ from the per-element encoding (%v)", dtype, n, err)
			}
			buf.Reset()
			if err := Write(&buf, Matrix{Rows: n, Cols: 1, Data: vals, Dtype: dtype}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes()[len(buf.Bytes())-len(data):], data) {
				t.Fatalf("Write %s n=%d: data differ from the per-element encoding", dtype, n)
			}
		}
	}
}

// TestReadDataAtErrors: when the file ends early or an element does not
// convert, the parallel read reports what a sequential one would: the
// first failure, with the count of elements before it.
func TestReadDataAtErrors(t *testing.T) {
	smallBlocks(t, 16, 16)
	for _, d := range []string{"<f8", ">f8", "<f4"} {
		size := int(d[2] - '0')
		h, err := parseHeader(fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (50,)}", d))
		if err != nil {
			t.Fatal(err)
		}
		for _, have := range []int{0, 1, size, 3*size + 1, 37 * size, 49*size + 3} {
			err := readDataAt(bytes.NewReader(make([]byte, have)), 0, &h, make([]float64, 50))
			want := fmt.Sprintf("truncated data: want 50 %s elements, got %d", h.dtype, have/size)
			if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("%s, %d bytes: %v, want %q…", d, have, err, want)
			}
		}
	}
	// Two inexact int64s, in different blocks: the first is named.
	h, _ := parseHeader("{'descr': '<i8', 'fortran_order': False, 'shape': (40,)}")
	data := make([]byte, 40*8)
	for _, i := range []int{29, 11} {
		binary.LittleEndian.PutUint64(data[8*i:], 1<<53+1)
	}
	err := readDataAt(bytes.NewReader(data), 0, &h, make([]float64, 40))
	if err == nil || !strings.HasPrefix(err.Error(), "element 11: int64 value 9007199254740993") {
		t.Errorf("inexact int64s at 11 and 29: %v, want element 11 named", err)
	}
}

// TestReadFileTruncated: a file cut anywhere in its data is an error
// wrapping io.ErrUnexpectedEOF, with large and small blocks.
func TestReadFileTruncated(t *testing.T) {
	file := build(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (30, 7), }", make([]byte, 30*7*8))
	path := filepath.Join(t.TempDir(), "t.npy")
	for _, block := range []int{8 << 20, 24} {
		smallBlocks(t, block, block)
		for _, cut := range []int{1, 7, 8, 100, 30*7*8 - 1} {
			if err := os.WriteFile(path, file[:len(file)-cut], 0o666); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadFile(path); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("cut %d bytes, blocks of %d: %v, want io.ErrUnexpectedEOF", cut, block, err)
			}
		}
	}
}

// adviseHuge is advice only: on slices short, long and starting anywhere
// in a page it changes no value and does not fail.
func TestAdviseHuge(t *testing.T) {
	for _, n := range []int{0, 1, 1 << 18, 1<<19 + 3, 3 << 20} {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(i)
		}
		adviseHuge(x)
		if n > 1 {
			adviseHuge(x[1:])
		}
		for i, v := range x {
			if v != float64(i) {
				t.Fatalf("n=%d: x[%d] = %v after the advice", n, i, v)
			}
		}
	}
}
