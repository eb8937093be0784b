package npy

import (
	"syscall"
	"unsafe"
)

// adviseHuge asks Linux to back x's memory with huge pages where
// transparent huge pages are on only for regions that ask ("madvise",
// a common default): a read into fresh memory then takes one page fault
// per 2 MiB instead of one per 4 KiB, and the faults, not the copying,
// bounded such reads (docs/perf/npy.md). Advice only: an error changes
// nothing.
func adviseHuge(x []float64) {
	const huge = 2 << 20
	b := asBytes(x)
	if len(b) < 2*huge {
		return
	}
	at := uintptr(unsafe.Pointer(&b[0]))
	off := int((at+huge-1)&^(huge-1) - at) // the first 2 MiB boundary
	n := (len(b) - off) &^ (huge - 1)
	_ = syscall.Madvise(b[off:off+n], syscall.MADV_HUGEPAGE)
}
