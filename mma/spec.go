package mma

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mwmm/mwmm/format"
)

// WithPrecision returns f with precision p and the same range, subnormals and
// specials (f itself when p is already its precision): an accumulator or a
// product register that is narrower or wider than a named format, such as
// the ~14-bit fp8 accumulation reported for Hopper.
func WithPrecision(f format.Format, p int) (format.Format, error) {
	if p == f.Precision() {
		return f, nil
	}
	return format.New(format.Spec{
		Name: f.Name() + "/p" + strconv.Itoa(p), P: p, Emin: f.Emin(), Emax: f.Emax(),
		Subnormals: f.Subnormals(), Specials: f.Specials(),
	})
}

// ProductFormat is a format of precision p and fp64's range: products
// rounded to p bits without overflow or underflow in practice.
func ProductFormat(p int) (format.Format, error) {
	return format.New(format.Spec{Name: "p" + strconv.Itoa(p), P: p, Emin: -1022, Emax: 1023, Subnormals: true})
}

// Spec returns a unit spec for Lookup that rebuilds these parameters (all but
// Name and Doc) from the exact preset, with p.Input and p.Output as the
// formats:
//
//	m, err := Lookup(p.Spec(), p.Input.Name(), p.Output.Name())
//
// It fails if a format is neither named nor derived by WithPrecision or
// ProductFormat.
func (p Params) Spec() (string, error) {
	kv := []string{"k=" + strconv.Itoa(p.BlockK), "convert=" + p.InputConversion.String()}
	// Flushed subnormals first: the keys below set the accumulator anew.
	if !p.Input.Subnormals() {
		kv = append(kv, "subnormals-in=off")
	}
	if !p.Output.Subnormals() {
		kv = append(kv, "subnormals-out=off")
	}
	switch {
	case p.Product == nil:
		kv = append(kv, "products=exact")
	default:
		if f, err := ProductFormat(p.Product.Precision()); err == nil && f == *p.Product {
			kv = append(kv, "productp="+strconv.Itoa(f.Precision()))
		} else if named(*p.Product) {
			kv = append(kv, "products="+p.Product.Name())
		} else {
			return "", fmt.Errorf("mma: no spec for the product format %s", p.Product.Name())
		}
		kv = append(kv, "productmode="+p.ProductMode.String())
	}
	kv = append(kv, "addend="+map[bool]string{false: "with", true: "after"}[p.AddendAfter])
	acc, err := accumulatorSpec(p)
	if err != nil {
		return "", err
	}
	kv = append(kv, acc...)
	kv = append(kv, "accmode="+p.AccumulatorMode.String(), "extra="+bitsText(p.ExtraBits),
		"align="+p.Alignment.String(), "sticky="+map[bool]string{false: "off", true: "on"}[p.Sticky],
		"anchor="+map[bool]string{false: "lead", true: "exp"}[p.AnchorExponents],
		"range="+map[bool]string{false: "ieee", true: "fixed"}[p.FixedRange],
		"carry="+bitsText(p.CarryBits), "norm="+map[bool]string{false: "end", true: "each"}[p.NormalizeEach],
		"order="+map[Order]string{LargestFirst: "largest", InOrder: "inorder"}[p.Order],
		"outmode="+p.OutputMode.String())
	return "exact:" + strings.Join(kv, ","), nil
}

// accumulatorSpec names the accumulator as a named format, or a named format
// of the same range with accp=N.
func accumulatorSpec(p Params) ([]string, error) {
	acc := p.Accumulator
	for _, base := range []format.Format{p.Output, format.Binary32, format.Binary64, format.Binary16, format.BFloat16,
		format.Binary32.WithSubnormals(false), format.Binary16.WithSubnormals(false)} {
		if !named(base) {
			continue
		}
		f, err := WithPrecision(base, acc.Precision())
		if err == nil && f == acc {
			s := []string{"acc=" + base.Name()}
			if acc != base {
				s = append(s, "accp="+strconv.Itoa(acc.Precision()))
			}
			return s, nil
		}
	}
	return nil, fmt.Errorf("mma: no spec for the accumulator format %s", acc.Name())
}

// named reports whether format.Parse gives f back from its name.
func named(f format.Format) bool {
	g, err := format.Parse(f.Name())
	return err == nil && g == f
}

func bitsText(n int) string {
	if n == Unlimited {
		return "unlimited"
	}
	return strconv.Itoa(n)
}
