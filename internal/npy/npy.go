// Package npy reads and writes NumPy .npy files of float32 and float64 matrices.
//
// A .npy file (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html)
// is a small preamble, a header and the raw array bytes:
//
//	"\x93NUMPY"  magic, 6 bytes
//	1, 0         format version, major and minor byte
//	HEADER_LEN   little-endian uint16 (version 1.0) or uint32 (2.0, 3.0)
//	HEADER       Python dict literal, e.g.
//	             {'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }
//	             padded with spaces and ending in '\n' so that the data
//	             starts on a multiple of 64 bytes
//	DATA         the elements, in C (row-major) or Fortran (column-major) order
//
// This package handles what numeric arrays need. It reads element types
// float16, float32, float64, int8 … int64, uint8 … uint64 and bool, in
// either byte order, as float64 values: exactly, and an int64 or uint64
// element that float64 cannot hold exactly (beyond ±2^53, not a multiple of
// the spacing there) is an error naming it, never a silent rounding. It does
// not read complex, long double (float128), string, object, datetime or
// structured dtypes; NumPy's .npz archives and pickled object arrays are
// not .npy arrays.
//
// [Read] and [ReadFile] return a [Matrix]: a 0-d array is 1×1, a 1-D array
// of length n is an n×1 column, and Fortran-order data is transposed into
// row-major order; they take 0, 1 or 2 dimensions. [NewReader] streams an
// array of any shape (in its order on disk) chunk by chunk, and [NewWriter]
// writes one so, as float32, float64, uint8 or uint16. [Write] produces
// the same bytes as NumPy's np.save for a C-order 2-D array, so files can go
// both ways.
//
// All errors returned by this package begin with "npy: ".
package npy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// Matrix is a dense row-major matrix read from or written to a .npy file.
//
// Element (i, j) is Data[i*Cols+j]. Values are held as float64 whatever the
// element type on disk, which is recorded in Dtype; float32 converts to
// float64 exactly, so nothing is lost on read.
type Matrix struct {
	Rows, Cols int
	Data       []float64 // len Rows*Cols, row-major
	Dtype      string    // the element type on disk: "float32", "float64", "float16", "int32", …
}

const (
	magic = "\x93NUMPY"

	// align is the boundary NumPy aligns the start of the data to, so that
	// the array can be memory-mapped.
	align = 64

	// growthAxisMaxDigits is NumPy's GROWTH_AXIS_MAX_DIGITS: np.save leaves
	// room in the header for the first dimension to grow to this many
	// digits, so that appending rows can rewrite the header in place.
	// Writing the same padding makes our output byte-identical to NumPy's.
	growthAxisMaxDigits = 21

	// maxHeaderLen bounds the header we are willing to read. A header for
	// an array of at most two dimensions needs well under 200 bytes; NumPy
	// itself refuses headers over 10000 bytes unless told otherwise.
	maxHeaderLen = 1 << 20

	// chunkBytes is the buffer size for headers and small reads and writes.
	chunkBytes = 64 << 10

	// maxElems keeps Rows*Cols*8 within an int, so byte counts never
	// overflow.
	maxElems = math.MaxInt / 8
)

// Read decodes a .npy file from r. It reads exactly the preamble, header
// and data of one array and nothing after it.
//
// When r reports how many bytes it holds (as *bytes.Reader, *bytes.Buffer
// and *strings.Reader do with a Len method), a header that claims more data
// than is there is rejected before any allocation; otherwise data is read
// in chunks, so memory use stays proportional to what r really delivers.
func Read(r io.Reader) (Matrix, error) {
	size := int64(-1)
	if l, ok := r.(interface{ Len() int }); ok {
		size = int64(l.Len())
	}
	m, err := decode(r, size, nil)
	if err != nil {
		return Matrix{}, fmt.Errorf("npy: %w", err)
	}
	return m, nil
}

