package multiword

import (
	"fmt"
	"strings"
	"testing"
)

// FuzzLookup: Lookup never panics; a spec it accepts gives a plan that
// passes Check, forms between 1 and Words² products, and whose Name looks
// up to the same plan again.
func FuzzLookup(f *testing.F) {
	for _, s := range []string{
		"double-fp16", "double-fp16:sum=v2,b=256", "double-fp16:sum=pair,b=64", "double-fp16:sum=pair,b=64,joint=on",
		"triple-bf16:products=all,order=largest", "double-e4m3:acc=fp16,out=fp64,theta=127", "3xtf32",
		"double-fp16:sum=v2,b=256,group=4,first=on", "double-fp16:split=rz", "double-fp16:split=sr,seed=3",
		"double-fp16:words=5,scale=off,shift=u", "double-fp16:b=0", "double-fp16:sum=v9", "fp16:b=3,b=4", " Half ",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		p, err := Lookup(spec)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("Lookup(%q): empty error", spec)
			}
			return
		}
		if err := p.Check(); err != nil {
			t.Fatalf("Lookup(%q) gave a plan that fails Check: %v", spec, err)
		}
		if n := p.Products(); n < 1 || n > p.Words*p.Words {
			t.Fatalf("Lookup(%q): %d products of %d words", spec, n, p.Words)
		}
		again, err := Lookup(p.Name)
		if err != nil {
			t.Fatalf("Lookup(%q) = plan %q, which does not look up: %v", spec, p.Name, err)
		}
		if a, b := fmt.Sprintf("%+v", again), fmt.Sprintf("%+v", p); a != b && !strings.Contains(spec, "seed") {
			t.Fatalf("Lookup(%q) and Lookup of its name %q differ:\n%s\n%s", spec, p.Name, b, a)
		}
	})
}
