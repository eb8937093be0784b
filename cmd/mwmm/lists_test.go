package main

import (
	"slices"
	"testing"
)

func TestSplitSpecs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"centered, randsvd:kappa=1e8,mode=one-small,diagdom,randsvd:kappa=10",
			[]string{"centered", "randsvd:kappa=1e8,mode=one-small", "diagdom", "randsvd:kappa=10"}},
		{"sgemm,double-fp16:fabsum=v2,b=64,bf16", []string{"sgemm", "double-fp16:fabsum=v2,b=64", "bf16"}},
		{"kappa=3,centered", []string{"kappa=3", "centered"}}, // nothing before it to continue
		{"a:x=1,b:y=2", []string{"a:x=1", "b:y=2"}},           // a ':' starts a spec
		{"a,,b", []string{"a", "", "b"}},                      // empty items stay, for the callers to refuse
	} {
		if got := splitSpecs(c.in); !slices.Equal(got, c.want) {
			t.Errorf("splitSpecs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSplitList(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"(0,1], log-uniform ±[1e-3,1e3] ,2", []string{"(0,1]", "log-uniform ±[1e-3,1e3]", "2"}},
		{"0,1", []string{"0", "1"}},
		{"(0,1", []string{"(0,1"}}, // unclosed: one item, refused by parseDists
	} {
		if got := splitList(c.in); !slices.Equal(got, c.want) {
			t.Errorf("splitList(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
