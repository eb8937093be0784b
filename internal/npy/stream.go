package npy

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Header describes an array in a .npy file.
type Header struct {
	Dtype   string // element type on disk: "float16", "float32", "float64", "int8" … "uint64", "bool"
	Shape   []int  // dimensions; () for a 0-d array
	Fortran bool   // elements in column-major (Fortran) order on disk
	Len     int    // number of elements, the product of Shape
}

// Reader streams the elements of one array as float64 values, in their
// order on disk (row-major, or column-major when Fortran is set), converted
// as [Read] does: exactly, or an error.
type Reader struct {
	Header
	r    io.Reader
	h    header
	left int // elements not yet read
	buf  []byte
}

// NewReader reads the preamble and header of a .npy array from r. When r
// reports its length (a Len method, or a regular *os.File), a header that
// claims more data than r holds is refused at once.
func NewReader(r io.Reader) (*Reader, error) {
	size := int64(-1)
	if l, ok := r.(interface{ Len() int }); ok {
		size = int64(l.Len())
	} else if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			if pos, err := f.Seek(0, io.SeekCurrent); err == nil {
				size = fi.Size() - pos
			}
		}
		r = bufio.NewReaderSize(f, chunkBytes)
	}
	h, consumed, err := readHeader(r, size)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	n := 1
	for _, d := range h.shape {
		var ok bool
		if n, ok = mulCheck(n, d); !ok {
			return nil, fmt.Errorf("npy: shape %s is too large: more than %d elements", shapeRepr(h.shape), maxElems)
		}
	}
	if need := int64(n) * int64(h.elemSize); size >= 0 && need > size-consumed {
		return nil, fmt.Errorf("npy: truncated data: shape %s of %s needs %d bytes but only %d remain: %w",
			shapeRepr(h.shape), h.dtype, need, size-consumed, io.ErrUnexpectedEOF)
	}
	return &Reader{
		Header: Header{Dtype: h.dtype, Shape: h.shape, Fortran: h.fortran, Len: n},
		r:      r, h: h, left: n,
	}, nil
}

// Read fills dst with the next elements (at most len(dst)) and returns how
// many; after the last one it returns 0, io.EOF. An early end of the data is
// an error wrapping io.ErrUnexpectedEOF; an integer that float64 cannot hold
// exactly is an error naming its index.
func (r *Reader) Read(dst []float64) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	k := min(len(dst), r.left)
	if k == 0 {
		return 0, nil
	}
	done := r.Len - r.left
	if got, err := r.h.fill(r.r, dst[:k], done, &r.buf); err != nil {
		return 0, fmt.Errorf("npy: %w", dataError(err, r.Len, r.h.dtype, done+got))
	}
	r.left -= k
	return k, nil
}

// Writer writes one array element by element: [NewWriter] writes the
// header, Write the elements in order, Close checks that all came.
type Writer struct {
	w       io.Writer
	dtype   string
	size    int
	n, left int
	buf     []byte
	f32     []float32
}

// NewWriter writes the header of an array of the given dtype ("float32",
// "float64", "uint8", "uint16" or "int64"), shape and order to w, as
// np.save would.
func NewWriter(w io.Writer, dtype string, shape []int, fortran bool) (*Writer, error) {
	descr := map[string]string{"float32": "<f4", "float64": "<f8", "uint8": "|u1", "uint16": "<u2", "int64": "<i8"}[dtype]
	if descr == "" {
		return nil, fmt.Errorf("npy: NewWriter: unsupported dtype %q: float32, float64, uint8, uint16 or int64", dtype)
	}
	n := 1
	for _, d := range shape {
		var ok bool
		if n, ok = mulCheck(n, d); !ok {
			return nil, fmt.Errorf("npy: NewWriter: bad shape %s", shapeRepr(shape))
		}
	}
	if len(shape) > maxDims {
		return nil, fmt.Errorf("npy: NewWriter: %d dimensions, NumPy allows at most %d", len(shape), maxDims)
	}
	first := 0
	if len(shape) > 0 {
		first = shape[0]
	}
	if _, err := w.Write(headerBytes(descr, fortran, shapeRepr(shape), first)); err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	size, _ := strconv.Atoi(descr[2:])
	return &Writer{w: w, dtype: dtype, size: size, n: n, left: n}, nil
}

