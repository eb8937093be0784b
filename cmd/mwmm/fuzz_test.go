package main

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/mwmm/mwmm/mma"
)

// FuzzEvalLine: mma eval's line parser never panics; a line it accepts has
// as many a's as b's, each a value of the unit's input format (as the
// format's IsRepresentable says, an independent check of b32Check) and c
// one of its output format; and the accepted values, written back in the
// canonical form (8 hex digits, one space, " ; "), parse to the same.
func FuzzEvalLine(f *testing.F) {
	for _, l := range []string{
		"3c000000 3c000000 ; 3c000000 3c000000 ; 00000000",
		"0x3f800000 ; 0x3f800000 ; 0x3f800000",
		"3f800000\t3f800000;3f800000 3f800000;7f800000",
		" ; ; 00000000", "3f800000 ; ; 00000000", "3f800000 ; 3f800000 ; 3f800000 ; 3f800000",
		"7fc00000 ; 3f800000 ; 3f800001", "3f80000 ; 3f800000 ; 3f800000", "3f800000g ; 3f800000 ; 3f800000",
		"0X477FE000 ; 0x33800000 ; 80000000",
	} {
		f.Add("v100", l)
		f.Add("a100:k=8", l)
	}
	f.Add("h100", "3f800001 ; 3f800000 ; 3f800000")
	units := map[string]mma.Unit{}
	f.Fuzz(func(t *testing.T, spec, line string) {
		if !map[string]bool{"v100": true, "a100:k=8": true, "h100": true, "t4": true}[spec] {
			spec = "v100"
		}
		u := units[spec]
		if u == nil {
			m, err := mma.Lookup(spec, "", "")
			if err != nil {
				t.Fatal(err)
			}
			u, units[spec] = m, m
		}
		p := newEvalParser(u)
		c, err := p.parseLine([]byte(line))
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("%q: empty error", line)
			}
			return
		}
		if len(p.la) != len(p.lb) {
			t.Fatalf("%q: %d a's, %d b's", line, len(p.la), len(p.lb))
		}
		in, out := u.Input(), u.Output()
		for i := range p.la {
			for _, v := range []float64{p.la[i], p.lb[i]} {
				if !in.IsRepresentable(v) {
					t.Fatalf("%q: accepted %v, not a value of %s", line, v, in.Name())
				}
			}
		}
		if !out.IsRepresentable(c) {
			t.Fatalf("%q: accepted c = %v, not a value of %s", line, c, out.Name())
		}
		hex := func(vs []float64) string {
			s := make([]string, len(vs))
			for i, v := range vs {
				s[i] = fmt.Sprintf("%08x", math.Float32bits(float32(v)))
			}
			return strings.Join(s, " ")
		}
		canon := hex(p.la) + " ; " + hex(p.lb) + " ; " + hex([]float64{c})
		la, lb := append([]float64(nil), p.la...), append([]float64(nil), p.lb...)
		c2, err := p.parseLine([]byte(canon))
		if err != nil || hex(p.la) != hex(la) || hex(p.lb) != hex(lb) || math.Float32bits(float32(c2)) != math.Float32bits(float32(c)) {
			t.Fatalf("%q parsed; its canonical form %q: %v, %v ; %v ; %v", line, canon, err, p.la, p.lb, c2)
		}
	})
}
