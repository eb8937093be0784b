package npy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// header is the decoded header of a .npy file: how to interpret the bytes
// that follow it.
type header struct {
	order    binary.ByteOrder
	kind     byte   // 'f' float, 'i' signed, 'u' unsigned integer, 'b' bool
	elemSize int    // bytes per element: 1, 2, 4 or 8
	dtype    string // "float16", "float32", "float64", "int8" … "uint64", "bool"
	fortran  bool   // column-major data on disk
	shape    []int  // 0 to maxDims non-negative dimensions
}

// maxDims is NumPy's limit on dimensions (NPY_MAXDIMS: 32 before 2.0, 64 since).
const maxDims = 64

// supported is what the error messages say this package reads.
const supported = "float16, float32, float64, int8 … int64, uint8 … uint64 and bool ('<f2', '<f4', '<f8', '<i1' … '<i8', '<u1' … '<u8', '|b1'; '>' for big endian)"

// parseHeader decodes the Python dict literal that NumPy writes as the
// header, for example
//
//	{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }
//
// NumPy reads it with ast.literal_eval, so other writers may use any key
// order, either quote style, arbitrary spacing and trailing commas; the small
// literal parser below accepts all of that. Like NumPy, it insists on exactly
// the three keys descr, fortran_order and shape.
func parseHeader(text string) (header, error) {
	p := &parser{src: text}
	p.skipSpace()
	if p.peek() != '{' {
		return header{}, fmt.Errorf("header is not a Python dict literal: %q", clip(text))
	}
	v, err := p.value(0)
	if err != nil {
		return header{}, fmt.Errorf("header %q: %w", clip(text), err)
	}
	// NumPy pads the header with spaces and ends it with '\n'; nothing else
	// may follow the dict.
	p.skipSpace()
	if p.pos != len(p.src) {
		return header{}, fmt.Errorf("header %q: unexpected %q after the dict", clip(text), clip(p.src[p.pos:]))
	}

	var h header
	seen := map[string]bool{}
	for i, key := range v.keys {
		if seen[key] {
			return header{}, fmt.Errorf("header has key %q twice", key)
		}
		seen[key] = true
		val := v.items[i]
		switch key {
		case "descr":
			if err := h.setDescr(val); err != nil {
				return header{}, err
			}
		case "fortran_order":
			if val.kind != kindBool {
				return header{}, fmt.Errorf("header 'fortran_order' is %s, want True or False", val.raw)
			}
			h.fortran = val.b
		case "shape":
			if err := h.setShape(val); err != nil {
				return header{}, err
			}
		default:
			return header{}, fmt.Errorf("header has unexpected key %q (want only 'descr', 'fortran_order' and 'shape')", key)
		}
	}
	for _, key := range []string{"descr", "fortran_order", "shape"} {
		if !seen[key] {
			return header{}, fmt.Errorf("header lacks key %q", key)
		}
	}
	return h, nil
}

func (h *header) setDescr(v value) error {
	if v.kind != kindString {
		// A list or dict here describes a structured dtype.
		return fmt.Errorf("unsupported dtype %s: only %s are supported", v.raw, supported)
	}
	d := v.s
	if len(d) < 3 {
		return fmt.Errorf("unsupported dtype %q: only %s are supported", d, supported)
	}
	kind, size := d[1], 0
	switch d[2:] {
	case "1", "2", "4", "8":
		size = int(d[2] - '0')
	}
	names := map[string]string{
		"f2": "float16", "f4": "float32", "f8": "float64",
		"i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64",
		"u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64", "b1": "bool",
	}
	name, ok := names[d[1:]]
	if !ok || size == 0 {
		return fmt.Errorf("unsupported dtype %q: only %s are supported", d, supported)
	}
	switch d[0] {
	// '=' means native byte order. Every platform NumPy writes '=' on in
	// practice is little endian (NumPy itself normally writes '<' there).
	case '<', '=':
		h.order = binary.LittleEndian
	case '>':
		h.order = binary.BigEndian
	case '|':
		// "byte order not applicable": true of one-byte types only.
		if size != 1 {
			return fmt.Errorf("invalid dtype %q: a %d-byte %s needs byte order '<', '>' or '='", d, size, name)
		}
		h.order = binary.LittleEndian
	default:
		return fmt.Errorf("unsupported dtype %q: only %s are supported", d, supported)
	}
	h.kind, h.elemSize, h.dtype = kind, size, name
	return nil
}

func (h *header) setShape(v value) error {
	if v.kind != kindTuple {
		return fmt.Errorf("header 'shape' is %s, want a tuple of integers", v.raw)
	}
	if len(v.items) > maxDims {
		return fmt.Errorf("shape %s has %d dimensions: NumPy allows at most %d", v.raw, len(v.items), maxDims)
	}
	h.shape = make([]int, len(v.items))
	for i, d := range v.items {
		switch {
		case d.kind != kindInt:
			return fmt.Errorf("shape %s: dimension %s is not an integer", v.raw, d.raw)
		case d.neg:
			return fmt.Errorf("shape %s: negative dimension %s", v.raw, d.raw)
		case d.big:
			return fmt.Errorf("shape %s: dimension %s is too large", v.raw, d.raw)
		}
		h.shape[i] = d.n
	}
	return nil
}

// clip trims and shortens s for use in an error message.
func clip(s string) string {
	const max = 120
	s = strings.TrimRight(s, " \n") // the padding says nothing
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}

type kind int

const (
	kindString kind = iota
	kindBool
	kindNone
	kindInt
	kindTuple
	kindList
	kindDict
)

// value is one parsed Python literal.
type value struct {
	kind  kind
	raw   string   // source text, for error messages
	s     string   // kindString
	b     bool     // kindBool
	n     int      // kindInt, valid when !neg && !big
	neg   bool     // kindInt: negative
	big   bool     // kindInt: does not fit in an int
	keys  []string // kindDict
	items []value  // kindTuple, kindList; kindDict values, parallel to keys
}

