package cuda

import (
	"testing"
	"unsafe"
)

// ncclConfig lays out as nccl.h's ncclConfig_t does up to netName (LP64:
// size_t, two unsigned ints, four ints, a pointer), and says it is NCCL
// 2.17's: NCCL_VERSION(2, 17, 0) = 2·10000 + 17·100 + 0. NCCL copies size
// bytes and reads maxCTAs from 2.17 on.
func TestNCCLConfigLayout(t *testing.T) {
	var c ncclConfig
	for _, f := range []struct {
		name      string
		got, want uintptr
	}{
		{"size", unsafe.Offsetof(c.size), 0},
		{"magic", unsafe.Offsetof(c.magic), 8},
		{"version", unsafe.Offsetof(c.version), 12},
		{"blocking", unsafe.Offsetof(c.blocking), 16},
		{"cgaClusterSize", unsafe.Offsetof(c.cgaClusterSize), 20},
		{"minCTAs", unsafe.Offsetof(c.minCTAs), 24},
		{"maxCTAs", unsafe.Offsetof(c.maxCTAs), 28},
		{"netName", unsafe.Offsetof(c.netName), 32},
		{"sizeof", unsafe.Sizeof(c), 40},
	} {
		if f.got != f.want {
			t.Errorf("%s at %d, want %d", f.name, f.got, f.want)
		}
	}
	cfg := splitConfig(7)
	if cfg.size != 40 || cfg.magic != 0xcafebeef || cfg.version != 2*10000+17*100 || cfg.maxCTAs != 7 ||
		cfg.minCTAs != ncclConfigUndef || cfg.blocking != ncclConfigUndef || cfg.cgaClusterSize != ncclConfigUndef || cfg.netName != 0 {
		t.Errorf("splitConfig(7) = %+v", *cfg)
	}
	if splitConfig(0) != nil {
		t.Error("splitConfig(0) should inherit the parent's (nil)")
	}
}