// ReadFile reads the .npy file at path. The file's size bounds what the
// header may claim, so a corrupt or hostile header cannot trigger an
// allocation larger than the file.
func ReadFile(path string) (Matrix, error) {
	f, err := os.Open(path)
	if err != nil {
		return Matrix{}, fmt.Errorf("npy: %w", err)
	}
	defer f.Close() // read-only: Close cannot lose data
	size := int64(-1)
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	var at io.ReaderAt
	if size >= 0 {
		at = f // read the data by blocks in parallel, in place
	}
	m, err := decode(bufio.NewReaderSize(f, chunkBytes), size, at)
	if err != nil {
		return Matrix{}, fmt.Errorf("npy: %s: %w", path, err)
	}
	return m, nil
}

// Write encodes m as a C-order 2-D .npy array of shape (m.Rows, m.Cols).
//
// m.Dtype selects the element type on disk: "float64" (or "", the default)
// stores every value bit for bit, including NaN payloads, infinities and
// negative zero; "float32" rounds each value to the nearest float32, ties to
// even, as NumPy's astype(np.float32) does (values beyond the float32 range
// become ±Inf). The format version is 1.0, which NumPy ≥ 1.0 can read.
func Write(w io.Writer, m Matrix) error {
	if err := encode(w, m); err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	return nil
}

// WriteFile writes m to path with [Write], creating or truncating the file.
// It reports every error, including the one from closing the file, which is
// where a full disk often first shows. On error the file may be left
// partially written.
func WriteFile(path string, m Matrix) error { return writeFile(path, m, false) }

