package jsonout

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"testing"
	"time"
)

type inner struct {
	X float64 `json:"x"`
	Y float64
}

type Embedded struct {
	E      float64 `json:"e,omitempty"`
	Shadow int     `json:"shadow"`
}

// fussy marshals itself with encoding/json, which fails on a NaN: then its
// fields are used.
type fussy struct{ V float64 }

func (f fussy) MarshalJSON() ([]byte, error) { return json.Marshal(struct{ W float64 }{f.V}) }

type textual int

func (t textual) MarshalText() ([]byte, error) { return []byte("t" + strconv.Itoa(int(t))), nil }

type sample struct {
	Embedded
	*inner
	Shadow  string             `json:"shadow"` // hides Embedded's
	A       float64            `json:"a"`
	F32     float32            `json:"f32"`
	S       []float64          `json:"s"`
	Nil     []float64          `json:"nil"`
	Arr     [2]float64         `json:"arr"`
	M       map[string]float64 `json:"m,omitempty"`
	IM      map[int]float64    `json:"im"`
	TM      map[textual]int    `json:"tm"`
	P       *float64           `json:"p,omitempty"`
	Any     any                `json:"any"`
	Skip    float64            `json:"-"`
	private float64
	T       time.Duration `json:"t"`
	Bytes   []byte        `json:"bytes"`
	Own     fussy         `json:"own"`
	Text    textual       `json:"text"`
	Neg0    float64       `json:"neg0,omitempty"`
	HTML    string        `json:"html"`
}

func finiteSample() sample {
	p := 2.5
	return sample{Embedded: Embedded{E: 1e-300, Shadow: 3}, inner: &inner{X: 0.1, Y: -7}, Shadow: "s",
		A: 1.0 / 3, F32: 0.1, S: []float64{1, 2e30}, Arr: [2]float64{5, 6}, M: map[string]float64{"b": 1, "a": 2},
		IM: map[int]float64{10: 1, 2: 3}, TM: map[textual]int{4: 1}, P: &p, Any: []any{1.5, "x"}, Skip: 9, private: 8,
		T: time.Second, Bytes: []byte("hi"), Own: fussy{4}, Text: 7, Neg0: math.Copysign(0, -1), HTML: "<a&b>"}
}

// Without NaN or Inf the slow path writes what encoding/json writes.
func TestConvertMatchesEncodingJSON(t *testing.T) {
	for _, v := range []any{finiteSample(), sample{}, &sample{}, []sample{finiteSample()}, map[string]any{"x": 1.0}, 3.0, nil} {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(convert(reflect.ValueOf(v)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("convert(%T):\n got %s, %v\nwant %s", v, got, err, want)
		}
	}
}

func TestEncodeLikeEncoder(t *testing.T) {
	var want, got bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetIndent("", "  ")
	enc.Encode(finiteSample())
	if err := Encode(&got, finiteSample()); err != nil || got.String() != want.String() {
		t.Errorf("Encode:\n%s%v\nwant\n%s", got.String(), err, want.String())
	}
}

// NaN and ±Inf come out as strings wherever they are, and read back as
// the same values.
func TestNonFinite(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	v := finiteSample()
	v.A, v.F32, v.S, v.M = inf, float32(math.Inf(-1)), []float64{nan, -inf, 1}, map[string]float64{"k": nan}
	v.inner.X, v.Own, v.P, v.Any = -inf, fussy{nan}, &inf, nan
	if _, err := json.Marshal(v); err == nil {
		t.Fatal("encoding/json took +Inf: the test tests nothing")
	}
	var b bytes.Buffer
	if err := Encode(&b, v); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b.String())
	}
	back := func(x any) float64 {
		switch x := x.(type) {
		case float64:
			return x
		case string:
			if f, err := strconv.ParseFloat(x, 64); err == nil {
				return f
			}
		}
		t.Errorf("%v (%T) is not a number", x, x)
		return 0
	}
	same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
	s := got["s"].([]any)
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"a", got["a"], inf}, {"f32", got["f32"], math.Inf(-1)}, {"s[0]", s[0], nan}, {"s[1]", s[1], -inf}, {"s[2]", s[2], 1.0},
		{"m.k", got["m"].(map[string]any)["k"], nan}, {"x", got["x"], -inf}, {"own.V", got["own"].(map[string]any)["V"], nan},
		{"p", got["p"], inf}, {"any", got["any"], nan}, {"e", got["e"], 1e-300},
	} {
		if g := back(c.got); !same(g, c.want.(float64)) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	for _, name := range []string{"+Inf", "-Inf", "NaN"} {
		if !bytes.Contains(b.Bytes(), []byte(strconv.Quote(name))) {
			t.Errorf("no %q in\n%s", name, b.String())
		}
	}
	if got["shadow"] != "s" || got["tm"].(map[string]any)["t4"] != 1.0 || got["text"] != "t7" || got["Skip"] != nil {
		t.Errorf("fields beside the numbers changed:\n%s", b.String())
	}
}
