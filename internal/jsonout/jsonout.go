// Package jsonout writes the command line's --json outputs. JSON has no
// number for NaN or ±Inf, which encoding/json refuses ("json: unsupported
// value: +Inf"); here they are the strings "NaN", "+Inf" and "-Inf", as
// bound.Result and the probe's observations write them. Values without
// them are encoded exactly as encoding/json encodes them.
package jsonout

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"strconv"
)

// Encode writes v as json.Encoder does with SetIndent("", "  "): indented
// by two spaces, with a final newline.
func Encode(w io.Writer, v any) error {
	b, err := Marshal(v)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// Marshal is json.Marshal with NaN and ±Inf as strings.
func Marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	var ue *json.UnsupportedValueError
	if !errors.As(err, &ue) {
		return b, err
	}
	// Only values with a NaN or an infinity take the slow path.
	return json.Marshal(convert(reflect.ValueOf(v)))
}

// Number is x, or its name where JSON has no number for it.
func Number(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return x
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// convert rebuilds v from maps, slices, ordered objects and plain values,
// with NaN and ±Inf as strings; it reads fields through reflect's
// accessors, which work also on the fields of unexported embedded types.
func convert(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	if raw, ok := ownMarshal(v); ok {
		return raw
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return Number(f)
		}
		if v.Kind() == reflect.Float32 {
			return float32(v.Float()) // encoded with float32's shortest digits
		}
		return v.Float()
	case reflect.Bool:
		return v.Bool()
	case reflect.String:
		return v.String()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint()
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return convert(v.Elem())
	case reflect.Struct:
		o := &object{}
		o.add(v, 0)
		return o
	case reflect.Map:
		return convertMap(v)
	case reflect.Slice:
		if v.IsNil() {
			return nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return v.Bytes() // base64, as encoding/json writes []byte
		}
	}
	if k := v.Kind(); k == reflect.Slice || k == reflect.Array {
		s := make([]any, v.Len())
		for i := range s {
			s[i] = convert(v.Index(i))
		}
		return s
	}
	return nil // channels, functions: encoding/json refuses them too
}

// ownMarshal encodes a value that marshals itself; false when it has no
// method, or its method fails (say on a NaN), so that its fields are used.
func ownMarshal(v reflect.Value) (json.RawMessage, bool) {
	if v.Kind() == reflect.Pointer && v.IsNil() || !v.CanInterface() {
		return nil, false
	}
	t := v.Type()
	switch {
	case t.Implements(marshalerType) || t.Implements(textMarshalerType):
	case v.CanAddr() && (reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshalerType)):
		v = v.Addr()
	default:
		return nil, false
	}
	b, err := json.Marshal(v.Interface())
	return b, err == nil
}

func convertMap(v reflect.Value) any {
	if v.IsNil() {
		return nil
	}
	m := make(map[string]any, v.Len())
	for it := v.MapRange(); it.Next(); {
		k := it.Key()
		var key string
		switch {
		case k.Kind() == reflect.String:
			key = k.String()
		case k.CanInterface() && k.Type().Implements(textMarshalerType):
			b, _ := k.Interface().(encoding.TextMarshaler).MarshalText()
			key = string(b)
		case k.CanInt():
			key = strconv.FormatInt(k.Int(), 10)
		case k.CanUint():
			key = strconv.FormatUint(k.Uint(), 10)
		}
		m[key] = convert(it.Value()) // encoding/json sorts the keys, as for v
	}
	return m
}