// Write appends the elements vs: float32 rounds each to nearest, ties to
// even (as NumPy's astype); uint8, uint16 and int64 take integers in their
// range only (an error otherwise, before anything of vs is written).
func (w *Writer) Write(vs []float64) error {
	if len(vs) > w.left {
		return fmt.Errorf("npy: Write: %d elements more than the shape holds", len(vs)-w.left)
	}
	b := w.buf[:0]
	switch {
	case (w.dtype == "float64" || w.dtype == "float32") && hostLittleEndian:
		if err := writeNative(w.w, vs, w.size, &w.f32); err != nil {
			return fmt.Errorf("npy: %w", err)
		}
		w.left -= len(vs)
		return nil
	case w.dtype == "float64":
		b = slices.Grow(b, 8*len(vs))[:8*len(vs)]
		for i, v := range vs {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
		}
	case w.dtype == "float32":
		b = slices.Grow(b, 4*len(vs))[:4*len(vs)]
		for i, v := range vs {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(v)))
		}
	case w.dtype == "int64": // indices, as NumPy indexes with them
		for i, v := range vs {
			if !(v >= -(1<<63) && v < 1<<63 && v == math.Trunc(v)) {
				return fmt.Errorf("npy: Write: element %d = %v is not an int64", w.n-w.left+i, v)
			}
			b = binary.LittleEndian.AppendUint64(b, uint64(int64(v)))
		}
	default: // uint8, uint16
		for i, v := range vs {
			top := float64(uint64(1)<<(8*w.size) - 1)
			if !(v >= 0 && v <= top && v == math.Trunc(v)) {
				return fmt.Errorf("npy: Write: element %d = %v is not a %s", w.n-w.left+i, v, w.dtype)
			}
			if w.size == 1 {
				b = append(b, byte(v))
			} else {
				b = binary.LittleEndian.AppendUint16(b, uint16(v))
			}
		}
	}
	if _, err := w.w.Write(b); err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	w.buf = b
	w.left -= len(vs)
	return nil
}

// Close reports an error if fewer elements were written than the shape
// holds. It does not close the underlying writer.
func (w *Writer) Close() error {
	if w.left != 0 {
		return fmt.Errorf("npy: Close: %d of %d elements written", w.n-w.left, w.n)
	}
	return nil
}

// shapeRepr is a shape as Python writes a tuple: (), (3,), (2, 3).
func shapeRepr(shape []int) string {
	if len(shape) == 1 {
		return "(" + strconv.Itoa(shape[0]) + ",)"
	}
	s := make([]string, len(shape))
	for i, d := range shape {
		s[i] = strconv.Itoa(d)
	}
	return "(" + strings.Join(s, ", ") + ")"
}

// WriteCodes appends integer elements to a uint8 or uint16 array; a code
// that does not fit is an error, before anything of cs is written.
func (w *Writer) WriteCodes(cs []uint64) error {
	if w.dtype != "uint8" && w.dtype != "uint16" {
		return fmt.Errorf("npy: WriteCodes to a %s array", w.dtype)
	}
	if len(cs) > w.left {
		return fmt.Errorf("npy: WriteCodes: %d elements more than the shape holds", len(cs)-w.left)
	}
	b := w.buf[:0]
	for i, c := range cs {
		if c>>(8*w.size) != 0 {
			return fmt.Errorf("npy: WriteCodes: element %d = %d is not a %s", w.n-w.left+i, c, w.dtype)
		}
		if w.size == 1 {
			b = append(b, byte(c))
		} else {
			b = binary.LittleEndian.AppendUint16(b, uint16(c))
		}
	}
	w.buf = b
	if _, err := w.w.Write(b); err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	w.left -= len(cs)
	return nil
}
