package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mwmm/mwmm/experiment"
	"github.com/mwmm/mwmm/gpu/gemm"
)

// A productDist is a distribution of random factors as the commands name
// it. gemm --dist draws it here as the experiment package's distribution
// of that name; bench --dists on the GPU as gemm.DistNames[gpu], whose
// own name (and index) it also takes.
type productDist struct {
	name    string   // experiment.ParseDist's name
	aliases []string // other spellings
	gpu     int      // index in gemm.DistNames
	// note, when set, says that bench draws gemm.DistNames[gpu] in its
	// place (the GPU has no such data) and is printed when bench does.
	note string
}

// productDists is the one table of the distribution names the commands
// take (gemm --dist, bench --dists), besides gemm's logu:E for any E.
var productDists = []productDist{
	{name: "uniform", gpu: 0},
	{name: "centered", gpu: 1},
	{name: "normal", gpu: 2},
	{name: "logu:3", aliases: []string{"log-uniform"}, gpu: 3},
	// logu is logu:10 in gemm and the experiments; bench took it for
	// logu:3, its log-uniform data, and still does for scripts.
	{name: "logu", gpu: 3, note: "--dists logu is read as logu:3 (±[1e-3,1e3]), bench's log-uniform data; " +
		"elsewhere logu means logu:10 (±[1e-10,1e10]): write logu:3"},
}

// spellings are the names d goes by: its own, its aliases and, where the
// GPU draws it, the GPU's.
func (d productDist) spellings() []string {
	s := append([]string{d.name}, d.aliases...)
	if d.note == "" {
		s = append(s, gemm.DistNames[d.gpu])
	}
	return s
}

// lookupDist finds the entry named s, case-insensitively.
func lookupDist(s string) (productDist, bool) {
	s = strings.TrimSpace(s)
	for _, d := range productDists {
		if slices.ContainsFunc(d.spellings(), func(n string) bool { return strings.EqualFold(s, n) }) {
			return d, true
		}
	}
	return productDist{}, false
}

// gemmDist reads gemm's --dist: a name of the table, or logu:E.
func gemmDist(s string) (experiment.Dist, error) {
	if d, ok := lookupDist(s); ok {
		s = d.name
	}
	return experiment.ParseDist(s)
}

// distChoice is "i name (or aliases)" for gemm.DistNames[i].
func distChoice(i int) string {
	name := gemm.DistNames[i]
	var as []string
	for _, d := range productDists {
		if d.gpu == i {
			as = append(as, d.name)
			as = append(as, d.aliases...)
		}
	}
	c := fmt.Sprintf("%d %s", i, name)
	if as = slices.DeleteFunc(as, func(a string) bool { return a == name }); len(as) > 0 {
		c += " (or " + strings.Join(as, ", ") + ")"
	}
	return c
}

// parseDists reads --dists: "all", or indices of gemm.DistNames or names
// of the table, comma-separated.
func parseDists(list string) ([]int, error) {
	if strings.EqualFold(strings.TrimSpace(list), "all") {
		var ds []int
		for i := range gemm.DistNames {
			ds = append(ds, i)
		}
		return ds, nil
	}
	var ds []int
	for _, it := range splitList(list) {
		i, err := strconv.Atoi(it)
		if d, ok := lookupDist(it); ok {
			i, err = d.gpu, nil
		}
		if err != nil || i < 0 || i >= len(gemm.DistNames) {
			var choices []string
			for i := range gemm.DistNames {
				choices = append(choices, distChoice(i))
			}
			return nil, usagef("--dists: unknown distribution %q; want all, or indices or names, comma-separated: %s", it, strings.Join(choices, "; "))
		}
		if !slices.Contains(ds, i) {
			ds = append(ds, i)
		}
	}
	return ds, nil
}

// distNotes are the notes of the names in --dists that bench reads as
// other data.
func distNotes(list string) []string {
	var notes []string
	for _, it := range splitList(list) {
		if d, ok := lookupDist(it); ok && d.note != "" && !slices.Contains(notes, d.note) {
			notes = append(notes, d.note)
		}
	}
	return notes
}
