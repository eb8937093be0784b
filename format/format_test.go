package format

import "testing"

// The IEEE names stay accepted (scripts use them); the short ones are
// what mwmm prints (docs/cli.md).
func TestIEEENamesStillParse(t *testing.T) {
	for name, want := range map[string]Format{
		"binary16": Binary16, "binary32": Binary32, "binary64": Binary64, "bfloat16": BFloat16,
		"Binary16+ftz": Binary16.WithSubnormals(false), "half": Binary16, "double": Binary64,
	} {
		f, err := Parse(name)
		if err != nil || f != want {
			t.Errorf("Parse(%q) = %v, %v; want %s", name, f.Name(), err, want.Name())
		}
	}
	for f, short := range map[Format]string{Binary16: "fp16", Binary32: "fp32", Binary64: "fp64", BFloat16: "bf16"} {
		if f.Name() != short {
			t.Errorf("%s's name is %q, want %q", short, f.Name(), short)
		}
	}
}
