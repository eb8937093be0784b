package mma

import (
	"testing"

	"github.com/mwmm/mwmm/format"
)

// sameParams compares parameters field by field, products by value.
func sameParams(p, q Params) bool {
	if (p.Product == nil) != (q.Product == nil) || p.Product != nil && *p.Product != *q.Product {
		return false
	}
	p.Product, q.Product = nil, nil
	p.Name, q.Name, p.Doc, q.Doc = "", "", "", ""
	return p == q
}

// Spec gives Lookup everything it needs to rebuild every preset and
// variants with derived formats.
func TestSpecRoundTrip(t *testing.T) {
	var all []Params
	for _, pre := range Presets() {
		for _, pair := range pre.Pairs {
			p, err := pre.Params(pair[0], pair[1])
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, p)
		}
	}
	v, _ := FindPreset("v100")
	base, _ := v.Params(format.Binary16, format.Binary32)
	acc14, err := WithPrecision(format.Binary32, 14)
	if err != nil {
		t.Fatal(err)
	}
	prod, _ := ProductFormat(13)
	variant := base
	variant.Accumulator, variant.Product, variant.ProductMode = acc14, &prod, format.TowardZero
	variant.Input, variant.Output = format.E4M3, format.Binary32.WithSubnormals(false)
	variant.Sticky, variant.AddendAfter, variant.NormalizeEach, variant.Order = true, true, true, InOrder
	all = append(all, variant)
	narrow := base
	narrow.Output, narrow.Accumulator = format.Binary16, acc14
	all = append(all, narrow)
	for _, p := range all {
		spec, err := p.Spec()
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		m, err := Lookup(spec, p.Input.Name(), p.Output.Name())
		if err != nil {
			t.Fatalf("%s: %s: %v", p.Name, spec, err)
		}
		if !sameParams(m.Params(), p) {
			t.Errorf("%s: %s rebuilds\n %v\nnot\n %v", p.Name, spec, m.Params(), p)
		}
	}
	if _, err := Lookup("exact:accp=0", "", ""); err == nil {
		t.Error("accp=0 accepted")
	}
}