// parser is a recursive-descent parser for the subset of Python literals
// that can appear in a .npy header.
type parser struct {
	src string
	pos int
}

// maxDepth bounds nesting so that a hostile header cannot exhaust the stack.
const maxDepth = 32

var errEnd = errors.New("unexpected end of header")

func (p *parser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *parser) skipSpace() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (value, error) {
	if depth > maxDepth {
		return value{}, errors.New("literal nested too deeply")
	}
	p.skipSpace()
	start := p.pos
	var v value
	var err error
	switch c := p.peek(); {
	case p.pos >= len(p.src):
		return value{}, errEnd
	case c == '{':
		v, err = p.dict(depth)
	case c == '(':
		v, err = p.sequence(depth, ')')
	case c == '[':
		v, err = p.sequence(depth, ']')
	case c == '\'' || c == '"':
		v, err = p.str()
	case c == '-' || c == '+' || isDigit(c):
		v, err = p.integer()
	case isLetter(c):
		v, err = p.name()
	default:
		return value{}, fmt.Errorf("unexpected %q at offset %d", c, p.pos)
	}
	if err != nil {
		return value{}, err
	}
	if v.raw == "" {
		v.raw = p.src[start:p.pos]
	}
	return v, nil
}

func (p *parser) dict(depth int) (value, error) {
	p.pos++ // '{'
	v := value{kind: kindDict}
	for {
		p.skipSpace()
		if p.peek() == '}' {
			p.pos++
			return v, nil
		}
		k, err := p.value(depth + 1)
		if err != nil {
			return value{}, err
		}
		if k.kind != kindString {
			return value{}, fmt.Errorf("dict key %s is not a string", k.raw)
		}
		p.skipSpace()
		if p.peek() != ':' {
			return value{}, fmt.Errorf("missing ':' after dict key %s", k.raw)
		}
		p.pos++
		val, err := p.value(depth + 1)
		if err != nil {
			return value{}, err
		}
		v.keys = append(v.keys, k.s)
		v.items = append(v.items, val)
		p.skipSpace()
		switch p.peek() {
		case ',':
			p.pos++
		case '}':
		default:
			if p.pos >= len(p.src) {
				return value{}, errEnd
			}
			return value{}, fmt.Errorf("expected ',' or '}' at offset %d, found %q", p.pos, p.peek())
		}
	}
}

// sequence parses a tuple (close == ')') or list (close == ']'). As in
// Python, "(3)" is just the integer 3 and only "(3,)" is a 1-tuple.
func (p *parser) sequence(depth int, close byte) (value, error) {
	p.pos++ // '(' or '['
	v := value{kind: kindTuple}
	if close == ']' {
		v.kind = kindList
	}
	comma := false // a comma followed the last item
	for {
		p.skipSpace()
		if p.peek() == close {
			p.pos++
			break
		}
		item, err := p.value(depth + 1)
		if err != nil {
			return value{}, err
		}
		v.items = append(v.items, item)
		p.skipSpace()
		switch p.peek() {
		case ',':
			p.pos++
			comma = true
			continue
		case close:
			comma = false
			continue
		}
		if p.pos >= len(p.src) {
			return value{}, errEnd
		}
		return value{}, fmt.Errorf("expected ',' or %q at offset %d, found %q", close, p.pos, p.peek())
	}
	if v.kind == kindTuple && len(v.items) == 1 && !comma {
		return v.items[0], nil // parenthesised expression
	}
	return v, nil
}

func (p *parser) str() (value, error) {
	quote := p.src[p.pos]
	p.pos++
	var b strings.Builder
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		p.pos++
		switch c {
		case quote:
			return value{kind: kindString, s: b.String()}, nil
		case '\n':
			return value{}, errors.New("newline inside string")
		case '\\':
			// Dtype strings never need escapes; keep the escaped byte as is,
			// which is right for \\, \' and \".
			if p.pos >= len(p.src) {
				return value{}, errEnd
			}
			b.WriteByte(p.src[p.pos])
			p.pos++
		default:
			b.WriteByte(c)
		}
	}
	return value{}, errEnd
}

func (p *parser) integer() (value, error) {
	start := p.pos
	v := value{kind: kindInt}
	if c := p.peek(); c == '-' || c == '+' {
		v.neg = c == '-'
		p.pos++
		p.skipSpace()
	}
	digits := p.pos
	for isDigit(p.peek()) {
		p.pos++
	}
	if p.pos == digits {
		return value{}, fmt.Errorf("malformed number %q", p.src[start:p.pos])
	}
	n, err := strconv.ParseUint(p.src[digits:p.pos], 10, strconv.IntSize-1)
	if err != nil {
		v.big = true // only a range error is possible: the text is all digits
	}
	v.n = int(n)
	if v.n == 0 {
		v.neg = false // -0 is just 0
	}
	// Python 2 wrote long integers with an L suffix, e.g. (3L, 4L).
	if c := p.peek(); c == 'L' || c == 'l' {
		p.pos++
	}
	if isLetter(p.peek()) || p.peek() == '.' {
		return value{}, fmt.Errorf("malformed number at offset %d", start)
	}
	return v, nil
}

func (p *parser) name() (value, error) {
	start := p.pos
	for isLetter(p.peek()) || isDigit(p.peek()) {
		p.pos++
	}
	switch w := p.src[start:p.pos]; w {
	case "True", "False":
		return value{kind: kindBool, b: w == "True"}, nil
	case "None":
		return value{kind: kindNone}, nil
	default:
		return value{}, fmt.Errorf("unexpected name %q", w)
	}
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' }
