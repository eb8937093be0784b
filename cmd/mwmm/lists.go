package main

import "strings"

// splitSpecs splits a comma-separated list of specs whose own options
// also take commas (--matrix kinds, --methods): an item key=value with no
// ':' continues the spec before it, so "centered,randsvd:kappa=1e8,
// mode=one-small" is two kinds.
func splitSpecs(s string) []string {
	var items []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if len(items) > 0 && strings.Contains(f, "=") && !strings.Contains(f, ":") {
			items[len(items)-1] += "," + f
			continue
		}
		items = append(items, f)
	}
	return items
}

// splitList splits s at the commas outside brackets, so that the
// distribution names "(0,1]" and "log-uniform ±[1e-3,1e3]" stay whole.
func splitList(s string) []string {
	var items []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ',':
			if depth <= 0 {
				items = append(items, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(items, strings.TrimSpace(s[start:]))
}
