package main

import (
	"strings"
	"testing"

	"github.com/mwmm/mwmm/experiment"
	"github.com/mwmm/mwmm/gpu/gemm"
)

// The table pairs each GPU distribution with one of the experiment
// package's, the same data by the two packages' own labels; every name
// parses in gemm to its entry's distribution and in bench to its index.
func TestProductDists(t *testing.T) {
	drawn := make([]int, len(gemm.DistNames))
	for _, d := range productDists {
		ed, err := experiment.ParseDist(d.name)
		if err != nil {
			t.Fatalf("%s: %v", d.name, err)
		}
		if d.gpu < 0 || d.gpu >= len(gemm.DistNames) {
			t.Fatalf("%s: GPU index %d", d.name, d.gpu)
		}
		gpuName := gemm.DistNames[d.gpu]
		if d.note == "" {
			drawn[d.gpu]++
			if gpuName != ed.Name && !strings.HasSuffix(gpuName, ed.Label) {
				t.Errorf("%s (%s) beside the GPU's %s: not the same data by their names", d.name, ed.Label, gpuName)
			}
		}
		for _, s := range d.spellings() {
			got, err := gemmDist(strings.ToUpper(s))
			if err != nil || got.Name != ed.Name {
				t.Errorf("gemm --dist %q: %q, %v; want %s", s, got.Name, err, ed.Name)
			}
			if ds, err := parseDists(s); err != nil || len(ds) != 1 || ds[0] != d.gpu {
				t.Errorf("bench --dists %q: %v, %v; want [%d]", s, ds, err, d.gpu)
			}
		}
	}
	for i, n := range drawn {
		if n != 1 {
			t.Errorf("GPU distribution %d (%s): %d entries draw it, want 1", i, gemm.DistNames[i], n)
		}
	}
	// gemm's logu:E for any E stays the experiment package's.
	if d, err := gemmDist("logu:7"); err != nil || d.Label != "±[1e-7,1e7]" {
		t.Errorf("gemm --dist logu:7: %+v, %v", d, err)
	}
	if _, err := parseDists("logu:7"); err == nil {
		t.Error("bench --dists logu:7 accepted; the GPU draws logu:3 only")
	}
	if notes := distNotes("0,logu,LOGU"); len(notes) != 1 || !strings.Contains(notes[0], "logu:3") {
		t.Errorf("distNotes: %q", notes)
	}
	if notes := distNotes("logu:3,log-uniform"); len(notes) != 0 {
		t.Errorf("distNotes of logu:3: %q", notes)
	}
}