func writeFile(path string, m Matrix, vector bool) error {
	// Validate before touching the file, so that a bad Matrix does not
	// truncate an existing file.
	if _, _, err := checkMatrix(m); err != nil {
		return fmt.Errorf("npy: %s: %w", path, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	bw := bufio.NewWriterSize(f, chunkBytes)
	werr := encode(bw, m, vector)
	if werr == nil {
		werr = bw.Flush()
	}
	if cerr := f.Close(); cerr != nil {
		werr = errors.Join(werr, cerr)
	}
	if werr != nil {
		return fmt.Errorf("npy: %s: %w", path, werr)
	}
	return nil
}

// decode reads one array from r. size is the number of bytes r holds from
// its current position, or -1 if unknown. If at is not nil, it holds the
// same bytes from offset 0 and the data are read from it, not from r.
// Errors carry no "npy: " prefix; the exported callers add it.
func decode(r io.Reader, size int64, at io.ReaderAt) (Matrix, error) {
	h, consumed, err := readHeader(r, size)
	if err != nil {
		return Matrix{}, err
	}
	if len(h.shape) > 2 {
		return Matrix{}, fmt.Errorf("shape %s has %d dimensions: a matrix has only 0, 1 or 2", shapeRepr(h.shape), len(h.shape))
	}
	m := Matrix{Rows: 1, Cols: 1, Dtype: h.dtype} // a 0-d array holds one value
	switch len(h.shape) {
	case 1:
		m.Rows = h.shape[0] // a vector becomes a column
	case 2:
		m.Rows, m.Cols = h.shape[0], h.shape[1]
	}
	n, ok := mulCheck(m.Rows, m.Cols)
	if !ok {
		return Matrix{}, fmt.Errorf("shape (%d, %d) is too large: more than %d elements",
			m.Rows, m.Cols, maxElems)
	}
	need := int64(n) * int64(h.elemSize)
	if size >= 0 && need > size-consumed {
		return Matrix{}, fmt.Errorf("truncated data: shape (%d, %d) of %s needs %d bytes but only %d remain: %w",
			m.Rows, m.Cols, h.dtype, need, size-consumed, io.ErrUnexpectedEOF)
	}
	var data []float64
	if at != nil {
		data = make([]float64, n)
		adviseHuge(data) // before the read faults its pages in
		err = readDataAt(at, consumed, &h, data)
	} else {
		data, err = readData(r, h, n, size >= 0)
	}
	if err != nil {
		return Matrix{}, err
	}
	if h.fortran && m.Rows > 1 && m.Cols > 1 {
		t := make([]float64, n)
		adviseHuge(t)
		transpose(t, data, m.Rows, m.Cols)
		data = t
	}
	m.Data = data
	return m, nil
}

// readHeader reads the preamble and header from r, which holds size bytes
// (-1: unknown), and returns the header and the bytes consumed.
func readHeader(r io.Reader, size int64) (header, int64, error) {
	var pre [8]byte // magic and version
	if n, err := io.ReadFull(r, pre[:]); err != nil {
		if n == 0 && err == io.EOF {
			return header{}, 0, errors.New("empty input: not a .npy file")
		}
		return header{}, 0, truncated("preamble", err)
	}
	if string(pre[:6]) != magic {
		return header{}, 0, fmt.Errorf("bad magic %q: not a .npy file (want %q)", pre[:6], magic)
	}
	major, minor := pre[6], pre[7]
	var lenBytes int
	switch {
	case major == 1 && minor == 0:
		lenBytes = 2
	case (major == 2 || major == 3) && minor == 0:
		// 2.0 widened the header length; 3.0 only allows UTF-8 in the header.
		lenBytes = 4
	default:
		return header{}, 0, fmt.Errorf("unsupported format version %d.%d (want 1.0, 2.0 or 3.0)", major, minor)
	}
	var lb [4]byte
	if _, err := io.ReadFull(r, lb[:lenBytes]); err != nil {
		return header{}, 0, truncated("header length", err)
	}
	hlen := int64(binary.LittleEndian.Uint32(lb[:])) // upper bytes stay 0 for 1.0
	consumed := int64(len(pre) + lenBytes)
	if hlen > maxHeaderLen {
		return header{}, 0, fmt.Errorf("header length %d exceeds the limit of %d bytes", hlen, maxHeaderLen)
	}
	if size >= 0 && consumed+hlen > size {
		return header{}, 0, fmt.Errorf("truncated header: it claims %d bytes but only %d remain: %w",
			hlen, size-consumed, io.ErrUnexpectedEOF)
	}
	hbuf := make([]byte, hlen)
	if _, err := io.ReadFull(r, hbuf); err != nil {
		return header{}, 0, truncated("header", err)
	}
	consumed += hlen
	h, err := parseHeader(string(hbuf))
	if err != nil {
		return header{}, 0, err
	}
	return h, consumed, nil
}

// readData reads n elements described by h. If known is true the caller
// has checked that r holds them all, so the result is allocated at once;
// otherwise it doubles as data arrives, so a lying header costs at most
// about twice the bytes actually present.
func readData(r io.Reader, h header, n int, known bool) ([]float64, error) {
	capacity := n
	if !known {
		capacity = min(n, chunkBytes/8)
	}
	data := make([]float64, capacity)
	var scratch []byte
	for got := 0; got < n; {
		if got == len(data) {
			data = slices.Grow(data, min(n, 2*got)-got)[:min(n, 2*got)]
		}
		k, err := h.fill(r, data[got:], got, &scratch)
		if err != nil {
			return nil, dataError(err, n, h.dtype, got+k)
		}
		got += k
	}
	return data, nil
}

// convert decodes len(dst) elements from b into dst; first is the index of
// dst[0] in the array, for error messages.
func (h *header) convert(b []byte, dst []float64, first int) error {
	if h.kind == 'f' && h.elemSize == 4 && h.order == binary.LittleEndian && hostLittleEndian && len(dst) > 0 {
		// The bytes are the host's own float32s: no per-byte decoding. b
		// comes from make, so it is aligned for them.
		for i, v := range unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(dst)) {
			dst[i] = float64(v)
		}
		return nil
	}
	if h.order == binary.LittleEndian {
		return convertAs(binary.LittleEndian, h, b, dst, first)
	}
	return convertAs(binary.BigEndian, h, b, dst, first)
}

// convertAs is convert with the byte order as a type parameter, so that
// its methods are direct calls, inlined, not calls through an interface.
func convertAs[O binary.ByteOrder](o O, h *header, b []byte, dst []float64, first int) error {
	switch int(h.kind)<<8 | h.elemSize {
	case 'f'<<8 | 2:
		for i := range dst {
			dst[i] = float16ToFloat64(o.Uint16(b[2*i:]))
		}
	case 'f'<<8 | 4:
		for i := range dst {
			dst[i] = float64(math.Float32frombits(o.Uint32(b[4*i:])))
		}
	case 'f'<<8 | 8:
		for i := range dst {
			dst[i] = math.Float64frombits(o.Uint64(b[8*i:]))
		}
	case 'i'<<8 | 1:
		for i := range dst {
			dst[i] = float64(int8(b[i]))
		}
	case 'u'<<8 | 1, 'b'<<8 | 1:
		for i := range dst {
			dst[i] = float64(b[i])
		}
	case 'i'<<8 | 2:
		for i := range dst {
			dst[i] = float64(int16(o.Uint16(b[2*i:])))
		}
	case 'u'<<8 | 2:
		for i := range dst {
			dst[i] = float64(o.Uint16(b[2*i:]))
		}
	case 'i'<<8 | 4:
		for i := range dst {
			dst[i] = float64(int32(o.Uint32(b[4*i:])))
		}
	case 'u'<<8 | 4:
		for i := range dst {
			dst[i] = float64(o.Uint32(b[4*i:]))
		}
	case 'i'<<8 | 8:
		for i := range dst {
			v := int64(o.Uint64(b[8*i:]))
			f := float64(v)
			// f = 2^63 has no int64; below it the conversion back is exact.
			if f >= 1<<63 || int64(f) != v {
				return inexact(first+i, h.dtype, strconv.FormatInt(v, 10), f)
			}
			dst[i] = f
		}
	case 'u'<<8 | 8:
		for i := range dst {
			v := o.Uint64(b[8*i:])
			f := float64(v)
			if f >= 1<<64 || uint64(f) != v {
				return inexact(first+i, h.dtype, strconv.FormatUint(v, 10), f)
			}
			dst[i] = f
		}
	default:
		panic("npy: convert: unknown element type " + h.dtype)
	}
	return nil
}

func inexact(i int, dtype, v string, f float64) error {
	return fmt.Errorf("element %d: %s value %s is not a float64 (the nearest is %.17g): integers beyond ±2^53 need not be, and this one would be changed; round it yourself if that is meant",
		i, dtype, v, f)
}

// float16ToFloat64 decodes an IEEE fp16 (NumPy's float16), exactly;
// a NaN keeps its payload, as NumPy's astype(np.float64) does.
func float16ToFloat64(h uint16) float64 {
	sign := uint64(h>>15) << 63
	exp, frac := int(h>>10&0x1f), uint64(h&0x3ff)
	switch exp {
	case 0: // zero or subnormal: frac·2^-24
		return math.Float64frombits(sign | math.Float64bits(math.Ldexp(float64(frac), -24)))
	case 0x1f: // Inf (frac 0) or NaN
		return math.Float64frombits(sign | 0x7ff<<52 | frac<<42)
	}
	return math.Float64frombits(sign | uint64(exp-15+1023)<<52 | frac<<42)
}

// hostLittleEndian: the machine stores numbers as little-endian .npy data does.
var hostLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// truncated describes an early end of input while reading what.
func truncated(what string, err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("truncated %s: %w", what, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("reading %s: %w", what, err)
}

// mulCheck returns r*c and whether it is a sane element count: no
// overflow, and small enough that the byte count fits in an int.
func mulCheck(r, c int) (int, bool) {
	if r < 0 || c < 0 {
		return 0, false
	}
	if r != 0 && c > maxElems/r {
		return 0, false
	}
	return r * c, true
}

// checkMatrix validates m for writing and returns its NumPy descr and
// element size.
func checkMatrix(m Matrix) (descr string, elemSize int, err error) {
	switch m.Dtype {
	case "", "float64":
		descr, elemSize = "<f8", 8
	case "float32":
		descr, elemSize = "<f4", 4
	default:
		return "", 0, fmt.Errorf("unsupported Dtype %q: only \"float32\" and \"float64\" (or \"\" for float64) are supported", m.Dtype)
	}
	if m.Rows < 0 || m.Cols < 0 {
		return "", 0, fmt.Errorf("negative dimensions %d×%d", m.Rows, m.Cols)
	}
	n, ok := mulCheck(m.Rows, m.Cols)
	if !ok {
		return "", 0, fmt.Errorf("dimensions %d×%d are too large", m.Rows, m.Cols)
	}
	if len(m.Data) != n {
		return "", 0, fmt.Errorf("len(Data) = %d, want Rows*Cols = %d×%d = %d", len(m.Data), m.Rows, m.Cols, n)
	}
	return descr, elemSize, nil
}

// WriteVectorFile writes x to path as a 1-D array of shape (len(x),), as
// NumPy users expect of a vector (Read gives it back as a column), with
// dtype "float32" or "float64" as in Write.
func WriteVectorFile(path string, x []float64, dtype string) error {
	return writeFile(path, Matrix{Rows: len(x), Cols: 1, Data: x, Dtype: dtype}, true)
}

// encode writes m to w, as a 1-D array when vector; errors carry no "npy: "
// prefix.
func encode(w io.Writer, m Matrix, vector ...bool) error {
	descr, elemSize, err := checkMatrix(m)
	if err != nil {
		return err
	}
	shape := "(" + strconv.Itoa(m.Rows) + ", " + strconv.Itoa(m.Cols) + ")"
	if len(vector) > 0 && vector[0] {
		shape = "(" + strconv.Itoa(m.Rows*m.Cols) + ",)"
	}
	if _, err := w.Write(headerBytes(descr, false, shape, m.Rows)); err != nil {
		return err
	}
	if hostLittleEndian {
		var f32 []float32
		return writeNative(w, m.Data, elemSize, &f32)
	}
	per := chunkBytes / elemSize
	buf := make([]byte, 0, min(len(m.Data), per)*elemSize)
	for data := m.Data; len(data) > 0; {
		k := min(len(data), per)
		buf = buf[:0]
		if elemSize == 4 {
			for _, v := range data[:k] {
				// Go's float64→float32 conversion rounds to nearest, ties
				// to even, exactly like NumPy's.
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(float32(v)))
			}
		} else {
			for _, v := range data[:k] {
				buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
			}
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
		data = data[k:]
	}
	return nil
}

// headerBytes returns the preamble and header that np.save writes for an
// array of the given descr, order and shape (its Python repr) whose first
// dimension is rows.
func headerBytes(descr string, fortran bool, shape string, rows int) []byte {
	// np.save writes the keys sorted, repr of each value, a trailing ", "
	// after each, then room for the first dimension to grow.
	var d strings.Builder
	d.WriteString("{'descr': '")
	d.WriteString(descr)
	d.WriteString("', 'fortran_order': ")
	if fortran {
		d.WriteString("True")
	} else {
		d.WriteString("False")
	}
	d.WriteString(", 'shape': ")
	d.WriteString(shape)
	d.WriteString(", }")
	d.WriteString(strings.Repeat(" ", max(0, growthAxisMaxDigits-len(strconv.Itoa(rows)))))
	dict := d.String()

	// Like NumPy, use version 1.0 unless the header length does not fit in
	// its uint16; then 2.0. With two dimensions that never happens in
	// practice, but the rule costs nothing.
	version, lenBytes := byte(1), 2
	hlen := len(dict) + 1 // + '\n'
	// NumPy's padding rule: always at least one space, up to a whole block.
	pad := align - (len(magic)+2+lenBytes+hlen)%align
	if hlen+pad > math.MaxUint16 {
		version, lenBytes = 2, 4
		pad = align - (len(magic)+2+lenBytes+hlen)%align
	}
	out := make([]byte, 0, len(magic)+2+lenBytes+hlen+pad)
	out = append(out, magic...)
	out = append(out, version, 0)
	if lenBytes == 2 {
		out = binary.LittleEndian.AppendUint16(out, uint16(hlen+pad))
	} else {
		out = binary.LittleEndian.AppendUint32(out, uint32(hlen+pad))
	}
	out = append(out, dict...)
	for range pad {
		out = append(out, ' ')
	}
	return append(out, '\n')
}
