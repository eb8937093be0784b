package jsonout

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
)

// object is a struct's fields in their order, by encoding/json's rules:
// names from tags, "-" and unexported fields left out, omitempty and
// omitzero, the fields of untagged embedded structs promoted, and of two
// fields with one name the shallower kept.
type object struct {
	keys   []string
	values []any
	depth  []int
}

func (o *object) add(v reflect.Value, depth int) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf, fv := t.Field(i), v.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			if ft := sf.Type; ft.Kind() == reflect.Struct || ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct {
				if fv.Kind() == reflect.Pointer {
					if fv.IsNil() {
						continue
					}
					fv = fv.Elem()
				}
				o.add(fv, depth+1)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if hasOpt(opts, "omitempty") && isEmpty(fv) || hasOpt(opts, "omitzero") && fv.IsZero() {
			continue
		}
		o.set(name, convert(fv), depth)
	}
}

// set adds a field, unless one of the name is shallower; a deeper one goes.
func (o *object) set(name string, value any, depth int) {
	for i, k := range o.keys {
		if k != name {
			continue
		}
		if o.depth[i] <= depth {
			return
		}
		o.keys = append(o.keys[:i], o.keys[i+1:]...)
		o.values = append(o.values[:i], o.values[i+1:]...)
		o.depth = append(o.depth[:i], o.depth[i+1:]...)
		break
	}
	o.keys, o.values, o.depth = append(o.keys, name), append(o.values, value), append(o.depth, depth)
}

func hasOpt(opts, opt string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == opt {
			return true
		}
	}
	return false
}

// isEmpty is encoding/json's test for omitempty.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(o.values[i])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
